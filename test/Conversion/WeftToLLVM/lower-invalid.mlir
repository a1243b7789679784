// What the tile lowering refuses, with its diagnostics.
//
// RUN: weft-opt %s --weft-lower="target=cuda:90" -split-input-file -verify-diagnostics

func.func @iota(%p: !weft.ptr<i32>) attributes {weft.kernel} {
  %ps = weft.splat %p : !weft.ptr<i32> -> tensor<4x!weft.ptr<i32>>
  // expected-error @+1 {{'arith.constant' op only splat constants can be distributed; build other tiles with weft.make_range and arithmetic}}
  %c = arith.constant dense<[0, 1, 2, 3]> : tensor<4xi32>
  weft.store %ps, %c : tensor<4x!weft.ptr<i32>>
  return
}

// -----

func.func private @make() -> tensor<4xf32>

func.func @opaque(%p: !weft.ptr<f32>) attributes {weft.kernel} {
  // expected-error @+1 {{'func.call' op cannot distribute the tiles of this operation}}
  %t = func.call @make() : () -> tensor<4xf32>
  return
}
