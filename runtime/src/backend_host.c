/*
 * The host backend: the "device" is the CPU. Each rank's heap is a memfd
 * that every rank of its node maps (MAP_SHARED), so host kernels read and
 * write those peers' heaps directly; peers on other nodes are reached
 * through the engine (host_engine.c, over MPI). A launch runs every
 * program of the grid on its own thread at once, so programs that
 * spin-wait on each other make progress.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bootstrap.h"
#include "host_engine.h"
#include "internal.h"

#define DEFAULT_MAX_PROGRAMS 1024
#define DEFAULT_STACK_SIZE (256u << 10)

typedef struct host_state {
  int rank;
  int num_ranks;
  weft_backend_params params;
  weft_host_engine_state *engine; /* jobs across nodes */
  size_t heap_size;
  void *bases[WEFT_MAX_RANKS];
  size_t max_programs;
  size_t stack_size;
} host_state;

typedef struct host_module {
  void *handle;
  /* Held open while loaded: dlopen identifies objects by path name, and a
   * reused /proc/self/fd/N would otherwise return an earlier module. */
  int fd;
} host_module;

static int host_available(void) { return 1; }

static weft_status host_open(const weft_backend_params *params, void **state) {
  host_state *s = calloc(1, sizeof *s);
  if (!s)
    return weft_fail(WEFT_ERROR_OUT_OF_MEMORY, "host backend: out of memory");
  s->rank = params->rank;
  s->num_ranks = params->num_ranks;
  s->params = *params;
  weft_status st = weft_env_count("WEFT_HOST_MAX_PROGRAMS", DEFAULT_MAX_PROGRAMS,
                                  &s->max_programs);
  if (st == WEFT_SUCCESS)
    st = weft_env_count("WEFT_HOST_STACK_SIZE", DEFAULT_STACK_SIZE,
                        &s->stack_size);
  if (st != WEFT_SUCCESS) {
    free(s);
    return st;
  }
  if (s->stack_size < (size_t)PTHREAD_STACK_MIN)
    s->stack_size = (size_t)PTHREAD_STACK_MIN;
  *state = s;
  return WEFT_SUCCESS;
}

static weft_status host_close(void *state) {
  free(state);
  return WEFT_SUCCESS;
}

static weft_status host_heap_unmap(void *state) {
  host_state *s = state;
  weft_host_engine_close(s->engine);
  s->engine = NULL;
  for (int r = 0; r < s->num_ranks; ++r)
    if (s->bases[r]) {
      munmap(s->bases[r], s->heap_size);
      s->bases[r] = NULL;
    }
  return WEFT_SUCCESS;
}

static weft_status host_heap_map(void *state, size_t size, weft_heap_layout *out) {
  host_state *s = state;
  int fd = memfd_create("weft-heap", MFD_CLOEXEC);
  if (fd < 0)
    return weft_fail(WEFT_ERROR_BACKEND, "host backend: memfd_create: %s",
                     strerror(errno));
  if (ftruncate(fd, (off_t)size) != 0) {
    weft_status st = weft_fail(WEFT_ERROR_OUT_OF_MEMORY, "host backend: a "
                               "%zu-byte heap: %s", size, strerror(errno));
    close(fd);
    return st;
  }
  /* The node's ranks are first + 0 .. local_size - 1. */
  int fds[WEFT_MAX_RANKS], local = s->params.local_size;
  int first = s->rank - s->rank % local;
  weft_status st = weft_bootstrap_allgather_fd(s->params.node_bootstrap, fd, fds);
  close(fd);
  if (st != WEFT_SUCCESS)
    return st;
  s->heap_size = size;
  for (int j = 0; j < local; ++j) {
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fds[j], 0);
    if (p == MAP_FAILED && st == WEFT_SUCCESS)
      st = weft_fail(WEFT_ERROR_OUT_OF_MEMORY, "host backend: cannot map rank "
                     "%d's %zu-byte heap: %s", first + j, size, strerror(errno));
    s->bases[first + j] = p == MAP_FAILED ? NULL : p;
    out->bases[first + j] = s->bases[first + j];
    close(fds[j]);
  }
  /* Whether every rank mapped its node's heaps, before the engine's
   * collective set-up. */
  st = weft_bootstrap_agree(s->params.bootstrap, st, NULL, 0, NULL);
  if (st == WEFT_SUCCESS && s->params.num_nodes > 1) {
    st = weft_host_engine_open(&s->params, s->bases[s->rank], size, &s->engine);
    out->engine = s->engine;
    out->flags = WEFT_CTX_ENGINE;
  }
  if (st != WEFT_SUCCESS)
    host_heap_unmap(s);
  return st;
}

