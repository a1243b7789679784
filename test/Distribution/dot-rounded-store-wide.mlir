// A dot's sums rounded to bf16 and stored, in a block too large for static
// shared memory's exchange (weft.ops.matmul's 128 x 256 blocks with a
// 16-bit out, matmul_reduce_scatter's bf16 partials): its exchange, 128
// rows of 256 + 8 bf16 = 67584 bytes, is placed in the kernel's dynamic
// shared memory, which allows a conversion a third of it
// (conversionFits); the rings reserve room for it (ringBudget). So the
// sums still cross shared memory to 16-byte stores, where a warp's stores
// in the accumulator's layout would fill half of each 32-byte sector.
//
// RUN: weft-opt %s --weft-set-target="target=cuda:90 num-warps=8 num-stages=3" --weft-assign-layouts | FileCheck %s --check-prefix=IR
// RUN: weft-compile %s --target=cuda:90 --num-warps=8 --num-stages=3 --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %ptxas %t.ptx

// IR-LABEL: func.func @rounded_wide
// IR:       arith.truncf {{.*}} : tensor<128x256xf32, [[ACC:#weft.blocked<{sizePerThread = \[1, 2\], threadsPerWarp = \[8, 4\].*}>]]> to tensor<128x256xbf16, [[ACC]]>
// IR-NEXT:  weft.convert_layout {{.*}} : tensor<128x256xbf16, [[ACC]]> -> tensor<128x256xbf16, [[ROWS:#weft.blocked<{sizePerThread = \[1, 8\].*}>]]>
// IR-NEXT:  weft.store {{.*}} : tensor<128x256x!weft.ptr<bf16>, [[ROWS]]>
// PTX-LABEL: .entry rounded_wide(
// PTX:       cvt.rn.bf16x2.f32
// PTX-COUNT-64: st.shared.b32
// PTX:       bar.sync 0;
// PTX-COUNT-16: ld.shared.v4.b32
// PTX-COUNT-16: st.global.v4.b32
// PTX-NOT:   st.global
func.func @rounded_wide(%a: !weft.ptr<bf16>, %b: !weft.ptr<bf16>, %c: !weft.ptr<bf16>,
                        %K: i32 {weft.divisibility = 16 : i32}) attributes {weft.kernel} {
  // a: 128 x K, b: K x 256, c: 128 x 256 bf16, row-major.
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %rm = weft.make_range 0, 128 : tensor<128xi32>
  %rn = weft.make_range 0, 256 : tensor<256xi32>
  %rk = weft.make_range 0, 32 : tensor<32xi32>
  %m = weft.expand_dims %rm axis = 1 : tensor<128xi32> -> tensor<128x1xi32>
  %Ks = weft.splat %K : i32 -> tensor<128x1xi32>
  %mrow = arith.muli %m, %Ks : tensor<128x1xi32>
  %as = weft.splat %a : !weft.ptr<bf16> -> tensor<128x1x!weft.ptr<bf16>>
  %arow = weft.addptr %as, %mrow : tensor<128x1x!weft.ptr<bf16>>, tensor<128x1xi32>
  %abase = weft.broadcast %arow : tensor<128x1x!weft.ptr<bf16>> -> tensor<128x32x!weft.ptr<bf16>>
  %n = weft.expand_dims %rn axis = 0 : tensor<256xi32> -> tensor<1x256xi32>
  %nb = weft.broadcast %n : tensor<1x256xi32> -> tensor<32x256xi32>
  %bs = weft.splat %b : !weft.ptr<bf16> -> tensor<32x256x!weft.ptr<bf16>>
  %bcol = weft.addptr %bs, %nb : tensor<32x256x!weft.ptr<bf16>>, tensor<32x256xi32>
  %width = arith.constant dense<256> : tensor<32x1xi32>
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %sum = scf.for %k0 = %c0 to %K step %c32 iter_args(%acc = %zero) -> (tensor<128x256xf32>) : i32 {
    %ks = weft.splat %k0 : i32 -> tensor<32xi32>
    %kk = arith.addi %ks, %rk : tensor<32xi32>
    %kr = weft.expand_dims %kk axis = 0 : tensor<32xi32> -> tensor<1x32xi32>
    %krb = weft.broadcast %kr : tensor<1x32xi32> -> tensor<128x32xi32>
    %ap = weft.addptr %abase, %krb : tensor<128x32x!weft.ptr<bf16>>, tensor<128x32xi32>
    %x = weft.load %ap : tensor<128x32x!weft.ptr<bf16>>
    %kc = weft.expand_dims %kk axis = 1 : tensor<32xi32> -> tensor<32x1xi32>
    %kcr = arith.muli %kc, %width : tensor<32x1xi32>
    %kcb = weft.broadcast %kcr : tensor<32x1xi32> -> tensor<32x256xi32>
    %bp = weft.addptr %bcol, %kcb : tensor<32x256x!weft.ptr<bf16>>, tensor<32x256xi32>
    %y = weft.load %bp : tensor<32x256x!weft.ptr<bf16>>
    %d = weft.dot %x, %y, %acc : tensor<128x32xbf16>, tensor<32x256xbf16>, tensor<128x256xf32> -> tensor<128x256xf32>
    scf.yield %d : tensor<128x256xf32>
  }
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
