/*
 * The host backend's engine for off-node peers (host_engine.c; abi.h,
 * weft_host_engine). Not installed.
 */
#ifndef WEFT_RUNTIME_HOST_ENGINE_H
#define WEFT_RUNTIME_HOST_ENGINE_H

#include "internal.h"

typedef struct weft_host_engine_state weft_host_engine_state;

/* Collective over the job: loads the MPI transport, joins it and registers
 * this rank's heap; on success *out's first member is the weft_host_engine
 * kernels call (the kernel context's `engine`). Every rank fails alike. */
weft_status weft_host_engine_open(const weft_backend_params *params, void *heap,
                                  size_t heap_size, weft_host_engine_state **out);
/* Collective. */
void weft_host_engine_close(weft_host_engine_state *engine);

/* Why an engine entry failed (the first failure since the last clear), for
 * the report of a WEFT_DEBUG_OUTSIDE_ALLOC or WEFT_DEBUG_ENGINE record. */
const char *weft_host_engine_reason(const weft_host_engine *engine);
void weft_host_engine_clear(const weft_host_engine *engine);

#endif /* WEFT_RUNTIME_HOST_ENGINE_H */
