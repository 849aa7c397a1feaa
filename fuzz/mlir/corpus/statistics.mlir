// The fold's counts: here 1 weight of 2 is zero and the template has 2 output columns per
// thread, so 2 FMAs are kept and 2 deleted. They are recorded on the kernel as
// spconv.fmas_kept / spconv.fmas_deleted because -mlir-pass-statistics is empty with the
// Debian LLVM 22 packages (built without LLVM statistics: every Statistic is a no-op).
//

func.func @conv(%x: tensor<1x1x1x3xf32>) -> tensor<1x1x1x2xf32> {
  %y = spconv.conv2d %x {weights = dense<[[[[0.75, 0.0]]]]> : tensor<1x1x1x2xf32>}
      : tensor<1x1x1x3xf32> -> tensor<1x1x1x2xf32>
  return %y : tensor<1x1x1x2xf32>
}
