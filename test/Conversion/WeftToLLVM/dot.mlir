// weft.dot (passes/WeftToLLVM/DotToLLVM.cpp): a and b go to the scratch
// area at their row-major positions (shared memory on GPUs, the stack on
// the host) and the program joins. On sm_90, f16/bf16 with M, N, K
// multiples of 16, 8, 16: the warps share the result's 16x8 tiles, each
// accumulating mma.sync m16n8k16 over k from fragments ldmatrix reads out
// of shared memory, write the products to a second region, join, and
// every thread adds its c elements (@matmul); where c is in the mma
// accumulator layout the sums stay in registers (@accumulate). On gfx942
// such a dot lowers to MFMA 16x16x16 (@accumulate; test/Conversion/WeftToLLVM/mfma.mlir).
// Elsewhere (@matmul_f32, AMDGPU without the accumulator layout, the host)
// every thread runs one loop over k carrying the f32 sums of its result elements
// (fmuladd of widened elements). The layouts: the result takes the
// store's, c follows it, a and b keep the loads'. python/test/ranks runs
// both paths.
//
// RUN: weft-opt %s --weft-set-target=target=cuda:90 --weft-assign-layouts | FileCheck %s --check-prefix=IR
// RUN: weft-opt %s --weft-lower="target=cuda:90" | FileCheck %s --check-prefix=NVVM
// RUN: weft-opt %s --weft-lower="target=host" | FileCheck %s --check-prefix=HOST
// RUN: weft-compile %s --target=cuda:90 --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %ptxas %t.ptx
// RUN: weft-compile %s --target=hip:gfx942 --emit=amdgcn -o %t.s
// RUN: FileCheck %s --check-prefix=GCN < %t.s
// RUN: weft-compile %s --target=host --emit=so -o %t.so

// A dot whose accumulator fits the mma fragments of a grid of the warps
// (here 2 x 2: M a multiple of 16 x 2, N of 8 x 2) gets the mma
// accumulator layout for its result and c (a loop's initial accumulator
// too), so no products go through shared memory: each warp owns 16 rows
// and 16 columns, two 16x8 tiles, whose b fragments one ldmatrix .x4.trans
// reads. @matmul's 32x8 fits no grid of 4 warps.
// IR-LABEL: func.func @accumulate
// IR:       %[[INIT:.*]] = arith.constant dense<0.000000e+00> : tensor<32x32xf32, #[[MMA:weft.blocked<\{sizePerThread = \[1, 2\], threadsPerWarp = \[8, 4\], warpsPerProgram = \[2, 2\], order = \[1, 0\]\}>]]>
// IR:       scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (tensor<32x32xf32, #[[MMA]]>)
// IR:         weft.dot %{{.*}}, %{{.*}}, %[[ACC]] : tensor<32x16xbf16, #{{.*}}>, tensor<16x32xbf16, #{{.*}}>, tensor<32x32xf32, #[[MMA]]> -> tensor<32x32xf32, #[[MMA]]>
// IR-NOT:     weft.convert_layout
// IR:         scf.yield
// NVVM-LABEL: llvm.func @accumulate(
// NVVM:       nvvm.barrier0
// NVVM:       ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// NVVM-COUNT-2: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// NVVM-NOT:   llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<3>
// NVVM:       nvvm.barrier0
// NVVM:       llvm.br
// PTX-LABEL: .entry accumulate(
// PTX:       mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// GCN-LABEL: accumulate:
// GCN:       s_barrier
// GCN:       ds_read_b64
// GCN:       v_mfma_f32_16x16x16_bf16

// IR-LABEL: func.func @matmul
// IR:       %[[D:.*]] = weft.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<32x64xbf16, #{{.*}}>, tensor<64x8xbf16, #{{.*}}>, tensor<32x8xf32, #[[L:weft.blocked<.*>]]> -> tensor<32x8xf32, #[[L]]>
// IR:       weft.store %{{.*}}, %[[D]] : tensor<32x8x!weft.ptr<f32>, #[[L]]>

