// weft.fence, every order x scope. PTX ISA 8.6 (what weft emits) has
// `fence.acquire`, `fence.release`, `fence.acq_rel` and `fence.sc`: each
// order is its own fence (on sm_90 an acquire is an L1 invalidate, not a
// MEMBAR). LLVM carries order and syncscope to the backend.
// A fence orders the whole program's accesses (docs/design.md): every
// thread fences, the CTA joins (bar.sync) before a fence that releases and
// after one that acquires.
//
// RUN: weft-compile %s --target=cuda:90 --emit=ptx -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas %t.ptx

// CHECK-LABEL: .entry fence_acquire_cta(
// CHECK-NOT:   bar.sync
// CHECK:       fence.acquire.cta;
// CHECK-NEXT:  bar.sync 0;
// CHECK-NEXT:  ret;
func.func @fence_acquire_cta() attributes {weft.kernel} {
  weft.fence acquire cta
  return
}

// CHECK-LABEL: .entry fence_acquire_gpu(
// CHECK-NOT:   bar.sync
// CHECK:       fence.acquire.gpu;
// CHECK-NEXT:  bar.sync 0;
// CHECK-NEXT:  ret;
func.func @fence_acquire_gpu() attributes {weft.kernel} {
  weft.fence acquire gpu
  return
}

// CHECK-LABEL: .entry fence_acquire_sys(
// CHECK-NOT:   bar.sync
// CHECK:       fence.acquire.sys;
// CHECK-NEXT:  bar.sync 0;
// CHECK-NEXT:  ret;
func.func @fence_acquire_sys() attributes {weft.kernel} {
  weft.fence acquire sys
  return
}

// CHECK-LABEL: .entry fence_release_cta(
// CHECK:       bar.sync 0;
// CHECK-NEXT:  fence.release.cta;
// CHECK-NEXT:  ret;
func.func @fence_release_cta() attributes {weft.kernel} {
  weft.fence release cta
  return
}

// CHECK-LABEL: .entry fence_release_gpu(
// CHECK:       bar.sync 0;
// CHECK-NEXT:  fence.release.gpu;
// CHECK-NEXT:  ret;
func.func @fence_release_gpu() attributes {weft.kernel} {
  weft.fence release gpu
  return
}

// CHECK-LABEL: .entry fence_release_sys(
// CHECK:       bar.sync 0;
// CHECK-NEXT:  fence.release.sys;
// CHECK-NEXT:  ret;
func.func @fence_release_sys() attributes {weft.kernel} {
  weft.fence release sys
  return
}

// CHECK-LABEL: .entry fence_acq_rel_cta(
// CHECK:       bar.sync 0;
// CHECK-NEXT:  fence.acq_rel.cta;
// CHECK-NEXT:  bar.sync 0;
// CHECK-NEXT:  ret;
func.func @fence_acq_rel_cta() attributes {weft.kernel} {
  weft.fence acq_rel cta
  return
}

// CHECK-LABEL: .entry fence_acq_rel_gpu(
// CHECK:       bar.sync 0;
// CHECK-NEXT:  fence.acq_rel.gpu;
// CHECK-NEXT:  bar.sync 0;
// CHECK-NEXT:  ret;
func.func @fence_acq_rel_gpu() attributes {weft.kernel} {
  weft.fence acq_rel gpu
  return
}

// CHECK-LABEL: .entry fence_acq_rel_sys(
// CHECK:       bar.sync 0;
// CHECK-NEXT:  fence.acq_rel.sys;
// CHECK-NEXT:  bar.sync 0;
// CHECK-NEXT:  ret;
func.func @fence_acq_rel_sys() attributes {weft.kernel} {
  weft.fence acq_rel sys
  return
}

// CHECK-LABEL: .entry fence_seq_cst_cta(
// CHECK:       bar.sync 0;
// CHECK-NEXT:  fence.sc.cta;
// CHECK-NEXT:  bar.sync 0;
// CHECK-NEXT:  ret;
func.func @fence_seq_cst_cta() attributes {weft.kernel} {
  weft.fence seq_cst cta
  return
}

// CHECK-LABEL: .entry fence_seq_cst_gpu(
// CHECK:       bar.sync 0;
// CHECK-NEXT:  fence.sc.gpu;
// CHECK-NEXT:  bar.sync 0;
// CHECK-NEXT:  ret;
func.func @fence_seq_cst_gpu() attributes {weft.kernel} {
  weft.fence seq_cst gpu
  return
}

// CHECK-LABEL: .entry fence_seq_cst_sys(
// CHECK:       bar.sync 0;
// CHECK-NEXT:  fence.sc.sys;
// CHECK-NEXT:  bar.sync 0;
// CHECK-NEXT:  ret;
func.func @fence_seq_cst_sys() attributes {weft.kernel} {
  weft.fence seq_cst sys
  return
}
