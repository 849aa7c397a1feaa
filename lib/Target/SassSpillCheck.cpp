//===- SassSpillCheck.cpp - reloads of stack bytes no spill wrote ---------===//

#include "spconv/Target/SassSpillCheck.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <optional>
#include <set>

using namespace spconv;

namespace {
/// One STL or LDL addressed off the stack pointer: [R1], [R1+0x44], [R1+-0x8].
struct StackAccess {
  bool store = false;
  int64_t first = 0, size = 4;
};

std::optional<StackAccess> parseStackAccess(llvm::StringRef text) {
  if (text.starts_with("@")) // a predicate: "@P0 LDL ..." / "@!UP1 STL ..."
    text = text.drop_until([](char c) { return c == ' '; }).ltrim();
  llvm::StringRef op = text.take_until([](char c) { return c == ' '; });
  llvm::SmallVector<llvm::StringRef> parts;
  op.split(parts, '.');
  if (parts.empty() || (parts[0] != "STL" && parts[0] != "LDL"))
    return std::nullopt;
  StackAccess a;
  a.store = parts[0] == "STL";
  for (llvm::StringRef mod : llvm::ArrayRef(parts).drop_front()) {
    if (mod == "U8" || mod == "S8")
      a.size = 1;
    else if (mod == "U16" || mod == "S16")
      a.size = 2;
    else if (mod == "64")
      a.size = 8;
    else if (mod == "128")
      a.size = 16;
  }
  size_t at = text.find("[R1");
  if (at == llvm::StringRef::npos)
    return std::nullopt; // not a stack slot (never in spconv's SASS)
  llvm::StringRef addr = text.drop_front(at + 3);
  if (addr.consume_front("+")) {
    bool negative = addr.consume_front("-");
    if (!addr.consume_front("0x"))
      return std::nullopt;
    llvm::StringRef hex = addr.take_while(llvm::isHexDigit);
    uint64_t v = 0;
    if (hex.getAsInteger(16, v))
      return std::nullopt;
    a.first = negative ? -int64_t(v) : int64_t(v);
  } else if (!addr.starts_with("]")) {
    return std::nullopt;
  }
  return a;
}
} // namespace

std::vector<SuspectReload> spconv::findSuspectReloads(llvm::StringRef sass, int *functions) {
  std::vector<SuspectReload> found;
  std::set<int64_t> written;
  std::string function;
  int seen = 0;
  llvm::SmallVector<llvm::StringRef> lines;
  sass.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    llvm::StringRef t = line.trim();
    if (t.consume_front("Function : ")) {
      function = t.str();
      written.clear();
      ++seen;
      continue;
    }
    // "/*1ed10*/  LDL.LU R6, [R1+0x44] ;  /* 0x... */"
    if (function.empty() || !t.consume_front("/*"))
      continue;
    llvm::StringRef address = t.take_until([](char c) { return c == '*'; });
    if (address.empty() || !llvm::all_of(address, llvm::isHexDigit))
      continue;
    llvm::StringRef instruction = t.drop_front(address.size()).drop_front(2).trim();
    instruction = instruction.take_until([](char c) { return c == ';'; }).rtrim();
    std::optional<StackAccess> a = parseStackAccess(instruction);
    if (!a)
      continue;
    int64_t missing = 0;
    for (int64_t b = a->first; b < a->first + a->size; ++b) {
      if (a->store)
        written.insert(b);
      else
        missing += !written.count(b);
    }
    if (missing)
      found.push_back({function, ("0x" + address).str(), instruction.str(), missing < a->size});
  }
  if (functions)
    *functions = seen;
  return found;
}

llvm::Expected<std::string> spconv::disassemble(llvm::StringRef cuobjdump, llvm::StringRef object,
                                                llvm::StringRef listingFile) {
  llvm::StringRef args[] = {cuobjdump, "-sass", object};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, listingFile, listingFile};
  std::string execError;
  bool failedToStart = false;
  int rc = llvm::sys::ExecuteAndWait(cuobjdump, args, std::nullopt, redirects, 0, 0, &execError,
                                     &failedToStart);
  if (failedToStart)
    return llvm::createStringError("cannot start " + cuobjdump.str() + ": " + execError);
  if (rc != 0)
    return llvm::createStringError(cuobjdump.str() + " -sass exited with status " +
                                   std::to_string(rc));
  auto listing = llvm::MemoryBuffer::getFile(listingFile);
  if (!listing)
    return llvm::createStringError("cannot read " + listingFile.str() + ": " +
                                   listing.getError().message());
  return (*listing)->getBuffer().str();
}
