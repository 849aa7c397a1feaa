//===- LoweringInterfaces.cpp - dialect-to-LLVM interfaces we rely on -----===//
#include "spconv/Transforms/LoweringInterfaces.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/ConvertToLLVM/ToLLVMInterface.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

namespace {
/// Upstream lowers nvgpu only in its own pass (convert-nvgpu-to-nvvm), whose type converter
/// has 64-bit indices and no option for 32. Through this interface convert-gpu-to-nvvm
/// lowers the template's nvgpu.device_async_copy with its own converter (index-bitwidth=32,
/// bare pointers), like every other op of the kernel.
struct NVGPUToLLVMInterface : mlir::ConvertToLLVMPatternInterface {
  using ConvertToLLVMPatternInterface::ConvertToLLVMPatternInterface;
  void loadDependentDialects(mlir::MLIRContext *context) const final {
    context->loadDialect<mlir::NVVM::NVVMDialect>();
  }
  void populateConvertToLLVMConversionPatterns(mlir::ConversionTarget &target,
                                               mlir::LLVMTypeConverter &converter,
                                               mlir::RewritePatternSet &patterns) const final {
    mlir::populateNVGPUToNVVMConversionPatterns(converter, patterns);
  }
};
} // namespace

void spconv::registerLoweringInterfaces(mlir::DialectRegistry &registry) {
  mlir::arith::registerConvertArithToLLVMInterface(registry);
  mlir::cf::registerConvertControlFlowToLLVMInterface(registry);
  mlir::registerConvertFuncToLLVMInterface(registry);
  mlir::registerConvertMemRefToLLVMInterface(registry);
  mlir::index::registerConvertIndexToLLVMInterface(registry);
  mlir::ub::registerConvertUBToLLVMInterface(registry);
  mlir::registerConvertNVVMToLLVMInterface(registry);
  mlir::NVVM::registerConvertGpuToNVVMInterface(registry);
  registry.addExtension(+[](mlir::MLIRContext *, mlir::nvgpu::NVGPUDialect *dialect) {
    dialect->addInterfaces<NVGPUToLLVMInterface>();
  });
}
