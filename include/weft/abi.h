/*
 * The kernel-context ABI: the one definition shared by the compiler (which
 * lowers weft ops to field accesses of this struct) and the runtime (which
 * fills it in and appends it, by value, as the last parameter of every
 * kernel launch).
 *
 * Why by value: the heap bases then live in the kernel-parameter space
 * (NVPTX constant bank, AMDGPU kernarg segment, host stack), so a peer
 * address translation is register arithmetic the compiler can hoist and
 * CSE, never a load of a base table from global memory per access.
 *
 * The layout is plain C with fixed-width fields so that the compiler can
 * address fields with offsetof() and the two sides cannot drift apart.
 */
#ifndef WEFT_ABI_H
#define WEFT_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_ABI_VERSION 4u

/* Enough for an NVL72 domain with room to spare; 1 KiB of parameter space. */
#define WEFT_MAX_RANKS 128

/* weft_kernel_context.flags */
#define WEFT_CTX_MULTICAST 0x1u /* multicast_base is a live NVLS mapping */
#define WEFT_CTX_DEBUG 0x2u     /* runtime built the context for a debug run */
/* The job runs an engine for the peers whose heap_base is 0 (a job across
 * nodes; a cuda heap from NVSHMEM): its kernels are compiled weft.multinode. */
#define WEFT_CTX_ENGINE 0x4u

typedef struct weft_kernel_context {
  int32_t rank;
  int32_t num_ranks;
  uint32_t flags;
  uint32_t abi_version; /* WEFT_ABI_VERSION */
  uint64_t heap_size;   /* bytes mapped per rank, the reserved region included */
  uint64_t multicast_base; /* 0 when multicast is off (the default) */
  uint64_t wait_timeout_ns; /* 0: waits never time out */
  /* This process's address of each rank's heap; 0 for a rank on another
   * node, which loads and stores cannot reach (weft.put/get/signal go
   * through the job's engine instead). */
  uint64_t heap_base[WEFT_MAX_RANKS];
  /* The node layout: ranks form nodes of local_size consecutive ranks, so
   * rank r is on node r / local_size at index local_rank within it. */
  int32_t local_rank;
  int32_t local_size;
  int32_t node;
  int32_t num_nodes;
  /* Host target, in a job across nodes: the weft_host_engine (below) that
   * host kernels reach off-node peers through; 0 otherwise. */
  uint64_t engine;
} weft_kernel_context;

/*
 * Runtime-reserved region: the first WEFT_RESERVED_BYTES of every rank's
 * heap. User allocations start after it. Kernels find it at heap_base[rank]
 * (their own copy) or heap_base[peer] (a peer's copy).
 */
#define WEFT_RESERVED_BYTES 65536u

/* weft_wait_error.status */
#define WEFT_WAIT_OK 0u
#define WEFT_WAIT_TIMED_OUT 1u

/*
 * Written by the first wait on this rank that exceeds wait_timeout_ns. Once
 * status is non-zero every later wait of the launch returns at once, so the
 * launch drains instead of hanging and the runtime reports the record.
 */
typedef struct weft_wait_error {
  uint32_t status;
  int32_t rank;
  uint32_t program[3];
  uint32_t cmp;         /* weft::WaitPredicate value */
  uint64_t flag_address; /* of the awaited flag; the runtime finds its heap */
  uint64_t expected;
  uint64_t last_seen;
  uint8_t pad_[16];
} weft_wait_error;

/* weft_debug_error.kind */
#define WEFT_DEBUG_OK 0u
#define WEFT_DEBUG_BAD_PEER 1u     /* a translate to a peer that is no rank */
#define WEFT_DEBUG_OUTSIDE_HEAP 2u /* a translate of a pointer outside the heap */
#define WEFT_DEBUG_ASSERT 3u       /* a failed weft.assert (wl.device_assert) */
#define WEFT_DEBUG_OFF_NODE 4u     /* a translate to a peer on another node */
#define WEFT_DEBUG_OUTSIDE_ALLOC 5u /* a put/get range past its allocation */
#define WEFT_DEBUG_ENGINE 6u       /* the engine failed an off-node operation */

/*
 * Written by the first failed debug check (kernels compiled with debug) on
 * this rank; that program then returns instead of trapping, which would
 * kill the process or the GPU context, and every later check of the launch
 * sees the record and returns too. The runtime reports and clears it.
 */
typedef struct weft_debug_error {
  uint32_t kind;
  int32_t rank;
  uint32_t program[3];
  int32_t peer;
  uint64_t pointer;       /* the pointer being translated */
  uint64_t location;      /* address of "<kernel> at <file:line:col>" in the
                             module's constants (device memory on GPUs) */
  uint32_t location_size; /* its bytes, no NUL */
  uint8_t pad_[20];
} weft_debug_error;

/*
 * Device-wide barrier (weft.barrier: every program on every rank), in the
 * reserved region. count and gen are touched by this rank's programs only;
 * arrive[r] is incremented by rank r's barrier leader, one per barrier, and
 * never reset, so no re-zeroing is needed between launches.
 */
typedef struct weft_reserved {
  weft_wait_error wait_error;
  uint32_t barrier_count; /* programs of this rank arrived at the open barrier */
  uint32_t pad0_[15];
  uint32_t barrier_gen; /* barriers this rank has completed */
  uint32_t pad1_[15];
  uint64_t barrier_arrive[WEFT_MAX_RANKS];
  weft_debug_error debug_error;
} weft_reserved;

/*
 * Host target: one CPU thread runs one program. The compiler emits, for each
 * kernel `k`, an exported C function with this signature; args[i] points at
 * the value of the i-th kernel argument (the cuLaunchKernel convention).
 */
