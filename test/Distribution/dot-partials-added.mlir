// Partial sums loaded and added to a dot's sums after its K loop (the
// epilogue of weft.ops.matmul_reduce_scatter's own blocks): the loads
// take the accumulator's layout, which the loop over the partials
// carries from the K loop's result to the store, so the sums never cross
// shared memory (f32 fragments fill whole 32-byte sectors: four threads
// of two adjacent f32 per row). Without the rule the loads took their
// coalesced layout and each went through a conversion, which for the
// kernel's 128x256 f32 blocks needs 128 KiB of scratch, more than there
// is.
//
// RUN: weft-opt %s --weft-set-target=target=cuda:90 --weft-assign-layouts | FileCheck %s
// RUN: weft-compile %s --target=cuda:90 --emit=ptx -o %t.ptx
// RUN: %ptxas %t.ptx

// CHECK-LABEL: func.func @partials
// CHECK-NOT:   weft.convert_layout
// CHECK:       weft.load {{.*}} : tensor<64x64x!weft.ptr<f32>, #weft.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerProgram = [2, 2], order = [1, 0]}>>
// CHECK-NOT:   weft.convert_layout
// CHECK:       weft.store {{.*}} : tensor<64x64x!weft.ptr<f32>, #weft.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerProgram = [2, 2], order = [1, 0]}>>
func.func @partials(%a: !weft.ptr<bf16>, %b: !weft.ptr<bf16>, %c: !weft.ptr<f32>,
                    %p: !weft.ptr<f32>, %count: i32,
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
  // Partial sums of the same block, 4096 f32 apart, added in order.
  %ps = weft.splat %p : !weft.ptr<f32> -> tensor<64x64x!weft.ptr<f32>>
  %pp = weft.addptr %ps, %off : tensor<64x64x!weft.ptr<f32>>, tensor<64x64xi32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %slot = arith.constant 4096 : i32
  %total = scf.for %s = %c0 to %count step %c1 iter_args(%t = %sum) -> (tensor<64x64xf32>) : i32 {
    %shift = arith.muli %s, %slot : i32
    %sh = weft.splat %shift : i32 -> tensor<64x64xi32>
    %q = weft.addptr %pp, %sh : tensor<64x64x!weft.ptr<f32>>, tensor<64x64xi32>
    %v = weft.load %q : tensor<64x64x!weft.ptr<f32>>
    %t2 = arith.addf %t, %v : tensor<64x64xf32>
    scf.yield %t2 : tensor<64x64xf32>
  }
  weft.store %cp, %total : tensor<64x64x!weft.ptr<f32>>
  return
}

// bf16 partials widened to f32 before the add (the own blocks' sums with
// partials="bf16"): 16-byte rows of bf16 fill only half a sector in the
// sums' layout, so the tile crosses shared memory, as loaded: the
// conversion is of the bf16 tile, before the cast (converting the f32
// result would take twice the scratch; at 128x256 more than there is).

