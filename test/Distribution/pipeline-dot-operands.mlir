// weft-pipeline-dot-operands (passes/WeftToLLVM/PipelineDotOperands.cpp):
// a K loop's dot operands become rings of shared-memory buffers filled by
// weft.async_copy num-stages - 1 iterations ahead. Loops that write memory,
// loads with a nonzero `other`, and operands too large for two stages in
// static shared memory are left alone. The host and gfx942 lower the same
// IR with copies that complete at once.
//
// RUN: weft-opt %s --weft-set-target=target=cuda:90 --weft-pipeline-dot-operands=unroll-rings=false | FileCheck %s
// RUN: weft-opt %s --weft-set-target=target=cuda:90 --weft-pipeline-dot-operands | FileCheck %s --check-prefix=UNROLL
// RUN: weft-opt %s --weft-set-target="target=cuda:90 num-stages=2" --weft-pipeline-dot-operands | FileCheck %s --check-prefix=TWO
// RUN: weft-opt %s --weft-set-target=target=host --weft-pipeline-dot-operands | FileCheck %s --check-prefix=HOST
// A loop's own weft.num_stages (wl.range(..., num_stages=)) wins over the
// module's: two stages, or one (left alone), on every loop of the file.
// RUN: sed 's/^  }$/  } {weft.num_stages = 2 : i32}/' %s | weft-opt --weft-set-target=target=cuda:90 --weft-pipeline-dot-operands | FileCheck %s --check-prefix=TWO
// RUN: sed 's/^  }$/  } {weft.num_stages = 1 : i32}/' %s | weft-opt --weft-set-target=target=cuda:90 --weft-pipeline-dot-operands | FileCheck %s --check-prefix=OWN1
// OWN1-NOT:    weft.alloc_shared
// RUN: weft-compile %s --target=host --emit=so -o %t.so
// RUN: weft-compile %s --target=hip:gfx942 --emit=amdgcn -o %t.s
// RUN: FileCheck %s --check-prefix=GCN < %t.s

