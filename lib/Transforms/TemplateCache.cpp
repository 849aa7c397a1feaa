//===- TemplateCache.cpp - lowered-template cache -------------------------===//
#include "spconv/Transforms/TemplateCache.h"

#include "mlir/Bytecode/BytecodeReader.h"
#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <unistd.h>
#include <unordered_map>

using namespace mlir;
using namespace spconv;

static constexpr llvm::StringLiteral kMagic = "spconv-template-cache v1\n";

namespace {
/// Process-wide memory tier: bytecode by key, independent of any MLIRContext.
struct MemoryTier {
  std::mutex mutex;
  std::unordered_map<std::string, std::string> entries;
  /// Directories whose disk tier failed to take an entry in this process (a regular file,
  /// no permission, a full disk). One failure is reported; after it the compile goes on
  /// with the memory tier alone rather than repeat the same warning for every template.
  llvm::StringSet<> failedDirs;
};
MemoryTier &memoryTier() {
  static MemoryTier tier;
  return tier;
}
} // namespace

/// Why the disk tier must not be used in `dir`, or nothing. An entry is trusted once its
/// header and checksum match, and a payload is then handed to MLIR's bytecode reader, which
/// crashes on some crafted inputs (docs/reliability.md, "Known upstream"). So only a
/// directory that no one but the user can write is used, as ssh does with ~/.ssh: owned by
/// the effective user and writable by neither group nor others.
static std::optional<std::string> untrustedDirReason(llvm::StringRef dir) {
  llvm::sys::fs::file_status st;
  if (std::error_code ec = llvm::sys::fs::status(dir, st))
    return "cannot inspect cache directory '" + dir.str() + "': " + ec.message();
  if (st.type() != llvm::sys::fs::file_type::directory_file)
    return "cache directory '" + dir.str() + "' is not a directory";
  if (st.getUser() != ::geteuid())
    return "cache directory '" + dir.str() + "' is not owned by the user running spconv "
                                             "(uid " + std::to_string(st.getUser()) +
           "), so others could plant entries: not used";
  if (st.permissions() & (llvm::sys::fs::group_write | llvm::sys::fs::others_write)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", unsigned(st.permissions()) & 07777u);
    return "cache directory '" + dir.str() + "' is writable by " +
           (st.permissions() & llvm::sys::fs::others_write ? "others" : "its group") +
           " (mode " + mode + "), so others could plant entries: not used (chmod go-w it "
                              "to use it)";
  }
  return std::nullopt;
}

std::string TemplateCache::resolveDir(llvm::StringRef option) {
  if (option == "none")
    return "";
  if (!option.empty())
    return option.str();
  if (const char *env = std::getenv("SPCONV_CACHE_DIR"); env && *env)
    return std::string(env) == "none" ? "" : env;
  llvm::SmallString<256> path;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    path = xdg;
  else if (const char *home = std::getenv("HOME"); home && *home)
    llvm::sys::path::append(path, home, ".cache");
  else
    return "";
  llvm::sys::path::append(path, "spconv");
  return std::string(path);
}

void TemplateCache::dropMemoryEntries() {
  std::lock_guard<std::mutex> lock(memoryTier().mutex);
  memoryTier().entries.clear();
}

std::string TemplateCache::entryPath(llvm::StringRef key) const {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, llvm::utohexstr(llvm::xxh3_64bits(key), /*LowerCase=*/true) +
                                    "." + extension);
  return std::string(path);
}

