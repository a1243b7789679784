// weft-relax-waits: `wait acquire` == `wait relaxed; fence acquire` (a
// relaxed poll in one thread, then a program-level acquire fence: every
// thread fences and the threads join; see the weft.fence description). By
// default only the waits whose fence will be shared are split;
// weft-coalesce-fences then sinks and merges the fences (MERGED).
//
// RUN: weft-opt %s --split-input-file --weft-relax-waits | FileCheck %s
// RUN: weft-opt %s --split-input-file --weft-relax-waits="all=true" \
// RUN:   | FileCheck %s --check-prefix=ALL
// RUN: weft-opt %s --split-input-file --weft-relax-waits --weft-coalesce-fences \
// RUN:   | FileCheck %s --check-prefix=MERGED

// Waiting for three peers' flags: three relaxed polls, one fence of the
// widest scope. The first wait's value may be used; the others' are not.
// CHECK-LABEL: func.func @three_flags(
// CHECK:         %[[SEEN:.+]] = weft.wait ge relaxed sys %{{.+}}, %{{.+}} : !weft.ptr<i64>
// CHECK-NEXT:    weft.fence acquire sys
// CHECK-NEXT:    weft.addptr
// CHECK-NEXT:    weft.wait ge relaxed sys
// CHECK-NEXT:    weft.fence acquire sys
// CHECK-NEXT:    weft.addptr
// CHECK-NEXT:    weft.wait eq relaxed gpu
// CHECK-NEXT:    weft.fence acquire gpu
// CHECK-NEXT:    weft.load
// MERGED-LABEL: func.func @three_flags(
// MERGED:         %[[SEEN:.+]] = weft.wait ge relaxed sys
// MERGED-NEXT:    weft.addptr
// MERGED-NEXT:    weft.wait ge relaxed sys
// MERGED-NEXT:    weft.addptr
// MERGED-NEXT:    weft.wait eq relaxed gpu
// MERGED-NEXT:    weft.fence acquire sys
// MERGED-NEXT:    weft.load
// MERGED-NEXT:    return %{{.+}}, %[[SEEN]]
func.func @three_flags(%flags: !weft.ptr<i64>, %data: !weft.ptr<f32>, %v: i64)
    -> (f32, i64) {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %seen = weft.wait ge acquire sys %flags, %v : !weft.ptr<i64>
  %f1 = weft.addptr %flags, %c1 : !weft.ptr<i64>, i32
  %0 = weft.wait ge acquire sys %f1, %v : !weft.ptr<i64>
  %f2 = weft.addptr %flags, %c2 : !weft.ptr<i64>, i32
  %1 = weft.wait eq acquire gpu %f2, %v : !weft.ptr<i64>
  %x = weft.load %data : !weft.ptr<f32>
  return %x, %seen : f32, i64
}

// -----

// A wait per peer in a loop: the fence leaves the loop.
// CHECK-LABEL: func.func @loop_over_peers(
// CHECK:         scf.for
// CHECK:           weft.wait ge relaxed sys
// CHECK-NEXT:      weft.fence acquire sys
// CHECK-NEXT:    }
// MERGED-LABEL: func.func @loop_over_peers(
// MERGED:         scf.for
// MERGED:           weft.wait ge relaxed sys
// MERGED-NEXT:    }
// MERGED-NEXT:    weft.fence acquire sys
// MERGED-NEXT:    weft.load
func.func @loop_over_peers(%flags: !weft.ptr<i64>, %data: !weft.ptr<f32>,
                           %v: i64) -> f32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %ranks = weft.num_ranks : i32
  scf.for %peer = %c0 to %ranks step %c1 : i32 {
    %flag = weft.addptr %flags, %peer : !weft.ptr<i64>, i32
    %0 = weft.wait ge acquire sys %flag, %v : !weft.ptr<i64>
  }
  %x = weft.load %data : !weft.ptr<f32>
  return %x : f32
}

// -----

// A wait followed by an acquiring fence shares it.
// CHECK-LABEL: func.func @wait_then_fence(
// CHECK:         weft.wait ne relaxed sys
// CHECK-NEXT:    weft.fence acquire sys
// CHECK-NEXT:    weft.fence acq_rel gpu
// MERGED-LABEL: func.func @wait_then_fence(
// MERGED:         weft.wait ne relaxed sys
// MERGED-NEXT:    weft.fence acq_rel sys
// MERGED-NEXT:    return
func.func @wait_then_fence(%flag: !weft.ptr<i32>, %v: i32) -> i32 {
  %seen = weft.wait ne acquire sys %flag, %v : !weft.ptr<i32>
  weft.fence acq_rel gpu
  return %seen : i32
}

// -----

// NEGATIVE (by default): a lone wait keeps its acquire, since its fence
// would not be shared (the split costs a CTA barrier); the value of the
// second wait is used, so it cannot share the first one's fence; relaxed
// waits stay relaxed. With all=true every acquire wait is split.
// CHECK-LABEL: func.func @nothing_to_share(
// CHECK:         weft.wait ge acquire sys
// CHECK-NEXT:    weft.store
// CHECK-NEXT:    weft.wait ge acquire sys
// CHECK-NEXT:    weft.wait ge acquire sys
// CHECK-NEXT:    weft.wait ge relaxed sys
// CHECK-NEXT:    arith.addi
// CHECK-NEXT:    weft.store
// CHECK-NOT:     weft.fence
// ALL-LABEL:   func.func @nothing_to_share(
// ALL:           weft.wait ge relaxed sys
// ALL-NEXT:      weft.fence acquire sys
// ALL-NEXT:      weft.store
// ALL-NEXT:      weft.wait ge relaxed sys
// ALL-NEXT:      weft.fence acquire sys
// ALL-NEXT:      weft.wait ge relaxed sys
// ALL-NEXT:      weft.fence acquire sys
// ALL-NEXT:      weft.wait ge relaxed sys
// ALL-NEXT:      arith.addi
// ALL-NEXT:      weft.store
// ALL-NOT:       weft.fence
// MERGED-LABEL: func.func @nothing_to_share(
// MERGED-NOT:     weft.fence
func.func @nothing_to_share(%flag: !weft.ptr<i64>, %out: !weft.ptr<i64>,
                            %v: i64) {
  %0 = weft.wait ge acquire sys %flag, %v : !weft.ptr<i64>
  weft.store %out, %v : !weft.ptr<i64>
  %1 = weft.wait ge acquire sys %flag, %v : !weft.ptr<i64>
  %2 = weft.wait ge acquire sys %flag, %v : !weft.ptr<i64>
  %3 = weft.wait ge relaxed sys %flag, %v : !weft.ptr<i64>
  %sum = arith.addi %2, %3 : i64
  weft.store %out, %sum : !weft.ptr<i64>
  return
}
