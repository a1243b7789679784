/*
 * What the GPU backends (cuda, hip) share beyond their drivers: opening the
 * device with the exchange of every rank's GPU identity and the peer checks,
 * the exchange of IPC handles, launch parameters, the WEFT_DEBUG line and
 * failure bookkeeping. A backend's state begins with a weft_gpu; the driver
 * comes in through weft_gpu_ops. Messages name the backend ("cuda backend:
 * ...").
 *
 * Setup steps are collective: after each one every rank learns whether any
 * rank failed (weft_bootstrap_agree), so a local failure fails the whole job
 * with its message instead of leaving peers waiting in the next exchange.
 */
#ifndef WEFT_RUNTIME_GPU_H
#define WEFT_RUNTIME_GPU_H

#include <stddef.h>

#include "internal.h"

#define WEFT_GPU_STACK_ARGS 32 /* launch parameters without a malloc */
#define WEFT_GPU_HANDLE_MAX 64 /* bytes of one IPC handle (CUDA's, HIP's) */

typedef struct weft_gpu weft_gpu;

typedef struct weft_gpu_ops {
  const weft_backend_ops *backend; /* its name, warp size and close */
  const char *interconnect;        /* "NVLink", "xGMI" */
  const char *visible_devices;     /* the variables that pick visible GPUs */
  size_t state_size;               /* the backend's state, a weft_gpu first */
  /* Loads the driver (once per process); weft_fail's when it cannot. */
  weft_status (*ready)(void);
  weft_status (*device_count)(int *count);
  /* Opens g->ordinal (in range): sets g->device and g->bus_id, and makes
   * whatever else the backend keeps (context, stream). */
  weft_status (*open_device)(weft_gpu *g);
  /* 1 and *device when this process sees the GPU at PCI bus_id; quiet. */
  int (*device_by_bus_id)(int *device, const char *bus_id);
  weft_status (*can_access_peer)(int *can, int device, int peer_device);
} weft_gpu_ops;

struct weft_gpu {
  const weft_gpu_ops *ops;
  int rank, num_ranks;
  int ordinal;     /* the device as this process counts them */
  int device;      /* the driver's handle of it (CUdevice; HIP: the ordinal) */
  weft_bootstrap *bs;
  char bus_id[32]; /* PCI */
};

/* Stores dlsym(lib, symbol) into the function pointer at slot (POSIX lets
 * a void * carry a function address); 0 when the symbol is missing. */
int weft_gpu_resolve(void *lib, const char *symbol, void *slot);

/* The backend's `available`: the driver loads and shows a device. */
int weft_gpu_available(const weft_gpu_ops *ops);

/* The backend's `open`, collective: allocates the state, loads the driver,
 * opens the device, then every rank exchanges its GPU's bus id and checks
 * that each pair of ranks has distinct GPUs that reach each other. On
 * failure the state is closed again and *state stays NULL. */
weft_status weft_gpu_open(const weft_gpu_ops *ops,
                          const weft_backend_params *params, void **state);

/* Collective: weft_bootstrap_agree without a payload. */
weft_status weft_gpu_agree(const weft_gpu *g, weft_status mine);

/* Collective: after this rank's verdict `mine` on creating its memory,
 * exchanges every rank's `len`-byte IPC handle (len <= WEFT_GPU_HANDLE_MAX,
 * which the backends assert at compile time) and opens every peer's with
 * open_peer, then agrees on that. */
typedef weft_status (*weft_gpu_open_peer_fn)(weft_gpu *g, int peer,
                                             const void *handle);
weft_status weft_gpu_share_handles(weft_gpu *g, weft_status mine,
                                   const void *handle, size_t len,
                                   weft_gpu_open_peer_fn open_peer);

/* Undoes a failed step with undo(state) (unmap, close) and returns st with
 * the failure's message, which the undoing may have overwritten. */
weft_status weft_gpu_undo(weft_status st, weft_status (*undo)(void *state),
                          void *state);

/* First failure wins; cleanup goes on regardless. */
void weft_keep(weft_status *first, weft_status st);

weft_status weft_gpu_no_memory(const weft_gpu *g);

/* With WEFT_DEBUG=1: "weft: rank R: cuda backend: device D (PCI ...), HEAP,
 * N bytes per rank, multicast on|off" on stderr. */
void weft_gpu_debug(const weft_gpu *g, const char *heap, size_t bytes,
                    int multicast);

/* A launch's kernel parameters: args, then the kernel context by value (the
 * driver copies it at launch), and the block size (config's, else four
 * warps). Release with weft_gpu_launch_end. */
typedef struct weft_gpu_launch {
  void **params;
  unsigned block;
  void *on_stack[WEFT_GPU_STACK_ARGS + 1];
} weft_gpu_launch;

weft_status weft_gpu_launch_begin(const weft_gpu *g, weft_gpu_launch *l,
                                  const weft_launch_config *config, void **args,
                                  size_t num_args,
                                  const weft_kernel_context *kctx);
void weft_gpu_launch_end(weft_gpu_launch *l);

#endif /* WEFT_RUNTIME_GPU_H */
