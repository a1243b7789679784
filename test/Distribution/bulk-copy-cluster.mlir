// Kernels run in clusters (weft.cluster) on sm_90: the bulk copies of a
// block that every program of the cluster reads are shared. Each program
// copies its slice of the block (the outermost dimension of the box, which
// the tensor map records: a's 128 interleaved rows in two slices of four
// 8-row groups) into every program's buffer, and each program's barrier
// still expects the whole block. A program may refill a buffer only once
// every program of the cluster is done with it, so the loop orders its
// copies with the cluster's barrier instead of the program's join: each
// thread arrives at the end of a step and waits before the next step's
// copies. The block must be provably the same in all programs of the
// cluster: offsets from program ids along axes the cluster does not span
// (@shared_a), or over a multiple of its extent (@cluster_ids); otherwise
// (@own_blocks), or where the programs might not all run the loop
// (@diverging), each program copies its own.
//
// RUN: weft-opt %s --weft-set-target="target=cuda:90 num-warps=8 num-stages=3" --weft-pipeline-dot-operands=unroll-rings=false | FileCheck %s
// RUN: weft-compile %s --target=cuda:90 --num-warps=8 --num-stages=3 --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %ptxas %t.ptx
// RUN: weft-compile %s --target=cuda:90 --num-warps=8 --num-stages=3 --emit=kernels | FileCheck %s --check-prefix=MAPS
// With mma.sync (warp-mma) the threads read the rings themselves
// (ldmatrix), and a relaxed arrival would let those loads complete after
// it, when a peer's copy may already be refilling the buffer: the loop's
// arrivals release (the ones in front of the loop follow no reads).
// RUN: weft-opt %s --weft-set-target="target=cuda:90 num-warps=8 num-stages=3 warp-mma=true" --weft-pipeline-dot-operands=unroll-rings=false | FileCheck %s --check-prefix=WARP
// RUN: weft-compile %s --target=cuda:90 --num-warps=8 --num-stages=3 --warp-mma --emit=ptx -o %t.w.ptx
// RUN: FileCheck %s --check-prefix=WPTX < %t.w.ptx
// RUN: %ptxas %t.w.ptx
// gfx942 has no clusters: its programs run alone, copying their own.
// RUN: weft-compile %s --target=hip:gfx942 --emit=amdgcn | FileCheck %s --check-prefix=GCN

// CHECK-LABEL: func.func @shared_a
// CHECK-SAME:  weft.tensor_maps = {"0" = array<i64: 128, 1, 1, 0, 64, 0, 1, 8, 8, 0, 64, 0, 2, 0, 8, 8, 4>, "1" = array<i64: 128, 1, 1, 0, 64, 0, 1, 0, 64>}
// CHECK:       %[[BARS:.*]]:4 = weft.alloc_mbarriers {arrivals = 2 : i32}
// CHECK:       weft.cluster_arrive
// CHECK-NEXT:  weft.cluster_wait
// CHECK:       weft.desc_async_copy %arg0[{{.*}}], %{{.*}}, %[[BARS]]#0, %{{.*}} {multicast}
// CHECK:       weft.desc_async_copy %arg1[{{.*}}], %{{.*}}, %[[BARS]]#0, %{{[^ ]*}} : !weft.tensordesc<64x64xbf16>
// CHECK:       weft.desc_async_copy %arg0[{{.*}}], %{{.*}}, %[[BARS]]#1, %{{.*}} {multicast}
// CHECK:       weft.desc_async_copy %arg1[{{.*}}], %{{.*}}, %[[BARS]]#1, %{{[^ ]*}} : !weft.tensordesc<64x64xbf16>
// CHECK-NEXT:  weft.cluster_arrive
// CHECK-NEXT:  scf.for
// CHECK-NEXT:    weft.mbarrier_wait %{{.*}}, %{{.*}} {join = false}
// CHECK-NEXT:    weft.dot
// CHECK-NEXT:    weft.dot_wait
// CHECK:         weft.cluster_wait
// CHECK:         weft.desc_async_copy %arg0[{{.*}} {multicast}
// CHECK:         weft.desc_async_copy %arg1[{{[^{]*}}: !weft.tensordesc<64x64xbf16>
// CHECK-NEXT:    weft.cluster_arrive
// CHECK-NEXT:    scf.yield
// CHECK:       weft.cluster_wait
// CHECK-NEXT:  weft.release_shared
// CHECK-NEXT:  weft.inval_mbarriers

// WARP-LABEL: func.func @shared_a
// WARP:       weft.cluster_arrive{{$}}
// WARP:       weft.cluster_arrive{{$}}
// WARP-NEXT:  scf.for
// WARP:         weft.dot {{.*}} !weft.shared<128x64xbf16, #weft.swizzled<bytes = 128, warps = 0>>
// WARP:         weft.cluster_arrive release
// WARP-NEXT:    scf.yield

