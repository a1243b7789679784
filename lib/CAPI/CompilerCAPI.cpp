//===- CompilerCAPI.cpp - the compiler as a C library ---------------------===//
//
// Implements weft/compiler.h. Nothing here may take the host process down:
// every entry point runs behind a boundary that turns C++ exceptions, and
// LLVM fatal errors raised while it runs, into a weft_status and a message.
//
//===----------------------------------------------------------------------===//

#include "CompileOptions.h"
#include "weft/Compiler/Compiler.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/xxhash.h"
#include <dlfcn.h>
#include "llvm/Support/ErrorHandling.h"
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>

struct weft_compiler {
  weft::Compiler compiler;
  std::string lastError;
  /// Set when an LLVM fatal error unwound through LLVM's frames, which
  /// were built without exception support and so ran no cleanups: the
  /// context may hold half-done state, so the compiler refuses more work.
  bool broken = false;
};

struct weft_artifacts {
  weft::Artifacts artifacts;
  std::string names;
};

namespace {

/// An LLVM fatal error raised inside a C API call, carried out as a C++
/// exception to that call's boundary.
struct LLVMFatalError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// How many C API calls this thread is inside; fatal errors outside of them
/// (another LLVM user in this process) keep LLVM's exit-on-error behaviour.
thread_local int boundaryDepth = 0;

[[noreturn]] void onFatalError(void *, const char *reason, bool) {
  if (boundaryDepth > 0)
    throw LLVMFatalError(reason);
  std::fprintf(stderr, "LLVM ERROR: %s\n", reason);
  std::exit(1);
}

[[noreturn]] void onBadAlloc(void *, const char *reason, bool) {
  if (boundaryDepth > 0)
    throw std::bad_alloc();
  std::fprintf(stderr, "LLVM ERROR: %s\n", reason);
  std::abort();
}

void installErrorHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::install_fatal_error_handler(onFatalError);
    llvm::install_bad_alloc_error_handler(onBadAlloc);
  });
}

/// Runs `body` (which returns a weft_status) so that nothing escapes it;
/// failures are described in compiler->lastError when compiler is not null.
template <typename Body>
weft_status boundary(weft_compiler *compiler, Body &&body) noexcept {
  struct Depth {
    Depth() { ++boundaryDepth; }
    ~Depth() { --boundaryDepth; }
  };
  std::string ignored;
  std::string &error = compiler ? compiler->lastError : ignored;
  try {
    Depth depth;
    error.clear();
    if (compiler && compiler->broken) {
      error = "this compiler hit an LLVM fatal error earlier; destroy it and "
              "create a new one";
      return WEFT_ERROR_COMPILE;
    }
    return body();
  } catch (const LLVMFatalError &e) {
    if (compiler)
      compiler->broken = true;
    error = std::string("LLVM fatal error: ") + e.what();
    return WEFT_ERROR_COMPILE;
  } catch (const std::bad_alloc &) {
    error = "out of memory";
    return WEFT_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception &e) {
    error = std::string("internal compiler error: ") + e.what();
    return WEFT_ERROR_COMPILE;
  } catch (...) {
    error = "internal compiler error";
    return WEFT_ERROR_COMPILE;
  }
}

weft_status fail(std::string &error, weft_status status, std::string message) {
  error = std::move(message);
  return status;
}

/// The status for an llvm::Error from the compiler, its message in `error`.
weft_status fail(std::string &error, weft_status status, llvm::Error err) {
  return fail(error, status, llvm::toString(std::move(err)));
}

} // namespace

