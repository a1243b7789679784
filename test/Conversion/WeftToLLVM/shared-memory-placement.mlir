// placeSharedBuffers on sm_90: a K loop whose rings bulk copies fill
// (`weft.alloc_shared {bulk}`: the async proxy writes them), then a
// reduction across the 8 warps, whose partials (128 columns x 8 warps x 4
// bytes) go through shared memory. The rings are dead by then, but the
// threads' exchange may not take room the async proxy wrote (a loop around
// both would need a proxy fence from every thread in between): it goes
// after the rings (4 x 32 KiB) and their barriers (4 x 8 bytes), 131104 +
// 4096 bytes, and 1008 more to align the rings to 1024. Rings that threads
// fill (cp.async) do lend their room: dot-rounded-store.mlir.
//
// RUN: weft-opt %s --weft-lower="target=cuda:90 num-warps=8 num-stages=3" | FileCheck %s
// RUN: weft-compile %s --target=cuda:90 --num-warps=8 --emit=ptx -o %t.ptx
// RUN: %ptxas %t.ptx

// CHECK: llvm.func @bulk_then_exchange({{.*}} weft.dynamic_shared_bytes = 136208 : i64
func.func @bulk_then_exchange(%a: !weft.tensordesc<128x64xbf16>, %b: !weft.tensordesc<64x128xbf16>,
                              %c: !weft.ptr<f32>, %K: i32) attributes {weft.kernel} {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %pid = weft.program_id x : i32
  %m0 = arith.muli %pid, %c128 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %sum = scf.for %k0 = %c0 to %K step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
    %x = weft.desc_load %a[%m0, %k0] : !weft.tensordesc<128x64xbf16> -> tensor<128x64xbf16>
    %y = weft.desc_load %b[%k0, %c0] : !weft.tensordesc<64x128xbf16> -> tensor<64x128xbf16>
    %d = weft.dot %x, %y, %acc : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %cols = weft.reduce %sum axis = 0 : tensor<128x128xf32> -> tensor<128xf32> {
  ^bb0(%p: f32, %q: f32):
    %r = arith.addf %p, %q : f32
    weft.reduce.return %r : f32
  }
  %rn = weft.make_range 0, 128 : tensor<128xi32>
  %cs = weft.splat %c : !weft.ptr<f32> -> tensor<128x!weft.ptr<f32>>
  %cp = weft.addptr %cs, %rn : tensor<128x!weft.ptr<f32>>, tensor<128xi32>
  weft.store %cp, %cols : tensor<128x!weft.ptr<f32>>
  return
}
