// NVLS multimem on sm_90: every value shape the hardware has (f32 x1/2/4,
// f16/bf16 in pairs x2/4/8, i32/i64 scalars), every reduction and every
// order, as inline PTX (LLVM 22 has no multimem intrinsic). f16/bf16
// additions accumulate in f32 (`.acc::f32`); weak accesses carry no
// `.sem.scope`; integer min/max are signed (.s), umin/umax and add unsigned
// (.u); multimem.st moves bits (.u for integers). ptxas assembles them all.
// The instruction runs when the context's WEFT_CTX_MULTICAST flag is set;
// otherwise the same op takes the unicast loop over peers.
//
// RUN: weft-compile %s --target=cuda:90 --emit=ptx -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas %t.ptx

// CHECK-LABEL: .entry ld_reduce_f32(
// CHECK-DAG:   multimem.ld_reduce.global.add.f32 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.add.f32 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.add.f32 
// CHECK-DAG:   multimem.ld_reduce.global.add.v2.f32 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.add.v2.f32 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.add.v2.f32 
// CHECK-DAG:   multimem.ld_reduce.global.add.v4.f32 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.add.v4.f32 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.add.v4.f32 
func.func @ld_reduce_f32(%p: !weft.ptr<f32>) attributes {weft.kernel} {
  %m = weft.multicast %p : !weft.ptr<f32>
  %r0 = weft.multimem_ld_reduce add weak sys %m : !weft.ptr<f32, multicast> -> f32
  %r1 = weft.multimem_ld_reduce add relaxed sys %m : !weft.ptr<f32, multicast> -> f32
  %r2 = weft.multimem_ld_reduce add acquire sys %m : !weft.ptr<f32, multicast> -> f32
  %r3 = weft.multimem_ld_reduce add weak sys %m : !weft.ptr<f32, multicast> -> vector<2xf32>
  %r4 = weft.multimem_ld_reduce add relaxed sys %m : !weft.ptr<f32, multicast> -> vector<2xf32>
  %r5 = weft.multimem_ld_reduce add acquire sys %m : !weft.ptr<f32, multicast> -> vector<2xf32>
  %r6 = weft.multimem_ld_reduce add weak sys %m : !weft.ptr<f32, multicast> -> vector<4xf32>
  %r7 = weft.multimem_ld_reduce add relaxed sys %m : !weft.ptr<f32, multicast> -> vector<4xf32>
  %r8 = weft.multimem_ld_reduce add acquire sys %m : !weft.ptr<f32, multicast> -> vector<4xf32>
  return
}

