// Bulk transfers and the node layout (docs/multinode.md). A peer of this
// node is reached by the program's own copy through the translated address
// (the host's llvm.memcpy; a put's signal a release atomic); in a module
// compiled for a job across nodes (multinode=true) a branch on whether the
// peer's heap is mapped (heap_base[peer] != 0) sends the others to the
// engine: on the host the kernel context's weft_host_engine (`engine` at
// 1080; put, get, signal, quiet at 8, 16, 24, 32 after its state), whose
// non-zero status is the kind of the debug record the program claims (at
// 1216) before it stops; on NVPTX NVSHMEM's device functions, on generic
// pointers (signal operations 9 set, 10 add). Without multinode no branch
// and no engine call is emitted.
//
// RUN: weft-opt %s --weft-lower="target=host" | FileCheck %s --check-prefix=HOST
// RUN: weft-opt %s --weft-lower="target=host multinode=true" | FileCheck %s --check-prefix=HOSTMN
// RUN: weft-opt %s --weft-lower="target=cuda:90 multinode=true" | FileCheck %s --check-prefix=NVMN
// RUN: weft-opt %s --weft-lower="target=cuda:90" | FileCheck %s --check-prefix=NV
// RUN: weft-opt %s --weft-lower="target=host debug=true" | FileCheck %s --check-prefix=DEBUG

// The node layout fields follow the heap bases: local_rank, local_size,
// node at 1064, 1068, 1072.
// HOST-LABEL: @__weft_impl_layout(
// HOST-DAG:     llvm.getelementptr %arg1[1064]
// HOST-DAG:     llvm.getelementptr %arg1[1068]
// HOST-DAG:     llvm.getelementptr %arg1[1072]
func.func @layout(%out: !weft.ptr<i32>) attributes {weft.kernel} {
  %l = weft.local_rank : i32
  %s = weft.local_size : i32
  %n = weft.node : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %o1 = weft.addptr %out, %c1 : !weft.ptr<i32>, i32
  %o2 = weft.addptr %out, %c2 : !weft.ptr<i32>, i32
  weft.store %out, %l : !weft.ptr<i32>
  weft.store %o1, %s : !weft.ptr<i32>
  weft.store %o2, %n : !weft.ptr<i32>
  return
}

// HOST-LABEL:   @__weft_impl_put_signal(
// HOST-NOT:       llvm.icmp "ne" %{{.*}}, %{{.*}} : i64
// HOST:           "llvm.intr.memcpy"(%{{.*}}, %arg1, %arg3)
// HOST:           llvm.atomicrmw add %{{.*}}, %arg5 release
// HOST-NOT:       llvm.call %
// HOSTMN-LABEL: @__weft_impl_put_signal(
// HOSTMN:         %[[BASE:.*]] = llvm.load %{{.*}} invariant {alignment = 8 : i64} : !llvm.ptr -> i64
// HOSTMN:         %[[MAPPED:.*]] = llvm.icmp "ne" %[[BASE]], %{{.*}} : i64
// HOSTMN:         llvm.cond_br %[[MAPPED]], ^[[IN:bb[0-9]+]], ^[[OFF:bb[0-9]+]]
// HOSTMN:       ^[[IN]]:
// HOSTMN:         "llvm.intr.memcpy"
// HOSTMN:         llvm.atomicrmw add %{{.*}}, %arg5 release
// HOSTMN:       ^[[OFF]]:
// HOSTMN:         %[[ENGINE:.*]] = llvm.getelementptr %arg6[1080]
// HOSTMN:         %[[TABLE:.*]] = llvm.inttoptr
// HOSTMN:         %[[ENTRY:.*]] = llvm.getelementptr %[[TABLE]][8]
// HOSTMN:         %[[PUT:.*]] = llvm.load %[[ENTRY]]
// HOSTMN:         %[[STATE:.*]] = llvm.load %[[TABLE]]
// HOSTMN:         %[[STATUS:.*]] = llvm.call %[[PUT]](%[[STATE]], %{{.*}}, %{{.*}}, %arg3, %arg4, %{{.*}}, %arg5, %{{.*}}) : !llvm.ptr, (!llvm.ptr, i64, i64, i64, i32, i64, i64, i32) -> i32
// HOSTMN:         %[[FAILED:.*]] = llvm.icmp "ne" %[[STATUS]], %{{.*}} : i32
// HOSTMN:         llvm.cond_br %[[FAILED]]
// HOSTMN:         llvm.getelementptr %{{.*}}[1216]
// HOSTMN:         llvm.cmpxchg %{{.*}}, %{{.*}}, %[[STATUS]]
// NVMN-LABEL:   llvm.func @put_signal(
// NVMN:           llvm.icmp "ne"
// NVMN:           llvm.call @nvshmemx_putmem_signal_nbi_block({{.*}}) : (!llvm.ptr, !llvm.ptr, i64, !llvm.ptr, i64, i32, i32) -> ()
// NV-NOT:         nvshmem
func.func @put_signal(%d: !weft.ptr<f32>, %s: !weft.ptr<f32>, %flag: !weft.ptr<i64>,
                      %n: i64, %peer: i32, %v: i64) attributes {weft.kernel} {
  weft.put %d, %s, %n, %peer signal add %flag, %v : !weft.ptr<f32>, !weft.ptr<f32>, !weft.ptr<i64>
  return
}

