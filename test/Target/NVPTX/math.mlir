// `math` ops on NVPTX are calls into NVIDIA's libdevice, linked before
// optimisation and internalized: no `__nv_` function is left, not even
// declared, and the PTX assembles. Precise by default, like nvcc without
// -use_fast_math: sqrt is sqrt.rn, exp and log are libdevice's scaled
// ex2/lg2 sequences with their range checks, sin and cos reduce their
// argument with libdevice's tables. Three kernels: every op on f32
// scalars, a few on f64, and every op on a 64-element tile.
//
// REQUIRES: libdevice
// RUN: weft-compile %S/../Inputs/math-kernels.mlir --target=cuda:90 --emit=ptx -o %t.ptx
// RUN: FileCheck %s --implicit-check-not=__nv_ < %t.ptx
// RUN: %ptxas %t.ptx
//
// Without libdevice, a kernel that needs it fails naming what was searched;
// a kernel without math does not need it.
// RUN: env WEFT_LIBDEVICE=%t.missing.bc not weft-compile %S/../Inputs/math-kernels.mlir --target=cuda:90 --emit=ptx -o /dev/null 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: env WEFT_LIBDEVICE=%t.missing.bc weft-compile %S/../../E2E/tile_vadd.mlir --target=cuda:90 --emit=ptx -o /dev/null

// MISSING: the kernel calls __nv_{{[a-z0-9_]+}}, which needs libdevice, but no libdevice was found (looked for {{.*}}.missing.bc; $WEFT_LIBDEVICE names the file)

// sin/cos's Payne-Hanek reduction table.
// CHECK:       .global .align 4 .b8 __cudart_i2opi_f[24]

// CHECK-LABEL: .visible .entry math_scalar(
// CHECK-DAG:   ex2.approx
// CHECK-DAG:   sqrt.rn.f32
// CHECK-DAG:   lg2.approx
// CHECK:       ret;

// CHECK-LABEL: .visible .entry math_f64(
// CHECK:       fma.rn.f64
// CHECK:       ret;

// CHECK-LABEL: .visible .entry math_tile(
// CHECK:       ld.global.v4.b32
// CHECK-DAG:   ex2.approx
// CHECK-DAG:   sqrt.rn.f32
// CHECK-DAG:   lg2.approx
// CHECK:       st.global.v4.b32
// CHECK:       ret;
