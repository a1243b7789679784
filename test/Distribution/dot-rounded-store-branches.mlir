// A dot's sums rounded to bf16 and stored from 128 x 256 blocks, as in
// dot-rounded-store-wide.mlir, the K loop in either branch of an scf.if
// (weft.ops.all_gather_matmul's products: this rank's rows from a, the
// others' from the gathered scratch), each branch with its own rings of
// bulk copies (five stages and a spare, 144 KiB). The branches' rings
// share their room (placeSharedBuffers), so the 66 KiB conversion to
// 16-byte rows fits beside them (conversionFits places it as placement
// will), where counting both rings once kept the sums in the
// accumulator's layout and the stores 4 bytes wide.
//
// RUN: weft-opt %s --weft-set-target="target=cuda:90 num-warps=8 num-stages=5" --weft-pipeline-dot-operands --weft-assign-layouts | FileCheck %s
// RUN: weft-compile %s --target=cuda:90 --num-warps=8 --num-stages=5 --emit=ptx -o %t.ptx
// RUN: %ptxas %t.ptx

// CHECK-LABEL:    func.func @rounded_wide_branches
// CHECK:          scf.if
// CHECK-COUNT-6:  weft.alloc_shared {bulk} : !weft.shared<128x32xbf16
// CHECK:          } else {
// CHECK-COUNT-6:  weft.alloc_shared {bulk} : !weft.shared<128x32xbf16
// CHECK:          arith.truncf
// CHECK-NEXT:     weft.convert_layout {{.*}} -> tensor<128x256xbf16, #weft.blocked<{sizePerThread = [1, 8]
// CHECK:          weft.store
func.func @rounded_wide_branches(%a: !weft.tensordesc<128x32xbf16>,
                                 %g: !weft.tensordesc<128x32xbf16>,
                                 %b: !weft.tensordesc<32x256xbf16>, %c: !weft.ptr<bf16>,
                                 %K: i32 {weft.divisibility = 16 : i32}, %mine: i1)
    attributes {weft.kernel} {
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %sum = scf.if %mine -> (tensor<128x256xf32>) {
    %s = scf.for %k0 = %c0 to %K step %c32 iter_args(%acc = %zero) -> (tensor<128x256xf32>) : i32 {
      %x = weft.desc_load %a[%c0, %k0] : !weft.tensordesc<128x32xbf16> -> tensor<128x32xbf16>
      %y = weft.desc_load %b[%k0, %c0] : !weft.tensordesc<32x256xbf16> -> tensor<32x256xbf16>
      %d = weft.dot %x, %y, %acc : tensor<128x32xbf16>, tensor<32x256xbf16>, tensor<128x256xf32> -> tensor<128x256xf32>
      scf.yield %d : tensor<128x256xf32>
    }
    scf.yield %s : tensor<128x256xf32>
  } else {
    %s = scf.for %k0 = %c0 to %K step %c32 iter_args(%acc = %zero) -> (tensor<128x256xf32>) : i32 {
      %x = weft.desc_load %g[%c0, %k0] : !weft.tensordesc<128x32xbf16> -> tensor<128x32xbf16>
      %y = weft.desc_load %b[%k0, %c0] : !weft.tensordesc<32x256xbf16> -> tensor<32x256xbf16>
      %d = weft.dot %x, %y, %acc : tensor<128x32xbf16>, tensor<32x256xbf16>, tensor<128x256xf32> -> tensor<128x256xf32>
      scf.yield %d : tensor<128x256xf32>
    }
    scf.yield %s : tensor<128x256xf32>
  }
  %rm = weft.make_range 0, 128 : tensor<128xi32>
  %rn = weft.make_range 0, 256 : tensor<256xi32>
  %m = weft.expand_dims %rm axis = 1 : tensor<128xi32> -> tensor<128x1xi32>
  %n = weft.expand_dims %rn axis = 0 : tensor<256xi32> -> tensor<1x256xi32>
  %rows = arith.constant dense<256> : tensor<128x1xi32>
  %mc = arith.muli %m, %rows : tensor<128x1xi32>
  %mcb = weft.broadcast %mc : tensor<128x1xi32> -> tensor<128x256xi32>
  %ncb = weft.broadcast %n : tensor<1x256xi32> -> tensor<128x256xi32>
  %off = arith.addi %mcb, %ncb : tensor<128x256xi32>
  %cs = weft.splat %c : !weft.ptr<bf16> -> tensor<128x256x!weft.ptr<bf16>>
  %cp = weft.addptr %cs, %off : tensor<128x256x!weft.ptr<bf16>>, tensor<128x256xi32>
  %r = arith.truncf %sum : tensor<128x256xf32> to tensor<128x256xbf16>
  weft.store %cp, %r : tensor<128x256x!weft.ptr<bf16>>
  return
}
