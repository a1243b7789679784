// f16 and bf16 on the host: s = f32(a[i]) + f32(b[i]) for an f16 `a` and a
// bf16 `b`, stored back rounded to f16 and to bf16. x86-64 has neither
// type: the conversions are compiler-rt's, linked into the .so.
func.func @tile_half(%a: !weft.ptr<f16>, %b: !weft.ptr<bf16>,
                     %h: !weft.ptr<f16>, %bf: !weft.ptr<bf16>) attributes {weft.kernel} {
  %pid = weft.program_id x : i32
  %c64 = arith.constant 64 : i32
  %start = arith.muli %pid, %c64 : i32
  %r = weft.make_range 0, 64 : tensor<64xi32>
  %s = weft.splat %start : i32 -> tensor<64xi32>
  %offs = arith.addi %s, %r : tensor<64xi32>
  %as = weft.splat %a : !weft.ptr<f16> -> tensor<64x!weft.ptr<f16>>
  %ap = weft.addptr %as, %offs : tensor<64x!weft.ptr<f16>>, tensor<64xi32>
  %av = weft.load %ap : tensor<64x!weft.ptr<f16>>
  %bs = weft.splat %b : !weft.ptr<bf16> -> tensor<64x!weft.ptr<bf16>>
  %bp = weft.addptr %bs, %offs : tensor<64x!weft.ptr<bf16>>, tensor<64xi32>
  %bv = weft.load %bp : tensor<64x!weft.ptr<bf16>>
  %a32 = arith.extf %av : tensor<64xf16> to tensor<64xf32>
  %b32 = arith.extf %bv : tensor<64xbf16> to tensor<64xf32>
  %sum = arith.addf %a32, %b32 : tensor<64xf32>
  %h16 = arith.truncf %sum : tensor<64xf32> to tensor<64xf16>
  %hs = weft.splat %h : !weft.ptr<f16> -> tensor<64x!weft.ptr<f16>>
  %hp = weft.addptr %hs, %offs : tensor<64x!weft.ptr<f16>>, tensor<64xi32>
  weft.store %hp, %h16 : tensor<64x!weft.ptr<f16>>
  %b16 = arith.truncf %sum : tensor<64xf32> to tensor<64xbf16>
  %fs = weft.splat %bf : !weft.ptr<bf16> -> tensor<64x!weft.ptr<bf16>>
  %fp = weft.addptr %fs, %offs : tensor<64x!weft.ptr<bf16>>, tensor<64xi32>
  weft.store %fp, %b16 : tensor<64x!weft.ptr<bf16>>
  return
}
