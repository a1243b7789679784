// weft-coalesce-fences. "Adjacent": in one block with only memory-free
// operations between. Orders join in relaxed < {acquire, release} <
// acq_rel < seq_cst (acquire + release = acq_rel, anything + seq_cst =
// seq_cst); scopes in cta < gpu < sys.
//
// RUN: weft-opt %s --split-input-file --weft-coalesce-fences | FileCheck %s

// Adjacent fences become one: the join of the orders, the wider scope.
// Address arithmetic between them does not separate them.
// CHECK-LABEL: func.func @fences(
// CHECK-NEXT:    weft.addptr
// CHECK-NEXT:    weft.fence acq_rel sys
// CHECK-NEXT:    weft.store
// CHECK-NEXT:    weft.fence seq_cst gpu
// CHECK-NEXT:    weft.load
// CHECK-NEXT:    weft.fence release gpu
// CHECK-NEXT:    return
func.func @fences(%p: !weft.ptr<i32>, %v: i32) -> i32 {
  weft.fence acquire gpu
  %q = weft.addptr %p, %v : !weft.ptr<i32>, i32
  weft.fence release sys
  weft.store %q, %v : !weft.ptr<i32>
  weft.fence release cta
  weft.fence seq_cst cta
  weft.fence acquire gpu
  %x = weft.load %p : !weft.ptr<i32>
  weft.fence release gpu
  weft.fence release cta
  return %x : i32
}

// -----

// NEGATIVE: a memory operation between two fences keeps both.
// CHECK-LABEL: func.func @separated(
// CHECK-NEXT:    weft.fence release sys
// CHECK-NEXT:    weft.load
// CHECK-NEXT:    weft.fence acquire sys
// CHECK-NEXT:    weft.store
// CHECK-NEXT:    weft.fence acquire sys
func.func @separated(%p: !weft.ptr<i32>, %v: i32) {
  weft.fence release sys
  %x = weft.load %p : !weft.ptr<i32>
  weft.fence acquire sys
  weft.store %p, %v : !weft.ptr<i32>
  weft.fence acquire sys
  return
}

// -----

// A release fence, then a relaxed signal at the end of a kernel: a release
// signal (the signal's observers see the same; nothing else followed that
// the fence would have ordered). The signal takes the wider scope.
// CHECK-LABEL: func.func @release_signal(
// CHECK-NOT:     weft.fence
// CHECK:         weft.store
// CHECK-NEXT:    weft.translate
// CHECK-NEXT:    weft.signal set release sys %{{.+}}, %{{.+}} : !weft.ptr<i64>
// CHECK-NEXT:    weft.load
// CHECK-NEXT:    return
func.func @release_signal(%data: !weft.ptr<f32>, %flag: !weft.ptr<i64>,
                          %x: f32, %v: i64, %peer: i32) -> f32
    attributes {weft.kernel} {
  weft.store %data, %x : !weft.ptr<f32>
  weft.fence release gpu
  %remote = weft.translate %flag, %peer : !weft.ptr<i64>
  weft.signal set relaxed sys %remote, %v : !weft.ptr<i64>
  // A read after the signal: a release fence does not order it.
  %y = weft.load %data : !weft.ptr<f32>
  return %y : f32
}

// -----

// Later writes that are themselves releases of at least the fence's
// scope, or that follow another release fence, order the earlier writes
// on their own; the walk may leave an scf.if.
// CHECK-LABEL: func.func @covered_later_writes(
// CHECK-NEXT:    scf.if
// CHECK-NEXT:      weft.signal add release sys
// CHECK-NEXT:    }
// CHECK-NEXT:    weft.store release sys
// CHECK-NEXT:    weft.barrier
// CHECK-NEXT:    weft.fence release sys
// CHECK-NEXT:    weft.store %{{.+}}, %{{.+}} : !weft.ptr<i64>
func.func @covered_later_writes(%flag: !weft.ptr<i64>, %v: i64, %c: i1)
    attributes {weft.kernel} {
  scf.if %c {
    weft.fence release sys
    weft.signal add relaxed sys %flag, %v : !weft.ptr<i64>
  }
  weft.store release sys %flag, %v : !weft.ptr<i64>
  weft.barrier
  weft.fence release sys
  weft.store %flag, %v : !weft.ptr<i64>
  return
}

