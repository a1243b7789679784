// NVSHMEM's device library linked into a kernel of a job across nodes
// ($WEFT_NVSHMEM_DEVICE_BC names a library of its shape, Inputs/
// device-library.ll): the functions the kernel calls come in, built for
// this processor (the library's target-cpu dropped) and inlined; what it
// does not call stays out; its globals stay visible, since
// nvshmemx_cumodule_init finds the device state by name once the cubin is
// loaded. The PTX then assembles to a cubin.
//
// RUN: llvm-as %S/../Inputs/device-library.ll -o %t.bc
// RUN: env WEFT_NVSHMEM_DEVICE_BC=%t.bc weft-compile %s --target=cuda:90 --multinode \
// RUN:   --emit=ptx -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas %t.ptx

// CHECK:       .visible .global .align 8 .b8 nvshmemi_device_state_d[32];
// CHECK-NOT:   .extern
// CHECK-NOT:   nvshmem_unused
// CHECK-LABEL: .entry put_and_quiet(
// CHECK-NOT:   call
// CHECK:       st.global.b64 [nvshmemi_device_state_d+8]

func.func @put_and_quiet(%d: !weft.ptr<f32>, %s: !weft.ptr<f32>, %n: i64, %peer: i32)
    attributes {weft.kernel} {
  weft.put %d, %s, %n, %peer : !weft.ptr<f32>, !weft.ptr<f32>
  weft.quiet
  return
}
