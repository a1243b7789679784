// A masked vector add (test/E2E/tile_vadd.mlir, run on the host there).
// Under a mask, a vector whose lanes are all on is one 16-byte access; any
// other is the tail, one predicated scalar access per lane (on the GPUs).
//
// RUN: weft-compile %S/../../E2E/tile_vadd.mlir --target=cuda:90 --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=NV < %t.ptx
// RUN: %ptxas %t.ptx
// RUN: weft-compile %S/../../E2E/tile_vadd.mlir --target=hip:gfx942 --emit=amdgcn -o %t.s
// RUN: FileCheck %s --check-prefix=AMD < %t.s
// RUN: weft-compile %S/../../E2E/tile_vadd.mlir --target=host --emit=llir -o %t.ll
// RUN: FileCheck %s --check-prefix=HOST < %t.ll

// NV-LABEL: .entry tile_vadd(
// NV:       @%p[[ALL:[0-9]+]] bra
// NV:       ld.global.v4.b32 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [%rd[[X:[0-9]+]]];
// NV:       @%p{{[0-9]+}} bra
// NV-NEXT:  ld.global.b32 %r{{[0-9]+}}, [%rd[[X]]];
// NV:       st.global.v4.b32
// NV:       st.global.b32

// AMD-LABEL: tile_vadd:
// AMD:       global_load_dwordx4
// AMD:       global_load_dword v
// AMD:       global_store_dwordx4
// AMD:       global_store_dword v

// The host holds the program's 64 elements in one thread: sixteen groups
// of four, each one masked <4 x float> access that the code generator
// expands after the optimiser (TargetInfo::masksAccessesAsVectors).
// HOST-LABEL: define {{.*}}@tile_vadd(
// HOST:       @llvm.masked.load.v4f32.p0(ptr align 16 %{{[0-9]+}}, <4 x i1>
// HOST:       @llvm.masked.store.v4f32.p0(<4 x float> %{{[0-9]+}}, ptr align 16 %{{[0-9]+}}, <4 x i1>
// HOST-NOT:   load float