static weft_status host_local_alloc(void *state, size_t size, void **out) {
  (void)state;
  size_t rounded = (size + WEFT_HEAP_ALIGN - 1) & ~(size_t)(WEFT_HEAP_ALIGN - 1);
  if (rounded < size || !(*out = aligned_alloc(WEFT_HEAP_ALIGN, rounded)))
    return weft_fail(WEFT_ERROR_OUT_OF_MEMORY, "host backend: cannot allocate %zu "
                     "bytes", size);
  return WEFT_SUCCESS;
}

static weft_status host_local_free(void *state, void *ptr) {
  (void)state;
  free(ptr);
  return WEFT_SUCCESS;
}

static weft_status host_copy(void *state, void *dst, const void *src, size_t n) {
  (void)state;
  memcpy(dst, src, n);
  return WEFT_SUCCESS;
}

static weft_status host_memset(void *state, void *dst, int value, size_t n) {
  (void)state;
  memset(dst, value, n);
  return WEFT_SUCCESS;
}

/* Host launches run to completion: a plain memset is in stream order. */
static weft_status host_memset_async(void *state, void *dst, int value, size_t n,
                                     void *stream) {
  (void)stream;
  return host_memset(state, dst, value, n);
}

/* The peers' heaps are mapped here: each put is a copy, then its signal
 * stored with release, as a host kernel's signal is. Made at once, which
 * is after the launches before it (they have finished), so a fork and a
 * join have nothing to order. */
static weft_status host_put_order(void *state, void *stream) {
  (void)state;
  (void)stream;
  return WEFT_SUCCESS;
}

static weft_status host_put_signal(void *state, const weft_put *puts, size_t count) {
  (void)state;
  for (size_t i = 0; i < count; i++) {
    uint64_t value;
    if (puts[i].size)
      memcpy(puts[i].dst, puts[i].src, puts[i].size);
    memcpy(&value, puts[i].signal_src, sizeof value);
    __atomic_store_n((uint64_t *)puts[i].signal, value, __ATOMIC_RELEASE);
  }
  return WEFT_SUCCESS;
}

/* Launches have finished here, so a count still short is a peer's to
 * raise (a remote signal): spin for it, bounded by the wait timeout. */
static weft_status host_put_wait(void *state, const void *count, uint32_t value,
                                 uint64_t timeout_ns) {
  (void)state;
  const uint32_t *word = count;
  double deadline = timeout_ns ? weft_bs_now() + (double)timeout_ns * 1e-9 : 0;
  uint32_t seen;
  while ((seen = __atomic_load_n(word, __ATOMIC_ACQUIRE)) < value) {
    if (deadline && weft_bs_now() > deadline)
      return weft_fail(WEFT_ERROR_TIMEOUT, "weft_put_wait: the count at %p is %" PRIu32
                       ", short of %" PRIu32 ", after the wait timeout", count, seen, value);
    sched_yield();
  }
  return WEFT_SUCCESS;
}

static weft_status host_module_load(void *state, const void *image, size_t size,
                                    weft_module_format format, void **module) {
  (void)state;
  (void)format;
  host_module *m = calloc(1, sizeof *m);
  if (!m)
    return weft_fail(WEFT_ERROR_OUT_OF_MEMORY, "host backend: out of memory");
  m->fd = memfd_create("weft-module", MFD_CLOEXEC);
  if (m->fd < 0) {
    free(m);
    return weft_fail(WEFT_ERROR_BACKEND, "host backend: memfd_create: %s",
                     strerror(errno));
  }
  const char *p = image;
  for (size_t left = size; left;) {
    ssize_t n = write(m->fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      weft_status st = weft_fail(WEFT_ERROR_BACKEND, "host backend: writing "
                                 "the module: %s", strerror(errno));
      close(m->fd);
      free(m);
      return st;
    }
    p += n;
    left -= (size_t)n;
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", m->fd);
  m->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!m->handle) {
    const char *why = dlerror();
    weft_status st = weft_fail(WEFT_ERROR_MODULE, "host backend: cannot load "
                               "the shared object: %s", why ? why : "?");
    close(m->fd);
    free(m);
    return st;
  }
  *module = m;
  return WEFT_SUCCESS;
}

static weft_status host_module_unload(void *state, void *module) {
  (void)state;
  host_module *m = module;
  dlclose(m->handle);
  close(m->fd);
  free(m);
  return WEFT_SUCCESS;
}

