// weft.dot on 128x128 blocks with BK = 64 (weft.ops.matmul's large
// blocks), pipelined: the rings are #weft.swizzled with 128-byte rows (a's
// 64 bf16 of K, b's 128 of N in two blocks of 64), and each warpgroup
// issues wgmma m64n128k16 from descriptors: 128-byte swizzle (mode 1 in
// the top bits), stride 1024 bytes (8 rows of 128), leading offset one
// column block (a: 128 rows, b: 64 rows of 128 bytes). With eight warps
// the two warpgroups take 64 rows each, the second starting 64 rows of a
// further (8 KiB); with four, the one warpgroup issues both halves. Each
// step leaves its products in flight until the next step's are issued
// (wgmma.wait_group 1); after the loop they complete (0). The 128 sums of
// a thread of four warps wait in two chunks.
//
// RUN: weft-compile %s --target=cuda:90 --emit=ptx --num-warps=8 -o %t.8.ptx
// RUN: FileCheck %s --check-prefix=W8 < %t.8.ptx
// RUN: %ptxas %t.8.ptx
// RUN: weft-compile %s --target=cuda:90 --emit=ptx --num-warps=4 -o %t.4.ptx
// RUN: FileCheck %s --check-prefix=W4 < %t.4.ptx
// RUN: %ptxas %t.4.ptx
// RUN: weft-opt %s --weft-lower="target=cuda:90 num-warps=8" | FileCheck %s --check-prefix=LLVM

// Three stages and a spare of 128x64 + 64x128 bf16 (the products of a
// step overlap the next's) and 1008 bytes of alignment.
// LLVM: llvm.func @wide_loop({{.*}} weft.dynamic_shared_bytes = 132080 : i64

// Descriptor constants: leading offset 16384 / 16 = 1024 (a) or 8192 / 16
// = 512 (b) at bit 16, stride 1024 / 16 = 64 at bit 32, mode 1 at bit 62;
// the k16 steps advance the start by 32 bytes within a's rows (2) and by
// 16 rows of b (2048 bytes: 128). The loop is unrolled by the rings' four
// buffers, so their descriptors are computed once, in front of it; each
// of its four steps and the remainder loop's issues a warpgroup's four.
// The second warpgroup's a starts 8 KiB further: (tid << 6) & 8192.
// W8-LABEL: .entry wide_loop(
// W8:       shl.b32 [[SHIFTED:%r[0-9]+]], %r{{[0-9]+}}, 6;
// W8:       and.b32 %r{{[0-9]+}}, [[SHIFTED]], 8192;
// W8:       or.b64 %rd{{[0-9]+}}, %rd{{[0-9]+}}, 4611686293372403712;
// W8:       or.b64 %rd{{[0-9]+}}, %rd{{[0-9]+}}, 4611686293338849280;
// W8:       add.s64 %rd{{[0-9]+}}, %rd{{[0-9]+}}, 4611686293338849408;
// W8:       add.s64 %rd{{[0-9]+}}, %rd{{[0-9]+}}, 4611686293372403714;
// W8:       wgmma.fence.sync.aligned;
// W8-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// W8-NOT:   wgmma.mma_async
// W8:       wgmma.commit_group.sync.aligned;
// W8:       wgmma.wait_group.sync.aligned 1;
// W8:       wgmma.fence.sync.aligned;
// W8-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// W8-NOT:   wgmma.mma_async
// W8:       wgmma.commit_group.sync.aligned;
// W8:       wgmma.wait_group.sync.aligned 1;
// W8:       wgmma.fence.sync.aligned;
// W8-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// W8-NOT:   wgmma.mma_async
// W8:       wgmma.commit_group.sync.aligned;
// W8:       wgmma.wait_group.sync.aligned 1;
// W8:       wgmma.fence.sync.aligned;
// W8-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// W8-NOT:   wgmma.mma_async
// W8:       wgmma.commit_group.sync.aligned;
// W8:       wgmma.wait_group.sync.aligned 1;
// W8:       wgmma.fence.sync.aligned;
// W8-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// W8-NOT:   wgmma.mma_async
// W8:       wgmma.commit_group.sync.aligned;
// W8:       wgmma.wait_group.sync.aligned 1;
// W8-NOT:   wgmma.mma_async
// W8:       wgmma.wait_group.sync.aligned 0;
// W8:       cp.async.wait_group 0;
// W8:       ret;

