//===- CompileOptions.h - the C API's options as the compiler's -*- C++ -*-===//
//
// Internal to libWeftCAPI: weft_compile and weft-compile (CompileMain.cpp)
// turn their options into the compiler's here, with one set of checks.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_LIB_CAPI_COMPILEOPTIONS_H
#define WEFT_LIB_CAPI_COMPILEOPTIONS_H

#include "weft/Compiler/Compiler.h"
#include "weft/compiler.h"

#include <string>

namespace weft {

/// `opts` (NULL: the defaults) as CompileOptions; WEFT_ERROR_INVALID_ARGUMENT
/// with the reason in `error` for a bad target or option.
weft_status makeCompileOptions(const weft_compile_options *opts, CompileOptions &out,
                               std::string &error);

} // namespace weft

#endif // WEFT_LIB_CAPI_COMPILEOPTIONS_H
