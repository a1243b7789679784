// Signals, waits, barriers and the multimem fallback on gfx942
// (docs/memory-model.md). Waits poll with system-coherent loads (sc0 sc1),
// sleep between polls (s_sleep) and read s_memrealtime for the timeout;
// an acquiring wait ends with buffer_inv sc0 sc1. AMDGPU has no multicast
// hardware: multimem ops are always the unicast loop over peers.
//
// RUN: weft-compile %s --target=hip:gfx942 --emit=amdgcn -o %t.s
// RUN: FileCheck %s < %t.s

// CHECK-LABEL: {{^}}signal_add_release_sys:
// CHECK:       s_barrier
// CHECK:       buffer_wbl2 sc0 sc1
// CHECK-NEXT:  global_atomic_add_x2 {{.*}} sc1{{$}}
func.func @signal_add_release_sys(%flag: !weft.ptr<i64>, %v: i64)
    attributes {weft.kernel} {
  weft.signal add release sys %flag, %v : !weft.ptr<i64>
  return
}

// CHECK-LABEL: {{^}}signal_set_release_gpu:
// CHECK:       s_barrier
// CHECK:       buffer_wbl2 sc1
// CHECK-NEXT:  global_store_dword {{.*}} sc1{{$}}
func.func @signal_set_release_gpu(%flag: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  weft.signal set release gpu %flag, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: {{^}}wait_ge_acquire_sys:
// CHECK:       s_memrealtime
// CHECK:       global_load_dwordx2 {{.*}} sc0 sc1{{$}}
// CHECK:       s_sleep 1
// CHECK:       global_load_dwordx2 {{.*}} sc0 sc1{{$}}
// CHECK:       global_atomic_cmpswap
// CHECK:       buffer_inv sc0 sc1
// CHECK:       s_barrier
// CHECK:       s_endpgm
func.func @wait_ge_acquire_sys(%flag: !weft.ptr<i64>, %v: i64, %out: !weft.ptr<i64>)
    attributes {weft.kernel} {
  %seen = weft.wait ge acquire sys %flag, %v : !weft.ptr<i64>
  weft.store %out, %seen : !weft.ptr<i64>
  return
}

// A relaxed wait at agent scope: sc1 polls, no invalidation.
// CHECK-LABEL: {{^}}wait_ne_relaxed_gpu:
// CHECK:       global_load_dword {{.*}} sc1{{$}}
// CHECK-NOT:   buffer_inv
// CHECK:       s_endpgm
func.func @wait_ne_relaxed_gpu(%flag: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  %seen = weft.wait ne relaxed gpu %flag, %v : !weft.ptr<i32>
  return
}

// The barrier: the agent-scope arrival (acq_rel add on barrier_count), the
// system-scope release add on every peer's barrier_arrive, the
// system-scope acquire after the peer polls, the agent-scope generation.
// CHECK-LABEL: {{^}}barrier:
// CHECK:       s_barrier
// CHECK-DAG:   global_atomic_add {{.*}} sc0{{$}}
// CHECK-DAG:   buffer_wbl2 sc0 sc1
// CHECK-DAG:   global_atomic_add_x2 {{.*}} sc1{{$}}
// CHECK-DAG:   buffer_inv sc0 sc1
// CHECK-DAG:   buffer_inv sc1
// CHECK-DAG:   s_sleep 1
// CHECK:       s_barrier
// CHECK-NEXT:  s_endpgm
func.func @barrier() attributes {weft.kernel} {
  weft.barrier
  return
}

// Multimem fallback: one system-coherent vector load per peer summed in
// registers, one vector store per peer after a release write-back, and
// per-lane system-scope atomics for the reduction. No multicast path.
// CHECK-LABEL: {{^}}multimem_unicast:
// CHECK-NOT:   multimem
// CHECK:       global_load_dwordx4 {{.*}} sc0 sc1{{$}}
// CHECK:       v_pk_add_f32
// CHECK:       s_barrier
// CHECK:       buffer_wbl2 sc0 sc1
// CHECK:       global_store_dwordx4 {{.*}} sc0 sc1{{$}}
// CHECK:       global_atomic_{{add_f32|cmpswap}} {{.*}} sc1{{$}}
// CHECK:       s_endpgm
func.func @multimem_unicast(%p: !weft.ptr<f32>, %v: vector<4xf32>)
    attributes {weft.kernel} {
  %m = weft.multicast %p : !weft.ptr<f32>
  %r = weft.multimem_ld_reduce add relaxed sys %m : !weft.ptr<f32, multicast> -> vector<4xf32>
  weft.multimem_store release sys %m, %r : !weft.ptr<f32, multicast>, vector<4xf32>
  weft.multimem_red add relaxed sys %m, %v : !weft.ptr<f32, multicast>, vector<4xf32>
  return
}