// Operands go to shared memory as 16-byte vectors (rows padded by 16
// bytes keep every run aligned); the products come back as vectors too.
// A kernel's scratch is in its dynamic shared memory, as large as its
// largest exchange: @matmul's operands, rows padded by 16 bytes,
// (32x(64+8) + 64x(8+8)) bf16 = 6656 bytes, then 32x8 f32 products.
// NVVM-LABEL: llvm.func @matmul(
// NVVM-SAME:  weft.dynamic_shared_bytes = 7680
// NVVM:       llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// NVVM:       nvvm.barrier0
// NVVM:       llvm.inline_asm has_side_effects "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0,$1,$2,$3}, [$4];", "=r,=r,=r,=r,r"
// NVVM:       llvm.inline_asm has_side_effects "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {$0,$1}, [$2];", "=r,=r,r"
// NVVM:       llvm.inline_asm "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, {$10,$11,$12,$13};", "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f"
// NVVM:       llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<3>
// NVVM:       nvvm.barrier0
// NVVM:       llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// NVVM:       llvm.fadd
// NVVM:       nvvm.barrier0
// NVVM-LABEL: llvm.func @matmul_f32(
// NVVM-NOT:   mma.sync
// NVVM:       llvm.intr.fmuladd
// NVVM:       llvm.return

// HOST-LABEL: llvm.func internal @__weft_impl_matmul(
// HOST:       llvm.alloca %{{.*}} x !llvm.array<{{[0-9]+}} x i8> {alignment = 16 : i64} : (i64) -> !llvm.ptr
// HOST-NOT:   __weft_tile_scratch
// HOST:       llvm.intr.fmuladd

// PTX-LABEL: .entry matmul(
// PTX:       ld.global.v4.b32
// PTX:       st.shared.v4.b32
// PTX:       bar.sync
// PTX:       ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX:       mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX:       bar.sync
// PTX-LABEL: .entry matmul_f32(
// PTX:       fma.rn.f32

// GCN-LABEL: matmul:
// GCN:       ds_write
// GCN:       s_barrier
// GCN:       ds_read
// GCN:       v_fmac_f32
// GCN:       s_barrier

func.func @accumulate(%v: bf16, %n: i32, %c: !weft.ptr<f32> {weft.divisibility = 16 : i32})
    attributes {weft.kernel} {
  %x = weft.splat %v : bf16 -> tensor<32x16xbf16>
  %y = weft.splat %v : bf16 -> tensor<16x32xbf16>
  %zero = arith.constant dense<0.0> : tensor<32x32xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<32x32xf32>) : i32 {
    %d = weft.dot %x, %y, %acc : tensor<32x16xbf16>, tensor<16x32xbf16>, tensor<32x32xf32> -> tensor<32x32xf32>
    scf.yield %d : tensor<32x32xf32>
  }
  %rows = weft.reduce %sum axis = 1 : tensor<32x32xf32> -> tensor<32xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    weft.reduce.return %s : f32
  }
  %rm = weft.make_range 0, 32 : tensor<32xi32>
  %cs = weft.splat %c : !weft.ptr<f32> -> tensor<32x!weft.ptr<f32>>
  %cp = weft.addptr %cs, %rm : tensor<32x!weft.ptr<f32>>, tensor<32xi32>
  weft.store %cp, %rows : tensor<32x!weft.ptr<f32>>
  return
}

