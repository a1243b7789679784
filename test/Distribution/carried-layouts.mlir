// A dot's sums, and a row sum of them, carried through two loops and an
// scf.if (attention's sums over key ranges inside a loop over sources):
// every carrier keeps the accumulator's layout (the row sums its slice,
// which their reduction produces), so the inner loop converts nothing.
// Before, the wish reached only the inner loop's initial value: the
// outer loop carried the sums in a default layout and the inner loop
// converted them there and back at every step.
//
// RUN: weft-opt %s --weft-set-target=target=cuda:90 --weft-assign-layouts | FileCheck %s
// RUN: weft-compile %s --target=cuda:90 --emit=ptx -o %t.ptx
// RUN: %ptxas %t.ptx

// CHECK-LABEL: func.func @nested
// CHECK:       scf.for {{.*}} -> (tensor<64x64xf32, [[ACC:#weft.blocked<{sizePerThread = \[1, 2\], threadsPerWarp = \[8, 4\], warpsPerProgram = \[2, 2\], order = \[1, 0\]}>]]>, tensor<64xf32, #weft.slice<{dim = 1, parent = [[ACC]]}>>)
// CHECK:         scf.if {{.*}} -> (tensor<64x64xf32, [[ACC]]>, tensor<64xf32, #weft.slice<{dim = 1, parent = [[ACC]]}>>)
// CHECK:           scf.for {{.*}} -> (tensor<64x64xf32, [[ACC]]>, tensor<64xf32, #weft.slice<{dim = 1, parent = [[ACC]]}>>)
// CHECK-NOT:         weft.convert_layout
// CHECK:             scf.yield
// CHECK-NOT:     weft.convert_layout
// CHECK:         scf.yield
// CHECK:       weft.store {{.*}} : tensor<64x64x!weft.ptr<f32>, [[ACC]]>
func.func @nested(%a: !weft.ptr<bf16>, %b: !weft.ptr<bf16>, %c: !weft.ptr<f32>,
                  %sums: !weft.ptr<f32>, %n: i32, %steps: i32, %cond: i1) attributes {weft.kernel} {
  // a: 64 x 32, b: 32 x 64, c: 64 x 64, row-major; sums: 64.
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %rm = weft.make_range 0, 64 : tensor<64xi32>
  %rk = weft.make_range 0, 32 : tensor<32xi32>
  %m = weft.expand_dims %rm axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  %nn = weft.expand_dims %rm axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %kr = weft.expand_dims %rk axis = 0 : tensor<32xi32> -> tensor<1x32xi32>
  %kc = weft.expand_dims %rk axis = 1 : tensor<32xi32> -> tensor<32x1xi32>
  %w32 = arith.constant dense<32> : tensor<64x1xi32>
  %w64 = arith.constant dense<64> : tensor<32x1xi32>
  %arow = arith.muli %m, %w32 : tensor<64x1xi32>
  %arowb = weft.broadcast %arow : tensor<64x1xi32> -> tensor<64x32xi32>
  %krb = weft.broadcast %kr : tensor<1x32xi32> -> tensor<64x32xi32>
  %aoff = arith.addi %arowb, %krb : tensor<64x32xi32>
  %as = weft.splat %a : !weft.ptr<bf16> -> tensor<64x32x!weft.ptr<bf16>>
  %ap = weft.addptr %as, %aoff : tensor<64x32x!weft.ptr<bf16>>, tensor<64x32xi32>
  %brow = arith.muli %kc, %w64 : tensor<32x1xi32>
  %browb = weft.broadcast %brow : tensor<32x1xi32> -> tensor<32x64xi32>
  %nb = weft.broadcast %nn : tensor<1x64xi32> -> tensor<32x64xi32>
  %boff = arith.addi %browb, %nb : tensor<32x64xi32>
  %bs = weft.splat %b : !weft.ptr<bf16> -> tensor<32x64x!weft.ptr<bf16>>
  %bp = weft.addptr %bs, %boff : tensor<32x64x!weft.ptr<bf16>>, tensor<32x64xi32>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %lzero = arith.constant dense<0.0> : tensor<64xf32>
  %half = arith.constant dense<0.5> : tensor<64xf32>
  %out:2 = scf.for %t = %c0 to %n step %c1 iter_args(%acc = %zero, %l = %lzero)
      -> (tensor<64x64xf32>, tensor<64xf32>) : i32 {
    %next:2 = scf.if %cond -> (tensor<64x64xf32>, tensor<64xf32>) {
      %inner:2 = scf.for %k = %c0 to %steps step %c1 iter_args(%acc2 = %acc, %l2 = %l)
          -> (tensor<64x64xf32>, tensor<64xf32>) : i32 {
        %x = weft.load %ap : tensor<64x32x!weft.ptr<bf16>>
        %y = weft.load %bp : tensor<32x64x!weft.ptr<bf16>>
        %d = weft.dot %x, %y, %acc2 : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
        %s = weft.reduce %d axis = 1 : tensor<64x64xf32> -> tensor<64xf32> {
        ^bb0(%p: f32, %q: f32):
          %r = arith.addf %p, %q : f32
          weft.reduce.return %r : f32
        }
        %scaled = arith.mulf %l2, %half : tensor<64xf32>
        %l3 = arith.addf %scaled, %s : tensor<64xf32>
        scf.yield %d, %l3 : tensor<64x64xf32>, tensor<64xf32>
      }
      scf.yield %inner#0, %inner#1 : tensor<64x64xf32>, tensor<64xf32>
    } else {
      scf.yield %acc, %l : tensor<64x64xf32>, tensor<64xf32>
    }
    scf.yield %next#0, %next#1 : tensor<64x64xf32>, tensor<64xf32>
  }
  %mc = arith.muli %m, %w32 : tensor<64x1xi32>
  %w2 = arith.constant dense<2> : tensor<64x1xi32>
  %mc64 = arith.muli %mc, %w2 : tensor<64x1xi32>
  %mcb = weft.broadcast %mc64 : tensor<64x1xi32> -> tensor<64x64xi32>
  %ncb = weft.broadcast %nn : tensor<1x64xi32> -> tensor<64x64xi32>
  %coff = arith.addi %mcb, %ncb : tensor<64x64xi32>
  %cs = weft.splat %c : !weft.ptr<f32> -> tensor<64x64x!weft.ptr<f32>>
  %cp = weft.addptr %cs, %coff : tensor<64x64x!weft.ptr<f32>>, tensor<64x64xi32>
  weft.store %cp, %out#0 : tensor<64x64x!weft.ptr<f32>>
  %ss = weft.splat %sums : !weft.ptr<f32> -> tensor<64x!weft.ptr<f32>>
  %sp = weft.addptr %ss, %rm : tensor<64x!weft.ptr<f32>>, tensor<64xi32>
  weft.store %sp, %out#1 : tensor<64x!weft.ptr<f32>>
  return
}

