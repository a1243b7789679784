// A K loop of weft.dot as weft.ops.matmul writes it. The induction
// variable's divisibility (lower bound and step) proves a's offsets
// aligned, so both operands move as 16-byte pieces; the row and column
// offsets are computed again in each layout that needs them instead of
// crossing shared memory; and the result is stored from the accumulator's
// registers (the addresses take its layout). weft-pipeline-dot-operands
// (first pass of weft-lower) turns the loads into cp.async copies into
// three-stage shared-memory rings: two groups start before the loop, each
// step waits for its own, fences it for the async proxy, joins once,
// starts the copies two steps ahead and multiplies in place, with no other
// shared-memory store and no other join. The loop is unrolled by the
// rings' size (four buffers with wgmma, three with mma.sync), so every step
// addresses fixed buffers; a remainder loop runs the steps left over. The copies' masks (the loop's
// bound) are whole per 16-byte group, so each is one cp.async that reads
// 16 bytes or none (zeros), with no branch. With four warps (one warpgroup)
// the rings are #weft.swizzled and the product is wgmma m64n64k16 from
// descriptors, two per step; with two warps it is ldmatrix + mma.sync
// from padded rows, the accumulator in the fragments of a 2x1 warp grid.
//
// RUN: weft-opt %s --weft-set-target=target=cuda:90 --weft-assign-layouts | FileCheck %s --check-prefix=IR
// RUN: weft-opt %s --weft-lower="target=cuda:90" | FileCheck %s --check-prefix=LLVM
// RUN: weft-compile %s --target=cuda:90 --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %ptxas %t.ptx
// RUN: weft-compile %s --target=cuda:90 --emit=ptx --num-warps=2 -o %t.mma.ptx
// RUN: FileCheck %s --check-prefix=MMA < %t.mma.ptx
// RUN: %ptxas %t.mma.ptx
// RUN: weft-compile %s --target=cuda:90 --emit=ptx --num-stages=1 | FileCheck %s --check-prefix=NOPIPE

// --num-stages=1 (num_stages=1 at launch) keeps the loads and the dot's
// own exchange through the scratch area (padded rows, mma.sync).
// NOPIPE-LABEL: .entry k_loop(
// NOPIPE-NOT:   cp.async
// NOPIPE:       ld.global.v4.b32
// NOPIPE:       st.shared.v4.b32
// NOPIPE:       bar.sync 0;
// NOPIPE:       mma.sync

// Without the rings (no pipelining) the accumulator takes mma.sync's
// layout, the warps in a 2x2 grid.
// IR-LABEL: func.func @k_loop
// IR-NOT:   weft.convert_layout
// IR:       weft.store {{.*}} : tensor<64x64x!weft.ptr<f32>, #weft.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerProgram = [2, 2], order = [1, 0]}>>

// Four buffers of 64x32 + 32x64 bf16 per ring, unpadded (32768 bytes):
// three stages and a spare, since each step's wgmma stays in flight while
// the next one starts (weft.dot_wait 1) and still reads its buffers. And
// 1008 bytes more to align the rings to 1024 (the 128-byte swizzle's
// period) from the 16 the dynamic area guarantees: 33776 bytes of dynamic
// shared memory, which the kernel's launches ask for (the "kernels"
// artifact).
// The accumulator is the warpgroup's: each warp 8 rows of every 32.
// LLVM:      llvm.mlir.global external @__weft_dynamic_shared() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// LLVM:      llvm.func @k_loop({{.*}} weft.dynamic_shared_bytes = 33776 : i64
// PTX:       .target sm_90a
// PTX:       .extern .shared .align 16 .b8 __weft_dynamic_shared[];
// PTX-LABEL: .entry k_loop(
// PTX-NOT:   ld.global
// PTX-NOT:   bar.sync
// PTX-COUNT-4: cp.async.cg.shared.global [%r{{[0-9]+}}{{(\+[0-9]+)?}}], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};
// PTX:       cp.async.commit_group;
// PTX-COUNT-4: cp.async.cg.shared.global [%r{{[0-9]+}}{{(\+[0-9]+)?}}], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};
// PTX:       cp.async.commit_group;
// PTX-NOT:   ldmatrix
// PTX:       cp.async.wait_group 1;
// PTX-NEXT:  // begin inline asm
// PTX-NEXT:  fence.proxy.async.shared::cta;
// PTX-NEXT:  // end inline asm
// PTX-NEXT:  bar.sync 0;
// PTX-NOT:   bar.sync
// PTX-COUNT-4: cp.async.cg.shared.global [%r{{[0-9]+}}{{(\+[0-9]+)?}}], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};
// PTX:       cp.async.commit_group;
// PTX-NOT:   bar.sync
// PTX:       wgmma.fence.sync.aligned;
// PTX-COUNT-2: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{[{].*[}]}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, 1, 0, 1;
// PTX-NEXT:  // end inline asm
// PTX-NEXT:  wgmma.commit_group.sync.aligned;
// PTX:       wgmma.wait_group.sync.aligned 1;
// The three other unrolled steps and the remainder loop's, one join each.
// PTX-NOT:   bar.sync
// PTX:       cp.async.wait_group 1;
// PTX:       bar.sync 0;
// PTX-NOT:   bar.sync
// PTX:       wgmma.wait_group.sync.aligned 1;
// PTX-NOT:   bar.sync
// PTX:       cp.async.wait_group 1;
// PTX:       bar.sync 0;
// PTX-NOT:   bar.sync
// PTX:       wgmma.wait_group.sync.aligned 1;
// PTX-NOT:   bar.sync
// PTX:       cp.async.wait_group 1;
// PTX:       bar.sync 0;
// PTX-NOT:   bar.sync
// PTX:       wgmma.wait_group.sync.aligned 1;
// PTX-NOT:   bar.sync
// PTX:       cp.async.wait_group 1;
// PTX:       bar.sync 0;
// PTX-NOT:   bar.sync
// PTX:       wgmma.wait_group.sync.aligned 1;
// PTX-NOT:   bar.sync
// PTX:       wgmma.wait_group.sync.aligned 0;
// PTX:       cp.async.wait_group 0;
// PTX:       fence.proxy.async.shared::cta;
// PTX:       bar.sync 0;
// PTX-NOT:   bar.sync
// PTX-NOT:   ld.global
// PTX:       st.global.v2.b32
// PTX-NOT:   bar.sync
// PTX:       ret;

// MMA-LABEL: .entry k_loop(
// MMA-NOT:   wgmma
// MMA:       ldmatrix.sync.aligned.m8n8.x4.shared.b16
// MMA:       mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// MMA-NOT:   wgmma
// MMA:       ret;
func.func @k_loop(%a: !weft.ptr<bf16>, %b: !weft.ptr<bf16>, %c: !weft.ptr<f32>,
                  %K: i32 {weft.divisibility = 16 : i32},
                  %k_lo: i32 {weft.divisibility = 16 : i32}) attributes {weft.kernel} {
  // a: 64 x K, b: K x 64, c: 64 x 64, row-major.
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
  %cs = weft.splat %c : !weft.ptr<f32> -> tensor<64x64x!weft.ptr<f32>>
  %cp = weft.addptr %cs, %off : tensor<64x64x!weft.ptr<f32>>, tensor<64x64xi32>
  weft.store %cp, %sum : tensor<64x64x!weft.ptr<f32>>
  return
}