// -----

// NEGATIVE: the fence also orders the write after the signal, the later
// release is too narrow to cover it, the function is not a kernel (its
// caller may write next), the signal is in a loop (the next iteration
// writes after it), the fence is acq_rel (it also orders later reads).
// CHECK-LABEL: func.func @store_after(
// CHECK:         weft.fence release sys
// CHECK-NEXT:    weft.signal set relaxed sys
// CHECK-NEXT:    weft.store
func.func @store_after(%flag: !weft.ptr<i64>, %p: !weft.ptr<i32>, %v: i64,
                       %w: i32) attributes {weft.kernel} {
  weft.fence release sys
  weft.signal set relaxed sys %flag, %v : !weft.ptr<i64>
  weft.store %p, %w : !weft.ptr<i32>
  return
}
// CHECK-LABEL: func.func @narrow_release_after(
// CHECK:         weft.fence release sys
// CHECK-NEXT:    weft.signal set relaxed sys
// CHECK-NEXT:    weft.store release gpu
func.func @narrow_release_after(%flag: !weft.ptr<i64>, %p: !weft.ptr<i32>,
                                %v: i64, %w: i32) attributes {weft.kernel} {
  weft.fence release sys
  weft.signal set relaxed sys %flag, %v : !weft.ptr<i64>
  weft.store release gpu %p, %w : !weft.ptr<i32>
  return
}
// CHECK-LABEL: func.func @not_a_kernel(
// CHECK:         weft.fence release sys
// CHECK-NEXT:    weft.signal set relaxed sys
func.func @not_a_kernel(%flag: !weft.ptr<i64>, %v: i64) {
  weft.fence release sys
  weft.signal set relaxed sys %flag, %v : !weft.ptr<i64>
  return
}
// CHECK-LABEL: func.func @in_a_loop(
// CHECK:         weft.fence release sys
// CHECK-NEXT:    weft.signal add relaxed sys
func.func @in_a_loop(%flag: !weft.ptr<i64>, %p: !weft.ptr<i32>, %v: i64,
                     %n: i32) attributes {weft.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  scf.for %i = %c0 to %n step %c1 : i32 {
    weft.store %p, %i : !weft.ptr<i32>
    weft.fence release sys
    weft.signal add relaxed sys %flag, %v : !weft.ptr<i64>
  }
  return
}
// CHECK-LABEL: func.func @acq_rel_fence(
// CHECK:         weft.fence acq_rel sys
// CHECK-NEXT:    weft.signal set relaxed sys
func.func @acq_rel_fence(%flag: !weft.ptr<i64>, %v: i64)
    attributes {weft.kernel} {
  weft.fence acq_rel sys
  weft.signal set relaxed sys %flag, %v : !weft.ptr<i64>
  return
}

// -----

// NEGATIVE: a relaxed signal without a fence stays relaxed.
// CHECK-LABEL: func.func @fence_free_signal(
// CHECK-NEXT:    weft.signal add relaxed sys
// CHECK-NEXT:    return
func.func @fence_free_signal(%flag: !weft.ptr<i64>, %v: i64)
    attributes {weft.kernel} {
  weft.signal add relaxed sys %flag, %v : !weft.ptr<i64>
  return
}

// -----

