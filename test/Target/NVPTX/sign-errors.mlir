// Signed negations and absolute values reach ptxas spelled so that it
// computes them as written (lib/Target/Codegen/Ptxas.cpp). Optimising
// (13.0 here, sm_90; the first also reported for 12.8 to 13.3), ptxas:
//  - fuses two signed min/max into one three-input VIMNMX3 and drops a
//    negation folded into its operand: min(min(x, -(a + b)), y) came out
//    as min(min(x, a + b), y); a negation becomes a complement and an
//    increment;
//  - takes abs's result to be non-negative, which the most negative
//    value's is not: abs(x) < 0 came out false, a 16-bit abs was widened
//    without its sign; an abs becomes (x ^ m) - m with m = x >> (N - 1).
// Found by random programs on an H200; test_elementwise's
// test_negated_min_max and test_abs_of_most_negative run them.
//
// RUN: weft-compile %s --target=cuda:90 --emit=ptx -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas %t.ptx

// CHECK-LABEL: .entry chains(
// CHECK-NOT:   neg.s
// CHECK:       add.s32 [[SUM:%r[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}};
// CHECK-NEXT:  not.b32 [[NOT:%r[0-9]+]], [[SUM]];
// CHECK-NEXT:  add.s32 [[NOT]], [[NOT]], 1;
// CHECK-NOT:   neg.s
// CHECK:       not.b64 [[NOT64:%rd[0-9]+]], %rd{{[0-9]+}};
// CHECK-NEXT:  add.s64 [[NOT64]], [[NOT64]], 1;
// CHECK-NOT:   neg.s
// CHECK:       ret;
func.func @chains(%a: i32, %b: i32, %x: i32, %y: i32, %out: !weft.ptr<i32>,
                  %c: i64, %z: i64, %w: i64, %out64: !weft.ptr<i64>) attributes {weft.kernel} {
  %zero = arith.constant 0 : i32
  %s = arith.addi %a, %b : i32
  %n = arith.subi %zero, %s : i32
  %m = arith.minsi %x, %n : i32
  %r = arith.minsi %y, %m : i32
  weft.store %out, %r : !weft.ptr<i32>
  %zero64 = arith.constant 0 : i64
  %n64 = arith.subi %zero64, %c : i64
  %m64 = arith.maxsi %z, %n64 : i64
  %r64 = arith.maxsi %w, %m64 : i64
  weft.store %out64, %r64 : !weft.ptr<i64>
  return
}

// CHECK-LABEL: .entry magnitudes(
// CHECK-NOT:   abs.s
// CHECK:       .reg .b16 %weft_sign;
// CHECK-NEXT:  shr.s16 %weft_sign, [[X16:%rs[0-9]+]], 15;
// CHECK-NEXT:  xor.b16 [[A16:%rs[0-9]+]], [[X16]], %weft_sign;
// CHECK-NEXT:  sub.s16 [[A16]], [[A16]], %weft_sign;
// CHECK:       shr.s32 %weft_sign, {{.*}}, 31;
// CHECK:       shr.s64 %weft_sign, {{.*}}, 63;
// CHECK-NOT:   abs.s
// CHECK:       ret;
func.func @magnitudes(%x16: i16, %out16: !weft.ptr<i32>, %x32: i32, %out32: !weft.ptr<i32>,
                      %x64: i64, %out64: !weft.ptr<i64>) attributes {weft.kernel} {
  %a16 = math.absi %x16 : i16
  %w16 = arith.extsi %a16 : i16 to i32
  weft.store %out16, %w16 : !weft.ptr<i32>
  %zero = arith.constant 0 : i32
  %a32 = math.absi %x32 : i32
  %neg32 = arith.cmpi slt, %a32, %zero : i32
  %r32 = arith.select %neg32, %x32, %zero : i32
  weft.store %out32, %r32 : !weft.ptr<i32>
  %a64 = math.absi %x64 : i64
  weft.store %out64, %a64 : !weft.ptr<i64>
  return
}
