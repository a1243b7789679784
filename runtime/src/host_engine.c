/*
 * The host backend's engine for off-node peers (abi.h, weft_host_engine):
 * host kernels call these entries through the kernel context for every
 * put, get and signal whose peer is on another node. Each checks its
 * ranges against the symmetric heap's allocations (the same on every
 * rank) and composes the transport's operations (transport.h) into the
 * language's semantics: a put with a signal is the put, a flush to that
 * peer, then the atomic on its flag; a signal first completes every
 * earlier put of this rank (its release), and so does a quiet.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_engine.h"
#include "transport.h"

struct weft_host_engine_state {
  weft_host_engine table; /* first: the context's `engine` points here */
  const weft_transport *transport;
  void *transport_state;
  uint64_t heap_base; /* this rank's */
  uint64_t heap_size;
  int num_ranks;
  const weft_allocator *allocator;
  pthread_mutex_t lock;
  char reason[WEFT_ERROR_MAX]; /* the first failure's */
};

typedef struct weft_host_engine_state engine;

/* Keeps the first failure's reason and returns its debug kind. */
static uint32_t failed(engine *e, uint32_t kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static uint32_t failed(engine *e, uint32_t kind, const char *fmt, ...) {
  pthread_mutex_lock(&e->lock);
  if (!e->reason[0]) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->reason, sizeof e->reason, fmt, ap);
    va_end(ap);
  }
  pthread_mutex_unlock(&e->lock);
  return kind;
}

static uint32_t transport_failed(engine *e) {
  return failed(e, WEFT_DEBUG_ENGINE, "%s", e->transport->error(e->transport_state));
}

/* 0 when [address, address + n) lies in one live allocation of the heap
 * (or, for flags, in the runtime's reserved region, where the device-wide
 * barrier's counters are); else the debug kind, with the reason kept. */
static uint32_t check_range(engine *e, const char *what, uint64_t address,
                            uint64_t n, int peer, int flag) {
  if (peer < 0 || peer >= e->num_ranks)
    return failed(e, WEFT_DEBUG_BAD_PEER, "%s to rank %d (of %d ranks)", what,
                  peer, e->num_ranks);
  uint64_t offset = address - e->heap_base;
  if (offset >= e->heap_size)
    return failed(e, WEFT_DEBUG_OUTSIDE_HEAP, "%s of %" PRIu64 " bytes with rank "
                  "%d at 0x%" PRIx64 ", outside the symmetric heap", what, n,
                  peer, address);
  if (flag && offset + n <= WEFT_RESERVED_BYTES)
    return 0;
  const weft_block *b = weft_allocator_find(e->allocator, offset);
  if (!b)
    return failed(e, WEFT_DEBUG_OUTSIDE_ALLOC, "%s of %" PRIu64 " bytes with rank "
                  "%d at heap offset 0x%" PRIx64 ", which no live allocation "
                  "holds", what, n, peer, offset);
  if (n > b->size - (offset - b->offset))
    return failed(e, WEFT_DEBUG_OUTSIDE_ALLOC, "%s of %" PRIu64 " bytes with rank "
                  "%d at heap offset 0x%" PRIx64 " runs past the end of its "
                  "allocation [0x%" PRIx64 ", +%" PRIu64 ")", what, n, peer,
                  offset, b->offset, b->size);
  return 0;
}

static uint32_t engine_put(void *state, uint64_t dst, uint64_t src, uint64_t nbytes,
                           int32_t peer, uint64_t flag, uint64_t value, uint32_t op) {
  engine *e = state;
  uint32_t bad = check_range(e, "put", dst, nbytes, peer, 0);
  if (!bad && op)
    bad = check_range(e, "put's signal", flag, 8, peer, 1);
  if (bad)
    return bad;
  const weft_transport *t = e->transport;
  if (nbytes && t->put(e->transport_state, dst - e->heap_base,
                       (const void *)(uintptr_t)src, nbytes, peer))
    return transport_failed(e);
  if (!op)
    return 0;
  /* The flag only after the data: the receiver reads what it announces. */
  if (t->flush(e->transport_state, peer) ||
      t->atomic(e->transport_state, flag - e->heap_base, value,
                op == WEFT_ENGINE_SIGNAL_ADD, 8, peer))
    return transport_failed(e);
  return 0;
}

static uint32_t engine_get(void *state, uint64_t dst, uint64_t src, uint64_t nbytes,
                           int32_t peer) {
  engine *e = state;
  uint32_t bad = check_range(e, "get", src, nbytes, peer, 0);
  if (bad)
    return bad;
  if (nbytes && e->transport->get(e->transport_state, (void *)(uintptr_t)dst,
                                  src - e->heap_base, nbytes, peer))
    return transport_failed(e);
  return 0;
}

