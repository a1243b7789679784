// Loads, stores, fences and atomics in the LLVM dialect: weak is a plain
// access, relaxed is `monotonic`; scopes become the target's syncscopes
// (NVPTX "block"/"device"/system, AMDGPU "workgroup"/"agent"/system, host
// always system). Read-modify-writes are inline PTX on NVPTX, `atomicrmw`
// elsewhere; compare-and-swap is `cmpxchg` everywhere, failing with the
// acquire part of its order. The PTX, AMDGPU and x86 each of these becomes is
// in test/Target/*.
//
// RUN: weft-opt %s --weft-lower="target=cuda:90" | FileCheck %s --check-prefixes=CHECK,NVPTX
// RUN: weft-opt %s --weft-lower="target=hip:gfx942" | FileCheck %s --check-prefixes=CHECK,AMDGPU
// RUN: weft-opt %s --weft-lower="target=host" | FileCheck %s --check-prefixes=CHECK,HOST

// NVPTX-LABEL:  llvm.func @accesses(
// AMDGPU-LABEL: llvm.func @accesses(
// HOST-LABEL:   llvm.func internal @__weft_impl_accesses(
// CHECK:          llvm.load %[[P:[^ ]*]] {alignment = 4 : i64} : !llvm.ptr{{(<1>)?}} -> i32
// NVPTX-NEXT:     llvm.load %[[P]] atomic syncscope("block") monotonic {alignment = 4 : i64}
// AMDGPU-NEXT:    llvm.load %[[P]] atomic syncscope("workgroup") monotonic {alignment = 4 : i64}
// HOST-NEXT:      llvm.load %[[P]] atomic monotonic {alignment = 4 : i64}
// NVPTX-NEXT:     llvm.load %[[P]] atomic syncscope("device") acquire {alignment = 4 : i64}
// AMDGPU-NEXT:    llvm.load %[[P]] atomic syncscope("agent") acquire {alignment = 4 : i64}
// HOST-NEXT:      llvm.load %[[P]] atomic acquire {alignment = 4 : i64}
// CHECK-NEXT:     llvm.load %[[P]] atomic acquire {alignment = 4 : i64}
// CHECK-NEXT:     llvm.store %{{[a-z0-9_]+}}, %[[P]] {alignment = 4 : i64}
// NVPTX-NEXT:     llvm.store %{{[a-z0-9_]+}}, %[[P]] atomic syncscope("device") monotonic {alignment = 4 : i64}
// AMDGPU-NEXT:    llvm.store %{{[a-z0-9_]+}}, %[[P]] atomic syncscope("agent") monotonic {alignment = 4 : i64}
// HOST-NEXT:      llvm.store %{{[a-z0-9_]+}}, %[[P]] atomic monotonic {alignment = 4 : i64}
// The release store joins the program first (a CTA barrier on NVPTX).
// NVPTX-NEXT:     nvvm.barrier0
// AMDGPU-NEXT:    rocdl.barrier
// CHECK-NEXT:     llvm.store %{{[a-z0-9_]+}}, %[[P]] atomic release {alignment = 4 : i64}
// A fence orders the accesses of the whole program: on GPUs every thread
// fences, and the threads join after a fence that acquires and before one
// that releases (both for acq_rel and seq_cst).
// NVPTX-NEXT:     llvm.fence syncscope("block") acquire
// NVPTX-NEXT:     nvvm.barrier0
// NVPTX-NEXT:     nvvm.barrier0
// NVPTX-NEXT:     llvm.fence syncscope("device") release
// NVPTX-NEXT:     nvvm.barrier0
// NVPTX-NEXT:     llvm.fence acq_rel
// NVPTX-NEXT:     nvvm.barrier0
// NVPTX-NEXT:     nvvm.barrier0
// NVPTX-NEXT:     llvm.fence seq_cst
// NVPTX-NEXT:     nvvm.barrier0
// AMDGPU-NEXT:    llvm.fence syncscope("workgroup") acquire
// AMDGPU-NEXT:    rocdl.barrier
// AMDGPU-NEXT:    rocdl.barrier
// AMDGPU-NEXT:    llvm.fence syncscope("agent") release
// AMDGPU-NEXT:    rocdl.barrier
// AMDGPU-NEXT:    llvm.fence acq_rel
// AMDGPU-NEXT:    rocdl.barrier
// AMDGPU-NEXT:    rocdl.barrier
// AMDGPU-NEXT:    llvm.fence seq_cst
// AMDGPU-NEXT:    rocdl.barrier
// HOST-NEXT:      llvm.fence acquire
// HOST-NEXT:      llvm.fence release
// HOST-NEXT:      llvm.fence acq_rel
// HOST-NEXT:      llvm.fence seq_cst
// NVPTX:          llvm.inline_asm has_side_effects "atom.release.gpu.global.add.f32 $0, [$1], $2;", "=f,l,f,~{memory}"
// AMDGPU:         llvm.atomicrmw fadd %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} syncscope("agent") release : !llvm.ptr<1>, f32
// HOST:           llvm.atomicrmw fadd %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} release : !llvm.ptr, f32
// NVPTX:          llvm.cmpxchg %[[P]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} syncscope("block") acq_rel acquire : !llvm.ptr<1>, i32
// AMDGPU:         llvm.cmpxchg %[[P]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} syncscope("workgroup") acq_rel acquire : !llvm.ptr<1>, i32
// HOST:           llvm.cmpxchg %[[P]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} acq_rel acquire : !llvm.ptr, i32
// CHECK:          llvm.cmpxchg %[[P]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} release monotonic
func.func @accesses(%p: !weft.ptr<i32>, %f: !weft.ptr<f32>, %v: i32, %x: f32)
    attributes {weft.kernel} {
  %0 = weft.load %p : !weft.ptr<i32>
  %1 = weft.load relaxed cta %p : !weft.ptr<i32>
  %2 = weft.load acquire gpu %p : !weft.ptr<i32>
  %3 = weft.load acquire sys %p : !weft.ptr<i32>
  weft.store %p, %0 : !weft.ptr<i32>
  weft.store relaxed gpu %p, %1 : !weft.ptr<i32>
  weft.store release sys %p, %2 : !weft.ptr<i32>
  weft.fence acquire cta
  weft.fence release gpu
  weft.fence acq_rel sys
  weft.fence seq_cst sys
  %4 = weft.atomic_rmw fadd release gpu %f, %x : !weft.ptr<f32>
  %5 = weft.atomic_cas acq_rel cta %p, %v, %3 : !weft.ptr<i32>
  %6 = weft.atomic_cas release sys %p, %v, %5 : !weft.ptr<i32>
  return
}

