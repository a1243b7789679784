// Tile accesses on sm_90 and gfx942: 16-byte vectors where the axis
// analysis proves contiguity and alignment, scalar accesses where it cannot,
// ordered tiles as relaxed vectors plus fences, 64-bit reductions through
// two 32-bit shuffles, and layout conversions through shared memory.
//
// RUN: weft-compile %s --target=cuda:90 --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=NV < %t.ptx
// RUN: %ptxas %t.ptx
// RUN: weft-compile %s --target=hip:gfx942 --emit=amdgcn -o %t.s
// RUN: FileCheck %s --check-prefix=AMD < %t.s

// Acquire tile load = relaxed vector loads, an acquire fence, a program
// barrier; release tile store = barrier, release fence, relaxed vector
// stores. The translate costs one heap-base pair for the whole tile.
// NV-LABEL: .entry ordered(
// NV:       ld.relaxed.sys.global.v4.b32 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [%rd{{[0-9]+}}];
// NV:       fence.acquire.sys;
// NV-NEXT:  bar.sync 0;
// NV-COUNT-2: ld.param.b64 {{.*}}+40];
// NV:       bar.sync 0;
// NV-NEXT:  fence.release.sys;
// NV:       st.relaxed.sys.global.v4.b32 [%rd{{[0-9]+}}], {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}};
// NV-NOT:   ld.param.b64
// NV:       ret;
// AMD-LABEL: ordered:
// AMD:       global_load_dwordx4 v[{{[0-9]+}}:{{[0-9]+}}], v{{[0-9]+}}, s[{{[0-9]+}}:{{[0-9]+}}] sc0 sc1
// AMD:       buffer_inv sc0 sc1
// AMD:       s_barrier
// AMD:       buffer_wbl2 sc0 sc1
// AMD:       global_store_dwordx4 {{.*}} sc0 sc1
func.func @ordered(%flags: !weft.ptr<i32>, %out: !weft.ptr<i32>, %peer: i32) attributes {weft.kernel} {
  %r = weft.make_range 0, 512 : tensor<512xi32>
  %fs = weft.splat %flags : !weft.ptr<i32> -> tensor<512x!weft.ptr<i32>>
  %fp = weft.addptr %fs, %r : tensor<512x!weft.ptr<i32>>, tensor<512xi32>
  %v = weft.load acquire sys %fp : tensor<512x!weft.ptr<i32>>
  %os = weft.splat %out : !weft.ptr<i32> -> tensor<512x!weft.ptr<i32>>
  %op = weft.addptr %os, %r : tensor<512x!weft.ptr<i32>>, tensor<512xi32>
  %remote = weft.translate %op, %peer : tensor<512x!weft.ptr<i32>>
  weft.store release sys %remote, %v : tensor<512x!weft.ptr<i32>>
  return
}

// x is only known to be 4-byte aligned: its loads are scalar. The load and
// the store want different layouts: the value goes through shared memory,
// while the offsets are computed again in each layout (no exchange).
// NV-LABEL: .entry unaligned(
// NV-NOT:   ld.global.v
// NV-COUNT-4: ld.global.b32
// NV:       st.shared.b32
// NV:       bar.sync 0;
// NV:       ld.shared.v4.b32
// NV:       bar.sync 0;
// NV-NEXT:  st.global.v4.b32
// AMD-LABEL: unaligned:
// AMD-NOT:   global_load_dwordx4
// AMD:       global_load_dword v
// AMD:       ds_write{{.*}}_b32
// AMD:       s_barrier
// AMD:       ds_read_b128
// AMD:       global_store_dwordx4
func.func @unaligned(%x: !weft.ptr<f32> {weft.divisibility = 4 : i64}, %y: !weft.ptr<f32>) attributes {weft.kernel} {
  %r = weft.make_range 0, 512 : tensor<512xi32>
  %xs = weft.splat %x : !weft.ptr<f32> -> tensor<512x!weft.ptr<f32>>
  %xp = weft.addptr %xs, %r : tensor<512x!weft.ptr<f32>>, tensor<512xi32>
  %v = weft.load %xp : tensor<512x!weft.ptr<f32>>
  %ys = weft.splat %y : !weft.ptr<f32> -> tensor<512x!weft.ptr<f32>>
  %yp = weft.addptr %ys, %r : tensor<512x!weft.ptr<f32>>, tensor<512xi32>
  weft.store %yp, %v : tensor<512x!weft.ptr<f32>>
  return
}

