// weft.atomic_cas, every order x scope, i32 and i64. LLVM's `cmpxchg` keeps
// its ordering and syncscope on NVPTX (unlike `atomicrmw`), so CAS goes
// through LLVM: `atom.<sem>.<scope>.global.cas.b32/.b64`. The failure order
// is the acquire part of the success order (relaxed for release).
//
// RUN: weft-compile %s --target=cuda:90 --emit=ptx -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas %t.ptx

// CHECK-LABEL: .entry cas_relaxed(
// CHECK:       atom.relaxed.cta.global.cas.b32 
// CHECK:       atom.relaxed.gpu.global.cas.b32 
// CHECK:       atom.relaxed.sys.global.cas.b32 
// CHECK:       atom.relaxed.cta.global.cas.b64 
// CHECK:       atom.relaxed.gpu.global.cas.b64 
// CHECK:       atom.relaxed.sys.global.cas.b64 
func.func @cas_relaxed(%p32: !weft.ptr<i32>, %c32: i32, %v32: i32,
                   %p64: !weft.ptr<i64>, %c64: i64, %v64: i64) attributes {weft.kernel} {
  %i32_cta = weft.atomic_cas relaxed cta %p32, %c32, %v32 : !weft.ptr<i32>
  %i32_gpu = weft.atomic_cas relaxed gpu %p32, %c32, %v32 : !weft.ptr<i32>
  %i32_sys = weft.atomic_cas relaxed sys %p32, %c32, %v32 : !weft.ptr<i32>
  %i64_cta = weft.atomic_cas relaxed cta %p64, %c64, %v64 : !weft.ptr<i64>
  %i64_gpu = weft.atomic_cas relaxed gpu %p64, %c64, %v64 : !weft.ptr<i64>
  %i64_sys = weft.atomic_cas relaxed sys %p64, %c64, %v64 : !weft.ptr<i64>
  return
}

// CHECK-LABEL: .entry cas_acquire(
// CHECK:       atom.acquire.cta.global.cas.b32 
// CHECK:       atom.acquire.gpu.global.cas.b32 
// CHECK:       atom.acquire.sys.global.cas.b32 
// CHECK:       atom.acquire.cta.global.cas.b64 
// CHECK:       atom.acquire.gpu.global.cas.b64 
// CHECK:       atom.acquire.sys.global.cas.b64 
func.func @cas_acquire(%p32: !weft.ptr<i32>, %c32: i32, %v32: i32,
                   %p64: !weft.ptr<i64>, %c64: i64, %v64: i64) attributes {weft.kernel} {
  %i32_cta = weft.atomic_cas acquire cta %p32, %c32, %v32 : !weft.ptr<i32>
  %i32_gpu = weft.atomic_cas acquire gpu %p32, %c32, %v32 : !weft.ptr<i32>
  %i32_sys = weft.atomic_cas acquire sys %p32, %c32, %v32 : !weft.ptr<i32>
  %i64_cta = weft.atomic_cas acquire cta %p64, %c64, %v64 : !weft.ptr<i64>
  %i64_gpu = weft.atomic_cas acquire gpu %p64, %c64, %v64 : !weft.ptr<i64>
  %i64_sys = weft.atomic_cas acquire sys %p64, %c64, %v64 : !weft.ptr<i64>
  return
}

// CHECK-LABEL: .entry cas_release(
// CHECK:       atom.release.cta.global.cas.b32 
// CHECK:       atom.release.gpu.global.cas.b32 
// CHECK:       atom.release.sys.global.cas.b32 
// CHECK:       atom.release.cta.global.cas.b64 
// CHECK:       atom.release.gpu.global.cas.b64 
// CHECK:       atom.release.sys.global.cas.b64 
func.func @cas_release(%p32: !weft.ptr<i32>, %c32: i32, %v32: i32,
                   %p64: !weft.ptr<i64>, %c64: i64, %v64: i64) attributes {weft.kernel} {
  %i32_cta = weft.atomic_cas release cta %p32, %c32, %v32 : !weft.ptr<i32>
  %i32_gpu = weft.atomic_cas release gpu %p32, %c32, %v32 : !weft.ptr<i32>
  %i32_sys = weft.atomic_cas release sys %p32, %c32, %v32 : !weft.ptr<i32>
  %i64_cta = weft.atomic_cas release cta %p64, %c64, %v64 : !weft.ptr<i64>
  %i64_gpu = weft.atomic_cas release gpu %p64, %c64, %v64 : !weft.ptr<i64>
  %i64_sys = weft.atomic_cas release sys %p64, %c64, %v64 : !weft.ptr<i64>
  return
}

// CHECK-LABEL: .entry cas_acq_rel(
// CHECK:       atom.acq_rel.cta.global.cas.b32 
// CHECK:       atom.acq_rel.gpu.global.cas.b32 
// CHECK:       atom.acq_rel.sys.global.cas.b32 
// CHECK:       atom.acq_rel.cta.global.cas.b64 
// CHECK:       atom.acq_rel.gpu.global.cas.b64 
// CHECK:       atom.acq_rel.sys.global.cas.b64 
func.func @cas_acq_rel(%p32: !weft.ptr<i32>, %c32: i32, %v32: i32,
                   %p64: !weft.ptr<i64>, %c64: i64, %v64: i64) attributes {weft.kernel} {
  %i32_cta = weft.atomic_cas acq_rel cta %p32, %c32, %v32 : !weft.ptr<i32>
  %i32_gpu = weft.atomic_cas acq_rel gpu %p32, %c32, %v32 : !weft.ptr<i32>
  %i32_sys = weft.atomic_cas acq_rel sys %p32, %c32, %v32 : !weft.ptr<i32>
  %i64_cta = weft.atomic_cas acq_rel cta %p64, %c64, %v64 : !weft.ptr<i64>
  %i64_gpu = weft.atomic_cas acq_rel gpu %p64, %c64, %v64 : !weft.ptr<i64>
  %i64_sys = weft.atomic_cas acq_rel sys %p64, %c64, %v64 : !weft.ptr<i64>
  return
}
