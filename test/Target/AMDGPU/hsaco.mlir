// --emit=hsaco links a code object for the HIP runtime: an AMDGPU ELF
// shared object for gfx942 with the kernel's descriptor and metadata.
//
// RUN: weft-compile %s --target=hip:gfx942 --emit=hsaco -o %t.hsaco
// RUN: llvm-readelf -h -s --notes %t.hsaco | FileCheck %s

// CHECK:       Class: ELF64
// CHECK:       OS/ABI: AMDGPU - HSA
// CHECK:       Type: DYN (Shared object file)
// CHECK:       Machine: EM_AMDGPU
// CHECK:       Flags: {{.*}}gfx942
// CHECK-DAG:   FUNC GLOBAL PROTECTED {{.*}} store_rank{{$}}
// CHECK-DAG:   OBJECT GLOBAL DEFAULT {{.*}} store_rank.kd{{$}}
// The kernel arguments: the pointer (8 bytes) and the 1088-byte context.
// CHECK:       .kernarg_segment_size: 1096
// CHECK:       .name: store_rank
// CHECK:       amdhsa.target: amdgcn-amd-amdhsa--gfx942
func.func @store_rank(%out: !weft.ptr<i32>) attributes {weft.kernel} {
  %r = weft.rank : i32
  weft.store %out, %r : !weft.ptr<i32>
  return
}
