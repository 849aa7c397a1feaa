// One case per diagnostic of Conv2DOp::verify (lib/Dialect/Spconv/IR/SpconvOps.cpp), in the
// order the verifier checks them. Valid all-zero weights are in roundtrip.mlir.

// The ODS operand constraint rejects unranked tensors before the verifier runs, so the
// verifier's own "must be a ranked tensor" is unreachable. The custom form cannot even parse
// an unranked type; the generic form can.
func.func @unranked_input(%x: tensor<*xf32>) -> tensor<1x1x1x1xf32> {
  %y = "spconv.conv2d"(%x) <{weights = dense<1.0> : tensor<1x1x1x1xf32>}> : (tensor<*xf32>) -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}
