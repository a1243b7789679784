/*
 * NVSHMEM's host library, dlopen'ed (nvshmem.h). The job joins it through
 * NVSHMEM's unique-id bootstrap: rank 0's id travels over Weft's own
 * bootstrap, so any launcher that starts Weft's ranks starts NVSHMEM's
 * PEs, numbered alike. The host library's entry points are the exported
 * `nvshmemx_hostlib_*` ones (nvshmemx_init_attr is an inline function of
 * NVSHMEM's headers around them); its structures are declared here with
 * the sizes and versions its headers pin: a unique id of 128 bytes, init
 * attributes of 144, each version (1 << 16) + its size.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_backend.h"
#include "nvshmem.h"

#define NVSHMEM_HOST "libnvshmem_host.so.3"
/* NVSHMEM dlopens its bootstrap plugins by file name. */
#define NVSHMEM_UID_PLUGIN "nvshmem_bootstrap_uid.so.3"
#define NVSHMEMX_INIT_WITH_UNIQUEID (1u << 3)
/* The global every module with NVSHMEM's device code holds. */
#define NVSHMEM_DEVICE_STATE "nvshmemi_device_state_d"
/* NVSHMEM's own allocations come from its symmetric heap too. */
#define NVSHMEM_HEAP_SLACK ((size_t)64 << 20)

#define NVSHMEM_VERSION_OF(type) ((1 << 16) + (int)sizeof(type))

typedef struct nvshmem_uniqueid {
  int version;
  char internal[124];
} nvshmem_uniqueid;

typedef struct nvshmem_uniqueid_args {
  int version;
  nvshmem_uniqueid *id;
  int myrank;
  int nranks;
} nvshmem_uniqueid_args;

typedef struct nvshmem_init_args {
  int version;
  nvshmem_uniqueid_args uid_args;
  char content[96];
} nvshmem_init_args;

typedef struct nvshmem_init_attr {
  int version;
  void *mpi_comm;
  nvshmem_init_args args;
} nvshmem_init_attr;

_Static_assert(sizeof(nvshmem_uniqueid) == 128 && sizeof(nvshmem_init_args) == 128 &&
                   sizeof(nvshmem_init_attr) == 144,
               "NVSHMEM's ABI (nvshmemx_uniqueid_t, nvshmemx_init_attr_t)");

#define NVSHMEM_FUNCTIONS(X)                                                   \
  X(get_uniqueid, "nvshmemx_get_uniqueid", int, (nvshmem_uniqueid *))          \
  X(set_uniqueid_args, "nvshmemx_set_attr_uniqueid_args", int,                 \
    (int, int, const nvshmem_uniqueid *, nvshmem_init_attr *))                 \
  X(init_attr, "nvshmemx_hostlib_init_attr", int,                              \
    (unsigned, nvshmem_init_attr *))                                           \
  X(finalize, "nvshmemx_hostlib_finalize", void, (void))                       \
  X(my_pe, "nvshmem_my_pe", int, (void))                                       \
  X(malloc_, "nvshmem_malloc", void *, (size_t))                               \
  X(free_, "nvshmem_free", void, (void *))                                     \
  X(ptr, "nvshmem_ptr", void *, (const void *, int))                           \
  X(module_init, "nvshmemx_cumodule_init", int, (CUmodule))                    \
  X(module_finalize, "nvshmemx_cumodule_finalize", int, (CUmodule))            \
  X(buffer_register, "nvshmemx_buffer_register", int, (void *, size_t))        \
  X(buffer_unregister, "nvshmemx_buffer_unregister", int, (void *))

#define FIELD(field, symbol, ret, params) ret(*field) params;
static struct {
  NVSHMEM_FUNCTIONS(FIELD)
  void *lib;
  int active; /* joined, for this job */
  /* The loaded modules that call NVSHMEM: finalized before they unload. */
  CUmodule *modules;
  size_t num_modules, max_modules;
} nv;
#undef FIELD