// WPTX-LABEL: .entry shared_a(
// WPTX:       barrier.cluster.arrive.relaxed.aligned;
// WPTX:       mbarrier.try_wait.parity.shared::cta.b64
// WPTX:       ldmatrix.sync.aligned.m8n8.x4.shared.b16
// WPTX:       mma.sync.aligned.m16n8k16
// WPTX:       fence.proxy.async.shared::cta; barrier.cluster.arrive.release.aligned;
// WPTX:       ret;

// CHECK-LABEL: func.func @cluster_ids
// CHECK:       weft.desc_async_copy %arg0[{{.*}} {multicast}
// CHECK:       weft.desc_async_copy %arg1[{{[^{]*}}: !weft.tensordesc<64x64xbf16>

// CHECK-LABEL: func.func @own_blocks
// CHECK-NOT:   weft.cluster_
// CHECK-NOT:   multicast
// CHECK:       weft.mbarrier_wait %{{.*}}, %{{[^ ]*}}{{$}}
// CHECK-LABEL: func.func @diverging
// CHECK-NOT:   multicast
// CHECK:       return

// PTX-LABEL: .entry shared_a(
// PTX:       .explicitcluster
// PTX-NEXT:  .reqnctapercluster 1, 2, 1
// PTX:       fence.mbarrier_init.release.cluster;
// PTX:       bar.sync 0;
// PTX:       barrier.cluster.arrive.relaxed.aligned;
// PTX:       barrier.cluster.wait.acquire.aligned;
// The rank picks the slice: four of the box's eight 8-row groups along
// its outermost dimension, 8 KiB apart in shared memory, copied into both
// programs (mask 0b11); the barrier expects all of a's 16 KiB.
// PTX:       mov.u32 %r[[RANK:[0-9]+]], %cluster_ctarank;
// PTX:       shl.b32 %r{{[0-9]+}}, %r[[RANK]], 13;
// PTX:       shl.b32 %r[[SLICE:[0-9]+]], %r[[RANK]], 2;
// PTX:       mov.b32 %r[[BYTES:[0-9]+]], 16384;
// PTX:       mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r[[BAR:[0-9]+]]], %r[[BYTES]];
// PTX:       mov.b16 %rs[[MASK:[0-9]+]], 3;
// PTX:       cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%r{{[0-9]+}}], [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r[[SLICE]]}], [%r[[BAR]]], %rs[[MASK]];
// PTX:       cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r{{[0-9]+}}], [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}}], [%r[[BAR]]];
// In the loop the cluster's barrier replaces the join.
// PTX:       mbarrier.try_wait.parity.shared::cta.b64
// PTX-NOT:   bar.sync
// PTX:       wgmma.wait_group.sync.aligned 1;
// PTX:       barrier.cluster.wait.acquire.aligned;
// PTX:       multicast::cluster
// PTX:       barrier.cluster.arrive.relaxed.aligned;
// PTX-LABEL: .entry cluster_ids(
// PTX:       .reqnctapercluster 2, 1, 1
// PTX-LABEL: .entry own_blocks(
// PTX-NOT:   multicast::cluster
// PTX-NOT:   barrier.cluster
// PTX-LABEL: .entry diverging(
// PTX-NOT:   multicast::cluster
// PTX:       ret;

// GCN-LABEL: shared_a:
// GCN:       v_mfma_f32

// MAPS: "shared_a":{"cluster":[1,2,1],"dynamic_shared_bytes":{{[0-9]+}},"early_start":true,"tensor_maps":{"0":{"map":{{\[}}[0,8,8,4],[0,64,0,2],[0,1,8,8],[1,1,0,64]],"swizzle":128},"1":{"map":{{\[}}[0,1,0,64],[1,1,0,64]],"swizzle":128}}}

// a's rows from x (the cluster spans y), b's columns from y.
func.func @shared_a(%a: !weft.tensordesc<128x64xbf16> {weft.shape_divisibility = array<i64: 256, 256>},
    %b: !weft.tensordesc<64x64xbf16> {weft.shape_divisibility = array<i64: 256, 256>},
    %c: !weft.tensordesc<128x64xf32>, %K: i32)
    attributes {weft.kernel, weft.cluster = array<i32: 1, 2, 1>} {
  %c0 = arith.constant 0 : i32
  %c2 = arith.constant 2 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %px = weft.program_id x : i32
  %py = weft.program_id y : i32
  %bx = arith.divsi %px, %c2 : i32
  %ax = arith.muli %px, %c128 : i32
  %am = arith.muli %bx, %c128 : i32
  %an = arith.muli %px, %c64 : i32
  %bn = arith.muli %py, %c64 : i32
  %first = arith.cmpi eq, %py, %c0 : i32
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %sum = scf.for %k0 = %c0 to %K step %c64 iter_args(%acc = %zero) -> (tensor<128x64xf32>) : i32 {
    %x = weft.desc_load %a[%ax, %k0] : !weft.tensordesc<128x64xbf16> -> tensor<128x64xbf16>
    %y = weft.desc_load %b[%k0, %bn] : !weft.tensordesc<64x64xbf16> -> tensor<64x64xbf16>
    %d = weft.dot %x, %y, %acc : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    scf.yield %d : tensor<128x64xf32>
  }
  weft.desc_store %c[%ax, %bn], %sum : !weft.tensordesc<128x64xf32>, tensor<128x64xf32>
  return
}

