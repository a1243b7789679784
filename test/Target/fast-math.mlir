// The approximate exponentials (wl.math.fast_exp2, fast_exp: math.exp2 and
// math.exp marked `afn`) on every target. NVPTX: ex2.approx.ftz.f32 alone,
// without the range checks and scaling (setp, two multiplies) that
// libdevice's precise exp2f wraps around ex2.approx.f32; exp multiplies by
// log2(e) first. AMDGPU: llvm.amdgcn.exp2 (v_exp_f32 without scaling).
// f16 and bf16 go through f32, f64 keeps the precise lowering, and so does
// the host (libm). Tiles lower element by element, the flag kept.
//
// REQUIRES: libdevice, ocml
// RUN: weft-compile %s --target=cuda:90 --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %ptxas %t.ptx
// RUN: weft-compile %s --target=hip:gfx942 --emit=llir -o %t.amd.ll
// RUN: FileCheck %s --check-prefix=AMD < %t.amd.ll
// RUN: weft-compile %s --target=host --emit=llir -o %t.host.ll
// RUN: FileCheck %s --check-prefix=HOST < %t.host.ll

// PTX-LABEL: .visible .entry fast_scalar(
// PTX-NOT:     ex2.approx.f32
// PTX:         ex2.approx.ftz.f32
// PTX:         mul.rn.f32 {{.*}}0f3FB8AA3B
// PTX-NEXT:    ex2.approx.ftz.f32
// PTX-NOT:     ex2.approx.f32
// PTX:         ret;
// AMD-LABEL: define {{.*}}@fast_scalar(
// AMD-COUNT-3: call {{.*}}float @llvm.amdgcn.exp2.f32(
// AMD-LABEL: define {{.*}}@fast_f64(
// AMD-NOT:     llvm.amdgcn.exp2
// HOST-LABEL: define {{.*}}@fast_scalar(
// HOST-DAG:    call {{.*}}float @exp2f(
// HOST-DAG:    call {{.*}}float @expf(
func.func @fast_scalar(%out: !weft.ptr<f32>, %hout: !weft.ptr<bf16>, %x: f32, %h: bf16) attributes {weft.kernel} {
  %a = math.exp2 %x fastmath<afn> : f32
  %b = math.exp %x fastmath<afn> : f32
  %s = arith.addf %a, %b : f32
  weft.store %out, %s : !weft.ptr<f32>
  %c = math.exp2 %h fastmath<afn> : bf16
  weft.store %hout, %c : !weft.ptr<bf16>
  return
}

// The precise exp2 of f64: libdevice's, no approximate single-precision unit.
// PTX-LABEL: .visible .entry fast_f64(
// PTX-NOT:     ex2.approx
// PTX:         ret;
func.func @fast_f64(%out: !weft.ptr<f64>, %x: f64) attributes {weft.kernel} {
  %a = math.exp2 %x fastmath<afn> : f64
  weft.store %out, %a : !weft.ptr<f64>
  return
}

// PTX-LABEL: .visible .entry fast_tile(
// PTX-COUNT-4: ex2.approx.ftz.f32
// PTX-NOT:     ex2.approx.f32
// PTX:         ret;
// AMD-LABEL: define {{.*}}@fast_tile(
// AMD:         call {{.*}}float @llvm.amdgcn.exp2.f32(
// HOST-LABEL: define {{.*}}@fast_tile(
// HOST:        call {{.*}}float @exp2f(
func.func @fast_tile(%x: !weft.ptr<f32>, %out: !weft.ptr<f32>) attributes {weft.kernel} {
  %r = weft.make_range 0, 128 : tensor<128xi32>
  %xs = weft.splat %x : !weft.ptr<f32> -> tensor<128x!weft.ptr<f32>>
  %xp = weft.addptr %xs, %r : tensor<128x!weft.ptr<f32>>, tensor<128xi32>
  %os = weft.splat %out : !weft.ptr<f32> -> tensor<128x!weft.ptr<f32>>
  %op = weft.addptr %os, %r : tensor<128x!weft.ptr<f32>>, tensor<128xi32>
  %a = weft.load %xp : tensor<128x!weft.ptr<f32>>
  %e = math.exp2 %a fastmath<afn> : tensor<128xf32>
  weft.store %op, %e : tensor<128x!weft.ptr<f32>>
  return
}
