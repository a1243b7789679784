// Tile ops round-trip (custom and generic form), and compose with upstream
// arith/math on tensors.
// RUN: weft-opt %s | weft-opt | FileCheck %s
// RUN: weft-opt %s --mlir-print-op-generic | weft-opt | FileCheck %s

// CHECK-LABEL: func.func @shapes
func.func @shapes(%p: !weft.ptr<f32>, %x: f32, %n: i32) -> tensor<8x16xf32> {
  // CHECK: weft.make_range 0, 128 : tensor<128xi32>
  %r = weft.make_range 0, 128 : tensor<128xi32>
  // CHECK: weft.splat %{{.*}} : !weft.ptr<f32> -> tensor<128x!weft.ptr<f32>>
  %ps = weft.splat %p : !weft.ptr<f32> -> tensor<128x!weft.ptr<f32>>
  %addrs = weft.addptr %ps, %r : tensor<128x!weft.ptr<f32>>, tensor<128xi32>
  // CHECK: arith.cmpi slt, %{{.*}}, %{{.*}} : tensor<128xi32>
  %ns = weft.splat %n : i32 -> tensor<128xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<128xi32>
  %z = arith.constant dense<0.0> : tensor<128xf32>
  %v = weft.load %addrs, mask %m, other %z : tensor<128x!weft.ptr<f32>>
  // CHECK: math.exp %{{.*}} : tensor<128xf32>
  %e = math.exp %v : tensor<128xf32>
  // CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<128xi1>, tensor<128xf32>
  %s = arith.select %m, %e, %z : tensor<128xi1>, tensor<128xf32>
  // CHECK: arith.sitofp %{{.*}} : tensor<128xi32> to tensor<128xf32>
  %f = arith.sitofp %r : tensor<128xi32> to tensor<128xf32>
  %sum = arith.addf %s, %f : tensor<128xf32>
  // CHECK: weft.reshape %{{.*}} : tensor<128xf32> -> tensor<8x16xf32>
  %t = weft.reshape %sum : tensor<128xf32> -> tensor<8x16xf32>
  return %t : tensor<8x16xf32>
}

// CHECK-LABEL: func.func @two_d
func.func @two_d(%t: tensor<64x128xf32>, %r: tensor<64xi32>, %c: tensor<128xi32>) -> (tensor<64xf32>, i32) {
  // CHECK: weft.expand_dims %{{.*}} axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  %rows = weft.expand_dims %r axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  // CHECK: weft.broadcast %{{.*}} : tensor<64x1xi32> -> tensor<64x128xi32>
  %b = weft.broadcast %rows : tensor<64x1xi32> -> tensor<64x128xi32>
  // CHECK: weft.reduce %{{.*}} axis = 1 : tensor<64x128xf32> -> tensor<64xf32> {
  // CHECK:   arith.addf
  // CHECK:   weft.reduce.return %{{.*}} : f32
  %sums = weft.reduce %t axis = 1 : tensor<64x128xf32> -> tensor<64xf32> {
  ^bb0(%a: f32, %b2: f32):
    %s = arith.addf %a, %b2 : f32
    weft.reduce.return %s : f32
  }
  // CHECK: weft.reduce %{{.*}} axis = 0 : tensor<128xi32> -> i32
  %max = weft.reduce %c axis = 0 : tensor<128xi32> -> i32 {
  ^bb0(%a: i32, %b2: i32):
    %m = arith.maxsi %a, %b2 : i32
    weft.reduce.return %m : i32
  }
  return %sums, %max : tensor<64xf32>, i32
}

