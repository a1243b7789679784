// Producer warps (a loop marked weft.warp_specialize: wl.range(...,
// warp_specialize=True)). The rings and two barriers per buffer (full: the
// copies arrive; empty: each of the program's warps arrives once done
// with it) are allocated before a weft.warp_specialize, which takes the
// marked loop and everything after it. Its producer region runs the same
// loops with only the copies: each step waits at its buffer's empty
// barrier (the copier's wait, parity 1 first: a fresh barrier's previous
// phase counts as complete) and copies its stage. The program's K loop
// waits for its stage without joining; with products in flight it frees
// the step before's buffers (the ring's last) once they have retired,
// except at the first step, and the last step's after the loop, where it
// ran; the arrivals skip the proxy fence (wgmma reads through the async
// proxy). Where the marked loop encloses the K loop (@persistent) both
// regions carry the rings through it, the producers recomputing the K
// loop's bounds and addresses from its induction variable; a tile made
// before the marked loop moves after the split (the producer warps have
// no layouts). The mark is ignored, and the loop pipelined as usual,
// where the kernel orders memory accesses (@waits_for_rows: the producers
// would copy past the wait), and on targets without bulk copies
// (@persistent on gfx942).
//
// RUN: weft-opt %s --weft-set-target="target=cuda:90 num-warps=8 num-stages=3" --weft-pipeline-dot-operands=unroll-rings=false | FileCheck %s
// RUN: weft-opt %s --weft-set-target="target=hip:gfx942 num-warps=8 num-stages=3" --weft-pipeline-dot-operands | FileCheck %s --check-prefix=GFX
// RUN: weft-compile %s --target=cuda:90 --num-warps=8 --num-stages=3 --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %ptxas %t.ptx

// CHECK-LABEL: func.func @persistent
// CHECK:       %[[A0:.*]] = weft.alloc_shared {bulk} : !weft.shared<128x64xbf16
// CHECK-COUNT-2: weft.alloc_shared {bulk} : !weft.shared<128x64xbf16
// CHECK:       %[[B0:.*]] = weft.alloc_shared {bulk} : !weft.shared<64x128xbf16
// CHECK:       %[[FULL:.*]]:3 = weft.alloc_mbarriers {arrivals = 2 : i32}
// CHECK-NEXT:  %[[EMPTY:.*]]:3 = weft.alloc_mbarriers {arrivals = 8 : i32}
// CHECK-NEXT:  %[[P1:.*]] = arith.constant 1 : i32
// CHECK-NEXT:  %[[P0:.*]] = arith.constant 0 : i32
// CHECK-NEXT:  weft.warp_specialize producer_warps = 4 default {
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
// CHECK-NEXT:    scf.for %{{.*}} = %[[PID:.*]] to %arg4 step %[[NP:[^ ]*]] iter_args(%{{.*}} = %[[A0]], {{.*}} = %[[FULL]]#0, {{.*}} = %[[EMPTY]]#0, {{.*}} = %[[P0]], %{{.*}} = %[[P0]], %{{.*}} = %[[P0]])
// CHECK:           %[[KLOOP:.*]]:16 = scf.for %[[K:.*]] = %[[K0:.*]] to %arg3 step %{{.*}} iter_args(%{{.*}} = %[[ZERO]],
// CHECK-NEXT:        weft.mbarrier_wait %{{.*}}, %{{.*}} {join = false}
// CHECK-NEXT:        %[[D:.*]] = weft.dot
// CHECK-NEXT:        %[[W:.*]] = weft.dot_wait %[[D]], 1
// CHECK-NEXT:        %[[LATER:.*]] = arith.cmpi ne, %[[K]], %[[K0]]
// CHECK-NEXT:        scf.if %[[LATER]] {
// CHECK-NEXT:          weft.mbarrier_arrive %{{.*}} {async_reads}
// CHECK-NEXT:        }
// CHECK-NOT:         weft.desc_async_copy
// CHECK:             scf.yield %[[W]],
// CHECK:           %[[SUMS:.*]] = weft.dot_wait %[[KLOOP]]#0, 0
// CHECK-NEXT:      %[[RAN:.*]] = arith.cmpi slt, %[[K0]], %arg3
// CHECK-NEXT:      scf.if %[[RAN]] {
// CHECK-NEXT:        weft.mbarrier_arrive %[[KLOOP]]#12 {async_reads}
// CHECK-NEXT:      }
// CHECK-NEXT:      weft.desc_store %arg2[{{.*}}], %[[SUMS]]
// CHECK-NEXT:      scf.yield %[[KLOOP]]#1,
// CHECK-NEXT:    } {weft.warp_specialize}
// CHECK-NEXT:  } producer {
// CHECK-NEXT:    scf.for %[[I:.*]] = %[[PID]] to %arg4 step %[[NP]] iter_args({{.*}} = %[[EMPTY]]#0, {{.*}} = %[[P1]], %{{.*}} = %[[P1]], %{{.*}} = %[[P1]])
// CHECK-NEXT:      %[[M0:.*]] = arith.muli %[[I]], %{{.*}}
// CHECK-NEXT:      scf.for %[[PK:.*]] = %{{.*}} to %arg3 step
// CHECK-NEXT:        weft.mbarrier_wait %{{.*}}, %{{.*}} {copier, join = false}
// CHECK-NEXT:        arith.cmpi slt, %[[PK]], %arg3
// CHECK-NEXT:        weft.desc_async_copy %arg0[%[[M0]], %[[PK]]]
// CHECK-NEXT:        arith.cmpi slt, %[[PK]], %arg3
// CHECK-NEXT:        weft.desc_async_copy %arg1[%[[PK]], %{{.*}}]
// CHECK-NOT:         weft.dot
// CHECK:             scf.yield
// CHECK-NOT:     weft.dot
// CHECK:       return
// GFX-LABEL:   func.func @persistent
// GFX-NOT:     weft.warp_specialize producer_warps
// GFX:         return
func.func @persistent(%a: !weft.tensordesc<128x64xbf16>, %b: !weft.tensordesc<64x128xbf16>,
                      %c: !weft.tensordesc<128x128xf32>, %K: i32, %blocks: i32) attributes {weft.kernel} {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %pid = weft.program_id x : i32
  %np = weft.num_programs x : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  scf.for %i = %pid to %blocks step %np : i32 {
    %m0 = arith.muli %i, %c128 : i32
    %sum = scf.for %k0 = %c0 to %K step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
      %x = weft.desc_load %a[%m0, %k0] : !weft.tensordesc<128x64xbf16> -> tensor<128x64xbf16>
      %y = weft.desc_load %b[%k0, %c0] : !weft.tensordesc<64x128xbf16> -> tensor<64x128xbf16>
      %d = weft.dot %x, %y, %acc : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
      scf.yield %d : tensor<128x128xf32>
    }
    weft.desc_store %c[%m0, %c0], %sum : !weft.tensordesc<128x128xf32>, tensor<128x128xf32>
  } {weft.warp_specialize}
  return
}