weft_status weft::makeCompileOptions(const weft_compile_options *opts,
                                     weft::CompileOptions &out, std::string &error) {
  weft_compile_options defaults;
  weft_compile_options_default(&defaults);
  if (!opts)
    opts = &defaults;

  auto target = weft::TargetSpec::parse(opts->target ? opts->target : "host");
  if (!target)
    return fail(error, WEFT_ERROR_INVALID_ARGUMENT, target.takeError());
  out.target.spec = *target;
  for (auto [name, value] : {std::pair{"num_warps", opts->num_warps},
                             std::pair{"num_stages", opts->num_stages}})
    if (value < 0)
      return fail(error, WEFT_ERROR_INVALID_ARGUMENT,
                  std::string("invalid ") + name + " " + std::to_string(value) +
                      ": negative (0 takes the default)");
  weft::KernelOptions &kernel = out.target.options;
  kernel.numWarps = opts->num_warps == 0 ? 4 : opts->num_warps;
  kernel.numStages = opts->num_stages == 0 ? 3 : opts->num_stages;
  kernel.warpMma = opts->warp_mma != 0;
  kernel.debug = opts->debug != 0;
  kernel.multinode = opts->multinode != 0;
  if (llvm::Error err = kernel.check(*target))
    return fail(error, WEFT_ERROR_INVALID_ARGUMENT, std::move(err));

  int optLevel = opts->opt_level == -1 ? 3 : opts->opt_level;
  if (optLevel < 0 || optLevel > 3)
    return fail(error, WEFT_ERROR_INVALID_ARGUMENT,
                "invalid opt_level " + std::to_string(opts->opt_level) +
                    ": expected 0..3, or -1 for 3");
  out.codegen.optLevel = optLevel;
  for (auto [roots, list] : {std::pair{opts->cuda_roots, &out.codegen.cudaRoots},
                             std::pair{opts->nvshmem_roots, &out.codegen.nvshmemRoots}})
    if (roots)
      for (llvm::StringRef root : llvm::split(llvm::StringRef(roots), ':'))
        if (!root.empty())
          list->push_back(root.str());
  return WEFT_SUCCESS;
}

namespace {

/// A malloc'ed copy of `text` for the caller to weft_string_free.
weft_status copyOut(const std::string &text, char **out, std::string &error) {
  char *copy = static_cast<char *>(std::malloc(text.size() + 1));
  if (!copy)
    return fail(error, WEFT_ERROR_OUT_OF_MEMORY, "out of memory");
  std::memcpy(copy, text.c_str(), text.size() + 1);
  *out = copy;
  return WEFT_SUCCESS;
}

} // namespace

