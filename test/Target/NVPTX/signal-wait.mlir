// weft.signal and weft.wait on sm_90 (docs/memory-model.md, "Signals and
// waits"). A signal runs once per program: a release signal first joins the
// CTA (bar.sync) so thread 0's `st.release` / `atom.release` covers every
// thread's writes. A wait is thread 0 polling with `ld.relaxed.<scope>`;
// an acquiring wait then issues one `fence.acquire.<scope>` (the acquire
// pattern of the PTX memory model), and the CTA joins so every thread sees
// what was acquired. Comparisons are unsigned.
//
// RUN: weft-compile %s --target=cuda:90 --emit=ptx -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas %t.ptx

// CHECK-LABEL: .entry signal_set_relaxed_cta(
// CHECK-NOT:   bar.sync
// CHECK:       mov.u32 [[TID:%r[0-9]+]], %tid.x;
// CHECK:       setp.ne.b32 [[NOT_LEADER:%p[0-9]+]], [[TID]], 0;
// CHECK:       @[[NOT_LEADER]] bra
// CHECK:       st.relaxed.cta.global.b64 [%rd{{[0-9]+}}], %rd{{[0-9]+}};
// CHECK-NOT:   bar.sync
// CHECK:       ret;
func.func @signal_set_relaxed_cta(%flag: !weft.ptr<i64>, %v: i64)
    attributes {weft.kernel} {
  weft.signal set relaxed cta %flag, %v : !weft.ptr<i64>
  return
}

// CHECK-LABEL: .entry signal_set_relaxed_gpu(
// CHECK-NOT:   bar.sync
// CHECK:       mov.u32 [[TID:%r[0-9]+]], %tid.x;
// CHECK:       setp.ne.b32 [[NOT_LEADER:%p[0-9]+]], [[TID]], 0;
// CHECK:       @[[NOT_LEADER]] bra
// CHECK:       st.relaxed.gpu.global.b64 [%rd{{[0-9]+}}], %rd{{[0-9]+}};
// CHECK-NOT:   bar.sync
// CHECK:       ret;
func.func @signal_set_relaxed_gpu(%flag: !weft.ptr<i64>, %v: i64)
    attributes {weft.kernel} {
  weft.signal set relaxed gpu %flag, %v : !weft.ptr<i64>
  return
}

// CHECK-LABEL: .entry signal_set_relaxed_sys(
// CHECK-NOT:   bar.sync
// CHECK:       mov.u32 [[TID:%r[0-9]+]], %tid.x;
// CHECK:       setp.ne.b32 [[NOT_LEADER:%p[0-9]+]], [[TID]], 0;
// CHECK:       @[[NOT_LEADER]] bra
// CHECK:       st.relaxed.sys.global.b64 [%rd{{[0-9]+}}], %rd{{[0-9]+}};
// CHECK-NOT:   bar.sync
// CHECK:       ret;
func.func @signal_set_relaxed_sys(%flag: !weft.ptr<i64>, %v: i64)
    attributes {weft.kernel} {
  weft.signal set relaxed sys %flag, %v : !weft.ptr<i64>
  return
}

// CHECK-LABEL: .entry signal_set_release_cta(
// CHECK:       bar.sync 0;
// CHECK:       mov.u32 [[TID:%r[0-9]+]], %tid.x;
// CHECK:       setp.ne.b32 [[NOT_LEADER:%p[0-9]+]], [[TID]], 0;
// CHECK:       @[[NOT_LEADER]] bra
// CHECK:       st.release.cta.global.b64 [%rd{{[0-9]+}}], %rd{{[0-9]+}};
// CHECK-NOT:   bar.sync
// CHECK:       ret;
func.func @signal_set_release_cta(%flag: !weft.ptr<i64>, %v: i64)
    attributes {weft.kernel} {
  weft.signal set release cta %flag, %v : !weft.ptr<i64>
  return
}

