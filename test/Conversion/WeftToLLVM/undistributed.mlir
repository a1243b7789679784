// The LLVM conversion needs layouts on every tile (weft-lower runs
// weft-assign-layouts first); alone, it says so.
// RUN: weft-opt %s --weft-add-hidden-args --convert-weft-to-llvm -verify-diagnostics

func.func @plain_tile(%p: !weft.ptr<f32>) attributes {weft.kernel} {
  // expected-error @+1 {{'weft.make_range' op on tiles must be distributed to threads (weft-assign-layouts) before the LLVM lowering}}
  %r = weft.make_range 0, 64 : tensor<64xi32>
  return
}
