// The language's newer ops in kernels every target compiles
// (test/Target/{NVPTX,AMDGPU,Host}/language.mlir check each target's code).
module {
  // Access hints: streaming loads that skip L1, volatile ones, and stores
  // that evict first.
  func.func @hinted(%src: !weft.ptr<f32> {weft.divisibility = 16 : i32},
                    %dst: !weft.ptr<f32> {weft.divisibility = 16 : i32}) attributes {weft.kernel} {
    %r = weft.make_range 0, 256 : tensor<256xi32>
    %s = weft.splat %src : !weft.ptr<f32> -> tensor<256x!weft.ptr<f32>>
    %ps = weft.addptr %s, %r : tensor<256x!weft.ptr<f32>>, tensor<256xi32>
    %d = weft.splat %dst : !weft.ptr<f32> -> tensor<256x!weft.ptr<f32>>
    %pd = weft.addptr %d, %r : tensor<256x!weft.ptr<f32>>, tensor<256xi32>
    %a = weft.load cache cg evict evict_first %ps : tensor<256x!weft.ptr<f32>>
    %b = weft.load volatile %ps : tensor<256x!weft.ptr<f32>>
    %c = arith.addf %a, %b : tensor<256xf32>
    weft.store cache cs evict evict_last %pd, %c : tensor<256x!weft.ptr<f32>>
    return
  }

  // Scans, argmax, transposition, join/split, flip and float8 round trips.
  func.func @rearranged(%src: !weft.ptr<f32> {weft.divisibility = 16 : i32},
                        %dst: !weft.ptr<f32> {weft.divisibility = 16 : i32},
                        %idx: !weft.ptr<i32>) attributes {weft.kernel} {
    %rows = weft.make_range 0, 16 : tensor<16xi32>
    %cols = weft.make_range 0, 32 : tensor<32xi32>
    %r2 = weft.expand_dims %rows axis = 1 : tensor<16xi32> -> tensor<16x1xi32>
    %c2 = weft.expand_dims %cols axis = 0 : tensor<32xi32> -> tensor<1x32xi32>
    %c32 = arith.constant 32 : i32
    %s32 = weft.splat %c32 : i32 -> tensor<16x1xi32>
    %rm = arith.muli %r2, %s32 : tensor<16x1xi32>
    %rb = weft.broadcast %rm : tensor<16x1xi32> -> tensor<16x32xi32>
    %cb = weft.broadcast %c2 : tensor<1x32xi32> -> tensor<16x32xi32>
    %off = arith.addi %rb, %cb : tensor<16x32xi32>
    %s = weft.splat %src : !weft.ptr<f32> -> tensor<16x32x!weft.ptr<f32>>
    %ps = weft.addptr %s, %off : tensor<16x32x!weft.ptr<f32>>, tensor<16x32xi32>
    %x = weft.load %ps : tensor<16x32x!weft.ptr<f32>>
    %sum = weft.scan %x axis = 1 : tensor<16x32xf32> -> tensor<16x32xf32> {
    ^bb0(%p: f32, %q: f32):
      %t = arith.addf %p, %q : f32
      weft.scan.return %t : f32
    }
    %t = weft.trans %sum, [1, 0] : tensor<16x32xf32> -> tensor<32x16xf32>
    %f = weft.flip %t axis = 0 : tensor<32x16xf32>
    %j = weft.join %f, %f : tensor<32x16xf32> -> tensor<32x16x2xf32>
    %lo, %hi = weft.split %j : tensor<32x16x2xf32> -> tensor<32x16xf32>
    %narrow = arith.truncf %lo : tensor<32x16xf32> to tensor<32x16xf8E4M3FN>
    %wide = arith.extf %narrow : tensor<32x16xf8E4M3FN> to tensor<32x16xf32>
    %y = arith.addf %wide, %hi : tensor<32x16xf32>
    %back = weft.trans %y, [1, 0] : tensor<32x16xf32> -> tensor<16x32xf32>
    %d = weft.splat %dst : !weft.ptr<f32> -> tensor<16x32x!weft.ptr<f32>>
    %pd = weft.addptr %d, %off : tensor<16x32x!weft.ptr<f32>>, tensor<16x32xi32>
    weft.store %pd, %back : tensor<16x32x!weft.ptr<f32>>
    %i2 = weft.broadcast %c2 : tensor<1x32xi32> -> tensor<16x32xi32>
    %best:2 = weft.reduce %x, %i2 axis = 1 : tensor<16x32xf32>, tensor<16x32xi32> -> tensor<16xf32>, tensor<16xi32> {
    ^bb0(%av: f32, %ai: i32, %bv: f32, %bi: i32):
      %gt = arith.cmpf ogt, %av, %bv : f32
      %v = arith.select %gt, %av, %bv : f32
      %i = arith.select %gt, %ai, %bi : i32
      weft.reduce.return %v, %i : f32, i32
    }
    %is = weft.splat %idx : !weft.ptr<i32> -> tensor<16x!weft.ptr<i32>>
    %pi = weft.addptr %is, %rows : tensor<16x!weft.ptr<i32>>, tensor<16xi32>
    weft.store %pi, %best#1 : tensor<16x!weft.ptr<i32>>
    return
  }

  // Printing and assertions.
  func.func @checked(%src: !weft.ptr<i32>, %n: i32) attributes {weft.kernel} {
    %v = weft.load %src : !weft.ptr<i32>
    %zero = arith.constant 0 : i32
    %ok = arith.cmpi sge, %v, %zero : i32
    weft.assert %ok, "value is negative"
    %r = weft.make_range 0, 8 : tensor<8xi32>
    weft.print "v=", %v, %r : i32, tensor<8xi32>
    return
  }
}