// CHECK-LABEL: .entry signal_set_release_gpu(
// CHECK:       bar.sync 0;
// CHECK:       mov.u32 [[TID:%r[0-9]+]], %tid.x;
// CHECK:       setp.ne.b32 [[NOT_LEADER:%p[0-9]+]], [[TID]], 0;
// CHECK:       @[[NOT_LEADER]] bra
// CHECK:       st.release.gpu.global.b64 [%rd{{[0-9]+}}], %rd{{[0-9]+}};
// CHECK-NOT:   bar.sync
// CHECK:       ret;
func.func @signal_set_release_gpu(%flag: !weft.ptr<i64>, %v: i64)
    attributes {weft.kernel} {
  weft.signal set release gpu %flag, %v : !weft.ptr<i64>
  return
}

// CHECK-LABEL: .entry signal_set_release_sys(
// CHECK:       bar.sync 0;
// CHECK:       mov.u32 [[TID:%r[0-9]+]], %tid.x;
// CHECK:       setp.ne.b32 [[NOT_LEADER:%p[0-9]+]], [[TID]], 0;
// CHECK:       @[[NOT_LEADER]] bra
// CHECK:       st.release.sys.global.b64 [%rd{{[0-9]+}}], %rd{{[0-9]+}};
// CHECK-NOT:   bar.sync
// CHECK:       ret;
func.func @signal_set_release_sys(%flag: !weft.ptr<i64>, %v: i64)
    attributes {weft.kernel} {
  weft.signal set release sys %flag, %v : !weft.ptr<i64>
  return
}

// CHECK-LABEL: .entry signal_add_relaxed_cta(
// CHECK-NOT:   bar.sync
// CHECK:       mov.u32 [[TID:%r[0-9]+]], %tid.x;
// CHECK:       setp.ne.b32 [[NOT_LEADER:%p[0-9]+]], [[TID]], 0;
// CHECK:       @[[NOT_LEADER]] bra
// CHECK:       atom.relaxed.cta.global.add.u64 %rd{{[0-9]+}}, [%rd{{[0-9]+}}], %rd{{[0-9]+}};
// CHECK-NOT:   bar.sync
// CHECK:       ret;
func.func @signal_add_relaxed_cta(%flag: !weft.ptr<i64>, %v: i64)
    attributes {weft.kernel} {
  weft.signal add relaxed cta %flag, %v : !weft.ptr<i64>
  return
}

// CHECK-LABEL: .entry signal_add_relaxed_gpu(
// CHECK-NOT:   bar.sync
// CHECK:       mov.u32 [[TID:%r[0-9]+]], %tid.x;
// CHECK:       setp.ne.b32 [[NOT_LEADER:%p[0-9]+]], [[TID]], 0;
// CHECK:       @[[NOT_LEADER]] bra
// CHECK:       atom.relaxed.gpu.global.add.u64 %rd{{[0-9]+}}, [%rd{{[0-9]+}}], %rd{{[0-9]+}};
// CHECK-NOT:   bar.sync
// CHECK:       ret;
func.func @signal_add_relaxed_gpu(%flag: !weft.ptr<i64>, %v: i64)
    attributes {weft.kernel} {
  weft.signal add relaxed gpu %flag, %v : !weft.ptr<i64>
  return
}

// CHECK-LABEL: .entry signal_add_relaxed_sys(
// CHECK-NOT:   bar.sync
// CHECK:       mov.u32 [[TID:%r[0-9]+]], %tid.x;
// CHECK:       setp.ne.b32 [[NOT_LEADER:%p[0-9]+]], [[TID]], 0;
// CHECK:       @[[NOT_LEADER]] bra
// CHECK:       atom.relaxed.sys.global.add.u64 %rd{{[0-9]+}}, [%rd{{[0-9]+}}], %rd{{[0-9]+}};
// CHECK-NOT:   bar.sync
// CHECK:       ret;
func.func @signal_add_relaxed_sys(%flag: !weft.ptr<i64>, %v: i64)
    attributes {weft.kernel} {
  weft.signal add relaxed sys %flag, %v : !weft.ptr<i64>
  return
}

