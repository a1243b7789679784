/*
 * NVSHMEM for the cuda backend's jobs across nodes (nvshmem.c): the
 * engine NVPTX kernels call for off-node peers (its device functions,
 * linked into them by the compiler), here its host library, dlopen'ed
 * like the driver. NVSHMEM is one per process; not installed.
 */
#ifndef WEFT_RUNTIME_NVSHMEM_H
#define WEFT_RUNTIME_NVSHMEM_H

#include <stddef.h>

#include "cuda_driver.h"
#include "internal.h"

/* Collective over the job: loads libnvshmem_host.so.3 ($NVSHMEM_HOME/lib,
 * else the loader's path), joins NVSHMEM with a unique id that rank 0
 * makes and `bs` carries (the PEs numbered as Weft's ranks), with a
 * symmetric heap of at least heap_size bytes, and allocates that heap:
 * *heap (a device address, the same offset on every rank). Every rank
 * fails alike. The calling thread's CUDA context is the device's. */
weft_status weft_nvshmem_open(weft_bootstrap *bs, int rank, int num_ranks,
                              size_t heap_size, void **heap);
/* Collective: frees the heap and leaves NVSHMEM. */
void weft_nvshmem_close(void *heap);
/* This process's address of `pe`'s copy of the symmetric `ptr` where the
 * GPUs reach each other directly (NVLink, PCIe), else NULL. */
void *weft_nvshmem_ptr(void *ptr, int pe);
/* This rank's memory outside the heap (weft_malloc_local), registered with
 * NVSHMEM so that its transports may read and write it as the local side
 * of a transfer (a put's source, a get's destination); nothing without
 * NVSHMEM. */
weft_status weft_nvshmem_register(void *ptr, size_t size);
void weft_nvshmem_unregister(void *ptr);
/* A loaded module that calls NVSHMEM (its device state is a global of
 * it; `image` is what it was loaded from) gets that state filled in; one
 * that does not is left alone. Fails when the module needs NVSHMEM and
 * this job does not run it (one node). */
weft_status weft_nvshmem_module_loaded(CUmodule module, const void *image, size_t size);
/* Before unloading such a module. */
void weft_nvshmem_module_unloading(CUmodule module);

#endif /* WEFT_RUNTIME_NVSHMEM_H */
