// A dot operand loaded before a pipelined loop (attention's query tile,
// multiplied at every key step) is copied once, where it is loaded, into a
// buffer in the layout a ring of it would have: the products read it in
// place instead of keeping the tile in registers through the loop. Its copy
// group comes first, so a loop's first wait covers it. Every loop that
// multiplies the tile reads the same buffer (a copy per loop kept the
// tile's addresses live through the loops before it), released after the
// last op of the load's block that holds one of them, and the load goes
// once no dot reads it. The host keeps the tile: there a ring beside a
// tile would only grow the code.
//
// RUN: weft-opt %s --weft-set-target="target=cuda:90 num-warps=4" --weft-pipeline-dot-operands | FileCheck %s
// RUN: weft-opt %s --weft-set-target=target=host --weft-pipeline-dot-operands | FileCheck %s --check-prefix=HOST
// RUN: weft-compile %s --target=cuda:90 --num-warps=4 --emit=ptx -o %t.ptx
// RUN: %ptxas %t.ptx

// CHECK-LABEL: func.func @twice
// CHECK-NOT:     weft.load
// CHECK:         %[[QMASK:.*]] = weft.broadcast %{{.*}} : tensor<64x1xi1> -> tensor<64x64xi1>
// CHECK-NEXT:    %[[Q:.*]] = weft.alloc_shared : !weft.shared<64x64xbf16, #weft.swizzled<bytes = 128, warps = 4>>
// CHECK-NEXT:    weft.async_copy %{{.*}}, %[[Q]], mask %[[QMASK]] : tensor<64x64x!weft.ptr<bf16>>
// CHECK-NEXT:    weft.async_commit
// CHECK:         weft.alloc_shared : !weft.shared<64x64xbf16, #weft.swizzled<bytes = 128, warps = 0>>
// CHECK:         scf.for
// CHECK-NEXT:      weft.async_wait 1
// CHECK:           weft.dot %[[Q]], %{{.*}} : !weft.shared<64x64xbf16, #weft.swizzled<bytes = 128, warps = 4>>, !weft.shared<64x64xbf16, #weft.swizzled<bytes = 128, warps = 0>>
// CHECK:         weft.release_shared %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : !weft.shared<64x64xbf16, #weft.swizzled<bytes = 128, warps = 0>>
// CHECK-NOT:     weft.release_shared %[[Q]]
// CHECK-NOT:     weft.async_copy %{{.*}}, %{{.*}}, mask %[[QMASK]] :
// CHECK:           weft.dot %[[Q]], %{{.*}} : !weft.shared
// CHECK:         weft.release_shared %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : !weft.shared<64x64xbf16, #weft.swizzled<bytes = 128, warps = 0>>
// CHECK-NEXT:    weft.release_shared %[[Q]] :
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

// Loops in branches (the sequence-parallel kernel's sources: a key range
// each, maybe empty): one copy where the tile is loaded, released after
// the last branch.
// CHECK-LABEL: func.func @branches
// CHECK:         %[[Q:.*]] = weft.alloc_shared : !weft.shared<64x64xbf16
// CHECK-NEXT:    weft.async_copy %{{.*}}, %[[Q]] :
// CHECK-NEXT:    weft.async_commit
// CHECK:         scf.if
// CHECK:           scf.for
// CHECK:             weft.dot %[[Q]]
// CHECK-NOT:     weft.alloc_shared : !weft.shared<64x64xbf16, #weft.swizzled<bytes = 128, warps = 4>>
// CHECK:         scf.if
// CHECK:           scf.for
// CHECK:             weft.dot %[[Q]]
// CHECK:         } else {
// CHECK-NEXT:      scf.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    weft.release_shared %[[Q]] :
// CHECK-NEXT:    weft.splat %arg2
func.func @branches(%q: !weft.ptr<bf16>, %k: !weft.ptr<bf16>, %out: !weft.ptr<f32>, %hi: i32,
                    %first: i1, %second: i1) attributes {weft.kernel} {
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
  %qt = weft.load %qp : tensor<64x64x!weft.ptr<bf16>>
  %his = weft.splat %hi : i32 -> tensor<64x1xi32>
  %krow = arith.muli %m, %his : tensor<64x1xi32>
  %krb = weft.broadcast %krow : tensor<64x1xi32> -> tensor<64x64xi32>
  %ks = weft.splat %k : !weft.ptr<bf16> -> tensor<64x64x!weft.ptr<bf16>>
  %a = scf.if %first -> (tensor<64x64xf32>) {
    %s = scf.for %j = %c0 to %hi step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
      %js = weft.splat %j : i32 -> tensor<64x64xi32>
      %cols = arith.addi %nb, %js : tensor<64x64xi32>
      %koff = arith.addi %krb, %cols : tensor<64x64xi32>
      %kp = weft.addptr %ks, %koff : tensor<64x64x!weft.ptr<bf16>>, tensor<64x64xi32>
      %kt = weft.load %kp : tensor<64x64x!weft.ptr<bf16>>
      %d = weft.dot %qt, %kt, %acc : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
      scf.yield %d : tensor<64x64xf32>
    }
    scf.yield %s : tensor<64x64xf32>
  } else {
    scf.yield %zero : tensor<64x64xf32>
  }
  %b = scf.if %second -> (tensor<64x64xf32>) {
    %s = scf.for %j = %c0 to %hi step %c64 iter_args(%acc = %a) -> (tensor<64x64xf32>) : i32 {
      %js = weft.splat %j : i32 -> tensor<64x64xi32>
      %cols = arith.addi %nb, %js : tensor<64x64xi32>
      %koff = arith.addi %krb, %cols : tensor<64x64xi32>
      %kp = weft.addptr %ks, %koff : tensor<64x64x!weft.ptr<bf16>>, tensor<64x64xi32>
      %kt = weft.load %kp : tensor<64x64x!weft.ptr<bf16>>
      %d = weft.dot %qt, %kt, %acc : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
      scf.yield %d : tensor<64x64xf32>
    }
    scf.yield %s : tensor<64x64xf32>
  } else {
    scf.yield %a : tensor<64x64xf32>
  }
  %os = weft.splat %out : !weft.ptr<f32> -> tensor<64x64x!weft.ptr<f32>>
  %op = weft.addptr %os, %qoff : tensor<64x64x!weft.ptr<f32>>, tensor<64x64xi32>
  weft.store %op, %b : tensor<64x64x!weft.ptr<f32>>
  return
}
