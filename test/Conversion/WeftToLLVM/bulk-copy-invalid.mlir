// The bulk-copy pipeline's ops exist only where the target has bulk tensor
// copies (sm_90): weft-pipeline-dot-operands makes them nowhere else, and
// hand-written ones are refused.
//
// RUN: weft-opt %s --weft-lower="target=hip:gfx942" -verify-diagnostics
// RUN: weft-opt %s --weft-lower="target=host" -verify-diagnostics

func.func @bulk_elsewhere(%a: !weft.tensordesc<64x64xbf16>, %i: i32, %go: i1) attributes {weft.kernel} {
  // expected-error @+1 {{'weft.alloc_mbarriers' op needs a target with bulk tensor copies (sm_90)}}
  %b = weft.alloc_mbarriers {arrivals = 1 : i32} : !weft.mbarrier
  %buf = weft.alloc_shared : !weft.shared<64x64xbf16, #weft.swizzled<bytes = 128, warps = 0>>
  weft.desc_async_copy %a[%i, %i], %buf, %b, %go : !weft.tensordesc<64x64xbf16>, !weft.shared<64x64xbf16, #weft.swizzled<bytes = 128, warps = 0>>
  return
}
