// out[i] = x[i] + y[i] for i < n, 64 elements per program; the last
// program's tail is masked.
func.func @tile_vadd(%x: !weft.ptr<f32>, %y: !weft.ptr<f32>, %out: !weft.ptr<f32>,
                     %n: i32) attributes {weft.kernel} {
  %pid = weft.program_id x : i32
  %c64 = arith.constant 64 : i32
  %start = arith.muli %pid, %c64 : i32
  %r = weft.make_range 0, 64 : tensor<64xi32>
  %s = weft.splat %start : i32 -> tensor<64xi32>
  %offs = arith.addi %s, %r : tensor<64xi32>
  %ns = weft.splat %n : i32 -> tensor<64xi32>
  %mask = arith.cmpi slt, %offs, %ns : tensor<64xi32>
  %xs = weft.splat %x : !weft.ptr<f32> -> tensor<64x!weft.ptr<f32>>
  %xp = weft.addptr %xs, %offs : tensor<64x!weft.ptr<f32>>, tensor<64xi32>
  %ys = weft.splat %y : !weft.ptr<f32> -> tensor<64x!weft.ptr<f32>>
  %yp = weft.addptr %ys, %offs : tensor<64x!weft.ptr<f32>>, tensor<64xi32>
  %os = weft.splat %out : !weft.ptr<f32> -> tensor<64x!weft.ptr<f32>>
  %op = weft.addptr %os, %offs : tensor<64x!weft.ptr<f32>>, tensor<64xi32>
  %a = weft.load %xp, mask %mask : tensor<64x!weft.ptr<f32>>
  %b = weft.load %yp, mask %mask : tensor<64x!weft.ptr<f32>>
  %sum = arith.addf %a, %b : tensor<64xf32>
  weft.store %op, %sum, mask %mask : tensor<64x!weft.ptr<f32>>
  return
}
