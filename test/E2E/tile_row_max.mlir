// out[row] = max over the 64 columns of src[row][:], 16 rows per program.
func.func @tile_row_max(%src: !weft.ptr<i32>, %out: !weft.ptr<i32>) attributes {weft.kernel} {
  %pid = weft.program_id x : i32
  %c16 = arith.constant 16 : i32
  %row0 = arith.muli %pid, %c16 : i32
  %r = weft.make_range 0, 16 : tensor<16xi32>
  %rs = weft.splat %row0 : i32 -> tensor<16xi32>
  %rows = arith.addi %rs, %r : tensor<16xi32>
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
  %max = weft.reduce %tile axis = 1 : tensor<16x64xi32> -> tensor<16xi32> {
  ^bb0(%a: i32, %b: i32):
    %m = arith.maxsi %a, %b : i32
    weft.reduce.return %m : i32
  }
  %obase = weft.splat %out : !weft.ptr<i32> -> tensor<16x!weft.ptr<i32>>
  %optrs = weft.addptr %obase, %rows : tensor<16x!weft.ptr<i32>>, tensor<16xi32>
  weft.store %optrs, %max : tensor<16x!weft.ptr<i32>>
  return
}
