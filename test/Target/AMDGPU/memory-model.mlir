// The gfx942 (MI300) memory model: weft orders and scopes become LLVM
// atomics with AMDGPU syncscopes ("workgroup", "agent", system), and the
// backend emits the cache maintenance each needs (docs/memory-model.md):
// system scope sets sc0 sc1 on the access, invalidates with
// `buffer_inv sc0 sc1` after an acquire and writes back with
// `buffer_wbl2 sc0 sc1` before a release; agent scope uses sc1; workgroup
// scope needs no cache maintenance. (For atomics sc0 means "return the old
// value", sc1 system scope.)
//
// RUN: weft-compile %s --target=hip:gfx942 --emit=amdgcn -o %t.s
// RUN: FileCheck %s < %t.s

// A weak load has no cache-policy bits (here even a scalar load, since the
// kernel never writes the memory).
// CHECK-LABEL: {{^}}load_weak:
// CHECK-NOT:   sc0
// CHECK-NOT:   sc1
// CHECK-NOT:   buffer_inv
// CHECK:       s_endpgm
func.func @load_weak(%p: !weft.ptr<i32>, %out: !weft.ptr<i32>)
    attributes {weft.kernel} {
  %v = weft.load %p : !weft.ptr<i32>
  weft.store %out, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: {{^}}load_relaxed_cta:
// CHECK:       global_load_dword v{{[0-9]+}}, v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}] sc0{{$}}
// CHECK-NOT:   buffer_inv
// CHECK:       s_endpgm
func.func @load_relaxed_cta(%p: !weft.ptr<i32>, %out: !weft.ptr<i32>)
    attributes {weft.kernel} {
  %v = weft.load relaxed cta %p : !weft.ptr<i32>
  weft.store %out, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: {{^}}load_relaxed_gpu:
// CHECK:       global_load_dword v{{[0-9]+}}, v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}] sc1{{$}}
// CHECK-NOT:   buffer_inv
// CHECK:       s_endpgm
func.func @load_relaxed_gpu(%p: !weft.ptr<i32>, %out: !weft.ptr<i32>)
    attributes {weft.kernel} {
  %v = weft.load relaxed gpu %p : !weft.ptr<i32>
  weft.store %out, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: {{^}}load_relaxed_sys:
// CHECK:       global_load_dword v{{[0-9]+}}, v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}] sc0 sc1{{$}}
// CHECK-NOT:   buffer_inv
// CHECK:       s_endpgm
func.func @load_relaxed_sys(%p: !weft.ptr<i32>, %out: !weft.ptr<i32>)
    attributes {weft.kernel} {
  %v = weft.load relaxed sys %p : !weft.ptr<i32>
  weft.store %out, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: {{^}}load_acquire_cta:
// CHECK:       global_load_dword v{{[0-9]+}}, v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}] sc0{{$}}
// CHECK-NOT:   buffer_inv
// CHECK:       s_endpgm
func.func @load_acquire_cta(%p: !weft.ptr<i32>, %out: !weft.ptr<i32>)
    attributes {weft.kernel} {
  %v = weft.load acquire cta %p : !weft.ptr<i32>
  weft.store %out, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: {{^}}load_acquire_gpu:
// CHECK:       global_load_dword v{{[0-9]+}}, v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}] sc1{{$}}
// CHECK-NEXT:  s_waitcnt vmcnt(0)
// CHECK-NEXT:  buffer_inv sc1{{$}}
// CHECK:       s_endpgm
func.func @load_acquire_gpu(%p: !weft.ptr<i32>, %out: !weft.ptr<i32>)
    attributes {weft.kernel} {
  %v = weft.load acquire gpu %p : !weft.ptr<i32>
  weft.store %out, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: {{^}}load_acquire_sys:
// CHECK:       global_load_dword v{{[0-9]+}}, v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}] sc0 sc1{{$}}
// CHECK-NEXT:  s_waitcnt vmcnt(0)
// CHECK-NEXT:  buffer_inv sc0 sc1{{$}}
// CHECK:       s_endpgm
func.func @load_acquire_sys(%p: !weft.ptr<i32>, %out: !weft.ptr<i32>)
    attributes {weft.kernel} {
  %v = weft.load acquire sys %p : !weft.ptr<i32>
  weft.store %out, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: {{^}}store_weak:
// CHECK-NOT:   buffer_wbl2
// CHECK:       global_store_dword v{{[0-9]+}}, v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}]{{$}}
func.func @store_weak(%p: !weft.ptr<i32>, %v: i32) attributes {weft.kernel} {
  weft.store %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: {{^}}store_relaxed_cta:
// CHECK-NOT:   buffer_wbl2
// CHECK:       global_store_dword v{{[0-9]+}}, v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}] sc0{{$}}
func.func @store_relaxed_cta(%p: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  weft.store relaxed cta %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: {{^}}store_relaxed_gpu:
// CHECK-NOT:   buffer_wbl2
// CHECK:       global_store_dword v{{[0-9]+}}, v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}] sc1{{$}}
func.func @store_relaxed_gpu(%p: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  weft.store relaxed gpu %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: {{^}}store_relaxed_sys:
// CHECK-NOT:   buffer_wbl2
// CHECK:       global_store_dword v{{[0-9]+}}, v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}] sc0 sc1{{$}}
func.func @store_relaxed_sys(%p: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  weft.store relaxed sys %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: {{^}}store_release_cta:
// CHECK:       s_barrier
// CHECK-NOT:   buffer_wbl2
// CHECK:       global_store_dword v{{[0-9]+}}, v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}] sc0{{$}}
func.func @store_release_cta(%p: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  weft.store release cta %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: {{^}}store_release_gpu:
// CHECK:       s_barrier
// CHECK:       buffer_wbl2 sc1{{$}}
// CHECK:       global_store_dword v{{[0-9]+}}, v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}] sc1{{$}}
func.func @store_release_gpu(%p: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  weft.store release gpu %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: {{^}}store_release_sys:
// CHECK:       s_barrier
// CHECK:       buffer_wbl2 sc0 sc1{{$}}
// CHECK:       global_store_dword v{{[0-9]+}}, v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}] sc0 sc1{{$}}
func.func @store_release_sys(%p: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  weft.store release sys %p, %v : !weft.ptr<i32>
  return
}

// Fences: workgroup scope needs nothing on gfx942 (outside thread-group
// split mode); acquire invalidates, release writes back, acq_rel and
// seq_cst do both. A fence orders the whole program's accesses
// (docs/design.md): the workgroup joins (s_barrier) before a fence that
// releases and after one that acquires.
// CHECK-LABEL: {{^}}fence_acquire_cta:
// CHECK-NEXT:  s_barrier
// CHECK-NEXT:  s_endpgm
func.func @fence_acquire_cta() attributes {weft.kernel} {
  weft.fence acquire cta
  return
}

// CHECK-LABEL: {{^}}fence_acquire_gpu:
// CHECK-NEXT:  buffer_inv sc1{{$}}
// CHECK-NEXT:  s_barrier
// CHECK-NEXT:  s_endpgm
func.func @fence_acquire_gpu() attributes {weft.kernel} {
  weft.fence acquire gpu
  return
}

// CHECK-LABEL: {{^}}fence_acquire_sys:
// CHECK-NEXT:  buffer_inv sc0 sc1{{$}}
// CHECK-NEXT:  s_barrier
// CHECK-NEXT:  s_endpgm
func.func @fence_acquire_sys() attributes {weft.kernel} {
  weft.fence acquire sys
  return
}

// CHECK-LABEL: {{^}}fence_release_cta:
// CHECK-NEXT:  s_barrier
// CHECK-NEXT:  s_endpgm
func.func @fence_release_cta() attributes {weft.kernel} {
  weft.fence release cta
  return
}

// CHECK-LABEL: {{^}}fence_release_gpu:
// CHECK-NEXT:  s_barrier
// CHECK-NEXT:  buffer_wbl2 sc1{{$}}
// CHECK-NEXT:  s_endpgm
func.func @fence_release_gpu() attributes {weft.kernel} {
  weft.fence release gpu
  return
}

// CHECK-LABEL: {{^}}fence_release_sys:
// CHECK-NEXT:  s_barrier
// CHECK-NEXT:  buffer_wbl2 sc0 sc1{{$}}
// CHECK-NEXT:  s_endpgm
func.func @fence_release_sys() attributes {weft.kernel} {
  weft.fence release sys
  return
}

// CHECK-LABEL: {{^}}fence_acq_rel_cta:
// CHECK-NEXT:  s_barrier
// CHECK-NEXT:  s_barrier
// CHECK-NEXT:  s_endpgm
func.func @fence_acq_rel_cta() attributes {weft.kernel} {
  weft.fence acq_rel cta
  return
}

// CHECK-LABEL: {{^}}fence_acq_rel_gpu:
// CHECK-NEXT:  s_barrier
// CHECK-NEXT:  buffer_wbl2 sc1{{$}}
// CHECK-NEXT:  buffer_inv sc1{{$}}
// CHECK-NEXT:  s_barrier
// CHECK-NEXT:  s_endpgm
func.func @fence_acq_rel_gpu() attributes {weft.kernel} {
  weft.fence acq_rel gpu
  return
}

// CHECK-LABEL: {{^}}fence_acq_rel_sys:
// CHECK-NEXT:  s_barrier
// CHECK-NEXT:  buffer_wbl2 sc0 sc1{{$}}
// CHECK-NEXT:  buffer_inv sc0 sc1{{$}}
// CHECK-NEXT:  s_barrier
// CHECK-NEXT:  s_endpgm
func.func @fence_acq_rel_sys() attributes {weft.kernel} {
  weft.fence acq_rel sys
  return
}

// CHECK-LABEL: {{^}}fence_seq_cst_cta:
// CHECK-NEXT:  s_barrier
// CHECK-NEXT:  s_barrier
// CHECK-NEXT:  s_endpgm
func.func @fence_seq_cst_cta() attributes {weft.kernel} {
  weft.fence seq_cst cta
  return
}

// CHECK-LABEL: {{^}}fence_seq_cst_gpu:
// CHECK-NEXT:  s_barrier
// CHECK-NEXT:  buffer_wbl2 sc1{{$}}
// CHECK-NEXT:  buffer_inv sc1{{$}}
// CHECK-NEXT:  s_barrier
// CHECK-NEXT:  s_endpgm
func.func @fence_seq_cst_gpu() attributes {weft.kernel} {
  weft.fence seq_cst gpu
  return
}

// CHECK-LABEL: {{^}}fence_seq_cst_sys:
// CHECK-NEXT:  s_barrier
// CHECK-NEXT:  buffer_wbl2 sc0 sc1{{$}}
// CHECK-NEXT:  buffer_inv sc0 sc1{{$}}
// CHECK-NEXT:  s_barrier
// CHECK-NEXT:  s_endpgm
func.func @fence_seq_cst_sys() attributes {weft.kernel} {
  weft.fence seq_cst sys
  return
}

// Read-modify-write, every order x scope (the old value unused, so the
// no-return form without sc0): release writes back before, acquire
// invalidates after.
// CHECK-LABEL: {{^}}rmw_add_relaxed_cta:
// CHECK-NOT:   buffer_wbl2
// CHECK:       global_atomic_add v{{[0-9]+}}, v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}]{{$}}
// CHECK-NOT:   buffer_inv
// CHECK:       s_endpgm
func.func @rmw_add_relaxed_cta(%p: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  %r = weft.atomic_rmw add relaxed cta %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: {{^}}rmw_add_relaxed_gpu:
// CHECK-NOT:   buffer_wbl2
// CHECK:       global_atomic_add v{{[0-9]+}}, v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}]{{$}}
// CHECK-NOT:   buffer_inv
// CHECK:       s_endpgm
func.func @rmw_add_relaxed_gpu(%p: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  %r = weft.atomic_rmw add relaxed gpu %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: {{^}}rmw_add_relaxed_sys:
// CHECK-NOT:   buffer_wbl2
// CHECK:       global_atomic_add v{{[0-9]+}}, v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}] sc1{{$}}
// CHECK-NOT:   buffer_inv
// CHECK:       s_endpgm
func.func @rmw_add_relaxed_sys(%p: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  %r = weft.atomic_rmw add relaxed sys %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: {{^}}rmw_add_acquire_cta:
// CHECK-NOT:   buffer_wbl2
// CHECK:       global_atomic_add v{{[0-9]+}}, v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}]{{$}}
// CHECK-NOT:   buffer_inv
// CHECK:       s_endpgm
func.func @rmw_add_acquire_cta(%p: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  %r = weft.atomic_rmw add acquire cta %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: {{^}}rmw_add_acquire_gpu:
// CHECK-NOT:   buffer_wbl2
// CHECK:       global_atomic_add v{{[0-9]+}}, v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}]{{$}}
// CHECK-NEXT:  s_waitcnt vmcnt(0)
// CHECK-NEXT:  buffer_inv sc1{{$}}
// CHECK:       s_endpgm
func.func @rmw_add_acquire_gpu(%p: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  %r = weft.atomic_rmw add acquire gpu %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: {{^}}rmw_add_acquire_sys:
// CHECK-NOT:   buffer_wbl2
// CHECK:       global_atomic_add v{{[0-9]+}}, v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}] sc1{{$}}
// CHECK-NEXT:  s_waitcnt vmcnt(0)
// CHECK-NEXT:  buffer_inv sc0 sc1{{$}}
// CHECK:       s_endpgm
func.func @rmw_add_acquire_sys(%p: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  %r = weft.atomic_rmw add acquire sys %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: {{^}}rmw_add_release_cta:
// CHECK-NOT:   buffer_wbl2
// CHECK:       global_atomic_add v{{[0-9]+}}, v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}]{{$}}
// CHECK-NOT:   buffer_inv
// CHECK:       s_endpgm
func.func @rmw_add_release_cta(%p: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  %r = weft.atomic_rmw add release cta %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: {{^}}rmw_add_release_gpu:
// CHECK:       buffer_wbl2 sc1{{$}}
// CHECK:       global_atomic_add v{{[0-9]+}}, v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}]{{$}}
// CHECK-NOT:   buffer_inv
// CHECK:       s_endpgm
func.func @rmw_add_release_gpu(%p: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  %r = weft.atomic_rmw add release gpu %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: {{^}}rmw_add_release_sys:
// CHECK:       buffer_wbl2 sc0 sc1{{$}}
// CHECK:       global_atomic_add v{{[0-9]+}}, v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}] sc1{{$}}
// CHECK-NOT:   buffer_inv
// CHECK:       s_endpgm
func.func @rmw_add_release_sys(%p: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  %r = weft.atomic_rmw add release sys %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: {{^}}rmw_add_acq_rel_cta:
// CHECK-NOT:   buffer_wbl2
// CHECK:       global_atomic_add v{{[0-9]+}}, v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}]{{$}}
// CHECK-NOT:   buffer_inv
// CHECK:       s_endpgm
func.func @rmw_add_acq_rel_cta(%p: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  %r = weft.atomic_rmw add acq_rel cta %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: {{^}}rmw_add_acq_rel_gpu:
// CHECK:       buffer_wbl2 sc1{{$}}
// CHECK:       global_atomic_add v{{[0-9]+}}, v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}]{{$}}
// CHECK-NEXT:  s_waitcnt vmcnt(0)
// CHECK-NEXT:  buffer_inv sc1{{$}}
// CHECK:       s_endpgm
func.func @rmw_add_acq_rel_gpu(%p: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  %r = weft.atomic_rmw add acq_rel gpu %p, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: {{^}}rmw_add_acq_rel_sys:
// CHECK:       buffer_wbl2 sc0 sc1{{$}}
// CHECK:       global_atomic_add v{{[0-9]+}}, v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}] sc1{{$}}
// CHECK-NEXT:  s_waitcnt vmcnt(0)
// CHECK-NEXT:  buffer_inv sc0 sc1{{$}}
// CHECK:       s_endpgm
func.func @rmw_add_acq_rel_sys(%p: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  %r = weft.atomic_rmw add acq_rel sys %p, %v : !weft.ptr<i32>
  return
}

// Compare-and-swap, every order x scope, 64-bit.
// CHECK-LABEL: {{^}}cas_relaxed_cta:
// CHECK-NOT:   buffer_wbl2
// CHECK:       global_atomic_cmpswap_x2 v{{[0-9]+}}, v[{{[0-9]+:[0-9]+}}], s[{{[0-9]+:[0-9]+}}]{{$}}
// CHECK-NOT:   buffer_inv
// CHECK:       s_endpgm
func.func @cas_relaxed_cta(%p: !weft.ptr<i64>, %c: i64, %v: i64)
    attributes {weft.kernel} {
  %r = weft.atomic_cas relaxed cta %p, %c, %v : !weft.ptr<i64>
  return
}

// CHECK-LABEL: {{^}}cas_relaxed_gpu:
// CHECK-NOT:   buffer_wbl2
// CHECK:       global_atomic_cmpswap_x2 v{{[0-9]+}}, v[{{[0-9]+:[0-9]+}}], s[{{[0-9]+:[0-9]+}}]{{$}}
// CHECK-NOT:   buffer_inv
// CHECK:       s_endpgm
func.func @cas_relaxed_gpu(%p: !weft.ptr<i64>, %c: i64, %v: i64)
    attributes {weft.kernel} {
  %r = weft.atomic_cas relaxed gpu %p, %c, %v : !weft.ptr<i64>
  return
}

// CHECK-LABEL: {{^}}cas_relaxed_sys:
// CHECK-NOT:   buffer_wbl2
// CHECK:       global_atomic_cmpswap_x2 v{{[0-9]+}}, v[{{[0-9]+:[0-9]+}}], s[{{[0-9]+:[0-9]+}}] sc1{{$}}
// CHECK-NOT:   buffer_inv
// CHECK:       s_endpgm
func.func @cas_relaxed_sys(%p: !weft.ptr<i64>, %c: i64, %v: i64)
    attributes {weft.kernel} {
  %r = weft.atomic_cas relaxed sys %p, %c, %v : !weft.ptr<i64>
  return
}

// CHECK-LABEL: {{^}}cas_acquire_cta:
// CHECK-NOT:   buffer_wbl2
// CHECK:       global_atomic_cmpswap_x2 v{{[0-9]+}}, v[{{[0-9]+:[0-9]+}}], s[{{[0-9]+:[0-9]+}}]{{$}}
// CHECK-NOT:   buffer_inv
// CHECK:       s_endpgm
func.func @cas_acquire_cta(%p: !weft.ptr<i64>, %c: i64, %v: i64)
    attributes {weft.kernel} {
  %r = weft.atomic_cas acquire cta %p, %c, %v : !weft.ptr<i64>
  return
}

// CHECK-LABEL: {{^}}cas_acquire_gpu:
// CHECK-NOT:   buffer_wbl2
// CHECK:       global_atomic_cmpswap_x2 v{{[0-9]+}}, v[{{[0-9]+:[0-9]+}}], s[{{[0-9]+:[0-9]+}}]{{$}}
// CHECK-NEXT:  s_waitcnt vmcnt(0)
// CHECK-NEXT:  buffer_inv sc1{{$}}
// CHECK:       s_endpgm
func.func @cas_acquire_gpu(%p: !weft.ptr<i64>, %c: i64, %v: i64)
    attributes {weft.kernel} {
  %r = weft.atomic_cas acquire gpu %p, %c, %v : !weft.ptr<i64>
  return
}

// CHECK-LABEL: {{^}}cas_acquire_sys:
// CHECK-NOT:   buffer_wbl2
// CHECK:       global_atomic_cmpswap_x2 v{{[0-9]+}}, v[{{[0-9]+:[0-9]+}}], s[{{[0-9]+:[0-9]+}}] sc1{{$}}
// CHECK-NEXT:  s_waitcnt vmcnt(0)
// CHECK-NEXT:  buffer_inv sc0 sc1{{$}}
// CHECK:       s_endpgm
func.func @cas_acquire_sys(%p: !weft.ptr<i64>, %c: i64, %v: i64)
    attributes {weft.kernel} {
  %r = weft.atomic_cas acquire sys %p, %c, %v : !weft.ptr<i64>
  return
}

// CHECK-LABEL: {{^}}cas_release_cta:
// CHECK-NOT:   buffer_wbl2
// CHECK:       global_atomic_cmpswap_x2 v{{[0-9]+}}, v[{{[0-9]+:[0-9]+}}], s[{{[0-9]+:[0-9]+}}]{{$}}
// CHECK-NOT:   buffer_inv
// CHECK:       s_endpgm
func.func @cas_release_cta(%p: !weft.ptr<i64>, %c: i64, %v: i64)
    attributes {weft.kernel} {
  %r = weft.atomic_cas release cta %p, %c, %v : !weft.ptr<i64>
  return
}

// CHECK-LABEL: {{^}}cas_release_gpu:
// CHECK:       buffer_wbl2 sc1{{$}}
// CHECK:       global_atomic_cmpswap_x2 v{{[0-9]+}}, v[{{[0-9]+:[0-9]+}}], s[{{[0-9]+:[0-9]+}}]{{$}}
// CHECK-NOT:   buffer_inv
// CHECK:       s_endpgm
func.func @cas_release_gpu(%p: !weft.ptr<i64>, %c: i64, %v: i64)
    attributes {weft.kernel} {
  %r = weft.atomic_cas release gpu %p, %c, %v : !weft.ptr<i64>
  return
}

// CHECK-LABEL: {{^}}cas_release_sys:
// CHECK:       buffer_wbl2 sc0 sc1{{$}}
// CHECK:       global_atomic_cmpswap_x2 v{{[0-9]+}}, v[{{[0-9]+:[0-9]+}}], s[{{[0-9]+:[0-9]+}}] sc1{{$}}
// CHECK-NOT:   buffer_inv
// CHECK:       s_endpgm
func.func @cas_release_sys(%p: !weft.ptr<i64>, %c: i64, %v: i64)
    attributes {weft.kernel} {
  %r = weft.atomic_cas release sys %p, %c, %v : !weft.ptr<i64>
  return
}

// CHECK-LABEL: {{^}}cas_acq_rel_cta:
// CHECK-NOT:   buffer_wbl2
// CHECK:       global_atomic_cmpswap_x2 v{{[0-9]+}}, v[{{[0-9]+:[0-9]+}}], s[{{[0-9]+:[0-9]+}}]{{$}}
// CHECK-NOT:   buffer_inv
// CHECK:       s_endpgm
func.func @cas_acq_rel_cta(%p: !weft.ptr<i64>, %c: i64, %v: i64)
    attributes {weft.kernel} {
  %r = weft.atomic_cas acq_rel cta %p, %c, %v : !weft.ptr<i64>
  return
}

// CHECK-LABEL: {{^}}cas_acq_rel_gpu:
// CHECK:       buffer_wbl2 sc1{{$}}
// CHECK:       global_atomic_cmpswap_x2 v{{[0-9]+}}, v[{{[0-9]+:[0-9]+}}], s[{{[0-9]+:[0-9]+}}]{{$}}
// CHECK-NEXT:  s_waitcnt vmcnt(0)
// CHECK-NEXT:  buffer_inv sc1{{$}}
// CHECK:       s_endpgm
func.func @cas_acq_rel_gpu(%p: !weft.ptr<i64>, %c: i64, %v: i64)
    attributes {weft.kernel} {
  %r = weft.atomic_cas acq_rel gpu %p, %c, %v : !weft.ptr<i64>
  return
}

// CHECK-LABEL: {{^}}cas_acq_rel_sys:
// CHECK:       buffer_wbl2 sc0 sc1{{$}}
// CHECK:       global_atomic_cmpswap_x2 v{{[0-9]+}}, v[{{[0-9]+:[0-9]+}}], s[{{[0-9]+:[0-9]+}}] sc1{{$}}
// CHECK-NEXT:  s_waitcnt vmcnt(0)
// CHECK-NEXT:  buffer_inv sc0 sc1{{$}}
// CHECK:       s_endpgm
func.func @cas_acq_rel_sys(%p: !weft.ptr<i64>, %c: i64, %v: i64)
    attributes {weft.kernel} {
  %r = weft.atomic_cas acq_rel sys %p, %c, %v : !weft.ptr<i64>
  return
}
