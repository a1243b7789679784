// The hidden kernel-context argument and what reads it, per target
// (docs/memory-model.md, "Kernel context"). Kernels receive the context by
// value: NVPTX as a byval, grid_constant parameter (it stays in the
// parameter space), AMDGPU as a byref kernarg in the constant address space;
// the host exports a weft_host_kernel_fn wrapper. Functions called from
// kernels take the context pointer as a trailing argument.
//
// RUN: weft-opt %s --weft-lower="target=cuda:90" | FileCheck %s --check-prefixes=CHECK,NVPTX
// RUN: weft-opt %s --weft-lower="target=hip:gfx942" | FileCheck %s --check-prefixes=CHECK,AMDGPU
// RUN: weft-opt %s --weft-lower="target=host" | FileCheck %s --check-prefixes=CHECK,HOST
// RUN: weft-opt %s --weft-lower="target=cuda:90 num-warps=8" | FileCheck %s --check-prefix=WARPS8

// External declarations are another ABI and keep their signature.
// CHECK: llvm.func @external(i32) -> i32

// A device function gets the context pointer (and, on the host, the program
// pointer) after its own arguments; rank is the context field at offset 0.
// CHECK-LABEL:  llvm.func @helper(
// NVPTX-SAME:     %{{[a-z0-9_]+}}: !llvm.ptr<1>, %[[CTX:.*]]: !llvm.ptr) -> i32
// AMDGPU-SAME:    %{{[a-z0-9_]+}}: !llvm.ptr<1>, %[[CTX:.*]]: !llvm.ptr<4>) -> i32
// HOST-SAME:      %{{[a-z0-9_]+}}: !llvm.ptr, %[[CTX:.*]]: !llvm.ptr, %{{[a-z0-9_]+}}: !llvm.ptr) -> i32
// CHECK:          llvm.load %[[CTX]] invariant {alignment = 4 : i64}
func.func private @external(i32) -> i32
func.func @helper(%p: !weft.ptr<i32>) -> i32 {
  %r = weft.rank : i32
  return %r : i32
}

// translate(p, peer) = p - heap_base[rank] + heap_base[peer]: both bases are
// invariant loads from the context argument (heap_base at offset 40), then
// integer arithmetic. Calls pass the caller's context along.
// NVPTX-LABEL: llvm.func @kernel(
// NVPTX-SAME:    %[[P:.*]]: !llvm.ptr<1>, %[[PEER:.*]]: i32,
// NVPTX-SAME:    %[[CTX:.*]]: !llvm.ptr {llvm.align = 8 : i64, llvm.byval = !llvm.struct<(i32, i32, i32, i32, i64, i64, i64, array<128 x i64>, i32, i32, i32, i32, i64)>, nvvm.grid_constant})
// NVPTX-SAME:    attributes {nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>, weft.early_start}
// AMDGPU-LABEL: llvm.func @kernel(
// AMDGPU-SAME:    %[[P:.*]]: !llvm.ptr<1>, %[[PEER:.*]]: i32,
// AMDGPU-SAME:    %[[CTX:.*]]: !llvm.ptr<4> {llvm.align = 8 : i64, llvm.byref = !llvm.struct<(i32, i32, i32, i32, i64, i64, i64, array<128 x i64>, i32, i32, i32, i32, i64)>})
// AMDGPU-SAME:    attributes {rocdl.flat_work_group_size = "256,256", rocdl.kernel}
// HOST-LABEL:  llvm.func internal @__weft_impl_kernel(
// HOST-SAME:     %[[P:.*]]: !llvm.ptr, %[[PEER:.*]]: i32, %[[CTX:.*]]: !llvm.ptr, %[[PROG:.*]]: !llvm.ptr)
// HOST-SAME:     attributes {always_inline}
// CHECK-DAG:     %[[C40:.*]] = llvm.mlir.constant(40 : i64) : i64
// CHECK-DAG:     %[[C8:.*]] = llvm.mlir.constant(8 : i64) : i64
// NVPTX:         llvm.inline_asm has_side_effects "griddepcontrol.wait;", "~{memory}"
// NVPTX-NEXT:    llvm.call @helper(%[[P]], %[[CTX]])
// AMDGPU:        llvm.call @helper(%[[P]], %[[CTX]])
// HOST:          llvm.call @helper(%[[P]], %[[CTX]], %[[PROG]])
// CHECK:         llvm.call @external(%{{[a-z0-9_]+}}) : (i32) -> i32
// CHECK:         %[[RANK:.*]] = llvm.load %[[CTX]] invariant {alignment = 4 : i64} : !llvm.ptr{{(<4>)?}} -> i32
// CHECK:         %[[RANK64:.*]] = llvm.zext %[[RANK]] : i32 to i64
// CHECK:         %[[ROFF:.*]] = llvm.mul %[[RANK64]], %[[C8]] : i64
// CHECK:         %[[RFIELD:.*]] = llvm.add %[[ROFF]], %[[C40]] : i64
// CHECK:         %[[RADDR:.*]] = llvm.getelementptr %[[CTX]][%[[RFIELD]]]
// CHECK:         %[[SELF:.*]] = llvm.load %[[RADDR]] invariant {alignment = 8 : i64} : !llvm.ptr{{(<4>)?}} -> i64
// CHECK:         %[[ADDR:.*]] = llvm.ptrtoint %[[P]]
// CHECK:         %[[PEER64:.*]] = llvm.zext %[[PEER]] : i32 to i64
// CHECK:         %[[POFF:.*]] = llvm.mul %[[PEER64]], %[[C8]] : i64
// CHECK:         %[[PFIELD:.*]] = llvm.add %[[POFF]], %[[C40]] : i64
// CHECK:         %[[PADDR:.*]] = llvm.getelementptr %[[CTX]][%[[PFIELD]]]
// CHECK:         %[[OTHER:.*]] = llvm.load %[[PADDR]] invariant {alignment = 8 : i64} : !llvm.ptr{{(<4>)?}} -> i64
// CHECK:         %[[OFFSET:.*]] = llvm.sub %[[ADDR]], %[[SELF]] : i64
// CHECK:         %[[MOVED:.*]] = llvm.add %[[OFFSET]], %[[OTHER]] : i64
// CHECK:         %[[REMOTE:.*]] = llvm.inttoptr %[[MOVED]] : i64 to !llvm.ptr{{(<1>)?}}
// CHECK:         llvm.store %{{[a-z0-9_]+}}, %[[REMOTE]]
// CHECK:         llvm.return
// The host entry: weft_host_kernel_fn(void **args, ctx, program); args[i]
// points at the i-th argument's value.
// HOST-LABEL:  llvm.func @kernel(
// HOST-SAME:     %[[ARGS:.*]]: !llvm.ptr, %[[HCTX:.*]]: !llvm.ptr, %[[HPROG:.*]]: !llvm.ptr) {
// HOST:          %[[SLOT0:.*]] = llvm.load %[[ARGS]] : !llvm.ptr -> !llvm.ptr
// HOST:          %[[A0:.*]] = llvm.load %[[SLOT0]] : !llvm.ptr -> !llvm.ptr
// HOST:          %[[SLOT1P:.*]] = llvm.getelementptr %[[ARGS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// HOST:          %[[SLOT1:.*]] = llvm.load %[[SLOT1P]] : !llvm.ptr -> !llvm.ptr
// HOST:          %[[A1:.*]] = llvm.load %[[SLOT1]] : !llvm.ptr -> i32
// HOST:          llvm.call @__weft_impl_kernel(%[[A0]], %[[A1]], %[[HCTX]], %[[HPROG]])
// WARPS8-LABEL: llvm.func @kernel(
// WARPS8-SAME:    nvvm.maxntid = array<i32: 256, 1, 1>
func.func @kernel(%p: !weft.ptr<i32>, %peer: i32) attributes {weft.kernel} {
  %r = func.call @helper(%p) : (!weft.ptr<i32>) -> i32
  %e = func.call @external(%r) : (i32) -> i32
  %q = weft.translate %p, %peer : !weft.ptr<i32>
  weft.store %q, %e : !weft.ptr<i32>
  return
}

