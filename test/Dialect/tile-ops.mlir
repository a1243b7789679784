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