static weft_status host_module_get_function(void *state, void *module,
                                            const char *name, void **function) {
  (void)state;
  host_module *m = module;
  dlerror();
  *function = dlsym(m->handle, name);
  if (!*function)
    return weft_fail(WEFT_ERROR_NOT_FOUND, "host backend: no kernel '%s' in "
                     "the module", name);
  return WEFT_SUCCESS;
}

typedef struct program {
  weft_host_kernel_fn fn;
  void **args;
  const weft_kernel_context *kctx;
  weft_host_program id;
} program;

static void *run_program(void *arg) {
  program *p = arg;
  p->fn(p->args, p->kctx, &p->id);
  return NULL;
}

static weft_status host_launch(void *state, void *function,
                               const weft_launch_config *config, void **args,
                               size_t num_args, const weft_kernel_context *kctx) {
  host_state *s = state;
  (void)num_args;
  uint64_t total = (uint64_t)config->grid[0] * config->grid[1] * config->grid[2];
  if (total > s->max_programs)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT,
                     "host backend: grid %ux%ux%u = %llu programs exceeds "
                     "WEFT_HOST_MAX_PROGRAMS=%zu (every program runs at once "
                     "on its own thread)", config->grid[0], config->grid[1],
                     config->grid[2], (unsigned long long)total,
                     s->max_programs);
  weft_host_kernel_fn fn;
  /* dlsym hands out functions as void *: POSIX guarantees the round trip. */
  memcpy(&fn, &function, sizeof fn);
  program *progs = calloc(total, sizeof *progs);
  pthread_t *threads = calloc(total, sizeof *threads);
  if (!progs || !threads) {
    free(progs);
    free(threads);
    return weft_fail(WEFT_ERROR_OUT_OF_MEMORY, "host backend: out of memory");
  }
  size_t i = 0;
  for (uint32_t z = 0; z < config->grid[2]; ++z)
    for (uint32_t y = 0; y < config->grid[1]; ++y)
      for (uint32_t x = 0; x < config->grid[0]; ++x, ++i)
        progs[i] = (program){fn, args, kctx, {{x, y, z}, {config->grid[0],
                             config->grid[1], config->grid[2]}}};
  weft_status st = WEFT_SUCCESS;
  if (total == 1) {
    run_program(&progs[0]);
  } else {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, s->stack_size);
    size_t started = 0;
    for (; started < total; ++started) {
      int err = pthread_create(&threads[started], &attr, run_program,
                               &progs[started]);
      if (err) {
        /* Programs already running may wait for the missing ones; they
         * drain through WEFT_WAIT_TIMEOUT. */
        st = weft_fail(WEFT_ERROR_BACKEND, "host backend: cannot start "
                       "program thread %zu of %llu: %s (lower the grid or "
                       "WEFT_HOST_STACK_SIZE)", started,
                       (unsigned long long)total, strerror(err));
        break;
      }
    }
    pthread_attr_destroy(&attr);
    for (size_t t = 0; t < started; ++t)
      pthread_join(threads[t], NULL);
  }
  free(progs);
  free(threads);
  return st;
}

/* Every program of a launch runs at once on its own thread (a cluster is
 * only a grouping of programs here). */
static weft_status host_resident_programs(void *state, void *function,
                                          uint32_t num_threads, uint32_t shared_bytes,
                                          const uint32_t cluster[3], uint32_t *out) {
  host_state *s = state;
  (void)function, (void)num_threads, (void)shared_bytes, (void)cluster;
  *out = s->max_programs < UINT32_MAX ? (uint32_t)s->max_programs : UINT32_MAX;
  return WEFT_SUCCESS;
}

static weft_status host_synchronize(void *state, void *stream) {
  (void)state;
  (void)stream;
  return WEFT_SUCCESS;
}

const weft_backend_ops weft_backend_host = {
    .name = "host",
    .warp_size = 1,
    .available = host_available,
    .open = host_open,
    .close = host_close,
    .heap_map = host_heap_map,
    .heap_unmap = host_heap_unmap,
    .local_alloc = host_local_alloc,
    .local_free = host_local_free,
    .copy_to_device = host_copy,
    .copy_to_host = host_copy,
    .memset_device = host_memset,
    .memset_async = host_memset_async,
    .put_fork = host_put_order,
    .put_signal = host_put_signal,
    .put_join = host_put_order,
    .put_wait = host_put_wait,
    .module_load = host_module_load,
    .module_unload = host_module_unload,
    .module_get_function = host_module_get_function,
    .launch = host_launch,
    .resident_programs = host_resident_programs,
    .synchronize = host_synchronize,
};
