// RUN: spconv-opt %s -split-input-file -verify-diagnostics
// One case per diagnostic of Conv2DOp::verify (lib/Dialect/Spconv/IR/SpconvOps.cpp), in the
// order the verifier checks them. Valid all-zero weights are in roundtrip.mlir.

// The ODS operand constraint rejects unranked tensors before the verifier runs, so the
// verifier's own "must be a ranked tensor" is unreachable. The custom form cannot even parse
// an unranked type; the generic form can.
func.func @unranked_input(%x: tensor<*xf32>) -> tensor<1x1x1x1xf32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of any type values, but got 'tensor<*xf32>'}}
  %y = "spconv.conv2d"(%x) <{weights = dense<1.0> : tensor<1x1x1x1xf32>}> : (tensor<*xf32>) -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}

// -----

func.func @missing_weights(%x: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32> {
  // expected-error @+1 {{requires attribute 'weights'}}
  %y = spconv.conv2d %x {} : tensor<1x1x1x1xf32> -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}

// -----

func.func @input_rank(%x: tensor<1x1x1xf32>) -> tensor<1x1x1x1xf32> {
  // expected-error @+1 {{input must have rank 4 (NCHW), got rank 3}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>} : tensor<1x1x1xf32> -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}

// -----

func.func @result_rank(%x: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1x1xf32> {
  // expected-error @+1 {{result must have rank 4 (NCHW), got rank 5}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>} : tensor<1x1x1x1xf32> -> tensor<1x1x1x1x1xf32>
  return %y : tensor<1x1x1x1x1xf32>
}

// -----

func.func @input_i32(%x: tensor<1x1x1x1xi32>) -> tensor<1x1x1x1xf32> {
  // expected-error @+1 {{input element type must be f32, f16 or bf16, got 'i32'}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>} : tensor<1x1x1x1xi32> -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}

// -----

func.func @result_f16(%x: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf16> {
  // expected-error @+1 {{result element type ('f16') must equal the input's ('f32')}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>} : tensor<1x1x1x1xf32> -> tensor<1x1x1x1xf16>
  return %y : tensor<1x1x1x1xf16>
}

// -----

func.func @dynamic_input(%x: tensor<?x1x1x1xf32>) -> tensor<1x1x1x1xf32> {
  // expected-error @+1 {{input must have a static shape}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>} : tensor<?x1x1x1xf32> -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}

// -----

func.func @zero_dim(%x: tensor<1x0x1x1xf32>) -> tensor<1x1x1x1xf32> {
  // expected-error @+1 {{input dimensions must be in [1, 2^31-1], got 0}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>} : tensor<1x0x1x1xf32> -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}

// -----

func.func @huge_dim(%x: tensor<1x2147483648x4x4xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{input dimensions must be in [1, 2^31-1], got 2147483648}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>} : tensor<1x2147483648x4x4xf32> -> tensor<1x1x4x4xf32>
  return %y : tensor<1x1x4x4xf32>
}

// -----

// Every dimension fits in 32 bits but the element count (2^31) does not.
func.func @too_many_elements(%x: tensor<1x1x1x1xf32>) -> tensor<1x1x65536x32768xf32> {
  // expected-error @+1 {{result has 2147483648 elements; at most 2^31-1 are supported}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>} : tensor<1x1x1x1xf32> -> tensor<1x1x65536x32768xf32>
  return %y : tensor<1x1x65536x32768xf32>
}

// -----

func.func @weights_rank(%x: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32> {
  // expected-error @+1 {{'weights' must have rank 4 (KxCxRxS)}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1xf32>} : tensor<1x1x1x1xf32> -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}

// -----

func.func @weights_i32(%x: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32> {
  // expected-error @+1 {{'weights' element type must be f32 or the input's ('f32'), got 'i32'}}
  %y = spconv.conv2d %x {weights = dense<1> : tensor<1x1x1x1xi32>} : tensor<1x1x1x1xf32> -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}

// -----

func.func @weights_zero_dim(%x: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32> {
  // expected-error @+1 {{'weights' dimensions must be in [1, 2^31-1], got 0}}
  %y = spconv.conv2d %x {weights = dense<> : tensor<0x1x1x1xf32>} : tensor<1x1x1x1xf32> -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}

// -----

func.func @weights_huge_dim(%x: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32> {
  // expected-error @+1 {{'weights' dimensions must be in [1, 2^31-1], got 2147483648}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<2147483648x1x1x1xf32>} : tensor<1x1x1x1xf32> -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}

// -----

func.func @strides_size(%x: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32> {
  // expected-error @+1 {{'strides' must have 2 entries [sh, sw], got 3}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>, strides = array<i64: 1, 1, 1>} : tensor<1x1x1x1xf32> -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}

// -----

func.func @dilations_size(%x: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32> {
  // expected-error @+1 {{'dilations' must have 2 entries [dh, dw], got 1}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>, dilations = array<i64: 1>} : tensor<1x1x1x1xf32> -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}

// -----

func.func @padding_size(%x: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32> {
  // expected-error @+1 {{'padding' must have 4 entries [top, left, bottom, right], got 2}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>, padding = array<i64: 0, 0>} : tensor<1x1x1x1xf32> -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}

// -----

func.func @strides_zero(%x: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32> {
  // expected-error @+1 {{'strides' must be positive, got 0}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>, strides = array<i64: 1, 0>} : tensor<1x1x1x1xf32> -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}

// -----

// Strides beyond 32 bits are rejected with the same message.
func.func @strides_huge(%x: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32> {
  // expected-error @+1 {{'strides' must be positive, got 2147483648}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>, strides = array<i64: 2147483648, 1>} : tensor<1x1x1x1xf32> -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}

// -----

func.func @dilations_negative(%x: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32> {
  // expected-error @+1 {{'dilations' must be positive, got -1}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>, dilations = array<i64: -1, 1>} : tensor<1x1x1x1xf32> -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}

// -----

func.func @padding_negative(%x: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32> {
  // expected-error @+1 {{'padding' must be non-negative, got -2}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>, padding = array<i64: 0, 0, 0, -2>} : tensor<1x1x1x1xf32> -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}

// -----

func.func @groups_zero(%x: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32> {
  // expected-error @+1 {{'groups' must be positive, got 0}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>, groups = 0} : tensor<1x1x1x1xf32> -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}

// -----

func.func @groups_input_channels(%x: tensor<1x3x1x1xf32>) -> tensor<1x2x1x1xf32> {
  // expected-error @+1 {{'groups' (2) must divide the input channels (3)}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<2x1x1x1xf32>, groups = 2} : tensor<1x3x1x1xf32> -> tensor<1x2x1x1xf32>
  return %y : tensor<1x2x1x1xf32>
}

// -----

func.func @groups_output_channels(%x: tensor<1x4x1x1xf32>) -> tensor<1x3x1x1xf32> {
  // expected-error @+1 {{'groups' (2) must divide the output channels (3)}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<3x2x1x1xf32>, groups = 2} : tensor<1x4x1x1xf32> -> tensor<1x3x1x1xf32>
  return %y : tensor<1x3x1x1xf32>
}

// -----

func.func @weight_channels(%x: tensor<1x4x1x1xf32>) -> tensor<1x2x1x1xf32> {
  // expected-error @+1 {{'weights' channel dimension (4) times groups (2) must equal the input channels (4)}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<2x4x1x1xf32>, groups = 2} : tensor<1x4x1x1xf32> -> tensor<1x2x1x1xf32>
  return %y : tensor<1x2x1x1xf32>
}

// -----

func.func @bias_type(%x: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32> {
  // expected-error @+1 {{'bias' element type must be f32 or the input's ('f32'), got 'f64'}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>, bias = dense<1.0> : tensor<1xf64>} : tensor<1x1x1x1xf32> -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}

// -----

func.func @bias_length(%x: tensor<1x1x1x1xf32>) -> tensor<2x1x1x1xf32> {
  // expected-error @+1 {{'bias' must have shape [2] (one value per output channel)}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<2x1x1x1xf32>, bias = dense<1.0> : tensor<3xf32>} : tensor<1x1x1x1xf32> -> tensor<1x2x1x1xf32>
  return %y : tensor<1x2x1x1xf32>
}

// -----

func.func @bias_rank(%x: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32> {
  // expected-error @+1 {{'bias' must have shape [1] (one value per output channel)}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>, bias = dense<1.0> : tensor<1x1xf32>} : tensor<1x1x1x1xf32> -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}

// -----

// A 3x3 filter dilated by 2 spans 5x5; the input padded by 1 on each side is 4x4.
func.func @filter_too_large(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x1x1xf32> {
  // expected-error @+1 {{dilated filter (5x5) is larger than the padded input (4x4); check 'padding'}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x3x3xf32>, dilations = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x1x2x2xf32> -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}

// -----

func.func @result_batch(%x: tensor<2x1x3x3xf32>) -> tensor<1x1x3x3xf32> {
  // expected-error @+1 {{result batch (1) must equal the input batch (2)}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>} : tensor<2x1x3x3xf32> -> tensor<1x1x3x3xf32>
  return %y : tensor<1x1x3x3xf32>
}

// -----

func.func @result_channels(%x: tensor<1x1x3x3xf32>) -> tensor<1x3x3x3xf32> {
  // expected-error @+1 {{result channels (3) must equal the output channels of 'weights' (2)}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<2x1x1x1xf32>} : tensor<1x1x3x3xf32> -> tensor<1x3x3x3xf32>
  return %y : tensor<1x3x3x3xf32>
}

// -----

// (7 + 1 + 1 - 3) / 2 + 1 = 4 rows, (7 - 3) / 1 + 1 = 5 columns.
func.func @result_spatial(%x: tensor<1x1x7x7xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{result spatial shape 4x4 does not follow from the input, 'weights', 'strides', 'padding' and 'dilations', which give 4x5}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x3x3xf32>, strides = array<i64: 2, 1>, padding = array<i64: 1, 0, 1, 0>} : tensor<1x1x7x7xf32> -> tensor<1x1x4x4xf32>
  return %y : tensor<1x1x4x4xf32>
}

// -----

// 2^32 weights: refused before any pass tries to expand them into memory.
func.func @too_many_weights(%x: tensor<1x65536x1x1xf32>) -> tensor<1x65536x1x1xf32> {
  // expected-error @+1 {{'weights' has 4294967296 elements; at most 2^27 are supported}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<65536x65536x1x1xf32>} : tensor<1x65536x1x1xf32> -> tensor<1x65536x1x1xf32>
  return %y : tensor<1x65536x1x1xf32>
}

// -----

// Half precision (docs/design.md, "Half precision"): input and result share one of f32, f16,
// bf16; weights and bias are f32 or that type; pairing is for half precision only.
func.func @input_i8(%x: tensor<1x1x1x1xi8>) -> tensor<1x1x1x1xi8> {
  // expected-error @+1 {{input element type must be f32, f16 or bf16, got 'i8'}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>} : tensor<1x1x1x1xi8> -> tensor<1x1x1x1xi8>
  return %y : tensor<1x1x1x1xi8>
}

// -----

func.func @weights_other_half(%x: tensor<1x1x1x1xf16>) -> tensor<1x1x1x1xf16> {
  // expected-error @+1 {{'weights' element type must be f32 or the input's ('f16'), got 'bf16'}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xbf16>} : tensor<1x1x1x1xf16> -> tensor<1x1x1x1xf16>
  return %y : tensor<1x1x1x1xf16>
}

// -----

func.func @pairing_f32(%x: tensor<2x1x1x1xf32>) -> tensor<2x1x1x1xf32> {
  // expected-error @+1 {{'pairing' applies to f16 and bf16 convs only}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>, pairing = #spconv.pairing<images>} : tensor<2x1x1x1xf32> -> tensor<2x1x1x1xf32>
  return %y : tensor<2x1x1x1xf32>
}

// -----

// Adjacent pairs load and store whole words: a 1x1 filter's output column q must read
// input column q.
func.func @adjacent_1x1_tall(%x: tensor<1x1x4x4xf16>) -> tensor<1x1x2x4xf16> {
  // expected-error @+1 {{'pairing' adjacent needs a 1x1 filter at stride 1 without padding, or a filter wider than one column at column stride 1}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x3x1xf32>, pairing = #spconv.pairing<adjacent>} : tensor<1x1x4x4xf16> -> tensor<1x1x2x4xf16>
  return %y : tensor<1x1x2x4xf16>
}

// -----

// A wider filter's two output columns read two adjacent input columns per tap: column
// stride 1 only.
func.func @adjacent_3x3_strided(%x: tensor<1x1x8x8xf16>) -> tensor<1x1x4x4xf16> {
  // expected-error @+1 {{'pairing' adjacent needs column stride 1, got 2}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x3x3xf32>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, pairing = #spconv.pairing<adjacent>} : tensor<1x1x8x8xf16> -> tensor<1x1x4x4xf16>
  return %y : tensor<1x1x4x4xf16>
}

// -----

func.func @adjacent_3x3_odd_output(%x: tensor<1x1x4x4xf16>) -> tensor<1x1x2x3xf16> {
  // expected-error @+1 {{'pairing' adjacent needs an even output width, got 3}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x3x3xf32>, padding = array<i64: 0, 1, 0, 0>, pairing = #spconv.pairing<adjacent>} : tensor<1x1x4x4xf16> -> tensor<1x1x2x3xf16>
  return %y : tensor<1x1x2x3xf16>
}

// -----

func.func @adjacent_strided(%x: tensor<1x1x4x4xf16>) -> tensor<1x1x2x2xf16> {
  // expected-error @+1 {{'pairing' adjacent needs a 1x1 filter at stride 1 without padding}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>, strides = array<i64: 2, 2>, pairing = #spconv.pairing<adjacent>} : tensor<1x1x4x4xf16> -> tensor<1x1x2x2xf16>
  return %y : tensor<1x1x2x2xf16>
}

// -----

func.func @adjacent_padded(%x: tensor<1x1x4x4xf16>) -> tensor<1x1x6x6xf16> {
  // expected-error @+1 {{'pairing' adjacent needs a 1x1 filter at stride 1 without padding}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>, padding = array<i64: 1, 1, 1, 1>, pairing = #spconv.pairing<adjacent>} : tensor<1x1x4x4xf16> -> tensor<1x1x6x6xf16>
  return %y : tensor<1x1x6x6xf16>
}

// -----

func.func @adjacent_odd_width(%x: tensor<1x1x4x5xbf16>) -> tensor<1x1x4x5xbf16> {
  // expected-error @+1 {{'pairing' adjacent needs an even input width, got 5}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>, pairing = #spconv.pairing<adjacent>} : tensor<1x1x4x5xbf16> -> tensor<1x1x4x5xbf16>
  return %y : tensor<1x1x4x5xbf16>
}

// -----

func.func @bias_other_half(%x: tensor<1x1x1x1xbf16>) -> tensor<1x1x1x1xbf16> {
  // expected-error @+1 {{'bias' element type must be f32 or the input's ('bf16'), got 'f16'}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xbf16>, bias = dense<1.0> : tensor<1xf16>} : tensor<1x1x1x1xbf16> -> tensor<1x1x1x1xbf16>
  return %y : tensor<1x1x1x1xbf16>
}

// -----

func.func @image_pairs_f32(%x: tensor<2x1x4x4xf32>) -> tensor<2x1x4x4xf32> {
  // expected-error @+1 {{'layout' image_pairs applies to f16 and bf16 convs only}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>, layout = #spconv.layout<image_pairs>} : tensor<2x1x4x4xf32> -> tensor<2x1x4x4xf32>
  return %y : tensor<2x1x4x4xf32>
}

// -----

func.func @image_pairs_odd_batch(%x: tensor<3x1x4x4xf16>) -> tensor<3x1x4x4xf16> {
  // expected-error @+1 {{'layout' image_pairs needs an even batch, got 3}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>, layout = #spconv.layout<image_pairs>} : tensor<3x1x4x4xf16> -> tensor<3x1x4x4xf16>
  return %y : tensor<3x1x4x4xf16>
}

// -----

func.func @image_pairs_other_pairing(%x: tensor<2x1x4x4xbf16>) -> tensor<2x1x4x4xbf16> {
  // expected-error @+1 {{'layout' image_pairs pairs images; 'pairing' adjacent contradicts it}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>, pairing = #spconv.pairing<adjacent>, layout = #spconv.layout<image_pairs>} : tensor<2x1x4x4xbf16> -> tensor<2x1x4x4xbf16>
  return %y : tensor<2x1x4x4xbf16>
}

// -----

func.func @unknown_layout(%x: tensor<2x1x4x4xf16>) -> tensor<2x1x4x4xf16> {
  // expected-error @+2 {{expected ::spconv::TensorLayout to be one of: nchw, image_pairs}}
  // expected-error @+1 {{failed to parse Spconv_TensorLayoutAttr parameter}}
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>, layout = #spconv.layout<nhwc>} : tensor<2x1x4x4xf16> -> tensor<2x1x4x4xf16>
  return %y : tensor<2x1x4x4xf16>
}

// -----

func.func @residual_of_another_type(%x: tensor<2x1x4x4xf16>, %r: tensor<2x1x4x4xf32>) -> tensor<2x1x4x4xf16> {
  // expected-error @+1 {{'residual' type 'tensor<2x1x4x4xf32>' must equal the result type 'tensor<2x1x4x4xf16>'}}
  %y = spconv.conv2d %x residual(%r : tensor<2x1x4x4xf32>) {weights = dense<1.0> : tensor<1x1x1x1xf32>} : tensor<2x1x4x4xf16> -> tensor<2x1x4x4xf16>
  return %y : tensor<2x1x4x4xf16>
}

// -----

func.func @residual_of_another_shape(%x: tensor<2x1x4x4xf32>, %r: tensor<2x1x2x2xf32>) -> tensor<2x1x2x2xf32> {
  // expected-error @+1 {{'residual' type 'tensor<2x1x4x4xf32>' must equal the result type 'tensor<2x1x2x2xf32>'}}
  %y = spconv.conv2d %x residual(%x : tensor<2x1x4x4xf32>) {weights = dense<1.0> : tensor<1x1x1x1xf32>, strides = array<i64: 2, 2>} : tensor<2x1x4x4xf32> -> tensor<2x1x2x2xf32>
  return %y : tensor<2x1x2x2xf32>
}
