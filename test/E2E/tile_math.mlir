// Math functions on a tile: out_f[i] = f(x[i]) for exp, log, sin, tanh,
// sqrt and erf, 64 elements per program.
func.func @tile_math(%x: !weft.ptr<f32>, %exp: !weft.ptr<f32>,
                     %log: !weft.ptr<f32>, %sin: !weft.ptr<f32>,
                     %tanh: !weft.ptr<f32>, %sqrt: !weft.ptr<f32>,
                     %erf: !weft.ptr<f32>) attributes {weft.kernel} {
  %pid = weft.program_id x : i32
  %c64 = arith.constant 64 : i32
  %start = arith.muli %pid, %c64 : i32
  %r = weft.make_range 0, 64 : tensor<64xi32>
  %s = weft.splat %start : i32 -> tensor<64xi32>
  %offs = arith.addi %s, %r : tensor<64xi32>
  %xs = weft.splat %x : !weft.ptr<f32> -> tensor<64x!weft.ptr<f32>>
  %xp = weft.addptr %xs, %offs : tensor<64x!weft.ptr<f32>>, tensor<64xi32>
  %a = weft.load %xp : tensor<64x!weft.ptr<f32>>

  %e = math.exp %a : tensor<64xf32>
  %es = weft.splat %exp : !weft.ptr<f32> -> tensor<64x!weft.ptr<f32>>
  %ep = weft.addptr %es, %offs : tensor<64x!weft.ptr<f32>>, tensor<64xi32>
  weft.store %ep, %e : tensor<64x!weft.ptr<f32>>

  %l = math.log %a : tensor<64xf32>
  %ls = weft.splat %log : !weft.ptr<f32> -> tensor<64x!weft.ptr<f32>>
  %lp = weft.addptr %ls, %offs : tensor<64x!weft.ptr<f32>>, tensor<64xi32>
  weft.store %lp, %l : tensor<64x!weft.ptr<f32>>

  %n = math.sin %a : tensor<64xf32>
  %ns = weft.splat %sin : !weft.ptr<f32> -> tensor<64x!weft.ptr<f32>>
  %np = weft.addptr %ns, %offs : tensor<64x!weft.ptr<f32>>, tensor<64xi32>
  weft.store %np, %n : tensor<64x!weft.ptr<f32>>

  %t = math.tanh %a : tensor<64xf32>
  %ts = weft.splat %tanh : !weft.ptr<f32> -> tensor<64x!weft.ptr<f32>>
  %tp = weft.addptr %ts, %offs : tensor<64x!weft.ptr<f32>>, tensor<64xi32>
  weft.store %tp, %t : tensor<64x!weft.ptr<f32>>

  %q = math.sqrt %a : tensor<64xf32>
  %qs = weft.splat %sqrt : !weft.ptr<f32> -> tensor<64x!weft.ptr<f32>>
  %qp = weft.addptr %qs, %offs : tensor<64x!weft.ptr<f32>>, tensor<64xi32>
  weft.store %qp, %q : tensor<64x!weft.ptr<f32>>

  %f = math.erf %a : tensor<64xf32>
  %fs = weft.splat %erf : !weft.ptr<f32> -> tensor<64x!weft.ptr<f32>>
  %fp = weft.addptr %fs, %offs : tensor<64x!weft.ptr<f32>>, tensor<64xi32>
  weft.store %fp, %f : tensor<64x!weft.ptr<f32>>
  return
}
