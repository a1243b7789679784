// An error of LLVM's back end is the compile's error, not the end of the
// process (LLVM's default handler prints it and exits): here the assembler
// rejects a hand-written instruction, at its line of the backend's
// assembly (which the object is assembled from).
//
// RUN: not weft-compile %s --target=hip:gfx942 --emit=hsaco -o %t.hsaco 2>&1 | FileCheck %s
// CHECK: LLVM: assembly:{{[0-9]+}}:2: error: invalid instruction
// CHECK-NEXT: no_such_instruction

module {
  func.func @bad(%p: !weft.ptr<i32>) attributes {weft.kernel} {
    %a = weft.load %p : !weft.ptr<i32>
    %r = weft.inline_asm "no_such_instruction $0, $1" "=v,v" pure pack 1 %a : (i32) -> i32
    weft.store %p, %r : !weft.ptr<i32>
    return
  }
}