// The K loop marked itself: the producers run it alone. The bf16 block
// leaves by a bulk store, whose joins are the program's warps' alone
// (hardware barrier 1, 256 threads); only the barriers' initialisation,
// before the split, joins every thread. A launch without the producer
// warps traps rather than waiting for their copies.
// CHECK-LABEL: func.func @one_block
// CHECK:       weft.warp_specialize producer_warps = 4 default {
// CHECK:         scf.for
// CHECK:           weft.mbarrier_wait %{{.*}}, %{{.*}} {join = false}
// CHECK:           weft.dot
// CHECK:         weft.desc_store
// CHECK:       } producer {
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      weft.mbarrier_wait %{{.*}}, %{{.*}} {copier, join = false}
// CHECK-COUNT-2:   weft.desc_async_copy
// PTX-LABEL:   .entry one_block
// PTX:         .maxntid 384, 1, 1
// PTX:         setp.ne.u32 other, n, 384; @other trap;
// PTX:         setmaxnreg.dec.sync.aligned.u32 40;
// PTX:         cp.async.bulk.tensor
// PTX:         setmaxnreg.inc.sync.aligned.u32 232;
// PTX:         wgmma.mma_async
// PTX-NOT:     bar.sync 0;
// PTX:         bar.sync 1, 256;
// PTX:         ret;
func.func @one_block(%a: !weft.tensordesc<128x64xbf16>, %b: !weft.tensordesc<64x128xbf16>,
                     %c: !weft.tensordesc<128x128xbf16>, %K: i32) attributes {weft.kernel} {
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
  } {weft.warp_specialize}
  %h = arith.truncf %sum : tensor<128x128xf32> to tensor<128x128xbf16>
  weft.desc_store %c[%m0, %c0], %h : !weft.tensordesc<128x128xbf16>, tensor<128x128xbf16>
  return
}

// A wait for the block's rows before its K loop: copies ahead of it would
// read rows not yet there.
// CHECK-LABEL: func.func @waits_for_rows
// CHECK-NOT:   weft.warp_specialize producer_warps
// CHECK:       weft.wait
// CHECK:       weft.mbarrier_wait %{{.*}}, %{{.*}}{{$}}
// CHECK:       return
func.func @waits_for_rows(%a: !weft.tensordesc<128x64xbf16>, %b: !weft.tensordesc<64x128xbf16>,
                          %c: !weft.tensordesc<128x128xf32>, %K: i32, %blocks: i32,
                          %flags: !weft.ptr<i64>) attributes {weft.kernel} {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %one = arith.constant 1 : i64
  %pid = weft.program_id x : i32
  %np = weft.num_programs x : i32
  scf.for %i = %pid to %blocks step %np : i32 {
    %m0 = arith.muli %i, %c128 : i32
    %flag = weft.addptr %flags, %i : !weft.ptr<i64>, i32
    %seen = weft.wait ge acquire sys %flag, %one : !weft.ptr<i64>
    %zero = arith.constant dense<0.0> : tensor<128x128xf32>
    %sum = scf.for %k0 = %c0 to %K step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
      %x = weft.desc_load %a[%m0, %k0] : !weft.tensordesc<128x64xbf16> -> tensor<128x64xbf16>
      %y = weft.desc_load %b[%k0, %c0] : !weft.tensordesc<64x128xbf16> -> tensor<64x128xbf16>
      %d = weft.dot %x, %y, %acc : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
      scf.yield %d : tensor<128x128xf32>
    }
    weft.desc_store %c[%m0, %c0], %sum : !weft.tensordesc<128x128xf32>, tensor<128x128xf32>
  } {weft.warp_specialize}
  return
}

