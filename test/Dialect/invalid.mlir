// RUN: weft-opt %s -split-input-file -verify-diagnostics

func.func @release_load(%p: !weft.ptr<f32>) {
  // expected-error @+1 {{order 'release' is invalid for a load (expected weak, relaxed or acquire)}}
  %0 = weft.load release sys %p : !weft.ptr<f32>
  return
}

// -----

func.func @acq_rel_load(%p: !weft.ptr<f32>) {
  // expected-error @+1 {{order 'acq_rel' is invalid for a load}}
  %0 = weft.load acq_rel gpu %p : !weft.ptr<f32>
  return
}

// -----

func.func @acquire_store(%p: !weft.ptr<f32>, %v: f32) {
  // expected-error @+1 {{order 'acquire' is invalid for a store (expected weak, relaxed or release)}}
  weft.store acquire sys %p, %v : !weft.ptr<f32>
  return
}

// -----

func.func @bad_scope(%p: !weft.ptr<f32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'scope' [cta, gpu, sys]}}
  %0 = weft.load acquire cluster %p : !weft.ptr<f32>
  return
}

// -----

func.func @weak_atomic(%p: !weft.ptr<i32>, %v: i32) {
  // expected-error @+1 {{order 'weak' is invalid for an atomic (expected relaxed, acquire, release or acq_rel)}}
  %0 = weft.atomic_rmw add weak gpu %p, %v : !weft.ptr<i32>
  return
}

// -----

func.func @float_xor(%p: !weft.ptr<f32>, %v: f32) {
  // expected-error @+1 {{'xor' needs an integer element type, got 'f32'}}
  %0 = weft.atomic_rmw xor relaxed gpu %p, %v : !weft.ptr<f32>
  return
}

// -----

func.func @int_fadd(%p: !weft.ptr<i32>, %v: i32) {
  // expected-error @+1 {{'fadd' needs a float element type, got 'i32'}}
  %0 = weft.atomic_rmw fadd relaxed gpu %p, %v : !weft.ptr<i32>
  return
}

// -----

func.func @narrow_atomic(%p: !weft.ptr<i8>, %v: i8) {
  // expected-error @+1 {{'add' needs a 32- or 64-bit integer, got 'i8'}}
  %0 = weft.atomic_rmw add relaxed gpu %p, %v : !weft.ptr<i8>
  return
}

// -----

func.func @float_cas(%p: !weft.ptr<f32>, %v: f32) {
  // expected-error @+1 {{compare-and-swap needs a 32- or 64-bit integer, got 'f32'}}
  %0 = weft.atomic_cas acq_rel gpu %p, %v, %v : !weft.ptr<f32>
  return
}

// -----

func.func @relaxed_fence() {
  // expected-error @+1 {{order 'relaxed' is invalid for a fence (expected acquire, release, acq_rel or seq_cst)}}
  weft.fence relaxed gpu
  return
}

// -----

func.func @acquire_signal(%p: !weft.ptr<i64>, %v: i64) {
  // expected-error @+1 {{order 'acquire' is invalid for a signal (expected relaxed or release)}}
  weft.signal set acquire sys %p, %v : !weft.ptr<i64>
  return
}

// -----

func.func @release_wait(%p: !weft.ptr<i64>, %v: i64) {
  // expected-error @+1 {{order 'release' is invalid for a wait (expected relaxed or acquire)}}
  %0 = weft.wait eq release sys %p, %v : !weft.ptr<i64>
  return
}

// -----

func.func @narrow_flag(%p: !weft.ptr<i16>, %v: i16) {
  // expected-error @+1 {{flags are 32- or 64-bit integers, got 'i16'}}
  weft.signal set release sys %p, %v : !weft.ptr<i16>
  return
}

// -----

func.func @tile_signal(%p: tensor<4x!weft.ptr<i32>>, %v: tensor<4xi32>) {
  // expected-error @+1 {{operand #0 must be unicast weft pointer}}
  "weft.signal"(%p, %v) <{kind = 0 : i32, order = 3 : i32, scope = 2 : i32}> : (tensor<4x!weft.ptr<i32>>, tensor<4xi32>) -> ()
  return
}

// -----

func.func @mask_shape(%p: tensor<4x!weft.ptr<f32>>, %m: tensor<8xi1>) {
  // expected-error @+1 {{failed to verify that mask has the shape of ptr}}
  %0 = "weft.load"(%p, %m) <{operandSegmentSizes = array<i32: 1, 1, 0>, order = 0 : i32, scope = 2 : i32}> : (tensor<4x!weft.ptr<f32>>, tensor<8xi1>) -> tensor<4xf32>
  return
}