// CHECK-LABEL: func.func @layouts
// CHECK-SAME: #weft.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerProgram = [4, 1], order = [1, 0]}>
// CHECK: weft.expand_dims %{{.*}} axis = 1 : tensor<64xi32, #weft.slice<{dim = 1, parent = #weft.blocked
// CHECK: weft.convert_layout
// CHECK: weft.reduce %{{.*}} axis = 1 : {{.*}} -> tensor<64xf32, #weft.slice<{dim = 1
func.func @layouts(%t: tensor<64x128xf32, #weft.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerProgram = [4, 1], order = [1, 0]}>>,
                   %r: tensor<64xi32, #weft.slice<{dim = 1, parent = #weft.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerProgram = [4, 1], order = [1, 0]}>}>>) {
  %e = weft.expand_dims %r axis = 1 : tensor<64xi32, #weft.slice<{dim = 1, parent = #weft.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerProgram = [4, 1], order = [1, 0]}>}>> -> tensor<64x1xi32, #weft.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerProgram = [4, 1], order = [1, 0]}>>
  %c = weft.convert_layout %t : tensor<64x128xf32, #weft.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerProgram = [4, 1], order = [1, 0]}>> -> tensor<64x128xf32, #weft.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerProgram = [1, 4], order = [0, 1]}>>
  %s = weft.reduce %t axis = 1 : tensor<64x128xf32, #weft.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerProgram = [4, 1], order = [1, 0]}>> -> tensor<64xf32, #weft.slice<{dim = 1, parent = #weft.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerProgram = [4, 1], order = [1, 0]}>}>> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maxnumf %a, %b : f32
    weft.reduce.return %m : f32
  }
  return
}

// What weft-pipeline-dot-operands makes of a K loop's operands.
// CHECK-LABEL: func.func @shared_buffers
func.func @shared_buffers(%pa: tensor<16x32x!weft.ptr<bf16>>, %pb: tensor<32x16x!weft.ptr<bf16>>,
                          %m: tensor<16x32xi1>, %c: tensor<16x16xf32>) -> tensor<16x16xf32> {
  // CHECK: %[[A:.*]] = weft.alloc_shared : !weft.shared<16x32xbf16>
  %a = weft.alloc_shared : !weft.shared<16x32xbf16>
  // CHECK: %[[B:.*]] = weft.alloc_shared : !weft.shared<32x16xbf16>
  %b = weft.alloc_shared : !weft.shared<32x16xbf16>
  // CHECK: weft.async_copy %{{.*}}, %[[A]], mask %{{.*}} : tensor<16x32x!weft.ptr<bf16>>, !weft.shared<16x32xbf16>
  weft.async_copy %pa, %a, mask %m : tensor<16x32x!weft.ptr<bf16>>, !weft.shared<16x32xbf16>
  // CHECK: weft.async_copy %{{.*}}, %[[B]] : tensor<32x16x!weft.ptr<bf16>>, !weft.shared<32x16xbf16>
  weft.async_copy %pb, %b : tensor<32x16x!weft.ptr<bf16>>, !weft.shared<32x16xbf16>
  // CHECK: weft.async_commit
  weft.async_commit
  // CHECK: weft.async_wait 0
  weft.async_wait 0
  // CHECK: weft.dot %[[A]], %[[B]], %{{.*}} : !weft.shared<16x32xbf16>, !weft.shared<32x16xbf16>, tensor<16x16xf32> -> tensor<16x16xf32>
  %d = weft.dot %a, %b, %c : !weft.shared<16x32xbf16>, !weft.shared<32x16xbf16>, tensor<16x16xf32> -> tensor<16x16xf32>
  // CHECK: weft.release_shared %[[A]], %[[B]] : !weft.shared<16x32xbf16>, !weft.shared<32x16xbf16>
  weft.release_shared %a, %b : !weft.shared<16x32xbf16>, !weft.shared<32x16xbf16>
  return %d : tensor<16x16xf32>
}

// Buffers in the layouts warpgroup MMA reads.
// CHECK-LABEL: func.func @swizzled_buffers
func.func @swizzled_buffers(%c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // CHECK: weft.alloc_shared : !weft.shared<64x32xbf16, #weft.swizzled<bytes = 64, warps = 4>>
  %a = weft.alloc_shared : !weft.shared<64x32xbf16, #weft.swizzled<bytes = 64, warps = 4>>
  // CHECK: weft.alloc_shared : !weft.shared<32x64xbf16, #weft.swizzled<bytes = 128, warps = 0>>
  %b = weft.alloc_shared : !weft.shared<32x64xbf16, #weft.swizzled<bytes = 128, warps = 0>>
  %d = weft.dot %a, %b, %c : !weft.shared<64x32xbf16, #weft.swizzled<bytes = 64, warps = 4>>, !weft.shared<32x64xbf16, #weft.swizzled<bytes = 128, warps = 0>>, tensor<64x64xf32> -> tensor<64x64xf32>
  // CHECK: weft.dot_wait %{{.*}}, 1 : tensor<64x64xf32>
  %w = weft.dot_wait %d, 1 : tensor<64x64xf32>
  return %w : tensor<64x64xf32>
}