// CHECK-LABEL: func.func @widened_partials
// CHECK:       %[[P:.*]] = weft.load {{.*}} : tensor<64x64x!weft.ptr<bf16>, #weft.blocked<{sizePerThread = [1, 8]
// CHECK:       %[[C:.*]] = weft.convert_layout %[[P]] : tensor<64x64xbf16, {{.*}}> -> tensor<64x64xbf16, #weft.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4]
// CHECK:       arith.extf %[[C]] : tensor<64x64xbf16, #weft.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4]
// CHECK-NOT:   weft.convert_layout
// CHECK:       weft.store {{.*}} : tensor<64x64x!weft.ptr<f32>, #weft.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4]
func.func @widened_partials(%a: !weft.ptr<bf16>, %b: !weft.ptr<bf16>, %c: !weft.ptr<f32>,
                            %p: !weft.ptr<bf16>, %count: i32) attributes {weft.kernel} {
  // a: 64 x 32, b: 32 x 64, c: 64 x 64, p: count of 64 x 64, row-major.
  %rm = weft.make_range 0, 64 : tensor<64xi32>
  %rk = weft.make_range 0, 32 : tensor<32xi32>
  %m = weft.expand_dims %rm axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  %n = weft.expand_dims %rm axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %k = weft.expand_dims %rk axis = 0 : tensor<32xi32> -> tensor<1x32xi32>
  %kc = weft.expand_dims %rk axis = 1 : tensor<32xi32> -> tensor<32x1xi32>
  %w32 = arith.constant dense<32> : tensor<64x1xi32>
  %w64 = arith.constant dense<64> : tensor<32x1xi32>
  %arow = arith.muli %m, %w32 : tensor<64x1xi32>
  %aoffs = weft.broadcast %arow : tensor<64x1xi32> -> tensor<64x32xi32>
  %kb = weft.broadcast %k : tensor<1x32xi32> -> tensor<64x32xi32>
  %aoff = arith.addi %aoffs, %kb : tensor<64x32xi32>
  %as = weft.splat %a : !weft.ptr<bf16> -> tensor<64x32x!weft.ptr<bf16>>
  %ap = weft.addptr %as, %aoff : tensor<64x32x!weft.ptr<bf16>>, tensor<64x32xi32>
  %x = weft.load %ap : tensor<64x32x!weft.ptr<bf16>>
  %brow = arith.muli %kc, %w64 : tensor<32x1xi32>
  %boffs = weft.broadcast %brow : tensor<32x1xi32> -> tensor<32x64xi32>
  %nb = weft.broadcast %n : tensor<1x64xi32> -> tensor<32x64xi32>
  %boff = arith.addi %boffs, %nb : tensor<32x64xi32>
  %bs = weft.splat %b : !weft.ptr<bf16> -> tensor<32x64x!weft.ptr<bf16>>
  %bp = weft.addptr %bs, %boff : tensor<32x64x!weft.ptr<bf16>>, tensor<32x64xi32>
  %y = weft.load %bp : tensor<32x64x!weft.ptr<bf16>>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = weft.dot %x, %y, %zero : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  %rows = arith.constant dense<64> : tensor<64x1xi32>
  %mc = arith.muli %m, %rows : tensor<64x1xi32>
  %mcb = weft.broadcast %mc : tensor<64x1xi32> -> tensor<64x64xi32>
  %ncb = weft.broadcast %n : tensor<1x64xi32> -> tensor<64x64xi32>
  %off = arith.addi %mcb, %ncb : tensor<64x64xi32>
  %ps = weft.splat %p : !weft.ptr<bf16> -> tensor<64x64x!weft.ptr<bf16>>
  %pp = weft.addptr %ps, %off : tensor<64x64x!weft.ptr<bf16>>, tensor<64x64xi32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %slot = arith.constant 4096 : i32
  %total = scf.for %s = %c0 to %count step %c1 iter_args(%t = %d) -> (tensor<64x64xf32>) : i32 {
    %shift = arith.muli %s, %slot : i32
    %sh = weft.splat %shift : i32 -> tensor<64x64xi32>
    %q = weft.addptr %pp, %sh : tensor<64x64x!weft.ptr<bf16>>, tensor<64x64xi32>
    %v = weft.load %q : tensor<64x64x!weft.ptr<bf16>>
    %wide = arith.extf %v : tensor<64x64xbf16> to tensor<64x64xf32>
    %t2 = arith.addf %t, %wide : tensor<64x64xf32>
    scf.yield %t2 : tensor<64x64xf32>
  }
  %cs = weft.splat %c : !weft.ptr<f32> -> tensor<64x64x!weft.ptr<f32>>
  %cp = weft.addptr %cs, %off : tensor<64x64x!weft.ptr<f32>>, tensor<64x64xi32>
  weft.store %cp, %total : tensor<64x64x!weft.ptr<f32>>
  return
}

// The own blocks of weft.ops.matmul_reduce_scatter's copy-engine path:
// their own sums rounded to bf16 (as the partials they are added to
// were), bf16 partials added, the total stored as bf16. Both the loads
// and the store would cross shared memory in the sums' layout (half a
// sector a warp's row): the loop carries the total in the store's
// coalesced layout instead, so the sums cross once, as rounded, before
// it (bench/README.md, "Prefill: own rows' epilogue on one GPU").

