// Every floating-point `math` op of the kernel language, on scalars (f32,
// and f64 for a few) and on a 64-element tile loaded from and stored to
// memory, for test/Target/{NVPTX,AMDGPU,Host}/math.mlir. The results are
// summed so that none is dead.

func.func @math_scalar(%out: !weft.ptr<f32>, %x: f32, %y: f32) attributes {weft.kernel} {
  %u0 = math.exp %x : f32
  %u1 = math.exp2 %x : f32
  %u2 = math.expm1 %x : f32
  %u3 = math.log %x : f32
  %u4 = math.log2 %x : f32
  %u5 = math.log10 %x : f32
  %u6 = math.log1p %x : f32
  %u7 = math.sqrt %x : f32
  %u8 = math.rsqrt %x : f32
  %u9 = math.cbrt %x : f32
  %u10 = math.sin %x : f32
  %u11 = math.cos %x : f32
  %u12 = math.tan %x : f32
  %u13 = math.asin %x : f32
  %u14 = math.acos %x : f32
  %u15 = math.atan %x : f32
  %u16 = math.sinh %x : f32
  %u17 = math.cosh %x : f32
  %u18 = math.tanh %x : f32
  %u19 = math.asinh %x : f32
  %u20 = math.acosh %x : f32
  %u21 = math.atanh %x : f32
  %u22 = math.erf %x : f32
  %u23 = math.erfc %x : f32
  %u24 = math.absf %x : f32
  %u25 = math.floor %x : f32
  %u26 = math.ceil %x : f32
  %u27 = math.trunc %x : f32
  %u28 = math.round %x : f32
  %u29 = math.roundeven %x : f32
  %b0 = math.powf %x, %y : f32
  %b1 = math.atan2 %x, %y : f32
  %b2 = math.copysign %x, %y : f32
  %fma = math.fma %x, %y, %x : f32
  %s0 = arith.addf %u0, %u1 : f32
  %s1 = arith.addf %s0, %u2 : f32
  %s2 = arith.addf %s1, %u3 : f32
  %s3 = arith.addf %s2, %u4 : f32
  %s4 = arith.addf %s3, %u5 : f32
  %s5 = arith.addf %s4, %u6 : f32
  %s6 = arith.addf %s5, %u7 : f32
  %s7 = arith.addf %s6, %u8 : f32
  %s8 = arith.addf %s7, %u9 : f32
  %s9 = arith.addf %s8, %u10 : f32
  %s10 = arith.addf %s9, %u11 : f32
  %s11 = arith.addf %s10, %u12 : f32
  %s12 = arith.addf %s11, %u13 : f32
  %s13 = arith.addf %s12, %u14 : f32
  %s14 = arith.addf %s13, %u15 : f32
  %s15 = arith.addf %s14, %u16 : f32
  %s16 = arith.addf %s15, %u17 : f32
  %s17 = arith.addf %s16, %u18 : f32
  %s18 = arith.addf %s17, %u19 : f32
  %s19 = arith.addf %s18, %u20 : f32
  %s20 = arith.addf %s19, %u21 : f32
  %s21 = arith.addf %s20, %u22 : f32
  %s22 = arith.addf %s21, %u23 : f32
  %s23 = arith.addf %s22, %u24 : f32
  %s24 = arith.addf %s23, %u25 : f32
  %s25 = arith.addf %s24, %u26 : f32
  %s26 = arith.addf %s25, %u27 : f32
  %s27 = arith.addf %s26, %u28 : f32
  %s28 = arith.addf %s27, %u29 : f32
  %s29 = arith.addf %s28, %b0 : f32
  %s30 = arith.addf %s29, %b1 : f32
  %s31 = arith.addf %s30, %b2 : f32
  %s32 = arith.addf %s31, %fma : f32
  weft.store %out, %s32 : !weft.ptr<f32>
  return
}

func.func @math_f64(%out: !weft.ptr<f64>, %x: f64, %y: f64) attributes {weft.kernel} {
  %e = math.exp %x : f64
  %s = math.sin %e : f64
  %l = math.log %s : f64
  %p = math.powf %l, %y : f64
  %t = math.tanh %p : f64
  weft.store %out, %t : !weft.ptr<f64>
  return
}

