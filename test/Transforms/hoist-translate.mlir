// weft-hoist-translate: translate(addptr(p, off), peer) becomes
// addptr(translate(p, peer), off) (and translate(splat(p)) becomes
// splat(translate(p))), so that the translation of a loop-invariant base to
// a loop-invariant peer leaves the loop, with the pure computation of its
// peer; then CSE leaves one translation per (base, peer).
//
// RUN: weft-opt %s --split-input-file --weft-hoist-translate | FileCheck %s

// A ring put in a loop: the peer is computed before the loop, the address
// varies with the induction variable. The translation of the base leaves
// the loop; only the offset stays.
// CHECK-LABEL: func.func @ring_put(
// CHECK-SAME:    %[[BASE:[^:]+]]: !weft.ptr<f32>
// CHECK:         %[[NEXT:.+]] = arith.remui
// CHECK:         %[[REMOTE:.+]] = weft.translate %[[BASE]], %[[NEXT]] : !weft.ptr<f32>
// CHECK:         scf.for %[[I:.+]] = 
// CHECK-NEXT:      %[[P:.+]] = weft.addptr %[[REMOTE]], %[[I]] : !weft.ptr<f32>, i32
// CHECK-NEXT:      weft.store %[[P]], %{{.+}} : !weft.ptr<f32>
// CHECK-NEXT:    }
func.func @ring_put(%base: !weft.ptr<f32>, %n: i32, %v: f32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %rank = weft.rank : i32
  %ranks = weft.num_ranks : i32
  %succ = arith.addi %rank, %c1 : i32
  %next = arith.remui %succ, %ranks : i32
  scf.for %i = %c0 to %n step %c1 : i32 {
    %p = weft.addptr %base, %i : !weft.ptr<f32>, i32
    %q = weft.translate %p, %next : !weft.ptr<f32>
    weft.store %q, %v : !weft.ptr<f32>
  }
  return
}

// -----

// The peer is computed inside the loop but does not depend on it: its
// arithmetic leaves the loop with the translation. Two translations of
// the same base to the same peer (offsets i and i + 1) become one.
// CHECK-LABEL: func.func @invariant_peer_in_loop(
// CHECK-SAME:    %[[BASE:[^:]+]]: !weft.ptr<i32>
// CHECK:         weft.rank
// CHECK:         weft.num_ranks
// CHECK:         %[[PEER:.+]] = arith.remui
// CHECK:         %[[REMOTE:.+]] = weft.translate %[[BASE]], %[[PEER]] : !weft.ptr<i32>
// CHECK-NOT:     weft.translate
// CHECK:         scf.for %[[I:[^ ]+]] =
// CHECK-NOT:       weft.translate
// CHECK:           %[[P0:.+]] = weft.addptr %[[REMOTE]], %[[I]]
// CHECK-NEXT:      weft.store %[[P0]]
// CHECK-NOT:       weft.translate
// CHECK:           %[[P1:.+]] = weft.addptr %[[REMOTE]], %{{.+}}
// CHECK-NEXT:      weft.store %[[P1]]
// CHECK-NEXT:    }
func.func @invariant_peer_in_loop(%base: !weft.ptr<i32>, %n: i32, %v: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  scf.for %i = %c0 to %n step %c1 : i32 {
    %rank = weft.rank : i32
    %ranks = weft.num_ranks : i32
    %prev = arith.addi %rank, %ranks : i32
    %pm1 = arith.subi %prev, %c1 : i32
    %peer = arith.remui %pm1, %ranks : i32
    %p = weft.addptr %base, %i : !weft.ptr<i32>, i32
    %q = weft.translate %p, %peer : !weft.ptr<i32>
    weft.store %q, %v : !weft.ptr<i32>
    %i1 = arith.addi %i, %c1 : i32
    %p1 = weft.addptr %base, %i1 : !weft.ptr<i32>, i32
    %q1 = weft.translate %p1, %peer : !weft.ptr<i32>
    weft.store %q1, %v : !weft.ptr<i32>
  }
  return
}

