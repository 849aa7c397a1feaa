//===- GuardedBuffer.cpp - fuzz inputs that end at an unmapped page -------===//
#include "GuardedBuffer.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

using namespace spconv::fuzz;

GuardedBuffer::GuardedBuffer(llvm::StringRef bytes, bool nulTerminated, size_t align)
    : size(bytes.size()), nulTerminated(nulTerminated) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t needed = size + (nulTerminated ? 1 : 0);
  if (align > 1)
    needed = (needed + align - 1) / align * align;
  const size_t dataPages = (needed + page - 1) / page;
  mappingSize = (dataPages + 1) * page;
  void *map = mmap(nullptr, mappingSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
  if (map == MAP_FAILED) {
    perror("GuardedBuffer: mmap");
    abort();
  }
  mapping = static_cast<char *>(map);
  char *guard = mapping + dataPages * page;
  if (mprotect(guard, page, PROT_NONE) != 0) {
    perror("GuardedBuffer: mprotect");
    abort();
  }
  char *start = guard - needed;
  if (size)
    std::memcpy(start, bytes.data(), size);
  // The page is zero-filled, so the terminator (and any alignment padding) is already '\0'.
  data = start;
}

GuardedBuffer::~GuardedBuffer() {
  if (mapping)
    munmap(mapping, mappingSize);
}

std::unique_ptr<llvm::MemoryBuffer> GuardedBuffer::memoryBuffer(llvm::StringRef name) const {
  return llvm::MemoryBuffer::getMemBuffer(bytes(), name, nulTerminated);
}