// -----

func.func @scalar_mask_on_tile(%p: tensor<4x!weft.ptr<f32>>, %v: tensor<4xf32>, %m: i1) {
  // expected-error @+1 {{failed to verify that mask has the shape of ptr}}
  "weft.store"(%p, %v, %m) <{order = 0 : i32, scope = 2 : i32}> : (tensor<4x!weft.ptr<f32>>, tensor<4xf32>, i1) -> ()
  return
}

// -----

func.func @other_without_mask(%p: !weft.ptr<f32>, %o: f32) {
  // expected-error @+1 {{'other' is only meaningful with a 'mask'}}
  %0 = "weft.load"(%p, %o) <{operandSegmentSizes = array<i32: 1, 0, 1>, order = 0 : i32, scope = 2 : i32}> : (!weft.ptr<f32>, f32) -> f32
  return
}

// -----

func.func @value_type(%p: !weft.ptr<f32>, %v: f16) {
  // expected-error @+1 {{failed to verify that value has the element type and shape of ptr}}
  "weft.store"(%p, %v) <{order = 0 : i32, scope = 2 : i32}> : (!weft.ptr<f32>, f16) -> ()
  return
}

// -----

func.func @offset_shape(%p: tensor<4x!weft.ptr<f32>>, %o: tensor<8xi32>) {
  // expected-error @+1 {{offset must have the shape of the pointer}}
  %0 = weft.addptr %p, %o : tensor<4x!weft.ptr<f32>>, tensor<8xi32>
  return
}

// -----

func.func @peer_gpu_scope(%p: !weft.ptr<i32>, %peer: i32, %v: i32) {
  %q = weft.translate %p, %peer : !weft.ptr<i32>
  // expected-error @+1 {{scope 'gpu' cannot order an access to a peer's memory; use 'sys'}}
  weft.store release gpu %q, %v : !weft.ptr<i32>
  return
}

// -----

func.func @multicast_load(%p: !weft.ptr<f32>) {
  %m = weft.multicast %p : !weft.ptr<f32>
  // expected-error @+1 {{cannot access a multicast pointer; only the multimem ops can}}
  %0 = "weft.load"(%m) <{operandSegmentSizes = array<i32: 1, 0, 0>, order = 0 : i32, scope = 2 : i32}> : (!weft.ptr<f32, multicast>) -> f32
  return
}

// -----

func.func @multimem_unicast(%p: !weft.ptr<f32>, %v: f32) {
  // expected-error @+1 {{operand #0 must be multicast weft pointer}}
  weft.multimem_store relaxed sys %p, %v : !weft.ptr<f32>, f32
  return
}

// -----

func.func @multimem_width(%p: !weft.ptr<f32>) {
  %m = weft.multicast %p : !weft.ptr<f32>
  // expected-error @+1 {{multimem has no 8 x 'f32' access (f32 x1/2/4, f16/bf16 x2/4/8, i32 or i64 x1)}}
  %0 = weft.multimem_ld_reduce add relaxed sys %m : !weft.ptr<f32, multicast> -> vector<8xf32>
  return
}

// -----

func.func @multimem_f16_scalar(%p: !weft.ptr<f16>, %v: f16) {
  %m = weft.multicast %p : !weft.ptr<f16>
  // expected-error @+1 {{multimem has no 1 x 'f16' access}}
  weft.multimem_store relaxed sys %m, %v : !weft.ptr<f16, multicast>, f16
  return
}

// -----

func.func @multimem_i8(%p: !weft.ptr<i8>, %v: i8) {
  %m = weft.multicast %p : !weft.ptr<i8>
  // expected-error @+1 {{multimem has no 1 x 'i8' access}}
  weft.multimem_red add relaxed sys %m, %v : !weft.ptr<i8, multicast>, i8
  return
}

// -----

func.func @multimem_f32_max(%p: !weft.ptr<f32>) {
  %m = weft.multicast %p : !weft.ptr<f32>
  // expected-error @+1 {{multimem has no 'max' for 'f32'}}
  %0 = weft.multimem_ld_reduce max relaxed sys %m : !weft.ptr<f32, multicast> -> f32
  return
}

// -----