static uint32_t engine_signal(void *state, uint64_t flag, uint64_t value, int32_t peer,
                              uint32_t op, uint32_t flag_bytes) {
  engine *e = state;
  uint32_t bad = check_range(e, "signal", flag, flag_bytes, peer, 1);
  if (bad)
    return bad;
  const weft_transport *t = e->transport;
  if (t->flush(e->transport_state, -1) ||
      t->atomic(e->transport_state, flag - e->heap_base, value,
                op == WEFT_ENGINE_SIGNAL_ADD, (int)flag_bytes, peer))
    return transport_failed(e);
  return 0;
}

static uint32_t engine_quiet(void *state) {
  engine *e = state;
  return e->transport->flush(e->transport_state, -1) ? transport_failed(e) : 0;
}

/* libweft-mpi.so: WEFT_MPI_TRANSPORT, else beside libweft. */
static weft_status load_transport(const weft_transport **out) {
  char path[4096];
  const char *chosen = getenv("WEFT_MPI_TRANSPORT");
  Dl_info self;
  if (chosen && *chosen) {
    snprintf(path, sizeof path, "%s", chosen);
  } else if (dladdr((void *)load_transport, &self) && self.dli_fname) {
    const char *slash = strrchr(self.dli_fname, '/');
    int dir = slash ? (int)(slash - self.dli_fname + 1) : 0;
    snprintf(path, sizeof path, "%.*slibweft-mpi.so", dir, self.dli_fname);
  } else {
    snprintf(path, sizeof path, "libweft-mpi.so");
  }
  /* Global: MPI's own plugins resolve symbols of libmpi. Never unloaded:
   * MPI finalizes at exit. */
  void *lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE);
  if (!lib)
    return weft_fail(WEFT_ERROR_UNSUPPORTED, "host backend: a job across nodes "
                     "reaches off-node peers through MPI, and the MPI transport "
                     "does not load: %s (build Weft where MPI is installed, e.g. "
                     "Debian's libopenmpi-dev, or set WEFT_MPI_TRANSPORT)",
                     dlerror());
  weft_transport_entry entry;
  void *sym = dlsym(lib, WEFT_TRANSPORT_ENTRY);
  memcpy(&entry, &sym, sizeof entry);
  const weft_transport *t = sym ? entry() : NULL;
  if (!t || t->version != WEFT_TRANSPORT_VERSION)
    return weft_fail(WEFT_ERROR_UNSUPPORTED, "host backend: %s is not a Weft "
                     "transport of version %u", path, WEFT_TRANSPORT_VERSION);
  *out = t;
  return WEFT_SUCCESS;
}

weft_status weft_host_engine_open(const weft_backend_params *params, void *heap,
                                  size_t heap_size, weft_host_engine_state **out) {
  *out = NULL;
  engine *e = calloc(1, sizeof *e);
  weft_status st = e ? load_transport(&e->transport)
                     : weft_fail(WEFT_ERROR_OUT_OF_MEMORY, "host backend: out of "
                                 "host memory");
  /* Every rank joins the transport only if every rank could load it. */
  st = weft_bootstrap_agree(params->bootstrap, st, NULL, 0, NULL);
  if (st != WEFT_SUCCESS) {
    free(e);
    return st;
  }
  pthread_mutex_init(&e->lock, NULL);
  e->heap_base = (uint64_t)(uintptr_t)heap;
  e->heap_size = heap_size;
  e->num_ranks = params->num_ranks;
  e->allocator = params->allocator;
  e->table = (weft_host_engine){e, engine_put, engine_get, engine_signal, engine_quiet};
  if (e->transport->open(params->rank, params->num_ranks, heap, heap_size,
                         &e->transport_state))
    st = weft_fail(WEFT_ERROR_BACKEND, "%s", e->transport->error(e->transport_state));
  st = weft_bootstrap_agree(params->bootstrap, st, NULL, 0, NULL);
  if (st != WEFT_SUCCESS) {
    weft_host_engine_close(e);
    return st;
  }
  *out = e;
  return WEFT_SUCCESS;
}

void weft_host_engine_close(weft_host_engine_state *e) {
  if (!e)
    return;
  e->transport->close(e->transport_state);
  pthread_mutex_destroy(&e->lock);
  free(e);
}

const char *weft_host_engine_reason(const weft_host_engine *table) {
  const engine *e = table ? table->state : NULL;
  return e && e->reason[0] ? e->reason : "no reason recorded";
}

void weft_host_engine_clear(const weft_host_engine *table) {
  engine *e = table ? table->state : NULL;
  if (e)
    e->reason[0] = 0;
}
