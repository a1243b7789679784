// gfx942 has 64 KiB of LDS per workgroup; the tile scratch buffer shares it
// with the 8-byte broadcast slot, so a 64 KiB conversion (66560 bytes with
// its rows padded, conversionRowPitch) does not fit.
//
// RUN: weft-opt %s --weft-lower="target=hip:gfx942" -verify-diagnostics

#row = #weft.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 64], warpsPerProgram = [4, 1], order = [1, 0]}>
#col = #weft.blocked<{sizePerThread = [4, 1], threadsPerWarp = [64, 1], warpsPerProgram = [1, 4], order = [0, 1]}>

func.func @convert_64k(%x: f32) attributes {weft.kernel} {
  %t = weft.splat %x : f32 -> tensor<64x256xf32, #row>
  // expected-error @+1 {{convert_layout of tensor<64x256xf32, #weft.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 64], warpsPerProgram = [4, 1], order = [1, 0]}>> needs 66560 bytes of shared memory; the target allows 65528 (65536 less 8 for the broadcast slot)}}
  %c = weft.convert_layout %t : tensor<64x256xf32, #row> -> tensor<64x256xf32, #col>
  return
}