// CHECK-LABEL: .entry ld_reduce_f16(
// CHECK-DAG:   multimem.ld_reduce.global.add.acc::f32.f16x2 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.add.acc::f32.f16x2 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.add.acc::f32.f16x2 
// CHECK-DAG:   multimem.ld_reduce.global.min.f16x2 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.min.f16x2 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.min.f16x2 
// CHECK-DAG:   multimem.ld_reduce.global.max.f16x2 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.max.f16x2 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.max.f16x2 
// CHECK-DAG:   multimem.ld_reduce.global.add.acc::f32.v2.f16x2 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.add.acc::f32.v2.f16x2 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.add.acc::f32.v2.f16x2 
// CHECK-DAG:   multimem.ld_reduce.global.min.v2.f16x2 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.min.v2.f16x2 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.min.v2.f16x2 
// CHECK-DAG:   multimem.ld_reduce.global.max.v2.f16x2 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.max.v2.f16x2 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.max.v2.f16x2 
// CHECK-DAG:   multimem.ld_reduce.global.add.acc::f32.v4.f16x2 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.add.acc::f32.v4.f16x2 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.add.acc::f32.v4.f16x2 
// CHECK-DAG:   multimem.ld_reduce.global.min.v4.f16x2 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.min.v4.f16x2 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.min.v4.f16x2 
// CHECK-DAG:   multimem.ld_reduce.global.max.v4.f16x2 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.max.v4.f16x2 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.max.v4.f16x2 
func.func @ld_reduce_f16(%p: !weft.ptr<f16>) attributes {weft.kernel} {
  %m = weft.multicast %p : !weft.ptr<f16>
  %r0 = weft.multimem_ld_reduce add weak sys %m : !weft.ptr<f16, multicast> -> vector<2xf16>
  %r1 = weft.multimem_ld_reduce add relaxed sys %m : !weft.ptr<f16, multicast> -> vector<2xf16>
  %r2 = weft.multimem_ld_reduce add acquire sys %m : !weft.ptr<f16, multicast> -> vector<2xf16>
  %r3 = weft.multimem_ld_reduce min weak sys %m : !weft.ptr<f16, multicast> -> vector<2xf16>
  %r4 = weft.multimem_ld_reduce min relaxed sys %m : !weft.ptr<f16, multicast> -> vector<2xf16>
  %r5 = weft.multimem_ld_reduce min acquire sys %m : !weft.ptr<f16, multicast> -> vector<2xf16>
  %r6 = weft.multimem_ld_reduce max weak sys %m : !weft.ptr<f16, multicast> -> vector<2xf16>
  %r7 = weft.multimem_ld_reduce max relaxed sys %m : !weft.ptr<f16, multicast> -> vector<2xf16>
  %r8 = weft.multimem_ld_reduce max acquire sys %m : !weft.ptr<f16, multicast> -> vector<2xf16>
  %r9 = weft.multimem_ld_reduce add weak sys %m : !weft.ptr<f16, multicast> -> vector<4xf16>
  %r10 = weft.multimem_ld_reduce add relaxed sys %m : !weft.ptr<f16, multicast> -> vector<4xf16>
  %r11 = weft.multimem_ld_reduce add acquire sys %m : !weft.ptr<f16, multicast> -> vector<4xf16>
  %r12 = weft.multimem_ld_reduce min weak sys %m : !weft.ptr<f16, multicast> -> vector<4xf16>
  %r13 = weft.multimem_ld_reduce min relaxed sys %m : !weft.ptr<f16, multicast> -> vector<4xf16>
  %r14 = weft.multimem_ld_reduce min acquire sys %m : !weft.ptr<f16, multicast> -> vector<4xf16>
  %r15 = weft.multimem_ld_reduce max weak sys %m : !weft.ptr<f16, multicast> -> vector<4xf16>
  %r16 = weft.multimem_ld_reduce max relaxed sys %m : !weft.ptr<f16, multicast> -> vector<4xf16>
  %r17 = weft.multimem_ld_reduce max acquire sys %m : !weft.ptr<f16, multicast> -> vector<4xf16>
  %r18 = weft.multimem_ld_reduce add weak sys %m : !weft.ptr<f16, multicast> -> vector<8xf16>
  %r19 = weft.multimem_ld_reduce add relaxed sys %m : !weft.ptr<f16, multicast> -> vector<8xf16>
  %r20 = weft.multimem_ld_reduce add acquire sys %m : !weft.ptr<f16, multicast> -> vector<8xf16>
  %r21 = weft.multimem_ld_reduce min weak sys %m : !weft.ptr<f16, multicast> -> vector<8xf16>
  %r22 = weft.multimem_ld_reduce min relaxed sys %m : !weft.ptr<f16, multicast> -> vector<8xf16>
  %r23 = weft.multimem_ld_reduce min acquire sys %m : !weft.ptr<f16, multicast> -> vector<8xf16>
  %r24 = weft.multimem_ld_reduce max weak sys %m : !weft.ptr<f16, multicast> -> vector<8xf16>
  %r25 = weft.multimem_ld_reduce max relaxed sys %m : !weft.ptr<f16, multicast> -> vector<8xf16>
  %r26 = weft.multimem_ld_reduce max acquire sys %m : !weft.ptr<f16, multicast> -> vector<8xf16>
  return
}

