/*
 * The CUDA backend's symmetric heap: CUDA VMM memory exported as POSIX
 * file descriptors (WEFT_CUDA_HEAP=vmm, the default) or cuMemAlloc memory
 * shared through legacy IPC handles (WEFT_CUDA_HEAP=ipc, and the fallback
 * where the device cannot export descriptors), every peer's mapped into
 * this process; and, only with WEFT_ENABLE_MULTICAST=1, an NVLS multicast
 * mapping of it. In a job across nodes the heap is NVSHMEM's (nvshmem.h),
 * whose kernels' device functions reach the other nodes' ranks; this
 * node's ranks are mapped by NVSHMEM too.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_backend.h"
#include "nvshmem.h"

static const char *kind_name(int32_t kind) {
  return kind == HEAP_VMM ? "vmm" : kind == HEAP_IPC ? "ipc"
                                  : kind == HEAP_NVSHMEM ? "nvshmem" : "?";
}

static CUmemAllocationProp vmm_prop(const cuda_state *s) {
  CUmemAllocationProp prop;
  memset(&prop, 0, sizeof prop);
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = s->gpu.device;
  return prop;
}

static CUmemAccessDesc read_write(const cuda_state *s) {
  CUmemAccessDesc desc = {{CU_MEM_LOCATION_TYPE_DEVICE, s->gpu.device},
                          CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  return desc;
}

typedef struct heap_plan {
  int32_t kind;
  uint32_t pad_;
  uint64_t size;
} heap_plan;

/* WEFT_CUDA_HEAP picks the kind; VMM falls back to IPC where the device
 * cannot export memory as file descriptors. */
static weft_status plan_heap(cuda_state *s, size_t size, heap_plan *plan) {
  const char *want = getenv("WEFT_CUDA_HEAP");
  plan->size = size;
  if (want && *want && strcmp(want, "vmm") && strcmp(want, "ipc"))
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "cuda backend: "
                     "WEFT_CUDA_HEAP='%s': expected vmm, ipc or nvshmem", want);
  if (want && !strcmp(want, "ipc")) {
    plan->kind = HEAP_IPC;
    s->kind_reason = "WEFT_CUDA_HEAP=ipc";
    return WEFT_SUCCESS;
  }
  int vmm = 0, fd = 0;
  weft_status st;
  if ((st = CU(cuDeviceGetAttribute, &vmm,
               CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
               s->gpu.device)) ||
      (st = CU(cuDeviceGetAttribute, &fd,
               CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
               s->gpu.device)))
    return st;
  if (!vmm || !fd) {
    plan->kind = HEAP_IPC;
    s->kind_reason = "fallback: the device cannot export VMM memory as file "
                     "descriptors";
    return WEFT_SUCCESS;
  }
  plan->kind = HEAP_VMM;
  s->kind_reason = want && *want ? "WEFT_CUDA_HEAP=vmm" : "default";
  CUmemAllocationProp prop = vmm_prop(s);
  size_t granule = 0;
  if ((st = CU(cuMemGetAllocationGranularity, &granule, &prop,
               CU_MEM_ALLOC_GRANULARITY_MINIMUM)))
    return st;
  if (granule)
    plan->size = (size + granule - 1) / granule * granule;
  return WEFT_SUCCESS;
}

/* Creates this rank's memory and what peers need to reach it: a file
 * descriptor (VMM) or an IPC handle. */
