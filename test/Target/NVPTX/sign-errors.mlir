// Integer negations reach ptxas as a complement and an increment. ptxas
// (CUDA 12.8 to 13.3, sm_90, -O1 and up) fuses two signed min/max into
// one three-input VIMNMX3 and drops a negation folded into its operand:
// min(min(x, -(a + b)), y) came out as min(min(x, a + b), y) (found by
// random programs on an H200; python/test/language/test_elementwise.py,
// test_negated_min_max, runs it).
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
