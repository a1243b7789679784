// Loads and stores, every order x scope, on sm_90: the PTX qualifiers of
// docs/memory-model.md. Weak accesses are plain `ld`/`st` (PTX .weak);
// relaxed, acquire and release carry their scope; a release store is
// preceded by the CTA barrier that makes it cover every thread's writes.
// Each function writes its result through its own pointer so no access can
// be merged with another.
//
// RUN: weft-compile %s --target=cuda:90 --emit=ptx -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas %t.ptx

// CHECK-LABEL: .entry load_weak(
// CHECK:       ld.global.b32 [[V:%r[0-9]+]], [%rd{{[0-9]+}}];
// CHECK:       st.global.b32 [%rd{{[0-9]+}}], [[V]];
func.func @load_weak(%p: !weft.ptr<i32>, %out: !weft.ptr<i32>)
    attributes {weft.kernel} {
  %v = weft.load %p : !weft.ptr<i32>
  weft.store %out, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: .entry load_relaxed_cta(
// CHECK:       ld.relaxed.cta.global.b32 [[V:%r[0-9]+]], [%rd{{[0-9]+}}];
// CHECK:       st.global.b32 [%rd{{[0-9]+}}], [[V]];
func.func @load_relaxed_cta(%p: !weft.ptr<i32>, %out: !weft.ptr<i32>)
    attributes {weft.kernel} {
  %v = weft.load relaxed cta %p : !weft.ptr<i32>
  weft.store %out, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: .entry load_relaxed_gpu(
// CHECK:       ld.relaxed.gpu.global.b32 [[V:%r[0-9]+]], [%rd{{[0-9]+}}];
// CHECK:       st.global.b32 [%rd{{[0-9]+}}], [[V]];
func.func @load_relaxed_gpu(%p: !weft.ptr<i32>, %out: !weft.ptr<i32>)
    attributes {weft.kernel} {
  %v = weft.load relaxed gpu %p : !weft.ptr<i32>
  weft.store %out, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: .entry load_relaxed_sys(
// CHECK:       ld.relaxed.sys.global.b32 [[V:%r[0-9]+]], [%rd{{[0-9]+}}];
// CHECK:       st.global.b32 [%rd{{[0-9]+}}], [[V]];
func.func @load_relaxed_sys(%p: !weft.ptr<i32>, %out: !weft.ptr<i32>)
    attributes {weft.kernel} {
  %v = weft.load relaxed sys %p : !weft.ptr<i32>
  weft.store %out, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: .entry load_acquire_cta(
// CHECK:       ld.acquire.cta.global.b32 [[V:%r[0-9]+]], [%rd{{[0-9]+}}];
// CHECK:       st.global.b32 [%rd{{[0-9]+}}], [[V]];
func.func @load_acquire_cta(%p: !weft.ptr<i32>, %out: !weft.ptr<i32>)
    attributes {weft.kernel} {
  %v = weft.load acquire cta %p : !weft.ptr<i32>
  weft.store %out, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: .entry load_acquire_gpu(
// CHECK:       ld.acquire.gpu.global.b32 [[V:%r[0-9]+]], [%rd{{[0-9]+}}];
// CHECK:       st.global.b32 [%rd{{[0-9]+}}], [[V]];
func.func @load_acquire_gpu(%p: !weft.ptr<i32>, %out: !weft.ptr<i32>)
    attributes {weft.kernel} {
  %v = weft.load acquire gpu %p : !weft.ptr<i32>
  weft.store %out, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: .entry load_acquire_sys(
// CHECK:       ld.acquire.sys.global.b32 [[V:%r[0-9]+]], [%rd{{[0-9]+}}];
// CHECK:       st.global.b32 [%rd{{[0-9]+}}], [[V]];
func.func @load_acquire_sys(%p: !weft.ptr<i32>, %out: !weft.ptr<i32>)
    attributes {weft.kernel} {
  %v = weft.load acquire sys %p : !weft.ptr<i32>
  weft.store %out, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: .entry store_weak(
// CHECK-NOT:   bar.sync
// CHECK:       st.global.b32 [%rd{{[0-9]+}}], %r{{[0-9]+}};
func.func @store_weak(%p: !weft.ptr<i32>, %v: i32) attributes {weft.kernel} {
  weft.store %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: .entry store_relaxed_cta(
// CHECK-NOT:   bar.sync
// CHECK:       st.relaxed.cta.global.b32 [%rd{{[0-9]+}}], %r{{[0-9]+}};
func.func @store_relaxed_cta(%p: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  weft.store relaxed cta %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: .entry store_relaxed_gpu(
// CHECK-NOT:   bar.sync
// CHECK:       st.relaxed.gpu.global.b32 [%rd{{[0-9]+}}], %r{{[0-9]+}};
func.func @store_relaxed_gpu(%p: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  weft.store relaxed gpu %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: .entry store_relaxed_sys(
// CHECK-NOT:   bar.sync
// CHECK:       st.relaxed.sys.global.b32 [%rd{{[0-9]+}}], %r{{[0-9]+}};
func.func @store_relaxed_sys(%p: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  weft.store relaxed sys %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: .entry store_release_cta(
// CHECK:       bar.sync 0;
// CHECK:       st.release.cta.global.b32 [%rd{{[0-9]+}}], %r{{[0-9]+}};
func.func @store_release_cta(%p: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  weft.store release cta %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: .entry store_release_gpu(
// CHECK:       bar.sync 0;
// CHECK:       st.release.gpu.global.b32 [%rd{{[0-9]+}}], %r{{[0-9]+}};
func.func @store_release_gpu(%p: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  weft.store release gpu %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: .entry store_release_sys(
// CHECK:       bar.sync 0;
// CHECK:       st.release.sys.global.b32 [%rd{{[0-9]+}}], %r{{[0-9]+}};
func.func @store_release_sys(%p: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  weft.store release sys %p, %v : !weft.ptr<i32>
  return
}

// Masked accesses: the access happens only under the mask; a masked-off
// load yields `other`. The barrier of a release store is outside the mask,
// since every thread of the program must reach it.
// CHECK-LABEL: .entry load_acquire_masked(
// CHECK:       ld.param.b32 [[OTHER:%r[0-9]+]], [load_acquire_masked_param_2];
// CHECK:       @%p{{[0-9]+}} bra [[SKIP:\$L__BB[0-9_]+]];
// CHECK:       ld.acquire.gpu.global.b32 [[OTHER]], [%rd{{[0-9]+}}];
// CHECK:       [[SKIP]]:
// CHECK-NEXT:  st.global.b32 [%rd{{[0-9]+}}], [[OTHER]];
func.func @load_acquire_masked(%p: !weft.ptr<f32>, %m: i1, %other: f32,
                               %out: !weft.ptr<f32>) attributes {weft.kernel} {
  %v = weft.load acquire gpu %p, mask %m, other %other : !weft.ptr<f32>
  weft.store %out, %v : !weft.ptr<f32>
  return
}

// CHECK-LABEL: .entry store_release_masked(
// CHECK:       bar.sync 0;
// CHECK:       @%p{{[0-9]+}} bra [[SKIP:\$L__BB[0-9_]+]];
// CHECK:       st.release.sys.global.b32 [%rd{{[0-9]+}}], %r{{[0-9]+}};
// CHECK:       [[SKIP]]:
func.func @store_release_masked(%p: !weft.ptr<f32>, %m: i1, %v: f32)
    attributes {weft.kernel} {
  weft.store release sys %p, %v, mask %m : !weft.ptr<f32>
  return
}

// Ordered accesses of every width: the order and scope do not depend on the
// type (pointers are 64-bit values too).
// CHECK-LABEL: .entry widths(
// CHECK:       ld.acquire.sys.global.b8
// CHECK:       st.release.sys.global.b8
// CHECK:       ld.acquire.sys.global.b16
// CHECK:       st.release.sys.global.b16
// CHECK:       ld.acquire.sys.global.b16
// CHECK:       st.release.sys.global.b16
// CHECK:       ld.acquire.sys.global.b64
// CHECK:       st.release.sys.global.b64
// CHECK:       ld.acquire.sys.global.b64
// CHECK:       st.release.sys.global.b64
// CHECK:       ld.relaxed.gpu.global.b64
// CHECK:       st.relaxed.gpu.global.b64
func.func @widths(%a: !weft.ptr<i8>, %b: !weft.ptr<i16>, %c: !weft.ptr<bf16>,
                  %d: !weft.ptr<f64>, %e: !weft.ptr<i64>,
                  %f: !weft.ptr<!weft.ptr<f32>>) attributes {weft.kernel} {
  %va = weft.load acquire sys %a : !weft.ptr<i8>
  weft.store release sys %a, %va : !weft.ptr<i8>
  %vb = weft.load acquire sys %b : !weft.ptr<i16>
  weft.store release sys %b, %vb : !weft.ptr<i16>
  %vc = weft.load acquire sys %c : !weft.ptr<bf16>
  weft.store release sys %c, %vc : !weft.ptr<bf16>
  %vd = weft.load acquire sys %d : !weft.ptr<f64>
  weft.store release sys %d, %vd : !weft.ptr<f64>
  %ve = weft.load acquire sys %e : !weft.ptr<i64>
  weft.store release sys %e, %ve : !weft.ptr<i64>
  %vf = weft.load relaxed gpu %f : !weft.ptr<!weft.ptr<f32>>
  weft.store relaxed gpu %f, %vf : !weft.ptr<!weft.ptr<f32>>
  return
}