func.func @math_tile(%x: !weft.ptr<f32>, %y: !weft.ptr<f32>, %out: !weft.ptr<f32>) attributes {weft.kernel} {
  %pid = weft.program_id x : i32
  %c64 = arith.constant 64 : i32
  %start = arith.muli %pid, %c64 : i32
  %r = weft.make_range 0, 64 : tensor<64xi32>
  %s = weft.splat %start : i32 -> tensor<64xi32>
  %offs = arith.addi %s, %r : tensor<64xi32>
  %xs = weft.splat %x : !weft.ptr<f32> -> tensor<64x!weft.ptr<f32>>
  %xp = weft.addptr %xs, %offs : tensor<64x!weft.ptr<f32>>, tensor<64xi32>
  %ys = weft.splat %y : !weft.ptr<f32> -> tensor<64x!weft.ptr<f32>>
  %yp = weft.addptr %ys, %offs : tensor<64x!weft.ptr<f32>>, tensor<64xi32>
  %os = weft.splat %out : !weft.ptr<f32> -> tensor<64x!weft.ptr<f32>>
  %op = weft.addptr %os, %offs : tensor<64x!weft.ptr<f32>>, tensor<64xi32>
  %a = weft.load %xp : tensor<64x!weft.ptr<f32>>
  %b = weft.load %yp : tensor<64x!weft.ptr<f32>>
  %u0 = math.exp %a : tensor<64xf32>
  %u1 = math.exp2 %a : tensor<64xf32>
  %u2 = math.expm1 %a : tensor<64xf32>
  %u3 = math.log %a : tensor<64xf32>
  %u4 = math.log2 %a : tensor<64xf32>
  %u5 = math.log10 %a : tensor<64xf32>
  %u6 = math.log1p %a : tensor<64xf32>
  %u7 = math.sqrt %a : tensor<64xf32>
  %u8 = math.rsqrt %a : tensor<64xf32>
  %u9 = math.cbrt %a : tensor<64xf32>
  %u10 = math.sin %a : tensor<64xf32>
  %u11 = math.cos %a : tensor<64xf32>
  %u12 = math.tan %a : tensor<64xf32>
  %u13 = math.asin %a : tensor<64xf32>
  %u14 = math.acos %a : tensor<64xf32>
  %u15 = math.atan %a : tensor<64xf32>
  %u16 = math.sinh %a : tensor<64xf32>
  %u17 = math.cosh %a : tensor<64xf32>
  %u18 = math.tanh %a : tensor<64xf32>
  %u19 = math.asinh %a : tensor<64xf32>
  %u20 = math.acosh %a : tensor<64xf32>
  %u21 = math.atanh %a : tensor<64xf32>
  %u22 = math.erf %a : tensor<64xf32>
  %u23 = math.erfc %a : tensor<64xf32>
  %u24 = math.absf %a : tensor<64xf32>
  %u25 = math.floor %a : tensor<64xf32>
  %u26 = math.ceil %a : tensor<64xf32>
  %u27 = math.trunc %a : tensor<64xf32>
  %u28 = math.round %a : tensor<64xf32>
  %u29 = math.roundeven %a : tensor<64xf32>
  %b0 = math.powf %a, %b : tensor<64xf32>
  %b1 = math.atan2 %a, %b : tensor<64xf32>
  %b2 = math.copysign %a, %b : tensor<64xf32>
  %fma = math.fma %a, %b, %a : tensor<64xf32>
  %s0 = arith.addf %u0, %u1 : tensor<64xf32>
  %s1 = arith.addf %s0, %u2 : tensor<64xf32>
  %s2 = arith.addf %s1, %u3 : tensor<64xf32>
  %s3 = arith.addf %s2, %u4 : tensor<64xf32>
  %s4 = arith.addf %s3, %u5 : tensor<64xf32>
  %s5 = arith.addf %s4, %u6 : tensor<64xf32>
  %s6 = arith.addf %s5, %u7 : tensor<64xf32>
  %s7 = arith.addf %s6, %u8 : tensor<64xf32>
  %s8 = arith.addf %s7, %u9 : tensor<64xf32>
  %s9 = arith.addf %s8, %u10 : tensor<64xf32>
  %s10 = arith.addf %s9, %u11 : tensor<64xf32>
  %s11 = arith.addf %s10, %u12 : tensor<64xf32>
  %s12 = arith.addf %s11, %u13 : tensor<64xf32>
  %s13 = arith.addf %s12, %u14 : tensor<64xf32>
  %s14 = arith.addf %s13, %u15 : tensor<64xf32>
  %s15 = arith.addf %s14, %u16 : tensor<64xf32>
  %s16 = arith.addf %s15, %u17 : tensor<64xf32>
  %s17 = arith.addf %s16, %u18 : tensor<64xf32>
  %s18 = arith.addf %s17, %u19 : tensor<64xf32>
  %s19 = arith.addf %s18, %u20 : tensor<64xf32>
  %s20 = arith.addf %s19, %u21 : tensor<64xf32>
  %s21 = arith.addf %s20, %u22 : tensor<64xf32>
  %s22 = arith.addf %s21, %u23 : tensor<64xf32>
  %s23 = arith.addf %s22, %u24 : tensor<64xf32>
  %s24 = arith.addf %s23, %u25 : tensor<64xf32>
  %s25 = arith.addf %s24, %u26 : tensor<64xf32>
  %s26 = arith.addf %s25, %u27 : tensor<64xf32>
  %s27 = arith.addf %s26, %u28 : tensor<64xf32>
  %s28 = arith.addf %s27, %u29 : tensor<64xf32>
  %s29 = arith.addf %s28, %b0 : tensor<64xf32>
  %s30 = arith.addf %s29, %b1 : tensor<64xf32>
  %s31 = arith.addf %s30, %b2 : tensor<64xf32>
  %s32 = arith.addf %s31, %fma : tensor<64xf32>
  weft.store %op, %s32 : tensor<64x!weft.ptr<f32>>
  return
}
