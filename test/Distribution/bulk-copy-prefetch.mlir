// A K loop of bulk tensor copies in a loop marked weft.prefetch
// (wl.range(..., prefetch=True): the tiles the K loops copy are ready
// before the loop starts), a program taking several output blocks in turn: the rings and
// barriers live through the outer loop, which carries their rotation and
// phases from one run of the K loop to the next. The first block's first
// stages are copied before the outer loop (also masked off where the
// program has no block); each run's tail copies the next block's first
// stages, into the buffers the run's last steps left (positions 0 and 1
// of the rotated rings), after its products complete and before its
// store, so that the store overlaps them. Without the attribute
// (@each_block_alone), or where the next block's copies cannot be computed
// from the outer induction variable alone (@bound_loaded), or where the
// threads read the rings themselves (@warp_mma_reads), each run fills its
// rings after the code before it, as in bulk-copy-rerun.mlir; so too where
// the code before the K loop orders memory accesses (@waits_for_rows: the
// next block's copies would pass the wait that says its rows have
// arrived, which contradicts the attribute). Code after the K loop may
// (@waits_after: a wait for another rank's partial of the block, then the
// sum's store). In clusters
// (@shared_copies) the tail's copies come after the cluster's wait for
// the last step's arrivals and before an arrival of their own, like the
// first stages' copies before a loop.
//
// RUN: weft-opt %s --weft-set-target="target=cuda:90 num-warps=8 num-stages=3" --weft-pipeline-dot-operands=unroll-rings=false | FileCheck %s
// RUN: weft-opt %s --weft-set-target="target=cuda:90 num-warps=8 num-stages=3 warp-mma=true" --weft-pipeline-dot-operands=unroll-rings=false | FileCheck %s --check-prefix=WARP
// RUN: weft-compile %s --target=cuda:90 --num-warps=8 --num-stages=3 --emit=ptx -o %t.ptx
// RUN: %ptxas %t.ptx

// CHECK-LABEL: func.func @next_blocks
// CHECK:       %[[A0:.*]] = weft.alloc_shared {bulk} : !weft.shared<128x64xbf16
// CHECK:       %[[B0:.*]] = weft.alloc_shared {bulk} : !weft.shared<64x128xbf16
// CHECK:       %[[BARS:.*]]:4 = weft.alloc_mbarriers {arrivals = 2 : i32}
// CHECK:       %[[FIRST:.*]] = arith.cmpi slt, %[[PID:.*]], %arg4
// CHECK:       %[[IN:.*]] = arith.andi %{{.*}}, %[[FIRST]]
// CHECK-NEXT:  weft.desc_async_copy %arg0[%{{.*}}], %[[A0]], %[[BARS]]#0, %[[IN]]
// CHECK:       weft.desc_async_copy %arg1[{{.*}}], %[[B0]], %[[BARS]]#0
// CHECK:       weft.desc_async_copy %arg0{{.*}}%[[BARS]]#1
// CHECK:       weft.desc_async_copy %arg1{{.*}}%[[BARS]]#1
// CHECK-NEXT:  %{{.*}}:16 = scf.for %[[I:.*]] = %[[PID]] to %arg4 step %[[NP:[^ ]*]] iter_args(%{{.*}} = %[[A0]],
// CHECK:         %[[KLOOP:.*]]:17 = scf.for
// CHECK:           weft.mbarrier_wait
// CHECK:           weft.dot
// CHECK:           weft.desc_async_copy
// CHECK:           weft.desc_async_copy
// CHECK:           scf.yield
// CHECK:         %[[SUMS:.*]] = weft.dot_wait %[[KLOOP]]#0, 0
// CHECK-NEXT:    %[[NEXT:.*]] = arith.addi %[[I]], %[[NP]]
// CHECK-NEXT:    %[[NM0:.*]] = arith.muli %[[NEXT]]
// CHECK-NEXT:    arith.cmpi slt, %[[NEXT]], %arg4
// CHECK:         weft.desc_async_copy %arg0[%[[NM0]], %{{.*}}], %[[KLOOP]]#1, %[[KLOOP]]#9
// CHECK:         weft.desc_async_copy %arg1[{{.*}}], %[[KLOOP]]#5, %[[KLOOP]]#9
// CHECK:         weft.desc_async_copy %arg0[%[[NM0]], %{{.*}}], %[[KLOOP]]#2, %[[KLOOP]]#10
// CHECK:         weft.desc_async_copy %arg1[{{.*}}], %[[KLOOP]]#6, %[[KLOOP]]#10
// CHECK-NEXT:    weft.desc_store %arg2[{{.*}}], %[[SUMS]]
// CHECK-NEXT:    scf.yield %[[KLOOP]]#1, %[[KLOOP]]#2, %[[KLOOP]]#3, %[[KLOOP]]#4, %[[KLOOP]]#5, %[[KLOOP]]#6, %[[KLOOP]]#7, %[[KLOOP]]#8, %[[KLOOP]]#9,
// CHECK-NEXT:  } {weft.prefetch}
// CHECK-NEXT:  weft.release_shared %[[A0]],
// CHECK-NEXT:  weft.inval_mbarriers %[[BARS]]#0,
// CHECK-NEXT:  return
// WARP-LABEL:  func.func @next_blocks
// WARP:        scf.for
// WARP:          weft.alloc_mbarriers {after_reads
func.func @next_blocks(%a: !weft.tensordesc<128x64xbf16>, %b: !weft.tensordesc<64x128xbf16>,
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
  } {weft.prefetch}
  return
}

