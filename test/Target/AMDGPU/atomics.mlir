// Every atomic_rmw kind on gfx942 as a `global_atomic_*` instruction with
// its syncscope: at agent scope all kinds are native; at system scope
// (sc1) add and exchange are native, and LLVM expands the others to a
// compare-and-swap loop because peer memory (fine-grained, over xGMI/PCIe)
// may not support them. The returning form (whose old value is broadcast to
// the workgroup) adds sc0.
//
// RUN: weft-compile %s --target=hip:gfx942 --emit=amdgcn -o %t.s
// RUN: FileCheck %s < %t.s

// CHECK-LABEL: {{^}}rmw_kinds_agent:
// CHECK:       global_atomic_add {{[^s]*}}s[{{[0-9:]+}}]{{( sc0)?$}}
// CHECK:       global_atomic_add_f32 {{[^s]*}}s[{{[0-9:]+}}]{{( sc0)?$}}
// CHECK:       global_atomic_add_f64 {{[^s]*}}s[{{[0-9:]+}}]{{( sc0)?$}}
// CHECK:       global_atomic_smax {{[^s]*}}s[{{[0-9:]+}}]{{( sc0)?$}}
// CHECK:       global_atomic_smin_x2 {{[^s]*}}s[{{[0-9:]+}}]{{( sc0)?$}}
// CHECK:       global_atomic_umax {{[^s]*}}s[{{[0-9:]+}}]{{( sc0)?$}}
// CHECK:       global_atomic_umin_x2 {{[^s]*}}s[{{[0-9:]+}}]{{( sc0)?$}}
// CHECK:       global_atomic_and {{[^s]*}}s[{{[0-9:]+}}]{{( sc0)?$}}
// CHECK:       global_atomic_or_x2 {{[^s]*}}s[{{[0-9:]+}}]{{( sc0)?$}}
// CHECK:       global_atomic_xor {{[^s]*}}s[{{[0-9:]+}}]{{( sc0)?$}}
// CHECK:       global_atomic_swap_x2 {{[^s]*}}s[{{[0-9:]+}}]{{( sc0)?$}}
// CHECK-NOT:   buffer_
// CHECK:       s_endpgm
func.func @rmw_kinds_agent(%p: !weft.ptr<i32>, %f: !weft.ptr<f32>, %d: !weft.ptr<f64>,
                           %l: !weft.ptr<i64>, %v: i32, %x: f32, %y: f64, %w: i64)
    attributes {weft.kernel} {
  %0 = weft.atomic_rmw add relaxed gpu %p, %v : !weft.ptr<i32>
  %1 = weft.atomic_rmw fadd relaxed gpu %f, %x : !weft.ptr<f32>
  %2 = weft.atomic_rmw fadd relaxed gpu %d, %y : !weft.ptr<f64>
  %3 = weft.atomic_rmw max relaxed gpu %p, %v : !weft.ptr<i32>
  %4 = weft.atomic_rmw min relaxed gpu %l, %w : !weft.ptr<i64>
  %5 = weft.atomic_rmw umax relaxed gpu %p, %v : !weft.ptr<i32>
  %6 = weft.atomic_rmw umin relaxed gpu %l, %w : !weft.ptr<i64>
  %7 = weft.atomic_rmw and relaxed gpu %p, %v : !weft.ptr<i32>
  %8 = weft.atomic_rmw or relaxed gpu %l, %w : !weft.ptr<i64>
  %9 = weft.atomic_rmw xor relaxed gpu %p, %v : !weft.ptr<i32>
  %10 = weft.atomic_rmw xchg relaxed gpu %l, %w : !weft.ptr<i64>
  return
}

// CHECK-LABEL: {{^}}rmw_kinds_system:
// CHECK:       global_atomic_swap {{.*}} sc1{{$}}
// CHECK:       global_atomic_add_x2 {{.*}} sc1{{$}}
// CHECK:       global_atomic_cmpswap {{.*}} sc0 sc1{{$}}
// CHECK:       s_cbranch_execnz .LBB
func.func @rmw_kinds_system(%f: !weft.ptr<f32>, %l: !weft.ptr<i64>, %p: !weft.ptr<i32>,
                            %x: f32, %w: i64, %v: i32) attributes {weft.kernel} {
  %0 = weft.atomic_rmw xchg relaxed sys %f, %x : !weft.ptr<f32>
  %1 = weft.atomic_rmw add relaxed sys %l, %w : !weft.ptr<i64>
  %2 = weft.atomic_rmw max relaxed sys %p, %v : !weft.ptr<i32>
  return
}

// A used result: the returning form (sc0), broadcast to the workgroup
// through LDS between two barriers.
// CHECK-LABEL: {{^}}rmw_returns:
// CHECK:       s_barrier
// CHECK:       buffer_wbl2 sc0 sc1
// CHECK-NEXT:  global_atomic_add v{{[0-9]+}}, v{{[0-9]+}}, v{{[0-9]+}}, s[{{[0-9:]+}}] sc0 sc1{{$}}
// CHECK-NEXT:  s_waitcnt vmcnt(0)
// CHECK-NEXT:  buffer_inv sc0 sc1
// CHECK:       ds_write_b32
// CHECK:       s_barrier
// CHECK-NEXT:  ds_read_b32
// CHECK:       s_barrier
func.func @rmw_returns(%p: !weft.ptr<i32>, %v: i32, %out: !weft.ptr<i32>)
    attributes {weft.kernel} {
  %old = weft.atomic_rmw add acq_rel sys %p, %v : !weft.ptr<i32>
  weft.store %out, %old : !weft.ptr<i32>
  return
}
