// RUN: weft-opt %s -split-input-file -verify-diagnostics --weft-set-target="target=host"

// Ops of other dialects on tiles obey the tile rule too: weft-set-target,
// the first pass, checks them (the dialect verifies its own ops).
func.func @arith_on_odd_tile(%a: tensor<12xf32>) -> tensor<12xf32> {
  // expected-error @+1 {{tile 'tensor<12xf32>': every dimension must be a power of two}}
  %s = arith.addf %a, %a : tensor<12xf32>
  return %s : tensor<12xf32>
}

// -----

// A loop may carry its own pipeline depth; other ops may not.
func.func @stages(%n: i32) attributes {weft.num_stages = 2 : i32} {
  return
}
// expected-error @-3 {{weft.num_stages belongs on the module or a loop}}

// -----

func.func @loop_stages(%n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  // expected-error @+1 {{weft.num_stages of a loop is a positive integer}}
  scf.for %i = %c0 to %n step %c1 : i32 {
  } {weft.num_stages = 0 : i32}
  return
}

// -----

// A loop may let its body's pipelines prefetch its next iteration; a
// function may not.
func.func @prefetch_on_function(%n: i32) attributes {weft.prefetch} {
  return
}
// expected-error @-3 {{weft.prefetch is a unit attribute of a loop}}

// -----

func.func @prefetch_with_value(%n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  // expected-error @+1 {{weft.prefetch is a unit attribute of a loop}}
  scf.for %i = %c0 to %n step %c1 : i32 {
  } {weft.prefetch = 2 : i32}
  return
}
