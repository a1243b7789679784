// weft.dot on gfx942 (passes/WeftToLLVM/DotToLLVM.cpp, laneBlockProduct):
// f16 and bf16 dots whose M and N are multiples of 16 per warp and K of 16
// get the MFMA accumulator layout (lane l: rows 4 (l / 16) .. + 3 of
// column l % 16 of each 16x16 tile, sizePerThread [4, 1] over
// threadsPerWarp [4, 16], the four wavefronts in a 2 x 2 grid) and lower to
// v_mfma_f32_16x16x16: per 16 of K every lane loads its row of a as one
// 8-byte ds_read_b64 and its column of b as four 16-bit reads. Here 64x64
// over 2 x 2 wavefronts: 2 x 2 tiles each, four MFMAs per step of K; the
// sums stay in registers (no f32 stores to LDS). f32 dots and shapes that
// do not fit keep the portable loop (test/Conversion/WeftToLLVM/dot.mlir).
//
// RUN: weft-opt %s --weft-set-target=target=hip:gfx942 --weft-assign-layouts | FileCheck %s --check-prefix=IR
// RUN: weft-opt %s --weft-lower="target=hip:gfx942" | FileCheck %s --check-prefix=ROCDL
// RUN: weft-compile %s --target=hip:gfx942 --emit=amdgcn -o %t.s
// RUN: FileCheck %s --check-prefix=GCN < %t.s

// IR-LABEL: func.func @mfma_f16
// IR:       weft.dot {{.*}} -> tensor<64x64xf32, #weft.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 16], warpsPerProgram = [2, 2], order = [1, 0]}>>
// ROCDL-LABEL: llvm.func @mfma_f16(
// ROCDL:       rocdl.barrier
// ROCDL:       llvm.load {{.*}} {alignment = 8 : i64} : !llvm.ptr<3> -> vector<4xf16>
// ROCDL:       rocdl.mfma.f32.16x16x16f16 {{.*}} : (vector<4xf16>, vector<4xf16>, vector<4xf32>, i32, i32, i32) -> vector<4xf32>
// ROCDL:       rocdl.mfma.f32.16x16x16f16
// ROCDL:       llvm.load {{.*}} {alignment = 8 : i64} : !llvm.ptr<3> -> vector<4xf16>
// ROCDL:       rocdl.mfma.f32.16x16x16f16
// ROCDL:       rocdl.mfma.f32.16x16x16f16
// ROCDL-NOT:   llvm.store {{.*}} : f32, !llvm.ptr<3>
// ROCDL:       rocdl.barrier
// Two steps of K, unrolled by LLVM: eight MFMAs.
// GCN-LABEL: mfma_f16:
// GCN:       ds_read2_b64
// GCN-COUNT-8: v_mfma_f32_16x16x16_f16
// GCN-NOT:   v_mfma
// GCN:       s_endpgm
func.func @mfma_f16(%a: !weft.ptr<f16> {weft.divisibility = 16 : i32},
                    %b: !weft.ptr<f16> {weft.divisibility = 16 : i32},
                    %c: !weft.ptr<f32> {weft.divisibility = 16 : i32})
    attributes {weft.kernel} {
  %r64 = weft.make_range 0, 64 : tensor<64xi32>
  %r32 = weft.make_range 0, 32 : tensor<32xi32>
  %c32 = arith.constant dense<32> : tensor<64x1xi32>
  %c64 = arith.constant dense<64> : tensor<32x1xi32>
  %c64m = arith.constant dense<64> : tensor<64x1xi32>
  // a: 64x32 row-major
  %ar = weft.expand_dims %r64 axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  %ac = weft.expand_dims %r32 axis = 0 : tensor<32xi32> -> tensor<1x32xi32>
  %arow = arith.muli %ar, %c32 : tensor<64x1xi32>
  %arb = weft.broadcast %arow : tensor<64x1xi32> -> tensor<64x32xi32>
  %acb = weft.broadcast %ac : tensor<1x32xi32> -> tensor<64x32xi32>
  %aoff = arith.addi %arb, %acb : tensor<64x32xi32>
  %as = weft.splat %a : !weft.ptr<f16> -> tensor<64x32x!weft.ptr<f16>>
  %ap = weft.addptr %as, %aoff : tensor<64x32x!weft.ptr<f16>>, tensor<64x32xi32>
  %x = weft.load %ap : tensor<64x32x!weft.ptr<f16>>
  // b: 32x64 row-major
  %br = weft.expand_dims %r32 axis = 1 : tensor<32xi32> -> tensor<32x1xi32>
  %bc = weft.expand_dims %r64 axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %brow = arith.muli %br, %c64 : tensor<32x1xi32>
  %brb = weft.broadcast %brow : tensor<32x1xi32> -> tensor<32x64xi32>
  %bcb = weft.broadcast %bc : tensor<1x64xi32> -> tensor<32x64xi32>
  %boff = arith.addi %brb, %bcb : tensor<32x64xi32>
  %bs = weft.splat %b : !weft.ptr<f16> -> tensor<32x64x!weft.ptr<f16>>
  %bp = weft.addptr %bs, %boff : tensor<32x64x!weft.ptr<f16>>, tensor<32x64xi32>
  %y = weft.load %bp : tensor<32x64x!weft.ptr<f16>>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = weft.dot %x, %y, %zero : tensor<64x32xf16>, tensor<32x64xf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  // c: 64x64 row-major
  %crow = arith.muli %ar, %c64m : tensor<64x1xi32>
  %crb = weft.broadcast %crow : tensor<64x1xi32> -> tensor<64x64xi32>
  %ccb = weft.broadcast %bc : tensor<1x64xi32> -> tensor<64x64xi32>
  %coff = arith.addi %crb, %ccb : tensor<64x64xi32>
  %cs = weft.splat %c : !weft.ptr<f32> -> tensor<64x64x!weft.ptr<f32>>
  %cp = weft.addptr %cs, %coff : tensor<64x64x!weft.ptr<f32>>, tensor<64x64xi32>
  weft.store %cp, %d : tensor<64x64x!weft.ptr<f32>>
  return
}
