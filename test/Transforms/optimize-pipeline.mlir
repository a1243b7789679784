// The weft-optimize pipeline (relax-waits, local-short-circuit,
// hoist-translate, coalesce-fences, canonicalize, cse) on one ring step:
// through weft-opt, through the stock mlir-opt with WeftPlugin.so, and as
// the "weft" artifact of weft-compile, which runs it right after parsing
// (unless --no-optimize).
//
// RUN: weft-opt %s --weft-optimize | FileCheck %s
// RUN: mlir-opt %s --load-dialect-plugin=%plugin_dir/WeftPlugin.so \
// RUN:   --load-pass-plugin=%plugin_dir/WeftPlugin.so \
// RUN:   --pass-pipeline='builtin.module(weft-optimize)' | FileCheck %s
// RUN: weft-compile %s --target=host --emit=weft | FileCheck %s
// RUN: weft-compile %s --target=host --emit=weft --no-optimize \
// RUN:   | FileCheck %s --check-prefix=NOOPT

// CHECK-LABEL: func.func @ring_step(
// CHECK-SAME:    %[[INBOX:[^:]+]]: !weft.ptr<f32>, %[[FLAGS:[^:]+]]: !weft.ptr<i64>, %[[OUT:[^:]+]]: !weft.ptr<f32>
// Waiting for every peer: relaxed polls in the loop, one fence after it.
// CHECK:         scf.for %[[PEER:[^ ]+]] =
// CHECK-NEXT:      %[[FLAG:.+]] = weft.addptr %[[FLAGS]], %[[PEER]]
// CHECK-NEXT:      weft.wait ge relaxed sys %[[FLAG]]
// CHECK-NEXT:    }
// CHECK-NEXT:    weft.fence acquire sys
// The translation to the next rank is computed once, before the loop; the
// one to this rank is gone.
// CHECK:         %[[NEXT:.+]] = arith.remui
// CHECK:         %[[REMOTE:.+]] = weft.translate %[[OUT]], %[[NEXT]] : !weft.ptr<f32>
// CHECK-NOT:     weft.translate
// CHECK:         scf.for %[[I:[^ ]+]] =
// CHECK-NEXT:      %[[SRC:.+]] = weft.addptr %[[INBOX]], %[[I]]
// CHECK-NEXT:      %[[X:.+]] = weft.load %[[SRC]]
// CHECK-NEXT:      %[[DST:.+]] = weft.addptr %[[REMOTE]], %[[I]]
// CHECK-NEXT:      weft.store %[[DST]], %[[X]]
// CHECK-NEXT:    }
// The fence and the two relaxed increments: one release signal of 2.
// CHECK-NOT:     weft.fence
// CHECK:         %[[RBASE:.+]] = weft.translate %[[FLAGS]], %[[NEXT]] : !weft.ptr<i64>
// CHECK-NEXT:    %[[RFLAG:.+]] = weft.addptr %[[RBASE]]
// CHECK-NEXT:    weft.signal add release sys %[[RFLAG]], %c2_i64
// CHECK-NEXT:    return

// NOOPT-LABEL: func.func @ring_step(
// NOOPT:         weft.wait ge acquire sys
// NOOPT-COUNT-3: weft.translate
// NOOPT:         weft.fence release sys
// NOOPT-NEXT:    weft.signal add relaxed sys
// NOOPT-NEXT:    weft.signal add relaxed sys
func.func @ring_step(%inbox: !weft.ptr<f32>, %flags: !weft.ptr<i64>,
                     %out: !weft.ptr<f32>, %n: i32, %epoch: i64)
    attributes {weft.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %one = arith.constant 1 : i64
  %rank = weft.rank : i32
  %ranks = weft.num_ranks : i32

  // Every peer signalled its flag for this epoch.
  scf.for %peer = %c0 to %ranks step %c1 : i32 {
    %flag = weft.addptr %flags, %peer : !weft.ptr<i64>, i32
    %seen = weft.wait ge acquire sys %flag, %epoch : !weft.ptr<i64>
  }

  // Read the inbox (peer = this rank, written the way a frontend does for
  // `(rank + num_ranks) % num_ranks`) and push it to the next rank.
  %wrapped = arith.addi %rank, %ranks : i32
  %me = arith.remui %wrapped, %ranks : i32
  %succ = arith.addi %rank, %c1 : i32
  %next = arith.remui %succ, %ranks : i32
  scf.for %i = %c0 to %n step %c1 : i32 {
    %p = weft.addptr %inbox, %i : !weft.ptr<f32>, i32
    %local = weft.translate %p, %me : !weft.ptr<f32>
    %x = weft.load %local : !weft.ptr<f32>
    %q = weft.addptr %out, %i : !weft.ptr<f32>, i32
    %remote = weft.translate %q, %next : !weft.ptr<f32>
    weft.store %remote, %x : !weft.ptr<f32>
  }

  // Publish to the next rank: this rank's flag there, counted twice (two
  // halves of the work, say).
  %mine = weft.addptr %flags, %rank : !weft.ptr<i64>, i32
  %rflag = weft.translate %mine, %next : !weft.ptr<i64>
  weft.fence release sys
  weft.signal add relaxed sys %rflag, %one : !weft.ptr<i64>
  weft.signal add relaxed sys %rflag, %one : !weft.ptr<i64>
  return
}
