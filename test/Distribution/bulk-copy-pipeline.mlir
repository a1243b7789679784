// A K loop over tensor-descriptor blocks on sm_90: the blocks of a and b
// become bulk tensor copies (TMA) into wgmma's swizzled rings, completing
// on a ring of mbarriers instead of cp.async groups.
//
// Each stage's barrier expects two arrivals (a's copy and b's), each
// bringing its block's bytes; an iteration waits for its stage's phase by
// parity (a barrier's parity flips each time the ring comes round), which
// also joins the program, starts its products, and then the copies lead
// stages ahead (their issue overlaps the products). The
// copies of iterations past the bound are not started, so after the loop
// nothing is in flight and the barriers are invalidated (an outer loop
// allocates them anew). The kernel reports the tensor maps the runtime
// must encode (argument index -> [swizzle, then dim, step, size, box per
// map dimension, innermost first]).
//
// a's rows are interleaved for the accumulator's warps (#weft.swizzled
// warps = 8: rows 0-7, 64-71, 8-15, 72-79, ... in shared memory). Where
// the tensor's extents are only known at launch (@desc_loop), a block
// arrives in boxes of 8 rows x 64 columns of a plain 2-D map, 16 of them,
// and b's 64 x 128 block in two boxes of 64 rows x 64 columns (its column
// blocks). Where the extents are whole multiples of the view's steps
// (@aligned_loop: weft.shape_divisibility) and the offsets are too, each
// block is one box of a view: a as 4-D [64 columns, 8 rows, the rest of
// the rows in steps of 64, 8 of them in steps of 8], b as 3-D [64 columns,
// the rows, the rest of the columns in steps of 64].
//
// RUN: weft-opt %s --weft-set-target="target=cuda:90 num-warps=8 num-stages=3" --weft-pipeline-dot-operands=unroll-rings=false | FileCheck %s
// RUN: weft-compile %s --target=cuda:90 --num-warps=8 --num-stages=3 --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %ptxas %t.ptx
// RUN: weft-compile %s --target=cuda:90 --num-warps=8 --num-stages=3 --emit=kernels | FileCheck %s --check-prefix=MAPS
// Without wgmma (two warps, or --warp-mma) the rings take mma.sync's
// layouts (#weft.swizzled with rows in order), which boxes fill as well:
// the same bulk copies, then ldmatrix and mma.sync. Nothing joins the
// program at a step: each warp arrives at the buffer's "empty" barrier
// once done reading it, and only the copying thread waits there before
// refilling it (a ring of three buffers for three stages); the copies go
// before the step's own stage wait. gfx942 has no asynchronous copies.
// RUN: weft-opt %s --weft-set-target="target=cuda:90 num-warps=8 num-stages=3 warp-mma=true" --weft-pipeline-dot-operands=unroll-rings=false | FileCheck %s --check-prefix=EMPTY
// RUN: weft-compile %s --target=cuda:90 --num-warps=2 --emit=ptx -o %t.2.ptx
// RUN: FileCheck %s --check-prefix=WARP < %t.2.ptx
// RUN: %ptxas %t.2.ptx
// RUN: weft-compile %s --target=cuda:90 --num-warps=8 --warp-mma --emit=ptx -o %t.w.ptx
// RUN: FileCheck %s --check-prefix=WARP < %t.w.ptx
// RUN: %ptxas %t.w.ptx
// RUN: weft-compile %s --target=hip:gfx942 --emit=amdgcn | FileCheck %s --check-prefix=GCN