// CHECK-LABEL: .entry signal_add_release_cta(
// CHECK:       bar.sync 0;
// CHECK:       mov.u32 [[TID:%r[0-9]+]], %tid.x;
// CHECK:       setp.ne.b32 [[NOT_LEADER:%p[0-9]+]], [[TID]], 0;
// CHECK:       @[[NOT_LEADER]] bra
// CHECK:       atom.release.cta.global.add.u64 %rd{{[0-9]+}}, [%rd{{[0-9]+}}], %rd{{[0-9]+}};
// CHECK-NOT:   bar.sync
// CHECK:       ret;
func.func @signal_add_release_cta(%flag: !weft.ptr<i64>, %v: i64)
    attributes {weft.kernel} {
  weft.signal add release cta %flag, %v : !weft.ptr<i64>
  return
}

// CHECK-LABEL: .entry signal_add_release_gpu(
// CHECK:       bar.sync 0;
// CHECK:       mov.u32 [[TID:%r[0-9]+]], %tid.x;
// CHECK:       setp.ne.b32 [[NOT_LEADER:%p[0-9]+]], [[TID]], 0;
// CHECK:       @[[NOT_LEADER]] bra
// CHECK:       atom.release.gpu.global.add.u64 %rd{{[0-9]+}}, [%rd{{[0-9]+}}], %rd{{[0-9]+}};
// CHECK-NOT:   bar.sync
// CHECK:       ret;
func.func @signal_add_release_gpu(%flag: !weft.ptr<i64>, %v: i64)
    attributes {weft.kernel} {
  weft.signal add release gpu %flag, %v : !weft.ptr<i64>
  return
}

// CHECK-LABEL: .entry signal_add_release_sys(
// CHECK:       bar.sync 0;
// CHECK:       mov.u32 [[TID:%r[0-9]+]], %tid.x;
// CHECK:       setp.ne.b32 [[NOT_LEADER:%p[0-9]+]], [[TID]], 0;
// CHECK:       @[[NOT_LEADER]] bra
// CHECK:       atom.release.sys.global.add.u64 %rd{{[0-9]+}}, [%rd{{[0-9]+}}], %rd{{[0-9]+}};
// CHECK-NOT:   bar.sync
// CHECK:       ret;
func.func @signal_add_release_sys(%flag: !weft.ptr<i64>, %v: i64)
    attributes {weft.kernel} {
  weft.signal add release sys %flag, %v : !weft.ptr<i64>
  return
}

// CHECK-LABEL: .entry signal_i32(
// CHECK:       st.release.sys.global.b32
// CHECK:       atom.relaxed.gpu.global.add.u32
func.func @signal_i32(%flag: !weft.ptr<i32>, %v: i32) attributes {weft.kernel} {
  weft.signal set release sys %flag, %v : !weft.ptr<i32>
  weft.signal add relaxed gpu %flag, %v : !weft.ptr<i32>
  return
}

// CHECK-LABEL: .entry wait_eq_relaxed(
// CHECK:       ld.relaxed.sys.global.b64 [[SEEN:%rd[0-9]+]], [%rd{{[0-9]+}}];
// CHECK-NEXT:  setp.{{eq|ne}}.b64 %p{{[0-9]+}}, [[SEEN]], %rd{{[0-9]+}};
// CHECK-NOT:   fence
// CHECK:       bar.sync 0;
// CHECK-NOT:   fence
func.func @wait_eq_relaxed(%flag: !weft.ptr<i64>, %v: i64, %out: !weft.ptr<i64>)
    attributes {weft.kernel} {
  %seen = weft.wait eq relaxed sys %flag, %v : !weft.ptr<i64>
  weft.store %out, %seen : !weft.ptr<i64>
  return
}

