// What the lowering refuses, with the diagnostics it gives.
//
// RUN: weft-opt %s --weft-lower="target=host" -split-input-file -verify-diagnostics
// RUN: not weft-opt %s --weft-lower="target=cuda:80" 2>&1 | FileCheck %s --check-prefix=TARGET

// TARGET: error: invalid target 'cuda:80': sm_80 is not supported; weft targets sm_90

// expected-error @+1 {{a weft kernel returns nothing; write results through pointers}}
func.func @returns_a_value(%p: !weft.ptr<i32>) -> i32 attributes {weft.kernel} {
  %c = arith.constant 0 : i32
  return %c : i32
}

// -----

// Tiles are distributed inside a kernel; its arguments are scalars.
// expected-error @+1 {{'func.func' op cannot distribute tiles passed as arguments; pass pointers}}
func.func @tile_argument(%p: tensor<4x!weft.ptr<f32>>)
    attributes {weft.kernel} {
  %v = weft.load %p : tensor<4x!weft.ptr<f32>>
  return
}