// CHECK-LABEL: .entry ld_reduce_bf16(
// CHECK-DAG:   multimem.ld_reduce.global.add.acc::f32.bf16x2 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.add.acc::f32.bf16x2 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.add.acc::f32.bf16x2 
// CHECK-DAG:   multimem.ld_reduce.global.min.bf16x2 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.min.bf16x2 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.min.bf16x2 
// CHECK-DAG:   multimem.ld_reduce.global.max.bf16x2 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.max.bf16x2 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.max.bf16x2 
// CHECK-DAG:   multimem.ld_reduce.global.add.acc::f32.v2.bf16x2 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.add.acc::f32.v2.bf16x2 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.add.acc::f32.v2.bf16x2 
// CHECK-DAG:   multimem.ld_reduce.global.min.v2.bf16x2 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.min.v2.bf16x2 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.min.v2.bf16x2 
// CHECK-DAG:   multimem.ld_reduce.global.max.v2.bf16x2 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.max.v2.bf16x2 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.max.v2.bf16x2 
// CHECK-DAG:   multimem.ld_reduce.global.add.acc::f32.v4.bf16x2 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.add.acc::f32.v4.bf16x2 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.add.acc::f32.v4.bf16x2 
// CHECK-DAG:   multimem.ld_reduce.global.min.v4.bf16x2 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.min.v4.bf16x2 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.min.v4.bf16x2 
// CHECK-DAG:   multimem.ld_reduce.global.max.v4.bf16x2 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.max.v4.bf16x2 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.max.v4.bf16x2 
func.func @ld_reduce_bf16(%p: !weft.ptr<bf16>) attributes {weft.kernel} {
  %m = weft.multicast %p : !weft.ptr<bf16>
  %r0 = weft.multimem_ld_reduce add weak sys %m : !weft.ptr<bf16, multicast> -> vector<2xbf16>
  %r1 = weft.multimem_ld_reduce add relaxed sys %m : !weft.ptr<bf16, multicast> -> vector<2xbf16>
  %r2 = weft.multimem_ld_reduce add acquire sys %m : !weft.ptr<bf16, multicast> -> vector<2xbf16>
  %r3 = weft.multimem_ld_reduce min weak sys %m : !weft.ptr<bf16, multicast> -> vector<2xbf16>
  %r4 = weft.multimem_ld_reduce min relaxed sys %m : !weft.ptr<bf16, multicast> -> vector<2xbf16>
  %r5 = weft.multimem_ld_reduce min acquire sys %m : !weft.ptr<bf16, multicast> -> vector<2xbf16>
  %r6 = weft.multimem_ld_reduce max weak sys %m : !weft.ptr<bf16, multicast> -> vector<2xbf16>
  %r7 = weft.multimem_ld_reduce max relaxed sys %m : !weft.ptr<bf16, multicast> -> vector<2xbf16>
  %r8 = weft.multimem_ld_reduce max acquire sys %m : !weft.ptr<bf16, multicast> -> vector<2xbf16>
  %r9 = weft.multimem_ld_reduce add weak sys %m : !weft.ptr<bf16, multicast> -> vector<4xbf16>
  %r10 = weft.multimem_ld_reduce add relaxed sys %m : !weft.ptr<bf16, multicast> -> vector<4xbf16>
  %r11 = weft.multimem_ld_reduce add acquire sys %m : !weft.ptr<bf16, multicast> -> vector<4xbf16>
  %r12 = weft.multimem_ld_reduce min weak sys %m : !weft.ptr<bf16, multicast> -> vector<4xbf16>
  %r13 = weft.multimem_ld_reduce min relaxed sys %m : !weft.ptr<bf16, multicast> -> vector<4xbf16>
  %r14 = weft.multimem_ld_reduce min acquire sys %m : !weft.ptr<bf16, multicast> -> vector<4xbf16>
  %r15 = weft.multimem_ld_reduce max weak sys %m : !weft.ptr<bf16, multicast> -> vector<4xbf16>
  %r16 = weft.multimem_ld_reduce max relaxed sys %m : !weft.ptr<bf16, multicast> -> vector<4xbf16>
  %r17 = weft.multimem_ld_reduce max acquire sys %m : !weft.ptr<bf16, multicast> -> vector<4xbf16>
  %r18 = weft.multimem_ld_reduce add weak sys %m : !weft.ptr<bf16, multicast> -> vector<8xbf16>
  %r19 = weft.multimem_ld_reduce add relaxed sys %m : !weft.ptr<bf16, multicast> -> vector<8xbf16>
  %r20 = weft.multimem_ld_reduce add acquire sys %m : !weft.ptr<bf16, multicast> -> vector<8xbf16>
  %r21 = weft.multimem_ld_reduce min weak sys %m : !weft.ptr<bf16, multicast> -> vector<8xbf16>
  %r22 = weft.multimem_ld_reduce min relaxed sys %m : !weft.ptr<bf16, multicast> -> vector<8xbf16>
  %r23 = weft.multimem_ld_reduce min acquire sys %m : !weft.ptr<bf16, multicast> -> vector<8xbf16>
  %r24 = weft.multimem_ld_reduce max weak sys %m : !weft.ptr<bf16, multicast> -> vector<8xbf16>
  %r25 = weft.multimem_ld_reduce max relaxed sys %m : !weft.ptr<bf16, multicast> -> vector<8xbf16>
  %r26 = weft.multimem_ld_reduce max acquire sys %m : !weft.ptr<bf16, multicast> -> vector<8xbf16>
  return
}

