// weft.atomic_rmw: every kind x order x scope, then every element type.
// LLVM 22's NVPTX backend drops the ordering and scope of `atomicrmw` (it
// prints a relaxed, gpu-scoped `atom.global.<op>`), so weft emits inline PTX
// `atom.<sem>.<scope>.global.<op>.<type>` (docs/memory-model.md). Signed
// kinds use .s, unsigned and add .u, bitwise and exchange .b; 16-bit float
// additions exist only as `.noftz`.
//
// RUN: weft-compile %s --target=cuda:90 --emit=ptx -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas %t.ptx

// CHECK-LABEL: .entry rmw_add(
// CHECK:       atom.relaxed.cta.global.add.u32 
// CHECK:       atom.relaxed.gpu.global.add.u32 
// CHECK:       atom.relaxed.sys.global.add.u32 
// CHECK:       atom.acquire.cta.global.add.u32 
// CHECK:       atom.acquire.gpu.global.add.u32 
// CHECK:       atom.acquire.sys.global.add.u32 
// CHECK:       atom.release.cta.global.add.u32 
// CHECK:       atom.release.gpu.global.add.u32 
// CHECK:       atom.release.sys.global.add.u32 
// CHECK:       atom.acq_rel.cta.global.add.u32 
// CHECK:       atom.acq_rel.gpu.global.add.u32 
// CHECK:       atom.acq_rel.sys.global.add.u32 
func.func @rmw_add(%p: !weft.ptr<i32>, %v: i32) attributes {weft.kernel} {
  %relaxed_cta = weft.atomic_rmw add relaxed cta %p, %v : !weft.ptr<i32>
  %relaxed_gpu = weft.atomic_rmw add relaxed gpu %p, %v : !weft.ptr<i32>
  %relaxed_sys = weft.atomic_rmw add relaxed sys %p, %v : !weft.ptr<i32>
  %acquire_cta = weft.atomic_rmw add acquire cta %p, %v : !weft.ptr<i32>
  %acquire_gpu = weft.atomic_rmw add acquire gpu %p, %v : !weft.ptr<i32>
  %acquire_sys = weft.atomic_rmw add acquire sys %p, %v : !weft.ptr<i32>
  %release_cta = weft.atomic_rmw add release cta %p, %v : !weft.ptr<i32>
  %release_gpu = weft.atomic_rmw add release gpu %p, %v : !weft.ptr<i32>
  %release_sys = weft.atomic_rmw add release sys %p, %v : !weft.ptr<i32>
  %acq_rel_cta = weft.atomic_rmw add acq_rel cta %p, %v : !weft.ptr<i32>
  %acq_rel_gpu = weft.atomic_rmw add acq_rel gpu %p, %v : !weft.ptr<i32>
  %acq_rel_sys = weft.atomic_rmw add acq_rel sys %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: .entry rmw_fadd(
// CHECK:       atom.relaxed.cta.global.add.f32 
// CHECK:       atom.relaxed.gpu.global.add.f32 
// CHECK:       atom.relaxed.sys.global.add.f32 
// CHECK:       atom.acquire.cta.global.add.f32 
// CHECK:       atom.acquire.gpu.global.add.f32 
// CHECK:       atom.acquire.sys.global.add.f32 
// CHECK:       atom.release.cta.global.add.f32 
// CHECK:       atom.release.gpu.global.add.f32 
// CHECK:       atom.release.sys.global.add.f32 
// CHECK:       atom.acq_rel.cta.global.add.f32 
// CHECK:       atom.acq_rel.gpu.global.add.f32 
// CHECK:       atom.acq_rel.sys.global.add.f32 
func.func @rmw_fadd(%p: !weft.ptr<f32>, %v: f32) attributes {weft.kernel} {
  %relaxed_cta = weft.atomic_rmw fadd relaxed cta %p, %v : !weft.ptr<f32>
  %relaxed_gpu = weft.atomic_rmw fadd relaxed gpu %p, %v : !weft.ptr<f32>
  %relaxed_sys = weft.atomic_rmw fadd relaxed sys %p, %v : !weft.ptr<f32>
  %acquire_cta = weft.atomic_rmw fadd acquire cta %p, %v : !weft.ptr<f32>
  %acquire_gpu = weft.atomic_rmw fadd acquire gpu %p, %v : !weft.ptr<f32>
  %acquire_sys = weft.atomic_rmw fadd acquire sys %p, %v : !weft.ptr<f32>
  %release_cta = weft.atomic_rmw fadd release cta %p, %v : !weft.ptr<f32>
  %release_gpu = weft.atomic_rmw fadd release gpu %p, %v : !weft.ptr<f32>
  %release_sys = weft.atomic_rmw fadd release sys %p, %v : !weft.ptr<f32>
  %acq_rel_cta = weft.atomic_rmw fadd acq_rel cta %p, %v : !weft.ptr<f32>
  %acq_rel_gpu = weft.atomic_rmw fadd acq_rel gpu %p, %v : !weft.ptr<f32>
  %acq_rel_sys = weft.atomic_rmw fadd acq_rel sys %p, %v : !weft.ptr<f32>
  return
}

// CHECK-LABEL: .entry rmw_max(
// CHECK:       atom.relaxed.cta.global.max.s32 
// CHECK:       atom.relaxed.gpu.global.max.s32 
// CHECK:       atom.relaxed.sys.global.max.s32 
// CHECK:       atom.acquire.cta.global.max.s32 
// CHECK:       atom.acquire.gpu.global.max.s32 
// CHECK:       atom.acquire.sys.global.max.s32 
// CHECK:       atom.release.cta.global.max.s32 
// CHECK:       atom.release.gpu.global.max.s32 
// CHECK:       atom.release.sys.global.max.s32 
// CHECK:       atom.acq_rel.cta.global.max.s32 
// CHECK:       atom.acq_rel.gpu.global.max.s32 
// CHECK:       atom.acq_rel.sys.global.max.s32 
func.func @rmw_max(%p: !weft.ptr<i32>, %v: i32) attributes {weft.kernel} {
  %relaxed_cta = weft.atomic_rmw max relaxed cta %p, %v : !weft.ptr<i32>
  %relaxed_gpu = weft.atomic_rmw max relaxed gpu %p, %v : !weft.ptr<i32>
  %relaxed_sys = weft.atomic_rmw max relaxed sys %p, %v : !weft.ptr<i32>
  %acquire_cta = weft.atomic_rmw max acquire cta %p, %v : !weft.ptr<i32>
  %acquire_gpu = weft.atomic_rmw max acquire gpu %p, %v : !weft.ptr<i32>
  %acquire_sys = weft.atomic_rmw max acquire sys %p, %v : !weft.ptr<i32>
  %release_cta = weft.atomic_rmw max release cta %p, %v : !weft.ptr<i32>
  %release_gpu = weft.atomic_rmw max release gpu %p, %v : !weft.ptr<i32>
  %release_sys = weft.atomic_rmw max release sys %p, %v : !weft.ptr<i32>
  %acq_rel_cta = weft.atomic_rmw max acq_rel cta %p, %v : !weft.ptr<i32>
  %acq_rel_gpu = weft.atomic_rmw max acq_rel gpu %p, %v : !weft.ptr<i32>
  %acq_rel_sys = weft.atomic_rmw max acq_rel sys %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: .entry rmw_min(
// CHECK:       atom.relaxed.cta.global.min.s32 
// CHECK:       atom.relaxed.gpu.global.min.s32 
// CHECK:       atom.relaxed.sys.global.min.s32 
// CHECK:       atom.acquire.cta.global.min.s32 
// CHECK:       atom.acquire.gpu.global.min.s32 
// CHECK:       atom.acquire.sys.global.min.s32 
// CHECK:       atom.release.cta.global.min.s32 
// CHECK:       atom.release.gpu.global.min.s32 
// CHECK:       atom.release.sys.global.min.s32 
// CHECK:       atom.acq_rel.cta.global.min.s32 
// CHECK:       atom.acq_rel.gpu.global.min.s32 
// CHECK:       atom.acq_rel.sys.global.min.s32 
func.func @rmw_min(%p: !weft.ptr<i32>, %v: i32) attributes {weft.kernel} {
  %relaxed_cta = weft.atomic_rmw min relaxed cta %p, %v : !weft.ptr<i32>
  %relaxed_gpu = weft.atomic_rmw min relaxed gpu %p, %v : !weft.ptr<i32>
  %relaxed_sys = weft.atomic_rmw min relaxed sys %p, %v : !weft.ptr<i32>
  %acquire_cta = weft.atomic_rmw min acquire cta %p, %v : !weft.ptr<i32>
  %acquire_gpu = weft.atomic_rmw min acquire gpu %p, %v : !weft.ptr<i32>
  %acquire_sys = weft.atomic_rmw min acquire sys %p, %v : !weft.ptr<i32>
  %release_cta = weft.atomic_rmw min release cta %p, %v : !weft.ptr<i32>
  %release_gpu = weft.atomic_rmw min release gpu %p, %v : !weft.ptr<i32>
  %release_sys = weft.atomic_rmw min release sys %p, %v : !weft.ptr<i32>
  %acq_rel_cta = weft.atomic_rmw min acq_rel cta %p, %v : !weft.ptr<i32>
  %acq_rel_gpu = weft.atomic_rmw min acq_rel gpu %p, %v : !weft.ptr<i32>
  %acq_rel_sys = weft.atomic_rmw min acq_rel sys %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: .entry rmw_umax(
// CHECK:       atom.relaxed.cta.global.max.u32 
// CHECK:       atom.relaxed.gpu.global.max.u32 
// CHECK:       atom.relaxed.sys.global.max.u32 
// CHECK:       atom.acquire.cta.global.max.u32 
// CHECK:       atom.acquire.gpu.global.max.u32 
// CHECK:       atom.acquire.sys.global.max.u32 
// CHECK:       atom.release.cta.global.max.u32 
// CHECK:       atom.release.gpu.global.max.u32 
// CHECK:       atom.release.sys.global.max.u32 
// CHECK:       atom.acq_rel.cta.global.max.u32 
// CHECK:       atom.acq_rel.gpu.global.max.u32 
// CHECK:       atom.acq_rel.sys.global.max.u32 
func.func @rmw_umax(%p: !weft.ptr<i32>, %v: i32) attributes {weft.kernel} {
  %relaxed_cta = weft.atomic_rmw umax relaxed cta %p, %v : !weft.ptr<i32>
  %relaxed_gpu = weft.atomic_rmw umax relaxed gpu %p, %v : !weft.ptr<i32>
  %relaxed_sys = weft.atomic_rmw umax relaxed sys %p, %v : !weft.ptr<i32>
  %acquire_cta = weft.atomic_rmw umax acquire cta %p, %v : !weft.ptr<i32>
  %acquire_gpu = weft.atomic_rmw umax acquire gpu %p, %v : !weft.ptr<i32>
  %acquire_sys = weft.atomic_rmw umax acquire sys %p, %v : !weft.ptr<i32>
  %release_cta = weft.atomic_rmw umax release cta %p, %v : !weft.ptr<i32>
  %release_gpu = weft.atomic_rmw umax release gpu %p, %v : !weft.ptr<i32>
  %release_sys = weft.atomic_rmw umax release sys %p, %v : !weft.ptr<i32>
  %acq_rel_cta = weft.atomic_rmw umax acq_rel cta %p, %v : !weft.ptr<i32>
  %acq_rel_gpu = weft.atomic_rmw umax acq_rel gpu %p, %v : !weft.ptr<i32>
  %acq_rel_sys = weft.atomic_rmw umax acq_rel sys %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: .entry rmw_umin(
// CHECK:       atom.relaxed.cta.global.min.u32 
// CHECK:       atom.relaxed.gpu.global.min.u32 
// CHECK:       atom.relaxed.sys.global.min.u32 
// CHECK:       atom.acquire.cta.global.min.u32 
// CHECK:       atom.acquire.gpu.global.min.u32 
// CHECK:       atom.acquire.sys.global.min.u32 
// CHECK:       atom.release.cta.global.min.u32 
// CHECK:       atom.release.gpu.global.min.u32 
// CHECK:       atom.release.sys.global.min.u32 
// CHECK:       atom.acq_rel.cta.global.min.u32 
// CHECK:       atom.acq_rel.gpu.global.min.u32 
// CHECK:       atom.acq_rel.sys.global.min.u32 
func.func @rmw_umin(%p: !weft.ptr<i32>, %v: i32) attributes {weft.kernel} {
  %relaxed_cta = weft.atomic_rmw umin relaxed cta %p, %v : !weft.ptr<i32>
  %relaxed_gpu = weft.atomic_rmw umin relaxed gpu %p, %v : !weft.ptr<i32>
  %relaxed_sys = weft.atomic_rmw umin relaxed sys %p, %v : !weft.ptr<i32>
  %acquire_cta = weft.atomic_rmw umin acquire cta %p, %v : !weft.ptr<i32>
  %acquire_gpu = weft.atomic_rmw umin acquire gpu %p, %v : !weft.ptr<i32>
  %acquire_sys = weft.atomic_rmw umin acquire sys %p, %v : !weft.ptr<i32>
  %release_cta = weft.atomic_rmw umin release cta %p, %v : !weft.ptr<i32>
  %release_gpu = weft.atomic_rmw umin release gpu %p, %v : !weft.ptr<i32>
  %release_sys = weft.atomic_rmw umin release sys %p, %v : !weft.ptr<i32>
  %acq_rel_cta = weft.atomic_rmw umin acq_rel cta %p, %v : !weft.ptr<i32>
  %acq_rel_gpu = weft.atomic_rmw umin acq_rel gpu %p, %v : !weft.ptr<i32>
  %acq_rel_sys = weft.atomic_rmw umin acq_rel sys %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: .entry rmw_and(
// CHECK:       atom.relaxed.cta.global.and.b32 
// CHECK:       atom.relaxed.gpu.global.and.b32 
// CHECK:       atom.relaxed.sys.global.and.b32 
// CHECK:       atom.acquire.cta.global.and.b32 
// CHECK:       atom.acquire.gpu.global.and.b32 
// CHECK:       atom.acquire.sys.global.and.b32 
// CHECK:       atom.release.cta.global.and.b32 
// CHECK:       atom.release.gpu.global.and.b32 
// CHECK:       atom.release.sys.global.and.b32 
// CHECK:       atom.acq_rel.cta.global.and.b32 
// CHECK:       atom.acq_rel.gpu.global.and.b32 
// CHECK:       atom.acq_rel.sys.global.and.b32 
func.func @rmw_and(%p: !weft.ptr<i32>, %v: i32) attributes {weft.kernel} {
  %relaxed_cta = weft.atomic_rmw and relaxed cta %p, %v : !weft.ptr<i32>
  %relaxed_gpu = weft.atomic_rmw and relaxed gpu %p, %v : !weft.ptr<i32>
  %relaxed_sys = weft.atomic_rmw and relaxed sys %p, %v : !weft.ptr<i32>
  %acquire_cta = weft.atomic_rmw and acquire cta %p, %v : !weft.ptr<i32>
  %acquire_gpu = weft.atomic_rmw and acquire gpu %p, %v : !weft.ptr<i32>
  %acquire_sys = weft.atomic_rmw and acquire sys %p, %v : !weft.ptr<i32>
  %release_cta = weft.atomic_rmw and release cta %p, %v : !weft.ptr<i32>
  %release_gpu = weft.atomic_rmw and release gpu %p, %v : !weft.ptr<i32>
  %release_sys = weft.atomic_rmw and release sys %p, %v : !weft.ptr<i32>
  %acq_rel_cta = weft.atomic_rmw and acq_rel cta %p, %v : !weft.ptr<i32>
  %acq_rel_gpu = weft.atomic_rmw and acq_rel gpu %p, %v : !weft.ptr<i32>
  %acq_rel_sys = weft.atomic_rmw and acq_rel sys %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: .entry rmw_or(
// CHECK:       atom.relaxed.cta.global.or.b32 
// CHECK:       atom.relaxed.gpu.global.or.b32 
// CHECK:       atom.relaxed.sys.global.or.b32 
// CHECK:       atom.acquire.cta.global.or.b32 
// CHECK:       atom.acquire.gpu.global.or.b32 
// CHECK:       atom.acquire.sys.global.or.b32 
// CHECK:       atom.release.cta.global.or.b32 
// CHECK:       atom.release.gpu.global.or.b32 
// CHECK:       atom.release.sys.global.or.b32 
// CHECK:       atom.acq_rel.cta.global.or.b32 
// CHECK:       atom.acq_rel.gpu.global.or.b32 
// CHECK:       atom.acq_rel.sys.global.or.b32 
func.func @rmw_or(%p: !weft.ptr<i32>, %v: i32) attributes {weft.kernel} {
  %relaxed_cta = weft.atomic_rmw or relaxed cta %p, %v : !weft.ptr<i32>
  %relaxed_gpu = weft.atomic_rmw or relaxed gpu %p, %v : !weft.ptr<i32>
  %relaxed_sys = weft.atomic_rmw or relaxed sys %p, %v : !weft.ptr<i32>
  %acquire_cta = weft.atomic_rmw or acquire cta %p, %v : !weft.ptr<i32>
  %acquire_gpu = weft.atomic_rmw or acquire gpu %p, %v : !weft.ptr<i32>
  %acquire_sys = weft.atomic_rmw or acquire sys %p, %v : !weft.ptr<i32>
  %release_cta = weft.atomic_rmw or release cta %p, %v : !weft.ptr<i32>
  %release_gpu = weft.atomic_rmw or release gpu %p, %v : !weft.ptr<i32>
  %release_sys = weft.atomic_rmw or release sys %p, %v : !weft.ptr<i32>
  %acq_rel_cta = weft.atomic_rmw or acq_rel cta %p, %v : !weft.ptr<i32>
  %acq_rel_gpu = weft.atomic_rmw or acq_rel gpu %p, %v : !weft.ptr<i32>
  %acq_rel_sys = weft.atomic_rmw or acq_rel sys %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: .entry rmw_xor(
// CHECK:       atom.relaxed.cta.global.xor.b32 
// CHECK:       atom.relaxed.gpu.global.xor.b32 
// CHECK:       atom.relaxed.sys.global.xor.b32 
// CHECK:       atom.acquire.cta.global.xor.b32 
// CHECK:       atom.acquire.gpu.global.xor.b32 
// CHECK:       atom.acquire.sys.global.xor.b32 
// CHECK:       atom.release.cta.global.xor.b32 
// CHECK:       atom.release.gpu.global.xor.b32 
// CHECK:       atom.release.sys.global.xor.b32 
// CHECK:       atom.acq_rel.cta.global.xor.b32 
// CHECK:       atom.acq_rel.gpu.global.xor.b32 
// CHECK:       atom.acq_rel.sys.global.xor.b32 
func.func @rmw_xor(%p: !weft.ptr<i32>, %v: i32) attributes {weft.kernel} {
  %relaxed_cta = weft.atomic_rmw xor relaxed cta %p, %v : !weft.ptr<i32>
  %relaxed_gpu = weft.atomic_rmw xor relaxed gpu %p, %v : !weft.ptr<i32>
  %relaxed_sys = weft.atomic_rmw xor relaxed sys %p, %v : !weft.ptr<i32>
  %acquire_cta = weft.atomic_rmw xor acquire cta %p, %v : !weft.ptr<i32>
  %acquire_gpu = weft.atomic_rmw xor acquire gpu %p, %v : !weft.ptr<i32>
  %acquire_sys = weft.atomic_rmw xor acquire sys %p, %v : !weft.ptr<i32>
  %release_cta = weft.atomic_rmw xor release cta %p, %v : !weft.ptr<i32>
  %release_gpu = weft.atomic_rmw xor release gpu %p, %v : !weft.ptr<i32>
  %release_sys = weft.atomic_rmw xor release sys %p, %v : !weft.ptr<i32>
  %acq_rel_cta = weft.atomic_rmw xor acq_rel cta %p, %v : !weft.ptr<i32>
  %acq_rel_gpu = weft.atomic_rmw xor acq_rel gpu %p, %v : !weft.ptr<i32>
  %acq_rel_sys = weft.atomic_rmw xor acq_rel sys %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: .entry rmw_xchg(
// CHECK:       atom.relaxed.cta.global.exch.b32 
// CHECK:       atom.relaxed.gpu.global.exch.b32 
// CHECK:       atom.relaxed.sys.global.exch.b32 
// CHECK:       atom.acquire.cta.global.exch.b32 
// CHECK:       atom.acquire.gpu.global.exch.b32 
// CHECK:       atom.acquire.sys.global.exch.b32 
// CHECK:       atom.release.cta.global.exch.b32 
// CHECK:       atom.release.gpu.global.exch.b32 
// CHECK:       atom.release.sys.global.exch.b32 
// CHECK:       atom.acq_rel.cta.global.exch.b32 
// CHECK:       atom.acq_rel.gpu.global.exch.b32 
// CHECK:       atom.acq_rel.sys.global.exch.b32 
func.func @rmw_xchg(%p: !weft.ptr<i32>, %v: i32) attributes {weft.kernel} {
  %relaxed_cta = weft.atomic_rmw xchg relaxed cta %p, %v : !weft.ptr<i32>
  %relaxed_gpu = weft.atomic_rmw xchg relaxed gpu %p, %v : !weft.ptr<i32>
  %relaxed_sys = weft.atomic_rmw xchg relaxed sys %p, %v : !weft.ptr<i32>
  %acquire_cta = weft.atomic_rmw xchg acquire cta %p, %v : !weft.ptr<i32>
  %acquire_gpu = weft.atomic_rmw xchg acquire gpu %p, %v : !weft.ptr<i32>
  %acquire_sys = weft.atomic_rmw xchg acquire sys %p, %v : !weft.ptr<i32>
  %release_cta = weft.atomic_rmw xchg release cta %p, %v : !weft.ptr<i32>
  %release_gpu = weft.atomic_rmw xchg release gpu %p, %v : !weft.ptr<i32>
  %release_sys = weft.atomic_rmw xchg release sys %p, %v : !weft.ptr<i32>
  %acq_rel_cta = weft.atomic_rmw xchg acq_rel cta %p, %v : !weft.ptr<i32>
  %acq_rel_gpu = weft.atomic_rmw xchg acq_rel gpu %p, %v : !weft.ptr<i32>
  %acq_rel_sys = weft.atomic_rmw xchg acq_rel sys %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: .entry rmw_types(
// CHECK:       atom.acq_rel.gpu.global.add.u64 
// CHECK:       atom.acq_rel.gpu.global.add.noftz.f16 
// CHECK:       atom.acq_rel.gpu.global.add.noftz.bf16 
// CHECK:       atom.acq_rel.gpu.global.add.f64 
// CHECK:       atom.acq_rel.gpu.global.max.s64 
// CHECK:       atom.acq_rel.gpu.global.min.s64 
// CHECK:       atom.acq_rel.gpu.global.max.u64 
// CHECK:       atom.acq_rel.gpu.global.min.u64 
// CHECK:       atom.acq_rel.gpu.global.and.b64 
// CHECK:       atom.acq_rel.gpu.global.or.b64 
// CHECK:       atom.acq_rel.gpu.global.xor.b64 
// CHECK:       atom.acq_rel.gpu.global.exch.b64 
// CHECK:       atom.acq_rel.gpu.global.exch.b32 
// CHECK:       atom.acq_rel.gpu.global.exch.b64 
func.func @rmw_types(%p_i64: !weft.ptr<i64>, %v_i64: i64,
                 %p_f16: !weft.ptr<f16>, %v_f16: f16,
                 %p_bf16: !weft.ptr<bf16>, %v_bf16: bf16,
                 %p_f64: !weft.ptr<f64>, %v_f64: f64,
                 %p_f32: !weft.ptr<f32>, %v_f32: f32) attributes {weft.kernel} {
  %0 = weft.atomic_rmw add acq_rel gpu %p_i64, %v_i64 : !weft.ptr<i64>
  %1 = weft.atomic_rmw fadd acq_rel gpu %p_f16, %v_f16 : !weft.ptr<f16>
  %2 = weft.atomic_rmw fadd acq_rel gpu %p_bf16, %v_bf16 : !weft.ptr<bf16>
  %3 = weft.atomic_rmw fadd acq_rel gpu %p_f64, %v_f64 : !weft.ptr<f64>
  %4 = weft.atomic_rmw max acq_rel gpu %p_i64, %v_i64 : !weft.ptr<i64>
  %5 = weft.atomic_rmw min acq_rel gpu %p_i64, %v_i64 : !weft.ptr<i64>
  %6 = weft.atomic_rmw umax acq_rel gpu %p_i64, %v_i64 : !weft.ptr<i64>
  %7 = weft.atomic_rmw umin acq_rel gpu %p_i64, %v_i64 : !weft.ptr<i64>
  %8 = weft.atomic_rmw and acq_rel gpu %p_i64, %v_i64 : !weft.ptr<i64>
  %9 = weft.atomic_rmw or acq_rel gpu %p_i64, %v_i64 : !weft.ptr<i64>
  %10 = weft.atomic_rmw xor acq_rel gpu %p_i64, %v_i64 : !weft.ptr<i64>
  %11 = weft.atomic_rmw xchg acq_rel gpu %p_i64, %v_i64 : !weft.ptr<i64>
  %12 = weft.atomic_rmw xchg acq_rel gpu %p_f32, %v_f32 : !weft.ptr<f32>
  %13 = weft.atomic_rmw xchg acq_rel gpu %p_f64, %v_f64 : !weft.ptr<f64>
  return
}

// A scalar atomic runs once per program: the CTA joins (release part),
// thread 0 performs it and broadcasts the old value through shared memory,
// and the CTA joins again (acquire part) before every thread reads it.
// CHECK-LABEL: .entry rmw_once_per_program(
// CHECK:       bar.sync 0;
// CHECK:       mov.u32 [[TID:%r[0-9]+]], %tid.x;
// CHECK:       setp.ne.b32 [[NOT_LEADER:%p[0-9]+]], [[TID]], 0;
// CHECK:       @[[NOT_LEADER]] bra [[JOIN:\$L__BB[0-9_]+]];
// CHECK:       atom.acq_rel.sys.global.add.u64 [[OLD:%rd[0-9]+]], [%rd{{[0-9]+}}], %rd{{[0-9]+}};
// CHECK:       st.shared.b64 [__weft_broadcast{{.*}}], [[OLD]];
// CHECK:       [[JOIN]]:
// CHECK-NEXT:  bar.sync 0;
// CHECK-NEXT:  ld.shared.b64 [[SEEN:%rd[0-9]+]], [__weft_broadcast{{.*}}];
// CHECK-NEXT:  bar.sync 0;
// CHECK:       st.global.b64 [%rd{{[0-9]+}}], [[SEEN]];
func.func @rmw_once_per_program(%p: !weft.ptr<i64>, %v: i64,
                                %out: !weft.ptr<i64>) attributes {weft.kernel} {
  %old = weft.atomic_rmw add acq_rel sys %p, %v : !weft.ptr<i64>
  weft.store %out, %old : !weft.ptr<i64>
  return
}

// A relaxed atomic needs no join before it: only the broadcast barriers.
// CHECK-LABEL: .entry rmw_relaxed_no_release_join(
// CHECK-NOT:   bar.sync
// CHECK:       atom.relaxed.gpu.global.max.u32
// CHECK:       bar.sync 0;
func.func @rmw_relaxed_no_release_join(%p: !weft.ptr<i32>, %v: i32,
                                       %out: !weft.ptr<i32>) attributes {weft.kernel} {
  %old = weft.atomic_rmw umax relaxed gpu %p, %v : !weft.ptr<i32>
  weft.store %out, %old : !weft.ptr<i32>
  return
}

// A masked atomic: masked off, it does not touch memory and yields 0.
// CHECK-LABEL: .entry rmw_masked(
// CHECK:       @%p{{[0-9]+}} bra
// CHECK:       atom.relaxed.gpu.global.add.u32
func.func @rmw_masked(%p: !weft.ptr<i32>, %v: i32, %m: i1,
                      %out: !weft.ptr<i32>) attributes {weft.kernel} {
  %old = weft.atomic_rmw add relaxed gpu %p, %v, mask %m : !weft.ptr<i32>
  weft.store %out, %old : !weft.ptr<i32>
  return
}
