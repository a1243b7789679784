// A kernel launched to start early runs its set-up while the kernel ahead
// of it on the stream may still run: thread 0 initialises the barriers and
// the program joins, then it waits for that kernel (griddepcontrol.wait),
// before its first access to global memory (weft-early-start).
//
// RUN: weft-compile %s --target=cuda:90 --emit=ptx -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas %t.ptx
// RUN: weft-compile %s --target=cuda:90 --emit=kernels | FileCheck %s --check-prefix=KERNELS

// CHECK-LABEL: .entry increment_after_set_up(
// CHECK-NOT:   {{ld|st}}.global
// CHECK-NOT:   griddepcontrol
// CHECK:       mbarrier.init.shared::cta.b64
// CHECK-NOT:   griddepcontrol
// CHECK:       bar.sync
// CHECK-NOT:   {{ld|st}}.global
// CHECK:       griddepcontrol.wait;
// CHECK-NOT:   griddepcontrol
// CHECK:       ld.global.b32
// CHECK:       st.global.b32
// CHECK-NOT:   griddepcontrol

// KERNELS: {"increment_after_set_up":{"dynamic_shared_bytes":{{[0-9]+}},"early_start":true}}

func.func @increment_after_set_up(%p: !weft.ptr<i32>) attributes {weft.kernel} {
  %bar = weft.alloc_mbarriers {arrivals = 1 : i32} : !weft.mbarrier
  %v = weft.load %p : !weft.ptr<i32>
  %one = arith.constant 1 : i32
  %w = arith.addi %v, %one : i32
  weft.store %p, %w : !weft.ptr<i32>
  weft.inval_mbarriers %bar : !weft.mbarrier
  return
}
