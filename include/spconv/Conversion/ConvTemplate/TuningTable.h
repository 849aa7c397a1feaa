//===- TuningTable.h - Tilings measured on a GPU, consulted before the heuristic -*- C++ -*-===//
//
// A tuning table (docs/design.md, "Tuning table") holds, per conv shape, the tiling that was
// fastest when bench/tuning_table.py measured variants on a GPU (bench/variants.sh). Where a
// conv matches an entry, its tiling replaces the heuristic's, field by field, except for the
// fields the user requested explicitly. A table is made for one device (its "device" field):
// the compiling machine has no GPU, so choosing the table is choosing the target. A table
// may name another one to fall back to ("falls_back_to", a sibling device's): its entries
// serve where the table's own match nothing, each still naming where it was measured.
//
// An entry marked choose_pairing also chooses a half-precision conv's pairing, where the op
// leaves it to the compiler: the pairing is part of the kernel's word shape, so it is decided
// on the op (spconv-choose-pairing) before anything derives the shape from it.
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_CONVERSION_CONVTEMPLATE_TUNINGTABLE_H
#define SPCONV_CONVERSION_CONVTEMPLATE_TUNINGTABLE_H

#include "spconv/Conversion/ConvTemplate/ConvShape.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace spconv {

/// One entry's tiling, as requests: every field set (the measured kernel's tiling).
struct TunedTiling {
  Tiling tiling;
  int64_t minBlocksPerSM = 0; // > 0: that many; -1: no cap (ArtifactOptions::minBlocksPerSM)
  int64_t smAffinity = 1;     // 2: per-SM work queues (ArtifactOptions::smAffinity)
  std::string source;         // the entry's "source": where it was measured
};

class TuningTable {
public:
  /// Reads and checks a table, and the table it falls back to where it names one (a path
  /// relative to the table's directory); errors name the file and the JSON path of the bad
  /// field. A fallback table may not fall back further.
  static llvm::Expected<TuningTable> load(llvm::StringRef path);

  /// The table a compile uses: `flag` where given (std::nullopt: not given), else
  /// $SPCONV_TUNING_TABLE; "" when that is empty or "none" (no table).
  static std::string resolvePath(std::optional<llvm::StringRef> flag);
  static llvm::Expected<TuningTable> parse(llvm::StringRef text, llvm::StringRef name);

  /// The entry for `shape` (a half-precision conv is matched by its logical conv, its type,
  /// its accumulation, its pairing and its layout; bias and activation do not matter) whose
  /// range of nonzero weights holds `nnz`; null if none. A conv stored as image pairs without
  /// an entry of its own takes the NCHW conv's entry (the same word shape).
  const TunedTiling *lookup(const ConvShape &shape, int64_t nnz) const;

  llvm::StringRef device() const { return deviceName; }
  /// The SMs of the device the table was measured on (its optional "sms" field), which the
  /// heuristic tiles the convs without an entry for unless --num-sms says otherwise; 0 if
  /// the table does not say.
  int64_t numSMs() const { return sms; }
  size_t size() const { return entries.size(); }

  /// The key `lookup` matches: the logical conv, its types, pairing and layout.
  static std::string keyOf(const ConvShape &shape);
  /// The same key with the layout taken as NCHW: the fallback of an image-pair conv.
  static std::string nchwKeyOf(const ConvShape &shape);

  /// The pairing a choose_pairing entry gives the half-precision conv `shape` (whatever
  /// pairing `shape` has: the entry is matched without it) with `nnz` nonzero weights, and
  /// that entry; null if none. At most one entry can match: load refuses two whose convs
  /// and nnz ranges meet.
  struct PairingChoice {
    Pairing pairing;
    const TunedTiling *entry;
  };
  std::optional<PairingChoice> choosePairing(const ConvShape &shape, int64_t nnz) const;
  /// Whether some choose_pairing entry names `shape`'s conv (at any nnz): callers count the
  /// nonzero weights, which means reading them, only then.
  bool mayChoosePairing(const ConvShape &shape) const;

private:
  struct Entry {
    std::string key;
    /// The key without the pairing, which a choose_pairing entry is matched by.
    std::string convKey;
    int64_t nnzMin = 0, nnzMax = 0;
    Pairing pairing = Pairing::none;
    bool choosePairing = false;
    TunedTiling tuned;
  };
  std::vector<Entry> entries;
  std::string deviceName;
  int64_t sms = 0;
  /// The table's "falls_back_to" as written ("" if none); load() appends that table's
  /// entries after this one's, so lookups try this table's first.
  std::string fallbackName;
};

/// `requested` with `tuned`'s fields wherever `requested` leaves the choice to the heuristic
/// (a zero field); the column order only where the outputs a thread are the entry's.
Tiling fillFromTuned(Tiling requested, const Tiling &tuned);

/// The options (by name: "block-k", ...) where `requested` sets another value than the
/// entry's `tuned`: what a kernel the entry tunes takes from the request instead, which its
/// sidecar's "tuned_by" says, so that a measured entry is not credited with a tiling it did
/// not choose.
std::vector<std::string> requestOverrides(const Tiling &requested, const Tiling &tuned);

} // namespace spconv

#endif // SPCONV_CONVERSION_CONVTEMPLATE_TUNINGTABLE_H
