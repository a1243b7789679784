// RUN: weft-opt %s -split-input-file -verify-diagnostics

func.func @range_size() {
  // expected-error @+1 {{range [0, 64) has 64 elements but the result has 128}}
  %r = weft.make_range 0, 64 : tensor<128xi32>
  return
}

// -----

func.func @range_empty() {
  // expected-error @+1 {{tile 'tensor<0xi32>': every dimension must be a power of two}}
  %r = weft.make_range 4, 4 : tensor<0xi32>
  return
}

// -----

func.func @splat_type(%x: f32) {
  // expected-error @+1 {{result element type 'i32' differs from the source's 'f32'}}
  %t = weft.splat %x : f32 -> tensor<4xi32>
  return
}

// -----

func.func @broadcast_dim(%t: tensor<2x4xf32>) {
  // expected-error @+1 {{dimension 0 of size 2 cannot broadcast to 8}}
  %b = weft.broadcast %t : tensor<2x4xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @broadcast_rank(%t: tensor<4xf32>) {
  // expected-error @+1 {{cannot broadcast a rank-1 tile to rank 2; use weft.expand_dims first}}
  %b = weft.broadcast %t : tensor<4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @expand_axis(%t: tensor<4xf32>) {
  // expected-error @+1 {{axis 2 is out of range for a rank-1 tile}}
  %e = weft.expand_dims %t axis = 2 : tensor<4xf32> -> tensor<4x1xf32>
  return
}

// -----

func.func @expand_shape(%t: tensor<4xf32>) {
  // expected-error @+1 {{result shape must be the source's with a 1 inserted at the axis}}
  %e = weft.expand_dims %t axis = 0 : tensor<4xf32> -> tensor<4x1xf32>
  return
}

// -----

func.func @reshape_count(%t: tensor<16xf32>) {
  // expected-error @+1 {{cannot reshape 16 elements into 32}}
  %r = weft.reshape %t : tensor<16xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @reduce_shape(%t: tensor<4x8xf32>) {
  // expected-error @+1 {{results must be the operands without the reduced axis}}
  %r = weft.reduce %t axis = 1 : tensor<4x8xf32> -> tensor<8xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    weft.reduce.return %s : f32
  }
  return
}

// -----

func.func @reduce_scalar(%t: tensor<8xf32>) {
  // expected-error @+1 {{reducing a 1-D tile yields a scalar 'f32'}}
  %r = weft.reduce %t axis = 0 : tensor<8xf32> -> i32 {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    weft.reduce.return %s : f32
  }
  return
}

// -----

func.func @reduce_region(%t: tensor<8xf32>) {
  // expected-error @+1 {{combine region takes two elements of each operand}}
  %r = weft.reduce %t axis = 0 : tensor<8xf32> -> f32 {
  ^bb0(%a: f32):
    weft.reduce.return %a : f32
  }
  return
}

// -----

func.func @reduce_return(%t: tensor<8xf32>) {
  // expected-error @+1 {{combine region must return one element of each operand}}
  %r = weft.reduce %t axis = 0 : tensor<8xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %i = arith.fptosi %a : f32 to i32
    weft.reduce.return %i : i32
  }
  return
}

// -----

// expected-error @+1 {{blocked layout sizes must be powers of two}}
func.func @bad_blocked(%t: tensor<8xf32, #weft.blocked<{sizePerThread = [3], threadsPerWarp = [32], warpsPerProgram = [4], order = [0]}>>) {
  return
}

// -----

// expected-error @+1 {{blocked layout order must be a permutation of 0..1}}
func.func @bad_order(%t: tensor<8x8xf32, #weft.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerProgram = [4, 1], order = [1, 1]}>>) {
  return
}

// -----

// expected-error @+1 {{blocked layout of rank 1 on a tensor of rank 2}}
func.func @bad_rank(%t: tensor<8x8xf32, #weft.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerProgram = [4], order = [0]}>>) {
  return
}

// -----

// expected-error @+1 {{expected 'order' as an array of integers}}
func.func @missing_key(%t: tensor<8xf32, #weft.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerProgram = [4]}>>) {
  return
}

// -----

func.func @expand_layout(%t: tensor<8xf32, #weft.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerProgram = [4], order = [0]}>>) {
  // expected-error @+1 {{source layout must be the result's layout sliced at the axis}}
  %e = weft.expand_dims %t axis = 1 : tensor<8xf32, #weft.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerProgram = [4], order = [0]}>> -> tensor<8x1xf32, #weft.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerProgram = [4, 1], order = [0, 1]}>>
  return
}

// -----

func.func @convert_shape(%t: tensor<8xf32, #weft.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerProgram = [4], order = [0]}>>) {
  // expected-error @+1 {{cannot change the shape; use weft.reshape}}
  %c = weft.convert_layout %t : tensor<8xf32, #weft.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerProgram = [4], order = [0]}>> -> tensor<16xf32, #weft.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerProgram = [4], order = [0]}>>
  return
}

// -----

func.func @dot_k(%a: tensor<16x32xf16>, %b: tensor<16x16xf16>, %c: tensor<16x16xf32>) {
  // expected-error @+1 {{a is 16x32 but b is 16x16: their K differ}}
  %d = weft.dot %a, %b, %c : tensor<16x32xf16>, tensor<16x16xf16>, tensor<16x16xf32> -> tensor<16x16xf32>
  return
}

// -----

func.func @dot_c_shape(%a: tensor<16x32xf16>, %b: tensor<32x8xf16>, %c: tensor<16x16xf32>) {
  // expected-error @+1 {{c must be 16x8 (a's rows by b's columns)}}
  %d = weft.dot %a, %b, %c : tensor<16x32xf16>, tensor<32x8xf16>, tensor<16x16xf32> -> tensor<16x16xf32>
  return
}

// -----

func.func @dot_mixed(%a: tensor<16x16xf16>, %b: tensor<16x16xbf16>, %c: tensor<16x16xf32>) {
  // expected-error @+1 {{a is 'f16' but b is 'bf16'}}
  %d = weft.dot %a, %b, %c : tensor<16x16xf16>, tensor<16x16xbf16>, tensor<16x16xf32> -> tensor<16x16xf32>
  return
}

// -----

func.func @dot_int(%a: tensor<16x16xi8>, %b: tensor<16x16xi8>, %c: tensor<16x16xf32>) {
  // expected-error @+1 {{multiplies f16, bf16 or f32 tiles, not 'i8'}}
  %d = weft.dot %a, %b, %c : tensor<16x16xi8>, tensor<16x16xi8>, tensor<16x16xf32> -> tensor<16x16xf32>
  return
}

// -----

func.func @dot_acc(%a: tensor<16x16xf16>, %b: tensor<16x16xf16>, %c: tensor<16x16xf16>) {
  // expected-error @+1 {{accumulates in f32: c must be an f32 tile}}
  %d = weft.dot %a, %b, %c : tensor<16x16xf16>, tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf16>
  return
}

// -----

func.func @dot_rank(%a: tensor<16xf16>, %b: tensor<16x16xf16>, %c: tensor<16x16xf32>) {
  // expected-error @+1 {{multiplies 2-D tiles}}
  %d = weft.dot %a, %b, %c : tensor<16xf16>, tensor<16x16xf16>, tensor<16x16xf32> -> tensor<16x16xf32>
  return
}

// -----

func.func @async_copy_shape(%p: tensor<16x32x!weft.ptr<bf16>>, %buf: !weft.shared<32x16xbf16>) {
  // expected-error @+1 {{copies a tile of '!weft.ptr<bf16>' into '!weft.shared<32x16xbf16>': shapes and element types must match}}
  weft.async_copy %p, %buf : tensor<16x32x!weft.ptr<bf16>>, !weft.shared<32x16xbf16>
  return
}

// -----

func.func @async_copy_element(%p: tensor<16x16x!weft.ptr<f16>>, %buf: !weft.shared<16x16xbf16>) {
  // expected-error @+1 {{shapes and element types must match}}
  weft.async_copy %p, %buf : tensor<16x16x!weft.ptr<f16>>, !weft.shared<16x16xbf16>
  return
}

// -----

func.func @async_wait_negative() {
  // expected-error @+1 {{attribute 'pending' failed to satisfy constraint}}
  weft.async_wait -1
  return
}

// -----

// expected-error @+1 {{swizzled blocks are 32, 64 or 128 bytes wide, not 48}}
func.func @swizzle_width(%a: !weft.shared<16x32xbf16, #weft.swizzled<bytes = 48, warps = 0>>) {
  return
}

// -----

// 8 bf16 are 16 bytes: not a whole 32-byte block.
// expected-error @+1 {{a swizzled buffer's rows must be whole 32-byte blocks and its row count a multiple of 8}}
func.func @swizzle_narrow(%a: !weft.shared<16x8xbf16, #weft.swizzled<bytes = 32, warps = 0>>) {
  return
}

// -----

// expected-error @+1 {{rows interleaved for 4 warps need whole warpgroups and a multiple of 64 rows}}
func.func @swizzle_rows(%a: !weft.shared<32x32xbf16, #weft.swizzled<bytes = 64, warps = 4>>) {
  return
}

// -----

// expected-error @+1 {{a shared buffer holds one 2-D tile}}
func.func @shared_rank(%a: !weft.shared<64xbf16>) {
  return
}

// -----

// expected-error @+1 {{a tensor descriptor's block has 1 to 5 dimensions of positive size}}
func.func @desc_rank(%a: !weft.tensordesc<1x2x3x4x5x6xf32>) {
  return
}

// -----

// expected-error @+1 {{a tensor descriptor's elements are integers or floats of 1, 2, 4 or 8 bytes, not 'i1'}}
func.func @desc_element(%a: !weft.tensordesc<16xi1>) {
  return
}

// -----

func.func @desc_offsets(%a: !weft.tensordesc<16x16xf32>, %i: i32) {
  // expected-error @+1 {{takes 2 offsets for '!weft.tensordesc<16x16xf32>', got 1}}
  %t = weft.desc_load %a[%i] : !weft.tensordesc<16x16xf32> -> tensor<16x16xf32>
  return
}

// -----

func.func @desc_block(%a: !weft.tensordesc<16x16xf32>, %i: i32) {
  // expected-error @+1 {{result 'tensor<16x8xf32>' is not a block of '!weft.tensordesc<16x16xf32>'}}
  %t = weft.desc_load %a[%i, %i] : !weft.tensordesc<16x16xf32> -> tensor<16x8xf32>
  return
}

// -----

func.func @desc_store_type(%a: !weft.tensordesc<16x16xf32>, %i: i32, %v: tensor<16x16xf16>) {
  // expected-error @+1 {{value 'tensor<16x16xf16>' is not a block of '!weft.tensordesc<16x16xf32>'}}
  weft.desc_store %a[%i, %i], %v : !weft.tensordesc<16x16xf32>, tensor<16x16xf16>
  return
}

// -----

func.func @desc_dim(%a: !weft.tensordesc<16x16xf32>) -> i64 {
  // expected-error @+1 {{dimension 2 is outside '!weft.tensordesc<16x16xf32>'}}
  %d = weft.desc_dim %a, 2 : !weft.tensordesc<16x16xf32>
  return %d : i64
}

// -----

func.func @desc_base(%a: !weft.tensordesc<16x16xf32>) -> !weft.ptr<f16> {
  // expected-error @+1 {{yields a unicast pointer to 'f32'}}
  %p = weft.desc_base %a : !weft.tensordesc<16x16xf32> -> !weft.ptr<f16>
  return %p : !weft.ptr<f16>
}

// -----

func.func @desc_copy(%a: !weft.tensordesc<64x64xbf16>, %i: i32, %go: i1,
                     %buf: !weft.shared<64x32xbf16>, %bar: !weft.mbarrier) {
  // expected-error @+1 {{buffer '!weft.shared<64x32xbf16>' is not a block of '!weft.tensordesc<64x64xbf16>'}}
  weft.desc_async_copy %a[%i, %i], %buf, %bar, %go : !weft.tensordesc<64x64xbf16>, !weft.shared<64x32xbf16>
  return
}

// -----

func.func @copier_join(%bar: !weft.mbarrier, %parity: i32) {
  // expected-error @+1 {{waits in the copying thread alone, so it cannot join the program}}
  weft.mbarrier_wait %bar, %parity {copier}
  return
}

// -----

// expected-error @+1 {{weft.cluster must be array<i32: x, y, z> of positive extents with at most 8 programs, got array<i32: 4, 4, 1>}}
func.func @cluster_too_large() attributes {weft.kernel, weft.cluster = array<i32: 4, 4, 1>} {
  return
}

// -----

// expected-error @+1 {{weft.cluster must be array<i32: x, y, z> of positive extents with at most 8 programs, got array<i32: 2, 0, 1>}}
func.func @cluster_empty() attributes {weft.kernel, weft.cluster = array<i32: 2, 0, 1>} {
  return
}

// -----

// expected-error @+1 {{weft.cluster must be array<i32: x, y, z>}}
func.func @cluster_rank() attributes {weft.kernel, weft.cluster = array<i32: 2, 1>} {
  return
}

// -----

// expected-error @+1 {{weft.cluster belongs on a kernel function}}
module attributes {weft.cluster = array<i32: 2, 1, 1>} {
}

// -----

// The frontend's rule (python/weft/_semantics.py check_shape), for MLIR input.
func.func @range_not_power_of_two() {
  // expected-error @+1 {{tile 'tensor<10xi32>': every dimension must be a power of two}}
  %r = weft.make_range 0, 10 : tensor<10xi32>
  return
}

// -----

func.func @tile_too_large(%x: f32) {
  // expected-error @+1 {{tile 'tensor<256x512xf32>' has 131072 elements; a tile has at most 65536}}
  %t = weft.splat %x : f32 -> tensor<256x512xf32>
  return
}



// -----

// The language's ops (issue 36).
func.func @trans_order(%x: tensor<16x64xf32>) {
  // expected-error @+1 {{order must be a permutation of the source's dimensions}}
  %t = weft.trans %x, [0, 0] : tensor<16x64xf32> -> tensor<16x64xf32>
  return
}

// -----

func.func @split_last(%x: tensor<64x4xf32>) {
  // expected-error @+1 {{splits a last dimension of 2 off}}
  %a, %b = weft.split %x : tensor<64x4xf32> -> tensor<64xf32>
  return
}

// -----

func.func @flip_axis(%x: tensor<64xf32>) {
  // expected-error @+1 {{axis 1 is out of range for a rank-1 tile}}
  %f = weft.flip %x axis = 1 : tensor<64xf32>
  return
}

// -----

func.func @scan_type(%x: tensor<64xi32>) {
  // expected-error @+1 {{results have the operands' types}}
  %c = weft.scan %x axis = 0 : tensor<64xi32> -> tensor<32xi32> {
  ^bb0(%p: i32, %q: i32):
    %s = arith.addi %p, %q : i32
    weft.scan.return %s : i32
  }
  return
}

// -----

func.func @hint(%x: tensor<64xi32>) {
  // expected-error @+1 {{divisibility entries are positive powers of two}}
  %h = weft.axis_hint %x {divisibility = array<i64: 12>} : tensor<64xi32>
  return
}

// -----

func.func @load_wb(%p: !weft.ptr<f32>) {
  // expected-error @+1 {{cache modifier wb is not one of this access}}
  %v = weft.load cache wb %p : !weft.ptr<f32>
  return
}

// -----

func.func @acquire_hint(%p: !weft.ptr<f32>) {
  // expected-error @+1 {{cache hints and volatile are for weak accesses}}
  %v = weft.load acquire sys volatile %p : !weft.ptr<f32>
  return
}

// -----

func.func @asm_shapes(%x: tensor<64xi32>, %y: tensor<32xi32>) {
  // expected-error @+1 {{tile operands and results must share one shape and layout}}
  %s = weft.inline_asm "add.s32 $0, $1, $2;" "=r,r,r" pure pack 1 %x, %y : (tensor<64xi32>, tensor<32xi32>) -> tensor<64xi32>
  return
}

// -----

func.func @join_shape(%x: tensor<64xf32>) {
  // expected-error @+1 {{result is the operands' shape with a last dimension of 2}}
  %j = weft.join %x, %x : tensor<64xf32> -> tensor<64x4xf32>
  return
}

// -----

func.func @producer_tiles(%x: tensor<64xf32>) {
  // expected-error @+1 {{producer region holds tiles}}
  weft.warp_specialize producer_warps = 4 default {
  } producer {
    %y = arith.addf %x, %x : tensor<64xf32>
  }
  return
}

// -----

func.func @warp_specialize_last(%p: i32) {
  // expected-error @+1 {{must be the last op of its function}}
  weft.warp_specialize producer_warps = 4 default {
  } producer {
  }
  %q = arith.addi %p, %p : i32
  return
}
