// weft.barrier on sm_90 (docs/memory-model.md, "Barrier"): the CTA joins,
// thread 0 reads the rank's barrier generation (acquire, gpu) and adds one
// to the rank's arrival counter (acq_rel, gpu). The last program to arrive
// resets the counter, adds one to barrier_arrive[rank] in every peer's
// reserved region (release, sys), polls its own barrier_arrive[p] for every
// p (relaxed, sys; then one acquire fence), and publishes the generation
// (release, gpu). The others poll the generation (relaxed, gpu; then an
// acquire fence). The CTA joins again. weft_reserved: barrier_count at 64,
// barrier_gen at 128, barrier_arrive at 192.
//
// RUN: weft-compile %s --target=cuda:90 --emit=ptx -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas %t.ptx

// CHECK-LABEL: .entry barrier(
// CHECK:       bar.sync 0;
// CHECK:       mov.u32 {{%r[0-9]+}}, %tid.x;
// CHECK:       ld.param.b64 [[RESERVED:%rd[0-9]+]], [{{%rd[0-9]+}}+40];
// CHECK-DAG:   add.s64 [[COUNT:%rd[0-9]+]], [[RESERVED]], 64;
// CHECK-DAG:   add.s64 [[GEN:%rd[0-9]+]], [[RESERVED]], 128;
// CHECK:       ld.acquire.gpu.global.b32 [[EPOCH:%r[0-9]+]], [[[RESERVED]]+128];
// CHECK:       atom.acq_rel.gpu.global.add.u32 {{%r[0-9]+}}, [[[COUNT]]], {{%r[0-9]+}};
// Leader: reset, arrive at every peer, wait for every peer, publish.
// CHECK-DAG:   st.relaxed.gpu.global.b32 [[[COUNT]]], 0;
// CHECK-DAG:   atom.release.sys.global.add.u64 {{%rd[0-9]+}}, [{{%rd[0-9]+}}], {{%rd[0-9]+}};
// CHECK-DAG:   ld.relaxed.sys.global.b64 {{%rd[0-9]+}}, [{{%rd[0-9]+}}+192];
// CHECK-DAG:   fence.acquire.sys;
// CHECK-DAG:   st.release.gpu.global.b32 [[[GEN]]], {{%r[0-9]+}};
// Followers: wait for the generation to move.
// CHECK-DAG:   ld.relaxed.gpu.global.b32 {{%r[0-9]+}}, [[[GEN]]];
// CHECK-DAG:   fence.acquire.gpu;
// CHECK:       bar.sync 0;
// CHECK-NEXT:  ret;
func.func @barrier() attributes {weft.kernel} {
  weft.barrier
  return
}

// The barrier orders the program's earlier writes before everything after
// it on every rank: the store is issued before the first join.
// CHECK-LABEL: .entry barrier_orders(
// CHECK:       st.global.b32
// CHECK:       bar.sync 0;
// CHECK:       atom.acq_rel.gpu.global.add.u32
// CHECK:       bar.sync 0;
// CHECK:       ld.global.b32
func.func @barrier_orders(%p: !weft.ptr<i32>, %q: !weft.ptr<i32>, %v: i32)
    attributes {weft.kernel} {
  weft.store %p, %v : !weft.ptr<i32>
  weft.barrier
  %w = weft.load %q : !weft.ptr<i32>
  weft.store %p, %w : !weft.ptr<i32>
  return
}