typedef struct weft_host_program {
  uint32_t id[3];
  uint32_t num[3];
} weft_host_program;

typedef void (*weft_host_kernel_fn)(void **args, const weft_kernel_context *ctx,
                                    const weft_host_program *program);

/*
 * Host target: off-node peers. A job across nodes on the host backend
 * reaches off-node peers through an existing engine (MPI-3 RMA), which the
 * runtime wraps in this table; kernels call its entries through the kernel
 * context's `engine`, the way NVPTX kernels call NVSHMEM's device
 * functions. Addresses are this rank's addresses of symmetric objects
 * (dst of a put, src of a get, flags), which the engine moves to `peer`'s
 * copy; the other side of a transfer may be any memory of this rank.
 *
 * Each entry returns 0, or a WEFT_DEBUG_* kind after keeping its reason for
 * the runtime's report: the kernel then records a debug error at its own
 * source location and stops the program. `signal_op` is 0 for none (put
 * only), else WEFT_ENGINE_SIGNAL_SET or _ADD, `flag_bytes` 4 or 8.
 */
#define WEFT_ENGINE_SIGNAL_SET 1u
#define WEFT_ENGINE_SIGNAL_ADD 2u

typedef struct weft_host_engine {
  void *state;
  /* Starts copying nbytes from src into peer's copy of dst; with a signal,
   * then sets or adds signal_value to peer's copy of the 8-byte flag once
   * the data is there. */
  uint32_t (*put)(void *state, uint64_t dst, uint64_t src, uint64_t nbytes,
                  int32_t peer, uint64_t flag, uint64_t signal_value,
                  uint32_t signal_op);
  /* Copies nbytes of peer's copy of src into dst; complete on return. */
  uint32_t (*get)(void *state, uint64_t dst, uint64_t src, uint64_t nbytes,
                  int32_t peer);
  /* Completes every earlier put of this rank, then sets or adds value to
   * peer's copy of the flag (flag_bytes wide). */
  uint32_t (*signal)(void *state, uint64_t flag, uint64_t value, int32_t peer,
                     uint32_t signal_op, uint32_t flag_bytes);
  /* Completes every earlier put of this rank: the data is at its peers. */
  uint32_t (*quiet)(void *state);
} weft_host_engine;

/*
 * A tensor descriptor: a kernel argument of type !weft.tensordesc<...>
 * (weft.TensorDescriptor in Python), passed by value like the context. It
 * names a strided tensor in global memory; desc_load/desc_store move
 * blocks of it, and elements outside the tensor read as zero and are not
 * written. The runtime fills it (weft_tensor_desc_encode, runtime.h).
 *
 * Both halves are always present, so the layout is the same on every
 * backend. tensor_map is the CUtensorMap that sm_90's bulk tensor copies
 * (TMA) read from the parameter space, encoded by the cuda backend for the
 * view of the tensor and shared-memory swizzle the kernel reported
 * (compiler.h, "kernels"); zeros elsewhere. The plain fields serve every other access.
 * The encoder guarantees what TMA requires of them on every backend, so the
 * compiler may assume it everywhere: base is 16-byte aligned and every
 * stride but the last (which is 1) spans a multiple of 16 bytes.
 */
#define WEFT_TENSOR_DESC_MAX_RANK 5

#ifdef __cplusplus
#define WEFT_ALIGNAS_(n) alignas(n)
#else
#define WEFT_ALIGNAS_(n) _Alignas(n)
#endif

typedef struct weft_tensor_desc {
  WEFT_ALIGNAS_(64) uint8_t tensor_map[128];
  uint64_t base;                              /* address of element 0 */
  int64_t shape[WEFT_TENSOR_DESC_MAX_RANK];   /* elements per dimension, outermost first */
  int64_t strides[WEFT_TENSOR_DESC_MAX_RANK]; /* elements between neighbours per dimension */
} weft_tensor_desc;

#ifdef __cplusplus
} /* extern "C" */
static_assert(sizeof(weft_wait_error) == 64, "weft_wait_error layout");
static_assert(sizeof(weft_debug_error) == 64, "weft_debug_error layout");
static_assert(sizeof(weft_reserved) <= WEFT_RESERVED_BYTES, "reserved region");
static_assert(offsetof(weft_kernel_context, heap_base) == 40, "context layout");
static_assert(offsetof(weft_kernel_context, local_rank) == 40 + 8 * WEFT_MAX_RANKS &&
                  offsetof(weft_kernel_context, engine) == 56 + 8 * WEFT_MAX_RANKS,
              "context layout");
static_assert(sizeof(weft_tensor_desc) == 256 && offsetof(weft_tensor_desc, base) == 128,
              "tensor descriptor layout");
#else
_Static_assert(sizeof(weft_wait_error) == 64, "weft_wait_error layout");
_Static_assert(sizeof(weft_debug_error) == 64, "weft_debug_error layout");
_Static_assert(sizeof(weft_reserved) <= WEFT_RESERVED_BYTES, "reserved region");
_Static_assert(offsetof(weft_kernel_context, heap_base) == 40, "context layout");
_Static_assert(offsetof(weft_kernel_context, local_rank) == 40 + 8 * WEFT_MAX_RANKS &&
                   offsetof(weft_kernel_context, engine) == 56 + 8 * WEFT_MAX_RANKS,
               "context layout");
_Static_assert(sizeof(weft_tensor_desc) == 256 && offsetof(weft_tensor_desc, base) == 128,
               "tensor descriptor layout");
#endif

#endif /* WEFT_ABI_H */
