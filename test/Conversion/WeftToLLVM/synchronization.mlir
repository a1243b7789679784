// weft.signal, weft.wait and weft.barrier in the LLVM dialect
// (docs/memory-model.md, "Program-level operations", "Signals and waits",
// "Wait timeouts", "Barrier"). GPU programs elect thread 0, join around it
// with the CTA/workgroup barrier and broadcast results through one shared
// memory slot; host programs are one thread, so all of that folds away.
//
// RUN: weft-opt %s --weft-lower="target=cuda:90" | FileCheck %s --check-prefixes=CHECK,NVPTX
// RUN: weft-opt %s --weft-lower="target=hip:gfx942" | FileCheck %s --check-prefixes=CHECK,AMDGPU
// RUN: weft-opt %s --weft-lower="target=host" | FileCheck %s --check-prefixes=CHECK,HOST

// NVPTX: llvm.mlir.global internal @__weft_broadcast() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<1 x i64>

// A release signal joins the program's threads first, then one thread
// releases; nothing joins after it.
// NVPTX-LABEL:  llvm.func @signal_set_release(
// AMDGPU-LABEL: llvm.func @signal_set_release(
// HOST-LABEL:   llvm.func internal @__weft_impl_signal_set_release(
// NVPTX:          nvvm.barrier0
// NVPTX-NEXT:     %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// NVPTX-NEXT:     %[[LEADER:.*]] = llvm.icmp "eq" %[[TID]], %{{[a-z0-9_]+}} : i32
// NVPTX-NEXT:     llvm.cond_br %[[LEADER]], ^[[ONE:bb[0-9]+]], ^[[DONE:bb[0-9]+]]
// NVPTX:        ^[[ONE]]:
// NVPTX-NEXT:     llvm.store %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} atomic release {alignment = 8 : i64} : i64, !llvm.ptr<1>
// NVPTX:        ^[[DONE]]:
// NVPTX-NEXT:     llvm.return
// AMDGPU:         rocdl.barrier
// AMDGPU-NEXT:    rocdl.workitem.id.x : i32
// AMDGPU:         llvm.store %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} atomic release {alignment = 8 : i64} : i64, !llvm.ptr<1>
// HOST-NOT:       llvm.cond_br
// HOST:           llvm.store %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} atomic release {alignment = 8 : i64} : i64, !llvm.ptr
// HOST-NEXT:      llvm.return
func.func @signal_set_release(%flag: !weft.ptr<i64>, %v: i64)
    attributes {weft.kernel} {
  weft.signal set release sys %flag, %v : !weft.ptr<i64>
  return
}

// A relaxed add at gpu scope: no join; the RMW is inline PTX on NVPTX
// (LLVM 22 would drop its order and scope), an atomicrmw elsewhere.
// NVPTX-LABEL:  llvm.func @signal_add_relaxed(
// AMDGPU-LABEL: llvm.func @signal_add_relaxed(
// HOST-LABEL:   llvm.func internal @__weft_impl_signal_add_relaxed(
// NVPTX-NOT:      nvvm.barrier0
// NVPTX:          llvm.inline_asm has_side_effects "atom.relaxed.gpu.global.add.u32 $0, [$1], $2;", "=r,l,r,~{memory}"
// NVPTX-NOT:      nvvm.barrier0
// AMDGPU-NOT:     rocdl.barrier
// AMDGPU:         llvm.atomicrmw add %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} syncscope("agent") monotonic : !llvm.ptr<1>, i32
// HOST:           llvm.atomicrmw add %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} monotonic : !llvm.ptr, i32
// CHECK:          llvm.return
func.func @signal_add_relaxed(%flag: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  weft.signal add relaxed gpu %flag, %v : !weft.ptr<i32>
  return
}

