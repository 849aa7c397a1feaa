//===- ExternDynamicShared.cpp - dynamic shared memory as an extern -------===//
#include "spconv/Transforms/ExternDynamicShared.h"
#include "spconv/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace spconv {
#define GEN_PASS_DEF_SPCONVEXTERNDYNAMICSHARED
#include "spconv/Transforms/Passes.h.inc"
} // namespace spconv

using namespace mlir;
using namespace spconv;

int64_t spconv::declareDynamicSharedExtern(gpu::GPUModuleOp gpuModule, StringRef name) {
  SymbolTable symbols(gpuModule);
  int64_t changed = 0;
  for (auto global : llvm::make_early_inc_range(gpuModule.getOps<LLVM::GlobalOp>())) {
    auto array = dyn_cast<LLVM::LLVMArrayType>(global.getType());
    if (global.getAddrSpace() != NVVM::NVVMMemorySpace::Shared || !array ||
        array.getNumElements() != 0)
      continue;
    global.setLinkage(LLVM::Linkage::External);
    if (!name.empty() && failed(symbols.rename(global, (name + "_dynamic_shared").str())))
      llvm_unreachable("renaming a global the module owns");
    ++changed;
  }
  return changed;
}

namespace {
struct SpconvExternDynamicSharedPass
    : public spconv::impl::SpconvExternDynamicSharedBase<SpconvExternDynamicSharedPass> {
  using Base::Base;

  void runOnOperation() override { numChanged += declareDynamicSharedExtern(getOperation()); }
};
} // namespace
