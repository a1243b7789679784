/*
 * The Weft compiler as a C library (libWeftCAPI.so): parse weft IR text,
 * run passes, and compile to each target's artifacts, in-process. The Python
 * frontend calls this through ctypes.
 *
 * Every call returns a weft_status; the message of a failure (parser and
 * verifier diagnostics with their locations, codegen errors) is returned by
 * weft_compiler_last_error(). Nothing aborts the process.
 */
#ifndef WEFT_COMPILER_H
#define WEFT_COMPILER_H

#include <stddef.h>

#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_compiler weft_compiler;
typedef struct weft_artifacts weft_artifacts;

typedef struct weft_compile_options {
  const char *target; /* "cuda:90", "hip:gfx942", "host"; NULL = "host" */
  int num_warps;      /* 0 = 4 */
  int opt_level;      /* LLVM optimisation level 0..3; -1 = 3 */
  int debug;          /* bounds checks on peer ids and heap ranges */
  int num_stages;     /* buffers of a K loop's pipelined dot operands (copies
                         run num_stages - 1 iterations ahead); 0 = 3, 1 = none */
  int warp_mma;       /* 1: wl.dot uses warp-level MMA (cuda: mma.sync) even
                         where warpgroup MMA (wgmma) applies */
  const char *cuda_roots; /* cuda: more CUDA toolkit roots, ':'-separated,
                             searched for bin/ptxas and nvvm/libdevice after
                             $CUDA_HOME, the toolkit of the ptxas on PATH and
                             /usr/local/cuda ($PTXAS and $WEFT_LIBDEVICE
                             override all); NULL = none */
  int multinode;      /* the kernel runs in a job across nodes: puts, gets
                         and signals to a peer on another node go through
                         the engine (cuda: NVSHMEM's device library, linked
                         in from $WEFT_NVSHMEM_DEVICE_BC or nvshmem_roots;
                         host: the runtime's); not for hip */
  const char *nvshmem_roots; /* cuda + multinode: NVSHMEM installations,
                                ':'-separated, searched for
                                lib/libnvshmem_device.bc after
                                $WEFT_NVSHMEM_DEVICE_BC and $NVSHMEM_HOME;
                                NULL = none */
} weft_compile_options;

void weft_compile_options_default(weft_compile_options *opts);

/* A compiler owns one MLIRContext; use one per thread. */
weft_status weft_compiler_create(weft_compiler **out);
weft_status weft_compiler_destroy(weft_compiler *compiler);
/* Never NULL; "" after a success. Valid until the next call on compiler. */
const char *weft_compiler_last_error(const weft_compiler *compiler);
/* The version string that goes into cache keys: the release, the LLVM
 * version and a hash of this library, so that every build differs. */
const char *weft_compiler_version(void);

/* A file that compiles with opts (NULL = the defaults) take from the
 * machine, by name: "ptxas" (cuda cubins), "libdevice" (cuda math),
 * "nvshmem-device" (cuda multinode kernels' off-node operations),
 * "ocml" (hip math), "ockl" (hip device_print),
 * "host-builtins" (host f16/bf16). Its path in *path
 * (free with weft_string_free), else WEFT_ERROR_NOT_FOUND with every place
 * looked at in weft_compiler_last_error(compiler). */
weft_status weft_compiler_locate(weft_compiler *compiler,
                                 const weft_compile_options *opts,
                                 const char *name, char **path);

/* Parses and verifies `ir`, runs the textual pass pipeline (MLIR syntax,
 * e.g. "builtin.module(weft-optimize)"), returns the printed result in
 * *out (free with weft_string_free). */
weft_status weft_run_pipeline(weft_compiler *compiler, const char *ir,
                              size_t ir_size, const char *pipeline, char **out);
void weft_string_free(char *s);

/* Compiles `ir` for opts->target. The artifacts hold, by name: "weft" (the
 * tile IR after the weft-optimize pipeline), "llir" (LLVM IR), and per
 * target "ptx" and, when ptxas is found, "cubin" (cuda: the driver can
 * load the PTX alone; weft_compiler_locate says why there is none; a
 * multinode kernel calling NVSHMEM has a cubin only where NVSHMEM's device
 * library is found, and its PTX alone does not load);
 * "amdgcn" and "hsaco" (hip); "asm" and "so" (host). "kernels", present
 * when a kernel
 * needs a launch setting, is JSON: {"name": {"dynamic_shared_bytes": N,
 * "tensor_maps": {"I": {"map": [[dim, step, size, box], ...], "swizzle":
 * S}}, "cluster": [X, Y, Z], "early_start": true, "threads": T}}, each key
 * only where it applies: N is weft_launch_config.shared_bytes for that kernel;
 * tensor_maps names the tensor-descriptor arguments (by index I) that its
 * bulk tensor copies read, with the tensor map (weft_tensor_map_dim's,
 * outermost first) and swizzle to encode them with
 * (weft_tensor_desc_encode); cluster is the
 * kernel's weft.cluster shape, of which the grid must be a whole number
 * along each axis (on cuda the kernel's launches run in those clusters;
 * elsewhere programs run alone); early_start says the kernel waits for the
 * grids its launch depends on before it touches memory, so its launches may
 * take WEFT_LAUNCH_EARLY_START (runtime.h); threads, where the kernel has
 * producer warps beside its num_warps (wl.range's warp_specialize), is
 * weft_launch_config.num_threads for it instead of num_warps' threads. */
weft_status weft_compile(weft_compiler *compiler, const char *ir,
                         size_t ir_size, const weft_compile_options *opts,
                         weft_artifacts **out);
/* *data stays valid until weft_artifacts_destroy. WEFT_ERROR_NOT_FOUND if
 * the target produced no artifact of that name. */
weft_status weft_artifacts_get(const weft_artifacts *artifacts, const char *name,
                               const void **data, size_t *size);
/* Comma-separated names of the artifacts present ("weft,llir,ptx,cubin"). */
const char *weft_artifacts_names(const weft_artifacts *artifacts);
weft_status weft_artifacts_destroy(weft_artifacts *artifacts);

/* The command-line tools, as functions: the weft-compile and weft-opt
 * programs are mains that call these, so that one copy of LLVM and MLIR
 * (this library's) serves programs, Python and C alike. argv as main's;
 * the result is the process's exit status. weft_opt_main is mlir-opt with
 * the weft dialects and passes. */
int weft_compile_main(int argc, char **argv);
int weft_opt_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_COMPILER_H */
