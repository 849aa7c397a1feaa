//===- PtxAssembler.h - ptxas and nvlink, in parallel and in budget -*- C++ -*-===//
//
// Runs ptxas on the PTX units of a compile (PtxBlockTemplate.h: one unit per kernel or per
// kernel piece) as they are produced, up to `jobs` at a time and never more at once than the
// memory budget allows, caching each object by its PTX so that a compile interrupted or
// repeated does not assemble the same unit twice; then links the objects into one cubin with
// nvlink.
// Every temporary file lives in one per-process directory that is removed on success,
// failure and SIGINT/SIGTERM.
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_TARGET_PTXASSEMBLER_H
#define SPCONV_TARGET_PTXASSEMBLER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace spconv {
struct PtxasJob {
  std::string label;        // what the unit is, for progress and errors (conv and piece)
  std::string ptx;          // a complete PTX module
  int64_t instructions = 0; // its size, for the memory estimate
  int maxRegisters = 0;     // --maxrregcount for a .func piece (0: none)
};

/// How a compile reports its ptxas units on stderr (`spconv-translate --progress`), one
/// report per finished unit (the count of units queued grows while the compile queues
/// more; object cache hits count as done when queued).
enum class ProgressMode {
  None,
  /// Bar where stderr is a terminal, Log otherwise.
  Auto,
  /// One line redrawn with '\r' as units finish, ended by a newline.
  Bar,
  /// For logs and CI, without '\r': a line when a tenth of the units queued so far have
  /// finished since the last line and 5 s have passed, or when 60 s have passed; the last
  /// count always gets its line when the pool ends.
  Log,
  /// A line per finished unit, for a program that reads them (e.g. to draw its own bar).
  Units,
};

struct PtxasSettings {
  std::string ptxas;            // the ptxas binary; nvlink is looked for beside it
  std::string chip = "sm_90";
  std::string optLevel = "3";
  /// ptxas --Ofast-compile level ("0": off, "min", "mid", "max"). ptxas refuses it together
  /// with an explicit -O1 to -O3, so with a level set -O is left to ptxas's default (3).
  std::string fastCompile = "0";
  unsigned jobs = 1;            // concurrent ptxas processes
  uint64_t memoryBudget = 0;    // bytes the concurrent ptxas processes may use together
  std::string cacheDir;         // object cache ('' = none)
  ProgressMode progress = ProgressMode::None;
  /// cuobjdump, which disassembles every object whose ptxas run spilled, to look for
  /// partial spill reloads (SassSpillCheck.h); '' = none found: such objects go unchecked.
  std::string cuobjdump;
};

/// Registers ptxas spilled to local memory in one function of a unit (ptxas
/// --warn-on-spills): at the register cap a straight-line kernel can spill, and each spill is
/// a local-memory round trip in the FMA stream.
struct PtxasSpill {
  size_t job = 0;          // the unit, in the order the jobs were added (0 for one module)
  std::string function;    // the .entry or .func that spilled
  int64_t storeBytes = 0, loadBytes = 0;
};

/// The spills a ptxas log reports, attributed to unit `job`.
std::vector<PtxasSpill> parsePtxasSpills(llvm::StringRef log, size_t job);

struct PtxasReport {
  double seconds = 0;           // wall time of the whole step
  int64_t cacheHits = 0, assembled = 0;
  double slowestSeconds = 0;
  std::string slowestLabel;
  uint64_t peakEstimate = 0;    // largest sum of estimates running at once
  /// Wall seconds of every ptxas process summed (processes overlap with --jobs > 1), and the
  /// PTX instructions they assembled: their ratio is ptxas's rate, which bounds a compile
  /// of new weights from below (docs/compile-time.md, "What a warm compile costs").
  double processSeconds = 0;
  int64_t instructionsAssembled = 0;
  std::optional<size_t> failedJob; // the job whose ptxas failed, when one did
  /// Spills of the units ptxas assembled in this compile (an object-cache hit reports none:
  /// its ptxas ran in an earlier compile).
  std::vector<PtxasSpill> spills;
  /// Why a spilled object's SASS was not checked for partial spill reloads ('' when every
  /// spilled object assembled here was checked).
  std::string sassUnchecked;
};

/// The optimisation flags of a ptxas run: -O<optLevel>, or --Ofast-compile=<level>.
std::string ptxasOptimisationFlag(const PtxasSettings &settings);

/// What ptxas is expected to use for a unit of `instructions` PTX instructions (measured on
/// ptxas 13.0 -O3: docs/compile-time.md, "ptxas memory").
uint64_t estimatePtxasBytes(int64_t instructions);

/// A whole PTX module to a cubin (no linking), as ptxas alone would.
llvm::Expected<std::string> assembleModule(llvm::StringRef ptx, const PtxasSettings &settings,
                                           PtxasReport &report);

/// ptxas runs that start while the caller is still producing units (a network's later
/// convs are lowered and folded while the earlier ones assemble). A thread of the pool
/// starts queued jobs, the largest queued first, within the job count (one less, at least
/// one, until finish(): the producer keeps a core) and the memory budget, reaps them and caches their objects; finish() waits for the rest and links every
/// object, in the order the jobs were added, into one cubin. When a ptxas run fails, the
/// pool stops the others, the error is ptxas's and report.failedJob says whose.
class PtxasPool {
public:
  PtxasPool(const PtxasSettings &settings, PtxasReport &report);
  /// Stops whatever still runs and removes every temporary file.
  ~PtxasPool();
  PtxasPool(const PtxasPool &) = delete;
  PtxasPool &operator=(const PtxasPool &) = delete;

  /// Finds ptxas, creates the scratch directory and starts the pool's thread.
  llvm::Error start();
  /// Queues `job` (job i is the i-th added). Refuses a job over the memory budget alone,
  /// and reports a failure of an earlier run so the caller can stop producing.
  llvm::Error add(PtxasJob job);
  /// Waits for every queued job, then links the objects with nvlink.
  llvm::Expected<std::string> finish();

private:
  struct State;
  std::unique_ptr<State> state;
};

/// Every job to a relocatable object (`ptxas -c`), then nvlink into one cubin (a
/// PtxasPool fed all at once; nothing runs if one job alone is over the memory budget).
llvm::Expected<std::string> assembleAndLink(std::vector<PtxasJob> jobs,
                                            const PtxasSettings &settings,
                                            PtxasReport &report);
} // namespace spconv

#endif