// a's rows from x / 2 (clusters of two along x), b's columns from x.
func.func @cluster_ids(%a: !weft.tensordesc<128x64xbf16> {weft.shape_divisibility = array<i64: 256, 256>},
    %b: !weft.tensordesc<64x64xbf16> {weft.shape_divisibility = array<i64: 256, 256>},
    %c: !weft.tensordesc<128x64xf32>, %K: i32)
    attributes {weft.kernel, weft.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : i32
  %c2 = arith.constant 2 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %px = weft.program_id x : i32
  %py = weft.program_id y : i32
  %bx = arith.divsi %px, %c2 : i32
  %ax = arith.muli %px, %c128 : i32
  %am = arith.muli %bx, %c128 : i32
  %an = arith.muli %px, %c64 : i32
  %bn = arith.muli %py, %c64 : i32
  %first = arith.cmpi eq, %py, %c0 : i32
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %sum = scf.for %k0 = %c0 to %K step %c64 iter_args(%acc = %zero) -> (tensor<128x64xf32>) : i32 {
    %x = weft.desc_load %a[%am, %k0] : !weft.tensordesc<128x64xbf16> -> tensor<128x64xbf16>
    %y = weft.desc_load %b[%k0, %an] : !weft.tensordesc<64x64xbf16> -> tensor<64x64xbf16>
    %d = weft.dot %x, %y, %acc : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    scf.yield %d : tensor<128x64xf32>
  }
  weft.desc_store %c[%am, %an], %sum : !weft.tensordesc<128x64xf32>, tensor<128x64xf32>
  return
}

// Both blocks from x, which the cluster spans.
func.func @own_blocks(%a: !weft.tensordesc<128x64xbf16> {weft.shape_divisibility = array<i64: 256, 256>},
    %b: !weft.tensordesc<64x64xbf16> {weft.shape_divisibility = array<i64: 256, 256>},
    %c: !weft.tensordesc<128x64xf32>, %K: i32)
    attributes {weft.kernel, weft.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : i32
  %c2 = arith.constant 2 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %px = weft.program_id x : i32
  %py = weft.program_id y : i32
  %bx = arith.divsi %px, %c2 : i32
  %ax = arith.muli %px, %c128 : i32
  %am = arith.muli %bx, %c128 : i32
  %an = arith.muli %px, %c64 : i32
  %bn = arith.muli %py, %c64 : i32
  %first = arith.cmpi eq, %py, %c0 : i32
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %sum = scf.for %k0 = %c0 to %K step %c64 iter_args(%acc = %zero) -> (tensor<128x64xf32>) : i32 {
    %x = weft.desc_load %a[%ax, %k0] : !weft.tensordesc<128x64xbf16> -> tensor<128x64xbf16>
    %y = weft.desc_load %b[%k0, %an] : !weft.tensordesc<64x64xbf16> -> tensor<64x64xbf16>
    %d = weft.dot %x, %y, %acc : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    scf.yield %d : tensor<128x64xf32>
  }
  weft.desc_store %c[%ax, %an], %sum : !weft.tensordesc<128x64xf32>, tensor<128x64xf32>
  return
}

// Only the first program along y runs the loop.
func.func @diverging(%a: !weft.tensordesc<128x64xbf16> {weft.shape_divisibility = array<i64: 256, 256>},
    %b: !weft.tensordesc<64x64xbf16> {weft.shape_divisibility = array<i64: 256, 256>},
    %c: !weft.tensordesc<128x64xf32>, %K: i32)
    attributes {weft.kernel, weft.cluster = array<i32: 1, 2, 1>} {
  %c0 = arith.constant 0 : i32
  %c2 = arith.constant 2 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %px = weft.program_id x : i32
  %py = weft.program_id y : i32
  %bx = arith.divsi %px, %c2 : i32
  %ax = arith.muli %px, %c128 : i32
  %am = arith.muli %bx, %c128 : i32
  %an = arith.muli %px, %c64 : i32
  %bn = arith.muli %py, %c64 : i32
  %first = arith.cmpi eq, %py, %c0 : i32
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  scf.if %first {
    %sum = scf.for %k0 = %c0 to %K step %c64 iter_args(%acc = %zero) -> (tensor<128x64xf32>) : i32 {
      %x = weft.desc_load %a[%ax, %k0] : !weft.tensordesc<128x64xbf16> -> tensor<128x64xbf16>
      %y = weft.desc_load %b[%k0, %bn] : !weft.tensordesc<64x64xbf16> -> tensor<64x64xbf16>
      %d = weft.dot %x, %y, %acc : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
      scf.yield %d : tensor<128x64xf32>
    }
    weft.desc_store %c[%ax, %bn], %sum : !weft.tensordesc<128x64xf32>, tensor<128x64xf32>
  }
  return
}
