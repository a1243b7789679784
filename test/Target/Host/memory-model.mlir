// The host target (x86-64, one CPU thread per program): weft orders map to
// LLVM atomic orderings (weak = plain, relaxed = monotonic) and every scope
// is the system scope, since programs and peers are all CPU threads of one
// machine (docs/memory-model.md). The kernel body is inlined into the
// exported weft_host_kernel_fn entry.
//
// RUN: weft-compile %s --target=host --emit=llir -o %t.ll
// RUN: FileCheck %s < %t.ll

// CHECK-LABEL: define void @load_weak(
// CHECK:       load i32, ptr %{{[0-9]+}}, align 4
// CHECK-NOT:   syncscope
// CHECK:       ret void
func.func @load_weak(%a: !weft.ptr<i32>, %b: !weft.ptr<i32>, %c: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  %0 = weft.load %a : !weft.ptr<i32>
  weft.store %b, %0 : !weft.ptr<i32>
  return
}

// CHECK-LABEL: define void @load_relaxed(
// CHECK:       load atomic i32, ptr %{{[0-9]+}} monotonic, align 4
// CHECK:       load atomic i32, ptr %{{[0-9]+}} monotonic, align 4
// CHECK:       load atomic i32, ptr %{{[0-9]+}} monotonic, align 4
// CHECK-NOT:   syncscope
// CHECK:       ret void
func.func @load_relaxed(%a: !weft.ptr<i32>, %b: !weft.ptr<i32>, %c: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  %0 = weft.load relaxed cta %a : !weft.ptr<i32>
  weft.store %a, %0 : !weft.ptr<i32>
  %1 = weft.load relaxed gpu %b : !weft.ptr<i32>
  weft.store %b, %1 : !weft.ptr<i32>
  %2 = weft.load relaxed sys %c : !weft.ptr<i32>
  weft.store %c, %2 : !weft.ptr<i32>
  return
}

// CHECK-LABEL: define void @load_acquire(
// CHECK:       load atomic i32, ptr %{{[0-9]+}} acquire, align 4
// CHECK:       load atomic i32, ptr %{{[0-9]+}} acquire, align 4
// CHECK:       load atomic i32, ptr %{{[0-9]+}} acquire, align 4
// CHECK-NOT:   syncscope
// CHECK:       ret void
func.func @load_acquire(%a: !weft.ptr<i32>, %b: !weft.ptr<i32>, %c: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  %0 = weft.load acquire cta %a : !weft.ptr<i32>
  weft.store %a, %0 : !weft.ptr<i32>
  %1 = weft.load acquire gpu %b : !weft.ptr<i32>
  weft.store %b, %1 : !weft.ptr<i32>
  %2 = weft.load acquire sys %c : !weft.ptr<i32>
  weft.store %c, %2 : !weft.ptr<i32>
  return
}