// W4-LABEL: .entry wide_loop(
// W4:       wgmma.fence.sync.aligned;
// W4-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// W4-NOT:   wgmma.mma_async
// W4:       wgmma.commit_group.sync.aligned;
// W4-COUNT-2: wgmma.wait_group.sync.aligned 1;
// W4-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// W4-NOT:   wgmma.mma_async
// W4:       wgmma.commit_group.sync.aligned;
// W4-COUNT-2: wgmma.wait_group.sync.aligned 1;
// W4-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// W4-NOT:   wgmma.mma_async
// W4:       wgmma.commit_group.sync.aligned;
// W4-COUNT-2: wgmma.wait_group.sync.aligned 1;
// W4-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// W4-NOT:   wgmma.mma_async
// W4:       wgmma.commit_group.sync.aligned;
// W4-COUNT-2: wgmma.wait_group.sync.aligned 1;
// W4-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// W4-NOT:   wgmma.mma_async
// W4:       wgmma.commit_group.sync.aligned;
// W4-COUNT-2: wgmma.wait_group.sync.aligned 1;
// W4-NOT:   wgmma.mma_async
// W4-COUNT-2: wgmma.wait_group.sync.aligned 0;
// W4:       cp.async.wait_group 0;
// W4:       ret;
func.func @wide_loop(%a: !weft.ptr<bf16>, %b: !weft.ptr<bf16>, %c: !weft.ptr<f32>,
                  %K: i32 {weft.divisibility = 16 : i32},
                  %k_lo: i32 {weft.divisibility = 16 : i32}) attributes {weft.kernel} {
  // a: 128 x K, b: K x 128, c: 128 x 128, row-major.
  %c64 = arith.constant 64 : i32
  %rm = weft.make_range 0, 128 : tensor<128xi32>
  %rk = weft.make_range 0, 64 : tensor<64xi32>
  %m = weft.expand_dims %rm axis = 1 : tensor<128xi32> -> tensor<128x1xi32>
  %Ks = weft.splat %K : i32 -> tensor<128x1xi32>
  %mrow = arith.muli %m, %Ks : tensor<128x1xi32>
  %as = weft.splat %a : !weft.ptr<bf16> -> tensor<128x1x!weft.ptr<bf16>>
  %arow = weft.addptr %as, %mrow : tensor<128x1x!weft.ptr<bf16>>, tensor<128x1xi32>
  %abase = weft.broadcast %arow : tensor<128x1x!weft.ptr<bf16>> -> tensor<128x64x!weft.ptr<bf16>>
  %n = weft.expand_dims %rm axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  %nb = weft.broadcast %n : tensor<1x128xi32> -> tensor<64x128xi32>
  %bs = weft.splat %b : !weft.ptr<bf16> -> tensor<64x128x!weft.ptr<bf16>>
  %bcol = weft.addptr %bs, %nb : tensor<64x128x!weft.ptr<bf16>>, tensor<64x128xi32>
  %width = arith.constant dense<128> : tensor<64x1xi32>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %sum = scf.for %k0 = %k_lo to %K step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
    %ks = weft.splat %k0 : i32 -> tensor<64xi32>
    %kk = arith.addi %ks, %rk : tensor<64xi32>
    %kr = weft.expand_dims %kk axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
    %krb = weft.broadcast %kr : tensor<1x64xi32> -> tensor<128x64xi32>
    %ap = weft.addptr %abase, %krb : tensor<128x64x!weft.ptr<bf16>>, tensor<128x64xi32>
    %x = weft.load %ap : tensor<128x64x!weft.ptr<bf16>>
    %kc = weft.expand_dims %kk axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
    %kcr = arith.muli %kc, %width : tensor<64x1xi32>
    %kcb = weft.broadcast %kcr : tensor<64x1xi32> -> tensor<64x128xi32>
    %bp = weft.addptr %bcol, %kcb : tensor<64x128x!weft.ptr<bf16>>, tensor<64x128xi32>
    %y = weft.load %bp : tensor<64x128x!weft.ptr<bf16>>
    %d = weft.dot %x, %y, %acc : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %rows = arith.constant dense<128> : tensor<128x1xi32>
  %mc = arith.muli %m, %rows : tensor<128x1xi32>
  %mcb = weft.broadcast %mc : tensor<128x1xi32> -> tensor<128x128xi32>
  %ncb = weft.broadcast %n : tensor<1x128xi32> -> tensor<128x128xi32>
  %off = arith.addi %mcb, %ncb : tensor<128x128xi32>
  %cs = weft.splat %c : !weft.ptr<f32> -> tensor<128x128x!weft.ptr<f32>>
  %cp = weft.addptr %cs, %off : tensor<128x128x!weft.ptr<f32>>, tensor<128x128xi32>
  weft.store %cp, %sum : tensor<128x128x!weft.ptr<f32>>
  return
}
