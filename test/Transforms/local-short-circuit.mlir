// weft-local-short-circuit: a translation to a peer that provably is the
// local rank is the pointer itself. Proven: weft.rank (after folding, so
// also rank + 0 and the like); select of two proven values;
// rem{u,s}i(x, num_ranks) of a proven x or of x + num_ranks. Anything else
// keeps its translation.
//
// RUN: weft-opt %s --split-input-file --weft-local-short-circuit | FileCheck %s

// CHECK-LABEL: func.func @rank(
// CHECK-SAME:    %[[P:[^:]+]]: !weft.ptr<i32>
// CHECK-NOT:     weft.translate
// CHECK:         weft.store release gpu %[[P]], %{{.+}} : !weft.ptr<i32>
func.func @rank(%p: !weft.ptr<i32>, %v: i32) {
  %rank = weft.rank : i32
  %local = weft.translate %p, %rank : !weft.ptr<i32>
  // A gpu-scope release is valid here because the peer is the rank.
  weft.store release gpu %local, %v : !weft.ptr<i32>
  return
}

// -----

// What a frontend emits for `peer = (rank + 0) % num_ranks`, `(rank +
// num_ranks) % num_ranks` and `rank % num_ranks`, signed or unsigned.
// CHECK-LABEL: func.func @modular(
// CHECK-SAME:    %[[P:[^:]+]]: !weft.ptr<f32>
// CHECK-NOT:     weft.translate
// CHECK:         weft.load %[[P]] : !weft.ptr<f32>
// CHECK-NEXT:    weft.load %[[P]] : !weft.ptr<f32>
// CHECK-NEXT:    weft.load %[[P]] : !weft.ptr<f32>
func.func @modular(%p: !weft.ptr<f32>) -> (f32, f32, f32) {
  %c0 = arith.constant 0 : i32
  %rank = weft.rank : i32
  %ranks = weft.num_ranks : i32
  %r0 = arith.addi %rank, %c0 : i32
  %a = arith.remui %r0, %ranks : i32
  %pa = weft.translate %p, %a : !weft.ptr<f32>
  %va = weft.load %pa : !weft.ptr<f32>
  %wrapped = arith.addi %ranks, %rank : i32
  %b = arith.remsi %wrapped, %ranks : i32
  %pb = weft.translate %p, %b : !weft.ptr<f32>
  %vb = weft.load %pb : !weft.ptr<f32>
  %c = arith.remsi %rank, %ranks : i32
  %pc = weft.translate %p, %c : !weft.ptr<f32>
  %vc = weft.load %pc : !weft.ptr<f32>
  return %va, %vb, %vc : f32, f32, f32
}

// -----

// Both arms of the select are the rank. A tile of pointers is handled
// like a scalar one.
// CHECK-LABEL: func.func @select_tile(
// CHECK-SAME:    %[[PS:[^:]+]]: tensor<64x!weft.ptr<f16>>
// CHECK-NOT:     weft.translate
// CHECK:         weft.load %[[PS]] : tensor<64x!weft.ptr<f16>>
func.func @select_tile(%ps: tensor<64x!weft.ptr<f16>>, %c: i1) -> tensor<64xf16> {
  %rank = weft.rank : i32
  %ranks = weft.num_ranks : i32
  %mod = arith.remui %rank, %ranks : i32
  %peer = arith.select %c, %rank, %mod : i32
  %local = weft.translate %ps, %peer : tensor<64x!weft.ptr<f16>>
  %v = weft.load %local : tensor<64x!weft.ptr<f16>>
  return %v : tensor<64xf16>
}

// -----

// NEGATIVE: the next rank, a peer passed in, a select with one arm that
// may be another rank, and a remainder by something that is not
// num_ranks: all keep their translation.
// CHECK-LABEL: func.func @not_the_rank(
// CHECK-COUNT-4: weft.translate
func.func @not_the_rank(%p: !weft.ptr<i32>, %peer: i32, %c: i1, %m: i32)
    -> (i32, i32, i32, i32) {
  %c1 = arith.constant 1 : i32
  %rank = weft.rank : i32
  %ranks = weft.num_ranks : i32
  %succ = arith.addi %rank, %c1 : i32
  %next = arith.remui %succ, %ranks : i32
  %p0 = weft.translate %p, %next : !weft.ptr<i32>
  %v0 = weft.load %p0 : !weft.ptr<i32>
  %p1 = weft.translate %p, %peer : !weft.ptr<i32>
  %v1 = weft.load %p1 : !weft.ptr<i32>
  %either = arith.select %c, %rank, %peer : i32
  %p2 = weft.translate %p, %either : !weft.ptr<i32>
  %v2 = weft.load %p2 : !weft.ptr<i32>
  %mod = arith.remui %rank, %m : i32
  %p3 = weft.translate %p, %mod : !weft.ptr<i32>
  %v3 = weft.load %p3 : !weft.ptr<i32>
  return %v0, %v1, %v2, %v3 : i32, i32, i32, i32
}