// A wait: thread 0 polls with relaxed loads, consulting the timeout only
// when the context has one (wait_timeout_ns at offset 32), pauses between
// polls (sched_yield on the host, s_sleep on AMDGPU, a plain spin on NVPTX),
// acquires with one fence after the loop, and broadcasts the value seen;
// the program joins.
// NVPTX-LABEL:  llvm.func @wait_ge_acquire(
// NVPTX-SAME:     %[[FLAG:[^:]*]]: !llvm.ptr<1>, %[[V:[^:]*]]: i64
// NVPTX:          %[[SLOT:.*]] = llvm.mlir.addressof @__weft_broadcast : !llvm.ptr<3>
// NVPTX:          %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// NVPTX:          %[[LEADER:.*]] = llvm.icmp "eq" %[[TID]], %{{[a-z0-9_]+}} : i32
// NVPTX:          llvm.cond_br %[[LEADER]], ^[[START:bb[0-9]+]], ^[[JOIN:bb[0-9]+]]
// NVPTX:        ^[[START]]:
// NVPTX:          %[[TIMEOUT_P:.*]] = llvm.getelementptr %{{[a-z0-9_]+}}[32] : (!llvm.ptr) -> !llvm.ptr, i8
// NVPTX:          %[[TIMEOUT:.*]] = llvm.load %[[TIMEOUT_P]] invariant {alignment = 8 : i64} : !llvm.ptr -> i64
// NVPTX:          %[[T0:.*]] = nvvm.read.ptx.sreg.globaltimer : i64
// NVPTX:          llvm.br ^[[POLL:bb[0-9]+]]
// NVPTX:        ^[[POLL]]:
// NVPTX:          %[[SEEN:.*]] = llvm.load %[[FLAG]] atomic monotonic {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// NVPTX:          %[[OK:.*]] = llvm.icmp "uge" %[[SEEN]], %[[V]] : i64
// NVPTX:          llvm.cond_br %[[OK]], ^[[EXIT:bb[0-9]+]](%[[SEEN]] : i64), ^[[TRY:bb[0-9]+]]
// NVPTX:        ^[[TRY]]:
// NVPTX:          %[[HAS_TIMEOUT:.*]] = llvm.icmp "ne" %[[TIMEOUT]], %{{[a-z0-9_]+}} : i64
// NVPTX:          llvm.cond_br %[[HAS_TIMEOUT]], ^[[TIMED:bb[0-9]+]], ^[[PAUSE:bb[0-9]+]]
// NVPTX:        ^[[TIMED]]:
// NVPTX:          %[[STATUS:.*]] = llvm.load %[[RECORD:.*]] atomic syncscope("device") monotonic {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// NVPTX:          %[[ABORTED:.*]] = llvm.icmp "ne" %[[STATUS]], %{{[a-z0-9_]+}} : i32
// NVPTX:          %[[T1:.*]] = nvvm.read.ptx.sreg.globaltimer : i64
// NVPTX:          %[[ELAPSED:.*]] = llvm.sub %[[T1]], %[[T0]] : i64
// NVPTX:          %[[EXPIRED:.*]] = llvm.icmp "ugt" %[[ELAPSED]], %[[TIMEOUT]] : i64
// NVPTX:          %[[GIVE_UP:.*]] = llvm.or %[[ABORTED]], %[[EXPIRED]] : i1
// NVPTX:          llvm.cond_br %[[GIVE_UP]], ^[[CLAIM:bb[0-9]+]], ^[[PAUSE]]
// NVPTX:        ^[[CLAIM]]:
// NVPTX:          %[[CAS:.*]] = llvm.cmpxchg %[[RECORD]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} syncscope("device") monotonic monotonic : !llvm.ptr<1>, i32
// NVPTX:          %[[WON:.*]] = llvm.extractvalue %[[CAS]][1]
// NVPTX:          llvm.cond_br %[[WON]], ^[[FILL:bb[0-9]+]], ^[[FILLED:bb[0-9]+]]
// NVPTX:        ^[[FILL]]:
// NVPTX-DAG:      llvm.getelementptr %[[RECORD]][20] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
// NVPTX-DAG:      llvm.getelementptr %[[RECORD]][40] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
// NVPTX:        ^[[FILLED]]:
// NVPTX-NEXT:     llvm.br ^[[EXIT]](%[[SEEN]] : i64)
// NVPTX:        ^[[PAUSE]]:
// NVPTX-NEXT:     llvm.br ^[[POLL]]
// NVPTX:        ^[[EXIT]](%[[RESULT:.*]]: i64):
// NVPTX-NEXT:     llvm.fence acquire
// NVPTX-NEXT:     llvm.store %[[RESULT]], %[[SLOT]] : i64, !llvm.ptr<3>
// NVPTX-NEXT:     llvm.br ^[[JOIN]]
// NVPTX:        ^[[JOIN]]:
// NVPTX-NEXT:     nvvm.barrier0
// NVPTX-NEXT:     %[[BCAST:.*]] = llvm.load %[[SLOT]] : !llvm.ptr<3> -> i64
// NVPTX-NEXT:     nvvm.barrier0
// NVPTX-NEXT:     llvm.store %[[BCAST]], %{{[a-z0-9_]+}} {alignment = 8 : i64} : i64, !llvm.ptr<1>
// AMDGPU-LABEL: llvm.func @wait_ge_acquire(
// AMDGPU:         llvm.call_intrinsic "llvm.amdgcn.s.memrealtime"() : () -> i64
// AMDGPU:         llvm.load %{{[a-z0-9_]+}} atomic monotonic {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// AMDGPU:         rocdl.s.sleep 1
// AMDGPU:         llvm.fence acquire
// AMDGPU:         rocdl.barrier
// HOST-LABEL:   llvm.func internal @__weft_impl_wait_ge_acquire(
// HOST-NOT:       llvm.mlir.addressof
// HOST:           llvm.call @clock_gettime(
// HOST:           llvm.load %{{[a-z0-9_]+}} atomic monotonic {alignment = 8 : i64} : !llvm.ptr -> i64
// HOST:           llvm.call @sched_yield() : () -> i32
// HOST:           llvm.fence acquire
func.func @wait_ge_acquire(%flag: !weft.ptr<i64>, %v: i64, %out: !weft.ptr<i64>)
    attributes {weft.kernel} {
  %seen = weft.wait ge acquire sys %flag, %v : !weft.ptr<i64>
  weft.store %out, %seen : !weft.ptr<i64>
  return
}

