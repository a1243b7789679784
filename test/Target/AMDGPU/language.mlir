// The language's newer ops on gfx942 (test/Target/Inputs/language-kernels.mlir):
// streaming hints as nontemporal accesses, printf through OCKL's hostcalls
// (linked and internalized like OCML), and a code object without
// undefined symbols.
//
// RUN: weft-compile %S/../Inputs/language-kernels.mlir --target=hip:gfx942 --debug --emit=amdgcn -o %t.s
// RUN: FileCheck %s --implicit-check-not=__ockl_printf < %t.s
// RUN: weft-compile %S/../Inputs/language-kernels.mlir --target=hip:gfx942 --debug --emit=hsaco -o %t.hsaco
// RUN: llvm-readelf --dyn-syms %t.hsaco | FileCheck %s --check-prefix=HSACO

// CHECK-LABEL: hinted:
// CHECK:       global_load_dwordx4 {{.*}} nt
// CHECK-LABEL: checked:
// CHECK:       __ockl_hostcall_internal
// HSACO-NOT:   UND {{.*}}__ockl

// gfx942 has no bf16 frem: after the optimiser (which narrows the f32 one
// the frontend writes) it is widened to f32 again (Codegen.cpp).
// RUN: weft-compile %s --target=hip:gfx942 --emit=hsaco -o %t.rem.hsaco
// RUN: weft-compile %s --target=hip:gfx942 --emit=llir -o - | FileCheck %s --check-prefix=REM
// REM-LABEL: define {{.*}}@rem(
// REM:         frem float
// REM-NOT:     frem bfloat
module {
  func.func @rem(%p: !weft.ptr<bf16>, %q: !weft.ptr<bf16>) attributes {weft.kernel} {
    %a = weft.load %p : !weft.ptr<bf16>
    %b = weft.load %q : !weft.ptr<bf16>
    %r = arith.remf %a, %b : bf16
    weft.store %p, %r : !weft.ptr<bf16>
    return
  }
}