func.func @matmul(%a: !weft.ptr<bf16> {weft.divisibility = 16 : i32},
                  %b: !weft.ptr<bf16> {weft.divisibility = 16 : i32},
                  %c: !weft.ptr<f32> {weft.divisibility = 16 : i32})
    attributes {weft.kernel} {
  %rm = weft.make_range 0, 32 : tensor<32xi32>
  %rk = weft.make_range 0, 64 : tensor<64xi32>
  %rn = weft.make_range 0, 8 : tensor<8xi32>
  %c64 = arith.constant dense<64> : tensor<32x1xi32>
  %c8 = arith.constant dense<8> : tensor<64x1xi32>
  %c8o = arith.constant dense<8> : tensor<32x1xi32>
  // a[m, k] at a + m * 64 + k
  %m = weft.expand_dims %rm axis = 1 : tensor<32xi32> -> tensor<32x1xi32>
  %mrow = arith.muli %m, %c64 : tensor<32x1xi32>
  %k0 = weft.expand_dims %rk axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %mb = weft.broadcast %mrow : tensor<32x1xi32> -> tensor<32x64xi32>
  %kb = weft.broadcast %k0 : tensor<1x64xi32> -> tensor<32x64xi32>
  %aoff = arith.addi %mb, %kb : tensor<32x64xi32>
  %as = weft.splat %a : !weft.ptr<bf16> -> tensor<32x64x!weft.ptr<bf16>>
  %ap = weft.addptr %as, %aoff : tensor<32x64x!weft.ptr<bf16>>, tensor<32x64xi32>
  %x = weft.load %ap : tensor<32x64x!weft.ptr<bf16>>
  // b[k, n] at b + k * 8 + n
  %k1 = weft.expand_dims %rk axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  %krow = arith.muli %k1, %c8 : tensor<64x1xi32>
  %n0 = weft.expand_dims %rn axis = 0 : tensor<8xi32> -> tensor<1x8xi32>
  %krb = weft.broadcast %krow : tensor<64x1xi32> -> tensor<64x8xi32>
  %nb = weft.broadcast %n0 : tensor<1x8xi32> -> tensor<64x8xi32>
  %boff = arith.addi %krb, %nb : tensor<64x8xi32>
  %bs = weft.splat %b : !weft.ptr<bf16> -> tensor<64x8x!weft.ptr<bf16>>
  %bp = weft.addptr %bs, %boff : tensor<64x8x!weft.ptr<bf16>>, tensor<64x8xi32>
  %y = weft.load %bp : tensor<64x8x!weft.ptr<bf16>>
  // c[m, n] at c + m * 8 + n
  %zero = arith.constant dense<0.0> : tensor<32x8xf32>
  %d = weft.dot %x, %y, %zero : tensor<32x64xbf16>, tensor<64x8xbf16>, tensor<32x8xf32> -> tensor<32x8xf32>
  %mc = arith.muli %m, %c8o : tensor<32x1xi32>
  %mcb = weft.broadcast %mc : tensor<32x1xi32> -> tensor<32x8xi32>
  %ncb = weft.broadcast %n0 : tensor<1x8xi32> -> tensor<32x8xi32>
  %coff = arith.addi %mcb, %ncb : tensor<32x8xi32>
  %cs = weft.splat %c : !weft.ptr<f32> -> tensor<32x8x!weft.ptr<f32>>
  %cp = weft.addptr %cs, %coff : tensor<32x8x!weft.ptr<f32>>, tensor<32x8xi32>
  weft.store %cp, %d : tensor<32x8x!weft.ptr<f32>>
  return
}

func.func @matmul_f32(%v: f32, %c: !weft.ptr<f32> {weft.divisibility = 16 : i32})
    attributes {weft.kernel} {
  %x = weft.splat %v : f32 -> tensor<16x16xf32>
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %d = weft.dot %x, %x, %zero : tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %rows = weft.reduce %d axis = 1 : tensor<16x16xf32> -> tensor<16xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    weft.reduce.return %s : f32
  }
  %rm = weft.make_range 0, 16 : tensor<16xi32>
  %cs = weft.splat %c : !weft.ptr<f32> -> tensor<16x!weft.ptr<f32>>
  %cp = weft.addptr %cs, %rm : tensor<16x!weft.ptr<f32>>, tensor<16xi32>
  weft.store %cp, %rows : tensor<16x!weft.ptr<f32>>
  return
}
