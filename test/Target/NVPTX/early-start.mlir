// Early start (programmatic dependent launch) on sm_90: a launch with
// WEFT_LAUNCH_EARLY_START may begin before the stream's previous kernel has
// completed, so every kernel waits for the grids it depends on ahead of
// any access to global memory (weft-early-start; early-start-set-up.mlir:
// after the set-up that needs none), and the "kernels" artifact marks it
// `early_start` for the frontend. No kernel releases its own
// dependents early (griddepcontrol.launch_dependents): they launch as its
// programs exit (bench/README.md, "Early start"). Functions that are not
// kernels do not wait.
//
// RUN: weft-compile %s --target=cuda:90 --emit=ptx -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas %t.ptx
// RUN: weft-compile %s --target=cuda:90 --emit=kernels | FileCheck %s --check-prefix=KERNELS
// RUN: weft-compile %s --target=host --emit=llir | FileCheck %s --check-prefix=HOST

// CHECK-NOT:   griddepcontrol
// CHECK-LABEL: .func {{.*}}add_one(
// CHECK-NOT:   griddepcontrol
// CHECK:       ld.global.b32
// CHECK:       st.global.b32
// CHECK-NOT:   griddepcontrol
// CHECK-LABEL: .entry increment(
// CHECK-NOT:   {{ld|st}}.global
// CHECK:       griddepcontrol.wait;
// CHECK-NOT:   griddepcontrol
// CHECK:       ld.global.b32
// CHECK:       st.global.b32
// CHECK-NOT:   griddepcontrol
// CHECK-LABEL: .entry increment_twice(
// CHECK-NOT:   {{ld|st}}.global
// CHECK:       griddepcontrol.wait;
// CHECK-NOT:   griddepcontrol

// KERNELS: {"increment":{"early_start":true},"increment_twice":{"early_start":true}}

// HOST-NOT: griddepcontrol

func.func @add_one(%p: !weft.ptr<i32>) {
  %v = weft.load %p : !weft.ptr<i32>
  %one = arith.constant 1 : i32
  %w = arith.addi %v, %one : i32
  weft.store %p, %w : !weft.ptr<i32>
  return
}

func.func @increment(%p: !weft.ptr<i32>) attributes {weft.kernel} {
  %v = weft.load %p : !weft.ptr<i32>
  %one = arith.constant 1 : i32
  %w = arith.addi %v, %one : i32
  weft.store %p, %w : !weft.ptr<i32>
  return
}

func.func @increment_twice(%p: !weft.ptr<i32>) attributes {weft.kernel} {
  call @add_one(%p) : (!weft.ptr<i32>) -> ()
  call @add_one(%p) : (!weft.ptr<i32>) -> ()
  return
}
