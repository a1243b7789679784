// f16 and bf16 on the host: x86-64 computes them in f32 and the backend
// calls compiler-rt's conversions (__extendhfsf2, __truncsfhf2,
// __truncdfhf2, __truncsfbf2, __truncdfbf2), which no process that
// dlopen()s the .so is sure to have. They are linked into the .so from the
// builtins archive, local to it: nothing but libm's functions stays
// undefined, and the helpers are not exported.
//
// RUN: weft-compile %s --target=host --emit=so -o %t.so
// RUN: llvm-nm -D --undefined-only %t.so | FileCheck %s --check-prefix=UNDEF --allow-empty
// RUN: llvm-nm %t.so | FileCheck %s --check-prefix=LOCAL
// RUN: llvm-nm -D --defined-only %t.so | FileCheck %s --check-prefix=EXPORT

// UNDEF-NOT: __
// LOCAL-DAG: t __extendhfsf2
// LOCAL-DAG: t __truncsfhf2
// LOCAL-DAG: t __truncdfhf2
// LOCAL-DAG: t __truncsfbf2
// LOCAL-DAG: t __truncdfbf2
// EXPORT-NOT: __{{extend|trunc}}
// EXPORT:     T half_ops
// EXPORT-NOT: __{{extend|trunc}}

// Arithmetic, libm calls, and conversions from and to f64 and integers.
func.func @half_ops(%a: !weft.ptr<f16>, %b: !weft.ptr<bf16>, %d: !weft.ptr<f64>, %i: !weft.ptr<i32>) attributes {weft.kernel} {
  %x = weft.load %a : !weft.ptr<f16>
  %y = weft.load %b : !weft.ptr<bf16>
  %w = weft.load %d : !weft.ptr<f64>
  %n = weft.load %i : !weft.ptr<i32>
  %x2 = arith.mulf %x, %x : f16
  %x3 = arith.divf %x2, %x : f16
  %xe = math.exp %x3 : f16
  %y2 = arith.addf %y, %y : bf16
  %ye = math.sqrt %y2 : bf16
  %wh = arith.truncf %w : f64 to f16
  %wb = arith.truncf %w : f64 to bf16
  %nh = arith.sitofp %n : i32 to f16
  %nb = arith.sitofp %n : i32 to bf16
  %yi = arith.fptosi %ye : bf16 to i32
  %xd = arith.extf %xe : f16 to f64
  %bd = arith.extf %wb : bf16 to f64
  %s1 = arith.addf %xe, %wh : f16
  %s2 = arith.addf %s1, %nh : f16
  %s3 = arith.addf %ye, %nb : bf16
  weft.store %a, %s2 : !weft.ptr<f16>
  weft.store %b, %s3 : !weft.ptr<bf16>
  %dd = arith.addf %xd, %bd : f64
  weft.store %d, %dd : !weft.ptr<f64>
  weft.store %i, %yi : !weft.ptr<i32>
  return
}