// Eight halves per thread travel as one v4.b32; a relaxed gpu-scope store.
// NV-LABEL: .entry halves(
// NV:       ld.global.v4.b32
// NV:       st.relaxed.gpu.global.v4.b32
// AMD-LABEL: halves:
// AMD:       global_load_dwordx4
// AMD:       global_store_dwordx4
func.func @halves(%x: !weft.ptr<f16>, %y: !weft.ptr<f16>) attributes {weft.kernel} {
  %r = weft.make_range 0, 1024 : tensor<1024xi32>
  %xs = weft.splat %x : !weft.ptr<f16> -> tensor<1024x!weft.ptr<f16>>
  %xp = weft.addptr %xs, %r : tensor<1024x!weft.ptr<f16>>, tensor<1024xi32>
  %v = weft.load %xp : tensor<1024x!weft.ptr<f16>>
  %ys = weft.splat %y : !weft.ptr<f16> -> tensor<1024x!weft.ptr<f16>>
  %yp = weft.addptr %ys, %r : tensor<1024x!weft.ptr<f16>>, tensor<1024xi32>
  weft.store relaxed gpu %yp, %v : tensor<1024x!weft.ptr<f16>>
  return
}

// A 1-D i64 sum: in-thread adds, five butterfly steps (each two 32-bit
// shuffles) across the warp, then the four warps' partials through shared
// memory. The scalar result is the same in every thread.
// NV-LABEL: .entry total(
// NV:       ld.global.v2.b64
// NV-COUNT-2: shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
// NV-COUNT-2: shfl.sync.bfly.b32 {{.*}}, 2, 31, -1;
// NV-COUNT-2: shfl.sync.bfly.b32 {{.*}}, 4, 31, -1;
// NV-COUNT-2: shfl.sync.bfly.b32 {{.*}}, 8, 31, -1;
// NV-COUNT-2: shfl.sync.bfly.b32 {{.*}}, 16, 31, -1;
// NV:       st.shared.b64
// NV:       bar.sync 0;
// NV:       ld.shared.v2.b64
// NV:       bar.sync 0;
// NV:       st.global.b64
// AMD-LABEL: total:
// AMD:       global_load_dwordx4
// AMD-COUNT-12: ds_bpermute_b32
// AMD:       ds_write_b64
// AMD:       s_barrier
func.func @total(%x: !weft.ptr<i64>, %out: !weft.ptr<i64>) attributes {weft.kernel} {
  %r = weft.make_range 0, 1024 : tensor<1024xi32>
  %xs = weft.splat %x : !weft.ptr<i64> -> tensor<1024x!weft.ptr<i64>>
  %xp = weft.addptr %xs, %r : tensor<1024x!weft.ptr<i64>>, tensor<1024xi32>
  %v = weft.load %xp : tensor<1024x!weft.ptr<i64>>
  %s = weft.reduce %v axis = 0 : tensor<1024xi64> -> i64 {
  ^bb0(%a: i64, %b: i64):
    %t = arith.addi %a, %b : i64
    weft.reduce.return %t : i64
  }
  weft.store %out, %s : !weft.ptr<i64>
  return
}

