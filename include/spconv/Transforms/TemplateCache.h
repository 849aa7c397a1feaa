//===- TemplateCache.h - lowered-template cache -----------------*- C++ -*-===//
//
// Lowered templates depend on shape, tiling, target and compiler version, never on weight
// values, so they are cached: in memory for the life of the process and on disk as MLIR
// bytecode. A disk entry is a header (magic, full key, payload size, payload hash) followed
// by the bytecode; anything that does not match exactly is treated as a miss and rewritten.
// Entries are written to a unique temporary file and renamed into place, so readers never see
// a partial file and concurrent writers of one key each install a complete entry.
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_TRANSFORMS_TEMPLATECACHE_H
#define SPCONV_TRANSFORMS_TEMPLATECACHE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <optional>
#include <string>

namespace spconv {
class TemplateCache {
public:
  /// `dir` empty: memory only. Disk entries are named <hash of key>.<extension>.
  explicit TemplateCache(std::string dir, std::string extension = "mlirbc")
      : dir(std::move(dir)), extension(std::move(extension)) {}

  /// The payload stored under `key`, or nothing. Entries whose header does not match
  /// are reported through `staleReason` (when non-null) and otherwise ignored.
  std::optional<std::string> lookupBytes(llvm::StringRef key,
                                         std::string *staleReason = nullptr);
  /// Stores `bytes` under `key`: in memory, and atomically on disk if a directory is set.
  std::optional<std::string> storeBytes(llvm::StringRef key, llvm::StringRef bytes);

  /// The cached module for `key`, or null. Invalid disk entries are reported through
  /// `staleReason` (when non-null) and otherwise ignored.
  mlir::OwningOpRef<mlir::ModuleOp> lookup(llvm::StringRef key, mlir::MLIRContext *ctx,
                                           std::string *staleReason = nullptr);
  /// Stores `module` under `key` in memory and, if a directory is set, on disk. Disk errors
  /// are returned as a message; the in-memory entry is kept regardless.
  std::optional<std::string> store(llvm::StringRef key, mlir::ModuleOp module);

  /// Path of the disk entry for `key`.
  std::string entryPath(llvm::StringRef key) const;

  /// The directory from an option value: '' means $SPCONV_CACHE_DIR, then
  /// $XDG_CACHE_HOME/spconv, then $HOME/.cache/spconv; 'none' means no disk cache.
  static std::string resolveDir(llvm::StringRef option);

  /// Empties the process-wide memory tier, so that the next lookup reads the disk (for tests
  /// and fuzzers, which replay many entries under one key in one process).
  static void dropMemoryEntries();

private:
  std::string dir, extension;
};
} // namespace spconv

#endif