// In clusters the producers share the block every program of the cluster
// reads (a's rows: the blocks' loop starts at program_id / 2), each
// copying its slice into both programs. A buffer is then free once both
// programs' warps are done with it: every warp arrives at the empty
// barrier of each program (lane r at program r's, through mapa), which
// expects 16 arrivals. The barriers exist in both programs before
// anything reaches them (the cluster's barrier before the split), and a
// program returns only after the other's last arrivals (the cluster's
// barrier at the end of the default region; the producers exit).
// CHECK-LABEL: func.func @clustered
// CHECK:       weft.alloc_mbarriers {arrivals = 2 : i32}
// CHECK-NEXT:  weft.alloc_mbarriers {arrivals = 16 : i32}
// CHECK:       weft.cluster_arrive{{$}}
// CHECK-NEXT:  weft.cluster_wait
// CHECK:       weft.warp_specialize producer_warps = 4 default {
// CHECK:           weft.mbarrier_wait %{{.*}}, %{{.*}} {join = false}
// CHECK:           weft.mbarrier_arrive %{{.*}} {async_reads, cluster}
// CHECK:         weft.mbarrier_arrive %{{.*}} {async_reads, cluster}
// CHECK:         weft.desc_store
// CHECK:       } {weft.warp_specialize}
// CHECK-NEXT:  weft.cluster_arrive release
// CHECK-NEXT:  weft.cluster_wait
// CHECK-NEXT:  } producer {
// CHECK:           weft.mbarrier_wait %{{.*}}, %{{.*}} {copier, join = false}
// CHECK:           weft.desc_async_copy %arg0[{{.*}} {multicast}
// CHECK:           weft.desc_async_copy %arg1[{{[^{]*}}: !weft.tensordesc<64x128xbf16>
// PTX-LABEL:   .entry clustered
// PTX:         .maxntid 384, 1, 1
// PTX:         .reqnctapercluster 2, 1, 1
// PTX:         barrier.cluster.arrive.relaxed.aligned;
// PTX:         barrier.cluster.wait.acquire.aligned;
// PTX:         setmaxnreg.dec.sync.aligned.u32 40;
// PTX:         mbarrier.try_wait.parity.shared::cta.b64
// PTX:         multicast::cluster
// PTX:         setmaxnreg.inc.sync.aligned.u32 232;
// PTX:         wgmma.mma_async
// PTX:         setp.lt.u32 first, lane, 2; mapa.shared::cluster.u32 at, %r{{[0-9]+}}, lane; @first mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [at];
// PTX:         barrier.cluster.arrive.release.aligned;
// PTX:         barrier.cluster.wait.acquire.aligned;
// PTX:         ret;
func.func @clustered(%a: !weft.tensordesc<128x64xbf16> {weft.shape_divisibility = array<i64: 256, 256>},
                     %b: !weft.tensordesc<64x128xbf16> {weft.shape_divisibility = array<i64: 256, 256>},
                     %c: !weft.tensordesc<128x128xbf16>, %K: i32, %blocks: i32)
    attributes {weft.kernel, weft.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : i32
  %c2 = arith.constant 2 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %pid = weft.program_id x : i32
  %np = weft.num_programs x : i32
  %first = arith.divsi %pid, %c2 : i32
  %stride = arith.divsi %np, %c2 : i32
  %column = arith.remsi %pid, %c2 : i32
  %n0 = arith.muli %column, %c128 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  scf.for %i = %first to %blocks step %stride : i32 {
    %m0 = arith.muli %i, %c128 : i32
    %sum = scf.for %k0 = %c0 to %K step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
      %x = weft.desc_load %a[%m0, %k0] : !weft.tensordesc<128x64xbf16> -> tensor<128x64xbf16>
      %y = weft.desc_load %b[%k0, %n0] : !weft.tensordesc<64x128xbf16> -> tensor<64x128xbf16>
      %d = weft.dot %x, %y, %acc : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
      scf.yield %d : tensor<128x128xf32>
    }
    %h = arith.truncf %sum : tensor<128x128xf32> to tensor<128x128xbf16>
    weft.desc_store %c[%m0, %n0], %h : !weft.tensordesc<128x128xbf16>, tensor<128x128xbf16>
  } {weft.warp_specialize}
  return
}