// CHECK-LABEL: .entry ld_reduce_i32(
// CHECK-DAG:   multimem.ld_reduce.global.add.u32 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.add.u32 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.add.u32 
// CHECK-DAG:   multimem.ld_reduce.global.min.s32 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.min.s32 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.min.s32 
// CHECK-DAG:   multimem.ld_reduce.global.max.s32 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.max.s32 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.max.s32 
// CHECK-DAG:   multimem.ld_reduce.global.min.u32 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.min.u32 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.min.u32 
// CHECK-DAG:   multimem.ld_reduce.global.max.u32 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.max.u32 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.max.u32 
func.func @ld_reduce_i32(%p: !weft.ptr<i32>) attributes {weft.kernel} {
  %m = weft.multicast %p : !weft.ptr<i32>
  %r0 = weft.multimem_ld_reduce add weak sys %m : !weft.ptr<i32, multicast> -> i32
  %r1 = weft.multimem_ld_reduce add relaxed sys %m : !weft.ptr<i32, multicast> -> i32
  %r2 = weft.multimem_ld_reduce add acquire sys %m : !weft.ptr<i32, multicast> -> i32
  %r3 = weft.multimem_ld_reduce min weak sys %m : !weft.ptr<i32, multicast> -> i32
  %r4 = weft.multimem_ld_reduce min relaxed sys %m : !weft.ptr<i32, multicast> -> i32
  %r5 = weft.multimem_ld_reduce min acquire sys %m : !weft.ptr<i32, multicast> -> i32
  %r6 = weft.multimem_ld_reduce max weak sys %m : !weft.ptr<i32, multicast> -> i32
  %r7 = weft.multimem_ld_reduce max relaxed sys %m : !weft.ptr<i32, multicast> -> i32
  %r8 = weft.multimem_ld_reduce max acquire sys %m : !weft.ptr<i32, multicast> -> i32
  %r9 = weft.multimem_ld_reduce umin weak sys %m : !weft.ptr<i32, multicast> -> i32
  %r10 = weft.multimem_ld_reduce umin relaxed sys %m : !weft.ptr<i32, multicast> -> i32
  %r11 = weft.multimem_ld_reduce umin acquire sys %m : !weft.ptr<i32, multicast> -> i32
  %r12 = weft.multimem_ld_reduce umax weak sys %m : !weft.ptr<i32, multicast> -> i32
  %r13 = weft.multimem_ld_reduce umax relaxed sys %m : !weft.ptr<i32, multicast> -> i32
  %r14 = weft.multimem_ld_reduce umax acquire sys %m : !weft.ptr<i32, multicast> -> i32
  return
}

// CHECK-LABEL: .entry ld_reduce_i64(
// CHECK-DAG:   multimem.ld_reduce.global.add.u64 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.add.u64 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.add.u64 
// CHECK-DAG:   multimem.ld_reduce.global.min.s64 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.min.s64 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.min.s64 
// CHECK-DAG:   multimem.ld_reduce.global.max.s64 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.max.s64 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.max.s64 
// CHECK-DAG:   multimem.ld_reduce.global.min.u64 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.min.u64 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.min.u64 
// CHECK-DAG:   multimem.ld_reduce.global.max.u64 
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.max.u64 
// CHECK-DAG:   multimem.ld_reduce.acquire.sys.global.max.u64 
func.func @ld_reduce_i64(%p: !weft.ptr<i64>) attributes {weft.kernel} {
  %m = weft.multicast %p : !weft.ptr<i64>
  %r0 = weft.multimem_ld_reduce add weak sys %m : !weft.ptr<i64, multicast> -> i64
  %r1 = weft.multimem_ld_reduce add relaxed sys %m : !weft.ptr<i64, multicast> -> i64
  %r2 = weft.multimem_ld_reduce add acquire sys %m : !weft.ptr<i64, multicast> -> i64
  %r3 = weft.multimem_ld_reduce min weak sys %m : !weft.ptr<i64, multicast> -> i64
  %r4 = weft.multimem_ld_reduce min relaxed sys %m : !weft.ptr<i64, multicast> -> i64
  %r5 = weft.multimem_ld_reduce min acquire sys %m : !weft.ptr<i64, multicast> -> i64
  %r6 = weft.multimem_ld_reduce max weak sys %m : !weft.ptr<i64, multicast> -> i64
  %r7 = weft.multimem_ld_reduce max relaxed sys %m : !weft.ptr<i64, multicast> -> i64
  %r8 = weft.multimem_ld_reduce max acquire sys %m : !weft.ptr<i64, multicast> -> i64
  %r9 = weft.multimem_ld_reduce umin weak sys %m : !weft.ptr<i64, multicast> -> i64
  %r10 = weft.multimem_ld_reduce umin relaxed sys %m : !weft.ptr<i64, multicast> -> i64
  %r11 = weft.multimem_ld_reduce umin acquire sys %m : !weft.ptr<i64, multicast> -> i64
  %r12 = weft.multimem_ld_reduce umax weak sys %m : !weft.ptr<i64, multicast> -> i64
  %r13 = weft.multimem_ld_reduce umax relaxed sys %m : !weft.ptr<i64, multicast> -> i64
  %r14 = weft.multimem_ld_reduce umax acquire sys %m : !weft.ptr<i64, multicast> -> i64
  return
}