// Tensor descriptors: block accesses and the fields they are computed from.
// CHECK-LABEL: func.func @descriptors
func.func @descriptors(%a: !weft.tensordesc<128x64xbf16>, %c: !weft.tensordesc<2x4x8xi16>,
                       %m: i32, %k: i32) -> (i64, i64) {
  // CHECK: weft.desc_load %{{.*}}[%{{.*}}, %{{.*}}] : !weft.tensordesc<128x64xbf16> -> tensor<128x64xbf16>
  %t = weft.desc_load %a[%m, %k] : !weft.tensordesc<128x64xbf16> -> tensor<128x64xbf16>
  // CHECK: weft.desc_store %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}} : !weft.tensordesc<128x64xbf16>, tensor<128x64xbf16>
  weft.desc_store %a[%k, %m], %t : !weft.tensordesc<128x64xbf16>, tensor<128x64xbf16>
  %u = weft.desc_load %c[%m, %m, %k] : !weft.tensordesc<2x4x8xi16> -> tensor<2x4x8xi16>
  // CHECK: weft.desc_base %{{.*}} : !weft.tensordesc<2x4x8xi16> -> !weft.ptr<i16>
  %p = weft.desc_base %c : !weft.tensordesc<2x4x8xi16> -> !weft.ptr<i16>
  // CHECK: weft.desc_dim %{{.*}}, 2 : !weft.tensordesc<2x4x8xi16>
  %d = weft.desc_dim %c, 2 : !weft.tensordesc<2x4x8xi16>
  // CHECK: weft.desc_stride %{{.*}}, 0 : !weft.tensordesc<128x64xbf16>
  %s = weft.desc_stride %a, 0 : !weft.tensordesc<128x64xbf16>
  return %d, %s : i64, i64
}

// The bulk-copy pipeline's ops (weft-pipeline-dot-operands makes them).
// CHECK-LABEL: func.func @bulk_copies
func.func @bulk_copies(%a: !weft.tensordesc<128x64xbf16>, %m: i32, %go: i1, %parity: i32) {
  // CHECK: %[[B:.*]]:2 = weft.alloc_mbarriers {arrivals = 2 : i32} : !weft.mbarrier, !weft.mbarrier
  %b:2 = weft.alloc_mbarriers {arrivals = 2 : i32} : !weft.mbarrier, !weft.mbarrier
  %buf = weft.alloc_shared : !weft.shared<128x64xbf16, #weft.swizzled<bytes = 128, warps = 8>>
  // CHECK: weft.desc_async_copy %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}}, %[[B]]#1, %{{.*}} : !weft.tensordesc<128x64xbf16>, !weft.shared<128x64xbf16, #weft.swizzled<bytes = 128, warps = 8>>
  weft.desc_async_copy %a[%m, %m], %buf, %b#1, %go : !weft.tensordesc<128x64xbf16>, !weft.shared<128x64xbf16, #weft.swizzled<bytes = 128, warps = 8>>
  // CHECK: weft.mbarrier_wait %[[B]]#1, %{{.*}}
  weft.mbarrier_wait %b#1, %parity
  // CHECK: weft.mbarrier_arrive %[[B]]#0
  weft.mbarrier_arrive %b#0
  // CHECK: weft.async_proxy_fence
  weft.async_proxy_fence
  // CHECK: weft.mbarrier_wait %[[B]]#0, %{{.*}} {copier, join = false}
  weft.mbarrier_wait %b#0, %parity {copier, join = false}
  // CHECK: weft.inval_mbarriers %[[B]]#0, %[[B]]#1 : !weft.mbarrier, !weft.mbarrier
  weft.inval_mbarriers %b#0, %b#1 : !weft.mbarrier, !weft.mbarrier
  return
}