// Three buffers per operand; the copies of iterations lb and lb + step
// start in front of the loop, a group each; in the loop, wait for this
// iteration's group (one may stay pending), start lb + 2 steps ahead into
// the buffer the last iteration read, multiply from the current buffers,
// rotate the rings. Copies are masked by the original mask and the bound.
// On sm_90 the buffers of a dot that mma.sync computes take #weft.swizzled
// layouts with rows in order (TargetInfo::mmaOperandLayout): 16-byte
// chunks xor-ed by row, so that ldmatrix's eight rows and the copies'
// runs of a row both fall in distinct banks.
// CHECK-LABEL: func.func @k_loop
// CHECK-COUNT-3: weft.alloc_shared : !weft.shared<16x32xbf16, #weft.swizzled<bytes = 64, warps = 0>>
// CHECK-COUNT-3: weft.alloc_shared : !weft.shared<32x16xbf16, #weft.swizzled<bytes = 32, warps = 0>>
// CHECK:       %[[IN0:.*]] = arith.cmpi slt, %[[LB:.*]], %[[UB:.*]] : i32
// CHECK:       weft.async_copy %{{.*}}, %{{.*}}, mask %{{.*}} : tensor<16x32x!weft.ptr<bf16>>, !weft.shared<16x32xbf16, #weft.swizzled<bytes = 64, warps = 0>>
// CHECK:       weft.async_copy %{{.*}}, %{{.*}}, mask %{{.*}} : tensor<32x16x!weft.ptr<bf16>>, !weft.shared<32x16xbf16, #weft.swizzled<bytes = 32, warps = 0>>
// CHECK-NEXT:  weft.async_commit
// CHECK:       weft.async_copy
// CHECK:       weft.async_copy
// CHECK-NEXT:  weft.async_commit
// CHECK:       scf.for %[[IV:.*]] = %[[LB]] to %[[UB]] step %[[STEP:.*]] iter_args(%[[ACC:.*]] = %{{.*}}, %[[A0:.*]] = %{{.*}}, %[[A1:.*]] = %{{.*}}, %[[A2:.*]] = %{{.*}}, %[[B0:.*]] = %{{.*}}, %[[B1:.*]] = %{{.*}}, %[[B2:.*]] = %{{.*}})
// CHECK-NEXT:    weft.async_wait 1
// CHECK:         %[[AHEAD:.*]] = arith.addi %[[IV]], %{{.*}} : i32
// CHECK:         arith.cmpi slt, %[[AHEAD]], %[[UB]] : i32
// CHECK:         weft.async_copy %{{.*}}, %[[A2]], mask
// CHECK:         weft.async_copy %{{.*}}, %[[B2]], mask
// CHECK-NEXT:    weft.async_commit
// CHECK-NOT:     weft.load
// CHECK:         %[[D:.*]] = weft.dot %[[A0]], %[[B0]], %[[ACC]] : !weft.shared<16x32xbf16, #weft.swizzled<bytes = 64, warps = 0>>, !weft.shared<32x16xbf16, #weft.swizzled<bytes = 32, warps = 0>>, tensor<16x16xf32>
// CHECK-NEXT:    scf.yield %[[D]], %[[A1]], %[[A2]], %[[A0]], %[[B1]], %[[B2]], %[[B0]]
// After the loop every copy completes and the program joins: the rings'
// room is free for what follows (placeSharedBuffers).
// CHECK:       weft.release_shared %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} :
// With cp.async the loop is unrolled by the ring's size: each of the three
// steps copies into and multiplies from fixed buffers, and the rings pass
// through unrotated; the steps left over run in a loop that rotates. The
// bounds are those of the steps that run (lb to max(lb, ub)).
// UNROLL-LABEL:  func.func @k_loop
// UNROLL:        %[[UB:.*]] = arith.maxsi %[[LB:.*]], %{{.*}} : i32
// UNROLL:        scf.for %{{.*}} = %[[LB]] to %[[MID:.*]] step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[A0:.*]] = %{{.*}}, %[[A1:.*]] = %{{.*}}, %[[A2:.*]] = %{{.*}}, %[[B0:.*]] = %{{.*}}, %[[B1:.*]] = %{{.*}}, %[[B2:.*]] = %{{.*}})
// UNROLL:          weft.async_copy %{{.*}}, %[[A2]], mask
// UNROLL:          %[[D0:.*]] = weft.dot %[[A0]], %[[B0]], %[[ACC]]
// UNROLL:          weft.async_copy %{{.*}}, %[[A0]], mask
// UNROLL:          %[[D1:.*]] = weft.dot %[[A1]], %[[B1]], %[[D0]]
// UNROLL:          weft.async_copy %{{.*}}, %[[A1]], mask
// UNROLL:          %[[D2:.*]] = weft.dot %[[A2]], %[[B2]], %[[D1]]
// UNROLL-NEXT:     scf.yield %[[D2]], %[[A0]], %[[A1]], %[[A2]], %[[B0]], %[[B1]], %[[B2]]
// UNROLL:        scf.for %{{.*}} = %[[MID]] to %[[UB]] step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[R0:.*]] = %{{.*}}, %[[R1:.*]] = %{{.*}}, %[[R2:.*]] = %{{.*}}, %[[S0:.*]] = %{{.*}}, %[[S1:.*]] = %{{.*}}, %[[S2:.*]] = %{{.*}})
// UNROLL:          weft.dot %[[R0]], %[[S0]]
// UNROLL-NEXT:     scf.yield %{{.*}}, %[[R1]], %[[R2]], %[[R0]], %[[S1]], %[[S2]], %[[S0]]
// UNROLL:        weft.release_shared
// TWO-LABEL:   func.func @k_loop
// TWO-COUNT-2: weft.alloc_shared : !weft.shared<16x32xbf16, #weft.swizzled<bytes = 64, warps = 0>>
// TWO-NOT:     weft.alloc_shared : !weft.shared<16x32xbf16, #weft.swizzled<bytes = 64, warps = 0>>
// TWO:         weft.release_shared
// HOST-LABEL:  func.func @k_loop
// HOST:        weft.async_copy
// GCN-LABEL:   k_loop:
// GCN:         ds_write
// GCN:         s_barrier
// GCN:         v_fmac_f32
func.func @k_loop(%a: !weft.ptr<bf16>, %b: !weft.ptr<bf16>, %c: !weft.ptr<f32>,
                  %lo: i32, %hi: i32) attributes {weft.kernel} {
  %c32 = arith.constant 32 : i32
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %z = arith.constant 0.0 : bf16
  %rows = arith.constant dense<1024> : tensor<16x1xi32>
  %cols = arith.constant dense<16> : tensor<32x1xi32>
  %r16 = weft.make_range 0, 16 : tensor<16xi32>
  %r32 = weft.make_range 0, 32 : tensor<32xi32>
  %m = weft.expand_dims %r16 axis = 1 : tensor<16xi32> -> tensor<16x1xi32>
  %n = weft.expand_dims %r16 axis = 0 : tensor<16xi32> -> tensor<1x16xi32>
  %sum = scf.for %k = %lo to %hi step %c32 iter_args(%acc = %zero) -> (tensor<16x16xf32>) : i32 {
    // a[m, k..k+31] (rows 1024 apart), masked past hi, zero there
    %ks = weft.splat %k : i32 -> tensor<32xi32>
    %kk = arith.addi %ks, %r32 : tensor<32xi32>
    %mrow = arith.muli %m, %rows : tensor<16x1xi32>
    %kr = weft.expand_dims %kk axis = 0 : tensor<32xi32> -> tensor<1x32xi32>
    %mb = weft.broadcast %mrow : tensor<16x1xi32> -> tensor<16x32xi32>
    %kb = weft.broadcast %kr : tensor<1x32xi32> -> tensor<16x32xi32>
    %aoff = arith.addi %mb, %kb : tensor<16x32xi32>
    %as = weft.splat %a : !weft.ptr<bf16> -> tensor<16x32x!weft.ptr<bf16>>
    %ap = weft.addptr %as, %aoff : tensor<16x32x!weft.ptr<bf16>>, tensor<16x32xi32>
    %his = weft.splat %hi : i32 -> tensor<16x32xi32>
    %amask = arith.cmpi slt, %kb, %his : tensor<16x32xi32>
    %zs = weft.splat %z : bf16 -> tensor<16x32xbf16>
    %x = weft.load %ap, mask %amask, other %zs : tensor<16x32x!weft.ptr<bf16>>
    // b[k..k+31, n] (rows 16 apart)
    %kc = weft.expand_dims %kk axis = 1 : tensor<32xi32> -> tensor<32x1xi32>
    %krow = arith.muli %kc, %cols : tensor<32x1xi32>
    %krb = weft.broadcast %krow : tensor<32x1xi32> -> tensor<32x16xi32>
    %nb = weft.broadcast %n : tensor<1x16xi32> -> tensor<32x16xi32>
    %boff = arith.addi %krb, %nb : tensor<32x16xi32>
    %bs = weft.splat %b : !weft.ptr<bf16> -> tensor<32x16x!weft.ptr<bf16>>
    %bp = weft.addptr %bs, %boff : tensor<32x16x!weft.ptr<bf16>>, tensor<32x16xi32>
    %y = weft.load %bp : tensor<32x16x!weft.ptr<bf16>>
    %d = weft.dot %x, %y, %acc : tensor<16x32xbf16>, tensor<32x16xbf16>, tensor<16x16xf32> -> tensor<16x16xf32>
    scf.yield %d : tensor<16x16xf32>
  }
  %c16 = arith.constant dense<16> : tensor<16x1xi32>
  %mc = arith.muli %m, %c16 : tensor<16x1xi32>
  %mcb = weft.broadcast %mc : tensor<16x1xi32> -> tensor<16x16xi32>
  %ncb = weft.broadcast %n : tensor<1x16xi32> -> tensor<16x16xi32>
  %off = arith.addi %mcb, %ncb : tensor<16x16xi32>
  %cs = weft.splat %c : !weft.ptr<f32> -> tensor<16x16x!weft.ptr<f32>>
  %cp = weft.addptr %cs, %off : tensor<16x16x!weft.ptr<f32>>, tensor<16x16xi32>
  weft.store %cp, %sum : tensor<16x16x!weft.ptr<f32>>
  return
}