// CHECK-LABEL: .entry store_f32(
// CHECK-DAG:   multimem.st.global.f32 
// CHECK-DAG:   multimem.st.relaxed.sys.global.f32 
// CHECK-DAG:   multimem.st.release.sys.global.f32 
// CHECK-DAG:   multimem.st.global.v2.f32 
// CHECK-DAG:   multimem.st.relaxed.sys.global.v2.f32 
// CHECK-DAG:   multimem.st.release.sys.global.v2.f32 
// CHECK-DAG:   multimem.st.global.v4.f32 
// CHECK-DAG:   multimem.st.relaxed.sys.global.v4.f32 
// CHECK-DAG:   multimem.st.release.sys.global.v4.f32 
func.func @store_f32(%p: !weft.ptr<f32>, %v1: f32, %v2: vector<2xf32>, %v4: vector<4xf32>)
    attributes {weft.kernel} {
  %m = weft.multicast %p : !weft.ptr<f32>
  weft.multimem_store weak sys %m, %v1 : !weft.ptr<f32, multicast>, f32
  weft.multimem_store relaxed sys %m, %v1 : !weft.ptr<f32, multicast>, f32
  weft.multimem_store release sys %m, %v1 : !weft.ptr<f32, multicast>, f32
  weft.multimem_store weak sys %m, %v2 : !weft.ptr<f32, multicast>, vector<2xf32>
  weft.multimem_store relaxed sys %m, %v2 : !weft.ptr<f32, multicast>, vector<2xf32>
  weft.multimem_store release sys %m, %v2 : !weft.ptr<f32, multicast>, vector<2xf32>
  weft.multimem_store weak sys %m, %v4 : !weft.ptr<f32, multicast>, vector<4xf32>
  weft.multimem_store relaxed sys %m, %v4 : !weft.ptr<f32, multicast>, vector<4xf32>
  weft.multimem_store release sys %m, %v4 : !weft.ptr<f32, multicast>, vector<4xf32>
  return
}

// CHECK-LABEL: .entry store_f16(
// CHECK-DAG:   multimem.st.global.f16x2 
// CHECK-DAG:   multimem.st.relaxed.sys.global.f16x2 
// CHECK-DAG:   multimem.st.release.sys.global.f16x2 
// CHECK-DAG:   multimem.st.global.v2.f16x2 
// CHECK-DAG:   multimem.st.relaxed.sys.global.v2.f16x2 
// CHECK-DAG:   multimem.st.release.sys.global.v2.f16x2 
// CHECK-DAG:   multimem.st.global.v4.f16x2 
// CHECK-DAG:   multimem.st.relaxed.sys.global.v4.f16x2 
// CHECK-DAG:   multimem.st.release.sys.global.v4.f16x2 
func.func @store_f16(%p: !weft.ptr<f16>, %v2: vector<2xf16>, %v4: vector<4xf16>, %v8: vector<8xf16>)
    attributes {weft.kernel} {
  %m = weft.multicast %p : !weft.ptr<f16>
  weft.multimem_store weak sys %m, %v2 : !weft.ptr<f16, multicast>, vector<2xf16>
  weft.multimem_store relaxed sys %m, %v2 : !weft.ptr<f16, multicast>, vector<2xf16>
  weft.multimem_store release sys %m, %v2 : !weft.ptr<f16, multicast>, vector<2xf16>
  weft.multimem_store weak sys %m, %v4 : !weft.ptr<f16, multicast>, vector<4xf16>
  weft.multimem_store relaxed sys %m, %v4 : !weft.ptr<f16, multicast>, vector<4xf16>
  weft.multimem_store release sys %m, %v4 : !weft.ptr<f16, multicast>, vector<4xf16>
  weft.multimem_store weak sys %m, %v8 : !weft.ptr<f16, multicast>, vector<8xf16>
  weft.multimem_store relaxed sys %m, %v8 : !weft.ptr<f16, multicast>, vector<8xf16>
  weft.multimem_store release sys %m, %v8 : !weft.ptr<f16, multicast>, vector<8xf16>
  return
}

// CHECK-LABEL: .entry store_bf16(
// CHECK-DAG:   multimem.st.global.bf16x2 
// CHECK-DAG:   multimem.st.relaxed.sys.global.bf16x2 
// CHECK-DAG:   multimem.st.release.sys.global.bf16x2 
// CHECK-DAG:   multimem.st.global.v2.bf16x2 
// CHECK-DAG:   multimem.st.relaxed.sys.global.v2.bf16x2 
// CHECK-DAG:   multimem.st.release.sys.global.v2.bf16x2 
// CHECK-DAG:   multimem.st.global.v4.bf16x2 
// CHECK-DAG:   multimem.st.relaxed.sys.global.v4.bf16x2 
// CHECK-DAG:   multimem.st.release.sys.global.v4.bf16x2 
func.func @store_bf16(%p: !weft.ptr<bf16>, %v2: vector<2xbf16>, %v4: vector<4xbf16>, %v8: vector<8xbf16>)
    attributes {weft.kernel} {
  %m = weft.multicast %p : !weft.ptr<bf16>
  weft.multimem_store weak sys %m, %v2 : !weft.ptr<bf16, multicast>, vector<2xbf16>
  weft.multimem_store relaxed sys %m, %v2 : !weft.ptr<bf16, multicast>, vector<2xbf16>
  weft.multimem_store release sys %m, %v2 : !weft.ptr<bf16, multicast>, vector<2xbf16>
  weft.multimem_store weak sys %m, %v4 : !weft.ptr<bf16, multicast>, vector<4xbf16>
  weft.multimem_store relaxed sys %m, %v4 : !weft.ptr<bf16, multicast>, vector<4xbf16>
  weft.multimem_store release sys %m, %v4 : !weft.ptr<bf16, multicast>, vector<4xbf16>
  weft.multimem_store weak sys %m, %v8 : !weft.ptr<bf16, multicast>, vector<8xbf16>
  weft.multimem_store relaxed sys %m, %v8 : !weft.ptr<bf16, multicast>, vector<8xbf16>
  weft.multimem_store release sys %m, %v8 : !weft.ptr<bf16, multicast>, vector<8xbf16>
  return
}

