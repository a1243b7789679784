// The kernel ABI on sm_90: the runtime appends the weft_kernel_context
// (include/weft/abi.h, 64 + 8 * WEFT_MAX_RANKS = 1088 bytes) as the last,
// by-value kernel parameter. `nvvm.grid_constant` keeps it in the parameter
// space: rank, num_ranks and the heap bases are `ld.param`, so a peer
// translation is register arithmetic and never a global-memory load of a
// base table (docs/memory-model.md, "Kernel context").
//
// RUN: weft-compile %s --target=cuda:90 --emit=ptx -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: weft-compile %s --target=cuda:90 --emit=ptx --num-warps=8 -o %t.8.ptx
// RUN: FileCheck %s --check-prefix=WARPS8 < %t.8.ptx
// RUN: %ptxas %t.ptx %t.8.ptx

// translate(p, peer) = p - heap_base[rank] + heap_base[peer], with both
// bases read from the parameter space (heap_base is at offset 40).
// CHECK-LABEL: .entry translate_load(
// CHECK:       .param .align 8 .b8 translate_load_param_2[1088]
// CHECK:       .maxntid 128, 1, 1
// CHECK-NOT:   ld.global
// CHECK-DAG:   ld.param.b32 [[RANK:%r[0-9]+]], [translate_load_param_2];
// CHECK-DAG:   ld.param.b64 [[SELF:%rd[0-9]+]], [{{%rd[0-9]+}}+40];
// CHECK-DAG:   ld.param.b64 [[OTHER:%rd[0-9]+]], [{{%rd[0-9]+}}+40];
// CHECK-NOT:   ld.global
// CHECK:       sub.s64 [[OFFSET:%rd[0-9]+]], {{%rd[0-9]+}}, [[SELF]];
// CHECK-NEXT:  add.s64 [[REMOTE:%rd[0-9]+]], [[OFFSET]], [[OTHER]];
// Touching no memory, the translation runs before the kernel waits for the
// one ahead of it (weft-early-start).
// CHECK-NEXT:  // begin inline asm
// CHECK-NEXT:  griddepcontrol.wait;
// CHECK-NEXT:  // end inline asm
// CHECK-NEXT:  ld.global.b32 {{%r[0-9]+}}, [[[REMOTE]]];
// WARPS8-LABEL: .entry translate_load(
// WARPS8:       .maxntid 256, 1, 1
func.func @translate_load(%p: !weft.ptr<f32>, %peer: i32)
    attributes {weft.kernel} {
  %q = weft.translate %p, %peer : !weft.ptr<f32>
  %v = weft.load %q : !weft.ptr<f32>
  weft.store %p, %v : !weft.ptr<f32>
  return
}

// A translation inside a loop over peers: `p - heap_base[rank]` is loop
// invariant and hoisted; each iteration only reads heap_base[peer] from the
// parameter space and adds it.
// CHECK-LABEL: .entry translate_in_loop(
// CHECK-NOT:   ld.global
// CHECK:       ld.param.b64 [[SELF:%rd[0-9]+]], [{{%rd[0-9]+}}+40];
// CHECK-NEXT:  sub.s64 [[OFFSET:%rd[0-9]+]], {{%rd[0-9]+}}, [[SELF]];
// CHECK-NOT:   ld.global
// CHECK:       [[LOOP:\$L__BB[0-9_]+]]:
// CHECK-NOT:   ld.global
// CHECK:       ld.param.b64 [[OTHER:%rd[0-9]+]], [{{%rd[0-9]+(\+-?[0-9]+)?}}];
// CHECK-NEXT:  add.s64 [[REMOTE:%rd[0-9]+]], [[OFFSET]], [[OTHER]];
// CHECK-NEXT:  st.global.b32 [[[REMOTE]]], {{%r[0-9]+}};
// CHECK-NOT:   ld.global
// CHECK:       ret;
func.func @translate_in_loop(%p: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %n = weft.num_ranks : i32
  scf.for %peer = %c0 to %n step %c1 : i32 {
    %q = weft.translate %p, %peer : !weft.ptr<i32>
    weft.store %q, %v : !weft.ptr<i32>
  }
  return
}

// Program ids and counts are the CTA id and grid size; rank and num_ranks
// are the context fields at offsets 0 and 4 (read together).
// CHECK-LABEL: .entry queries(
// CHECK-DAG:   mov.u32 {{%r[0-9]+}}, %ctaid.x;
// CHECK-DAG:   mov.u32 {{%r[0-9]+}}, %ctaid.y;
// CHECK-DAG:   mov.u32 {{%r[0-9]+}}, %ctaid.z;
// CHECK-DAG:   mov.u32 {{%r[0-9]+}}, %nctaid.x;
// CHECK-DAG:   mov.u32 {{%r[0-9]+}}, %nctaid.y;
// CHECK-DAG:   mov.u32 {{%r[0-9]+}}, %nctaid.z;
// CHECK-DAG:   ld.param.v2.b32 {{.*}}, [queries_param_1];
// CHECK:       ret;
func.func @queries(%out: !weft.ptr<i32>) attributes {weft.kernel} {
  %x = weft.program_id x : i32
  %y = weft.program_id y : i32
  %z = weft.program_id z : i32
  %nx = weft.num_programs x : i32
  %ny = weft.num_programs y : i32
  %nz = weft.num_programs z : i32
  %r = weft.rank : i32
  %n = weft.num_ranks : i32
  %o1 = weft.addptr %out, %r : !weft.ptr<i32>, i32
  %o2 = weft.addptr %o1, %n : !weft.ptr<i32>, i32
  %a = arith.addi %x, %y : i32
  %b = arith.addi %z, %nx : i32
  %c = arith.addi %ny, %nz : i32
  %d = arith.addi %a, %b : i32
  %e = arith.addi %c, %d : i32
  weft.store %o2, %e : !weft.ptr<i32>
  return
}