// A store in the loop (here of each partial sum) keeps its loads in place,
// as does a load whose masked-off lanes are not zero; the dot's other
// operand still becomes a ring, read beside the tile (a dot may mix them,
// as attention's P V does: P is computed in the loop).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:   weft.async_copy
// CHECK:       weft.store
// CHECK:       weft.alloc_shared : !weft.shared<16x16xbf16, #weft.swizzled<bytes = 32, warps = 0>>
// CHECK:       weft.async_copy
// CHECK:       scf.for
// CHECK:         weft.async_wait 1
// CHECK:         weft.async_copy
// CHECK:         %[[X:.+]] = weft.load {{.*}}, mask {{.*}}, other
// CHECK:         weft.dot %[[X]], %{{.*}}, %{{.*}} : tensor<16x16xbf16>, !weft.shared<16x16xbf16, #weft.swizzled<bytes = 32, warps = 0>>, tensor<16x16xf32>
// CHECK:       weft.release_shared
// CHECK:       return
func.func @left_alone(%a: !weft.ptr<bf16>, %c: !weft.ptr<f32>, %lo: i32, %hi: i32)
    attributes {weft.kernel} {
  %c32 = arith.constant 32 : i32
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %one = arith.constant 1.0 : bf16
  %r16 = weft.make_range 0, 16 : tensor<16xi32>
  %m = weft.expand_dims %r16 axis = 1 : tensor<16xi32> -> tensor<16x1xi32>
  %mb = weft.broadcast %m : tensor<16x1xi32> -> tensor<16x16xi32>
  %cs = weft.splat %c : !weft.ptr<f32> -> tensor<16x16x!weft.ptr<f32>>
  %cp = weft.addptr %cs, %mb : tensor<16x16x!weft.ptr<f32>>, tensor<16x16xi32>
  %sum = scf.for %k = %lo to %hi step %c32 iter_args(%acc = %zero) -> (tensor<16x16xf32>) : i32 {
    %ks = weft.splat %k : i32 -> tensor<16x16xi32>
    %off = arith.addi %ks, %mb : tensor<16x16xi32>
    %as = weft.splat %a : !weft.ptr<bf16> -> tensor<16x16x!weft.ptr<bf16>>
    %ap = weft.addptr %as, %off : tensor<16x16x!weft.ptr<bf16>>, tensor<16x16xi32>
    %x = weft.load %ap : tensor<16x16x!weft.ptr<bf16>>
    %y = weft.load %ap : tensor<16x16x!weft.ptr<bf16>>
    %d = weft.dot %x, %y, %acc : tensor<16x16xbf16>, tensor<16x16xbf16>, tensor<16x16xf32> -> tensor<16x16xf32>
    weft.store %cp, %d : tensor<16x16x!weft.ptr<f32>>
    scf.yield %d : tensor<16x16xf32>
  }
  %sum2 = scf.for %k = %lo to %hi step %c32 iter_args(%acc = %sum) -> (tensor<16x16xf32>) : i32 {
    %ks = weft.splat %k : i32 -> tensor<16x16xi32>
    %off = arith.addi %ks, %mb : tensor<16x16xi32>
    %as = weft.splat %a : !weft.ptr<bf16> -> tensor<16x16x!weft.ptr<bf16>>
    %ap = weft.addptr %as, %off : tensor<16x16x!weft.ptr<bf16>>, tensor<16x16xi32>
    %his = weft.splat %hi : i32 -> tensor<16x16xi32>
    %mask = arith.cmpi slt, %off, %his : tensor<16x16xi32>
    %ones = weft.splat %one : bf16 -> tensor<16x16xbf16>
    %x = weft.load %ap, mask %mask, other %ones : tensor<16x16x!weft.ptr<bf16>>
    %y = weft.load %ap : tensor<16x16x!weft.ptr<bf16>>
    %d = weft.dot %x, %y, %acc : tensor<16x16xbf16>, tensor<16x16xbf16>, tensor<16x16xf32> -> tensor<16x16xf32>
    scf.yield %d : tensor<16x16xf32>
  }
  weft.store %cp, %sum2 : tensor<16x16x!weft.ptr<f32>>
  return
}