// CHECK-LABEL: .entry store_i32(
// CHECK-DAG:   multimem.st.global.u32 
// CHECK-DAG:   multimem.st.relaxed.sys.global.u32 
// CHECK-DAG:   multimem.st.release.sys.global.u32 
func.func @store_i32(%p: !weft.ptr<i32>, %v1: i32) attributes {weft.kernel} {
  %m = weft.multicast %p : !weft.ptr<i32>
  weft.multimem_store weak sys %m, %v1 : !weft.ptr<i32, multicast>, i32
  weft.multimem_store relaxed sys %m, %v1 : !weft.ptr<i32, multicast>, i32
  weft.multimem_store release sys %m, %v1 : !weft.ptr<i32, multicast>, i32
  return
}

// CHECK-LABEL: .entry store_i64(
// CHECK-DAG:   multimem.st.global.u64 
// CHECK-DAG:   multimem.st.relaxed.sys.global.u64 
// CHECK-DAG:   multimem.st.release.sys.global.u64 
func.func @store_i64(%p: !weft.ptr<i64>, %v1: i64) attributes {weft.kernel} {
  %m = weft.multicast %p : !weft.ptr<i64>
  weft.multimem_store weak sys %m, %v1 : !weft.ptr<i64, multicast>, i64
  weft.multimem_store relaxed sys %m, %v1 : !weft.ptr<i64, multicast>, i64
  weft.multimem_store release sys %m, %v1 : !weft.ptr<i64, multicast>, i64
  return
}

// CHECK-LABEL: .entry red_f32(
// CHECK-DAG:   multimem.red.relaxed.sys.global.add.f32 
// CHECK-DAG:   multimem.red.release.sys.global.add.f32 
// CHECK-DAG:   multimem.red.relaxed.sys.global.add.v2.f32 
// CHECK-DAG:   multimem.red.release.sys.global.add.v2.f32 
// CHECK-DAG:   multimem.red.relaxed.sys.global.add.v4.f32 
// CHECK-DAG:   multimem.red.release.sys.global.add.v4.f32 
func.func @red_f32(%p: !weft.ptr<f32>, %v1: f32, %v2: vector<2xf32>, %v4: vector<4xf32>)
    attributes {weft.kernel} {
  %m = weft.multicast %p : !weft.ptr<f32>
  weft.multimem_red add relaxed sys %m, %v1 : !weft.ptr<f32, multicast>, f32
  weft.multimem_red add release sys %m, %v1 : !weft.ptr<f32, multicast>, f32
  weft.multimem_red add relaxed sys %m, %v2 : !weft.ptr<f32, multicast>, vector<2xf32>
  weft.multimem_red add release sys %m, %v2 : !weft.ptr<f32, multicast>, vector<2xf32>
  weft.multimem_red add relaxed sys %m, %v4 : !weft.ptr<f32, multicast>, vector<4xf32>
  weft.multimem_red add release sys %m, %v4 : !weft.ptr<f32, multicast>, vector<4xf32>
  return
}

// CHECK-LABEL: .entry red_f16(
// CHECK-DAG:   multimem.red.relaxed.sys.global.add.acc::f32.f16x2 
// CHECK-DAG:   multimem.red.release.sys.global.add.acc::f32.f16x2 
// CHECK-DAG:   multimem.red.relaxed.sys.global.add.acc::f32.v2.f16x2 
// CHECK-DAG:   multimem.red.release.sys.global.add.acc::f32.v2.f16x2 
// CHECK-DAG:   multimem.red.relaxed.sys.global.add.acc::f32.v4.f16x2 
// CHECK-DAG:   multimem.red.release.sys.global.add.acc::f32.v4.f16x2 
func.func @red_f16(%p: !weft.ptr<f16>, %v2: vector<2xf16>, %v4: vector<4xf16>, %v8: vector<8xf16>)
    attributes {weft.kernel} {
  %m = weft.multicast %p : !weft.ptr<f16>
  weft.multimem_red add relaxed sys %m, %v2 : !weft.ptr<f16, multicast>, vector<2xf16>
  weft.multimem_red add release sys %m, %v2 : !weft.ptr<f16, multicast>, vector<2xf16>
  weft.multimem_red add relaxed sys %m, %v4 : !weft.ptr<f16, multicast>, vector<4xf16>
  weft.multimem_red add release sys %m, %v4 : !weft.ptr<f16, multicast>, vector<4xf16>
  weft.multimem_red add relaxed sys %m, %v8 : !weft.ptr<f16, multicast>, vector<8xf16>
  weft.multimem_red add release sys %m, %v8 : !weft.ptr<f16, multicast>, vector<8xf16>
  return
}