// -----

// A loop nest: the translation leaves both loops.
// CHECK-LABEL: func.func @nest(
// CHECK-SAME:    %[[BASE:[^:]+]]: !weft.ptr<f32>, %{{[^:]+}}: i32, %[[PEER:[^:]+]]: i32
// CHECK:         %[[REMOTE:.+]] = weft.translate %[[BASE]], %[[PEER]]
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      arith.muli
// CHECK-NEXT:      scf.for
// CHECK-NOT:         weft.translate
// CHECK:             weft.addptr %[[REMOTE]]
func.func @nest(%base: !weft.ptr<f32>, %n: i32, %peer: i32, %v: f32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  scf.for %i = %c0 to %n step %c1 : i32 {
    scf.for %j = %c0 to %n step %c1 : i32 {
      %row = arith.muli %i, %n : i32
      %k = arith.addi %row, %j : i32
      %p = weft.addptr %base, %k : !weft.ptr<f32>, i32
      %q = weft.translate %p, %peer : !weft.ptr<f32>
      weft.store %q, %v : !weft.ptr<f32>
    }
  }
  return
}

// -----

// A tile of pointers built from one base: the scalar base is translated
// once, outside the loop, and the tile is built from it.
// CHECK-LABEL: func.func @tile(
// CHECK-SAME:    %[[BASE:[^:]+]]: !weft.ptr<f16>, %[[OFFS:[^:]+]]: tensor<128xi32>, %{{[^:]+}}: i32, %[[PEER:[^:]+]]: i32
// CHECK:         %[[REMOTE:.+]] = weft.translate %[[BASE]], %[[PEER]] : !weft.ptr<f16>
// CHECK-NEXT:    %[[TILE:.+]] = tensor.splat %[[REMOTE]] : tensor<128x!weft.ptr<f16>>
// CHECK-NEXT:    %[[PTRS:.+]] = weft.addptr %[[TILE]], %[[OFFS]] : tensor<128x!weft.ptr<f16>>, tensor<128xi32>
// CHECK-NEXT:    scf.for
// CHECK-NOT:       weft.translate
// CHECK:           weft.store %[[PTRS]], %{{.+}} : tensor<128x!weft.ptr<f16>>
func.func @tile(%base: !weft.ptr<f16>, %offs: tensor<128xi32>, %n: i32,
                %peer: i32, %v: tensor<128xf16>) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  scf.for %i = %c0 to %n step %c1 : i32 {
    %tile = tensor.splat %base : tensor<128x!weft.ptr<f16>>
    %ptrs = weft.addptr %tile, %offs : tensor<128x!weft.ptr<f16>>, tensor<128xi32>
    %remote = weft.translate %ptrs, %peer : tensor<128x!weft.ptr<f16>>
    weft.store %remote, %v : tensor<128x!weft.ptr<f16>>
  }
  return
}

// -----

// Through the weft tile ops that only move pointers (splat, reshape): the
// translation reaches the scalar base and leaves the loop.
// CHECK-LABEL: func.func @tile_ops(
// CHECK-SAME:    %[[BASE:[^:]+]]: !weft.ptr<f32>, %[[OFFS:[^:]+]]: tensor<128xi32>, %{{[^:]+}}: i32, %[[PEER:[^:]+]]: i32
// CHECK:         %[[REMOTE:.+]] = weft.translate %[[BASE]], %[[PEER]] : !weft.ptr<f32>
// CHECK-NEXT:    %[[TILE:.+]] = weft.splat %[[REMOTE]] : !weft.ptr<f32> -> tensor<128x!weft.ptr<f32>>
// CHECK-NEXT:    %[[PTRS:.+]] = weft.addptr %[[TILE]], %[[OFFS]]
// CHECK-NEXT:    %[[GRID:.+]] = weft.reshape %[[PTRS]] : tensor<128x!weft.ptr<f32>> -> tensor<8x16x!weft.ptr<f32>>
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      weft.store %[[GRID]]
// CHECK-NEXT:    }
func.func @tile_ops(%base: !weft.ptr<f32>, %offs: tensor<128xi32>, %n: i32,
                    %peer: i32, %v: tensor<8x16xf32>) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  scf.for %i = %c0 to %n step %c1 : i32 {
    %tile = weft.splat %base : !weft.ptr<f32> -> tensor<128x!weft.ptr<f32>>
    %ptrs = weft.addptr %tile, %offs : tensor<128x!weft.ptr<f32>>, tensor<128xi32>
    %grid = weft.reshape %ptrs : tensor<128x!weft.ptr<f32>> -> tensor<8x16x!weft.ptr<f32>>
    %remote = weft.translate %grid, %peer : tensor<8x16x!weft.ptr<f32>>
    weft.store %remote, %v : tensor<8x16x!weft.ptr<f32>>
  }
  return
}