func.func @multimem_red_bf16_min(%p: !weft.ptr<bf16>, %v: vector<2xbf16>) {
  %m = weft.multicast %p : !weft.ptr<bf16>
  // expected-error @+1 {{multimem has no 'min' for 'bf16'}}
  weft.multimem_red min relaxed sys %m, %v : !weft.ptr<bf16, multicast>, vector<2xbf16>
  return
}

// -----

func.func @multimem_red_acquire(%p: !weft.ptr<i32>, %v: i32) {
  %m = weft.multicast %p : !weft.ptr<i32>
  // expected-error @+1 {{order 'acquire' is invalid for a multimem reduction (expected relaxed or release)}}
  weft.multimem_red add acquire sys %m, %v : !weft.ptr<i32, multicast>, i32
  return
}

// -----

func.func @multimem_gpu_scope(%p: !weft.ptr<f32>, %v: f32) {
  %m = weft.multicast %p : !weft.ptr<f32>
  // expected-error @+1 {{multimem reaches other GPUs: an ordered access needs scope 'sys'}}
  weft.multimem_store release gpu %m, %v : !weft.ptr<f32, multicast>, f32
  return
}

// -----

func.func @translate_multicast(%p: !weft.ptr<f32>, %peer: i32) {
  %m = weft.multicast %p : !weft.ptr<f32>
  // expected-error @+1 {{cannot access a multicast pointer}}
  %0 = weft.translate %m, %peer : !weft.ptr<f32, multicast>
  return
}

// -----

func.func @bad_rmw_kind(%p: !weft.ptr<i32>, %v: i32) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [add, fadd, max, min, umax, umin, and, or, xor, xchg]}}
  %0 = weft.atomic_rmw nand relaxed gpu %p, %v : !weft.ptr<i32>
  return
}

// -----

func.func @pointer_xchg(%p: !weft.ptr<!weft.ptr<f32>>, %v: !weft.ptr<f32>) {
  // expected-error @+1 {{'xchg' needs a 32- or 64-bit integer or float element, got '!weft.ptr<f32>'}}
  %0 = weft.atomic_rmw xchg relaxed gpu %p, %v : !weft.ptr<!weft.ptr<f32>>
  return
}

// -----

func.func @put_narrow_signal(%d: !weft.ptr<f32>, %f: !weft.ptr<i32>, %n: i64, %p: i32, %v: i64) {
  // expected-error @+1 {{a put's signal is a 64-bit flag (NVSHMEM's signals are), got a pointer to 'i32'}}
  weft.put %d, %d, %n, %p signal set %f, %v : !weft.ptr<f32>, !weft.ptr<f32>, !weft.ptr<i32>
  return
}

// -----

func.func @put_signal_without_kind(%d: !weft.ptr<f32>, %f: !weft.ptr<i64>, %n: i64, %p: i32, %v: i64) {
  // expected-error @+1 {{a signal needs its kind, its flag and its value}}
  "weft.put"(%d, %d, %n, %p, %f, %v) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1>}> : (!weft.ptr<f32>, !weft.ptr<f32>, i64, i32, !weft.ptr<i64>, i64) -> ()
  return
}

// -----

func.func @put_signal_without_value(%d: !weft.ptr<f32>, %f: !weft.ptr<i64>, %n: i64, %p: i32) {
  // expected-error @+1 {{a signal needs its kind, its flag and its value}}
  "weft.put"(%d, %d, %n, %p, %f) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0>, signal_kind = 0 : i32}> : (!weft.ptr<f32>, !weft.ptr<f32>, i64, i32, !weft.ptr<i64>) -> ()
  return
}

// -----

func.func @put_tile(%d: tensor<4x!weft.ptr<f32>>, %n: i64, %p: i32) {
  // expected-error @+1 {{must be unicast weft pointer}}
  "weft.put"(%d, %d, %n, %p) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0>}> : (tensor<4x!weft.ptr<f32>>, tensor<4x!weft.ptr<f32>>, i64, i32) -> ()
  return
}

// -----

func.func @peer_signal_gpu_scope(%f: !weft.ptr<i64>, %v: i64, %p: i32) {
  // expected-error @+1 {{scope 'gpu' cannot order a signal to a peer; use 'sys'}}
  weft.signal set release gpu %f, %v peer %p : !weft.ptr<i64>
  return
}

// -----

// A module for a job across nodes on gfx942, which has no engine for them.
// expected-error @+1 {{multinode: hip:gfx942 has no engine for peers on other nodes}}
module attributes {weft.target = "hip:gfx942", weft.multinode} {
}