// CHECK-LABEL: .entry red_bf16(
// CHECK-DAG:   multimem.red.relaxed.sys.global.add.acc::f32.bf16x2 
// CHECK-DAG:   multimem.red.release.sys.global.add.acc::f32.bf16x2 
// CHECK-DAG:   multimem.red.relaxed.sys.global.add.acc::f32.v2.bf16x2 
// CHECK-DAG:   multimem.red.release.sys.global.add.acc::f32.v2.bf16x2 
// CHECK-DAG:   multimem.red.relaxed.sys.global.add.acc::f32.v4.bf16x2 
// CHECK-DAG:   multimem.red.release.sys.global.add.acc::f32.v4.bf16x2 
func.func @red_bf16(%p: !weft.ptr<bf16>, %v2: vector<2xbf16>, %v4: vector<4xbf16>, %v8: vector<8xbf16>)
    attributes {weft.kernel} {
  %m = weft.multicast %p : !weft.ptr<bf16>
  weft.multimem_red add relaxed sys %m, %v2 : !weft.ptr<bf16, multicast>, vector<2xbf16>
  weft.multimem_red add release sys %m, %v2 : !weft.ptr<bf16, multicast>, vector<2xbf16>
  weft.multimem_red add relaxed sys %m, %v4 : !weft.ptr<bf16, multicast>, vector<4xbf16>
  weft.multimem_red add release sys %m, %v4 : !weft.ptr<bf16, multicast>, vector<4xbf16>
  weft.multimem_red add relaxed sys %m, %v8 : !weft.ptr<bf16, multicast>, vector<8xbf16>
  weft.multimem_red add release sys %m, %v8 : !weft.ptr<bf16, multicast>, vector<8xbf16>
  return
}

// CHECK-LABEL: .entry red_i32(
// CHECK-DAG:   multimem.red.relaxed.sys.global.add.u32 
// CHECK-DAG:   multimem.red.release.sys.global.add.u32 
// CHECK-DAG:   multimem.red.relaxed.sys.global.min.s32 
// CHECK-DAG:   multimem.red.release.sys.global.min.s32 
// CHECK-DAG:   multimem.red.relaxed.sys.global.max.s32 
// CHECK-DAG:   multimem.red.release.sys.global.max.s32 
// CHECK-DAG:   multimem.red.relaxed.sys.global.min.u32 
// CHECK-DAG:   multimem.red.release.sys.global.min.u32 
// CHECK-DAG:   multimem.red.relaxed.sys.global.max.u32 
// CHECK-DAG:   multimem.red.release.sys.global.max.u32 
func.func @red_i32(%p: !weft.ptr<i32>, %v1: i32) attributes {weft.kernel} {
  %m = weft.multicast %p : !weft.ptr<i32>
  weft.multimem_red add relaxed sys %m, %v1 : !weft.ptr<i32, multicast>, i32
  weft.multimem_red add release sys %m, %v1 : !weft.ptr<i32, multicast>, i32
  weft.multimem_red min relaxed sys %m, %v1 : !weft.ptr<i32, multicast>, i32
  weft.multimem_red min release sys %m, %v1 : !weft.ptr<i32, multicast>, i32
  weft.multimem_red max relaxed sys %m, %v1 : !weft.ptr<i32, multicast>, i32
  weft.multimem_red max release sys %m, %v1 : !weft.ptr<i32, multicast>, i32
  weft.multimem_red umin relaxed sys %m, %v1 : !weft.ptr<i32, multicast>, i32
  weft.multimem_red umin release sys %m, %v1 : !weft.ptr<i32, multicast>, i32
  weft.multimem_red umax relaxed sys %m, %v1 : !weft.ptr<i32, multicast>, i32
  weft.multimem_red umax release sys %m, %v1 : !weft.ptr<i32, multicast>, i32
  return
}