static OwningOpRef<ModuleOp> parseModule(llvm::StringRef bytes, MLIRContext *ctx,
                                         std::string *why) {
  ParserConfig config(ctx);
  auto buffer = llvm::MemoryBuffer::getMemBuffer(bytes, "spconv-template", false);
  Block block;
  // Diagnostics from a damaged entry are expected; keep them out of the user's output.
  ScopedDiagnosticHandler silence(ctx, [&](Diagnostic &d) {
    if (why && why->empty())
      *why = d.str();
    return success();
  });
  if (failed(readBytecodeFile(buffer->getMemBufferRef(), &block, config)) ||
      !llvm::hasSingleElement(block) || !isa<ModuleOp>(block.front()))
    return nullptr;
  OwningOpRef<ModuleOp> module(cast<ModuleOp>(block.front()));
  module->getOperation()->remove();
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

std::optional<std::string> TemplateCache::lookupBytes(llvm::StringRef key,
                                                      std::string *staleReason) {
  {
    std::lock_guard<std::mutex> lock(memoryTier().mutex);
    auto it = memoryTier().entries.find(key.str());
    if (it != memoryTier().entries.end())
      return it->second;
  }
  if (dir.empty())
    return std::nullopt;
  {
    std::lock_guard<std::mutex> lock(memoryTier().mutex);
    if (memoryTier().failedDirs.contains(dir))
      return std::nullopt;
  }
  // An untrusted directory is reported when the first store into it fails the same check.
  if (untrustedDirReason(dir))
    return std::nullopt;
  auto fileOr = llvm::MemoryBuffer::getFile(entryPath(key), /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!fileOr)
    return std::nullopt; // plain miss
  auto stale = [&](const std::string &why) -> std::optional<std::string> {
    if (staleReason)
      *staleReason = why;
    return std::nullopt;
  };
  llvm::StringRef data = (*fileOr)->getBuffer();
  if (!data.consume_front(kMagic))
    return stale("bad magic");
  auto [keyLine, rest] = data.split('\n');
  if (keyLine != key)
    return stale("key mismatch (hash collision or other compiler version)");
  auto [sizeLine, rest2] = rest.split('\n');
  auto [hashLine, payload] = rest2.split('\n');
  uint64_t size = 0, hash = 0;
  if (sizeLine.getAsInteger(10, size) || hashLine.getAsInteger(16, hash))
    return stale("bad header");
  if (payload.size() != size)
    return stale("truncated payload");
  if (llvm::xxh3_64bits(payload) != hash)
    return stale("checksum mismatch");
  std::lock_guard<std::mutex> lock(memoryTier().mutex);
  memoryTier().entries[key.str()] = payload.str();
  return payload.str();
}

OwningOpRef<ModuleOp> TemplateCache::lookup(llvm::StringRef key, MLIRContext *ctx,
                                            std::string *staleReason) {
  std::optional<std::string> bytes = lookupBytes(key, staleReason);
  if (!bytes)
    return nullptr;
  std::string why;
  OwningOpRef<ModuleOp> module = parseModule(*bytes, ctx, &why);
  if (!module) {
    if (staleReason)
      *staleReason = "unreadable bytecode: " + why;
    std::lock_guard<std::mutex> lock(memoryTier().mutex);
    memoryTier().entries.erase(key.str());
  }
  return module;
}

std::optional<std::string> TemplateCache::store(llvm::StringRef key, ModuleOp module) {
  std::string bytes;
  {
    llvm::raw_string_ostream os(bytes);
    if (failed(writeBytecodeToFile(module, os)))
      return std::string("cannot write bytecode");
  }
  return storeBytes(key, bytes);
}

std::optional<std::string> TemplateCache::storeBytes(llvm::StringRef key,
                                                     llvm::StringRef bytes) {
  {
    std::lock_guard<std::mutex> lock(memoryTier().mutex);
    memoryTier().entries[key.str()] = bytes.str();
  }
  if (dir.empty())
    return std::nullopt;
  {
    std::lock_guard<std::mutex> lock(memoryTier().mutex);
    if (memoryTier().failedDirs.contains(dir))
      return std::nullopt;
  }
  // The first failure in a directory is returned (the caller warns); the directory is then
  // left alone for the rest of the process, concurrent failures included.
  auto giveUp = [&](const std::string &why) -> std::optional<std::string> {
    std::lock_guard<std::mutex> lock(memoryTier().mutex);
    if (!memoryTier().failedDirs.insert(dir).second)
      return std::nullopt;
    return why + "; continuing without the disk cache";
  };
  // New directories are private to the user (0750 less the umask): see untrustedDirReason.
  if (std::error_code ec = llvm::sys::fs::create_directories(
          dir, /*IgnoreExisting=*/true,
          llvm::sys::fs::owner_all | llvm::sys::fs::group_read | llvm::sys::fs::group_exe))
    return giveUp("cannot create cache directory '" + dir + "': " + ec.message());
  if (std::optional<std::string> why = untrustedDirReason(dir))
    return giveUp(*why);
  std::string finalPath = entryPath(key);
  llvm::SmallString<256> tmpPath;
  int fd;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(finalPath + ".tmp-%%%%%%%%", fd, tmpPath))
    return giveUp("cannot create a temporary cache file in '" + dir + "': " + ec.message());
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << kMagic << key << '\n'
       << bytes.size() << '\n'
       << llvm::utohexstr(llvm::xxh3_64bits(bytes)) << '\n'
       << bytes;
    os.close();
    if (os.has_error()) {
      std::string why = os.error().message();
      os.clear_error();
      llvm::sys::fs::remove(tmpPath);
      return giveUp("cannot write cache entry '" + std::string(tmpPath) + "': " + why);
    }
  }
  // rename(2) is atomic: readers see the old entry or the whole new one.
  if (std::error_code ec = llvm::sys::fs::rename(tmpPath, finalPath)) {
    llvm::sys::fs::remove(tmpPath);
    return giveUp("cannot install cache entry '" + finalPath + "': " + ec.message());
  }
  return std::nullopt;
}
