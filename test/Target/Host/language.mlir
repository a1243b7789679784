// The language's newer ops on the host (test/Target/Inputs/language-kernels.mlir):
// printf is the C library's; python/test/language runs them against numpy.
//
// RUN: weft-compile %S/../Inputs/language-kernels.mlir --target=host --debug --emit=asm -o %t.s
// RUN: FileCheck %s < %t.s

// CHECK: callq printf@PLT
