// A K loop whose dot reads a as a tile (a masked load whose lanes off
// read 1, which the pipeline leaves in place, as attention's P computed in
// the loop) and b as a ring: on sm_90 b's ring is in warpgroup MMA's
// layout, a is converted to the accumulator's (weft-assign-layouts), and
// each k16 step is one wgmma m64n128k16 with a from four registers (two
// bf16 each: rows g and g + 8 of the thread's quad, columns 2t and 2t + 8
// of the slice) and b from its descriptor; no transpose flag for a. The
// four steps of a 64-wide K need no scratch for a, and no mma.sync.
//
// RUN: weft-compile %s --target=cuda:90 --emit=ptx --num-warps=4 -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas %t.ptx
// RUN: weft-opt %s --weft-set-target="target=cuda:90 num-warps=4" --weft-pipeline-dot-operands --weft-assign-layouts | FileCheck %s --check-prefix=LAYOUT

// LAYOUT-LABEL: func.func @register_a
// LAYOUT:       scf.for
// LAYOUT:         %[[X:.+]] = weft.convert_layout {{.*}} -> tensor<64x64xbf16, #weft.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerProgram = [4, 1], order = [1, 0]}>>
// LAYOUT-NEXT:    weft.dot %[[X]], %{{.*}}, %{{.*}} : tensor<64x64xbf16, #weft.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerProgram = [4, 1], order = [1, 0]}>>, !weft.shared<64x128xbf16, #weft.swizzled<bytes = 128, warps = 0>>

// CHECK-LABEL: .entry register_a(
// CHECK-NOT:   mma.sync
// CHECK:       wgmma.fence.sync.aligned;
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{[{].*[}]}}, {%r{{[0-9]+}},%r{{[0-9]+}},%r{{[0-9]+}},%r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1;
// CHECK:       wgmma.commit_group.sync.aligned;
// CHECK:       wgmma.wait_group.sync.aligned 0;
// CHECK-NOT:   mma.sync
// CHECK:       ret;
func.func @register_a(%a: !weft.ptr<bf16>, %b: !weft.ptr<bf16>, %c: !weft.ptr<f32>, %lo: i32,
                      %hi: i32) attributes {weft.kernel} {
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64x128xf32>
  %one = arith.constant 1.0 : bf16
  %r64 = weft.make_range 0, 64 : tensor<64xi32>
  %r128 = weft.make_range 0, 128 : tensor<128xi32>
  %rows = weft.expand_dims %r64 axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  %cols = weft.expand_dims %r64 axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %ncols = weft.expand_dims %r128 axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  %c64t = arith.constant dense<64> : tensor<64x1xi32>
  %c128t = arith.constant dense<128> : tensor<64x1xi32>
  %arow = arith.muli %rows, %c64t : tensor<64x1xi32>
  %arowb = weft.broadcast %arow : tensor<64x1xi32> -> tensor<64x64xi32>
  %acolb = weft.broadcast %cols : tensor<1x64xi32> -> tensor<64x64xi32>
  %aoff = arith.addi %arowb, %acolb : tensor<64x64xi32>
  %brow = arith.muli %rows, %c128t : tensor<64x1xi32>
  %browb = weft.broadcast %brow : tensor<64x1xi32> -> tensor<64x128xi32>
  %bcolb = weft.broadcast %ncols : tensor<1x128xi32> -> tensor<64x128xi32>
  %boff = arith.addi %browb, %bcolb : tensor<64x128xi32>
  %sum = scf.for %k = %lo to %hi step %c64 iter_args(%acc = %zero) -> (tensor<64x128xf32>) : i32 {
    // a[:, k .. k + 63] (a tile: lanes past hi read 1)
    %ks = weft.splat %k : i32 -> tensor<64x64xi32>
    %kcol = arith.addi %ks, %acolb : tensor<64x64xi32>
    %aidx = arith.addi %aoff, %ks : tensor<64x64xi32>
    %as = weft.splat %a : !weft.ptr<bf16> -> tensor<64x64x!weft.ptr<bf16>>
    %ap = weft.addptr %as, %aidx : tensor<64x64x!weft.ptr<bf16>>, tensor<64x64xi32>
    %his = weft.splat %hi : i32 -> tensor<64x64xi32>
    %amask = arith.cmpi slt, %kcol, %his : tensor<64x64xi32>
    %ones = weft.splat %one : bf16 -> tensor<64x64xbf16>
    %x = weft.load %ap, mask %amask, other %ones : tensor<64x64x!weft.ptr<bf16>>
    // b[k .. k + 63, :] (a ring)
    %kb = arith.muli %k, %c64 : i32
    %kbs = weft.splat %kb : i32 -> tensor<64x128xi32>
    %bidx = arith.addi %boff, %kbs : tensor<64x128xi32>
    %bs = weft.splat %b : !weft.ptr<bf16> -> tensor<64x128x!weft.ptr<bf16>>
    %bp = weft.addptr %bs, %bidx : tensor<64x128x!weft.ptr<bf16>>, tensor<64x128xi32>
    %y = weft.load %bp : tensor<64x128x!weft.ptr<bf16>>
    %d = weft.dot %x, %y, %acc : tensor<64x64xbf16>, tensor<64x128xbf16>, tensor<64x128xf32> -> tensor<64x128xf32>
    scf.yield %d : tensor<64x128xf32>
  }
  %crow = arith.muli %rows, %c128t : tensor<64x1xi32>
  %crowb = weft.broadcast %crow : tensor<64x1xi32> -> tensor<64x128xi32>
  %coff = arith.addi %crowb, %bcolb : tensor<64x128xi32>
  %cs = weft.splat %c : !weft.ptr<f32> -> tensor<64x128x!weft.ptr<f32>>
  %cp = weft.addptr %cs, %coff : tensor<64x128x!weft.ptr<f32>>, tensor<64x128xi32>
  weft.store %cp, %sum : tensor<64x128x!weft.ptr<f32>>
  return
}