// The language's shape ops, scans and argmax-style reductions.
// CHECK-LABEL: func.func @rearrange
func.func @rearrange(%x: tensor<16x64xf32>, %v: tensor<64xf32>, %i: tensor<64xi32>)
    -> (tensor<64x16xf32>, tensor<64xf32>, tensor<64xf32>, f32, i32, tensor<64xi32>) {
  // CHECK: weft.trans %{{.*}}, [1, 0] : tensor<16x64xf32> -> tensor<64x16xf32>
  %t = weft.trans %x, [1, 0] : tensor<16x64xf32> -> tensor<64x16xf32>
  // CHECK: weft.join %{{.*}}, %{{.*}} : tensor<64xf32> -> tensor<64x2xf32>
  %j = weft.join %v, %v : tensor<64xf32> -> tensor<64x2xf32>
  // CHECK: weft.split %{{.*}} : tensor<64x2xf32> -> tensor<64xf32>
  %a, %b = weft.split %j : tensor<64x2xf32> -> tensor<64xf32>
  // CHECK: weft.flip %{{.*}} axis = 0 : tensor<64xf32>
  %f = weft.flip %a axis = 0 : tensor<64xf32>
  // CHECK: weft.reduce %{{.*}}, %{{.*}} axis = 0 : tensor<64xf32>, tensor<64xi32> -> f32, i32
  %m:2 = weft.reduce %v, %i axis = 0 : tensor<64xf32>, tensor<64xi32> -> f32, i32 {
  ^bb0(%av: f32, %ai: i32, %bv: f32, %bi: i32):
    %gt = arith.cmpf ogt, %av, %bv : f32
    %sv = arith.select %gt, %av, %bv : f32
    %si = arith.select %gt, %ai, %bi : i32
    weft.reduce.return %sv, %si : f32, i32
  }
  // CHECK: weft.scan %{{.*}} axis = 0 reverse : tensor<64xi32> -> tensor<64xi32>
  %c = weft.scan %i axis = 0 reverse : tensor<64xi32> -> tensor<64xi32> {
  ^bb0(%p: i32, %q: i32):
    %s = arith.addi %p, %q : i32
    weft.scan.return %s : i32
  }
  return %t, %f, %b, %m#0, %m#1, %c : tensor<64x16xf32>, tensor<64xf32>, tensor<64xf32>, f32, i32, tensor<64xi32>
}

// Hints, checks, printing, hand-written assembly and access hints.
// CHECK-LABEL: func.func @program_ops
func.func @program_ops(%p: tensor<128x!weft.ptr<f32>>, %o: tensor<128xi32>, %n: i32) {
  // CHECK: weft.axis_hint %{{.*}} {contiguity = array<i64: 128>, divisibility = array<i64: 16>} : tensor<128xi32>
  %h = weft.axis_hint %o {divisibility = array<i64: 16>, contiguity = array<i64: 128>} : tensor<128xi32>
  %zero = arith.constant 0 : i32
  %pos = arith.cmpi sgt, %n, %zero : i32
  // CHECK: weft.assume %{{.*}}
  weft.assume %pos
  // CHECK: weft.assert %{{.*}}, "n is positive"
  weft.assert %pos, "n is positive"
  // CHECK: weft.print "n=", %{{.*}}, %{{.*}} : i32, tensor<128xi32> {hex}
  weft.print "n=", %n, %h : i32, tensor<128xi32> {hex}
  // CHECK: weft.inline_asm "shl.b32 $0, $1, 3;" "=r,r" pure pack 1 %{{.*}} : (tensor<128xi32>) -> tensor<128xi32>
  %s = weft.inline_asm "shl.b32 $0, $1, 3;" "=r,r" pure pack 1 %h : (tensor<128xi32>) -> tensor<128xi32>
  // CHECK: weft.load volatile cache cg evict evict_first %{{.*}} : tensor<128x!weft.ptr<f32>>
  %v = weft.load volatile cache cg evict evict_first %p : tensor<128x!weft.ptr<f32>>
  // CHECK: weft.store cache cs evict evict_last %{{.*}}, %{{.*}} : tensor<128x!weft.ptr<f32>>
  weft.store cache cs evict evict_last %p, %v : tensor<128x!weft.ptr<f32>>
  return
}