/* The host library and its bootstrap plugin, from $NVSHMEM_HOME/lib when
 * set (the Python frontend points it at the nvidia-nvshmem package): the
 * plugin is loaded first by path, so NVSHMEM's own load of it by name
 * finds it. */
static weft_status load(void) {
  if (nv.lib)
    return WEFT_SUCCESS;
  const char *home = getenv("NVSHMEM_HOME");
  char path[4096];
  if (home && *home) {
    snprintf(path, sizeof path, "%s/lib/%s", home, NVSHMEM_UID_PLUGIN);
    dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    snprintf(path, sizeof path, "%s/lib/%s", home, NVSHMEM_HOST);
  } else {
    snprintf(path, sizeof path, "%s", NVSHMEM_HOST);
  }
  void *lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (!lib)
    return weft_fail(WEFT_ERROR_UNSUPPORTED, "cuda backend: a job across nodes "
                     "reaches off-node peers through NVSHMEM, and %s does not load: "
                     "%s (install NVSHMEM, e.g. the nvidia-nvshmem-cu13 package, and "
                     "set NVSHMEM_HOME)", path, dlerror());
  const char *missing = NULL;
#define RESOLVE(field, symbol, ret, params)                                    \
  if (!missing && !weft_gpu_resolve(lib, symbol, &nv.field))                   \
    missing = symbol;
  NVSHMEM_FUNCTIONS(RESOLVE)
#undef RESOLVE
  if (missing) {
    dlclose(lib);
    return weft_fail(WEFT_ERROR_UNSUPPORTED, "cuda backend: %s has no %s (Weft "
                     "needs NVSHMEM 3)", path, missing);
  }
  nv.lib = lib; /* kept for the process: NVSHMEM starts once */
  return WEFT_SUCCESS;
}

/* NVSHMEM's heap holds Weft's, and multicast stays off unless the user
 * opted into it for Weft too; the user's own settings win. */
static weft_status configure(size_t heap_size) {
  char size[32];
  snprintf(size, sizeof size, "%zu", heap_size + NVSHMEM_HEAP_SLACK);
  if (setenv("NVSHMEM_SYMMETRIC_SIZE", size, 0) != 0 ||
      (!weft_env_is("WEFT_ENABLE_MULTICAST", "1") &&
       setenv("NVSHMEM_DISABLE_NVLS", "1", 0) != 0))
    return weft_fail(WEFT_ERROR_OUT_OF_MEMORY, "cuda backend: setenv failed");
  return WEFT_SUCCESS;
}

static weft_status join(weft_bootstrap *bs, int rank, int num_ranks, size_t heap_size) {
  nvshmem_uniqueid id;
  memset(&id, 0, sizeof id);
  id.version = NVSHMEM_VERSION_OF(nvshmem_uniqueid);
  weft_status st = load();
  if (st == WEFT_SUCCESS)
    st = configure(heap_size);
  if (st == WEFT_SUCCESS && rank == 0 && nv.get_uniqueid(&id) != 0)
    st = weft_fail(WEFT_ERROR_BACKEND, "cuda backend: nvshmemx_get_uniqueid failed");
  nvshmem_uniqueid all[WEFT_MAX_RANKS];
  if ((st = weft_bootstrap_agree(bs, st, &id, sizeof id, all)) != WEFT_SUCCESS)
    return st;
  nvshmem_init_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.version = NVSHMEM_VERSION_OF(nvshmem_init_attr);
  attr.args.version = NVSHMEM_VERSION_OF(nvshmem_init_args);
  attr.args.uid_args.version = NVSHMEM_VERSION_OF(nvshmem_uniqueid_args);
  if (nv.set_uniqueid_args(rank, num_ranks, &all[0], &attr) != 0 ||
      nv.init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr) != 0)
    st = weft_fail(WEFT_ERROR_BACKEND, "cuda backend: NVSHMEM did not start (its "
                   "messages above; NVSHMEM_DEBUG=INFO says more)");
  else if (nv.my_pe() != rank)
    st = weft_fail(WEFT_ERROR_BACKEND, "cuda backend: NVSHMEM numbered rank %d as "
                   "PE %d", rank, nv.my_pe());
  nv.active = st == WEFT_SUCCESS;
  return weft_bootstrap_agree(bs, st, NULL, 0, NULL);
}

