// f32 tiles rounded to 16-bit floats go in pairs: one vector fptrunc for
// every two elements a thread holds, which NVPTX selects as one packed
// cvt.rn.{b}f16x2.f32, with a scalar rounding for an odd one left over.
// @pairs: 64x64 over four warps, 32 elements a thread. @odd: a tile of
// one element.
//
// RUN: weft-opt %s --weft-lower="target=cuda:90" | FileCheck %s --check-prefix=LLVM
// RUN: weft-compile %s --target=cuda:90 --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %ptxas %t.ptx

// LLVM-LABEL: llvm.func @pairs(
// LLVM-COUNT-16: llvm.fptrunc %{{[0-9]+}} : vector<2xf32> to vector<2xbf16>
// LLVM-COUNT-16: llvm.fptrunc %{{[0-9]+}} : vector<2xf32> to vector<2xf16>
// LLVM-NOT:   llvm.fptrunc
// LLVM-LABEL: llvm.func @odd(
// LLVM:       llvm.fptrunc %{{[0-9]+}} : f32 to bf16
// PTX-LABEL: .entry pairs(
// PTX-COUNT-16: cvt.rn.bf16x2.f32
// PTX-COUNT-16: cvt.rn.f16x2.f32
// PTX-NOT:   cvt.rn.bf16.f32
// PTX-LABEL: .entry odd(
// PTX:       cvt.rn.bf16.f32
func.func @pairs(%x: !weft.ptr<f32>, %b: !weft.ptr<bf16>, %h: !weft.ptr<f16>)
    attributes {weft.kernel} {
  %r = weft.make_range 0, 64 : tensor<64xi32>
  %rows = weft.expand_dims %r axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  %cols = weft.expand_dims %r axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %c64 = arith.constant dense<64> : tensor<64x1xi32>
  %base = arith.muli %rows, %c64 : tensor<64x1xi32>
  %bb = weft.broadcast %base : tensor<64x1xi32> -> tensor<64x64xi32>
  %cb = weft.broadcast %cols : tensor<1x64xi32> -> tensor<64x64xi32>
  %offs = arith.addi %bb, %cb : tensor<64x64xi32>
  %xs = weft.splat %x : !weft.ptr<f32> -> tensor<64x64x!weft.ptr<f32>>
  %xp = weft.addptr %xs, %offs : tensor<64x64x!weft.ptr<f32>>, tensor<64x64xi32>
  %v = weft.load %xp : tensor<64x64x!weft.ptr<f32>>
  %vb = arith.truncf %v : tensor<64x64xf32> to tensor<64x64xbf16>
  %vh = arith.truncf %v : tensor<64x64xf32> to tensor<64x64xf16>
  %bs = weft.splat %b : !weft.ptr<bf16> -> tensor<64x64x!weft.ptr<bf16>>
  %bp = weft.addptr %bs, %offs : tensor<64x64x!weft.ptr<bf16>>, tensor<64x64xi32>
  weft.store %bp, %vb : tensor<64x64x!weft.ptr<bf16>>
  %hs = weft.splat %h : !weft.ptr<f16> -> tensor<64x64x!weft.ptr<f16>>
  %hp = weft.addptr %hs, %offs : tensor<64x64x!weft.ptr<f16>>, tensor<64x64xi32>
  weft.store %hp, %vh : tensor<64x64x!weft.ptr<f16>>
  return
}

func.func @odd(%x: !weft.ptr<f32>, %b: !weft.ptr<bf16>) attributes {weft.kernel} {
  %r = weft.make_range 0, 1 : tensor<1xi32>
  %xs = weft.splat %x : !weft.ptr<f32> -> tensor<1x!weft.ptr<f32>>
  %xp = weft.addptr %xs, %r : tensor<1x!weft.ptr<f32>>, tensor<1xi32>
  %v = weft.load %xp : tensor<1x!weft.ptr<f32>>
  %vb = arith.truncf %v : tensor<1xf32> to tensor<1xbf16>
  %bs = weft.splat %b : !weft.ptr<bf16> -> tensor<1x!weft.ptr<bf16>>
  %bp = weft.addptr %bs, %r : tensor<1x!weft.ptr<bf16>>, tensor<1xi32>
  weft.store %bp, %vb : tensor<1x!weft.ptr<bf16>>
  return
}
