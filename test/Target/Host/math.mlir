// `math` ops on the host are calls into the C library's libm (rsqrt, which
// libm lacks, is 1 / sqrt), and the .so names libm.so.6 as a dependency
// (lld links it --as-needed), so that it loads in processes that do not
// link libm themselves. Three kernels: every op on f32 scalars, a few on
// f64, and every op on a 64-element tile. test/E2E checks values.
//
// RUN: weft-compile %S/../Inputs/math-kernels.mlir --target=host --emit=llir -o %t.ll
// RUN: FileCheck %s < %t.ll
// RUN: weft-compile %S/../Inputs/math-kernels.mlir --target=host --emit=so -o %t.so
// RUN: llvm-readelf --dynamic --dyn-syms %t.so | FileCheck %s --check-prefix=SO
//
// A kernel without math keeps no libm dependency.
// RUN: weft-compile %S/../../E2E/tile_vadd.mlir --target=host --emit=so -o %t.vadd.so
// RUN: llvm-readelf --dynamic %t.vadd.so | FileCheck %s --check-prefix=NOLIBM

// CHECK-LABEL: define {{.*}}@math_scalar(
// CHECK:       call {{.*}}float @expf(
// CHECK:       call {{.*}}float @erff(
// CHECK-LABEL: define {{.*}}@math_f64(
// CHECK:       call {{.*}}double @exp(
// CHECK-LABEL: define {{.*}}@math_tile(
// CHECK:       load <4 x float>
// CHECK:       call {{.*}}float @expf(
// CHECK:       call {{.*}}float @erff(
// CHECK:       store <4 x float>

// SO:     (NEEDED) Shared library: [libm.so.6]
// SO:     UND expf
// SO:     UND erff
// SO-NOT: UND rsqrt

// NOLIBM-NOT: libm.so.6
