// Copies this program's 16x64 tile of src into the same place of dst on
// rank `peer`, with a release store (the host takes the same path as the
// GPUs: relaxed vector stores after a fence).
func.func @tile_copy_peer(%src: !weft.ptr<f32>, %dst: !weft.ptr<f32>, %peer: i32) attributes {weft.kernel} {
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
  %sbase = weft.splat %src : !weft.ptr<f32> -> tensor<16x64x!weft.ptr<f32>>
  %sptrs = weft.addptr %sbase, %offs : tensor<16x64x!weft.ptr<f32>>, tensor<16x64xi32>
  %tile = weft.load %sptrs : tensor<16x64x!weft.ptr<f32>>
  %dbase = weft.splat %dst : !weft.ptr<f32> -> tensor<16x64x!weft.ptr<f32>>
  %dptrs = weft.addptr %dbase, %offs : tensor<16x64x!weft.ptr<f32>>, tensor<16x64xi32>
  %remote = weft.translate %dptrs, %peer : tensor<16x64x!weft.ptr<f32>>
  weft.store release sys %remote, %tile : tensor<16x64x!weft.ptr<f32>>
  return
}
