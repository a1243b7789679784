/*
 * Runtime internals shared by the backend-independent files (not installed).
 */
#ifndef WEFT_RUNTIME_INTERNAL_H
#define WEFT_RUNTIME_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"

#define WEFT_ERROR_MAX 1024
#define WEFT_DEFAULT_WARPS 4 /* the compiler's default num_warps */

/* The threads of each program of a launch: the config's, else the
 * compiler's default warps. */
static inline uint32_t weft_launch_threads(const weft_launch_config *c, uint32_t warp_size) {
  return c->num_threads ? c->num_threads : WEFT_DEFAULT_WARPS * warp_size;
}

/* ---- error.c ---- */

/* The calling thread's last weft_fail() message. */
const char *weft_thread_error(void);
/* Copies the thread's last message into ctx and returns status: public
 * entry points end a failure with `return weft_ctx_fail(ctx, st)`. */
weft_status weft_ctx_fail(weft_context *ctx, weft_status status);

/* ---- env.c ---- */

typedef struct weft_env_info {
  int rank;
  int world_size;
  int local_rank;  /* on this host: picks the device */
  int local_size;  /* ranks per node (detect_local_size in env.c) */
  const char *local_size_from; /* the variable it came from; NULL: default */
  char job_id[256];
  int job_id_defaulted; /* no launcher named the job: "single-<pid>" */
  const char *launcher; /* "weft", "torchrun", "openmpi", "slurm", "none" */
} weft_env_info;

/* Rank, size, local rank and job id from the launcher's environment. */
weft_status weft_env_detect(weft_env_info *out);
/* "256M", "1G", "4096", "64KiB" -> bytes (binary multiples). */
weft_status weft_parse_size(const char *text, size_t *out);
/* Seconds (a float) from the environment variable, or dflt when unset. */
weft_status weft_env_seconds(const char *name, double dflt, double *out);
/* A positive integer from the environment, or dflt when unset. */
weft_status weft_env_count(const char *name, size_t dflt, size_t *out);
/* 1 when the environment variable is set to exactly value. */
int weft_env_is(const char *name, const char *value);

/* ---- bootstrap.c, rendezvous.c ---- */

typedef struct weft_bootstrap_config {
  int rank;
  int world_size;
  const char *job_id;
  double connect_timeout_s; /* rendezvous */
  double op_timeout_s;      /* one collective; <= 0: none */
  /* NULL: a Unix-domain socket on this host (descriptors can travel);
   * else the "host:port" rank 0 listens on over TCP. */
  const char *address;
} weft_bootstrap_config;

weft_status weft_bootstrap_open(const weft_bootstrap_config *config,
                                weft_bootstrap **out);
void weft_bootstrap_close(weft_bootstrap *bs);

/* FNV-1a of a string: job ids, host identities. */
uint64_t weft_hash_string(const char *s);

#define WEFT_BOOTSTRAP_ADDRESS_MAX 256
/* Where a job's ranks meet over TCP: WEFT_BOOTSTRAP_ADDR ("host:port"), else
 * MASTER_ADDR with WEFT_BOOTSTRAP_PORT or MASTER_PORT + 1; "" when none is
 * set. */
weft_status weft_bootstrap_address(char *out, size_t size);

/* ---- alloc.c: the symmetric heap's first-fit allocator (offsets only) ---- */

typedef struct weft_block {
  uint64_t offset;
  uint64_t size;
  int used;
} weft_block;

typedef struct weft_allocator {
  weft_block *blocks; /* sorted by offset, covering [begin, end) */
  size_t count;
  size_t capacity;
  uint64_t begin;
  uint64_t end;
} weft_allocator;

weft_status weft_allocator_init(weft_allocator *a, uint64_t begin, uint64_t end);
void weft_allocator_destroy(weft_allocator *a);
/* Checks that an allocation of size would fit, without doing it. */
weft_status weft_allocator_check_alloc(weft_allocator *a, uint64_t size);
uint64_t weft_allocator_alloc(weft_allocator *a, uint64_t size); /* after check */
/* Checks that offset is the start of a live allocation. */
weft_status weft_allocator_check_free(const weft_allocator *a, uint64_t offset);
void weft_allocator_free(weft_allocator *a, uint64_t offset); /* after check */
/* The live allocation that holds heap offset `offset`, or NULL. */
const weft_block *weft_allocator_find(const weft_allocator *a, uint64_t offset);

/* ---- local.c: weft_malloc_local blocks ---- */

typedef struct weft_local_block {
  void *ptr;
  size_t size;
  struct weft_local_block *next;
} weft_local_block;

/* 1 when [ptr, ptr + size) lies in one of ctx's local blocks. */
int weft_local_contains(const weft_context *ctx, const void *ptr, size_t size);
/* Frees every local block (weft_finalize). */
void weft_local_free_all(weft_context *ctx);

/* ---- module.c ---- */

struct weft_kernel {
  weft_module *module;
  void *function; /* the backend's */
  /* The programs that fit at once (resident, 0: not asked yet) for a
   * launch of these threads, shared bytes and cluster shape: launch.c asks
   * the backend once per shape, since an occupancy query costs more than
   * the launch it clamps. */
  uint32_t resident, resident_threads, resident_shared, resident_cluster[3];
  weft_kernel *next;
  char name[];
};

struct weft_module {
  weft_context *ctx;
  void *handle; /* the backend's */
  weft_module_format format;
  weft_kernel *kernels; /* handed out so far; freed with the module */
  weft_module *next;
};

weft_module_format weft_module_detect(const void *image, size_t size);
const char *weft_module_format_name(weft_module_format format);
void weft_modules_unload_all(weft_context *ctx);

/* ---- graph.c ---- */

void weft_graphs_destroy_all(weft_context *ctx);

/* ---- context.c ---- */

struct weft_context {
  int rank;
  int num_ranks;
  int local_rank;
  int device;
  weft_backend backend;
  const weft_backend_ops *ops;
  void *state; /* the backend's */
  weft_bootstrap *bootstrap;      /* every rank */
  weft_bootstrap *node_bootstrap; /* this node's ranks (bootstrap on one node) */
  int local_size, node, num_nodes;

  size_t heap_size;
  int heap_mapped;
  weft_kernel_context kctx; /* appended to every launch */

  weft_allocator allocator;
  uint64_t collective_seq; /* weft_malloc/weft_free calls so far */

  weft_local_block *local_blocks; /* weft_malloc_local's, newest first */
  weft_module *modules;           /* loaded, for weft_finalize */
  weft_graph *graphs;             /* made, for weft_finalize */
  char last_error[WEFT_ERROR_MAX];
};

#endif /* WEFT_RUNTIME_INTERNAL_H */