// CHECK-LABEL: func.func @each_block_alone
// CHECK:       scf.for
// CHECK-NEXT:    arith.muli
// CHECK-NEXT:    weft.alloc_shared {bulk}
// CHECK-NOT:   weft.prefetch
func.func @each_block_alone(%a: !weft.tensordesc<128x64xbf16>, %b: !weft.tensordesc<64x128xbf16>,
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
  }
  return
}

// Each block's K extent is loaded in the outer loop's body: the next
// block's copies would need that load ahead of its iteration.
// CHECK-LABEL: func.func @bound_loaded
// CHECK:       scf.for
// CHECK-NEXT:    arith.muli
// CHECK-NEXT:    weft.load
// CHECK-NEXT:    weft.alloc_shared {bulk}
func.func @bound_loaded(%a: !weft.tensordesc<128x64xbf16>, %b: !weft.tensordesc<64x128xbf16>,
                        %c: !weft.tensordesc<128x128xf32>, %ks: !weft.ptr<i32>, %blocks: i32) attributes {weft.kernel} {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %pid = weft.program_id x : i32
  %np = weft.num_programs x : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  scf.for %i = %pid to %blocks step %np : i32 {
    %m0 = arith.muli %i, %c128 : i32
    %K = weft.load %ks : !weft.ptr<i32>
    %sum = scf.for %k0 = %c0 to %K step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
      %x = weft.desc_load %a[%m0, %k0] : !weft.tensordesc<128x64xbf16> -> tensor<128x64xbf16>
      %y = weft.desc_load %b[%k0, %c0] : !weft.tensordesc<64x128xbf16> -> tensor<64x128xbf16>
      %d = weft.dot %x, %y, %acc : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
      scf.yield %d : tensor<128x128xf32>
    }
    weft.desc_store %c[%m0, %c0], %sum : !weft.tensordesc<128x128xf32>, tensor<128x128xf32>
  } {weft.prefetch}
  return
}

