// `math` ops on AMDGPU: f32 exp, log, sqrt, fma, floor, ... are LLVM
// intrinsics that the backend expands precisely itself (v_exp_f32 and
// v_log_f32 with range scaling, v_sqrt_f32 with correction); the rest
// (sin, cos, tanh, erf, pow, the f64 functions, ...) are calls into ROCm's
// OCML, linked before optimisation and internalized, as HIP does without
// fast-math. No `__ocml_` function is left and the code object has no
// undefined symbol. Three kernels: every op on f32 scalars, a few on f64,
// and every op on a 64-element tile.
//
// REQUIRES: ocml
// RUN: weft-compile %S/../Inputs/math-kernels.mlir --target=hip:gfx942 --emit=amdgcn -o %t.s
// RUN: FileCheck %s --implicit-check-not=__ocml_ < %t.s
// RUN: weft-compile %S/../Inputs/math-kernels.mlir --target=hip:gfx942 --emit=hsaco -o %t.hsaco
// RUN: llvm-readelf --dyn-syms %t.hsaco | FileCheck %s --check-prefix=HSACO
//
// Without OCML, a kernel that needs it fails naming what was searched.
// RUN: env WEFT_OCML=%t.missing.bc not weft-compile %S/../Inputs/math-kernels.mlir --target=hip:gfx942 --emit=amdgcn -o /dev/null 2>&1 | FileCheck %s --check-prefix=MISSING

// MISSING: the kernel calls __ocml_{{[a-z0-9_]+}}, which needs OCML, but no OCML was found (looked for {{.*}}.missing.bc; $WEFT_OCML names the file)

// CHECK-LABEL: math_scalar:
// CHECK-DAG:   v_exp_f32
// CHECK-DAG:   v_sqrt_f32
// CHECK-DAG:   v_log_f32
// CHECK:       s_endpgm

// CHECK-LABEL: math_f64:
// CHECK:       v_fma_f64
// CHECK:       s_endpgm

// CHECK-LABEL: math_tile:
// CHECK:       global_load_dwordx4
// CHECK-DAG:   v_exp_f32
// CHECK-DAG:   v_sqrt_f32
// CHECK-DAG:   v_log_f32
// CHECK:       global_store_dwordx4
// CHECK:       s_endpgm

// HSACO:     Symbol table '.dynsym'
// HSACO-NOT: GLOBAL {{.*}} UND
// HSACO:     FUNC GLOBAL PROTECTED {{.*}} math_scalar
// HSACO-NOT: GLOBAL {{.*}} UND