// A scalar atomic on a GPU: once per program, thread 0 performs it, and the
// old value reaches every thread through the shared broadcast slot. acq_rel
// joins before (release part) and after (acquire part); the host has one
// thread per program and calls it directly.
// NVPTX-LABEL:  llvm.func @once_per_program(
// NVPTX:          %[[SLOT:.*]] = llvm.mlir.addressof @__weft_broadcast : !llvm.ptr<3>
// NVPTX:          nvvm.barrier0
// NVPTX-NEXT:     %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// NVPTX-NEXT:     %[[LEADER:.*]] = llvm.icmp "eq" %[[TID]], %{{[a-z0-9_]+}} : i32
// NVPTX-NEXT:     llvm.cond_br %[[LEADER]], ^[[ONE:bb[0-9]+]], ^[[JOIN:bb[0-9]+]]
// NVPTX:        ^[[ONE]]:
// NVPTX-NEXT:     %[[OLD:.*]] = llvm.inline_asm has_side_effects "atom.acq_rel.sys.global.xor.b64 $0, [$1], $2;", "=l,l,l,~{memory}"
// NVPTX-NEXT:     llvm.store %[[OLD]], %[[SLOT]] : i64, !llvm.ptr<3>
// NVPTX:        ^[[JOIN]]:
// NVPTX-NEXT:     nvvm.barrier0
// NVPTX-NEXT:     %[[SEEN:.*]] = llvm.load %[[SLOT]] : !llvm.ptr<3> -> i64
// NVPTX-NEXT:     nvvm.barrier0
// NVPTX-NEXT:     llvm.store %[[SEEN]]
// AMDGPU-LABEL: llvm.func @once_per_program(
// AMDGPU:         rocdl.barrier
// AMDGPU:         rocdl.workitem.id.x
// AMDGPU:         llvm.atomicrmw _xor %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} acq_rel : !llvm.ptr<1>, i64
// AMDGPU:         rocdl.barrier
// AMDGPU-NEXT:    llvm.load %{{[a-z0-9_]+}} : !llvm.ptr<3> -> i64
// AMDGPU-NEXT:    rocdl.barrier
// HOST-LABEL:   llvm.func internal @__weft_impl_once_per_program(
// HOST-NEXT:      %[[OLD:.*]] = llvm.atomicrmw _xor %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} acq_rel : !llvm.ptr, i64
// HOST-NEXT:      llvm.store %[[OLD]]
func.func @once_per_program(%p: !weft.ptr<i64>, %v: i64, %out: !weft.ptr<i64>)
    attributes {weft.kernel} {
  %old = weft.atomic_rmw xor acq_rel sys %p, %v : !weft.ptr<i64>
  weft.store %out, %old : !weft.ptr<i64>
  return
}