// CHECK-LABEL: define void @store_weak(
// CHECK:       store i32 %{{[0-9]+}}, ptr %{{[0-9]+}}, align 4
// CHECK-NOT:   syncscope
// CHECK:       ret void
func.func @store_weak(%a: !weft.ptr<i32>, %b: !weft.ptr<i32>, %c: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  weft.store %a, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: define void @store_relaxed(
// CHECK:       store atomic i32 %{{[0-9]+}}, ptr %{{[0-9]+}} monotonic, align 4
// CHECK:       store atomic i32 %{{[0-9]+}}, ptr %{{[0-9]+}} monotonic, align 4
// CHECK:       store atomic i32 %{{[0-9]+}}, ptr %{{[0-9]+}} monotonic, align 4
// CHECK-NOT:   syncscope
// CHECK:       ret void
func.func @store_relaxed(%a: !weft.ptr<i32>, %b: !weft.ptr<i32>, %c: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  weft.store relaxed cta %a, %v : !weft.ptr<i32>
  weft.store relaxed gpu %b, %v : !weft.ptr<i32>
  weft.store relaxed sys %c, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: define void @store_release(
// CHECK:       store atomic i32 %{{[0-9]+}}, ptr %{{[0-9]+}} release, align 4
// CHECK:       store atomic i32 %{{[0-9]+}}, ptr %{{[0-9]+}} release, align 4
// CHECK:       store atomic i32 %{{[0-9]+}}, ptr %{{[0-9]+}} release, align 4
// CHECK-NOT:   syncscope
// CHECK:       ret void
func.func @store_release(%a: !weft.ptr<i32>, %b: !weft.ptr<i32>, %c: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  weft.store release cta %a, %v : !weft.ptr<i32>
  weft.store release gpu %b, %v : !weft.ptr<i32>
  weft.store release sys %c, %v : !weft.ptr<i32>
  return
}

// Identical fences in a row merge, so one function per order and scope.
// CHECK-LABEL: define void @fence_acquire_cta(
// CHECK-NEXT:  fence acquire{{$}}
// CHECK-NEXT:  ret void
func.func @fence_acquire_cta() attributes {weft.kernel} {
  weft.fence acquire cta
  return
}

// CHECK-LABEL: define void @fence_acquire_gpu(
// CHECK-NEXT:  fence acquire{{$}}
// CHECK-NEXT:  ret void
func.func @fence_acquire_gpu() attributes {weft.kernel} {
  weft.fence acquire gpu
  return
}

// CHECK-LABEL: define void @fence_acquire_sys(
// CHECK-NEXT:  fence acquire{{$}}
// CHECK-NEXT:  ret void
func.func @fence_acquire_sys() attributes {weft.kernel} {
  weft.fence acquire sys
  return
}

// CHECK-LABEL: define void @fence_release_cta(
// CHECK-NEXT:  fence release{{$}}
// CHECK-NEXT:  ret void
func.func @fence_release_cta() attributes {weft.kernel} {
  weft.fence release cta
  return
}

// CHECK-LABEL: define void @fence_release_gpu(
// CHECK-NEXT:  fence release{{$}}
// CHECK-NEXT:  ret void
func.func @fence_release_gpu() attributes {weft.kernel} {
  weft.fence release gpu
  return
}

// CHECK-LABEL: define void @fence_release_sys(
// CHECK-NEXT:  fence release{{$}}
// CHECK-NEXT:  ret void
func.func @fence_release_sys() attributes {weft.kernel} {
  weft.fence release sys
  return
}

// CHECK-LABEL: define void @fence_acq_rel_cta(
// CHECK-NEXT:  fence acq_rel{{$}}
// CHECK-NEXT:  ret void
func.func @fence_acq_rel_cta() attributes {weft.kernel} {
  weft.fence acq_rel cta
  return
}

// CHECK-LABEL: define void @fence_acq_rel_gpu(
// CHECK-NEXT:  fence acq_rel{{$}}
// CHECK-NEXT:  ret void
func.func @fence_acq_rel_gpu() attributes {weft.kernel} {
  weft.fence acq_rel gpu
  return
}

// CHECK-LABEL: define void @fence_acq_rel_sys(
// CHECK-NEXT:  fence acq_rel{{$}}
// CHECK-NEXT:  ret void
func.func @fence_acq_rel_sys() attributes {weft.kernel} {
  weft.fence acq_rel sys
  return
}

// CHECK-LABEL: define void @fence_seq_cst_cta(
// CHECK-NEXT:  fence seq_cst{{$}}
// CHECK-NEXT:  ret void
func.func @fence_seq_cst_cta() attributes {weft.kernel} {
  weft.fence seq_cst cta
  return
}

// CHECK-LABEL: define void @fence_seq_cst_gpu(
// CHECK-NEXT:  fence seq_cst{{$}}
// CHECK-NEXT:  ret void
func.func @fence_seq_cst_gpu() attributes {weft.kernel} {
  weft.fence seq_cst gpu
  return
}

// CHECK-LABEL: define void @fence_seq_cst_sys(
// CHECK-NEXT:  fence seq_cst{{$}}
// CHECK-NEXT:  ret void
func.func @fence_seq_cst_sys() attributes {weft.kernel} {
  weft.fence seq_cst sys
  return
}

// CHECK-LABEL: define void @rmw_relaxed(
// CHECK:       atomicrmw add ptr %{{[0-9]+}}, i32 %{{[0-9]+}} monotonic, align 4
// CHECK:       atomicrmw max ptr %{{[0-9]+}}, i32 %{{[0-9]+}} monotonic, align 4
// CHECK:       atomicrmw min ptr %{{[0-9]+}}, i32 %{{[0-9]+}} monotonic, align 4
// CHECK:       atomicrmw umax ptr %{{[0-9]+}}, i32 %{{[0-9]+}} monotonic, align 4
// CHECK:       atomicrmw umin ptr %{{[0-9]+}}, i32 %{{[0-9]+}} monotonic, align 4
// CHECK:       atomicrmw and ptr %{{[0-9]+}}, i32 %{{[0-9]+}} monotonic, align 4
// CHECK:       atomicrmw or ptr %{{[0-9]+}}, i32 %{{[0-9]+}} monotonic, align 4
// CHECK:       atomicrmw xor ptr %{{[0-9]+}}, i32 %{{[0-9]+}} monotonic, align 4
// CHECK:       atomicrmw xchg ptr %{{[0-9]+}}, i32 %{{[0-9]+}} monotonic, align 4
// CHECK:       atomicrmw fadd ptr %{{[0-9]+}}, float %{{[0-9]+}} monotonic, align 4
// CHECK-NOT:   syncscope
// CHECK:       ret void
func.func @rmw_relaxed(%a: !weft.ptr<i32>, %v: i32, %x: !weft.ptr<f32>, %y: f32)
    attributes {weft.kernel} {
  %0 = weft.atomic_rmw add relaxed cta %a, %v : !weft.ptr<i32>
  %1 = weft.atomic_rmw max relaxed gpu %a, %v : !weft.ptr<i32>
  %2 = weft.atomic_rmw min relaxed sys %a, %v : !weft.ptr<i32>
  %3 = weft.atomic_rmw umax relaxed cta %a, %v : !weft.ptr<i32>
  %4 = weft.atomic_rmw umin relaxed gpu %a, %v : !weft.ptr<i32>
  %5 = weft.atomic_rmw and relaxed sys %a, %v : !weft.ptr<i32>
  %6 = weft.atomic_rmw or relaxed cta %a, %v : !weft.ptr<i32>
  %7 = weft.atomic_rmw xor relaxed gpu %a, %v : !weft.ptr<i32>
  %8 = weft.atomic_rmw xchg relaxed sys %a, %v : !weft.ptr<i32>
  %f = weft.atomic_rmw fadd relaxed sys %x, %y : !weft.ptr<f32>
  return
}

// CHECK-LABEL: define void @rmw_acquire(
// CHECK:       atomicrmw add ptr %{{[0-9]+}}, i32 %{{[0-9]+}} acquire, align 4
// CHECK:       atomicrmw max ptr %{{[0-9]+}}, i32 %{{[0-9]+}} acquire, align 4
// CHECK:       atomicrmw min ptr %{{[0-9]+}}, i32 %{{[0-9]+}} acquire, align 4
// CHECK:       atomicrmw umax ptr %{{[0-9]+}}, i32 %{{[0-9]+}} acquire, align 4
// CHECK:       atomicrmw umin ptr %{{[0-9]+}}, i32 %{{[0-9]+}} acquire, align 4
// CHECK:       atomicrmw and ptr %{{[0-9]+}}, i32 %{{[0-9]+}} acquire, align 4
// CHECK:       atomicrmw or ptr %{{[0-9]+}}, i32 %{{[0-9]+}} acquire, align 4
// CHECK:       atomicrmw xor ptr %{{[0-9]+}}, i32 %{{[0-9]+}} acquire, align 4
// CHECK:       atomicrmw xchg ptr %{{[0-9]+}}, i32 %{{[0-9]+}} acquire, align 4
// CHECK:       atomicrmw fadd ptr %{{[0-9]+}}, float %{{[0-9]+}} acquire, align 4
// CHECK-NOT:   syncscope
// CHECK:       ret void
func.func @rmw_acquire(%a: !weft.ptr<i32>, %v: i32, %x: !weft.ptr<f32>, %y: f32)
    attributes {weft.kernel} {
  %0 = weft.atomic_rmw add acquire cta %a, %v : !weft.ptr<i32>
  %1 = weft.atomic_rmw max acquire gpu %a, %v : !weft.ptr<i32>
  %2 = weft.atomic_rmw min acquire sys %a, %v : !weft.ptr<i32>
  %3 = weft.atomic_rmw umax acquire cta %a, %v : !weft.ptr<i32>
  %4 = weft.atomic_rmw umin acquire gpu %a, %v : !weft.ptr<i32>
  %5 = weft.atomic_rmw and acquire sys %a, %v : !weft.ptr<i32>
  %6 = weft.atomic_rmw or acquire cta %a, %v : !weft.ptr<i32>
  %7 = weft.atomic_rmw xor acquire gpu %a, %v : !weft.ptr<i32>
  %8 = weft.atomic_rmw xchg acquire sys %a, %v : !weft.ptr<i32>
  %f = weft.atomic_rmw fadd acquire sys %x, %y : !weft.ptr<f32>
  return
}

// CHECK-LABEL: define void @rmw_release(
// CHECK:       atomicrmw add ptr %{{[0-9]+}}, i32 %{{[0-9]+}} release, align 4
// CHECK:       atomicrmw max ptr %{{[0-9]+}}, i32 %{{[0-9]+}} release, align 4
// CHECK:       atomicrmw min ptr %{{[0-9]+}}, i32 %{{[0-9]+}} release, align 4
// CHECK:       atomicrmw umax ptr %{{[0-9]+}}, i32 %{{[0-9]+}} release, align 4
// CHECK:       atomicrmw umin ptr %{{[0-9]+}}, i32 %{{[0-9]+}} release, align 4
// CHECK:       atomicrmw and ptr %{{[0-9]+}}, i32 %{{[0-9]+}} release, align 4
// CHECK:       atomicrmw or ptr %{{[0-9]+}}, i32 %{{[0-9]+}} release, align 4
// CHECK:       atomicrmw xor ptr %{{[0-9]+}}, i32 %{{[0-9]+}} release, align 4
// CHECK:       atomicrmw xchg ptr %{{[0-9]+}}, i32 %{{[0-9]+}} release, align 4
// CHECK:       atomicrmw fadd ptr %{{[0-9]+}}, float %{{[0-9]+}} release, align 4
// CHECK-NOT:   syncscope
// CHECK:       ret void
func.func @rmw_release(%a: !weft.ptr<i32>, %v: i32, %x: !weft.ptr<f32>, %y: f32)
    attributes {weft.kernel} {
  %0 = weft.atomic_rmw add release cta %a, %v : !weft.ptr<i32>
  %1 = weft.atomic_rmw max release gpu %a, %v : !weft.ptr<i32>
  %2 = weft.atomic_rmw min release sys %a, %v : !weft.ptr<i32>
  %3 = weft.atomic_rmw umax release cta %a, %v : !weft.ptr<i32>
  %4 = weft.atomic_rmw umin release gpu %a, %v : !weft.ptr<i32>
  %5 = weft.atomic_rmw and release sys %a, %v : !weft.ptr<i32>
  %6 = weft.atomic_rmw or release cta %a, %v : !weft.ptr<i32>
  %7 = weft.atomic_rmw xor release gpu %a, %v : !weft.ptr<i32>
  %8 = weft.atomic_rmw xchg release sys %a, %v : !weft.ptr<i32>
  %f = weft.atomic_rmw fadd release sys %x, %y : !weft.ptr<f32>
  return
}

// CHECK-LABEL: define void @rmw_acq_rel(
// CHECK:       atomicrmw add ptr %{{[0-9]+}}, i32 %{{[0-9]+}} acq_rel, align 4
// CHECK:       atomicrmw max ptr %{{[0-9]+}}, i32 %{{[0-9]+}} acq_rel, align 4
// CHECK:       atomicrmw min ptr %{{[0-9]+}}, i32 %{{[0-9]+}} acq_rel, align 4
// CHECK:       atomicrmw umax ptr %{{[0-9]+}}, i32 %{{[0-9]+}} acq_rel, align 4
// CHECK:       atomicrmw umin ptr %{{[0-9]+}}, i32 %{{[0-9]+}} acq_rel, align 4
// CHECK:       atomicrmw and ptr %{{[0-9]+}}, i32 %{{[0-9]+}} acq_rel, align 4
// CHECK:       atomicrmw or ptr %{{[0-9]+}}, i32 %{{[0-9]+}} acq_rel, align 4
// CHECK:       atomicrmw xor ptr %{{[0-9]+}}, i32 %{{[0-9]+}} acq_rel, align 4
// CHECK:       atomicrmw xchg ptr %{{[0-9]+}}, i32 %{{[0-9]+}} acq_rel, align 4
// CHECK:       atomicrmw fadd ptr %{{[0-9]+}}, float %{{[0-9]+}} acq_rel, align 4
// CHECK-NOT:   syncscope
// CHECK:       ret void
func.func @rmw_acq_rel(%a: !weft.ptr<i32>, %v: i32, %x: !weft.ptr<f32>, %y: f32)
    attributes {weft.kernel} {
  %0 = weft.atomic_rmw add acq_rel cta %a, %v : !weft.ptr<i32>
  %1 = weft.atomic_rmw max acq_rel gpu %a, %v : !weft.ptr<i32>
  %2 = weft.atomic_rmw min acq_rel sys %a, %v : !weft.ptr<i32>
  %3 = weft.atomic_rmw umax acq_rel cta %a, %v : !weft.ptr<i32>
  %4 = weft.atomic_rmw umin acq_rel gpu %a, %v : !weft.ptr<i32>
  %5 = weft.atomic_rmw and acq_rel sys %a, %v : !weft.ptr<i32>
  %6 = weft.atomic_rmw or acq_rel cta %a, %v : !weft.ptr<i32>
  %7 = weft.atomic_rmw xor acq_rel gpu %a, %v : !weft.ptr<i32>
  %8 = weft.atomic_rmw xchg acq_rel sys %a, %v : !weft.ptr<i32>
  %f = weft.atomic_rmw fadd acq_rel sys %x, %y : !weft.ptr<f32>
  return
}

// CHECK-LABEL: define void @cas(
// CHECK:       cmpxchg ptr %{{[0-9]+}}, i64 %{{[0-9]+}}, i64 %{{[0-9]+}} monotonic monotonic, align 8
// CHECK:       cmpxchg ptr %{{[0-9]+}}, i64 %{{[0-9]+}}, i64 %{{[0-9]+}} acquire acquire, align 8
// CHECK:       cmpxchg ptr %{{[0-9]+}}, i64 %{{[0-9]+}}, i64 %{{[0-9]+}} release monotonic, align 8
// CHECK:       cmpxchg ptr %{{[0-9]+}}, i64 %{{[0-9]+}}, i64 %{{[0-9]+}} acq_rel acquire, align 8
// CHECK-NOT:   syncscope
// CHECK:       ret void
func.func @cas(%a: !weft.ptr<i64>, %v: i64, %w: i64) attributes {weft.kernel} {
  %0 = weft.atomic_cas relaxed cta %a, %v, %w : !weft.ptr<i64>
  %1 = weft.atomic_cas acquire gpu %a, %v, %w : !weft.ptr<i64>
  %2 = weft.atomic_cas release sys %a, %v, %w : !weft.ptr<i64>
  %3 = weft.atomic_cas acq_rel cta %a, %v, %w : !weft.ptr<i64>
  return
}