// CHECK-LABEL: .entry red_i64(
// CHECK-DAG:   multimem.red.relaxed.sys.global.add.u64 
// CHECK-DAG:   multimem.red.release.sys.global.add.u64 
// CHECK-DAG:   multimem.red.relaxed.sys.global.min.s64 
// CHECK-DAG:   multimem.red.release.sys.global.min.s64 
// CHECK-DAG:   multimem.red.relaxed.sys.global.max.s64 
// CHECK-DAG:   multimem.red.release.sys.global.max.s64 
// CHECK-DAG:   multimem.red.relaxed.sys.global.min.u64 
// CHECK-DAG:   multimem.red.release.sys.global.min.u64 
// CHECK-DAG:   multimem.red.relaxed.sys.global.max.u64 
// CHECK-DAG:   multimem.red.release.sys.global.max.u64 
func.func @red_i64(%p: !weft.ptr<i64>, %v1: i64) attributes {weft.kernel} {
  %m = weft.multicast %p : !weft.ptr<i64>
  weft.multimem_red add relaxed sys %m, %v1 : !weft.ptr<i64, multicast>, i64
  weft.multimem_red add release sys %m, %v1 : !weft.ptr<i64, multicast>, i64
  weft.multimem_red min relaxed sys %m, %v1 : !weft.ptr<i64, multicast>, i64
  weft.multimem_red min release sys %m, %v1 : !weft.ptr<i64, multicast>, i64
  weft.multimem_red max relaxed sys %m, %v1 : !weft.ptr<i64, multicast>, i64
  weft.multimem_red max release sys %m, %v1 : !weft.ptr<i64, multicast>, i64
  weft.multimem_red umin relaxed sys %m, %v1 : !weft.ptr<i64, multicast>, i64
  weft.multimem_red umin release sys %m, %v1 : !weft.ptr<i64, multicast>, i64
  weft.multimem_red umax relaxed sys %m, %v1 : !weft.ptr<i64, multicast>, i64
  weft.multimem_red umax release sys %m, %v1 : !weft.ptr<i64, multicast>, i64
  return
}

// The run-time choice and both paths. weft.multicast maps p into the
// multicast window: p - heap_base[rank] + multicast_base (context offset
// 24), when flags (offset 8) has WEFT_CTX_MULTICAST; otherwise the op loops
// over peers through the symmetric heap: volatile vector loads summed in
// f32 like `.acc::f32`, and, for the release store, a CTA join and a
// release fence before volatile stores to every peer.
// CHECK-LABEL: .entry nvls_or_unicast(
// CHECK:       ld.param.b32 [[FLAGS:%r[0-9]+]], [nvls_or_unicast_param_1+8];
// CHECK-NEXT:  and.b32 {{%r[0-9]+}}, [[FLAGS]], 1;
// CHECK:       ld.param.b64 [[MCBASE:%rd[0-9]+]], [nvls_or_unicast_param_1+24];
// CHECK:       ld.param.b64 [[SELF:%rd[0-9]+]], [{{%rd[0-9]+}}+40];
// CHECK-NEXT:  sub.s64 [[OFFSET:%rd[0-9]+]], {{%rd[0-9]+}}, [[SELF]];
// CHECK-NEXT:  add.s64 [[MADDR:%rd[0-9]+]], [[OFFSET]], [[MCBASE]];
// CHECK-DAG:   ld.volatile.global.v4.b32 {{.*}}, [{{%rd[0-9]+}}];
// CHECK-DAG:   cvt.f32.bf16
// CHECK-DAG:   add.rn.f32
// CHECK-DAG:   cvt.rn.bf16x2.f32
// CHECK-DAG:   multimem.ld_reduce.relaxed.sys.global.add.acc::f32.v4.bf16x2 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [[[MADDR]]];
// CHECK-DAG:   bar.sync 0;
// CHECK-DAG:   fence.release.sys;
// CHECK-DAG:   st.volatile.global.v4.b32 [{{%rd[0-9]+}}], {{.*}};
// CHECK-DAG:   multimem.st.release.sys.global.v4.bf16x2 [[[MADDR]]], {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}};
func.func @nvls_or_unicast(%p: !weft.ptr<bf16>) attributes {weft.kernel} {
  %m = weft.multicast %p : !weft.ptr<bf16>
  %r = weft.multimem_ld_reduce add relaxed sys %m : !weft.ptr<bf16, multicast> -> vector<8xbf16>
  weft.multimem_store release sys %m, %r : !weft.ptr<bf16, multicast>, vector<8xbf16>
  return
}

// A reduction runs once per program (like every scalar atomic); its
// fallback is one atomic per lane and peer, with the same order.
// CHECK-LABEL: .entry red_once_per_program(
// CHECK:       bar.sync 0;
// CHECK:       mov.u32 {{%r[0-9]+}}, %tid.x;
// CHECK-DAG:   multimem.red.release.sys.global.add.v2.f32 [{{%rd[0-9]+}}], {%r{{[0-9]+}}, %r{{[0-9]+}}};
// CHECK-DAG:   atom.release.sys.global.add.f32
// CHECK-DAG:   atom.release.sys.global.add.f32
func.func @red_once_per_program(%p: !weft.ptr<f32>, %v: vector<2xf32>)
    attributes {weft.kernel} {
  %m = weft.multicast %p : !weft.ptr<f32>
  weft.multimem_red add release sys %m, %v : !weft.ptr<f32, multicast>, vector<2xf32>
  return
}
