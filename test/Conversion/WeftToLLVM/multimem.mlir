// Multimem ops (docs/memory-model.md, "Multimem"). On NVPTX the lowering
// picks at run time: with WEFT_CTX_MULTICAST in the context's flags
// (offset 8), weft.multicast maps the pointer into the multicast window
// (p - heap_base[rank] + multicast_base, offset 24) and the op is one inline
// PTX multimem instruction; otherwise it is the unicast fallback, a loop over
// every rank's copy through the symmetric heap. AMDGPU and the host have no
// multicast hardware: the fallback only, and weft.multicast is the identity.
//
// RUN: weft-opt %s --weft-lower="target=cuda:90" | FileCheck %s --check-prefixes=CHECK,NVPTX
// RUN: weft-opt %s --weft-lower="target=hip:gfx942" | FileCheck %s --check-prefixes=CHECK,FALLBACK
// RUN: weft-opt %s --weft-lower="target=host" | FileCheck %s --check-prefixes=CHECK,FALLBACK

// ld_reduce: the fallback reads every peer's copy (volatile, i.e. relaxed at
// system scope, since vectors cannot be atomic), accumulates bf16 in f32
// like `.acc::f32` (peer 0 replaces the initial zero), fences once for
// acquire, and rounds back. A relaxed store writes the same value to every
// copy with volatile stores.
// NVPTX-LABEL:    llvm.func @ld_reduce_store(
// FALLBACK-LABEL: @{{(__weft_impl_)?}}ld_reduce_store(
// CHECK-DAG:        %[[ZERO:.*]] = llvm.mlir.zero : vector<2xf32>
// NVPTX:            %[[FLAGS_P:.*]] = llvm.getelementptr %[[CTX:.*]][8] : (!llvm.ptr) -> !llvm.ptr, i8
// NVPTX:            %[[FLAGS:.*]] = llvm.load %[[FLAGS_P]] invariant
// NVPTX:            %[[MC:.*]] = llvm.and %[[FLAGS]], %{{[a-z0-9_]+}} : i32
// NVPTX:            %[[LIVE:.*]] = llvm.icmp "ne" %[[MC]], %{{[a-z0-9_]+}} : i32
// NVPTX:            %[[MCBASE_P:.*]] = llvm.getelementptr %[[CTX]][24] : (!llvm.ptr) -> !llvm.ptr, i8
// NVPTX:            %[[MCBASE:.*]] = llvm.load %[[MCBASE_P]] invariant {alignment = 8 : i64} : !llvm.ptr -> i64
// NVPTX:            %[[OFF:.*]] = llvm.sub %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : i64
// NVPTX:            %[[MAPPED:.*]] = llvm.add %[[OFF]], %[[MCBASE]] : i64
// NVPTX:            %[[CHOSEN:.*]] = llvm.select %[[LIVE]], %[[MAPPED]], %{{[a-z0-9_]+}} : i1, i64
// NVPTX:            %[[MPTR:.*]] = llvm.inttoptr %[[CHOSEN]] : i64 to !llvm.ptr<1>
// The kernel's dependency wait (weft-early-start) follows the mapping, a
// memory side effect between it and the op, which reads the flags again
// (the same invariant parameter, which LLVM merges).
// NVPTX:            llvm.inline_asm has_side_effects "griddepcontrol.wait;"
// NVPTX:            %[[FLAGS_AGAIN:.*]] = llvm.load %[[FLAGS_P]] invariant
// NVPTX:            %[[MC_AGAIN:.*]] = llvm.and %[[FLAGS_AGAIN]], %{{[a-z0-9_]+}} : i32
// NVPTX:            %[[LIVE_AGAIN:.*]] = llvm.icmp "ne" %[[MC_AGAIN]], %{{[a-z0-9_]+}} : i32
// NVPTX:            llvm.cond_br %[[LIVE_AGAIN]], ^[[NVLS:bb[0-9]+]], ^[[UNICAST:bb[0-9]+]]
// NVPTX:          ^[[NVLS]]:
// NVPTX:            llvm.inline_asm has_side_effects "multimem.ld_reduce.acquire.sys.global.add.acc::f32.bf16x2 $0, [$1];", "=r,l,~{memory}"
// NVPTX:            llvm.br ^[[JOIN:bb[0-9]+]](%{{[a-z0-9_]+}} : vector<2xbf16>)
// NVPTX:          ^[[UNICAST]]:
// FALLBACK-NOT:     llvm.inline_asm
// CHECK:            %[[RANKS:.*]] = llvm.load %{{[a-z0-9_]+}} invariant {alignment = 4 : i64} : !llvm.ptr{{(<4>)?}} -> i32
// CHECK:            llvm.br ^[[HEAD:bb[0-9]+]](%{{[a-z0-9_]+}}, %[[ZERO]] : i32, vector<2xf32>)
// CHECK:          ^[[HEAD]](%[[PEER:.*]]: i32, %[[ACC:.*]]: vector<2xf32>):
// CHECK:            %[[MORE:.*]] = llvm.icmp "slt" %[[PEER]], %[[RANKS]] : i32
// CHECK:            llvm.cond_br %[[MORE]], ^[[BODY:bb[0-9]+]], ^[[DONE:bb[0-9]+]](%[[ACC]] : vector<2xf32>)
// CHECK:          ^[[BODY]]:
// CHECK:            %[[REMOTE:.*]] = llvm.inttoptr %{{[a-z0-9_]+}} : i64 to !llvm.ptr{{(<1>)?}}
// CHECK:            %[[V:.*]] = llvm.load volatile %[[REMOTE]] {alignment = 4 : i64} : !llvm.ptr{{(<1>)?}} -> vector<2xbf16>
// CHECK:            %[[WIDE:.*]] = llvm.fpext %[[V]] : vector<2xbf16> to vector<2xf32>
// CHECK:            %[[FIRST:.*]] = llvm.icmp "eq" %[[PEER]], %{{[a-z0-9_]+}} : i32
// CHECK:            %[[SUM:.*]] = llvm.fadd %[[ACC]], %[[WIDE]] : vector<2xf32>
// CHECK:            %[[NEXT:.*]] = llvm.select %[[FIRST]], %[[WIDE]], %[[SUM]] : i1, vector<2xf32>
// CHECK:            llvm.br ^[[HEAD]](%{{[a-z0-9_]+}}, %[[NEXT]] : i32, vector<2xf32>)
// CHECK:          ^[[DONE]](%[[TOTAL:.*]]: vector<2xf32>):
// CHECK-NEXT:       llvm.fence acquire
// CHECK-NEXT:       llvm.fptrunc %[[TOTAL]] : vector<2xf32> to vector<2xbf16>
// NVPTX:            llvm.inline_asm has_side_effects "multimem.st.relaxed.sys.global.bf16x2 [$0], $1;", "l,r,~{memory}"
// CHECK:            llvm.store volatile %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : vector<2xbf16>, !llvm.ptr{{(<1>)?}}
// CHECK-NOT:        llvm.fence
// CHECK:            llvm.return
func.func @ld_reduce_store(%p: !weft.ptr<bf16>) attributes {weft.kernel} {
  %m = weft.multicast %p : !weft.ptr<bf16>
  %r = weft.multimem_ld_reduce add acquire sys %m : !weft.ptr<bf16, multicast> -> vector<2xbf16>
  weft.multimem_store relaxed sys %m, %r : !weft.ptr<bf16, multicast>, vector<2xbf16>
  return
}

