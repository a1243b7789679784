// Waiting on several flags on sm_90, after weft-optimize: one relaxed
// polling loop per flag (thread 0), then a single acquire fence in every
// thread followed by a CTA barrier, so that what thread 0 observed is
// acquired for the whole program before anyone reads the data. Without
// the pipeline each wait has its own fence (in thread 0, before the join).
//
// RUN: weft-compile %s --target=cuda:90 --emit=ptx -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas %t.ptx
// RUN: weft-compile %s --target=cuda:90 --emit=ptx --no-optimize -o %t.noopt.ptx
// RUN: FileCheck %s --check-prefix=NOOPT < %t.noopt.ptx
// RUN: %ptxas %t.noopt.ptx

// CHECK-LABEL: .entry three_flags(
// CHECK-NOT:   fence
// CHECK:       ld.relaxed.sys.global.b64
// CHECK-NOT:   fence
// CHECK:       ld.relaxed.sys.global.b64
// CHECK-NOT:   fence
// CHECK:       ld.relaxed.sys.global.b64
// CHECK-NOT:   fence
// CHECK:       fence.acquire.sys;
// CHECK-NEXT:  bar.sync 0;
// CHECK-NOT:   fence
// CHECK:       ld.global.b32
// CHECK-NOT:   fence
// CHECK:       ret;
// NOOPT-LABEL: .entry three_flags(
// NOOPT-COUNT-3: fence.acquire.sys;
// NOOPT-NOT:   fence
// NOOPT:       ret;
func.func @three_flags(%flags: !weft.ptr<i64>, %data: !weft.ptr<i32>,
                       %out: !weft.ptr<i32>, %epoch: i64)
    attributes {weft.kernel} {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %f1 = weft.addptr %flags, %c1 : !weft.ptr<i64>, i32
  %f2 = weft.addptr %flags, %c2 : !weft.ptr<i64>, i32
  %0 = weft.wait ge acquire sys %flags, %epoch : !weft.ptr<i64>
  %1 = weft.wait ge acquire sys %f1, %epoch : !weft.ptr<i64>
  %2 = weft.wait ge acquire sys %f2, %epoch : !weft.ptr<i64>
  %x = weft.load %data : !weft.ptr<i32>
  weft.store %out, %x : !weft.ptr<i32>
  return
}

// A loop over every peer's flag: the fence leaves the loop.
// CHECK-LABEL: .entry every_peer(
// CHECK-NOT:   fence
// CHECK:       ld.relaxed.sys.global.b64
// CHECK-NOT:   fence
// CHECK:       fence.acquire.sys;
// CHECK-NEXT:  bar.sync 0;
// CHECK-NOT:   fence
// CHECK:       ret;
func.func @every_peer(%flags: !weft.ptr<i64>, %data: !weft.ptr<i32>,
                      %out: !weft.ptr<i32>, %epoch: i64)
    attributes {weft.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %ranks = weft.num_ranks : i32
  scf.for %peer = %c0 to %ranks step %c1 : i32 {
    %flag = weft.addptr %flags, %peer : !weft.ptr<i64>, i32
    %seen = weft.wait ge acquire sys %flag, %epoch : !weft.ptr<i64>
  }
  %x = weft.load %data : !weft.ptr<i32>
  weft.store %out, %x : !weft.ptr<i32>
  return
}