// CHECK-LABEL: .entry wait_eq_acquire(
// CHECK:       ld.relaxed.sys.global.b64 [[SEEN:%rd[0-9]+]], [%rd{{[0-9]+}}];
// CHECK-NEXT:  setp.{{eq|ne}}.b64 %p{{[0-9]+}}, [[SEEN]], %rd{{[0-9]+}};
// CHECK:       fence.acquire.sys;
// CHECK:       bar.sync 0;
func.func @wait_eq_acquire(%flag: !weft.ptr<i64>, %v: i64, %out: !weft.ptr<i64>)
    attributes {weft.kernel} {
  %seen = weft.wait eq acquire sys %flag, %v : !weft.ptr<i64>
  weft.store %out, %seen : !weft.ptr<i64>
  return
}

// CHECK-LABEL: .entry wait_ne_relaxed(
// CHECK:       ld.relaxed.sys.global.b64 [[SEEN:%rd[0-9]+]], [%rd{{[0-9]+}}];
// CHECK-NEXT:  setp.{{ne|eq}}.b64 %p{{[0-9]+}}, [[SEEN]], %rd{{[0-9]+}};
// CHECK-NOT:   fence
// CHECK:       bar.sync 0;
// CHECK-NOT:   fence
func.func @wait_ne_relaxed(%flag: !weft.ptr<i64>, %v: i64, %out: !weft.ptr<i64>)
    attributes {weft.kernel} {
  %seen = weft.wait ne relaxed sys %flag, %v : !weft.ptr<i64>
  weft.store %out, %seen : !weft.ptr<i64>
  return
}

// CHECK-LABEL: .entry wait_ne_acquire(
// CHECK:       ld.relaxed.sys.global.b64 [[SEEN:%rd[0-9]+]], [%rd{{[0-9]+}}];
// CHECK-NEXT:  setp.{{ne|eq}}.b64 %p{{[0-9]+}}, [[SEEN]], %rd{{[0-9]+}};
// CHECK:       fence.acquire.sys;
// CHECK:       bar.sync 0;
func.func @wait_ne_acquire(%flag: !weft.ptr<i64>, %v: i64, %out: !weft.ptr<i64>)
    attributes {weft.kernel} {
  %seen = weft.wait ne acquire sys %flag, %v : !weft.ptr<i64>
  weft.store %out, %seen : !weft.ptr<i64>
  return
}

// CHECK-LABEL: .entry wait_ge_relaxed(
// CHECK:       ld.relaxed.sys.global.b64 [[SEEN:%rd[0-9]+]], [%rd{{[0-9]+}}];
// CHECK-NEXT:  setp.{{ge|lt}}.u64 %p{{[0-9]+}}, [[SEEN]], %rd{{[0-9]+}};
// CHECK-NOT:   fence
// CHECK:       bar.sync 0;
// CHECK-NOT:   fence
func.func @wait_ge_relaxed(%flag: !weft.ptr<i64>, %v: i64, %out: !weft.ptr<i64>)
    attributes {weft.kernel} {
  %seen = weft.wait ge relaxed sys %flag, %v : !weft.ptr<i64>
  weft.store %out, %seen : !weft.ptr<i64>
  return
}

// CHECK-LABEL: .entry wait_ge_acquire(
// CHECK:       ld.relaxed.sys.global.b64 [[SEEN:%rd[0-9]+]], [%rd{{[0-9]+}}];
// CHECK-NEXT:  setp.{{ge|lt}}.u64 %p{{[0-9]+}}, [[SEEN]], %rd{{[0-9]+}};
// CHECK:       fence.acquire.sys;
// CHECK:       bar.sync 0;
func.func @wait_ge_acquire(%flag: !weft.ptr<i64>, %v: i64, %out: !weft.ptr<i64>)
    attributes {weft.kernel} {
  %seen = weft.wait ge acquire sys %flag, %v : !weft.ptr<i64>
  weft.store %out, %seen : !weft.ptr<i64>
  return
}

