// RUN: weft-opt %s | weft-opt | FileCheck %s
// RUN: weft-opt %s --mlir-print-op-generic | weft-opt | FileCheck %s

// CHECK-LABEL: func.func @queries
func.func @queries() -> (i32, i32, i32, i32) {
  // CHECK: weft.rank : i32
  %r = weft.rank : i32
  // CHECK: weft.num_ranks : i32
  %n = weft.num_ranks : i32
  // CHECK: weft.program_id y : i32
  %p = weft.program_id y : i32
  // CHECK: weft.num_programs z : i32
  %q = weft.num_programs z : i32
  return %r, %n, %p, %q : i32, i32, i32, i32
}

// CHECK-LABEL: func.func @node_layout
func.func @node_layout() -> (i32, i32, i32) {
  // CHECK: weft.local_rank : i32
  %l = weft.local_rank : i32
  // CHECK: weft.local_size : i32
  %s = weft.local_size : i32
  // CHECK: weft.node : i32
  %n = weft.node : i32
  return %l, %s, %n : i32, i32, i32
}

// CHECK-LABEL: func.func @transfers
func.func @transfers(%d: !weft.ptr<bf16>, %s: !weft.ptr<bf16>, %flag: !weft.ptr<i64>,
                     %n: i64, %peer: i32, %v: i64) {
  // CHECK: weft.put %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : !weft.ptr<bf16>, !weft.ptr<bf16>{{$}}
  weft.put %d, %s, %n, %peer : !weft.ptr<bf16>, !weft.ptr<bf16>
  // CHECK: weft.put %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} signal add %{{.*}}, %{{.*}} : !weft.ptr<bf16>, !weft.ptr<bf16>, !weft.ptr<i64>
  weft.put %d, %s, %n, %peer signal add %flag, %v : !weft.ptr<bf16>, !weft.ptr<bf16>, !weft.ptr<i64>
  // CHECK: weft.get %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : !weft.ptr<bf16>, !weft.ptr<bf16>
  weft.get %d, %s, %n, %peer : !weft.ptr<bf16>, !weft.ptr<bf16>
  // CHECK: weft.quiet
  weft.quiet
  // CHECK: weft.signal set release sys %{{.*}}, %{{.*}} peer %{{.*}} : !weft.ptr<i64>
  weft.signal set release sys %flag, %v peer %peer : !weft.ptr<i64>
  return
}

// CHECK-LABEL: func.func @addressing
func.func @addressing(%p: !weft.ptr<f32>, %ps: tensor<128x!weft.ptr<f32>>,
                      %off: i32, %offs: tensor<128xi64>, %peer: i32) {
  // CHECK: weft.addptr %{{.*}}, %{{.*}} : !weft.ptr<f32>, i32
  %a = weft.addptr %p, %off : !weft.ptr<f32>, i32
  // CHECK: weft.addptr %{{.*}}, %{{.*}} : tensor<128x!weft.ptr<f32>>, tensor<128xi64>
  %b = weft.addptr %ps, %offs : tensor<128x!weft.ptr<f32>>, tensor<128xi64>
  // CHECK: weft.translate %{{.*}}, %{{.*}} : !weft.ptr<f32>
  %c = weft.translate %a, %peer : !weft.ptr<f32>
  // CHECK: weft.translate %{{.*}}, %{{.*}} : tensor<128x!weft.ptr<f32>>
  %d = weft.translate %b, %peer : tensor<128x!weft.ptr<f32>>
  // CHECK: weft.multicast %{{.*}} : !weft.ptr<f32>
  %m = weft.multicast %p : !weft.ptr<f32>
  return
}

// CHECK-LABEL: func.func @loads_stores
func.func @loads_stores(%p: !weft.ptr<f32>, %ps: tensor<64x!weft.ptr<f16>>,
                        %mask: tensor<64xi1>, %other: tensor<64xf16>,
                        %v: f32) {
  // CHECK: weft.load %{{.*}} : !weft.ptr<f32>
  %0 = weft.load %p : !weft.ptr<f32>
  // CHECK: weft.load relaxed gpu %{{.*}} : !weft.ptr<f32>
  %1 = weft.load relaxed gpu %p : !weft.ptr<f32>
  // CHECK: weft.load acquire sys %{{.*}} : !weft.ptr<f32>
  %2 = weft.load acquire sys %p : !weft.ptr<f32>
  // CHECK: weft.load acquire cta %{{.*}} : !weft.ptr<f32>
  %3 = weft.load acquire cta %p : !weft.ptr<f32>
  // CHECK: weft.load %{{.*}}, mask %{{.*}}, other %{{.*}} : tensor<64x!weft.ptr<f16>>
  %4 = weft.load %ps, mask %mask, other %other : tensor<64x!weft.ptr<f16>>
  // CHECK: weft.store %{{.*}}, %{{.*}} : !weft.ptr<f32>
  weft.store %p, %v : !weft.ptr<f32>
  // CHECK: weft.store release gpu %{{.*}}, %{{.*}} : !weft.ptr<f32>
  weft.store release gpu %p, %v : !weft.ptr<f32>
  // CHECK: weft.store relaxed cta %{{.*}}, %{{.*}} : !weft.ptr<f32>
  weft.store relaxed cta %p, %v : !weft.ptr<f32>
  // CHECK: weft.store %{{.*}}, %{{.*}}, mask %{{.*}} : tensor<64x!weft.ptr<f16>>
  weft.store %ps, %4, mask %mask : tensor<64x!weft.ptr<f16>>
  return
}

