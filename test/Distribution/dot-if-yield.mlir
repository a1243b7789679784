// A dot's sums computed either of two ways (an scf.if whose branches
// multiply different operands) and stored: the if's result keeps the
// accumulator's layout that both branches' dots produce, so the store
// writes the sums from the registers they were summed in. Before, the
// if's result took the store's coalesced layout and each branch
// converted its sums through shared memory (for a fused GEMM's 128x256
// f32 block, 128 KiB of scratch: more than there is).
//
// RUN: weft-opt %s --weft-set-target=target=cuda:90 --weft-assign-layouts | FileCheck %s
// RUN: weft-compile %s --target=cuda:90 --emit=ptx -o %t.ptx
// RUN: %ptxas %t.ptx

// CHECK-LABEL: func.func @either
// CHECK-NOT:   weft.convert_layout
// CHECK:       scf.if {{.*}} -> (tensor<64x64xf32, [[ACC:#weft.blocked<{sizePerThread = \[1, 2\], threadsPerWarp = \[8, 4\], warpsPerProgram = \[2, 2\], order = \[1, 0\]}>]]>)
// CHECK-NOT:   weft.convert_layout
// CHECK:       weft.store {{.*}} : tensor<64x64x!weft.ptr<f32>, [[ACC]]>
func.func @either(%a: !weft.ptr<bf16>, %other: !weft.ptr<bf16>, %b: !weft.ptr<bf16>,
                  %c: !weft.ptr<f32>, %cond: i1) attributes {weft.kernel} {
  // a and other: 64 x 32, b: 32 x 64, c: 64 x 64, row-major.
  %rm = weft.make_range 0, 64 : tensor<64xi32>
  %rk = weft.make_range 0, 32 : tensor<32xi32>
  %m = weft.expand_dims %rm axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  %n = weft.expand_dims %rm axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %kr = weft.expand_dims %rk axis = 0 : tensor<32xi32> -> tensor<1x32xi32>
  %kc = weft.expand_dims %rk axis = 1 : tensor<32xi32> -> tensor<32x1xi32>
  %w32 = arith.constant dense<32> : tensor<64x1xi32>
  %w64 = arith.constant dense<64> : tensor<32x1xi32>
  %arow = arith.muli %m, %w32 : tensor<64x1xi32>
  %arowb = weft.broadcast %arow : tensor<64x1xi32> -> tensor<64x32xi32>
  %krb = weft.broadcast %kr : tensor<1x32xi32> -> tensor<64x32xi32>
  %aoff = arith.addi %arowb, %krb : tensor<64x32xi32>
  %brow = arith.muli %kc, %w64 : tensor<32x1xi32>
  %browb = weft.broadcast %brow : tensor<32x1xi32> -> tensor<32x64xi32>
  %nb = weft.broadcast %n : tensor<1x64xi32> -> tensor<32x64xi32>
  %boff = arith.addi %browb, %nb : tensor<32x64xi32>
  %bs = weft.splat %b : !weft.ptr<bf16> -> tensor<32x64x!weft.ptr<bf16>>
  %bp = weft.addptr %bs, %boff : tensor<32x64x!weft.ptr<bf16>>, tensor<32x64xi32>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %sums = scf.if %cond -> (tensor<64x64xf32>) {
    %as = weft.splat %a : !weft.ptr<bf16> -> tensor<64x32x!weft.ptr<bf16>>
    %ap = weft.addptr %as, %aoff : tensor<64x32x!weft.ptr<bf16>>, tensor<64x32xi32>
    %x = weft.load %ap : tensor<64x32x!weft.ptr<bf16>>
    %y = weft.load %bp : tensor<32x64x!weft.ptr<bf16>>
    %d = weft.dot %x, %y, %zero : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  } else {
    %os = weft.splat %other : !weft.ptr<bf16> -> tensor<64x32x!weft.ptr<bf16>>
    %op = weft.addptr %os, %aoff : tensor<64x32x!weft.ptr<bf16>>, tensor<64x32xi32>
    %x = weft.load %op : tensor<64x32x!weft.ptr<bf16>>
    %y = weft.load %bp : tensor<32x64x!weft.ptr<bf16>>
    %d = weft.dot %x, %y, %zero : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %mc = arith.muli %m, %w32 : tensor<64x1xi32>
  %w2 = arith.constant dense<2> : tensor<64x1xi32>
  %mc64 = arith.muli %mc, %w2 : tensor<64x1xi32>
  %mcb = weft.broadcast %mc64 : tensor<64x1xi32> -> tensor<64x64xi32>
  %ncb = weft.broadcast %n : tensor<1x64xi32> -> tensor<64x64xi32>
  %coff = arith.addi %mcb, %ncb : tensor<64x64xi32>
  %cs = weft.splat %c : !weft.ptr<f32> -> tensor<64x64x!weft.ptr<f32>>
  %cp = weft.addptr %cs, %coff : tensor<64x64x!weft.ptr<f32>>, tensor<64x64xi32>
  weft.store %cp, %sums : tensor<64x64x!weft.ptr<f32>>
  return
}
