// Tensor-descriptor blocks outside pipelined K loops become masked tile
// accesses of the descriptor's fields (weft-expand-tensor-descs): the
// block's coordinates checked against the tensor's shape (one unsigned
// compare per dimension, so negative coordinates are outside too), the
// address base + row * stride + column, the last stride 1. What the
// runtime guarantees of the fields (a 16-byte aligned base, strides of
// whole 16-byte chunks) makes the accesses vectors: f32 rows as v4 loads
// and stores on sm_90, dwordx4 on gfx942, <4 x float> on the host, each
// group of 4 under one branch (the shape is only known at launch). The
// kernel takes the descriptors by value: 256-byte, 64-byte aligned
// parameters on sm_90 (grid_constant), byref kernel arguments on gfx942,
// and pointers into the runtime's argument slots on the host.
//
// RUN: weft-opt %s --weft-expand-tensor-descs | FileCheck %s --check-prefix=EXPAND
// RUN: weft-compile %s --target=cuda:90 --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %ptxas %t.ptx
// RUN: weft-compile %s --target=hip:gfx942 --emit=amdgcn | FileCheck %s --check-prefix=GCN
// RUN: weft-compile %s --target=host --emit=llir | FileCheck %s --check-prefix=HOST
// RUN: weft-compile %s --target=cuda:90 --emit=kernels | FileCheck %s --check-prefix=NOMAPS

// EXPAND-LABEL: func.func @scale
// EXPAND:      %[[ROWS:.*]] = weft.desc_dim %arg0, 0
// EXPAND:      %[[INROW:.*]] = arith.cmpi ult, %{{.*}}, %{{.*}} : tensor<16x32xi64>
// EXPAND:      %[[PITCH:.*]] = weft.desc_stride %arg0, 0
// EXPAND:      %[[ROWOFF:.*]] = arith.muli %{{.*}}, %{{.*}} : tensor<16x32xi64>
// EXPAND:      %[[COLS:.*]] = weft.desc_dim %arg0, 1
// EXPAND:      %[[INCOL:.*]] = arith.cmpi ult, %{{.*}}, %{{.*}} : tensor<16x32xi64>
// EXPAND:      %[[INSIDE:.*]] = arith.andi %[[INROW]], %[[INCOL]] : tensor<16x32xi1>
// EXPAND-NOT:  weft.desc_stride %arg0, 1
// EXPAND:      %[[OFF:.*]] = arith.addi %[[ROWOFF]], %{{.*}} : tensor<16x32xi64>
// EXPAND:      %[[BASE:.*]] = weft.desc_base %arg0 : !weft.tensordesc<16x32xf32> -> !weft.ptr<f32>
// EXPAND:      %[[PTRS:.*]] = weft.addptr %{{.*}}, %[[OFF]]
// EXPAND:      weft.load %[[PTRS]], mask %[[INSIDE]], other %{{.*}} : tensor<16x32x!weft.ptr<f32>>
// EXPAND:      weft.store %{{.*}}, %{{.*}}, mask %{{.*}} : tensor<16x32x!weft.ptr<f32>>
// EXPAND-NOT:  weft.desc_load
// EXPAND-NOT:  weft.desc_store

// PTX-LABEL: .entry scale(
// PTX:       .param .align 64 .b8 scale_param_0[256],
// PTX:       .param .align 64 .b8 scale_param_1[256],
// PTX:       ld.global.v4.b32
// PTX:       st.global.v4.b32

// GCN-LABEL: scale:
// GCN:       global_load_dwordx4
// GCN:       global_store_dwordx4
// GCN:       .args:
// GCN-NEXT:  - .offset: 0
// GCN-NEXT:    .size: 256
// GCN-NEXT:    .value_kind: by_value
// GCN-NEXT:  - .offset: 256
// GCN-NEXT:    .size: 256
// GCN:       .kernarg_segment_align: 64

// The host wrapper passes args[i] itself for a descriptor (no load).
// HOST-LABEL: define void @scale(ptr {{.*}}%0,
// HOST-NEXT:  %[[SRC:.*]] = load ptr, ptr %0
// HOST-NEXT:  %[[SLOT:.*]] = getelementptr i8, ptr %0, i64 8
// HOST-NEXT:  %[[DST:.*]] = load ptr, ptr %[[SLOT]]
// HOST-NOT:   load ptr, ptr %[[SRC]]
// HOST:       @llvm.masked.load.v4f32

// No bulk copies: no tensor maps to encode (the kernel's only launch
// setting is its early start, test/Target/NVPTX/early-start.mlir).
// NOMAPS: {"scale":{"early_start":true}}
func.func @scale(%src: !weft.tensordesc<16x32xf32>, %dst: !weft.tensordesc<16x32xf32>)
    attributes {weft.kernel} {
  %pid = weft.program_id x : i32
  %c16 = arith.constant 16 : i32
  %c0 = arith.constant 0 : i32
  %m = arith.muli %pid, %c16 : i32
  %t = weft.desc_load %src[%m, %c0] : !weft.tensordesc<16x32xf32> -> tensor<16x32xf32>
  %two = arith.constant dense<2.0> : tensor<16x32xf32>
  %u = arith.mulf %t, %two : tensor<16x32xf32>
  weft.desc_store %dst[%m, %c0], %u : !weft.tensordesc<16x32xf32>, tensor<16x32xf32>
  return
}