weft_status weft_nvshmem_open(weft_bootstrap *bs, int rank, int num_ranks,
                              size_t heap_size, void **heap) {
  *heap = NULL;
  weft_status st = join(bs, rank, num_ranks, heap_size);
  if (st != WEFT_SUCCESS)
    return st;
  void *mine = nv.malloc_(heap_size); /* collective */
  if (!mine)
    st = weft_fail(WEFT_ERROR_OUT_OF_MEMORY, "cuda backend: nvshmem_malloc of the "
                   "%zu-byte heap failed (NVSHMEM_SYMMETRIC_SIZE must hold it)",
                   heap_size);
  st = weft_bootstrap_agree(bs, st, NULL, 0, NULL);
  if (st != WEFT_SUCCESS) {
    weft_nvshmem_close(mine);
    return st;
  }
  *heap = mine;
  return WEFT_SUCCESS;
}

void weft_nvshmem_close(void *heap) {
  if (!nv.active)
    return;
  if (heap)
    nv.free_(heap);
  nv.finalize();
  nv.active = 0;
}

void *weft_nvshmem_ptr(void *ptr, int pe) { return nv.active ? nv.ptr(ptr, pe) : NULL; }

weft_status weft_nvshmem_register(void *ptr, size_t size) {
  if (!nv.active || nv.buffer_register(ptr, size) == 0)
    return WEFT_SUCCESS;
  return weft_fail(WEFT_ERROR_BACKEND, "cuda backend: nvshmemx_buffer_register of "
                   "%zu bytes at %p failed", size, ptr);
}

void weft_nvshmem_unregister(void *ptr) {
  if (nv.active)
    nv.buffer_unregister(ptr);
}

weft_status weft_nvshmem_module_loaded(CUmodule module, const void *image, size_t size) {
  /* A module without the state's name in its image has no NVSHMEM; the
   * driver is asked only about the others, so that a probe that finds
   * nothing does not show as a failed call (compute-sanitizer reports
   * those). */
  if (!memmem(image, size, NVSHMEM_DEVICE_STATE, strlen(NVSHMEM_DEVICE_STATE)))
    return WEFT_SUCCESS;
  CUdeviceptr state = 0;
  size_t bytes = 0;
  if (weft_cuda.cuModuleGetGlobal(&state, &bytes, module, NVSHMEM_DEVICE_STATE) !=
      CUDA_SUCCESS)
    return WEFT_SUCCESS; /* the name, but not the global */
  if (!nv.active)
    return weft_fail(WEFT_ERROR_MODULE, "cuda backend: the module calls NVSHMEM (its "
                     "kernels were compiled for a job across nodes), and this job's "
                     "ranks are one node");
  if (nv.num_modules == nv.max_modules) {
    size_t max = nv.max_modules ? 2 * nv.max_modules : 16;
    CUmodule *grown = realloc(nv.modules, max * sizeof *grown);
    if (!grown)
      return weft_fail(WEFT_ERROR_OUT_OF_MEMORY, "cuda backend: out of host memory");
    nv.modules = grown;
    nv.max_modules = max;
  }
  if (nv.module_init(module) != 0)
    return weft_fail(WEFT_ERROR_MODULE, "cuda backend: nvshmemx_cumodule_init failed");
  nv.modules[nv.num_modules++] = module;
  return WEFT_SUCCESS;
}

void weft_nvshmem_module_unloading(CUmodule module) {
  for (size_t i = 0; i < nv.num_modules; ++i)
    if (nv.modules[i] == module) {
      if (nv.active)
        nv.module_finalize(module);
      nv.modules[i] = nv.modules[--nv.num_modules];
      return;
    }
}