// -----

// scf.while is a loop too.
// CHECK-LABEL: func.func @while_loop(
// CHECK-SAME:    %[[BASE:[^:]+]]: !weft.ptr<i32>, %{{[^:]+}}: i32, %[[PEER:[^:]+]]: i32
// CHECK:         %[[REMOTE:.+]] = weft.translate %[[BASE]], %[[PEER]]
// CHECK:         scf.while
// CHECK-NOT:     weft.translate
// CHECK:         return
func.func @while_loop(%base: !weft.ptr<i32>, %n: i32, %peer: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.while (%i = %c0) : (i32) -> i32 {
    %more = arith.cmpi slt, %i, %n : i32
    scf.condition(%more) %i : i32
  } do {
  ^bb0(%i: i32):
    %p = weft.addptr %base, %i : !weft.ptr<i32>, i32
    %q = weft.translate %p, %peer : !weft.ptr<i32>
    weft.store %q, %i : !weft.ptr<i32>
    %next = arith.addi %i, %c1 : i32
    scf.yield %next : i32
  }
  return
}

// -----

// NEGATIVE: a loop over peers. The translation depends on the induction
// variable and stays in the loop; it is not moved onto the base pointer,
// since the invariant addptr can leave the loop instead.
// CHECK-LABEL: func.func @peer_varies(
// CHECK-SAME:    %[[SLOT:[^:]+]]: !weft.ptr<i32>, %[[OFF:[^:]+]]: i32
// CHECK-NOT:     weft.translate
// CHECK:         %[[P:.+]] = weft.addptr %[[SLOT]], %[[OFF]]
// CHECK-NEXT:    scf.for %[[PEER:[^ ]+]] =
// CHECK-NEXT:      %[[REMOTE:.+]] = weft.translate %[[P]], %[[PEER]] : !weft.ptr<i32>
// CHECK-NEXT:      weft.store %[[REMOTE]]
func.func @peer_varies(%slot: !weft.ptr<i32>, %off: i32, %v: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %ranks = weft.num_ranks : i32
  scf.for %peer = %c0 to %ranks step %c1 : i32 {
    %p = weft.addptr %slot, %off : !weft.ptr<i32>, i32
    %remote = weft.translate %p, %peer : !weft.ptr<i32>
    weft.store %remote, %v : !weft.ptr<i32>
  }
  return
}

// -----

// NEGATIVE: the base pointer is loaded in the loop: nothing moves.
// CHECK-LABEL: func.func @base_varies(
// CHECK:         scf.for
// CHECK-NEXT:      %[[P:.+]] = weft.load
// CHECK-NEXT:      %[[REMOTE:.+]] = weft.translate %[[P]], %{{.+}} : !weft.ptr<f32>
// CHECK-NEXT:      weft.store %[[REMOTE]]
func.func @base_varies(%table: !weft.ptr<!weft.ptr<f32>>, %n: i32, %peer: i32,
                       %v: f32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  scf.for %i = %c0 to %n step %c1 : i32 {
    %p = weft.load %table : !weft.ptr<!weft.ptr<f32>>
    %remote = weft.translate %p, %peer : !weft.ptr<f32>
    weft.store %remote, %v : !weft.ptr<f32>
  }
  return
}