extern "C" {

void weft_compile_options_default(weft_compile_options *opts) {
  if (!opts)
    return;
  opts->target = "host";
  opts->num_warps = 4;
  opts->opt_level = 3;
  opts->debug = 0;
  opts->num_stages = 3;
  opts->warp_mma = 0;
  opts->cuda_roots = nullptr;
  opts->multinode = 0;
  opts->nvshmem_roots = nullptr;
}

weft_status weft_compiler_create(weft_compiler **out) {
  if (!out)
    return WEFT_ERROR_INVALID_ARGUMENT;
  *out = nullptr;
  installErrorHandlers();
  return boundary(nullptr, [&] {
    *out = new weft_compiler();
    return WEFT_SUCCESS;
  });
}

weft_status weft_compiler_destroy(weft_compiler *compiler) {
  return boundary(nullptr, [&] {
    delete compiler;
    return WEFT_SUCCESS;
  });
}

const char *weft_compiler_last_error(const weft_compiler *compiler) {
  return compiler ? compiler->lastError.c_str() : "no compiler (NULL)";
}

const char *weft_compiler_version(void) {
  // Kernel caches key on this string: with a hash of this library's bytes
  // in it, a rebuilt compiler never reuses what an older build compiled.
  static const std::string version = [] {
    std::string text = "weft " WEFT_VERSION " (LLVM " LLVM_VERSION_STRING ")";
    Dl_info self;
    if (dladdr(reinterpret_cast<void *>(&weft_compiler_version), &self) &&
        self.dli_fname)
      if (auto bytes = llvm::MemoryBuffer::getFile(self.dli_fname))
        text += " build " +
                llvm::utohexstr(llvm::xxh3_64bits((*bytes)->getBuffer()),
                                /*LowerCase=*/true);
    return text;
  }();
  return version.c_str();
}

weft_status weft_run_pipeline(weft_compiler *compiler, const char *ir,
                              size_t ir_size, const char *pipeline,
                              char **out) {
  if (!compiler)
    return WEFT_ERROR_INVALID_ARGUMENT;
  return boundary(compiler, [&] {
    if (!ir || !pipeline || !out)
      return fail(compiler->lastError, WEFT_ERROR_INVALID_ARGUMENT,
                  "weft_run_pipeline: ir, pipeline and out must not be NULL");
    *out = nullptr;
    auto result =
        compiler->compiler.runPipeline(llvm::StringRef(ir, ir_size), pipeline);
    if (!result)
      return fail(compiler->lastError, WEFT_ERROR_COMPILE, result.takeError());
    return copyOut(*result, out, compiler->lastError);
  });
}

weft_status weft_compiler_locate(weft_compiler *compiler,
                                 const weft_compile_options *opts,
                                 const char *name, char **path) {
  if (!compiler)
    return WEFT_ERROR_INVALID_ARGUMENT;
  return boundary(compiler, [&] {
    if (!name || !path)
      return fail(compiler->lastError, WEFT_ERROR_INVALID_ARGUMENT,
                  "weft_compiler_locate: name and path must not be NULL");
    *path = nullptr;
    weft::CompileOptions options;
    if (weft_status status =
            makeCompileOptions(opts, options, compiler->lastError))
      return status;
    auto found = weft::locate(name, options.codegen);
    if (!found)
      return fail(compiler->lastError, WEFT_ERROR_NOT_FOUND, found.takeError());
    return copyOut(*found, path, compiler->lastError);
  });
}

void weft_string_free(char *s) { std::free(s); }

weft_status weft_compile(weft_compiler *compiler, const char *ir,
                         size_t ir_size, const weft_compile_options *opts,
                         weft_artifacts **out) {
  if (!compiler)
    return WEFT_ERROR_INVALID_ARGUMENT;
  return boundary(compiler, [&] {
    if (!ir || !out)
      return fail(compiler->lastError, WEFT_ERROR_INVALID_ARGUMENT,
                  "weft_compile: ir and out must not be NULL");
    *out = nullptr;
    weft::CompileOptions options;
    if (weft_status status =
            makeCompileOptions(opts, options, compiler->lastError))
      return status;
    auto artifacts = compiler->compiler.compile(llvm::StringRef(ir, ir_size),
                                                options);
    if (!artifacts)
      return fail(compiler->lastError, WEFT_ERROR_COMPILE,
                  artifacts.takeError());
    auto result = std::make_unique<weft_artifacts>();
    result->artifacts = std::move(*artifacts);
    for (const auto &entry : result->artifacts) {
      if (!result->names.empty())
        result->names += ',';
      result->names += entry.first;
    }
    *out = result.release();
    return WEFT_SUCCESS;
  });
}

weft_status weft_artifacts_get(const weft_artifacts *artifacts,
                               const char *name, const void **data,
                               size_t *size) {
  if (!artifacts || !name || !data || !size)
    return WEFT_ERROR_INVALID_ARGUMENT;
  return boundary(nullptr, [&] {
    auto it = artifacts->artifacts.find(name);
    if (it == artifacts->artifacts.end())
      return WEFT_ERROR_NOT_FOUND;
    *data = it->second.data();
    *size = it->second.size();
    return WEFT_SUCCESS;
  });
}

const char *weft_artifacts_names(const weft_artifacts *artifacts) {
  return artifacts ? artifacts->names.c_str() : "";
}

weft_status weft_artifacts_destroy(weft_artifacts *artifacts) {
  delete artifacts;
  return WEFT_SUCCESS;
}

} // extern "C"