// Every predicate is an unsigned comparison; a relaxed wait has no fence;
// the scope is the polling load's.
// NVPTX-LABEL:  llvm.func @wait_predicates(
// AMDGPU-LABEL: llvm.func @wait_predicates(
// HOST-LABEL:   llvm.func internal @__weft_impl_wait_predicates(
// NVPTX:          llvm.load %{{[a-z0-9_]+}} atomic syncscope("block") monotonic
// NVPTX-NEXT:     llvm.icmp "eq"
// NVPTX:          llvm.load %{{[a-z0-9_]+}} atomic syncscope("device") monotonic
// NVPTX-NEXT:     llvm.icmp "ne"
// NVPTX:          llvm.load %{{[a-z0-9_]+}} atomic monotonic
// NVPTX-NEXT:     llvm.icmp "ugt"
// NVPTX:          llvm.load %{{[a-z0-9_]+}} atomic monotonic
// NVPTX-NEXT:     llvm.icmp "ule"
// NVPTX:          llvm.load %{{[a-z0-9_]+}} atomic monotonic
// NVPTX-NEXT:     llvm.icmp "ult"
// AMDGPU:         llvm.load %{{[a-z0-9_]+}} atomic syncscope("workgroup") monotonic
// AMDGPU-NEXT:    llvm.icmp "eq"
// AMDGPU:         llvm.load %{{[a-z0-9_]+}} atomic syncscope("agent") monotonic
// AMDGPU-NEXT:    llvm.icmp "ne"
// HOST:           llvm.load %{{[a-z0-9_]+}} atomic monotonic
// HOST-NEXT:      llvm.icmp "eq"
// HOST:           llvm.load %{{[a-z0-9_]+}} atomic monotonic
// HOST-NEXT:      llvm.icmp "ne"
// CHECK-NOT:      llvm.fence
// CHECK:          llvm.return
func.func @wait_predicates(%flag: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  %0 = weft.wait eq relaxed cta %flag, %v : !weft.ptr<i32>
  %1 = weft.wait ne relaxed gpu %flag, %v : !weft.ptr<i32>
  %2 = weft.wait gt relaxed sys %flag, %v : !weft.ptr<i32>
  %3 = weft.wait le relaxed sys %flag, %v : !weft.ptr<i32>
  %4 = weft.wait lt relaxed sys %flag, %v : !weft.ptr<i32>
  return
}

// A wait whose result is unused broadcasts nothing: no slot, one join.
// NVPTX-LABEL:  llvm.func @wait_unused(
// NVPTX-NOT:      llvm.mlir.addressof @__weft_broadcast
// NVPTX:          llvm.load %{{[a-z0-9_]+}} atomic monotonic
// NVPTX:          nvvm.barrier0
// NVPTX-NOT:      nvvm.barrier0
// NVPTX:          llvm.return
func.func @wait_unused(%flag: !weft.ptr<i64>, %v: i64)
    attributes {weft.kernel} {
  %0 = weft.wait ge relaxed sys %flag, %v : !weft.ptr<i64>
  return
}