// The running sums' initial value is also the 0.0 that the epilogue
// compares them with (one constant after CSE), and the epilogue scales
// bf16 rows stored in a coalesced layout, which it wishes on that
// constant. The loop still carries the sums in the slice of the
// accumulator's layout its reduction produces; the constant converts once,
// before the loop (before, the loop took the constant's layout and
// converted the sums there and back at every step: flash attention's 7
// barriers a key step).
// CHECK-LABEL: func.func @shared_init
// CHECK:       scf.for {{.*}} -> (tensor<64x64xf32, [[ACC:#weft.blocked<{sizePerThread = \[1, 2\], threadsPerWarp = \[8, 4\], warpsPerProgram = \[2, 2\], order = \[1, 0\]}>]]>, tensor<64xf32, #weft.slice<{dim = 1, parent = [[ACC]]}>>)
// CHECK-NOT:     weft.convert_layout
// CHECK:         scf.yield
// CHECK:       weft.convert_layout {{.*}} : tensor<64xf32, #weft.slice<{dim = 1, parent = [[ACC]]}>> -> tensor<64xf32, #weft.slice<{dim = 1, parent = [[ROWS:#weft.blocked<{sizePerThread = \[1, 8\]]]
// CHECK:       weft.store {{.*}} : tensor<64x64x!weft.ptr<bf16>, [[ROWS]]
func.func @shared_init(%a: !weft.ptr<bf16>, %b: !weft.ptr<bf16>, %c: !weft.ptr<bf16>,
                       %n: i32) attributes {weft.kernel} {
  // a: 64 x 32, b: 32 x 64, c: 64 x 64, row-major.
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %rm = weft.make_range 0, 64 : tensor<64xi32>
  %rk = weft.make_range 0, 32 : tensor<32xi32>
  %m = weft.expand_dims %rm axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  %nn = weft.expand_dims %rm axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %kr = weft.expand_dims %rk axis = 0 : tensor<32xi32> -> tensor<1x32xi32>
  %kc = weft.expand_dims %rk axis = 1 : tensor<32xi32> -> tensor<32x1xi32>
  %w32 = arith.constant dense<32> : tensor<64x1xi32>
  %w64 = arith.constant dense<64> : tensor<32x1xi32>
  %arow = arith.muli %m, %w32 : tensor<64x1xi32>
  %arowb = weft.broadcast %arow : tensor<64x1xi32> -> tensor<64x32xi32>
  %krb = weft.broadcast %kr : tensor<1x32xi32> -> tensor<64x32xi32>
  %aoff = arith.addi %arowb, %krb : tensor<64x32xi32>
  %as = weft.splat %a : !weft.ptr<bf16> -> tensor<64x32x!weft.ptr<bf16>>
  %ap = weft.addptr %as, %aoff : tensor<64x32x!weft.ptr<bf16>>, tensor<64x32xi32>
  %brow = arith.muli %kc, %w64 : tensor<32x1xi32>
  %browb = weft.broadcast %brow : tensor<32x1xi32> -> tensor<32x64xi32>
  %nb = weft.broadcast %nn : tensor<1x64xi32> -> tensor<32x64xi32>
  %boff = arith.addi %browb, %nb : tensor<32x64xi32>
  %bs = weft.splat %b : !weft.ptr<bf16> -> tensor<32x64x!weft.ptr<bf16>>
  %bp = weft.addptr %bs, %boff : tensor<32x64x!weft.ptr<bf16>>, tensor<32x64xi32>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %lzero = arith.constant dense<0.0> : tensor<64xf32>
  %half = arith.constant dense<0.5> : tensor<64xf32>
  %out:2 = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero, %l = %lzero)
      -> (tensor<64x64xf32>, tensor<64xf32>) : i32 {
    %x = weft.load %ap : tensor<64x32x!weft.ptr<bf16>>
    %y = weft.load %bp : tensor<32x64x!weft.ptr<bf16>>
    %d = weft.dot %x, %y, %acc : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    %s = weft.reduce %d axis = 1 : tensor<64x64xf32> -> tensor<64xf32> {
    ^bb0(%p: f32, %q: f32):
      %r = arith.addf %p, %q : f32
      weft.reduce.return %r : f32
    }
    %scaled = arith.mulf %l, %half : tensor<64xf32>
    %l2 = arith.addf %scaled, %s : tensor<64xf32>
    scf.yield %d, %l2 : tensor<64x64xf32>, tensor<64xf32>
  }
  %positive = arith.cmpf ogt, %out#1, %lzero : tensor<64xf32>
  %scale = arith.select %positive, %out#1, %lzero : tensor<64xi1>, tensor<64xf32>
  %scale2 = weft.expand_dims %scale axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %scaleb = weft.broadcast %scale2 : tensor<64x1xf32> -> tensor<64x64xf32>
  %o = arith.mulf %out#0, %scaleb : tensor<64x64xf32>
  %o16 = arith.truncf %o : tensor<64x64xf32> to tensor<64x64xbf16>
  %w64r = arith.constant dense<64> : tensor<64x1xi32>
  %crow = arith.muli %m, %w64r : tensor<64x1xi32>
  %crowb = weft.broadcast %crow : tensor<64x1xi32> -> tensor<64x64xi32>
  %ncb = weft.broadcast %nn : tensor<1x64xi32> -> tensor<64x64xi32>
  %coff = arith.addi %crowb, %ncb : tensor<64x64xi32>
  %cs = weft.splat %c : !weft.ptr<bf16> -> tensor<64x64x!weft.ptr<bf16>>
  %cp = weft.addptr %cs, %coff : tensor<64x64x!weft.ptr<bf16>>, tensor<64x64xi32>
  weft.store %cp, %o16 : tensor<64x64x!weft.ptr<bf16>>
  return
}