// Atomics on a tile: one per element, under the mask, by the element's one
// owner: 16 elements over 128 threads are replicated, so only the threads
// holding the first copy add, and the old values reach the copies through
// shared memory.
// NV-LABEL: .entry small_atomic(
// NV-COUNT-4: atom.relaxed.sys.global.add.u32
// NV:       st.shared.v4.b32
// NV:       bar.sync 0;
// NV:       ld.shared.v4.b32
// NV:       bar.sync 0;
// AMD-LABEL: small_atomic:
// AMD-COUNT-4: global_atomic_add v{{[0-9]+}}, v[{{[0-9]+}}:{{[0-9]+}}], v{{[0-9]+}}, off{{.*}} sc0 sc1
// AMD:       ds_write_b128
// AMD:       s_barrier
func.func @small_atomic(%counts: !weft.ptr<i32>, %old: !weft.ptr<i32>,
                            %n: i32, %peer: i32) attributes {weft.kernel} {
  %rank = weft.rank : i32
  %c1 = arith.constant 1 : i32
  %inc = arith.addi %rank, %c1 : i32
  %r = weft.make_range 0, 16 : tensor<16xi32>
  %ns = weft.splat %n : i32 -> tensor<16xi32>
  %mask = arith.cmpi slt, %r, %ns : tensor<16xi32>
  %cs = weft.splat %counts : !weft.ptr<i32> -> tensor<16x!weft.ptr<i32>>
  %cp = weft.addptr %cs, %r : tensor<16x!weft.ptr<i32>>, tensor<16xi32>
  %remote = weft.translate %cp, %peer : tensor<16x!weft.ptr<i32>>
  %incs = weft.splat %inc : i32 -> tensor<16xi32>
  %prev = weft.atomic_rmw add relaxed sys %remote, %incs, mask %mask : tensor<16x!weft.ptr<i32>>
  %os = weft.splat %old : !weft.ptr<i32> -> tensor<16x!weft.ptr<i32>>
  %op = weft.addptr %os, %r : tensor<16x!weft.ptr<i32>>, tensor<16xi32>
  weft.store %op, %prev, mask %mask : tensor<16x!weft.ptr<i32>>
  return
}

// A tail mask `k0 + arange < K`, K and k0 multiples of 16: the axis
// analysis proves its bits equal over every 4-element group (runs of
// consecutive values from multiples of 4 against a bound that is a
// multiple of 16), so each group is one vector load under one branch on
// its first bit, not four compares and four scalar loads. Against an
// unaligned bound (%n, no divisibility) the bits may differ within a
// group: per-element loads remain for the groups that are not whole.
// NV-LABEL: .entry tail_mask(
// NV:       setp.ge.s32
// NV-NOT:   setp
// NV:       @%p{{[0-9]+}} bra
// NV-NOT:   ld.global.b32
// NV:       ld.global.v4.b32
// NV-NOT:   ld.global.b32
// NV:       st.global.v4.b32
// NV-LABEL: .entry tail_mask_unaligned(
// NV:       ld.global.v4.b32
// NV:       ld.global.b32
// NV:       ret;
func.func @tail_mask(%x: !weft.ptr<f32>, %y: !weft.ptr<f32>,
                     %k0: i32 {weft.divisibility = 16 : i32},
                     %K: i32 {weft.divisibility = 16 : i32}) attributes {weft.kernel} {
  %r = weft.make_range 0, 512 : tensor<512xi32>
  %ks = weft.splat %k0 : i32 -> tensor<512xi32>
  %k = arith.addi %ks, %r : tensor<512xi32>
  %Ks = weft.splat %K : i32 -> tensor<512xi32>
  %m = arith.cmpi slt, %k, %Ks : tensor<512xi32>
  %xs = weft.splat %x : !weft.ptr<f32> -> tensor<512x!weft.ptr<f32>>
  %xp = weft.addptr %xs, %k : tensor<512x!weft.ptr<f32>>, tensor<512xi32>
  %v = weft.load %xp, mask %m : tensor<512x!weft.ptr<f32>>
  %ys = weft.splat %y : !weft.ptr<f32> -> tensor<512x!weft.ptr<f32>>
  %yp = weft.addptr %ys, %r : tensor<512x!weft.ptr<f32>>, tensor<512xi32>
  weft.store %yp, %v : tensor<512x!weft.ptr<f32>>
  return
}
func.func @tail_mask_unaligned(%x: !weft.ptr<f32>, %y: !weft.ptr<f32>, %n: i32) attributes {weft.kernel} {
  %r = weft.make_range 0, 512 : tensor<512xi32>
  %ns = weft.splat %n : i32 -> tensor<512xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<512xi32>
  %xs = weft.splat %x : !weft.ptr<f32> -> tensor<512x!weft.ptr<f32>>
  %xp = weft.addptr %xs, %r : tensor<512x!weft.ptr<f32>>, tensor<512xi32>
  %v = weft.load %xp, mask %m : tensor<512x!weft.ptr<f32>>
  %ys = weft.splat %y : !weft.ptr<f32> -> tensor<512x!weft.ptr<f32>>
  %yp = weft.addptr %ys, %r : tensor<512x!weft.ptr<f32>>, tensor<512xi32>
  weft.store %yp, %v : tensor<512x!weft.ptr<f32>>
  return
}