// Adjacent adds to one flag add the sum once; adjacent sets keep the last
// value. Orders join, scopes widen.
// CHECK-LABEL: func.func @signals(
// CHECK-SAME:    %[[FLAG:[^:]+]]: !weft.ptr<i64>, %[[A:[^:]+]]: i64, %[[B:[^:]+]]: i64, %[[C:[^:]+]]: i64
// CHECK-NEXT:    %[[BC:.+]] = arith.addi %[[B]], %[[C]] : i64
// CHECK-NEXT:    %[[ABC:.+]] = arith.addi %[[A]], %[[BC]] : i64
// CHECK-NEXT:    weft.signal add release sys %[[FLAG]], %[[ABC]] : !weft.ptr<i64>
// CHECK-NEXT:    weft.fence acquire sys
// CHECK-NEXT:    weft.signal set release gpu %[[FLAG]], %[[C]] : !weft.ptr<i64>
// CHECK-NEXT:    return
func.func @signals(%flag: !weft.ptr<i64>, %a: i64, %b: i64, %c: i64) {
  weft.signal add release sys %flag, %a : !weft.ptr<i64>
  weft.signal add release sys %flag, %b : !weft.ptr<i64>
  weft.signal add relaxed gpu %flag, %c : !weft.ptr<i64>
  weft.fence acquire sys
  weft.signal set relaxed gpu %flag, %a : !weft.ptr<i64>
  weft.signal set release cta %flag, %b : !weft.ptr<i64>
  weft.signal set relaxed gpu %flag, %c : !weft.ptr<i64>
  return
}

// -----

// NEGATIVE: different flags, a set and an add, a store between.
// CHECK-LABEL: func.func @distinct_signals(
// CHECK-COUNT-4: weft.signal
func.func @distinct_signals(%f: !weft.ptr<i64>, %g: !weft.ptr<i64>, %a: i64) {
  weft.signal add release sys %f, %a : !weft.ptr<i64>
  weft.signal add release sys %g, %a : !weft.ptr<i64>
  weft.signal set release sys %g, %a : !weft.ptr<i64>
  weft.store %f, %a : !weft.ptr<i64>
  weft.signal set release sys %g, %a : !weft.ptr<i64>
  return
}

// -----

// An acquire fence sinks below relaxed waits whose results are unused, and
// out of (and past) loops of such waits, where it meets the other fences.
// CHECK-LABEL: func.func @waits(
// CHECK:         weft.wait ge relaxed sys
// CHECK-NEXT:    weft.addptr
// CHECK-NEXT:    weft.wait ge relaxed sys
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      weft.addptr
// CHECK-NEXT:      weft.wait ge relaxed sys
// CHECK-NEXT:    }
// CHECK-NEXT:    weft.fence acquire sys
// CHECK-NEXT:    weft.load
func.func @waits(%flags: !weft.ptr<i64>, %data: !weft.ptr<i32>, %v: i64,
                 %n: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %0 = weft.wait ge relaxed sys %flags, %v : !weft.ptr<i64>
  weft.fence acquire sys
  %f1 = weft.addptr %flags, %c1 : !weft.ptr<i64>, i32
  %1 = weft.wait ge relaxed sys %f1, %v : !weft.ptr<i64>
  weft.fence acquire gpu
  scf.for %i = %c0 to %n step %c1 : i32 {
    %f = weft.addptr %flags, %i : !weft.ptr<i64>, i32
    %2 = weft.wait ge relaxed sys %f, %v : !weft.ptr<i64>
    weft.fence acquire sys
  }
  %x = weft.load %data : !weft.ptr<i32>
  return %x : i32
}

// -----

// NEGATIVE: the fence does not pass a wait whose value is used (the value
// seen after the fence could be newer than one seen before it), nor an
// acquire wait's, nor a loop with other memory operations.
// CHECK-LABEL: func.func @waits_stay(
// CHECK:         weft.fence acquire sys
// CHECK-NEXT:    %[[SEEN:.+]] = weft.wait ge relaxed sys
// CHECK-NEXT:    weft.fence acquire sys
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      weft.wait
// CHECK-NEXT:      weft.store
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[SEEN]]
func.func @waits_stay(%flag: !weft.ptr<i64>, %v: i64, %n: i32) -> i64 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  weft.fence acquire sys
  %seen = weft.wait ge relaxed sys %flag, %v : !weft.ptr<i64>
  weft.fence acquire sys
  scf.for %i = %c0 to %n step %c1 : i32 {
    %w = weft.wait ge relaxed sys %flag, %v : !weft.ptr<i64>
    weft.store %flag, %v : !weft.ptr<i64>
  }
  return %seen : i64
}