// Program ids and counts: NVVM special registers; the ROCDL workgroup id
// and ceil(grid_size / workgroup_size) from the HSA dispatch packet (the
// ROCDL grid-dim ops call into device libraries weft does not link); on the
// host, weft_host_program fields (id[3] at 0, num[3] at 12).
// NVPTX-LABEL:  llvm.func @ids(
// AMDGPU-LABEL: llvm.func @ids(
// HOST-LABEL:   llvm.func internal @__weft_impl_ids(
// NVPTX-DAG:      nvvm.read.ptx.sreg.ctaid.x : i32
// NVPTX-DAG:      nvvm.read.ptx.sreg.ctaid.y : i32
// NVPTX-DAG:      nvvm.read.ptx.sreg.ctaid.z : i32
// NVPTX-DAG:      nvvm.read.ptx.sreg.nctaid.x : i32
// NVPTX-DAG:      nvvm.read.ptx.sreg.nctaid.y : i32
// NVPTX-DAG:      nvvm.read.ptx.sreg.nctaid.z : i32
// AMDGPU-DAG:     rocdl.workgroup.id.x : i32
// AMDGPU-DAG:     rocdl.workgroup.id.y : i32
// AMDGPU-DAG:     rocdl.workgroup.id.z : i32
// AMDGPU-DAG:     %[[PACKET:.*]] = llvm.call_intrinsic "llvm.amdgcn.dispatch.ptr"() : () -> !llvm.ptr<4>
// AMDGPU-DAG:     llvm.getelementptr %[[PACKET]][4] : (!llvm.ptr<4>) -> !llvm.ptr<4>, i8
// AMDGPU-DAG:     llvm.getelementptr %[[PACKET]][12] : (!llvm.ptr<4>) -> !llvm.ptr<4>, i8
// AMDGPU-DAG:     llvm.udiv
// HOST-SAME:      %[[PROG:[^:]*]]: !llvm.ptr) attributes {always_inline}
// HOST-DAG:       llvm.load %[[PROG]] invariant {alignment = 4 : i64} : !llvm.ptr -> i32
// HOST-DAG:       llvm.getelementptr %[[PROG]][4] : (!llvm.ptr) -> !llvm.ptr, i8
// HOST-DAG:       llvm.getelementptr %[[PROG]][8] : (!llvm.ptr) -> !llvm.ptr, i8
// HOST-DAG:       llvm.getelementptr %[[PROG]][12] : (!llvm.ptr) -> !llvm.ptr, i8
// HOST-DAG:       llvm.getelementptr %[[PROG]][16] : (!llvm.ptr) -> !llvm.ptr, i8
// HOST-DAG:       llvm.getelementptr %[[PROG]][20] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK:          llvm.return
func.func @ids(%out: !weft.ptr<i32>) attributes {weft.kernel} {
  %x = weft.program_id x : i32
  %y = weft.program_id y : i32
  %z = weft.program_id z : i32
  %nx = weft.num_programs x : i32
  %ny = weft.num_programs y : i32
  %nz = weft.num_programs z : i32
  %a = arith.addi %x, %y : i32
  %b = arith.addi %z, %nx : i32
  %c = arith.addi %ny, %nz : i32
  %d = arith.addi %a, %b : i32
  %e = arith.addi %c, %d : i32
  weft.store %out, %e : !weft.ptr<i32>
  return
}