// Two programs a cluster take the column blocks of one row block: a's
// copies are shared.
// CHECK-LABEL: func.func @shared_copies
// CHECK:       weft.cluster_arrive
// CHECK-NEXT:  weft.cluster_wait
// CHECK:       weft.desc_async_copy %arg0[{{.*}} {multicast}
// CHECK:       weft.cluster_arrive
// CHECK-NEXT:  scf.for
// CHECK:         scf.for
// CHECK:           weft.cluster_wait
// CHECK:           weft.cluster_arrive
// CHECK-NEXT:      scf.yield
// CHECK:         weft.dot_wait %{{.*}}, 0
// CHECK-NEXT:    weft.cluster_wait
// CHECK:         weft.desc_async_copy %arg0[{{.*}} {multicast}
// CHECK:         weft.desc_async_copy %arg0[{{.*}} {multicast}
// CHECK:         weft.cluster_arrive
// CHECK-NEXT:    weft.desc_store
// CHECK-NEXT:    scf.yield
// CHECK:       } {weft.prefetch}
// CHECK-NEXT:  weft.cluster_wait
// CHECK-NEXT:  weft.release_shared
func.func @shared_copies(%a: !weft.tensordesc<128x64xbf16> {weft.shape_divisibility = array<i64: 256, 256>},
    %b: !weft.tensordesc<64x64xbf16> {weft.shape_divisibility = array<i64: 256, 256>},
    %c: !weft.tensordesc<128x64xf32>, %K: i32, %blocks: i32)
    attributes {weft.kernel, weft.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : i32
  %c2 = arith.constant 2 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %pid = weft.program_id x : i32
  %np = weft.num_programs x : i32
  %first = arith.divsi %pid, %c2 : i32
  %step = arith.divsi %np, %c2 : i32
  %column = arith.remsi %pid, %c2 : i32
  %bn = arith.muli %column, %c64 : i32
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  scf.for %i = %first to %blocks step %step : i32 {
    %m0 = arith.muli %i, %c128 : i32
    %sum = scf.for %k0 = %c0 to %K step %c64 iter_args(%acc = %zero) -> (tensor<128x64xf32>) : i32 {
      %x = weft.desc_load %a[%m0, %k0] : !weft.tensordesc<128x64xbf16> -> tensor<128x64xbf16>
      %y = weft.desc_load %b[%k0, %bn] : !weft.tensordesc<64x64xbf16> -> tensor<64x64xbf16>
      %d = weft.dot %x, %y, %acc : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
      scf.yield %d : tensor<128x64xf32>
    }
    weft.desc_store %c[%m0, %bn], %sum : !weft.tensordesc<128x64xf32>, tensor<128x64xf32>
  } {weft.prefetch}
  return
}

// Each block waits for a flag that says its rows of a have arrived.
// CHECK-LABEL: func.func @waits_for_rows
// CHECK:       scf.for
// CHECK-NEXT:    arith.muli
// CHECK-NEXT:    weft.wait
// CHECK-NEXT:    weft.alloc_shared {bulk}
func.func @waits_for_rows(%a: !weft.tensordesc<128x64xbf16>, %b: !weft.tensordesc<64x128xbf16>,
                          %c: !weft.tensordesc<128x128xf32>, %K: i32, %blocks: i32,
                          %flags: !weft.ptr<i64>) attributes {weft.kernel} {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %one = arith.constant 1 : i64
  %pid = weft.program_id x : i32
  %np = weft.num_programs x : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  scf.for %i = %pid to %blocks step %np : i32 {
    %m0 = arith.muli %i, %c128 : i32
    %seen = weft.wait ge acquire gpu %flags, %one : !weft.ptr<i64>
    %sum = scf.for %k0 = %c0 to %K step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
      %x = weft.desc_load %a[%m0, %k0] : !weft.tensordesc<128x64xbf16> -> tensor<128x64xbf16>
      %y = weft.desc_load %b[%k0, %c0] : !weft.tensordesc<64x128xbf16> -> tensor<64x128xbf16>
      %d = weft.dot %x, %y, %acc : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
      scf.yield %d : tensor<128x128xf32>
    }
    weft.desc_store %c[%m0, %c0], %sum : !weft.tensordesc<128x128xf32>, tensor<128x128xf32>
  } {weft.prefetch}
  return
}

// CHECK-LABEL: func.func @waits_after
// CHECK:         weft.dot_wait %{{.*}}, 0
// CHECK:         weft.desc_async_copy
// CHECK:         weft.desc_async_copy
// CHECK:         weft.desc_async_copy
// CHECK:         weft.desc_async_copy
// CHECK-NEXT:    weft.wait
// CHECK:       } {weft.prefetch}
func.func @waits_after(%a: !weft.tensordesc<128x64xbf16>, %b: !weft.tensordesc<64x128xbf16>,
                       %c: !weft.tensordesc<128x128xf32>, %K: i32, %blocks: i32,
                       %flags: !weft.ptr<i64>) attributes {weft.kernel} {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %one = arith.constant 1 : i64
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
    %seen = weft.wait ge acquire gpu %flags, %one : !weft.ptr<i64>
    weft.desc_store %c[%m0, %c0], %sum : !weft.tensordesc<128x128xf32>, tensor<128x128xf32>
  } {weft.prefetch}
  return
}
