// A dot operand loaded before a pipelined loop (attention's query tile,
// multiplied at every key step) is copied once, before the loop, into a
// buffer in the layout a ring of it would have: the products read it in
// place instead of keeping the tile in registers through the loop. Its copy
// group comes first, so the first step's wait covers it, and is masked off
// where the loop runs no step; the rings' release after the loop releases
// it too. Each loop that multiplies the
// tile stages its own copy (the buffer of the first is free by the time
// the second runs), and the load goes once no dot reads it. The host
// keeps the tile: there a ring beside a tile would only grow the code.
//
// RUN: weft-opt %s --weft-set-target="target=cuda:90 num-warps=4" --weft-pipeline-dot-operands | FileCheck %s
// RUN: weft-opt %s --weft-set-target=target=host --weft-pipeline-dot-operands | FileCheck %s --check-prefix=HOST
// RUN: weft-compile %s --target=cuda:90 --num-warps=4 --emit=ptx -o %t.ptx
// RUN: %ptxas %t.ptx

// CHECK-LABEL: func.func @twice
// CHECK-NOT:     weft.load
// CHECK:         %[[Q1:.*]] = weft.alloc_shared : !weft.shared<64x64xbf16, #weft.swizzled<bytes = 128, warps = 4>>
// CHECK:         %[[RUNS:.*]] = arith.cmpi slt, %c0_i32, %arg4 : i32
// CHECK:         %[[STEPS:.*]] = weft.splat %[[RUNS]] : i1 -> tensor<64x64xi1>
// CHECK:         %[[MASK:.*]] = arith.andi %{{.*}}, %[[STEPS]] : tensor<64x64xi1>
// CHECK-NEXT:    weft.async_copy %{{.*}}, %[[Q1]], mask %[[MASK]] : tensor<64x64x!weft.ptr<bf16>>
// CHECK-NEXT:    weft.async_commit
// CHECK:         weft.alloc_shared : !weft.shared<64x64xbf16, #weft.swizzled<bytes = 128, warps = 0>>
// CHECK:         scf.for
// CHECK-NEXT:      weft.async_wait 1
// CHECK:           weft.dot %[[Q1]], %{{.*}} : !weft.shared<64x64xbf16, #weft.swizzled<bytes = 128, warps = 4>>, !weft.shared<64x64xbf16, #weft.swizzled<bytes = 128, warps = 0>>
// CHECK:         weft.release_shared %[[Q1]], {{.*}}
// CHECK:         %[[Q2:.*]] = weft.alloc_shared : !weft.shared<64x64xbf16, #weft.swizzled<bytes = 128, warps = 4>>
// CHECK:         weft.async_copy %{{.*}}, %[[Q2]], mask
// CHECK:         scf.for
// CHECK:           weft.dot %[[Q2]], %{{.*}} : !weft.shared
// CHECK:         weft.release_shared %[[Q2]], {{.*}}
// CHECK-NOT:     weft.load
// CHECK:         return

// HOST-LABEL:  func.func @twice
// HOST:          weft.load %{{.*}}, mask
// HOST-NOT:      weft.alloc_shared
func.func @twice(%q: !weft.ptr<bf16>, %k: !weft.ptr<bf16>, %out: !weft.ptr<f32>, %rows: i32,
                 %mid: i32, %hi: i32) attributes {weft.kernel} {
  // q: rows x 64, the first 64 rows, masked past `rows`; k: 64 x hi,
  // columns k.. k+63 of each step; out: 64 x 64.
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %w = arith.constant dense<64> : tensor<64x1xi32>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %r = weft.make_range 0, 64 : tensor<64xi32>
  %m = weft.expand_dims %r axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  %n = weft.expand_dims %r axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %mrow = arith.muli %m, %w : tensor<64x1xi32>
  %mb = weft.broadcast %mrow : tensor<64x1xi32> -> tensor<64x64xi32>
  %nb = weft.broadcast %n : tensor<1x64xi32> -> tensor<64x64xi32>
  %qoff = arith.addi %mb, %nb : tensor<64x64xi32>
  %qs = weft.splat %q : !weft.ptr<bf16> -> tensor<64x64x!weft.ptr<bf16>>
  %qp = weft.addptr %qs, %qoff : tensor<64x64x!weft.ptr<bf16>>, tensor<64x64xi32>
  %rs = weft.splat %rows : i32 -> tensor<64x1xi32>
  %inside = arith.cmpi slt, %m, %rs : tensor<64x1xi32>
  %qmask = weft.broadcast %inside : tensor<64x1xi1> -> tensor<64x64xi1>
  %qt = weft.load %qp, mask %qmask : tensor<64x64x!weft.ptr<bf16>>
  %his = weft.splat %hi : i32 -> tensor<64x1xi32>
  %krow = arith.muli %m, %his : tensor<64x1xi32>
  %krb = weft.broadcast %krow : tensor<64x1xi32> -> tensor<64x64xi32>
  %ks = weft.splat %k : !weft.ptr<bf16> -> tensor<64x64x!weft.ptr<bf16>>
  %first = scf.for %j = %c0 to %mid step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
    %js = weft.splat %j : i32 -> tensor<64x64xi32>
    %cols = arith.addi %nb, %js : tensor<64x64xi32>
    %koff = arith.addi %krb, %cols : tensor<64x64xi32>
    %kp = weft.addptr %ks, %koff : tensor<64x64x!weft.ptr<bf16>>, tensor<64x64xi32>
    %kt = weft.load %kp : tensor<64x64x!weft.ptr<bf16>>
    %d = weft.dot %qt, %kt, %acc : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %second = scf.for %j = %mid to %hi step %c64 iter_args(%acc = %first) -> (tensor<64x64xf32>) : i32 {
    %js = weft.splat %j : i32 -> tensor<64x64xi32>
    %cols = arith.addi %nb, %js : tensor<64x64xi32>
    %koff = arith.addi %krb, %cols : tensor<64x64xi32>
    %kp = weft.addptr %ks, %koff : tensor<64x64x!weft.ptr<bf16>>, tensor<64x64xi32>
    %kt = weft.load %kp : tensor<64x64x!weft.ptr<bf16>>
    %d = weft.dot %qt, %kt, %acc : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %os = weft.splat %out : !weft.ptr<f32> -> tensor<64x64x!weft.ptr<f32>>
  %op = weft.addptr %os, %qoff : tensor<64x64x!weft.ptr<f32>>, tensor<64x64xi32>
  weft.store %op, %second : tensor<64x64x!weft.ptr<f32>>
  return
}