// CHECK-LABEL: func.func @desc_loop
// CHECK-SAME:  weft.tensor_maps = {"0" = array<i64: 128, 1, 1, 0, 64, 0, 1, 0, 8>, "1" = array<i64: 128, 1, 1, 0, 64, 0, 1, 0, 64>}
// CHECK-COUNT-4: weft.alloc_shared {bulk} : !weft.shared<128x64xbf16, #weft.swizzled<bytes = 128, warps = 8>>
// CHECK-COUNT-4: weft.alloc_shared {bulk} : !weft.shared<64x128xbf16, #weft.swizzled<bytes = 128, warps = 0>>
// CHECK:       %[[BARS:.*]]:4 = weft.alloc_mbarriers {arrivals = 2 : i32}
// CHECK:       weft.desc_async_copy %arg0[%{{.*}}, %{{.*}}], %{{.*}}, %[[BARS]]#0, %{{.*}}
// CHECK:       weft.desc_async_copy %arg1[%{{.*}}, %{{.*}}], %{{.*}}, %[[BARS]]#0, %{{.*}}
// CHECK:       weft.desc_async_copy %arg0[%{{.*}}, %{{.*}}], %{{.*}}, %[[BARS]]#1, %{{.*}}
// CHECK:       weft.desc_async_copy %arg1[%{{.*}}, %{{.*}}], %{{.*}}, %[[BARS]]#1, %{{.*}}
// CHECK:       scf.for {{.*}} iter_args({{.*}}%[[B0:[a-z0-9]+]] = %[[BARS]]#0, %[[B1:[a-z0-9]+]] = %[[BARS]]#1, %[[B2:[a-z0-9]+]] = %[[BARS]]#2, %[[B3:[a-z0-9]+]] = %[[BARS]]#3, %[[P0:[a-z0-9]+]] = %{{.*}}, %[[P1:[a-z0-9]+]] = %{{.*}}, %[[P2:[a-z0-9]+]] = %{{.*}}, %[[P3:[a-z0-9]+]] = %{{.*}})
// CHECK-NEXT:    weft.mbarrier_wait %[[B0]], %[[P0]]
// CHECK-NEXT:    %[[D:.*]] = weft.dot
// CHECK-NEXT:    weft.dot_wait %[[D]], 1
// CHECK:         %[[FLIP:.*]] = arith.xori %[[P0]], %{{.*}} : i32
// CHECK:         %[[AHEAD:.*]] = arith.addi %{{.*}}, %{{.*}} : i32
// CHECK:         %[[GO:.*]] = arith.cmpi slt, %[[AHEAD]], %arg3 : i32
// CHECK:         weft.desc_async_copy %arg0[%{{.*}}, %[[AHEAD]]], %{{.*}}, %[[B2]], %[[GO]]
// CHECK:         weft.desc_async_copy %arg1[%[[AHEAD]], %{{.*}}], %{{.*}}, %[[B2]], %{{.*}}
// CHECK-NEXT:    scf.yield {{.*}}, %[[B1]], %[[B2]], %[[B3]], %[[B0]], %[[P1]], %[[P2]], %[[P3]], %[[FLIP]]
// CHECK:       weft.inval_mbarriers %[[BARS]]#0, %[[BARS]]#1, %[[BARS]]#2, %[[BARS]]#3
// CHECK:       weft.dot_wait %{{.*}}, 0
// CHECK-NOT:   weft.async_wait
// CHECK-NOT:   weft.desc_load

// PTX-LABEL: .entry desc_loop(
// PTX-COUNT-4: mbarrier.init.shared::cta.b64 [%r{{[0-9]+}}], %r{{[0-9]+}};
// PTX-NOT:   mbarrier.init
// PTX:       fence.mbarrier_init.release.cluster;{{$}}
// PTX-NOT:   fence.mbarrier_init
// PTX:       bar.sync 0;
// The prologue's two stages: per block one arrival expecting its 16384
// bytes, and its boxes: a's 16 and b's 2 per stage, 36 in all, the first
// lane of warp w issuing boxes w, w + 8, ... of each block.
// PTX:       mov.b32 %r[[BYTES:[0-9]+]], 16384;
// PTX:       mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r[[BAR:[0-9]+]]], %r[[BYTES]];
// PTX-COUNT-16: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r{{[0-9]+}}], [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}}], [%r[[BAR]]];
// PTX:       mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r[[BAR]]], %r{{[0-9]+}};
// PTX-COUNT-2: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r{{[0-9]+}}], [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}}], [%r[[BAR]]];
// PTX:       mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r[[BAR2:[0-9]+]]],
// PTX-COUNT-18: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r{{[0-9]+}}], [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}}], [%r[[BAR2]]];
// PTX-NOT:   cp.async.bulk.tensor
// In the loop: the wait and the join, the products, then the next copies.
// PTX:       mbarrier.try_wait.parity.shared::cta.b64
// PTX:       bar.sync 0;
// PTX:       wgmma.mma_async
// PTX:       wgmma.wait_group.sync.aligned 1;
// PTX:       cp.async.bulk.tensor.2d
// PTX:       mbarrier.inval.shared::cta.b64
// PTX-NOT:   cp.async.wait_group
// PTX-NOT:   fence.proxy.async
// PTX:       ret;