// Relaxed f32 additions whose old values nobody reads are reductions: on
// sm_90 a thread's aligned run of four is one red.global.add.v4.f32 (under
// one branch where the mask bits of each run are equal), where it cannot
// prove the run (the unaligned bound) or reads the old values, one atomic
// per element. gfx942 has no vector form: one atomic per element.
// NV-LABEL: .entry partial_sums(
// NV-NOT:   atom.
// NV:       @%p{{[0-9]+}} bra
// NV:       red.relaxed.gpu.global.add.v4.f32 [%rd{{[0-9]+}}], {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}};
// NV-NOT:   atom.
// NV:       ret;
// NV-LABEL: .entry partial_sums_scalar(
// NV-NOT:   red.relaxed
// NV:       atom.relaxed.gpu.global.add.f32
// NV-NOT:   red.relaxed
// NV:       ret;
// AMD-LABEL: partial_sums:
// AMD-NOT:   global_atomic_pk
// AMD:       global_atomic_add_f32
func.func @partial_sums(%sums: !weft.ptr<f32>, %x: !weft.ptr<f32>,
                        %n: i32 {weft.divisibility = 16 : i32}) attributes {weft.kernel} {
  %r = weft.make_range 0, 512 : tensor<512xi32>
  %ns = weft.splat %n : i32 -> tensor<512xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<512xi32>
  %xs = weft.splat %x : !weft.ptr<f32> -> tensor<512x!weft.ptr<f32>>
  %xp = weft.addptr %xs, %r : tensor<512x!weft.ptr<f32>>, tensor<512xi32>
  %v = weft.load %xp : tensor<512x!weft.ptr<f32>>
  %ss = weft.splat %sums : !weft.ptr<f32> -> tensor<512x!weft.ptr<f32>>
  %sp = weft.addptr %ss, %r : tensor<512x!weft.ptr<f32>>, tensor<512xi32>
  %old = weft.atomic_rmw fadd relaxed gpu %sp, %v, mask %m : tensor<512x!weft.ptr<f32>>
  return
}
func.func @partial_sums_scalar(%sums: !weft.ptr<f32>, %x: !weft.ptr<f32>, %n: i32) attributes {weft.kernel} {
  %r = weft.make_range 0, 512 : tensor<512xi32>
  %ns = weft.splat %n : i32 -> tensor<512xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<512xi32>
  %xs = weft.splat %x : !weft.ptr<f32> -> tensor<512x!weft.ptr<f32>>
  %xp = weft.addptr %xs, %r : tensor<512x!weft.ptr<f32>>, tensor<512xi32>
  %v = weft.load %xp : tensor<512x!weft.ptr<f32>>
  %ss = weft.splat %sums : !weft.ptr<f32> -> tensor<512x!weft.ptr<f32>>
  %sp = weft.addptr %ss, %r : tensor<512x!weft.ptr<f32>>, tensor<512xi32>
  %old = weft.atomic_rmw fadd relaxed gpu %sp, %v, mask %m : tensor<512x!weft.ptr<f32>>
  return
}