static weft_status create_local(cuda_state *s, int *fd, CUipcMemHandle *ipc) {
  rank_heap *h = &s->heaps[s->gpu.rank];
  weft_status st;
  if (s->kind == HEAP_IPC) {
    if ((st = CU(cuMemAlloc, &h->va, s->heap_size)))
      return st;
    return CU(cuIpcGetMemHandle, ipc, h->va);
  }
  CUmemAllocationProp prop = vmm_prop(s);
  if ((st = CU(cuMemCreate, &h->handle, s->heap_size, &prop, 0)))
    return st;
  h->has_handle = 1;
  return CU(cuMemExportToShareableHandle, fd, h->handle,
            CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
}

static weft_status map_range(cuda_state *s, rank_heap *h) {
  CUmemAccessDesc desc = read_write(s);
  weft_status st;
  if ((st = CU(cuMemAddressReserve, &h->va, s->heap_size, 0, 0, 0)) ||
      (st = CU(cuMemMap, h->va, s->heap_size, 0, h->handle, 0)))
    return st;
  h->mapped = 1;
  return CU(cuMemSetAccess, h->va, s->heap_size, &desc, 1);
}

/* fds[r]: rank r's exported heap (closed here). */
static weft_status map_vmm(cuda_state *s, int *fds) {
  weft_status st = WEFT_SUCCESS;
  for (int r = 0; r < s->gpu.num_ranks; ++r) {
    rank_heap *h = &s->heaps[r];
    if (r != s->gpu.rank && st == WEFT_SUCCESS) {
      st = CU(cuMemImportFromShareableHandle, &h->handle,
              (void *)(uintptr_t)fds[r], CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
      h->has_handle = st == WEFT_SUCCESS;
    }
    close(fds[r]);
  }
  for (int r = 0; r < s->gpu.num_ranks && st == WEFT_SUCCESS; ++r)
    st = map_range(s, &s->heaps[r]);
  return st;
}

_Static_assert(sizeof(CUipcMemHandle) <= WEFT_GPU_HANDLE_MAX,
               "a CUDA IPC handle must fit weft_gpu_share_handles");

static weft_status open_ipc(weft_gpu *g, int peer, const void *handle) {
  cuda_state *s = (cuda_state *)g;
  CUipcMemHandle h;
  memcpy(&h, handle, sizeof h);
  return CU(cuIpcOpenMemHandle, &s->heaps[peer].va, h,
            CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
}

/*
 * Multicast (NVLS), only with WEFT_ENABLE_MULTICAST=1 and a VMM heap. Rank 0
 * creates the object and passes it on as a descriptor; every rank adds its
 * device, binds its own heap and maps the object. UNTESTED: multicast
 * objects must not be created on the machines this was developed on.
 */
static weft_status multicast_map(cuda_state *s, uint64_t *base) {
  CUmulticastObjectProp prop = {(unsigned)s->gpu.num_ranks, s->heap_size,
                                CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0};
  int supported = 0;
  weft_status st = WEFT_SUCCESS;
  /* A driver without the entry points is a platform without multicast. */
  if (s->kind == HEAP_VMM && weft_cuda_load_multicast() == WEFT_SUCCESS)
    st = CU(cuDeviceGetAttribute, &supported,
            CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, s->gpu.device);
  if (st == WEFT_SUCCESS && supported)
    st = CU(cuMulticastGetGranularity, &s->mc_granule, &prop,
            CU_MULTICAST_GRANULARITY_MINIMUM);
  int32_t usable = st == WEFT_SUCCESS && supported && s->mc_granule &&
                   s->heap_size % s->mc_granule == 0;
  int32_t all[WEFT_MAX_RANKS];
  st = weft_bootstrap_agree(s->gpu.bs, st, &usable, sizeof usable, all);
  for (int r = 0; st == WEFT_SUCCESS && r < s->gpu.num_ranks; ++r)
    usable &= all[r];
  if (st != WEFT_SUCCESS || !usable)
    return st;

  int fd = -1;
  if (s->gpu.rank == 0) {
    if ((st = CU(cuMulticastCreate, &s->mc_handle, &prop)) == WEFT_SUCCESS) {
      s->has_mc_handle = 1;
      st = CU(cuMemExportToShareableHandle, &fd, s->mc_handle,
              CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    }
  } else if ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
    /* Every rank passes a descriptor; only rank 0's is the object. */
    st = weft_fail(WEFT_ERROR_BACKEND, "cuda backend: cannot open /dev/null");
  }
  if ((st = weft_gpu_agree(&s->gpu, st)) != WEFT_SUCCESS) {
    if (fd >= 0)
      close(fd);
    return st;
  }
  int fds[WEFT_MAX_RANKS];
  st = weft_bootstrap_allgather_fd(s->gpu.bs, fd, fds);
  close(fd);
  if (st != WEFT_SUCCESS)
    return st;
  if (s->gpu.rank != 0) {
    st = CU(cuMemImportFromShareableHandle, &s->mc_handle,
            (void *)(uintptr_t)fds[0], CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    s->has_mc_handle = st == WEFT_SUCCESS;
  }
  for (int r = 0; r < s->gpu.num_ranks; ++r)
    close(fds[r]);
  if (st == WEFT_SUCCESS)
    st = CU(cuMulticastAddDevice, s->mc_handle, s->gpu.device);
  /* Binding and mapping block until every device has joined: a rank that
   * failed to join would leave the others hanging there. */
  if ((st = weft_gpu_agree(&s->gpu, st)) != WEFT_SUCCESS)
    return st;
  rank_heap *own = &s->heaps[s->gpu.rank];
  st = CU(cuMulticastBindMem, s->mc_handle, 0, own->handle, 0, s->heap_size, 0);
  s->mc_bound = st == WEFT_SUCCESS;
  CUmemAccessDesc desc = read_write(s);
  if (st == WEFT_SUCCESS &&
      (st = CU(cuMemAddressReserve, &s->mc_va, s->heap_size, s->mc_granule, 0,
               0)) == WEFT_SUCCESS &&
      (st = CU(cuMemMap, s->mc_va, s->heap_size, 0, s->mc_handle, 0)) ==
          WEFT_SUCCESS) {
    s->mc_mapped = 1;
    st = CU(cuMemSetAccess, s->mc_va, s->heap_size, &desc, 1);
  }
  if ((st = weft_gpu_agree(&s->gpu, st)) == WEFT_SUCCESS)
    *base = s->mc_va;
  return st;
}

weft_status weft_cuda_heap_unmap(void *state) {
  cuda_state *s = state;
  weft_status st = weft_cuda_enter(s);
  if (s->kind == HEAP_NVSHMEM) {
    weft_nvshmem_close(s->nvshmem_heap);
    s->nvshmem_heap = NULL;
    return st;
  }
  if (s->mc_mapped)
    weft_keep(&st, CU(cuMemUnmap, s->mc_va, s->heap_size));
  if (s->mc_va)
    weft_keep(&st, CU(cuMemAddressFree, s->mc_va, s->heap_size));
  if (s->mc_bound)
    weft_keep(&st, CU(cuMulticastUnbind, s->mc_handle, s->gpu.device, 0,
                      s->heap_size));
  if (s->has_mc_handle)
    weft_keep(&st, CU(cuMemRelease, s->mc_handle));
  s->mc_va = 0;
  s->mc_mapped = s->mc_bound = s->has_mc_handle = 0;
  for (int r = 0; r < s->gpu.num_ranks; ++r) {
    rank_heap *h = &s->heaps[r];
    if (s->kind == HEAP_IPC && h->va)
      weft_keep(&st, r == s->gpu.rank ? CU(cuMemFree, h->va)
                                      : CU(cuIpcCloseMemHandle, h->va));
    if (h->mapped)
      weft_keep(&st, CU(cuMemUnmap, h->va, s->heap_size));
    if (s->kind == HEAP_VMM && h->va)
      weft_keep(&st, CU(cuMemAddressFree, h->va, s->heap_size));
    if (h->has_handle)
      weft_keep(&st, CU(cuMemRelease, h->handle));
    memset(h, 0, sizeof *h);
  }
  return st;
}

static weft_status map_all(cuda_state *s, size_t size) {
  heap_plan mine = {0, 0, size}, plans[WEFT_MAX_RANKS];
  weft_status st = weft_cuda_enter(s);
  if (st == WEFT_SUCCESS)
    st = plan_heap(s, size, &mine);
  st = weft_bootstrap_agree(s->gpu.bs, st, &mine, sizeof mine, plans);
  for (int r = 1; st == WEFT_SUCCESS && r < s->gpu.num_ranks; ++r)
    if (plans[r].kind != plans[0].kind || plans[r].size != plans[0].size)
      st = weft_fail(WEFT_ERROR_ASYMMETRIC, "cuda backend: ranks disagree on "
                     "the heap: rank 0 maps a %s heap of %llu bytes, rank %d "
                     "a %s heap of %llu bytes (set WEFT_CUDA_HEAP alike)",
                     kind_name(plans[0].kind), (unsigned long long)plans[0].size,
                     r, kind_name(plans[r].kind),
                     (unsigned long long)plans[r].size);
  if (st != WEFT_SUCCESS)
    return st;
  s->kind = (heap_kind)mine.kind;
  s->heap_size = mine.size;

  int fd = -1;
  CUipcMemHandle ipc;
  memset(&ipc, 0, sizeof ipc);
  st = create_local(s, &fd, &ipc);
  if (s->kind == HEAP_IPC)
    return weft_gpu_share_handles(&s->gpu, st, &ipc, sizeof ipc, open_ipc);
  int fds[WEFT_MAX_RANKS];
  if ((st = weft_gpu_agree(&s->gpu, st)) == WEFT_SUCCESS &&
      (st = weft_bootstrap_allgather_fd(s->gpu.bs, fd, fds)) == WEFT_SUCCESS)
    st = weft_gpu_agree(&s->gpu, map_vmm(s, fds));
  if (fd >= 0)
    close(fd);
  return st;
}

/* NVSHMEM's heap: for a job across nodes, or asked for
 * (WEFT_CUDA_HEAP=nvshmem). The ranks of this node must be ones NVSHMEM
 * maps (nvshmem_ptr); those of other nodes stay unmapped (NULL), even
 * where NVSHMEM could map them, so that their kernels take NVSHMEM's path
 * to them as on separate machines. */
static weft_status nvshmem_map(cuda_state *s, size_t size, void **bases) {
  weft_gpu *g = &s->gpu;
  s->kind = HEAP_NVSHMEM;
  s->kind_reason = g->num_nodes > 1 ? "the job spans nodes" : "WEFT_CUDA_HEAP=nvshmem";
  s->heap_size = size;
  weft_status st = weft_cuda_enter(s);
  st = weft_bootstrap_agree(g->bs, st, NULL, 0, NULL);
  if (st == WEFT_SUCCESS)
    st = weft_nvshmem_open(g->bs, g->rank, g->num_ranks, size, &s->nvshmem_heap);
  if (st != WEFT_SUCCESS)
    return st;
  int first = g->rank - g->rank % g->local_size;
  for (int p = first; st == WEFT_SUCCESS && p < first + g->local_size; ++p) {
    bases[p] = p == g->rank ? s->nvshmem_heap : weft_nvshmem_ptr(s->nvshmem_heap, p);
    if (!bases[p])
      st = weft_fail(WEFT_ERROR_UNSUPPORTED, "cuda backend: rank %d is on rank %d's "
                     "node, but NVSHMEM does not map its memory here (no NVLink or "
                     "PCIe P2P between their GPUs)", p, g->rank);
  }
  return weft_gpu_agree(g, st);
}

/* NVPTX kernels reach NVSHMEM through its device functions: no `engine`
 * in the context, only its flag. */
weft_status weft_cuda_heap_map(void *state, size_t size, weft_heap_layout *out) {
  cuda_state *s = state;
  char heap[160];
  weft_status st;
  if (s->gpu.num_nodes > 1 || weft_env_is("WEFT_CUDA_HEAP", "nvshmem")) {
    if ((st = nvshmem_map(s, size, out->bases)) != WEFT_SUCCESS)
      return weft_gpu_undo(st, weft_cuda_heap_unmap, s);
    out->flags = WEFT_CTX_ENGINE;
  } else {
    st = map_all(s, size);
    if (st == WEFT_SUCCESS && weft_env_is("WEFT_ENABLE_MULTICAST", "1"))
      st = multicast_map(s, &out->multicast_base);
    if (st != WEFT_SUCCESS) {
      out->multicast_base = 0;
      return weft_gpu_undo(st, weft_cuda_heap_unmap, s);
    }
    for (int r = 0; r < s->gpu.num_ranks; ++r)
      out->bases[r] = (void *)(uintptr_t)s->heaps[r].va;
  }
  snprintf(heap, sizeof heap, "%s heap (%s)", kind_name(s->kind), s->kind_reason);
  weft_gpu_debug(&s->gpu, heap, s->heap_size, out->multicast_base != 0);
  return WEFT_SUCCESS;
}