// Every store joins the program first, relaxed too: in place (an
// all-reduce storing back into the copies it reduced) a warp running ahead
// would overwrite a copy that a slower warp has yet to read.
// NVPTX-LABEL:    llvm.func @in_place(
// FALLBACK-LABEL: @{{(__weft_impl_)?}}in_place(
// NVPTX:            multimem.ld_reduce.relaxed.sys.global.add.f32
// CHECK:            llvm.load volatile
// NVPTX:            nvvm.barrier0
// NVPTX:            multimem.st.relaxed.sys.global.f32
// CHECK:            llvm.store volatile
func.func @in_place(%p: !weft.ptr<f32>) attributes {weft.kernel} {
  %m = weft.multicast %p : !weft.ptr<f32>
  %r = weft.multimem_ld_reduce add relaxed sys %m : !weft.ptr<f32, multicast> -> f32
  weft.multimem_store relaxed sys %m, %r : !weft.ptr<f32, multicast>, f32
  return
}

// A release store: the program joins and the fallback fences (release, sys)
// before its stores.
// NVPTX-LABEL:    llvm.func @store_release(
// FALLBACK-LABEL: @{{(__weft_impl_)?}}store_release(
// NVPTX:            nvvm.barrier0
// NVPTX:            llvm.inline_asm has_side_effects "multimem.st.release.sys.global.v2.f32 [$0], {$1, $2};", "l,f,f,~{memory}"
// CHECK:            llvm.fence release
// CHECK:            llvm.store volatile %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : vector<2xf32>
func.func @store_release(%p: !weft.ptr<f32>, %v: vector<2xf32>)
    attributes {weft.kernel} {
  %m = weft.multicast %p : !weft.ptr<f32>
  weft.multimem_store release sys %m, %v : !weft.ptr<f32, multicast>, vector<2xf32>
  return
}

// multimem_red runs once per program; its fallback is one atomic RMW per
// peer with the op's order at system scope (inline PTX on NVPTX).
// NVPTX-LABEL:    llvm.func @red(
// FALLBACK-LABEL: @{{(__weft_impl_)?}}red(
// NVPTX:            nvvm.barrier0
// NVPTX:            nvvm.read.ptx.sreg.tid.x
// NVPTX:            llvm.inline_asm has_side_effects "multimem.red.release.sys.global.max.u32 [$0], $1;", "l,r,~{memory}"
// NVPTX:            llvm.inline_asm has_side_effects "atom.release.sys.global.max.u32 $0, [$1], $2;", "=r,l,r,~{memory}"
// FALLBACK:         llvm.atomicrmw umax %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} release : !llvm.ptr{{(<1>)?}}, i32
func.func @red(%p: !weft.ptr<i32>, %v: i32) attributes {weft.kernel} {
  %m = weft.multicast %p : !weft.ptr<i32>
  weft.multimem_red umax release sys %m, %v : !weft.ptr<i32, multicast>, i32
  return
}

// Without multicast hardware the multicast pointer is the pointer itself.
// NVPTX-LABEL:    llvm.func @multicast_identity(
// NVPTX:            llvm.select
// FALLBACK-LABEL: @{{(__weft_impl_)?}}multicast_identity(
// FALLBACK-NOT:     llvm.select
// FALLBACK:         llvm.load volatile %{{[a-z0-9_]+}} {alignment = 4 : i64} : !llvm.ptr{{(<1>)?}} -> f32
func.func @multicast_identity(%p: !weft.ptr<f32>) attributes {weft.kernel} {
  %m = weft.multicast %p : !weft.ptr<f32>
  %r = weft.multimem_ld_reduce add relaxed sys %m : !weft.ptr<f32, multicast> -> f32
  weft.store %p, %r : !weft.ptr<f32>
  return
}