// The barrier: join; thread 0 reads this rank's generation (acquire, gpu)
// and arrives (acq_rel add, gpu) in the reserved region at heap_base[rank]
// (barrier_count at 64, barrier_gen at 128). The last of the grid's
// programs (nctaid.x * y * z) resets the count, adds 1 with release at
// system scope to barrier_arrive[rank] (192 + 8 * rank) of every peer,
// polls its own barrier_arrive[p] >= generation + 1 for every p, fences
// (acquire, sys) and publishes the generation (release, gpu). The others
// poll until the generation moves, then fence (acquire, gpu). Join.
// NVPTX-LABEL:  llvm.func @barrier(
// NVPTX-DAG:      %[[C192:.*]] = llvm.mlir.constant(192 : i64) : i64
// NVPTX:          nvvm.barrier0
// NVPTX:          llvm.cond_br %{{[a-z0-9_]+}}, ^[[LEADER:bb[0-9]+]], ^[[JOIN:bb[0-9]+]]
// NVPTX:        ^[[LEADER]]:
// NVPTX:          %[[RESERVED:.*]] = llvm.inttoptr %{{[a-z0-9_]+}} : i64 to !llvm.ptr<1>
// NVPTX:          %[[COUNT:.*]] = llvm.getelementptr %[[RESERVED]][64] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
// NVPTX:          %[[GEN:.*]] = llvm.getelementptr %[[RESERVED]][128] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
// NVPTX:          %[[NX:.*]] = nvvm.read.ptx.sreg.nctaid.x : i32
// NVPTX:          %[[NY:.*]] = nvvm.read.ptx.sreg.nctaid.y : i32
// NVPTX:          %[[NXY:.*]] = llvm.mul %[[NX]], %[[NY]] : i32
// NVPTX:          %[[NZ:.*]] = nvvm.read.ptx.sreg.nctaid.z : i32
// NVPTX:          %[[PROGRAMS:.*]] = llvm.mul %[[NXY]], %[[NZ]] : i32
// NVPTX:          %[[EPOCH:.*]] = llvm.load %[[GEN]] atomic syncscope("device") acquire {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// NVPTX:          %[[ARRIVED:.*]] = llvm.inline_asm has_side_effects "atom.acq_rel.gpu.global.add.u32 $0, [$1], $2;", "=r,l,r,~{memory}" %[[COUNT]]
// NVPTX:          %[[LASTIDX:.*]] = llvm.sub %[[PROGRAMS]], %{{[a-z0-9_]+}} : i32
// NVPTX:          %[[LAST:.*]] = llvm.icmp "eq" %[[ARRIVED]], %[[LASTIDX]] : i32
// NVPTX:          %[[NEXT:.*]] = llvm.add %[[EPOCH]], %{{[a-z0-9_]+}} : i32
// NVPTX:          llvm.cond_br %[[LAST]], ^[[LASTBB:bb[0-9]+]], ^[[FOLLOWER:bb[0-9]+]]
// NVPTX:        ^[[LASTBB]]:
// NVPTX-NEXT:     llvm.store %{{[a-z0-9_]+}}, %[[COUNT]] atomic syncscope("device") monotonic {alignment = 4 : i64} : i32, !llvm.ptr<1>
// NVPTX:          llvm.add %{{[a-z0-9_]+}}, %[[C192]] : i64
// NVPTX:          llvm.inline_asm has_side_effects "atom.release.sys.global.add.u64 $0, [$1], $2;", "=l,l,l,~{memory}"
// NVPTX:          %[[TARGET:.*]] = llvm.zext %[[NEXT]] : i32 to i64
// NVPTX:          llvm.load %{{[a-z0-9_]+}} atomic monotonic {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// NVPTX-NEXT:     llvm.icmp "uge" %{{[a-z0-9_]+}}, %[[TARGET]] : i64
// NVPTX:          llvm.fence acquire
// NVPTX-NEXT:     llvm.store %[[NEXT]], %[[GEN]] atomic syncscope("device") release {alignment = 4 : i64} : i32, !llvm.ptr<1>
// NVPTX:        ^[[FOLLOWER]]:
// NVPTX:          %[[MOVED:.*]] = llvm.load %[[GEN]] atomic syncscope("device") monotonic {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// NVPTX-NEXT:     llvm.icmp "ne" %[[MOVED]], %[[EPOCH]] : i32
// NVPTX:          llvm.fence syncscope("device") acquire
// NVPTX:        ^[[JOIN]]:
// NVPTX-NEXT:     nvvm.barrier0
// NVPTX-NEXT:     llvm.return
// AMDGPU-LABEL: llvm.func @barrier(
// AMDGPU:         llvm.atomicrmw add %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} syncscope("agent") acq_rel : !llvm.ptr<1>, i32
// AMDGPU:         llvm.atomicrmw add %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} release : !llvm.ptr<1>, i64
// AMDGPU:         llvm.fence acquire
// AMDGPU:         llvm.fence syncscope("agent") acquire
// AMDGPU:         rocdl.barrier
// AMDGPU-NEXT:    llvm.return
// HOST-LABEL:   llvm.func internal @__weft_impl_barrier(
// HOST-NOT:       llvm.cond_br %{{[a-z0-9_]+}}, ^{{.*}}, ^{{.*}}{{$}}
// HOST:           llvm.atomicrmw add %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} acq_rel : !llvm.ptr, i32
// HOST:           llvm.atomicrmw add %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} release : !llvm.ptr, i64
// HOST:           llvm.call @sched_yield() : () -> i32
// HOST:           llvm.fence acquire
func.func @barrier() attributes {weft.kernel} {
  weft.barrier
  return
}
