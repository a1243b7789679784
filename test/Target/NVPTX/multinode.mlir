// A kernel of a job across nodes on sm_90 calls NVSHMEM's device functions
// for its off-node peers (docs/multinode.md): the PTX declares them
// `.extern .func` and ptxas assembles it as relocatable code. Where NVSHMEM's
// device library is not found there is no cubin, and asking for one says
// why; so does a library that lacks a function the kernel calls
// (multinode-link.mlir links one that has them).
//
// RUN: weft-compile %s --target=cuda:90 --multinode --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %ptxas -c %t.ptx
// RUN: not weft-compile %s --target=cuda:90 --multinode --emit=cubin -o %t.cubin 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOLIB
// RUN: llvm-as %S/../Inputs/device-library.ll -o %t.bc
// RUN: env WEFT_NVSHMEM_DEVICE_BC=%t.bc not weft-compile %s --target=cuda:90 --multinode \
// RUN:   --emit=cubin -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PARTIAL

// PTX-DAG:     .extern .func nvshmemx_putmem_nbi_block
// PTX-DAG:     .extern .func nvshmemx_putmem_signal_nbi_block
// PTX-DAG:     .extern .func nvshmemx_getmem_block
// PTX-DAG:     .extern .func nvshmemx_signal_op
// PTX-DAG:     .extern .func nvshmem_uint32_atomic_set
// PTX-DAG:     .extern .func nvshmem_quiet
// PTX-LABEL:   .entry transfers(
// PTX:         setp.ne.b64
// PTX:         call.uni nvshmemx_putmem_signal_nbi_block,
// PTX:         call.uni nvshmemx_getmem_block,
// PTX:         call.uni nvshmem_quiet,
// PTX-LABEL:   .entry put_and_quiet(
// PTX:         call.uni nvshmemx_putmem_nbi_block,
// PTX:         call.uni nvshmem_quiet,

// NOLIB: the kernel calls {{nvshmem[a-z_]+}}, which needs libnvshmem_device.bc, but no libnvshmem_device.bc was found
// PARTIAL: the kernel calls {{nvshmem[a-z_0-9]+}}, which {{.*}}.bc does not define

func.func @transfers(%d: !weft.ptr<f32>, %s: !weft.ptr<f32>, %flag: !weft.ptr<i64>,
                     %f32: !weft.ptr<i32>, %n: i64, %peer: i32, %v: i64, %w: i32)
    attributes {weft.kernel} {
  weft.put %d, %s, %n, %peer signal set %flag, %v : !weft.ptr<f32>, !weft.ptr<f32>, !weft.ptr<i64>
  weft.get %d, %s, %n, %peer : !weft.ptr<f32>, !weft.ptr<f32>
  weft.signal add release sys %flag, %v peer %peer : !weft.ptr<i64>
  weft.signal set relaxed sys %f32, %w peer %peer : !weft.ptr<i32>
  weft.quiet
  return
}

func.func @put_and_quiet(%d: !weft.ptr<f32>, %s: !weft.ptr<f32>, %n: i64, %peer: i32)
    attributes {weft.kernel} {
  weft.put %d, %s, %n, %peer : !weft.ptr<f32>, !weft.ptr<f32>
  weft.quiet
  return
}