// CHECK-LABEL: .entry wait_gt_relaxed(
// CHECK:       ld.relaxed.sys.global.b64 [[SEEN:%rd[0-9]+]], [%rd{{[0-9]+}}];
// CHECK-NEXT:  setp.{{gt|le}}.u64 %p{{[0-9]+}}, [[SEEN]], %rd{{[0-9]+}};
// CHECK-NOT:   fence
// CHECK:       bar.sync 0;
// CHECK-NOT:   fence
func.func @wait_gt_relaxed(%flag: !weft.ptr<i64>, %v: i64, %out: !weft.ptr<i64>)
    attributes {weft.kernel} {
  %seen = weft.wait gt relaxed sys %flag, %v : !weft.ptr<i64>
  weft.store %out, %seen : !weft.ptr<i64>
  return
}

// CHECK-LABEL: .entry wait_gt_acquire(
// CHECK:       ld.relaxed.sys.global.b64 [[SEEN:%rd[0-9]+]], [%rd{{[0-9]+}}];
// CHECK-NEXT:  setp.{{gt|le}}.u64 %p{{[0-9]+}}, [[SEEN]], %rd{{[0-9]+}};
// CHECK:       fence.acquire.sys;
// CHECK:       bar.sync 0;
func.func @wait_gt_acquire(%flag: !weft.ptr<i64>, %v: i64, %out: !weft.ptr<i64>)
    attributes {weft.kernel} {
  %seen = weft.wait gt acquire sys %flag, %v : !weft.ptr<i64>
  weft.store %out, %seen : !weft.ptr<i64>
  return
}

// CHECK-LABEL: .entry wait_le_relaxed(
// CHECK:       ld.relaxed.sys.global.b64 [[SEEN:%rd[0-9]+]], [%rd{{[0-9]+}}];
// CHECK-NEXT:  setp.{{le|gt}}.u64 %p{{[0-9]+}}, [[SEEN]], %rd{{[0-9]+}};
// CHECK-NOT:   fence
// CHECK:       bar.sync 0;
// CHECK-NOT:   fence
func.func @wait_le_relaxed(%flag: !weft.ptr<i64>, %v: i64, %out: !weft.ptr<i64>)
    attributes {weft.kernel} {
  %seen = weft.wait le relaxed sys %flag, %v : !weft.ptr<i64>
  weft.store %out, %seen : !weft.ptr<i64>
  return
}

// CHECK-LABEL: .entry wait_le_acquire(
// CHECK:       ld.relaxed.sys.global.b64 [[SEEN:%rd[0-9]+]], [%rd{{[0-9]+}}];
// CHECK-NEXT:  setp.{{le|gt}}.u64 %p{{[0-9]+}}, [[SEEN]], %rd{{[0-9]+}};
// CHECK:       fence.acquire.sys;
// CHECK:       bar.sync 0;
func.func @wait_le_acquire(%flag: !weft.ptr<i64>, %v: i64, %out: !weft.ptr<i64>)
    attributes {weft.kernel} {
  %seen = weft.wait le acquire sys %flag, %v : !weft.ptr<i64>
  weft.store %out, %seen : !weft.ptr<i64>
  return
}

// CHECK-LABEL: .entry wait_lt_relaxed(
// CHECK:       ld.relaxed.sys.global.b64 [[SEEN:%rd[0-9]+]], [%rd{{[0-9]+}}];
// CHECK-NEXT:  setp.{{lt|ge}}.u64 %p{{[0-9]+}}, [[SEEN]], %rd{{[0-9]+}};
// CHECK-NOT:   fence
// CHECK:       bar.sync 0;
// CHECK-NOT:   fence
func.func @wait_lt_relaxed(%flag: !weft.ptr<i64>, %v: i64, %out: !weft.ptr<i64>)
    attributes {weft.kernel} {
  %seen = weft.wait lt relaxed sys %flag, %v : !weft.ptr<i64>
  weft.store %out, %seen : !weft.ptr<i64>
  return
}

