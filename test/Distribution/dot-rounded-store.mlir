// A dot's sums rounded to bf16 and stored (weft.ops.matmul with a 16-bit
// out). In the accumulator's layout a warp would write eight rows of 16
// bytes per store, half of each 32-byte sector; so the rounded sums cross
// shared memory instead (an f32 store keeps the accumulator's layout,
// dot-k-loop.mlir): each thread rounds its pairs and writes them as 4-byte
// words into rows padded by 16 bytes (64 x 144 bytes, so the eight rows
// of a store fall in distinct banks), the program joins, and every thread
// reads 16 bytes of a row and stores them whole. That exchange (9216
// bytes) takes the room of the K loop's rings, free after the loop: the
// kernel's dynamic shared memory is the rings' 33776 bytes.
//
// RUN: weft-opt %s --weft-set-target=target=cuda:90 --weft-assign-layouts | FileCheck %s --check-prefix=IR
// RUN: weft-opt %s --weft-lower="target=cuda:90" | FileCheck %s --check-prefix=LLVM
// RUN: weft-compile %s --target=cuda:90 --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %ptxas %t.ptx

// IR-LABEL: func.func @rounded
// IR-NOT:   weft.convert_layout
// IR:       arith.truncf {{.*}} : tensor<64x64xf32, [[ACC:#weft.blocked<{sizePerThread = \[1, 2\], threadsPerWarp = \[8, 4\], warpsPerProgram = \[2, 2\], order = \[1, 0\]}>]]> to tensor<64x64xbf16, [[ACC]]>
// IR-NEXT:  weft.convert_layout {{.*}} : tensor<64x64xbf16, [[ACC]]> -> tensor<64x64xbf16, [[ROWS:#weft.blocked<{sizePerThread = \[1, 8\], threadsPerWarp = \[4, 8\], warpsPerProgram = \[4, 1\], order = \[1, 0\]}>]]>
// IR-NEXT:  weft.store {{.*}} : tensor<64x64x!weft.ptr<bf16>, [[ROWS]]>
// PTX-LABEL: .entry rounded(
// LLVM:      weft.dynamic_shared_bytes = 33776
// PTX:       cvt.rn.bf16x2.f32
// PTX-COUNT-16: st.shared.b32
// PTX:       bar.sync 0;
// PTX-COUNT-4: ld.shared.v4.b32
// PTX-COUNT-4: st.global.v4.b32
// PTX-NOT:   st.global
func.func @rounded(%a: !weft.ptr<bf16>, %b: !weft.ptr<bf16>, %c: !weft.ptr<bf16>,
                  %K: i32 {weft.divisibility = 16 : i32},
                  %k_lo: i32 {weft.divisibility = 16 : i32}) attributes {weft.kernel} {
  // a: 64 x K, b: K x 64, c: 64 x 64 bf16, row-major.
  %c32 = arith.constant 32 : i32
  %rm = weft.make_range 0, 64 : tensor<64xi32>
  %rk = weft.make_range 0, 32 : tensor<32xi32>
  %m = weft.expand_dims %rm axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  %Ks = weft.splat %K : i32 -> tensor<64x1xi32>
  %mrow = arith.muli %m, %Ks : tensor<64x1xi32>
  %as = weft.splat %a : !weft.ptr<bf16> -> tensor<64x1x!weft.ptr<bf16>>
  %arow = weft.addptr %as, %mrow : tensor<64x1x!weft.ptr<bf16>>, tensor<64x1xi32>
  %abase = weft.broadcast %arow : tensor<64x1x!weft.ptr<bf16>> -> tensor<64x32x!weft.ptr<bf16>>
  %n = weft.expand_dims %rm axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %nb = weft.broadcast %n : tensor<1x64xi32> -> tensor<32x64xi32>
  %bs = weft.splat %b : !weft.ptr<bf16> -> tensor<32x64x!weft.ptr<bf16>>
  %bcol = weft.addptr %bs, %nb : tensor<32x64x!weft.ptr<bf16>>, tensor<32x64xi32>
  %width = arith.constant dense<64> : tensor<32x1xi32>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %sum = scf.for %k0 = %k_lo to %K step %c32 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
    %ks = weft.splat %k0 : i32 -> tensor<32xi32>
    %kk = arith.addi %ks, %rk : tensor<32xi32>
    %kr = weft.expand_dims %kk axis = 0 : tensor<32xi32> -> tensor<1x32xi32>
    %krb = weft.broadcast %kr : tensor<1x32xi32> -> tensor<64x32xi32>
    %ap = weft.addptr %abase, %krb : tensor<64x32x!weft.ptr<bf16>>, tensor<64x32xi32>
    %x = weft.load %ap : tensor<64x32x!weft.ptr<bf16>>
    %kc = weft.expand_dims %kk axis = 1 : tensor<32xi32> -> tensor<32x1xi32>
    %kcr = arith.muli %kc, %width : tensor<32x1xi32>
    %kcb = weft.broadcast %kcr : tensor<32x1xi32> -> tensor<32x64xi32>
    %bp = weft.addptr %bcol, %kcb : tensor<32x64x!weft.ptr<bf16>>, tensor<32x64xi32>
    %y = weft.load %bp : tensor<32x64x!weft.ptr<bf16>>
    %d = weft.dot %x, %y, %acc : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %rows = arith.constant dense<64> : tensor<64x1xi32>
  %mc = arith.muli %m, %rows : tensor<64x1xi32>
  %mcb = weft.broadcast %mc : tensor<64x1xi32> -> tensor<64x64xi32>
  %ncb = weft.broadcast %n : tensor<1x64xi32> -> tensor<64x64xi32>
  %off = arith.addi %mcb, %ncb : tensor<64x64xi32>
  %cs = weft.splat %c : !weft.ptr<bf16> -> tensor<64x64x!weft.ptr<bf16>>
  %cp = weft.addptr %cs, %off : tensor<64x64x!weft.ptr<bf16>>, tensor<64x64xi32>
  %r = arith.truncf %sum : tensor<64x64xf32> to tensor<64x64xbf16>
  weft.store %cp, %r : tensor<64x64x!weft.ptr<bf16>>
  return
}
