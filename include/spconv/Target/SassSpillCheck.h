//===- SassSpillCheck.h - reloads of stack bytes no spill wrote --*- C++ -*-===//
//
// ptxas 13.0 (V13.0.88, sm_90) can keep two 16-bit values in the halves of one register,
// spill one half with a 16-bit store and reload it with a 32-bit load that overwrites the
// other half with stack bytes nobody stored: outputs that are wrong on some runs only,
// invisible to memcheck and racecheck (docs/tuning-log.md, "Partial spill reloads"). This
// finds such reloads in a disassembly (`cuobjdump -sass`), so that a compile whose ptxas
// spilled can check its objects. bench/sass_spill_check.py is the same check for cubins on
// the GPU machine.
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_TARGET_SASSSPILLCHECK_H
#define SPCONV_TARGET_SASSSPILLCHECK_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace spconv {
/// An LDL that reads stack bytes no earlier STL of its function wrote.
struct SuspectReload {
  std::string function;    // the SASS function ("Function : name")
  std::string address;     // its offset in the function, as printed ("0x1ed10")
  std::string instruction; // the LDL as printed, without the trailing ';'
  bool partial = false;    // some of its bytes were written (else none were)
};

/// The suspect reloads of a `cuobjdump -sass` / `nvdisasm` listing: per function, in program
/// order, every LDL off the stack pointer (R1) that reads a byte no earlier STL of the
/// function wrote. Program order stands in for control flow (ptxas spills before the
/// reloads that follow). `functions` (if given) receives the number of functions seen.
std::vector<SuspectReload> findSuspectReloads(llvm::StringRef sass, int *functions = nullptr);

/// `cuobjdump -sass object` into `listingFile`, read back. An error says why it could not.
llvm::Expected<std::string> disassemble(llvm::StringRef cuobjdump, llvm::StringRef object,
                                        llvm::StringRef listingFile);
} // namespace spconv

#endif // SPCONV_TARGET_SASSSPILLCHECK_H