// CHECK-LABEL: .entry wait_lt_acquire(
// CHECK:       ld.relaxed.sys.global.b64 [[SEEN:%rd[0-9]+]], [%rd{{[0-9]+}}];
// CHECK-NEXT:  setp.{{lt|ge}}.u64 %p{{[0-9]+}}, [[SEEN]], %rd{{[0-9]+}};
// CHECK:       fence.acquire.sys;
// CHECK:       bar.sync 0;
func.func @wait_lt_acquire(%flag: !weft.ptr<i64>, %v: i64, %out: !weft.ptr<i64>)
    attributes {weft.kernel} {
  %seen = weft.wait lt acquire sys %flag, %v : !weft.ptr<i64>
  weft.store %out, %seen : !weft.ptr<i64>
  return
}

// CHECK-LABEL: .entry wait_acquire_cta(
// CHECK:       ld.relaxed.cta.global.b32 [[SEEN:%r[0-9]+]], [%rd{{[0-9]+}}];
// CHECK-NEXT:  setp.{{ge|lt}}.u32 %p{{[0-9]+}}, [[SEEN]], %r{{[0-9]+}};
// CHECK:       fence.acquire.cta;
// CHECK:       bar.sync 0;
func.func @wait_acquire_cta(%flag: !weft.ptr<i32>, %v: i32, %out: !weft.ptr<i32>)
    attributes {weft.kernel} {
  %seen = weft.wait ge acquire cta %flag, %v : !weft.ptr<i32>
  weft.store %out, %seen : !weft.ptr<i32>
  return
}

// CHECK-LABEL: .entry wait_acquire_gpu(
// CHECK:       ld.relaxed.gpu.global.b32 [[SEEN:%r[0-9]+]], [%rd{{[0-9]+}}];
// CHECK-NEXT:  setp.{{ge|lt}}.u32 %p{{[0-9]+}}, [[SEEN]], %r{{[0-9]+}};
// CHECK:       fence.acquire.gpu;
// CHECK:       bar.sync 0;
func.func @wait_acquire_gpu(%flag: !weft.ptr<i32>, %v: i32, %out: !weft.ptr<i32>)
    attributes {weft.kernel} {
  %seen = weft.wait ge acquire gpu %flag, %v : !weft.ptr<i32>
  weft.store %out, %seen : !weft.ptr<i32>
  return
}

// The timeout hook (docs/memory-model.md, "Wait timeouts"): the poll reads
// wait_timeout_ns from the context (offset 32) and %globaltimer; with a
// timeout set, it gives up when the time is over or another wait of this
// rank already gave up (weft_wait_error.status, read relaxed), and the
// first to give up claims the record with a CAS 0 -> 1 and fills it in
// (cmp at +20 is the predicate: gt = 3; last seen value at +40).
// CHECK-LABEL: .entry wait_timeout_hook(
// CHECK-DAG:   ld.param.b64 [[TIMEOUT:%rd[0-9]+]], [{{%rd[0-9]+}}+32];
// CHECK-DAG:   mov.u64 {{%rd[0-9]+}}, %globaltimer;
// CHECK-DAG:   setp.eq.b64 {{%p[0-9]+}}, [[TIMEOUT]], 0;
// CHECK-DAG:   ld.relaxed.gpu.global.b32 {{%r[0-9]+}}, [[[RECORD:%rd[0-9]+]]];
// CHECK-DAG:   atom.relaxed.gpu.global.cas.b32 {{%r[0-9]+}}, [[[RECORD]]], 0, 1;
// CHECK-DAG:   st.global.b32 [[[RECORD]]+20], 3;
// CHECK-DAG:   st.global.b64 [[[RECORD]]+40], {{%rd[0-9]+}};
func.func @wait_timeout_hook(%flag: !weft.ptr<i32>, %v: i32, %out: !weft.ptr<i32>)
    attributes {weft.kernel} {
  %seen = weft.wait gt acquire sys %flag, %v : !weft.ptr<i32>
  weft.store %out, %seen : !weft.ptr<i32>
  return
}
