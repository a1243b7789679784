// out[0] = max over the 16 rows of src of the row's sum over 64 columns: a
// reduction of a reduction's result (a sliced tile), as `wl.max(wl.sum(t,
// axis=1))` writes it in Python. test/Distribution/reduce-of-reduce.mlir checks the
// layouts and the PTX of the same kernel.
func.func @tile_max_of_sums(%src: !weft.ptr<i32>, %out: !weft.ptr<i32>) attributes {weft.kernel} {
  %rows = weft.make_range 0, 16 : tensor<16xi32>
  %cols = weft.make_range 0, 64 : tensor<64xi32>
  %re = weft.expand_dims %rows axis = 1 : tensor<16xi32> -> tensor<16x1xi32>
  %stride = arith.constant dense<64> : tensor<16x1xi32>
  %rowoff = arith.muli %re, %stride : tensor<16x1xi32>
  %rb = weft.broadcast %rowoff : tensor<16x1xi32> -> tensor<16x64xi32>
  %ce = weft.expand_dims %cols axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %cb = weft.broadcast %ce : tensor<1x64xi32> -> tensor<16x64xi32>
  %offs = arith.addi %rb, %cb : tensor<16x64xi32>
  %base = weft.splat %src : !weft.ptr<i32> -> tensor<16x64x!weft.ptr<i32>>
  %ptrs = weft.addptr %base, %offs : tensor<16x64x!weft.ptr<i32>>, tensor<16x64xi32>
  %tile = weft.load %ptrs : tensor<16x64x!weft.ptr<i32>>
  %sums = weft.reduce %tile axis = 1 : tensor<16x64xi32> -> tensor<16xi32> {
  ^bb0(%a: i32, %b: i32):
    %s = arith.addi %a, %b : i32
    weft.reduce.return %s : i32
  }
  %max = weft.reduce %sums axis = 0 : tensor<16xi32> -> i32 {
  ^bb0(%a: i32, %b: i32):
    %m = arith.maxsi %a, %b : i32
    weft.reduce.return %m : i32
  }
  weft.store %out, %max : !weft.ptr<i32>
  return
}
