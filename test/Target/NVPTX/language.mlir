// The language's newer ops on sm_90 (test/Target/Inputs/language-kernels.mlir):
// access hints as PTX qualifiers (a cache operator, else an L1 eviction
// priority: PTX has no access with both; volatile is ld.volatile), printf
// through the driver's vprintf, and everything assembles.
//
// RUN: weft-compile %S/../Inputs/language-kernels.mlir --target=cuda:90 --debug --emit=ptx -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas %t.ptx

// CHECK-LABEL: .entry hinted(
// CHECK-DAG:   ld.global.cg.v4.b32
// CHECK-DAG:   ld.volatile.global.v4.b32
// CHECK-DAG:   st.global.cs.v4.b32
// CHECK-LABEL: .entry rearranged(
// CHECK-LABEL: .entry checked(
// CHECK:       vprintf
