// weft-early-start: on sm_90 every kernel waits for the kernel ahead of it
// (weft.dependency_wait) in front of its first op that may touch memory
// other than its own shared memory, and is marked weft.early_start. Index
// arithmetic, pure regions and the allocation of shared buffers and
// barriers stay in front; a loop or an scf.if holding an access, a call,
// and (with debug) a translate get the wait in front of them. A kernel
// that touches no memory waits before it returns. Functions that are not
// kernels never wait, and targets whose launches never start early
// (host, gfx942) get nothing.
//
// RUN: weft-opt %s --weft-set-target=target=cuda:90 --weft-early-start | FileCheck %s
// RUN: weft-opt %s --weft-set-target="target=cuda:90 debug=true" --weft-early-start | FileCheck %s --check-prefix=DEBUG
// RUN: weft-opt %s --weft-set-target=target=host --weft-early-start | FileCheck %s --check-prefix=NONE
// RUN: weft-opt %s --weft-set-target=target=hip:gfx942 --weft-early-start | FileCheck %s --check-prefix=NONE

// NONE-NOT: dependency_wait
// NONE-NOT: early_start

// CHECK-LABEL: func.func @helper(
// CHECK-NOT:     weft.dependency_wait
// CHECK:         return
func.func @helper(%p: !weft.ptr<i32>) {
  %v = weft.load %p : !weft.ptr<i32>
  weft.store %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: func.func @after_set_up(
// CHECK-SAME:    weft.early_start
// CHECK:         weft.program_id x
// CHECK:         weft.alloc_shared
// CHECK:         weft.alloc_mbarriers
// CHECK:         scf.if
// CHECK:           arith.addi
// CHECK:           scf.yield %c0
// CHECK-NEXT:    }
// CHECK-NEXT:    weft.dependency_wait
// CHECK-NEXT:    scf.for
// CHECK:           weft.load
// CHECK-NOT:     weft.dependency_wait
// CHECK:         return
func.func @after_set_up(%p: !weft.ptr<i32>, %n: i32) attributes {weft.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %pid = weft.program_id x : i32
  %buf = weft.alloc_shared : !weft.shared<64x64xbf16, #weft.swizzled<bytes = 128, warps = 0>>
  %bar = weft.alloc_mbarriers {arrivals = 1 : i32} : !weft.mbarrier
  %cond = arith.cmpi slt, %pid, %n : i32
  %start = scf.if %cond -> (i32) {
    %s = arith.addi %pid, %c1 : i32
    scf.yield %s : i32
  } else {
    scf.yield %c0 : i32
  }
  %sum = scf.for %i = %start to %n step %c1 iter_args(%acc = %c0) -> (i32) : i32 {
    %q = weft.addptr %p, %i : !weft.ptr<i32>, i32
    %v = weft.load %q : !weft.ptr<i32>
    %next = arith.addi %acc, %v : i32
    scf.yield %next : i32
  }
  weft.store %p, %sum : !weft.ptr<i32>
  weft.inval_mbarriers %bar : !weft.mbarrier
  return
}

// CHECK-LABEL: func.func @calls(
// CHECK:         arith.addi
// CHECK-NEXT:    weft.dependency_wait
// CHECK-NEXT:    call @helper
func.func @calls(%p: !weft.ptr<i32>, %n: i32) attributes {weft.kernel} {
  %c1 = arith.constant 1 : i32
  %m = arith.addi %n, %c1 : i32
  call @helper(%p) : (!weft.ptr<i32>) -> ()
  return
}

// CHECK-LABEL: func.func @touches_nothing(
// CHECK-SAME:    weft.early_start
// CHECK:         weft.alloc_shared
// CHECK-NEXT:    weft.dependency_wait
// CHECK-NEXT:    return
func.func @touches_nothing() attributes {weft.kernel} {
  %buf = weft.alloc_shared : !weft.shared<64x64xbf16, #weft.swizzled<bytes = 128, warps = 0>>
  return
}

// A translate is address arithmetic, unless its bounds are checked.
// CHECK-LABEL: func.func @translates(
// CHECK:         weft.translate
// CHECK-NEXT:    weft.dependency_wait
// CHECK-NEXT:    weft.store
// DEBUG-LABEL: func.func @translates(
// DEBUG:         weft.dependency_wait
// DEBUG-NEXT:    weft.translate
func.func @translates(%p: !weft.ptr<i32>, %peer: i32, %v: i32) attributes {weft.kernel} {
  %q = weft.translate %p, %peer : !weft.ptr<i32>
  weft.store %q, %v : !weft.ptr<i32>
  return
}
