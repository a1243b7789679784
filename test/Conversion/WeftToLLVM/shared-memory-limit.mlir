// Tiles move between threads through shared memory. A kernel's exchanges
// on sm_90 take places in its dynamic shared memory (227 KiB less 1 KiB
// for the static part), beside whatever is in use at the op
// (placeSharedBuffers); other functions' share one static buffer sized by
// its largest user, within the static 48 KiB less the 8-byte broadcast
// slot. An op that does not fit is reported at the op, not left to ptxas
// (a conversion's rows are padded by 16 bytes, conversionRowPitch).
// gfx942: shared-memory-limit-gfx942.mlir.
//
// RUN: weft-opt %s --weft-lower="target=cuda:90" -split-input-file -verify-diagnostics

#row = #weft.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerProgram = [4, 1], order = [1, 0]}>
#col = #weft.blocked<{sizePerThread = [4, 1], threadsPerWarp = [32, 1], warpsPerProgram = [1, 4], order = [0, 1]}>

func.func @convert_64k(%x: f32) {
  %t = weft.splat %x : f32 -> tensor<64x256xf32, #row>
  // expected-error @+1 {{convert_layout of tensor<64x256xf32, #weft.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerProgram = [4, 1], order = [1, 0]}>> needs 66560 bytes of shared memory; the target allows 49144 (49152 less 8 for the broadcast slot)}}
  %c = weft.convert_layout %t : tensor<64x256xf32, #row> -> tensor<64x256xf32, #col>
  return
}

// -----

// Half the size fits.
#row = #weft.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerProgram = [4, 1], order = [1, 0]}>
#col = #weft.blocked<{sizePerThread = [4, 1], threadsPerWarp = [32, 1], warpsPerProgram = [1, 4], order = [0, 1]}>

func.func @convert_32k(%x: f32) attributes {weft.kernel} {
  %t = weft.splat %x : f32 -> tensor<32x256xf32, #row>
  %c = weft.convert_layout %t : tensor<32x256xf32, #row> -> tensor<32x256xf32, #col>
  return
}

// -----

// A reduction across 4 warps keeps one partial per warp and result element.
#rows = #weft.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerProgram = [4, 1], order = [1, 0]}>

func.func @reduce_across_warps(%x: f32) {
  %t = weft.splat %x : f32 -> tensor<4x4096xf32, #rows>
  // expected-error @+1 {{reduce of tensor<4x4096xf32, #weft.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerProgram = [4, 1], order = [1, 0]}>> needs 65536 bytes of shared memory; the target allows 49144}}
  %s = weft.reduce %t axis = 0 : tensor<4x4096xf32, #rows> -> tensor<4096xf32, #weft.slice<{dim = 0, parent = #rows}>> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.addf %a, %b : f32
    weft.reduce.return %m : f32
  }
  return
}

// -----

// Copies of a replicated tile get the owner's old value through shared
// memory: 8 bytes per pointer-sized i64.
#rep = #weft.blocked<{sizePerThread = [8192], threadsPerWarp = [32], warpsPerProgram = [4], order = [0]}>

func.func @replicated_atomic(%p: !weft.ptr<i64>, %v: i64) {
  %ps = weft.splat %p : !weft.ptr<i64> -> tensor<8192x!weft.ptr<i64>, #rep>
  %vs = weft.splat %v : i64 -> tensor<8192xi64, #rep>
  // expected-error @+1 {{atomic_rmw of tensor<8192xi64, #weft.blocked<{sizePerThread = [8192], threadsPerWarp = [32], warpsPerProgram = [4], order = [0]}>> needs 65536 bytes of shared memory; the target allows 49144}}
  %old = weft.atomic_rmw add relaxed gpu %ps, %vs : tensor<8192x!weft.ptr<i64>, #rep>
  return
}

// -----

// In a kernel the 64 KiB conversion fits dynamic shared memory.
#row = #weft.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerProgram = [4, 1], order = [1, 0]}>
#col = #weft.blocked<{sizePerThread = [4, 1], threadsPerWarp = [32, 1], warpsPerProgram = [1, 4], order = [0, 1]}>

func.func @convert_64k_kernel(%x: f32) attributes {weft.kernel} {
  %t = weft.splat %x : f32 -> tensor<64x256xf32, #row>
  %c = weft.convert_layout %t : tensor<64x256xf32, #row> -> tensor<64x256xf32, #col>
  return
}

// -----

// 256 KiB does not.
#row = #weft.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerProgram = [4, 1], order = [1, 0]}>
#col = #weft.blocked<{sizePerThread = [4, 1], threadsPerWarp = [32, 1], warpsPerProgram = [1, 4], order = [0, 1]}>

func.func @convert_256k_kernel(%x: f32) attributes {weft.kernel} {
  %t = weft.splat %x : f32 -> tensor<256x256xf32, #row>
  // expected-error @+1 {{convert_layout of tensor<256x256xf32, #weft.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerProgram = [4, 1], order = [1, 0]}>> needs 266240 bytes of shared memory; the target allows 231424 (231424 of dynamic shared memory less 0 in use there)}}
  %c = weft.convert_layout %t : tensor<256x256xf32, #row> -> tensor<256x256xf32, #col>
  return
}
