/*
 * The seam between libweft and an off-node transport plugin: a shared
 * library built against an existing one-sided engine (libweft-mpi.so: MPI-3
 * RMA) that libweft loads when a host job spans nodes. Weft writes no
 * network transport of its own; the plugin only adapts the engine to the
 * few operations host kernels need (host_engine.c composes them into the
 * kernels' weft_host_engine).
 *
 * Offsets are heap offsets (the same on every rank). Every entry returns 0
 * or -1 with a message in error(state). Thread-safe: every program of a
 * host launch is a thread that may call at once.
 */
#ifndef WEFT_RUNTIME_TRANSPORT_H
#define WEFT_RUNTIME_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#define WEFT_TRANSPORT_VERSION 1u
/* The plugin's one exported symbol: a function returning its table. */
#define WEFT_TRANSPORT_ENTRY "weft_transport_get"

typedef struct weft_transport {
  uint32_t version; /* WEFT_TRANSPORT_VERSION */
  const char *name;
  /* Collective over the job's ranks: joins the engine (starting it if the
   * process has not), numbers its ranks as Weft's and registers this
   * rank's heap for one-sided access by every rank. On failure *state may
   * still hold a message (error) and must be closed. */
  int (*open)(int rank, int num_ranks, void *heap, size_t heap_size, void **state);
  /* Collective: unregisters the heap. The engine itself stays up until the
   * process exits (MPI cannot start twice in one process). */
  void (*close)(void *state);
  const char *(*error)(void *state);
  /* Starts copying n bytes from src into peer's heap at offset; src must
   * not change until a flush covers the put. */
  int (*put)(void *state, uint64_t offset, const void *src, size_t n, int peer);
  /* Copies n bytes of peer's heap at offset into dst; complete on return. */
  int (*get)(void *state, void *dst, uint64_t offset, size_t n, int peer);
  /* Atomically sets (add 0) or adds to (add 1) the `bytes`-wide (4 or 8)
   * unsigned integer at offset in peer's heap; complete on return. */
  int (*atomic)(void *state, uint64_t offset, uint64_t value, int add, int bytes,
                int peer);
  /* Completes every earlier put of this process to peer (-1: to all). */
  int (*flush)(void *state, int peer);
} weft_transport;

typedef const weft_transport *(*weft_transport_entry)(void);

#endif /* WEFT_RUNTIME_TRANSPORT_H */
