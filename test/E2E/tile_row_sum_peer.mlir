// The acceptance kernel of the tile IR: load a 16x64 tile, sum its rows,
// store the 16 sums into rank `peer`'s copy of out.
func.func @tile_row_sum_peer(%src: !weft.ptr<f32>, %out: !weft.ptr<f32>, %peer: i32) attributes {weft.kernel} {
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
  %base = weft.splat %src : !weft.ptr<f32> -> tensor<16x64x!weft.ptr<f32>>
  %ptrs = weft.addptr %base, %offs : tensor<16x64x!weft.ptr<f32>>, tensor<16x64xi32>
  %tile = weft.load %ptrs : tensor<16x64x!weft.ptr<f32>>
  %sums = weft.reduce %tile axis = 1 : tensor<16x64xf32> -> tensor<16xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    weft.reduce.return %s : f32
  }
  %obase = weft.splat %out : !weft.ptr<f32> -> tensor<16x!weft.ptr<f32>>
  %optrs = weft.addptr %obase, %rows : tensor<16x!weft.ptr<f32>>, tensor<16xi32>
  %remote = weft.translate %optrs, %peer : tensor<16x!weft.ptr<f32>>
  weft.store %remote, %sums : tensor<16x!weft.ptr<f32>>
  return
}