// The kernels in name order (JSON objects print their keys sorted).
// MAPS: "aligned_loop":{"dynamic_shared_bytes":{{[0-9]+}},"early_start":true,"tensor_maps":{"0":{"map":{{\[}}[0,8,8,8],[0,64,0,2],[0,1,8,8],[1,1,0,64]],"swizzle":128},"1":{"map":{{\[}}[1,64,0,2],[0,1,0,64],[1,1,64,64]],"swizzle":128}}}
// MAPS: "desc_loop":{"dynamic_shared_bytes":{{[0-9]+}},"early_start":true,"tensor_maps":{"0":{"map":{{\[}}[0,1,0,8],[1,1,0,64]],"swizzle":128},"1":{"map":{{\[}}[0,1,0,64],[1,1,0,64]],"swizzle":128}}}

// One box per block: a's 4-D at coordinates {k, 0, m0 / 64, 0}, b's 3-D.
// PTX-LABEL: .entry aligned_loop(
// PTX:       shr.s32 %r[[T:[0-9]+]], %r{{[0-9]+}}, 6;
// PTX:       mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r[[BAR:[0-9]+]]],
// PTX:       cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r{{[0-9]+}}], [%rd{{[0-9]+}}, {%r[[ZERO:[0-9]+]], %r[[ZERO]], %r[[T]], %r[[ZERO]]}], [%r[[BAR]]];
// PTX:       mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r[[BAR]]],
// PTX:       cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r{{[0-9]+}}], [%rd{{[0-9]+}}, {%r[[ZERO]], %r[[ZERO]], %r[[ZERO]]}], [%r[[BAR]]];
// PTX-NOT:   cp.async.bulk.tensor.2d
// PTX:       ret;

// EMPTY-LABEL: func.func @desc_loop
// EMPTY-COUNT-3: weft.alloc_shared {bulk} : !weft.shared<128x64xbf16, #weft.swizzled<bytes = 128, warps = 0>>
// EMPTY-COUNT-3: weft.alloc_shared {bulk} : !weft.shared<64x128xbf16, #weft.swizzled<bytes = 128, warps = 0>>
// EMPTY-NOT:   weft.alloc_shared
// EMPTY:       %[[FULL:.*]]:3 = weft.alloc_mbarriers {arrivals = 2 : i32}
// EMPTY:       %[[EMPTY:.*]]:3 = weft.alloc_mbarriers {arrivals = 8 : i32}
// EMPTY:       scf.for {{.*}} iter_args({{.*}}%[[F0:[a-z0-9]+]] = %[[FULL]]#0, %[[F1:[a-z0-9]+]] = %[[FULL]]#1, %[[F2:[a-z0-9]+]] = %[[FULL]]#2, %[[E0:[a-z0-9]+]] = %[[EMPTY]]#0, %[[E1:[a-z0-9]+]] = %[[EMPTY]]#1, %[[E2:[a-z0-9]+]] = %[[EMPTY]]#2, %[[P0:[a-z0-9]+]] = %c0{{.*}}, %[[P1:[a-z0-9]+]] = %c0{{.*}}, %[[P2:[a-z0-9]+]] = %c0{{.*}}, %[[Q0:[a-z0-9]+]] = %c1{{.*}}, %[[Q1:[a-z0-9]+]] = %c1{{.*}}, %[[Q2:[a-z0-9]+]] = %c1{{.*}})
// EMPTY-NEXT:    weft.mbarrier_wait %[[E2]], %[[Q2]] {copier, join = false}
// EMPTY:         weft.desc_async_copy %arg0[%{{.*}}, %{{.*}}], %{{.*}}, %[[F2]], %{{.*}}
// EMPTY:         weft.desc_async_copy %arg1[%{{.*}}, %{{.*}}], %{{.*}}, %[[F2]], %{{.*}}
// EMPTY-NEXT:    weft.mbarrier_wait %[[F0]], %[[P0]] {join = false}
// EMPTY-NEXT:    weft.dot
// EMPTY:         %[[FLIP:.*]] = arith.xori %[[P0]], %{{.*}} : i32
// EMPTY-NEXT:    %[[QFLIP:.*]] = arith.xori %[[Q0]], %{{.*}} : i32
// EMPTY-NEXT:    weft.mbarrier_arrive %[[E0]]
// EMPTY-NEXT:    scf.yield {{.*}}, %[[F1]], %[[F2]], %[[F0]], %[[E1]], %[[E2]], %[[E0]], %[[P1]], %[[P2]], %[[FLIP]], %[[Q1]], %[[Q2]], %[[QFLIP]]
// EMPTY:       weft.inval_mbarriers %[[FULL]]#0, %[[FULL]]#1, %[[FULL]]#2, %[[EMPTY]]#0, %[[EMPTY]]#1, %[[EMPTY]]#2

