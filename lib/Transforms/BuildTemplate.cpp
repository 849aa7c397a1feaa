//===- BuildTemplate.cpp - lowering a template to NVVM --------------------===//
#include "spconv/Transforms/BuildTemplate.h"
#include "spconv/Transforms/ExternDynamicShared.h"
#include "spconv/Transforms/LoweringInterfaces.h"

#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Config/llvm-config.h"

using namespace mlir;
using namespace spconv;

/// Bump whenever the emitted templates change for the same key. (v13: batched staging
/// loads; v14: FMAs from affine nests unrolled by unrollTemplateNests, whose cached NVVM
/// MLIR defines its constants elsewhere; v15: staging by tile position, tiles without
/// slack; v16: the chunk loop runs full chunks only, unclamped; v17: cp.async staging;
/// v18: cp.async chunk loops double-buffered; v19: residual loads batched 16 before their
/// stores, the activation inside the stores' channel guard.)
static constexpr int kTemplateVersion = 19;

std::string spconv::templateKey(StringRef kind, const ConvShape &shape, const Tiling &tiling,
                                StringRef chip, StringRef extra) {
  return "spconv-template;" + kind.str() + ";v" + std::to_string(kTemplateVersion) +
         ";llvm" + LLVM_VERSION_STRING + ";" + chip.str() + ";" + shape.str() + ";" +
         tiling.str() + (extra.empty() ? "" : ";" + extra.str());
}

OwningOpRef<ModuleOp> spconv::buildNVVMTemplate(MLIRContext *ctx, const ConvShape &shape,
                                                const Tiling &tiling, KernelForm form,
                                                StringRef funcName, Location loc) {
  // What the emitter builds and the interfaces convert-gpu-to-nvvm lowers it through:
  // callers outside a pass (spconv-translate) may have registered neither.
  DialectRegistry registry;
  registerLoweringInterfaces(registry);
  ctx->appendDialectRegistry(registry);
  ctx->loadDialect<affine::AffineDialect, arith::ArithDialect, gpu::GPUDialect,
                   LLVM::LLVMDialect,
                   memref::MemRefDialect, nvgpu::NVGPUDialect, NVVM::NVVMDialect,
                   scf::SCFDialect>();
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(loc);
  gpu::GPUModuleOp gpuModule = getOrCreateKernelModule(*scratch);
  emitGPUKernel(shape, tiling, gpuModule, funcName, loc, form);
  PassManager pm(ctx);
  OpPassManager &gpm = pm.nest<gpu::GPUModuleOp>();
  gpm.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.indexBitwidth = 32; // every index of a verified conv fits in 32 bits
  nvvm.useBarePtrCallConv = true;
  gpm.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  gpm.addPass(createReconcileUnrealizedCastsPass());
  if (failed(pm.run(*scratch)))
    return nullptr;
  // Named after the kernel: the PTX-level fold renames what carries the template's name.
  if (tiling.usesDynamicShared())
    declareDynamicSharedExtern(gpuModule, funcName);
  return scratch;
}