// CHECK-LABEL: func.func @rounded_partials
// CHECK:       %[[R:.*]] = arith.truncf {{.*}} to tensor<64x64xbf16, #weft.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4]
// CHECK:       %[[C:.*]] = weft.convert_layout %[[R]] : {{.*}} -> tensor<64x64xbf16, #weft.blocked<{sizePerThread = [1, 8]
// CHECK:       arith.extf %[[C]]
// CHECK:       scf.for
// CHECK-NOT:   weft.convert_layout
// CHECK:       weft.store {{.*}} : tensor<64x64x!weft.ptr<bf16>, #weft.blocked<{sizePerThread = [1, 8]
func.func @rounded_partials(%a: !weft.ptr<bf16>, %b: !weft.ptr<bf16>, %c: !weft.ptr<bf16>,
                            %p: !weft.ptr<bf16>, %count: i32) attributes {weft.kernel} {
  // a: 64 x 32, b: 32 x 64, c: 64 x 64, p: count of 64 x 64, row-major.
  %rm = weft.make_range 0, 64 : tensor<64xi32>
  %rk = weft.make_range 0, 32 : tensor<32xi32>
  %m = weft.expand_dims %rm axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  %n = weft.expand_dims %rm axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %k = weft.expand_dims %rk axis = 0 : tensor<32xi32> -> tensor<1x32xi32>
  %kc = weft.expand_dims %rk axis = 1 : tensor<32xi32> -> tensor<32x1xi32>
  %w32 = arith.constant dense<32> : tensor<64x1xi32>
  %w64 = arith.constant dense<64> : tensor<32x1xi32>
  %arow = arith.muli %m, %w32 : tensor<64x1xi32>
  %aoffs = weft.broadcast %arow : tensor<64x1xi32> -> tensor<64x32xi32>
  %kb = weft.broadcast %k : tensor<1x32xi32> -> tensor<64x32xi32>
  %aoff = arith.addi %aoffs, %kb : tensor<64x32xi32>
  %as = weft.splat %a : !weft.ptr<bf16> -> tensor<64x32x!weft.ptr<bf16>>
  %ap = weft.addptr %as, %aoff : tensor<64x32x!weft.ptr<bf16>>, tensor<64x32xi32>
  %x = weft.load %ap : tensor<64x32x!weft.ptr<bf16>>
  %brow = arith.muli %kc, %w64 : tensor<32x1xi32>
  %boffs = weft.broadcast %brow : tensor<32x1xi32> -> tensor<32x64xi32>
  %nb = weft.broadcast %n : tensor<1x64xi32> -> tensor<32x64xi32>
  %boff = arith.addi %boffs, %nb : tensor<32x64xi32>
  %bs = weft.splat %b : !weft.ptr<bf16> -> tensor<32x64x!weft.ptr<bf16>>
  %bp = weft.addptr %bs, %boff : tensor<32x64x!weft.ptr<bf16>>, tensor<32x64xi32>
  %y = weft.load %bp : tensor<32x64x!weft.ptr<bf16>>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = weft.dot %x, %y, %zero : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  %rows = arith.constant dense<64> : tensor<64x1xi32>
  %mc = arith.muli %m, %rows : tensor<64x1xi32>
  %mcb = weft.broadcast %mc : tensor<64x1xi32> -> tensor<64x64xi32>
  %ncb = weft.broadcast %n : tensor<1x64xi32> -> tensor<64x64xi32>
  %off = arith.addi %mcb, %ncb : tensor<64x64xi32>
  %ps = weft.splat %p : !weft.ptr<bf16> -> tensor<64x64x!weft.ptr<bf16>>
  %pp = weft.addptr %ps, %off : tensor<64x64x!weft.ptr<bf16>>, tensor<64x64xi32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %slot = arith.constant 4096 : i32
  %own = arith.truncf %d : tensor<64x64xf32> to tensor<64x64xbf16>
  %init = arith.extf %own : tensor<64x64xbf16> to tensor<64x64xf32>
  %total = scf.for %s = %c0 to %count step %c1 iter_args(%t = %init) -> (tensor<64x64xf32>) : i32 {
    %shift = arith.muli %s, %slot : i32
    %sh = weft.splat %shift : i32 -> tensor<64x64xi32>
    %q = weft.addptr %pp, %sh : tensor<64x64x!weft.ptr<bf16>>, tensor<64x64xi32>
    %v = weft.load %q : tensor<64x64x!weft.ptr<bf16>>
    %wide = arith.extf %v : tensor<64x64xbf16> to tensor<64x64xf32>
    %t2 = arith.addf %t, %wide : tensor<64x64xf32>
    scf.yield %t2 : tensor<64x64xf32>
  }
  %out = arith.truncf %total : tensor<64x64xf32> to tensor<64x64xbf16>
  %cs = weft.splat %c : !weft.ptr<bf16> -> tensor<64x64x!weft.ptr<bf16>>
  %cp = weft.addptr %cs, %off : tensor<64x64x!weft.ptr<bf16>>, tensor<64x64xi32>
  weft.store %cp, %out : tensor<64x64x!weft.ptr<bf16>>
  return
}