// In the loop: the step's stage wait, ldmatrix and mma.sync, and each
// warp's arrival through its first lane, with no join until the loop is
// done. The dot's four K slices are straight-line code (no branch from
// the first mma.sync to the arrival), so ptxas can overlap each slice's
// ldmatrix with the MMAs before it. Each later step (LLVM rotates the
// loop, so they follow the arrival) starts with the copying thread's wait
// for the buffer it refills and the copies, and only then waits for its
// own stage.
// WARP-LABEL: .entry desc_loop(
// WARP-NOT:   cp.async.cg
// WARP:       cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// WARP:       mbarrier.try_wait.parity
// WARP-NOT:   bar.sync
// WARP:       ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// WARP-NOT:   bar.sync
// WARP:       ldmatrix.sync.aligned.m8n8.x4.shared.b16
// WARP-NOT:   bar.sync
// WARP:       mma.sync.aligned.m16n8k16
// WARP-NOT:   bar.sync
// WARP-NOT:   {{^\$L__|bra }}
// The arrival's proxy fence orders the warp's ldmatrix loads before the
// bulk copy that refills the buffer.
// WARP:       fence.proxy.async.shared::cta; bar.warp.sync -1; mov.u32 lane, %laneid; setp.eq.u32 first, lane, 0; @first mbarrier.arrive.release.cta.shared::cta.b64 _, [%r{{[0-9]+}}]; }
// WARP:       mbarrier.try_wait.parity
// WARP-NOT:   {{ldmatrix|mma.sync|bar.sync}}
// WARP:       cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// WARP-NOT:   {{ldmatrix|mma.sync|bar.sync}}
// WARP:       mbarrier.try_wait.parity
// WARP-NOT:   bar.sync
// WARP:       ldmatrix.sync.aligned.m8n8
// WARP-NOT:   wgmma
// WARP:       bar.sync 0;
// WARP:       mbarrier.inval.shared::cta.b64
// WARP:       ret;

// GCN-LABEL: desc_loop:
// GCN-NOT:   buffer_load_dword{{.*}}lds
// GCN:       v_mfma_f32_16x16x16
func.func @desc_loop(%a: !weft.tensordesc<128x64xbf16>, %b: !weft.tensordesc<64x128xbf16>,
                     %c: !weft.tensordesc<128x128xf32>, %K: i32) attributes {weft.kernel} {
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
  weft.desc_store %c[%m0, %c0], %sum : !weft.tensordesc<128x128xf32>, tensor<128x128xf32>
  return
}

func.func @aligned_loop(%a: !weft.tensordesc<128x64xbf16> {weft.shape_divisibility = array<i64: 256, 256>},
                        %b: !weft.tensordesc<64x128xbf16> {weft.shape_divisibility = array<i64: 256, 256>},
                        %c: !weft.tensordesc<128x128xf32>, %K: i32) attributes {weft.kernel} {
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
  weft.desc_store %c[%m0, %c0], %sum : !weft.tensordesc<128x128xf32>, tensor<128x128xf32>
  return
}