// CHECK-LABEL: func.func @atomics
func.func @atomics(%pi: !weft.ptr<i32>, %pf: !weft.ptr<f32>, %pl: !weft.ptr<i64>,
                   %ps: tensor<32x!weft.ptr<i32>>, %vs: tensor<32xi32>,
                   %m: tensor<32xi1>, %i: i32, %f: f32, %l: i64) {
  // CHECK: weft.atomic_rmw add acq_rel gpu %{{.*}}, %{{.*}} : !weft.ptr<i32>
  %0 = weft.atomic_rmw add acq_rel gpu %pi, %i : !weft.ptr<i32>
  // CHECK: weft.atomic_rmw fadd relaxed sys %{{.*}}, %{{.*}} : !weft.ptr<f32>
  %1 = weft.atomic_rmw fadd relaxed sys %pf, %f : !weft.ptr<f32>
  // CHECK: weft.atomic_rmw max acquire cta
  %2 = weft.atomic_rmw max acquire cta %pi, %i : !weft.ptr<i32>
  // CHECK: weft.atomic_rmw umin release gpu
  %3 = weft.atomic_rmw umin release gpu %pl, %l : !weft.ptr<i64>
  // CHECK: weft.atomic_rmw and relaxed gpu
  %4 = weft.atomic_rmw and relaxed gpu %pi, %i : !weft.ptr<i32>
  // CHECK: weft.atomic_rmw or relaxed gpu
  %5 = weft.atomic_rmw or relaxed gpu %pi, %i : !weft.ptr<i32>
  // CHECK: weft.atomic_rmw xor relaxed gpu
  %6 = weft.atomic_rmw xor relaxed gpu %pi, %i : !weft.ptr<i32>
  // CHECK: weft.atomic_rmw xchg acq_rel sys %{{.*}}, %{{.*}} : !weft.ptr<f32>
  %7 = weft.atomic_rmw xchg acq_rel sys %pf, %f : !weft.ptr<f32>
  // CHECK: weft.atomic_rmw add relaxed gpu %{{.*}}, %{{.*}}, mask %{{.*}} : tensor<32x!weft.ptr<i32>>
  %8 = weft.atomic_rmw add relaxed gpu %ps, %vs, mask %m : tensor<32x!weft.ptr<i32>>
  // CHECK: weft.atomic_rmw umax relaxed gpu
  %9 = weft.atomic_rmw umax relaxed gpu %pi, %i : !weft.ptr<i32>
  // CHECK: weft.atomic_rmw min relaxed gpu
  %10 = weft.atomic_rmw min relaxed gpu %pl, %l : !weft.ptr<i64>
  // CHECK: weft.atomic_cas acq_rel sys %{{.*}}, %{{.*}}, %{{.*}} : !weft.ptr<i64>
  %11 = weft.atomic_cas acq_rel sys %pl, %l, %l : !weft.ptr<i64>
  // CHECK: weft.fence acq_rel sys
  weft.fence acq_rel sys
  // CHECK: weft.fence seq_cst gpu
  weft.fence seq_cst gpu
  return
}

// CHECK-LABEL: func.func @sync
func.func @sync(%flag: !weft.ptr<i64>, %f32: !weft.ptr<i32>, %v: i64, %w: i32) -> i64 {
  // CHECK: weft.signal set release sys %{{.*}}, %{{.*}} : !weft.ptr<i64>
  weft.signal set release sys %flag, %v : !weft.ptr<i64>
  // CHECK: weft.signal add relaxed gpu %{{.*}}, %{{.*}} : !weft.ptr<i32>
  weft.signal add relaxed gpu %f32, %w : !weft.ptr<i32>
  // CHECK: weft.wait ge acquire sys %{{.*}}, %{{.*}} : !weft.ptr<i64>
  %seen = weft.wait ge acquire sys %flag, %v : !weft.ptr<i64>
  // CHECK: weft.wait ne relaxed gpu
  %0 = weft.wait ne relaxed gpu %f32, %w : !weft.ptr<i32>
  // CHECK: weft.barrier
  weft.barrier
  // CHECK: weft.dependency_wait
  weft.dependency_wait
  return %seen : i64
}

// CHECK-LABEL: func.func @multimem
func.func @multimem(%p: !weft.ptr<bf16>, %q: !weft.ptr<f32>, %r: !weft.ptr<i32>,
                    %v: vector<4xf32>, %i: i32) {
  %mp = weft.multicast %p : !weft.ptr<bf16>
  %mq = weft.multicast %q : !weft.ptr<f32>
  %mr = weft.multicast %r : !weft.ptr<i32>
  // CHECK: weft.multimem_ld_reduce add relaxed sys %{{.*}} : !weft.ptr<bf16, multicast> -> vector<8xbf16>
  %0 = weft.multimem_ld_reduce add relaxed sys %mp : !weft.ptr<bf16, multicast> -> vector<8xbf16>
  // CHECK: weft.multimem_ld_reduce max acquire sys %{{.*}} : !weft.ptr<bf16, multicast> -> vector<2xbf16>
  %1 = weft.multimem_ld_reduce max acquire sys %mp : !weft.ptr<bf16, multicast> -> vector<2xbf16>
  // CHECK: weft.multimem_ld_reduce umin weak sys %{{.*}} : !weft.ptr<i32, multicast> -> i32
  %2 = weft.multimem_ld_reduce umin weak sys %mr : !weft.ptr<i32, multicast> -> i32
  // CHECK: weft.multimem_store relaxed sys %{{.*}}, %{{.*}} : !weft.ptr<f32, multicast>, vector<4xf32>
  weft.multimem_store relaxed sys %mq, %v : !weft.ptr<f32, multicast>, vector<4xf32>
  // CHECK: weft.multimem_red add release sys %{{.*}}, %{{.*}} : !weft.ptr<i32, multicast>, i32
  weft.multimem_red add release sys %mr, %i : !weft.ptr<i32, multicast>, i32
  return
}
