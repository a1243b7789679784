// Bulk tensor copies read global memory through the async proxy, which an
// acquire does not order: a program that waits for a peer's signal and then
// copies the rows the peer pushed could copy stale bytes. In a kernel with
// such copies, weft-fence-tensor-copies puts a weft.async_proxy_fence after
// every op that acquires and that a copy may follow, later or in a loop's
// next step (here the wait; not the relaxed atomic, nor the acquiring
// fence after the last copy), and sm_90 fences every thread's async proxy
// after the wait's acquire and join, before the prologue's copies. A
// kernel without bulk copies gets no fence.
//
// RUN: weft-opt %s --weft-set-target="target=cuda:90 num-warps=8 num-stages=3" --weft-pipeline-dot-operands --weft-fence-tensor-copies | FileCheck %s
// RUN: weft-compile %s --target=cuda:90 --num-warps=8 --num-stages=3 --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %ptxas %t.ptx

// CHECK-LABEL: func.func @after_wait
// CHECK:       weft.atomic_rmw add relaxed gpu
// CHECK-NOT:   weft.async_proxy_fence
// CHECK:       weft.wait ge acquire sys
// CHECK-NEXT:  weft.async_proxy_fence
// CHECK-NOT:   weft.async_proxy_fence
// CHECK:       weft.desc_async_copy
// CHECK:       weft.fence acquire gpu
// CHECK-NOT:   weft.async_proxy_fence
// CHECK:       return
// CHECK-LABEL: func.func @wait_before_next_step
// CHECK:       scf.for
// CHECK:       weft.desc_async_copy
// CHECK:       weft.wait ge acquire sys
// CHECK-NEXT:  weft.async_proxy_fence
// CHECK-LABEL: func.func @no_copies
// CHECK-NOT:   weft.async_proxy_fence
// CHECK:       return

// PTX-LABEL: .entry after_wait(
// PTX:       atom.relaxed.gpu.global.add.u32
// PTX-NOT:   fence.proxy.async.global
// PTX:       fence.acquire.sys;
// PTX:       bar.sync 0;
// PTX-NOT:   {{ld|st|cp}}.
// PTX:       fence.proxy.async.global;
// PTX:       cp.async.bulk.tensor.2d
// PTX:       fence.acquire.gpu;
// PTX-NOT:   fence.proxy.async
// PTX:       ret;
// PTX-LABEL: .entry wait_before_next_step(
// PTX-DAG:   cp.async.bulk.tensor.2d
// PTX-DAG:   fence.proxy.async.global;
// PTX-LABEL: .entry no_copies(
// PTX-NOT:   fence.proxy.async
// PTX:       ret;

func.func @after_wait(%a: !weft.tensordesc<128x64xbf16>, %b: !weft.tensordesc<64x128xbf16>,
                      %c: !weft.tensordesc<128x128xf32>, %flag: !weft.ptr<i64>, %epoch: i64,
                      %ticket: !weft.ptr<i32>, %K: i32) attributes {weft.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %item = weft.atomic_rmw add relaxed gpu %ticket, %c1 : !weft.ptr<i32>
  %m0 = arith.muli %item, %c128 : i32
  %seen = weft.wait ge acquire sys %flag, %epoch : !weft.ptr<i64>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %sum = scf.for %k0 = %c0 to %K step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
    %x = weft.desc_load %a[%m0, %k0] : !weft.tensordesc<128x64xbf16> -> tensor<128x64xbf16>
    %y = weft.desc_load %b[%k0, %c0] : !weft.tensordesc<64x128xbf16> -> tensor<64x128xbf16>
    %d = weft.dot %x, %y, %acc : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  weft.desc_store %c[%m0, %c0], %sum : !weft.tensordesc<128x128xf32>, tensor<128x128xf32>
  weft.fence acquire gpu
  return
}

// A wait at the end of each step of a loop over blocks: the next step's
// copies follow it.
func.func @wait_before_next_step(%a: !weft.tensordesc<128x64xbf16>,
                                 %b: !weft.tensordesc<64x128xbf16>,
                                 %c: !weft.tensordesc<128x128xf32>, %flag: !weft.ptr<i64>,
                                 %epoch: i64, %blocks: i32, %K: i32) attributes {weft.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  scf.for %i = %c0 to %blocks step %c1 : i32 {
    %m0 = arith.muli %i, %c128 : i32
    %zero = arith.constant dense<0.0> : tensor<128x128xf32>
    %sum = scf.for %k0 = %c0 to %K step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
      %x = weft.desc_load %a[%m0, %k0] : !weft.tensordesc<128x64xbf16> -> tensor<128x64xbf16>
      %y = weft.desc_load %b[%k0, %c0] : !weft.tensordesc<64x128xbf16> -> tensor<64x128xbf16>
      %d = weft.dot %x, %y, %acc : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
      scf.yield %d : tensor<128x128xf32>
    }
    weft.desc_store %c[%m0, %c0], %sum : !weft.tensordesc<128x128xf32>, tensor<128x128xf32>
    %seen = weft.wait ge acquire sys %flag, %epoch : !weft.ptr<i64>
  }
  return
}

func.func @no_copies(%x: !weft.ptr<f32>, %flag: !weft.ptr<i64>, %epoch: i64) attributes {weft.kernel} {
  %seen = weft.wait ge acquire sys %flag, %epoch : !weft.ptr<i64>
  %v = weft.load weak sys %x : !weft.ptr<f32>
  weft.store weak sys %x, %v : !weft.ptr<f32>
  return
}