// NVMN-LABEL:   llvm.func @put(
// NVMN:           llvm.call @nvshmemx_putmem_nbi_block({{.*}}) : (!llvm.ptr, !llvm.ptr, i64, i32) -> ()
// On GPUs the in-node copy is the program's: 16 bytes a unit when the
// addresses and the size allow it, else bytes.
// NV-LABEL:     llvm.func @put(
// NV:             llvm.and %{{.*}}, %{{.*}} : i64
// NV:             llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// NV:             llvm.load %{{.*}} {alignment = 1 : i64} : !llvm.ptr<1> -> i8
func.func @put(%d: !weft.ptr<f32>, %s: !weft.ptr<f32>, %n: i64, %peer: i32) attributes {weft.kernel} {
  weft.put %d, %s, %n, %peer : !weft.ptr<f32>, !weft.ptr<f32>
  return
}

// HOSTMN-LABEL: @__weft_impl_get(
// HOSTMN:         llvm.getelementptr %{{.*}}[16]
// HOSTMN:         llvm.call %{{.*}}(%{{.*}}, %{{.*}}, %{{.*}}, %arg2, %arg3) : !llvm.ptr, (!llvm.ptr, i64, i64, i64, i32) -> i32
// NVMN-LABEL:   llvm.func @get(
// NVMN:           llvm.call @nvshmemx_getmem_block
func.func @get(%d: !weft.ptr<f32>, %s: !weft.ptr<f32>, %n: i64, %peer: i32) attributes {weft.kernel} {
  weft.get %d, %s, %n, %peer : !weft.ptr<f32>, !weft.ptr<f32>
  return
}

// A job of one node has no engine: the host's quiet calls it only when the
// context has one.
// HOSTMN-LABEL: @__weft_impl_quiet(
// HOSTMN:         %[[E:.*]] = llvm.load %{{.*}} invariant {alignment = 8 : i64} : !llvm.ptr -> i64
// HOSTMN:         llvm.icmp "ne" %[[E]]
// HOSTMN:         llvm.getelementptr %{{.*}}[32]
// HOSTMN:         llvm.call %{{.*}}(%{{.*}}) : !llvm.ptr, (!llvm.ptr) -> i32
// HOSTMN:         llvm.fence acq_rel
// NVMN-LABEL:   llvm.func @quiet(
// NVMN:           llvm.call @nvshmem_quiet()
// NVMN-NEXT:      nvvm.barrier0
// NVMN-NEXT:      llvm.fence acq_rel
func.func @quiet() attributes {weft.kernel} {
  weft.quiet
  return
}

// A signal to a peer of another node: 64-bit flags take NVSHMEM's signal
// operation, 32-bit ones its atomics; released, after a quiet. The host's
// engine entry gets the flag's width.
// HOSTMN-LABEL: @__weft_impl_signals(
// HOSTMN:         llvm.getelementptr %{{.*}}[24]
// HOSTMN:         llvm.call %{{.*}}(%{{.*}}, %{{.*}}, %{{.*}}, %arg4, %{{.*}}, %{{.*}}) : !llvm.ptr, (!llvm.ptr, i64, i64, i32, i32, i32) -> i32
// NVMN-LABEL:   llvm.func @signals(
// NVMN:           llvm.call @nvshmem_quiet()
// NVMN:           llvm.call @nvshmem_uint32_atomic_add({{.*}}) : (!llvm.ptr, i32, i32) -> ()
// NVMN:           llvm.call @nvshmemx_signal_op({{.*}}) : (!llvm.ptr, i64, i32, i32) -> ()
func.func @signals(%f32: !weft.ptr<i32>, %v32: i32, %f64: !weft.ptr<i64>, %v64: i64,
                   %peer: i32) attributes {weft.kernel} {
  weft.signal add release sys %f32, %v32 peer %peer : !weft.ptr<i32>
  weft.signal set relaxed sys %f64, %v64 peer %peer : !weft.ptr<i64>
  return
}

// A releasing system-scope fence completes the engine's puts too; an
// acquiring one does not.
// NVMN-LABEL:   llvm.func @fences(
// NVMN:           llvm.call @nvshmem_quiet()
// NVMN-NEXT:      nvvm.barrier0
// NVMN-NEXT:      llvm.fence release
// NVMN-NOT:       nvshmem_quiet
// NVMN:           llvm.fence acquire
func.func @fences() attributes {weft.kernel} {
  weft.fence release sys
  weft.fence acquire sys
  return
}

// The barrier's leader quiets once, then tells off-node peers through the
// engine's signal (an add of 1 to this rank's arrival slot there).
// HOSTMN-LABEL: @__weft_impl_barrier(
// HOSTMN:         llvm.getelementptr %{{.*}}[32]
// HOSTMN:         llvm.getelementptr %{{.*}}[24]
// HOSTMN:         llvm.call %{{.*}}(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : !llvm.ptr, (!llvm.ptr, i64, i64, i32, i32, i32) -> i32
// NVMN-LABEL:   llvm.func @barrier(
// NVMN:           llvm.call @nvshmem_quiet()
// NVMN:           llvm.call @nvshmemx_signal_op
func.func @barrier() attributes {weft.kernel} {
  weft.barrier
  return
}

// Debug checks: a put's range lies in this rank's heap, and a translate to
// a peer of another node stops the program (kind WEFT_DEBUG_OFF_NODE, 4).
// DEBUG-LABEL:  @__weft_impl_put(
// DEBUG:          llvm.icmp "ugt" %arg2, %{{.*}} : i64
// DEBUG:          llvm.cmpxchg
// DEBUG:          %[[MAPPED:.*]] = llvm.icmp "ne" %{{.*}}, %{{.*}} : i64
// DEBUG:          %[[OFF:.*]] = llvm.xor %[[MAPPED]], %{{.*}} : i1
// DEBUG:          llvm.cond_br %[[OFF]]
// DEBUG:          llvm.mlir.constant(4 : i32)