// A residual added to a dot's sums and stored as bf16, with no loop: the
// sums cross once, into the store's layout, where the residual is loaded.

// CHECK-LABEL: func.func @residual
// CHECK:       weft.convert_layout {{.*}} : tensor<64x64xf32, #weft.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4]{{.*}}> -> tensor<64x64xf32, #weft.blocked<{sizePerThread = [1, 8]
// CHECK-NOT:   weft.convert_layout
// CHECK:       weft.store {{.*}} : tensor<64x64x!weft.ptr<bf16>, #weft.blocked<{sizePerThread = [1, 8]
func.func @residual(%a: !weft.ptr<bf16>, %b: !weft.ptr<bf16>, %c: !weft.ptr<bf16>,
                    %p: !weft.ptr<bf16>) attributes {weft.kernel} {
  // a: 64 x 32, b: 32 x 64, c and p: 64 x 64, row-major.
  %rm = weft.make_range 0, 64 : tensor<64xi32>
  %rk = weft.make_range 0, 32 : tensor<32xi32>
  %m = weft.expand_dims %rm axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  %n = weft.expand_dims %rm axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %k = weft.expand_dims %rk axis = 0 : tensor<32xi32> -> tensor<1x32xi32>
  %kc = weft.expand_dims %rk axis = 1 : tensor<32xi32> -> tensor<32x1xi32>
  %w32 = arith.constant dense<32> : tensor<64x1xi32>
  %w64 = arith.constant dense<64> : tensor<32x1xi32>
  %arow = arith.muli %m, %w32 : tensor<64x1xi32>
  %aoffs = weft.broadcast %arow : tensor<64x1xi32> -> tensor<64x32xi32>
  %kb = weft.broadcast %k : tensor<1x32xi32> -> tensor<64x32xi32>
  %aoff = arith.addi %aoffs, %kb : tensor<64x32xi32>
  %as = weft.splat %a : !weft.ptr<bf16> -> tensor<64x32x!weft.ptr<bf16>>
  %ap = weft.addptr %as, %aoff : tensor<64x32x!weft.ptr<bf16>>, tensor<64x32xi32>
  %x = weft.load %ap : tensor<64x32x!weft.ptr<bf16>>
  %brow = arith.muli %kc, %w64 : tensor<32x1xi32>
  %boffs = weft.broadcast %brow : tensor<32x1xi32> -> tensor<32x64xi32>
  %nb = weft.broadcast %n : tensor<1x64xi32> -> tensor<32x64xi32>
  %boff = arith.addi %boffs, %nb : tensor<32x64xi32>
  %bs = weft.splat %b : !weft.ptr<bf16> -> tensor<32x64x!weft.ptr<bf16>>
  %bp = weft.addptr %bs, %boff : tensor<32x64x!weft.ptr<bf16>>, tensor<32x64xi32>
  %y = weft.load %bp : tensor<32x64x!weft.ptr<bf16>>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = weft.dot %x, %y, %zero : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  %rows = arith.constant dense<64> : tensor<64x1xi32>
  %mc = arith.muli %m, %rows : tensor<64x1xi32>
  %mcb = weft.broadcast %mc : tensor<64x1xi32> -> tensor<64x64xi32>
  %ncb = weft.broadcast %n : tensor<1x64xi32> -> tensor<64x64xi32>
  %off = arith.addi %mcb, %ncb : tensor<64x64xi32>
  %ps = weft.splat %p : !weft.ptr<bf16> -> tensor<64x64x!weft.ptr<bf16>>
  %pp = weft.addptr %ps, %off : tensor<64x64x!weft.ptr<bf16>>, tensor<64x64xi32>
  %v = weft.load %pp : tensor<64x64x!weft.ptr<bf16>>
  %wide = arith.extf %v : tensor<64x64xbf16> to tensor<64x64xf32>
  %sum = arith.addf %d, %wide : tensor<64x64xf32>
  %out = arith.truncf %sum : tensor<64x64xf32> to tensor<64x64xbf16>
  %cs = weft.splat %c : !weft.ptr<bf16> -> tensor<64x64x!weft.ptr<bf16>>
  %cp = weft.addptr %cs, %off : tensor<64x64x!weft.ptr<bf16>>, tensor<64x64xi32>
  weft.store %cp, %out : tensor<64x64x!weft.ptr<bf16>>
  return
}
