/*
 * Runtime tests. Each case runs in every rank started by weft-run (or alone
 * for the single-process cases): `runtime_test CASE [ARGS]`. A rank exits 0
 * when everything it checked held.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "gpu.h"
#include "internal.h"

static void clear_launcher_env(void);

static void init_host(size_t heap_size) {
  weft_init_options o = options_for(WEFT_BACKEND_HOST);
  o.heap_size = heap_size;
  init_ok(&o);
  CHECK(weft_context_backend(g_ctx) == WEFT_BACKEND_HOST);
}

static uint64_t offset_of(const void *p) {
  weft_kernel_context k;
  CHECK_OK(weft_get_kernel_context(g_ctx, &k));
  return (uint64_t)(uintptr_t)p - k.heap_base[g_rank];
}

/* Symmetric offsets, direct peer access, barrier, reuse after free. */
static int test_heap(void) {
  init_host(0);
  int n = weft_num_ranks(g_ctx);
  const char *ws = getenv("WEFT_WORLD_SIZE");
  CHECK(n == (ws ? atoi(ws) : 1));
  weft_kernel_context k;
  CHECK_OK(weft_get_kernel_context(g_ctx, &k));
  CHECK(k.rank == g_rank && k.num_ranks == n && k.abi_version == WEFT_ABI_VERSION);
  CHECK(k.heap_size == 256u << 20);
  const unsigned char *reserved = (const unsigned char *)(uintptr_t)k.heap_base[g_rank];
  for (size_t i = 0; i < WEFT_RESERVED_BYTES; ++i)
    CHECK(reserved[i] == 0);

  void *small, *page, *big;
  CHECK_OK(weft_malloc(g_ctx, 1, &small));
  CHECK_OK(weft_malloc(g_ctx, 4096, &page));
  CHECK_OK(weft_malloc(g_ctx, 100000, &big));
  CHECK(offset_of(small) >= WEFT_RESERVED_BYTES);
  CHECK(offset_of(small) % WEFT_HEAP_ALIGN == 0 && offset_of(page) % WEFT_HEAP_ALIGN == 0 &&
        offset_of(big) % WEFT_HEAP_ALIGN == 0);

  /* Every rank writes its offsets into slot [rank] of every peer's table. */
  uint64_t *table;
  CHECK_OK(weft_malloc(g_ctx, sizeof(uint64_t) * 4 * WEFT_MAX_RANKS, (void **)&table));
  uint64_t mine[4] = {offset_of(small), offset_of(page), offset_of(big), offset_of(table)};
  for (int peer = 0; peer < n; ++peer) {
    uint64_t *remote;
    CHECK_OK(weft_peer_ptr(g_ctx, table, peer, (void **)&remote));
    CHECK(remote == (uint64_t *)((char *)(uintptr_t)k.heap_base[peer] + mine[3]));
    memcpy(&remote[4 * g_rank], mine, sizeof mine);
    int64_t *data;
    CHECK_OK(weft_peer_ptr(g_ctx, big, peer, (void **)&data));
    data[g_rank] = (g_rank + 1) * 1000 + peer;
  }
  CHECK_OK(weft_barrier(g_ctx));
  for (int r = 0; r < n; ++r) {
    CHECK(memcmp(&table[4 * r], mine, sizeof mine) == 0);
    CHECK(((int64_t *)big)[r] == (r + 1) * 1000 + g_rank);
  }
  CHECK_OK(weft_barrier(g_ctx));

  void *p;
  CHECK_FAILS(weft_peer_ptr(g_ctx, big, n, &p), WEFT_ERROR_INVALID_ARGUMENT, "not a rank");
  CHECK_FAILS(weft_peer_ptr(g_ctx, &p, 0, &p), WEFT_ERROR_INVALID_ARGUMENT, "not in this rank");

  /* Host <-> heap copies and fills, and the ranges they refuse. */
  unsigned char out[100] = {0}, in[100];
  for (size_t i = 0; i < sizeof in; ++i)
    in[i] = (unsigned char)(i + g_rank);
  CHECK_OK(weft_memcpy(g_ctx, (char *)page + 7, in, sizeof in));
  CHECK(memcmp((char *)page + 7, in, sizeof in) == 0);
  CHECK_OK(weft_memset(g_ctx, (char *)page + 7, 0xab, 10));
  CHECK_OK(weft_memcpy(g_ctx, out, (char *)page + 7, sizeof out));
  for (size_t i = 0; i < sizeof out; ++i)
    CHECK(out[i] == (i < 10 ? 0xab : in[i]));
  CHECK_OK(weft_memcpy(g_ctx, NULL, NULL, 0));
  char *heap_end = (char *)(uintptr_t)k.heap_base[g_rank] + k.heap_size;
  CHECK_FAILS(weft_memcpy(g_ctx, out, in, sizeof in), WEFT_ERROR_INVALID_ARGUMENT,
              "neither of");
  CHECK_FAILS(weft_memcpy(g_ctx, page, big, 16), WEFT_ERROR_INVALID_ARGUMENT, "each of");
  CHECK_FAILS(weft_memcpy(g_ctx, heap_end - 8, in, 16), WEFT_ERROR_INVALID_ARGUMENT,
              "neither of");
  CHECK_FAILS(weft_memcpy(g_ctx, NULL, in, 16), WEFT_ERROR_INVALID_ARGUMENT, "dst is NULL");
  CHECK_FAILS(weft_memset(g_ctx, out, 0, 4), WEFT_ERROR_INVALID_ARGUMENT,
              "neither in this rank's symmetric heap");
  CHECK_FAILS(weft_memset(g_ctx, heap_end - 1, 0, 2), WEFT_ERROR_INVALID_ARGUMENT,
              "neither in this rank's symmetric heap");
  CHECK(weft_memcpy(NULL, page, in, 1) == WEFT_ERROR_INVALID_ARGUMENT &&
        strstr(weft_last_error(NULL), "ctx is NULL"));
  /* A stream-ordered fill: done once the stream is. */
  CHECK_OK(weft_memset_async(g_ctx, (char *)page + 20, 0x5c, 30, NULL));
  CHECK_OK(weft_synchronize(g_ctx));
  CHECK_OK(weft_memcpy(g_ctx, out, (char *)page + 7, sizeof out));
  for (size_t i = 0; i < sizeof out; ++i)
    CHECK(out[i] == (i < 10 ? 0xab : i >= 13 && i < 43 ? 0x5c : in[i]));
  CHECK_OK(weft_memset_async(g_ctx, NULL, 0, 0, NULL));
  CHECK_FAILS(weft_memset_async(g_ctx, NULL, 0, 4, NULL), WEFT_ERROR_INVALID_ARGUMENT,
              "ptr is NULL");
  CHECK(weft_memset_async(NULL, page, 0, 1, NULL) == WEFT_ERROR_INVALID_ARGUMENT &&
        strstr(weft_last_error(NULL), "ctx is NULL"));

  /* Local blocks: not collective (rank 0 asks for one more than the
   * others), outside the heap, reached by weft_memcpy / weft_memset. */
  void *own[2] = {NULL, NULL};
  for (int i = 0; i < (g_rank == 0 ? 2 : 1); ++i) {
    CHECK_OK(weft_malloc_local(g_ctx, i ? 0 : 100, &own[i]));
    CHECK(own[i] && (uintptr_t)own[i] % WEFT_HEAP_ALIGN == 0 &&
          offset_of(own[i]) >= k.heap_size);
  }
  CHECK_OK(weft_memcpy(g_ctx, own[0], in, 100));
  CHECK_OK(weft_memset(g_ctx, (char *)own[0] + 90, 0x7e, 10));
  CHECK_OK(weft_memcpy(g_ctx, out, own[0], 100));
  for (size_t i = 0; i < 100; ++i)
    CHECK(out[i] == (i < 90 ? in[i] : 0x7e));
  CHECK_FAILS(weft_memcpy(g_ctx, (char *)own[0] + 1, in, 100), WEFT_ERROR_INVALID_ARGUMENT,
              "neither");
  CHECK_FAILS(weft_memset(g_ctx, own[0], 0, 101), WEFT_ERROR_INVALID_ARGUMENT,
              "weft_malloc_local block");
  CHECK_FAILS(weft_malloc_local(g_ctx, 1, NULL), WEFT_ERROR_INVALID_ARGUMENT, "out is NULL");
  CHECK_FAILS(weft_free_local(g_ctx, page), WEFT_ERROR_INVALID_ARGUMENT,
              "not a live weft_malloc_local block");
  CHECK_OK(weft_free_local(g_ctx, own[0]));
  CHECK_FAILS(weft_free_local(g_ctx, own[0]), WEFT_ERROR_INVALID_ARGUMENT, "not a live");
  CHECK_FAILS(weft_memset(g_ctx, own[0], 0, 1), WEFT_ERROR_INVALID_ARGUMENT, "nor in");
  CHECK_OK(weft_free_local(g_ctx, NULL));
  /* Rank 0's own[1] is left for weft_finalize (ASan runs would report it). */

  /* The copy engine's puts (copies and releasing stores here): 64 bytes
   * into slot [rank] of every rank's `slots`, its flag there set from
   * this rank's epoch word; all of a call's puts are checked first. */
  unsigned char *slots;
  uint64_t *flags;
  CHECK_OK(weft_malloc(g_ctx, 64 * WEFT_MAX_RANKS + 8 * (WEFT_MAX_RANKS + 2), (void **)&slots));
  flags = (uint64_t *)(slots + 64 * WEFT_MAX_RANKS);
  uint64_t *epoch = flags + WEFT_MAX_RANKS;
  uint32_t *count = (uint32_t *)(epoch + 1);  /* weft_put_wait's */
  *epoch = 40 + (uint64_t)g_rank;
  *count = 5;  /* as a launch's counts would leave it */
  CHECK_OK(weft_barrier(g_ctx));
  weft_put puts[WEFT_MAX_RANKS + 1];
  for (int peer = 0; peer < n; ++peer)
    puts[peer] = (weft_put){slots + 64 * g_rank, in, 64, &flags[g_rank], epoch, peer};
  puts[n] = (weft_put){slots, in, 64, flags, epoch, n};  /* not a rank: nothing is made */
  CHECK_FAILS(weft_put_signal_async(g_ctx, puts, (size_t)n + 1), WEFT_ERROR_INVALID_ARGUMENT,
              "put ");
  CHECK_OK(weft_barrier(g_ctx));
  for (int r = 0; r < n; ++r)
    CHECK(flags[r] == 0);
  CHECK_OK(weft_barrier(g_ctx));  /* every rank has looked before any puts */
  CHECK_OK(weft_put_fork(g_ctx, NULL));
  CHECK_OK(weft_put_wait(g_ctx, count, 5));
  CHECK_OK(weft_put_signal_async(g_ctx, puts, (size_t)n));
  CHECK_OK(weft_put_join(g_ctx, NULL));
  CHECK_OK(weft_barrier(g_ctx));
  for (int r = 0; r < n; ++r) {
    CHECK(flags[r] == 40 + (uint64_t)r);
    for (int i = 0; i < 64; ++i)
      CHECK(slots[64 * r + i] == (unsigned char)(i + r));
  }
  weft_put bad = puts[0];
  bad.peer = -1;
  CHECK_FAILS(weft_put_signal_async(g_ctx, &bad, 1), WEFT_ERROR_INVALID_ARGUMENT,
              "put 0: peer -1 is not a rank of this node");
  bad = puts[0];
  bad.dst = heap_end - 8;
  CHECK_FAILS(weft_put_signal_async(g_ctx, &bad, 1), WEFT_ERROR_INVALID_ARGUMENT,
              "put 0: dst");
  bad = puts[0];
  bad.signal = (char *)flags + 4;
  CHECK_FAILS(weft_put_signal_async(g_ctx, &bad, 1), WEFT_ERROR_INVALID_ARGUMENT,
              "is not 8-byte aligned");
  bad = puts[0];
  bad.signal = out;
  CHECK_FAILS(weft_put_signal_async(g_ctx, &bad, 1), WEFT_ERROR_INVALID_ARGUMENT,
              "put 0: signal");
  bad = puts[0];
  bad.src = NULL;
  CHECK_FAILS(weft_put_signal_async(g_ctx, &bad, 1), WEFT_ERROR_INVALID_ARGUMENT,
              "put 0: src is NULL");
  CHECK_FAILS(weft_put_signal_async(g_ctx, NULL, 1), WEFT_ERROR_INVALID_ARGUMENT,
              "puts is NULL");
  CHECK_OK(weft_put_signal_async(g_ctx, NULL, 0));
  CHECK_FAILS(weft_put_wait(g_ctx, (char *)count + 2, 1), WEFT_ERROR_INVALID_ARGUMENT,
              "is not a 4-byte aligned address");
  CHECK_FAILS(weft_put_wait(g_ctx, count, 0), WEFT_ERROR_INVALID_ARGUMENT,
              "value 0 is not in 1 .. 2^31 - 1");
  CHECK_FAILS(weft_put_wait(g_ctx, count, 1u << 31), WEFT_ERROR_INVALID_ARGUMENT,
              "value 2147483648 is not in");
  CHECK(weft_put_wait(NULL, count, 1) == WEFT_ERROR_INVALID_ARGUMENT);
  CHECK(weft_put_fork(NULL, NULL) == WEFT_ERROR_INVALID_ARGUMENT &&
        weft_put_join(NULL, NULL) == WEFT_ERROR_INVALID_ARGUMENT);
  CHECK_OK(weft_free(g_ctx, slots));

  /* No graphs on the host backend (a kept call replays its launches). */
  weft_graph *graph = (weft_graph *)1;
  CHECK_FAILS(weft_graph_begin(g_ctx, NULL), WEFT_ERROR_UNSUPPORTED,
              "weft_graph_begin: the host backend has no graphs");
  CHECK_FAILS(weft_graph_end(g_ctx, NULL, &graph), WEFT_ERROR_UNSUPPORTED, "no graphs");
  CHECK(graph == NULL);
  CHECK(weft_graph_begin(NULL, NULL) == WEFT_ERROR_INVALID_ARGUMENT &&
        weft_graph_end(g_ctx, NULL, NULL) == WEFT_ERROR_INVALID_ARGUMENT &&
        weft_graph_launch(NULL, NULL) == WEFT_ERROR_INVALID_ARGUMENT &&
        weft_graph_destroy(NULL) == WEFT_ERROR_INVALID_ARGUMENT);


  /* First fit: freeing and asking again gives the same block back. */
  uint64_t page_offset = offset_of(page);
  CHECK_OK(weft_free(g_ctx, page));
  CHECK_OK(weft_malloc(g_ctx, 4000, &page));
  CHECK(offset_of(page) == page_offset);
  CHECK_OK(weft_free(g_ctx, NULL));
  CHECK_OK(weft_free(g_ctx, small));
  CHECK_OK(weft_free(g_ctx, page));
  CHECK_OK(weft_free(g_ctx, big));
  CHECK_OK(weft_free(g_ctx, table));
  CHECK_OK(weft_finalize(g_ctx));
  return 0;
}

/* Host kernels from a .so: peer writes through ctx->heap_base, residency,
 * device-wait timeout reporting. */
static int test_kernel(const char *so) {
  setenv("WEFT_WAIT_TIMEOUT", "2", 1);
  init_host(0);
  int n = weft_num_ranks(g_ctx);
  weft_module *m;
  weft_kernel *ring, *spin, *forever, *readctx, *again;
  CHECK_OK(weft_module_load_file(g_ctx, so, WEFT_MODULE_AUTO, &m));
  CHECK_OK(weft_module_get_kernel(m, "ring_write", &ring));
  CHECK_OK(weft_module_get_kernel(m, "ring_write", &again));
  CHECK(ring == again);
  CHECK_OK(weft_module_get_kernel(m, "spin_ring", &spin));
  CHECK_OK(weft_module_get_kernel(m, "wait_forever", &forever));
  CHECK_OK(weft_module_get_kernel(m, "read_context", &readctx));
  CHECK_FAILS(weft_module_get_kernel(m, "no_such_kernel", &again),
              WEFT_ERROR_NOT_FOUND, "no_such_kernel");

  const uint32_t gx = 8, gy = 2, programs = gx * gy;
  int64_t *table;
  CHECK_OK(weft_malloc(g_ctx, sizeof(int64_t) * programs * n, (void **)&table));
  int64_t base = 7000000;
  void *args[] = {&table, &base};
  weft_launch_config cfg = {{gx, gy, 0}, 0, 0, NULL, 0, {1, 1, 1}};
  CHECK_OK(weft_launch(ring, &cfg, args, 2));
  CHECK_OK(weft_barrier(g_ctx));
  for (int r = 0; r < n; ++r)
    for (uint32_t i = 0; i < programs; ++i)
      CHECK(table[r * programs + i] == base + r * 1000 + i);

  /* Early start is a hint the host backend launches plainly; unknown flags
   * are refused before anything runs. */
  weft_launch_config early = cfg;
  early.flags = WEFT_LAUNCH_EARLY_START;
  memset(table, 0, sizeof(int64_t) * programs * n);
  CHECK_OK(weft_barrier(g_ctx));
  CHECK_OK(weft_launch(ring, &early, args, 2));
  CHECK_OK(weft_barrier(g_ctx));
  for (int r = 0; r < n; ++r)
    for (uint32_t i = 0; i < programs; ++i)
      CHECK(table[r * programs + i] == base + r * 1000 + i);
  early.flags = 1u << 7;
  CHECK_FAILS(weft_launch(ring, &early, args, 2), WEFT_ERROR_INVALID_ARGUMENT,
              "weft_launch: unknown flags 0x80");

  int32_t *info;
  CHECK_OK(weft_malloc(g_ctx, 16, (void **)&info));
  void *info_args[] = {&info};
  weft_launch_config three = {{2, 3, 4}, 0, 0, NULL, 0, {1, 1, 1}};
  CHECK_OK(weft_launch(readctx, &three, info_args, 1));
  CHECK(info[0] == g_rank && info[1] == n && info[2] == (int32_t)WEFT_ABI_VERSION &&
        info[3] == 24);

  const uint32_t spinners = 64;
  uint64_t *flags;
  CHECK_OK(weft_malloc(g_ctx, sizeof(uint64_t) * 2 * spinners, (void **)&flags));
  memset(flags, 0, sizeof(uint64_t) * 2 * spinners);
  CHECK_OK(weft_barrier(g_ctx));
  weft_launch_config wide = {{spinners, 1, 1}, 0, 0, NULL, 0, {1, 1, 1}};
  for (uint64_t epoch = 1; epoch <= 3; ++epoch) {
    void *spin_args[] = {&flags, &epoch};
    CHECK_OK(weft_launch(spin, &wide, spin_args, 2));
  }
  CHECK_OK(weft_barrier(g_ctx));

  uint64_t *never;
  CHECK_OK(weft_malloc(g_ctx, sizeof(uint64_t), (void **)&never));
  *never = 0;
  void *never_args[] = {&never};
  char expect[128];
  snprintf(expect, sizeof expect, "wait timed out on rank %d, program (", g_rank);
  weft_launch_config two = {{2, 1, 1}, 0, 0, NULL, 0, {1, 1, 1}};
  CHECK_FAILS(weft_launch(forever, &two, never_args, 1), WEFT_ERROR_TIMEOUT, expect);
  snprintf(expect, sizeof expect, "flag at rank %d's heap offset 0x%llx, "
           "expected == 1, last seen 0", g_rank, (unsigned long long)offset_of(never));
  CHECK(strstr(weft_last_error(g_ctx), expect));
  /* A put's count that nothing raises times out as a device wait does. */
  CHECK_FAILS(weft_put_wait(g_ctx, never, 1), WEFT_ERROR_TIMEOUT,
              "is 0, short of 1, after the wait timeout");
  /* The record was reset: the next launch is clean. */
  CHECK_OK(weft_launch(ring, &cfg, args, 2));
  CHECK_OK(weft_synchronize(g_ctx));
  CHECK_OK(weft_module_unload(m));
  CHECK_OK(weft_finalize(g_ctx));
  return 0;
}

/* Every rank must get WEFT_ERROR_ASYMMETRIC, and the heap stays usable. */
static int test_asymmetric(void) {
  init_host(0);
  int n = weft_num_ranks(g_ctx);
  CHECK(n >= 2);
  void *p;
  CHECK_FAILS(weft_malloc(g_ctx, g_rank == 1 ? 8192 : 4096, &p), WEFT_ERROR_ASYMMETRIC,
              "weft_malloc: asymmetric call #1: rank 0 asked 4096 bytes, rank 1 asked "
              "8192 bytes");
  CHECK(p == NULL);
  void *a, *b;
  CHECK_OK(weft_malloc(g_ctx, 4096, &a));
  CHECK_OK(weft_malloc(g_ctx, 4096, &b));
  CHECK_FAILS(weft_free(g_ctx, g_rank == n - 1 ? b : a), WEFT_ERROR_ASYMMETRIC,
              "weft_free: asymmetric call #4");
  /* A different collective altogether: weft_barrier against weft_malloc. */
  weft_status st = g_rank == 1 ? weft_barrier(g_ctx) : weft_malloc(g_ctx, 64, &p);
  if (st != WEFT_ERROR_ASYMMETRIC || !strstr(weft_last_error(g_ctx), "disagree"))
    FAIL("barrier vs malloc -> %s: %s", weft_status_string(st), weft_last_error(g_ctx));
  CHECK_OK(weft_free(g_ctx, a));
  CHECK_OK(weft_free(g_ctx, b));
  CHECK_OK(weft_malloc(g_ctx, 4096, &p));
  CHECK(offset_of(p) == WEFT_RESERVED_BYTES);
  CHECK_OK(weft_barrier(g_ctx));
  CHECK_OK(weft_finalize(g_ctx));
  return 0;
}

/* Exhaustion, coalescing, double free, foreign and interior pointers. */
static int test_errors(void) {
  const size_t heap = 1u << 20, user = heap - WEFT_RESERVED_BYTES;
  init_host(heap);
  void *p, *blocks[4];
  CHECK_FAILS(weft_malloc(g_ctx, 2 * heap, &p), WEFT_ERROR_OUT_OF_MEMORY,
              "requested 2097152 bytes, largest free block 983040 bytes");
  for (int i = 0; i < 4; ++i)
    CHECK_OK(weft_malloc(g_ctx, user / 4, &blocks[i]));
  CHECK_FAILS(weft_malloc(g_ctx, 1, &p), WEFT_ERROR_OUT_OF_MEMORY,
              "largest free block 0 bytes");
  CHECK_OK(weft_free(g_ctx, blocks[1]));
  CHECK_OK(weft_free(g_ctx, blocks[2]));
  /* The two freed neighbours coalesced into one block. */
  CHECK_OK(weft_malloc(g_ctx, user / 2, &p));
  CHECK(p == blocks[1]);

  CHECK_FAILS(weft_free(g_ctx, blocks[2]), WEFT_ERROR_INVALID_ARGUMENT, "not at its start");
  CHECK_OK(weft_free(g_ctx, p));
  CHECK_FAILS(weft_free(g_ctx, p), WEFT_ERROR_INVALID_ARGUMENT, "double free");
  int on_stack;
  CHECK_FAILS(weft_free(g_ctx, &on_stack), WEFT_ERROR_INVALID_ARGUMENT,
              "not in this rank's symmetric heap");
  CHECK_FAILS(weft_free(g_ctx, (char *)blocks[0] + 256), WEFT_ERROR_INVALID_ARGUMENT,
              "not at its start");
  weft_kernel_context k;
  CHECK_OK(weft_get_kernel_context(g_ctx, &k));
  CHECK_FAILS(weft_free(g_ctx, (void *)(uintptr_t)(k.heap_base[g_rank] + 512)),
              WEFT_ERROR_INVALID_ARGUMENT, "reserved region");
  /* None of that disturbed the live blocks. */
  CHECK_OK(weft_free(g_ctx, blocks[0]));
  CHECK_OK(weft_free(g_ctx, blocks[3]));
  CHECK_OK(weft_malloc(g_ctx, user, &p));
  CHECK_OK(weft_free(g_ctx, p));

  CHECK_FAILS(weft_malloc(g_ctx, 64, NULL), WEFT_ERROR_INVALID_ARGUMENT, "out is NULL");
  CHECK_OK(weft_finalize(g_ctx));
  g_ctx = NULL;
  CHECK_FAILS(weft_malloc(NULL, 64, &p), WEFT_ERROR_INVALID_ARGUMENT, "ctx is NULL");
  return 0;
}

/* Rank `victim` leaves (mode "exit": _exit(0); "segv": SIGSEGV) after the
 * first barrier; every other rank must see WEFT_ERROR_PEER_LOST naming it. */
static int test_lost(const char *mode, int victim) {
  init_host(0);
  CHECK_OK(weft_barrier(g_ctx));
  if (g_rank == victim) {
    if (!strcmp(mode, "segv"))
      raise(SIGSEGV);
    _exit(0);
  }
  char name[32];
  snprintf(name, sizeof name, "lost rank %d", victim);
  weft_status st = WEFT_SUCCESS;
  for (int i = 0; i < 1000 && st == WEFT_SUCCESS; ++i)
    st = weft_barrier(g_ctx);
  if (st != WEFT_ERROR_PEER_LOST || !strstr(weft_last_error(g_ctx), name))
    FAIL("expected WEFT_ERROR_PEER_LOST naming rank %d, got %s: %s", victim,
         weft_status_string(st), weft_last_error(g_ctx));
  /* Every later call fails the same way instead of hanging. */
  void *p;
  CHECK_FAILS(weft_malloc(g_ctx, 64, &p), WEFT_ERROR_PEER_LOST, name);
  printf("rank %d: %s\n", g_rank, weft_last_error(g_ctx));
  weft_finalize(g_ctx);
  return 0;
}

/* Rank 1 fails; rank 0 ignores SIGTERM and sleeps: weft-run must kill it. */
static int test_stubborn(void) {
  init_host(0);
  CHECK_OK(weft_barrier(g_ctx));
  if (g_rank == 1)
    exit(3);
  signal(SIGTERM, SIG_IGN);
  for (;;)
    pause();
}

/* The same job under torchrun's variables, without WEFT_JOB_TOKEN: rank 0
 * makes the token and leaves it in the private directory. */
static int test_torchrun(void) {
  char rank[16], size[16], job[128];
  snprintf(rank, sizeof rank, "%s", getenv("WEFT_RANK"));
  snprintf(size, sizeof size, "%s", getenv("WEFT_WORLD_SIZE"));
  snprintf(job, sizeof job, "%s", getenv("WEFT_JOB_ID"));
  clear_launcher_env();
  setenv("RANK", rank, 1);
  setenv("WORLD_SIZE", size, 1);
  setenv("LOCAL_RANK", rank, 1);
  setenv("TORCHELASTIC_RUN_ID", job, 1);
  init_host(0);
  int n = weft_num_ranks(g_ctx);
  CHECK(g_rank == atoi(rank) && n == atoi(size));
  int *slot, *next;
  CHECK_OK(weft_malloc(g_ctx, sizeof *slot, (void **)&slot));
  CHECK_OK(weft_peer_ptr(g_ctx, slot, (g_rank + 1) % n, (void **)&next));
  *next = g_rank + 100;
  CHECK_OK(weft_barrier(g_ctx));
  CHECK(*slot == (g_rank + n - 1) % n + 100);
  CHECK_OK(weft_finalize(g_ctx));
  return 0;
}

/* Rank 0 interrupts weft-run, which must pass SIGINT on to every rank. */
static int test_interrupt(void) {
  init_host(0);
  CHECK_OK(weft_barrier(g_ctx));
  if (g_rank == 0)
    kill(getppid(), SIGINT);
  for (;;)
    pause();
}

/* Rank 1 presents a wrong job token: it is refused, and rank 0 says so. */
static int test_auth(void) {
  weft_init_options o = options_for(WEFT_BACKEND_HOST);
  o.timeout_s = 3;
  g_rank = env_rank();
  if (g_rank == 1)
    setenv("WEFT_JOB_TOKEN", "not-the-token", 1);
  weft_context *ctx = NULL;
  weft_status st = weft_init(&o, &ctx);
  if (g_rank >= 2)
    return 0; /* not a part of this test */
  if (st != WEFT_ERROR_AUTH || ctx)
    FAIL("expected WEFT_ERROR_AUTH, got %s: %s", weft_status_string(st),
         weft_last_error(NULL));
  CHECK(strstr(weft_last_error(NULL), g_rank == 0 ? "wrong job token" : "rejected rank 1"));
  printf("rank %d: %s\n", g_rank, weft_last_error(NULL));
  return 0;
}

static int test_grid(const char *so) {
  init_host(0);
  weft_module *m;
  CHECK_OK(weft_module_load_file(g_ctx, so, WEFT_MODULE_AUTO, &m));
  weft_kernel *k;
  CHECK_OK(weft_module_get_kernel(m, "ring_write", &k));
  weft_launch_config cfg = {{64, 32, 1}, 0, 0, NULL, 0, {1, 1, 1}};
  CHECK_FAILS(weft_launch(k, &cfg, NULL, 0), WEFT_ERROR_INVALID_ARGUMENT,
              "grid 64x32x1 = 2048 programs exceeds WEFT_HOST_MAX_PROGRAMS=1024");
  CHECK_FAILS(weft_launch(k, &cfg, NULL, 2), WEFT_ERROR_INVALID_ARGUMENT, "args is NULL");
  /* A resident launch is cut to the programs that run at once (every one,
   * on the host, up to the limit) and takes 1-D grids only. */
  weft_kernel *readctx;
  CHECK_OK(weft_module_get_kernel(m, "read_context", &readctx));
  int32_t *info;
  CHECK_OK(weft_malloc(g_ctx, 16, (void **)&info));
  void *info_args[] = {&info};
  weft_launch_config resident = {{5000, 1, 1}, 0, 0, NULL, WEFT_LAUNCH_RESIDENT,
                                 {1, 1, 1}};
  CHECK_OK(weft_launch(readctx, &resident, info_args, 1));
  CHECK(info[3] == 1024);
  resident.grid[0] = 3;
  CHECK_OK(weft_launch(readctx, &resident, info_args, 1));
  CHECK(info[3] == 3);
  /* In clusters: whole clusters of those that fit, and every grid whole
   * clusters. */
  weft_launch_config clustered = {{3000, 1, 1}, 0, 0, NULL, WEFT_LAUNCH_RESIDENT,
                                  {3, 1, 1}};
  CHECK_OK(weft_launch(readctx, &clustered, info_args, 1));
  CHECK(info[3] == 1023);
  clustered.grid[0] = 3001;
  CHECK_FAILS(weft_launch(readctx, &clustered, info_args, 1), WEFT_ERROR_INVALID_ARGUMENT,
              "grid 3001x1x1 is not a whole number of clusters of 3x1x1");
  clustered.flags = 0;
  clustered.grid[0] = 2;
  CHECK_FAILS(weft_launch(readctx, &clustered, info_args, 1), WEFT_ERROR_INVALID_ARGUMENT,
              "grid 2x1x1 is not a whole number of clusters of 3x1x1");
  resident.grid[1] = 2;
  CHECK_FAILS(weft_launch(readctx, &resident, info_args, 1), WEFT_ERROR_INVALID_ARGUMENT,
              "a resident launch takes a 1-D grid, not 3x2x1");
  CHECK_OK(weft_free(g_ctx, info));
  CHECK_OK(weft_finalize(g_ctx)); /* unloads m */
  return 0;
}

/* A GPU backend that works but shows this rank no GPU of its own (more
 * ranks than GPUs): weft_init must refuse, naming the device. */
static int fewer_gpus_than_ranks(weft_status st, const char *m) {
  return st == WEFT_ERROR_INVALID_ARGUMENT && strstr(m, "but this process sees");
}

/* The GPU backends on a machine without that GPU: weft_init fails cleanly
 * on every rank with a message naming the backend (where the GPU is there,
 * it succeeds, or refuses a rank beyond the GPU count), and the default
 * backend is cuda only where CUDA works. */
static int test_backends(void) {
  g_rank = env_rank();
  static const struct {
    weft_backend backend;
    const char *name;
    const weft_backend_ops *ops;
  } gpus[] = {{WEFT_BACKEND_CUDA, "cuda backend", &weft_backend_cuda},
              {WEFT_BACKEND_HIP, "hip backend", &weft_backend_hip}};
  for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; ++i) {
    weft_init_options o = options_for(gpus[i].backend);
    o.heap_size = 64u << 20;
    weft_context *ctx = NULL;
    weft_status st = weft_init(&o, &ctx);
    const char *m = weft_last_error(NULL);
    if (gpus[i].ops->available()) {
      if (fewer_gpus_than_ranks(st, m)) {
        printf("rank %d: %s\n", g_rank, m);
        continue;
      }
      if (st != WEFT_SUCCESS)
        FAIL("%s is available but weft_init failed: %s", gpus[i].name, m);
      CHECK_OK(weft_finalize(ctx));
      continue;
    }
    if ((st != WEFT_ERROR_UNSUPPORTED && st != WEFT_ERROR_BACKEND) || ctx ||
        !strstr(m, gpus[i].name))
      FAIL("%s: expected WEFT_ERROR_UNSUPPORTED or BACKEND naming it, got %s: %s",
           gpus[i].name, weft_status_string(st), m);
    printf("rank %d: %s\n", g_rank, m);
  }
  unsetenv("WEFT_BACKEND");
  weft_status st = weft_init(NULL, &g_ctx);
  if (weft_backend_cuda.available() && fewer_gpus_than_ranks(st, weft_last_error(NULL)))
    return 0; /* the default is cuda, which refused as above */
  CHECK_OK(st);
  CHECK(weft_context_backend(g_ctx) ==
        (weft_backend_cuda.available() ? WEFT_BACKEND_CUDA : WEFT_BACKEND_HOST));
  CHECK_OK(weft_barrier(g_ctx));
  CHECK_OK(weft_finalize(g_ctx));
  return 0;
}

/* gpu.c (the GPU backends' common part) on a fake driver: what each rank's
 * fake GPU looks like, set per scenario. */
static struct {
  int count;       /* devices this process sees */
  int same_bus;    /* every rank reports one bus id */
  int visible;     /* peers' GPUs are visible */
  int can_access;  /* peer access between every pair */
  int fail_open;   /* open_peer fails on this rank */
  int opened[WEFT_MAX_RANKS];
  /* The last launch: its function, parameters and block. */
  void *function;
  void **params;
  size_t num_params;
  unsigned block;
  int capturing;   /* the stream is being captured by someone */
  int capture_mode;
  int passed;      /* the GPU has passed a stream's mark */
  int marks;       /* marks recorded */
  char trace[512]; /* the puts' and graphs' driver calls, in order */
} fake;

static weft_status fake_ready(void) { return WEFT_SUCCESS; }

static weft_status fake_count(int *count) {
  *count = fake.count;
  return WEFT_SUCCESS;
}

static weft_status fake_open_device(weft_gpu *g) {
  g->device = 100 + g->ordinal;
  g->stream = (void *)0x5;
  g->copy_stream = (void *)0xc;
  snprintf(g->bus_id, sizeof g->bus_id, "0000:%02x:00.0",
           fake.same_bus ? 0x40 : 0x40 + g->ordinal);
  return WEFT_SUCCESS;
}

static int fake_by_bus_id(int *device, const char *bus_id) {
  unsigned bus = 0;
  sscanf(bus_id, "0000:%x:", &bus);
  *device = 100 + (int)bus - 0x40;
  return fake.visible;
}

static weft_status fake_can_access(int *can, int device, int peer) {
  CHECK(device == 100 + g_rank && peer >= 100 && peer != device);
  *can = fake.can_access;
  return WEFT_SUCCESS;
}

static weft_status fake_close(void *state) {
  free(state);
  return WEFT_SUCCESS;
}

static weft_status fake_open_peer(weft_gpu *g, int peer, const void *handle) {
  char want[24];
  snprintf(want, sizeof want, "handle-%d", peer);
  CHECK(peer != g->rank && !strcmp(handle, want));
  fake.opened[peer] = 1;
  return fake.fail_open ? weft_fail(WEFT_ERROR_BACKEND, "fake backend: cannot "
                                    "open rank %d's handle", peer)
                        : WEFT_SUCCESS;
}

static weft_status fake_enter(weft_gpu *g) {
  CHECK(g->device == 100 + g_rank);
  return WEFT_SUCCESS;
}

/* Copies the parameters out: gpu.c frees them after the launch. */
static weft_status fake_launch_kernel(weft_gpu *g, void *function,
                                      const weft_launch_config *config,
                                      void **params, unsigned block) {
  CHECK(g->device == 100 + g_rank && config->grid[0] == 1);
  fake.function = function;
  memcpy(fake.params, params, (fake.num_params + 1) * sizeof *params);
  fake.block = block;
  return WEFT_SUCCESS;
}

/* The puts' driver calls, appended to fake.trace by the streams' and
 * copies' last hex digit. */
static void trace(const char *fmt, ...) {
  size_t used = strlen(fake.trace);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(fake.trace + used, sizeof fake.trace - used, fmt, ap);
  va_end(ap);
}

static weft_status fake_stream_after(weft_gpu *g, void *stream, void *after) {
  (void)g;
  trace("after(%lx,%lx) ", (unsigned long)(uintptr_t)stream, (unsigned long)(uintptr_t)after);
  return WEFT_SUCCESS;
}

static weft_status fake_copy_device(weft_gpu *g, void *dst, const void *src, size_t n,
                                    void *stream) {
  (void)g;
  trace("copy(%lx,%lx,%zu,%lx) ", (unsigned long)(uintptr_t)dst,
        (unsigned long)(uintptr_t)src, n, (unsigned long)(uintptr_t)stream);
  return WEFT_SUCCESS;
}

static weft_status fake_capturing(weft_gpu *g, void *stream, int *capturing) {
  (void)g;
  trace("capturing(%lx) ", (unsigned long)(uintptr_t)stream);
  *capturing = fake.capturing;
  return WEFT_SUCCESS;
}

static weft_status fake_capture_begin(weft_gpu *g, void *stream) {
  (void)g;
  trace("begin(%lx) ", (unsigned long)(uintptr_t)stream);
  return WEFT_SUCCESS;
}

static weft_status fake_capture_end(weft_gpu *g, void *stream, void **exec) {
  (void)g;
  trace("end(%lx) ", (unsigned long)(uintptr_t)stream);
  *exec = (void *)0xe;
  return WEFT_SUCCESS;
}

static weft_status fake_graph_launch(weft_gpu *g, void *exec, void *stream) {
  (void)g;
  trace("launch(%lx,%lx) ", (unsigned long)(uintptr_t)exec, (unsigned long)(uintptr_t)stream);
  return WEFT_SUCCESS;
}

static weft_status fake_graph_destroy(weft_gpu *g, void *exec) {
  (void)g;
  trace("destroy(%lx) ", (unsigned long)(uintptr_t)exec);
  return WEFT_SUCCESS;
}

static weft_status fake_exchange_mode(int *mode) {
  int was = fake.capture_mode;
  fake.capture_mode = *mode;
  *mode = was;
  return WEFT_SUCCESS;
}

static weft_status fake_kernel_graph_make(weft_gpu *g, weft_gpu_kernel_graph *k,
                                          void **params) {
  (void)g, (void)params;
  trace("make(mode %d) ", fake.capture_mode);
  k->graph = (void *)0xa, k->exec = (void *)0xe, k->node = (void *)0xb;
  return WEFT_SUCCESS;
}

/* Copies the parameters out, as fake_launch_kernel. */
static weft_status fake_kernel_graph_launch(weft_gpu *g, const weft_gpu_kernel_graph *k,
                                            void **params) {
  (void)g;
  trace("set+launch(%lx,%lx) ", (unsigned long)(uintptr_t)k->exec,
        (unsigned long)(uintptr_t)k->stream);
  memcpy(fake.params, params, (fake.num_params + 1) * sizeof *params);
  return WEFT_SUCCESS;
}

/* Every parameter a pointer's but the last, the kernel context. */
static int fake_param_sizes(void *function, size_t count, size_t *sizes) {
  (void)function;
  for (size_t i = 0; i < count; ++i)
    sizes[i] = i + 1 < count ? sizeof(void *) : sizeof(weft_kernel_context);
  return 1;
}

static weft_status fake_kernel_graph_destroy(weft_gpu *g, weft_gpu_kernel_graph *k) {
  (void)g;
  trace("free(%lx) ", (unsigned long)(uintptr_t)k->exec);
  return WEFT_SUCCESS;
}

static weft_status fake_mark(weft_gpu *g, void *stream, void **mark) {
  (void)g;
  CHECK(stream == (void *)0x9 && (!*mark || *mark == (void *)0x3));
  ++fake.marks;
  *mark = (void *)0x3;
  return WEFT_SUCCESS;
}

static weft_status fake_mark_passed(weft_gpu *g, void *mark, int *passed) {
  (void)g, (void)mark;
  *passed = fake.passed;
  return WEFT_SUCCESS;
}

static weft_status fake_mark_destroy(weft_gpu *g, void *mark) {
  (void)g;
  trace("unmark(%lx) ", (unsigned long)(uintptr_t)mark);
  return WEFT_SUCCESS;
}

static const weft_backend_ops fake_backend = {
    .name = "fake", .warp_size = 16, .close = fake_close};
static const weft_gpu_ops fake_ops = {
    .backend = &fake_backend,
    .interconnect = "FakeLink",
    .visible_devices = "FAKE_VISIBLE_DEVICES",
    .state_size = sizeof(weft_gpu),
    .ready = fake_ready,
    .device_count = fake_count,
    .open_device = fake_open_device,
    .device_by_bus_id = fake_by_bus_id,
    .can_access_peer = fake_can_access,
    .enter = fake_enter,
    .stream_after = fake_stream_after,
    .copy_device_async = fake_copy_device,
    .launch_kernel = fake_launch_kernel,
    .capturing = fake_capturing,
    .capture_begin = fake_capture_begin,
    .capture_end = fake_capture_end,
    .graph_launch = fake_graph_launch,
    .graph_destroy = fake_graph_destroy,
    .exchange_capture_mode = fake_exchange_mode,
    .relaxed_capture = 2,
    .kernel_graph_make = fake_kernel_graph_make,
    .kernel_graph_launch = fake_kernel_graph_launch,
    .kernel_graph_destroy = fake_kernel_graph_destroy,
    .param_sizes = fake_param_sizes,
    .mark = fake_mark,
    .mark_passed = fake_mark_passed,
    .mark_destroy = fake_mark_destroy,
};

/* weft_gpu_open on every rank (device = rank unless given): want and, on
 * failure, the message; returns the state on success. */
static weft_gpu *fake_open(weft_bootstrap *bs, int device, weft_status want,
                           const char *text) {
  weft_env_info env;
  CHECK_OK(weft_env_detect(&env));
  weft_backend_params params = {env.rank, env.world_size, env.local_rank, device, bs,
                                bs, env.world_size, 1, NULL};
  void *state = (void *)1;
  CHECK_FAILS(weft_gpu_open(&fake_ops, &params, &state), want, text);
  CHECK((state != NULL) == (want == WEFT_SUCCESS));
  return state;
}

/* Every rank of 2 or more: the peer checks, the handle exchange and the
 * launch parameters of gpu.c, with their messages. */
static int test_gpu_common(void) {
  weft_env_info env;
  CHECK_OK(weft_env_detect(&env));
  g_rank = env.rank;
  int n = env.world_size, other = g_rank == 0 ? 1 : 0;
  CHECK(n >= 2);
  weft_bootstrap_config bc = {env.rank, n, env.job_id, 30, 30, NULL};
  weft_bootstrap *bs;
  CHECK_OK(weft_bootstrap_open(&bc, &bs));
  char text[256];

  fake.count = n;
  fake.visible = fake.can_access = 1;
  weft_gpu *g = fake_open(bs, g_rank, WEFT_SUCCESS, "");
  CHECK(g->rank == g_rank && g->num_ranks == n && g->device == 100 + g_rank);
  CHECK(g->graph_launches); /* one-launch graphs are on unless WEFT_KERNEL_GRAPHS=0 */
  g->graph_launches = 0;    /* until their own part below */

  /* The IPC-handle exchange: every peer's handle reaches open_peer. */
  char handle[24];
  snprintf(handle, sizeof handle, "handle-%d", g_rank);
  CHECK_OK(weft_gpu_share_handles(g, WEFT_SUCCESS, handle, sizeof handle,
                                  fake_open_peer));
  for (int r = 0; r < n; ++r)
    CHECK(fake.opened[r] == (r != g_rank));
  /* A rank that fails to open a peer's handle fails the step everywhere. */
  fake.fail_open = g_rank == n - 1;
  if (g_rank == n - 1)
    snprintf(text, sizeof text, "fake backend: cannot open rank 0's handle");
  else
    snprintf(text, sizeof text, "rank %d: fake backend: cannot open rank 0's "
             "handle", n - 1);
  CHECK_FAILS(weft_gpu_share_handles(g, WEFT_SUCCESS, handle, sizeof handle,
                                     fake_open_peer), WEFT_ERROR_BACKEND, text);
  fake.fail_open = 0;
  /* So does one whose own memory failed, before any handle is opened. */
  memset(fake.opened, 0, sizeof fake.opened);
  weft_status mine = g_rank == 0 ? weft_fail(WEFT_ERROR_OUT_OF_MEMORY,
                                             "fake backend: no memory")
                                 : WEFT_SUCCESS;
  CHECK_FAILS(weft_gpu_share_handles(g, mine, handle, sizeof handle,
                                     fake_open_peer), WEFT_ERROR_OUT_OF_MEMORY,
              g_rank == 0 ? "fake backend: no memory"
                          : "rank 0: fake backend: no memory");
  for (int r = 0; r < n; ++r)
    CHECK(!fake.opened[r]);

  /* Launch parameters: args, then the context, on the stack or, past
   * WEFT_GPU_STACK_ARGS, the heap; four warps unless config says. */
  weft_kernel_context kctx = {0};
  void *args[40], *seen[41];
  for (int i = 0; i < 40; ++i)
    args[i] = &args[i];
  fake.params = seen;
  for (size_t count = 2; count <= 40; count += 38) {
    weft_launch_config config = {{1, 1, 1}, 0, 0, NULL, 0, {1, 1, 1}};
    fake.num_params = count;
    CHECK_OK(weft_gpu_launch(g, &kctx, &config, args, count, &kctx));
    CHECK(fake.function == &kctx && fake.block == 64 && seen[count] == &kctx);
    for (size_t i = 0; i < count; ++i)
      CHECK(seen[i] == args[i]);
    config.num_threads = 96;
    CHECK_OK(weft_gpu_launch(g, &kctx, &config, args, count, &kctx));
    CHECK(fake.block == 96);
  }

  /* One-launch graphs (the launches above were eager): the second launch
   * alike makes the graph (in relaxed capture mode) and launches it, the
   * next sets its own arguments and launches it, one with the same
   * arguments as the last only launches it; the same launch on
   * another stream takes the slot (freeing that graph) and launches
   * eagerly; so does a launch onto a stream being captured. Freeing them
   * all frees what was made, once. */
  g->graph_launches = 1;
  weft_launch_config one = {{1, 1, 1}, 0, 0, NULL, 0, {1, 1, 1}};
  fake.num_params = 2;
  fake.trace[0] = '\0';
  for (int i = 0; i < 3; ++i) {
    fake.function = NULL;
    CHECK_OK(weft_gpu_launch(g, &kctx, &one, args + i, 2, &kctx));
    CHECK((fake.function == &kctx) == (i == 0));
    CHECK(seen[0] == args[i] && seen[1] == args[i + 1] && seen[2] == &kctx);
  }
  CHECK(!strcmp(fake.trace, "capturing(5) capturing(5) make(mode 2) set+launch(e,5) "
                            "capturing(5) set+launch(e,5) "));
  CHECK(fake.capture_mode == 0);
  fake.trace[0] = '\0';
  CHECK_OK(weft_gpu_launch(g, &kctx, &one, args + 2, 2, &kctx));
  kctx.rank = 1; /* the context is an argument too */
  CHECK_OK(weft_gpu_launch(g, &kctx, &one, args + 2, 2, &kctx));
  CHECK_OK(weft_gpu_launch(g, &kctx, &one, args + 2, 2, &kctx));
  CHECK_OK(weft_gpu_launch(g, &kctx, &one, args + 1, 2, &kctx));
  CHECK(seen[0] == args[1] && seen[1] == args[2] && seen[2] == &kctx);
  CHECK(!strcmp(fake.trace, "capturing(5) launch(e,5) capturing(5) set+launch(e,5) "
                            "capturing(5) launch(e,5) capturing(5) set+launch(e,5) "));
  fake.trace[0] = '\0';
  one.stream = (void *)0x7;
  CHECK_OK(weft_gpu_launch(g, &kctx, &one, args, 2, &kctx));
  CHECK_OK(weft_gpu_launch(g, &kctx, &one, args, 2, &kctx));
  CHECK(!strcmp(fake.trace, "capturing(7) free(e) capturing(7) make(mode 2) "
                            "set+launch(e,7) "));
  fake.trace[0] = '\0';
  fake.capturing = 1;
  fake.function = NULL;
  CHECK_OK(weft_gpu_launch(g, &kctx, &one, args, 2, &kctx));
  CHECK(fake.function == &kctx);
  fake.capturing = 0;
  weft_gpu_kernel_graphs_free(g);
  weft_gpu_kernel_graphs_free(g);
  CHECK(!strcmp(fake.trace, "capturing(7) free(e) "));
  /* The pace: every 8th launch onto a stream marks it; a mark the GPU has
   * not passed by the next sends launches eager until one is passed. Of
   * 24 launches alike on a new stream, the 1st is eager (it claims the
   * slot), the 16th finds the 8th's mark not passed, so the 16th-23rd are
   * eager, and the 24th finds the 16th's passed. */
  fake.trace[0] = '\0';
  one.stream = (void *)0x9;
  int eager = 0;
  for (int i = 1; i <= 24; ++i) {
    fake.passed = i > 16;
    fake.function = NULL;
    CHECK_OK(weft_gpu_launch(g, &kctx, &one, args, 2, &kctx));
    eager += fake.function != NULL;
    CHECK((fake.function != NULL) == (i == 1 || (i >= 16 && i < 24)));
  }
  CHECK(eager == 9 && fake.marks == 3);
  fake.trace[0] = '\0';
  weft_gpu_paces_free(g);
  CHECK(!strcmp(fake.trace, "unmark(3) "));
  weft_gpu_kernel_graphs_free(g);
  g->graph_launches = 0;

  /* The copy engine's puts: the copy stream after the fork's stream (the
   * backend's own for NULL), each signal after its bytes (none for an
   * empty put), the join's stream after the copy stream. */
  fake.trace[0] = '\0';
  const weft_put puts[] = {{(void *)0xd1, (void *)0x51, 64, (void *)0xf1, (void *)0xe1, 1},
                           {(void *)0xd2, (void *)0x52, 0, (void *)0xf2, (void *)0xe2, 1}};
  CHECK_OK(weft_gpu_put_fork(g, (void *)0x7));
  CHECK_OK(weft_gpu_put_signal(g, puts, 2));
  CHECK_OK(weft_gpu_put_join(g, NULL));
  CHECK(!strcmp(fake.trace, "after(c,7) copy(d1,51,64,c) copy(f1,e1,8,c) copy(f2,e2,8,c) "
                            "after(5,c) "));

  /* Graphs: a capture of the given stream (the backend's own for NULL),
   * refused where the stream is being captured already. */
  void *exec = NULL;
  fake.trace[0] = '\0';
  CHECK_OK(weft_gpu_graph_begin(g, NULL));
  CHECK_OK(weft_gpu_graph_end(g, NULL, &exec));
  CHECK_OK(weft_gpu_graph_launch(g, exec, (void *)0x7));
  CHECK_OK(weft_gpu_graph_destroy(g, exec));
  CHECK(!strcmp(fake.trace, "capturing(5) begin(5) end(5) capturing(7) launch(e,7) "
                            "destroy(e) "));
  fake.capturing = 1;
  CHECK_FAILS(weft_gpu_graph_begin(g, (void *)0x7), WEFT_ERROR_UNSUPPORTED,
              "fake: the stream is being captured (its graph records the launches "
              "themselves)");
  CHECK_FAILS(weft_gpu_graph_launch(g, exec, NULL), WEFT_ERROR_UNSUPPORTED,
              "is being captured");
  fake.capturing = 0;
  CHECK_OK(fake_close(g));

  /* Two ranks on one GPU, both named (each rank's first peer: `other`). */
  fake.same_bus = 1;
  snprintf(text, sizeof text, "fake backend: ranks 0 and %d both use the GPU "
           "at PCI 0000:40:00.0: each rank needs a GPU of its own (set "
           "opts->device or start at most one rank per GPU)",
           g_rank == 0 ? 1 : g_rank);
  fake_open(bs, g_rank, WEFT_ERROR_INVALID_ARGUMENT, text);
  fake.same_bus = 0;

  /* A peer's GPU this process cannot see. */
  fake.visible = 0;
  snprintf(text, sizeof text, "fake backend: rank %d's GPU (PCI 0000:%02x:00.0) "
           "is not visible to rank %d, so they cannot map each other's heaps "
           "(give every rank the same FAKE_VISIBLE_DEVICES)", other,
           0x40 + other, g_rank);
  fake_open(bs, g_rank, WEFT_ERROR_UNSUPPORTED, text);
  fake.visible = 1;

  /* No peer access. */
  fake.can_access = 0;
  snprintf(text, sizeof text, "fake backend: no peer access from rank %d's GPU "
           "%d (PCI 0000:%02x:00.0) to rank %d's GPU %d (PCI 0000:%02x:00.0): "
           "the symmetric heap needs FakeLink or PCIe P2P between every pair",
           g_rank, g_rank, 0x40 + g_rank, other, other, 0x40 + other);
  fake_open(bs, g_rank, WEFT_ERROR_UNSUPPORTED, text);
  fake.can_access = 1;

  /* A device out of range on the last rank fails every rank with its
   * message. */
  int last = n - 1;
  char own[200];
  snprintf(own, sizeof own, "fake backend: rank %d wants device %d, but this "
           "process sees %d devices (the device is the local rank unless "
           "opts->device says otherwise)", last, n + 3, n);
  if (g_rank == last)
    snprintf(text, sizeof text, "%s", own);
  else
    snprintf(text, sizeof text, "rank %d: %s", last, own);
  fake_open(bs, g_rank == last ? n + 3 : g_rank, WEFT_ERROR_INVALID_ARGUMENT,
            text);

  /* The bootstrap is still in step: a payload goes round. */
  int32_t ranks[WEFT_MAX_RANKS], me = g_rank * 7;
  CHECK_OK(weft_bootstrap_agree(bs, WEFT_SUCCESS, &me, sizeof me, ranks));
  for (int r = 0; r < n; ++r)
    CHECK(ranks[r] == r * 7);
  weft_bootstrap_close(bs);
  return 0;
}

static void clear_launcher_env(void) {
  static const char *const vars[] = {
      "WEFT_RANK", "WEFT_WORLD_SIZE", "WEFT_LOCAL_RANK", "WEFT_JOB_ID", "WEFT_JOB_TOKEN",
      "RANK", "WORLD_SIZE", "LOCAL_RANK", "TORCHELASTIC_RUN_ID", "MASTER_ADDR",
      "MASTER_PORT", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
      "OMPI_COMM_WORLD_LOCAL_RANK", "PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid",
      "OMPI_MCA_orte_ess_jobid", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID",
      "SLURM_JOB_ID", "SLURM_STEP_ID", "WEFT_BACKEND", "WEFT_HEAP_SIZE",
      "WEFT_LOCAL_SIZE", "LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE",
      "SLURM_NTASKS_PER_NODE", "SLURM_TASKS_PER_NODE", "WEFT_BOOTSTRAP_ADDR"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; ++i)
    unsetenv(vars[i]);
}

/* Sets the space-separated NAME=value assignments in the environment. */
static void set_env(const char *assignments) {
  char buf[512], *save = NULL;
  snprintf(buf, sizeof buf, "%s", assignments);
  for (char *a = strtok_r(buf, " ", &save); a; a = strtok_r(NULL, " ", &save)) {
    char *eq = strchr(a, '=');
    CHECK(eq != NULL);
    *eq = 0;
    setenv(a, eq + 1, 1);
  }
}

/* After set_env(assignments), the launcher environment reads as given. */
static void check_env(const char *assignments, int rank, int size, int local,
                      const char *job_id, const char *launcher) {
  set_env(assignments);
  weft_env_info e;
  CHECK_OK(weft_env_detect(&e));
  if (e.rank != rank || e.world_size != size || e.local_rank != local ||
      strcmp(e.job_id, job_id) || strcmp(e.launcher, launcher))
    FAIL("env: got rank %d size %d local %d job '%s' via %s; expected %d %d %d '%s' via %s",
         e.rank, e.world_size, e.local_rank, e.job_id, e.launcher, rank, size, local,
         job_id, launcher);
}

/* Unit test of the launcher-environment parser and the size parser. */
static int test_env(void) {
  clear_launcher_env();
  weft_env_info e;
  CHECK_OK(weft_env_detect(&e));
  CHECK(e.rank == 0 && e.world_size == 1 && e.job_id_defaulted && !strcmp(e.launcher, "none"));

  check_env("RANK=3 WORLD_SIZE=8 LOCAL_RANK=1 MASTER_ADDR=node7 MASTER_PORT=29500",
            3, 8, 1, "torchrun-node7:29500", "torchrun");
  check_env("TORCHELASTIC_RUN_ID=abc", 3, 8, 1, "torchrun-abc", "torchrun");
  /* torchrun inside a Slurm allocation: torchrun's variables win. */
  check_env("SLURM_PROCID=0 SLURM_NTASKS=2 SLURM_JOB_ID=991", 3, 8, 1,
            "torchrun-abc", "torchrun");
  clear_launcher_env();

  check_env("OMPI_COMM_WORLD_RANK=5 OMPI_COMM_WORLD_SIZE=6 "
            "OMPI_COMM_WORLD_LOCAL_RANK=2 OMPI_MCA_ess_base_jobid=4242",
            5, 6, 2, "openmpi-4242", "openmpi");
  check_env("PMIX_NAMESPACE=prterun-x-1@1", 5, 6, 2, "openmpi-prterun-x-1@1",
            "openmpi");
  clear_launcher_env();

  check_env("SLURM_PROCID=7 SLURM_NTASKS=16 SLURM_LOCALID=3 SLURM_JOB_ID=12345 "
            "SLURM_STEP_ID=2", 7, 16, 3, "slurm-12345:2", "slurm");
  /* weft-run's variables win over everything, WEFT_JOB_ID names any job. */
  check_env("WEFT_RANK=1 WEFT_WORLD_SIZE=2 WEFT_JOB_ID=job-x", 1, 2, 1, "job-x",
            "weft");
  clear_launcher_env();

  /* Ranks per node: WEFT_LOCAL_SIZE, else the launcher's count of a
   * host's ranks, else the whole job; it must divide the job. */
  static const struct { const char *env; int local_size; } layouts[] = {
      {"WEFT_RANK=1 WEFT_WORLD_SIZE=4 WEFT_JOB_ID=j", 4},
      {"WEFT_RANK=1 WEFT_WORLD_SIZE=4 WEFT_JOB_ID=j WEFT_LOCAL_SIZE=2", 2},
      {"RANK=1 WORLD_SIZE=8 LOCAL_WORLD_SIZE=4 TORCHELASTIC_RUN_ID=t", 4},
      {"RANK=1 WORLD_SIZE=8 LOCAL_WORLD_SIZE=4 TORCHELASTIC_RUN_ID=t WEFT_LOCAL_SIZE=8", 8},
      {"SLURM_PROCID=3 SLURM_NTASKS=6 SLURM_JOB_ID=1 SLURM_TASKS_PER_NODE=2(x3)", 2},
      {"SLURM_PROCID=3 SLURM_NTASKS=6 SLURM_JOB_ID=1 SLURM_TASKS_PER_NODE=2(x3) "
       "SLURM_NTASKS_PER_NODE=3", 3},
      {"OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=4 OMPI_MCA_ess_base_jobid=9 "
       "OMPI_COMM_WORLD_LOCAL_SIZE=1", 1}};
  for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; ++i) {
    clear_launcher_env();
    set_env(layouts[i].env);
    CHECK_OK(weft_env_detect(&e));
    if (e.local_size != layouts[i].local_size)
      FAIL("env '%s': %d ranks per node, expected %d", layouts[i].env, e.local_size,
           layouts[i].local_size);
  }
  clear_launcher_env();
  set_env("WEFT_RANK=0 WEFT_WORLD_SIZE=4 WEFT_JOB_ID=j WEFT_LOCAL_SIZE=3");
  CHECK_FAILS(weft_env_detect(&e), WEFT_ERROR_BOOTSTRAP,
              "WEFT_LOCAL_SIZE=3 does not divide the job's 4 ranks");
  set_env("WEFT_LOCAL_SIZE=0");
  CHECK_FAILS(weft_env_detect(&e), WEFT_ERROR_BOOTSTRAP, "not a positive number");
  clear_launcher_env();
  set_env("SLURM_PROCID=0 SLURM_NTASKS=3 SLURM_JOB_ID=1 SLURM_TASKS_PER_NODE=2,1");
  CHECK_FAILS(weft_env_detect(&e), WEFT_ERROR_BOOTSTRAP, "SLURM_TASKS_PER_NODE='2,1'");
  clear_launcher_env();

  /* A local rank defaults to the rank. */
  check_env("WEFT_RANK=1 WEFT_WORLD_SIZE=4 WEFT_JOB_ID=j", 1, 4, 1, "j", "weft");
  /* Malformed or incomplete environments are errors, not guesses. */
  set_env("WEFT_RANK=4");
  CHECK_FAILS(weft_env_detect(&e), WEFT_ERROR_BOOTSTRAP, "out of range");
  set_env("WEFT_RANK=x");
  CHECK_FAILS(weft_env_detect(&e), WEFT_ERROR_BOOTSTRAP, "WEFT_RANK='x'");
  unsetenv("WEFT_RANK");
  CHECK_FAILS(weft_env_detect(&e), WEFT_ERROR_BOOTSTRAP, "must both be set");
  clear_launcher_env();
  set_env("RANK=0 WORLD_SIZE=2");
  CHECK_FAILS(weft_env_detect(&e), WEFT_ERROR_BOOTSTRAP, "no job id");
  clear_launcher_env();

  static const struct { const char *text; size_t bytes; } sizes[] = {
      {"4096", 4096}, {"64K", 64u << 10}, {"256M", 256u << 20}, {"1G", 1u << 30},
      {"2GiB", (size_t)2 << 30}, {"3mb", 3u << 20}, {"1T", (size_t)1 << 40}};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
    size_t v = 0;
    CHECK_OK(weft_parse_size(sizes[i].text, &v));
    CHECK(v == sizes[i].bytes);
  }
  static const char *const bad[] = {"", "-1", "12Q", "M", "1.5G", "99999999999999999999G"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    size_t v;
    CHECK_FAILS(weft_parse_size(bad[i], &v), WEFT_ERROR_INVALID_ARGUMENT, "bad size");
  }

  /* The heap size comes from WEFT_HEAP_SIZE unless the options give one. */
  setenv("WEFT_HEAP_SIZE", "3M", 1);
  weft_init_options o = options_for(WEFT_BACKEND_HOST);
  CHECK_OK(weft_init(&o, &g_ctx));
  weft_kernel_context k;
  CHECK_OK(weft_get_kernel_context(g_ctx, &k));
  CHECK(k.heap_size == 3u << 20 && k.num_ranks == 1 && k.wait_timeout_ns == 0);
  CHECK_OK(weft_finalize(g_ctx));
  setenv("WEFT_HEAP_SIZE", "lots", 1);
  CHECK_FAILS(weft_init(&o, &g_ctx), WEFT_ERROR_INVALID_ARGUMENT, "WEFT_HEAP_SIZE");
  CHECK(g_ctx == NULL);
  o.heap_size = 2u << 20;
  CHECK_OK(weft_init(&o, &g_ctx));
  CHECK_OK(weft_get_kernel_context(g_ctx, &k));
  CHECK(k.heap_size == 2u << 20);
  CHECK_OK(weft_finalize(g_ctx));
  g_ctx = NULL;
  unsetenv("WEFT_HEAP_SIZE");
  setenv("WEFT_BACKEND", "tpu", 1);
  CHECK_FAILS(weft_init(NULL, &g_ctx), WEFT_ERROR_INVALID_ARGUMENT, "WEFT_BACKEND='tpu'");
  setenv("WEFT_BACKEND", "hip", 1);
  weft_status st = weft_init(NULL, &g_ctx);
  CHECK(st != WEFT_SUCCESS && g_ctx == NULL); /* no AMD GPU anywhere */
  unsetenv("WEFT_BACKEND");
  o.heap_size = 0;
  o.world_size = 2;
  o.rank = 0;
  CHECK_FAILS(weft_init(&o, &g_ctx), WEFT_ERROR_BOOTSTRAP, "no job id");
  CHECK(strcmp(weft_status_string(WEFT_ERROR_AUTH), "WEFT_ERROR_AUTH") == 0);
  return 0;
}

/* A process with no launcher environment is rank 0 of 1. */
static int test_single(void) {
  clear_launcher_env();
  setenv("WEFT_BACKEND", "host", 1);
  CHECK_OK(weft_init(NULL, &g_ctx));
  g_rank = 0;
  CHECK(weft_rank(g_ctx) == 0 && weft_num_ranks(g_ctx) == 1 && weft_local_rank(g_ctx) == 0);
  void *p, *q;
  CHECK_OK(weft_malloc(g_ctx, 1 << 20, &p));
  CHECK_OK(weft_peer_ptr(g_ctx, p, 0, &q));
  CHECK(p == q);
  memset(p, 0xab, 1 << 20);
  CHECK_OK(weft_barrier(g_ctx));
  CHECK_OK(weft_finalize(g_ctx));
  return 0;
}

/* Module format detection from the image, and refusal of foreign formats. */
static int test_format(const char *so) {
  unsigned char elf[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
  elf[18] = 190;
  CHECK(weft_module_detect(elf, sizeof elf) == WEFT_MODULE_CUBIN);
  elf[18] = 224;
  CHECK(weft_module_detect(elf, sizeof elf) == WEFT_MODULE_HSACO);
  elf[18] = 62;
  CHECK(weft_module_detect(elf, sizeof elf) == WEFT_MODULE_HOST_SO);
  elf[18] = 40; /* EM_ARM */
  CHECK(weft_module_detect(elf, sizeof elf) == WEFT_MODULE_AUTO);
  const char ptx[] = "//\n// Generated by LLVM NVPTX Back-End\n//\n\n.version 8.7\n"
                     ".target sm_90\n.address_size 64\n";
  CHECK(weft_module_detect(ptx, sizeof ptx - 1) == WEFT_MODULE_PTX);
  CHECK(weft_module_detect("hello", 5) == WEFT_MODULE_AUTO);

  init_host(0);
  weft_module *m = NULL;
  elf[18] = 190;
  CHECK_FAILS(weft_module_load(g_ctx, elf, sizeof elf, WEFT_MODULE_AUTO, &m),
              WEFT_ERROR_MODULE, "a cubin module cannot be loaded by the host backend");
  elf[18] = 224;
  CHECK_FAILS(weft_module_load(g_ctx, elf, sizeof elf, WEFT_MODULE_AUTO, &m),
              WEFT_ERROR_MODULE, "HSACO module cannot be loaded by the host backend (it "
              "needs the hip backend)");
  CHECK_FAILS(weft_module_load(g_ctx, ptx, sizeof ptx - 1, WEFT_MODULE_AUTO, &m),
              WEFT_ERROR_MODULE, "PTX");
  elf[18] = 40;
  CHECK_FAILS(weft_module_load(g_ctx, elf, sizeof elf, WEFT_MODULE_AUTO, &m),
              WEFT_ERROR_MODULE, "machine 40");
  CHECK_FAILS(weft_module_load(g_ctx, "hello", 5, WEFT_MODULE_AUTO, &m), WEFT_ERROR_MODULE,
              "unrecognised");
  elf[18] = 62; /* a host ELF header with nothing behind it */
  CHECK_FAILS(weft_module_load(g_ctx, elf, sizeof elf, WEFT_MODULE_AUTO, &m),
              WEFT_ERROR_MODULE, "cannot load");
  CHECK_FAILS(weft_module_load_file(g_ctx, "/nonexistent/k.so", WEFT_MODULE_AUTO, &m),
              WEFT_ERROR_NOT_FOUND, "/nonexistent/k.so");
  CHECK(m == NULL);
  /* Two modules loaded at once, one unloaded, another loaded: distinct. */
  weft_module *a, *b, *c;
  CHECK_OK(weft_module_load_file(g_ctx, so, WEFT_MODULE_AUTO, &a));
  CHECK_OK(weft_module_load_file(g_ctx, so, WEFT_MODULE_HOST_SO, &b));
  CHECK_OK(weft_module_unload(a));
  CHECK_OK(weft_module_load_file(g_ctx, so, WEFT_MODULE_AUTO, &c));
  weft_kernel *k;
  CHECK_OK(weft_module_get_kernel(c, "read_context", &k));
  int32_t *info;
  CHECK_OK(weft_malloc(g_ctx, 16, (void **)&info));
  void *args[] = {&info};
  CHECK_OK(weft_launch(k, NULL, args, 1));
  CHECK(info[0] == g_rank && info[3] == 1);
  CHECK_OK(weft_finalize(g_ctx)); /* unloads b and c */
  return 0;
}

/* Nothing but zero bytes in [p, p + n). */
static int all_zero(const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; ++i)
    if (b[i])
      return 0;
  return 1;
}

/* The encoding must fail naming the problem (text) and zero the output. */
#define CHECK_DESC_FAILS(base, elem_size, rank, shape, strides, map_rank, map, swizzle, \
                         text)                                                         \
  do {                                                                                 \
    weft_tensor_desc d_;                                                               \
    memset(&d_, 0xff, sizeof d_);                                                      \
    CHECK_FAILS(weft_tensor_desc_encode(g_ctx, base, elem_size, rank, shape, strides, \
                                        map_rank, map, swizzle, &d_),                  \
                WEFT_ERROR_INVALID_ARGUMENT, text);                                    \
    CHECK(all_zero(&d_, sizeof d_));                                                   \
  } while (0)

#define N_DIMS(map) ((int)(sizeof(map) / sizeof((map)[0])))

/* Tensor descriptors on the host backend: the fields, and every rule of
 * sm_90's bulk tensor copies and of tensor maps (views of the tensor)
 * refused here as on a GPU. */
static int test_tensor_desc(void) {
  init_host(0);
  float *heap;
  CHECK_OK(weft_malloc(g_ctx, 1 << 16, (void **)&heap));
  weft_tensor_desc d;
  /* fp32 [2][3][8] in the heap, rows padded to 12 elements (48 bytes). */
  const int64_t shape3[] = {2, 3, 8}, strides3[] = {36, 12, 1};
  const weft_tensor_map_dim map3[] = {{0, 1, 0, 1}, {1, 1, 0, 2}, {2, 1, 0, 8}};
  memset(&d, 0xff, sizeof d);
  CHECK_OK(weft_tensor_desc_encode(g_ctx, heap, 4, 3, shape3, strides3, 3, map3, 32, &d));
  CHECK(d.base == (uint64_t)(uintptr_t)heap);
  for (int i = 0; i < 3; ++i)
    CHECK(d.shape[i] == shape3[i] && d.strides[i] == strides3[i]);
  for (int i = 3; i < WEFT_TENSOR_DESC_MAX_RANK; ++i)
    CHECK(d.shape[i] == 0 && d.strides[i] == 0);
  /* A map, but the host backend makes no bulk copies: no tensor map. The
   * tail padding is zero too. */
  CHECK(all_zero(d.tensor_map, sizeof d.tensor_map));
  const size_t used = offsetof(weft_tensor_desc, strides) + sizeof d.strides;
  CHECK(all_zero((const char *)&d + used, sizeof d - used));
  /* map_rank 0: no map (NULL or not), swizzle is ignored. */
  memset(&d, 0xff, sizeof d);
  CHECK_OK(weft_tensor_desc_encode(g_ctx, heap, 4, 3, shape3, strides3, 0, NULL, 7, &d));
  CHECK(d.shape[2] == 8 && d.strides[0] == 36 && all_zero(d.tensor_map, sizeof d.tensor_map));
  const weft_tensor_map_dim bogus[] = {{9, 0, -1, 0}};
  CHECK_OK(weft_tensor_desc_encode(g_ctx, heap, 4, 3, shape3, strides3, 0, bogus, 7, &d));

  /* Host memory outside the heap, every rank and element size, the limits. */
  static _Alignas(16) uint64_t host[64];
  const int64_t one[] = {5}, unit[] = {1};
  const weft_tensor_map_dim map1[] = {{0, 1, 0, 2}};
  CHECK_OK(weft_tensor_desc_encode(g_ctx, host, 8, 1, one, unit, 1, map1, 0, &d));
  CHECK(d.shape[0] == 5 && d.strides[0] == 1 && d.shape[1] == 0);
  const int64_t shape5[] = {(int64_t)1 << 32, 1, 2, 3, 16};
  const int64_t strides5[] = {((int64_t)1 << 40) - 16, 4096, 1024, 16, 1};
  const weft_tensor_map_dim map5[] = {
      {0, 1, 0, 256}, {1, 1, 0, 1}, {2, 1, 0, 2}, {3, 1, 0, 3}, {4, 1, 0, 16}};
  CHECK_OK(weft_tensor_desc_encode(g_ctx, host, 1, 5, shape5, strides5, 5, map5, 0, &d));
  for (int i = 0; i < 5; ++i)
    CHECK(d.shape[i] == shape5[i] && d.strides[i] == strides5[i]);
  /* fp64 rows 2^39 bytes apart: a map stride of 2^39 bytes is fine. */
  const int64_t shape_far[] = {2, 2}, strides_far[] = {(int64_t)1 << 36, 1};
  const weft_tensor_map_dim far_rows[] = {{0, 1, 0, 1}, {1, 1, 0, 2}};
  CHECK_OK(weft_tensor_desc_encode(g_ctx, host, 8, 2, shape_far, strides_far, 2, far_rows,
                                   0, &d));
  /* bf16 rows of 64 (128 bytes), the widest box a 128-byte swizzle takes:
   * the plain 2-D map, 8 x 64 elements per box. */
  const int64_t shape2[] = {64, 64}, strides2[] = {64, 1};
  const weft_tensor_map_dim map2[] = {{0, 1, 0, 8}, {1, 1, 0, 64}};
  CHECK_OK(weft_tensor_desc_encode(g_ctx, heap, 2, 2, shape2, strides2, 2, map2, 128, &d));
  /* *out need not be aligned (ctypes cannot align it to 64). */
  _Alignas(64) unsigned char raw[sizeof d + 16];
  memset(raw, 0xff, sizeof raw);
  CHECK_OK(weft_tensor_desc_encode(g_ctx, heap, 2, 2, shape2, strides2, 2, map2, 128,
                                   (weft_tensor_desc *)(void *)(raw + 8)));
  memcpy(&d, raw + 8, sizeof d);
  CHECK(d.base == (uint64_t)(uintptr_t)heap && d.shape[1] == 64 && d.strides[0] == 64);
  CHECK(raw[7] == 0xff && raw[8 + sizeof d] == 0xff);

  /* A view: 128 rows of a 256 x 64 bf16 tensor in one box, in the order
   * 0-7, 64-71, 8-15, 72-79, ...: map dimensions i (8 groups of 8 rows),
   * t (the rest in steps of 64 rows: 4, two per box), g (8 rows), k (the
   * columns). Strides do not grow outwards; the map reaches row
   * 7 * 8 + 3 * 64 + 7 = 255, the last. The descriptor's plain fields are
   * the tensor's. */
  const int64_t shape_a[] = {256, 64}, strides_a[] = {64, 1};
  const weft_tensor_map_dim split[] = {
      {0, 8, 8, 8}, {0, 64, 0, 2}, {0, 1, 8, 8}, {1, 1, 0, 64}};
  memset(&d, 0xff, sizeof d);
  CHECK_OK(weft_tensor_desc_encode(g_ctx, heap, 2, 2, shape_a, strides_a, N_DIMS(split),
                                   split, 0, &d));
  CHECK(d.shape[0] == 256 && d.shape[1] == 64 && d.strides[0] == 64 && d.strides[1] == 1 &&
        d.shape[2] == 0 && all_zero(d.tensor_map, sizeof d.tensor_map));
  CHECK_OK(weft_tensor_desc_encode(g_ctx, heap, 2, 2, shape_a, strides_a, N_DIMS(split),
                                   split, 128, &d));
  /* The columns split in two, also fine: 32-column halves 64 bytes apart. */
  const weft_tensor_map_dim halves[] = {{1, 32, 2, 1}, {0, 1, 0, 64}, {1, 1, 32, 32}};
  CHECK_OK(weft_tensor_desc_encode(g_ctx, heap, 2, 2, shape_a, strides_a, N_DIMS(halves),
                                   halves, 64, &d));

  /* Each rule, with a message naming the value. */
  CHECK(weft_tensor_desc_encode(NULL, heap, 2, 2, shape2, strides2, 0, NULL, 0, &d) ==
            WEFT_ERROR_INVALID_ARGUMENT &&
        strstr(weft_last_error(NULL), "weft_tensor_desc_encode: ctx is NULL"));
  CHECK_FAILS(weft_tensor_desc_encode(g_ctx, heap, 2, 2, shape2, strides2, 0, NULL, 0, NULL),
              WEFT_ERROR_INVALID_ARGUMENT, "weft_tensor_desc_encode: out is NULL");
  CHECK_DESC_FAILS(heap, 2, 2, NULL, strides2, 0, NULL, 0, "shape is NULL");
  CHECK_DESC_FAILS(heap, 2, 2, shape2, NULL, 0, NULL, 0, "strides is NULL");
  CHECK_DESC_FAILS(NULL, 2, 2, shape2, strides2, 0, NULL, 0, "base is NULL");
  CHECK_DESC_FAILS(heap, 2, 0, shape2, strides2, 0, NULL, 0, "rank 0 is not in 1..5");
  CHECK_DESC_FAILS(heap, 2, 6, shape5, strides5, 0, NULL, 0, "rank 6 is not in 1..5");
  CHECK_DESC_FAILS(heap, 3, 2, shape2, strides2, 0, NULL, 0,
                   "elem_size 3 is not 1, 2, 4 or 8");
  CHECK_DESC_FAILS(heap, 16, 2, shape2, strides2, 0, NULL, 0, "elem_size 16");
  char text[160];
  snprintf(text, sizeof text, "base %p is not 16-byte aligned", (void *)((char *)heap + 8));
  CHECK_DESC_FAILS((char *)heap + 8, 2, 2, shape2, strides2, 0, NULL, 0, text);
  const int64_t no_rows[] = {0, 64}, huge[] = {64, ((int64_t)1 << 32) + 1};
  CHECK_DESC_FAILS(heap, 2, 2, no_rows, strides2, 0, NULL, 0,
                   "shape[0] = 0 is not in 1..2^32");
  CHECK_DESC_FAILS(heap, 2, 2, huge, strides2, 0, NULL, 0,
                   "shape[1] = 4294967297 is not in 1..2^32");
  const int64_t column[] = {64, 2}, zero[] = {0, 1}, negative[] = {-64, 1},
                odd[] = {12, 1}, far[] = {(int64_t)1 << 37, 1};
  CHECK_DESC_FAILS(heap, 2, 2, shape2, column, 0, NULL, 0,
                   "strides[1] = 2: the innermost dimension must be contiguous");
  CHECK_DESC_FAILS(heap, 2, 2, shape2, zero, 0, NULL, 0, "strides[0] = 0 is not positive");
  CHECK_DESC_FAILS(heap, 2, 2, shape2, negative, 0, NULL, 0,
                   "strides[0] = -64 is not positive");
  CHECK_DESC_FAILS(heap, 2, 2, shape2, odd, 0, NULL, 0, "strides[0] = 12 elements of 2 "
                   "bytes (24 bytes) is not a multiple of 16 bytes");
  CHECK_DESC_FAILS(heap, 8, 2, shape2, far, 0, NULL, 0, "strides[0] = 137438953472 "
                   "elements of 8 bytes is not below 2^40 bytes");
  /* The map's own rules. */
  CHECK_DESC_FAILS(heap, 2, 2, shape2, strides2, -1, map2, 0, "map_rank -1 is not in 0..5");
  CHECK_DESC_FAILS(heap, 2, 2, shape2, strides2, 6, map5, 0, "map_rank 6 is not in 0..5");
  CHECK_DESC_FAILS(heap, 2, 2, shape2, strides2, 2, NULL, 0, "map is NULL (map_rank 2)");
  const weft_tensor_map_dim bad_dim[] = {{2, 1, 0, 8}, {1, 1, 0, 64}},
                            neg_dim[] = {{-1, 1, 0, 8}, {1, 1, 0, 64}},
                            no_step[] = {{0, 0, 0, 8}, {1, 1, 0, 64}},
                            neg_size[] = {{0, 1, -8, 8}, {1, 1, 0, 64}},
                            no_box[] = {{0, 1, 0, 0}, {1, 1, 0, 64}},
                            big_box[] = {{0, 1, 0, 8}, {1, 1, 0, 257}};
  CHECK_DESC_FAILS(heap, 2, 2, shape2, strides2, 2, bad_dim, 0,
                   "map[0].dim = 2 is not in 0..1");
  CHECK_DESC_FAILS(heap, 2, 2, shape2, strides2, 2, neg_dim, 0,
                   "map[0].dim = -1 is not in 0..1");
  CHECK_DESC_FAILS(heap, 2, 2, shape2, strides2, 2, no_step, 0,
                   "map[0].step = 0 is not positive");
  CHECK_DESC_FAILS(heap, 2, 2, shape2, strides2, 2, neg_size, 0,
                   "map[0].size = -8 is negative");
  CHECK_DESC_FAILS(heap, 2, 2, shape2, strides2, 2, no_box, 0,
                   "map[0].box = 0 is not in 1..256");
  CHECK_DESC_FAILS(heap, 2, 2, shape2, strides2, 2, big_box, 0,
                   "map[1].box = 257 is not in 1..256");
  /* The innermost map dimension walks the innermost tensor dimension
   * contiguously: not the rows, and not every other column. */
  const weft_tensor_map_dim rows_inner[] = {{1, 1, 0, 64}, {0, 1, 0, 8}},
                            strided_inner[] = {{0, 1, 0, 8}, {1, 2, 0, 32}};
  CHECK_DESC_FAILS(heap, 2, 2, shape2, strides2, 2, rows_inner, 0,
                   "map[1] (the innermost) walks dimension 0 in steps of 1: it must "
                   "walk dimension 1 (the innermost) in steps of 1");
  CHECK_DESC_FAILS(heap, 2, 2, shape2, strides2, 2, strided_inner, 0,
                   "map[1] (the innermost) walks dimension 1 in steps of 2");
  /* The split view of a 100-row tensor: 100 rows are no whole number of
   * 64-row steps. */
  const int64_t shape_100[] = {100, 64};
  CHECK_DESC_FAILS(heap, 2, 2, shape_100, strides_a, N_DIMS(split), split, 0,
                   "map[1] steps shape[0] = 100 in steps of 64: not whole");
  /* Past the tensor: 16 rows of an 8-row tensor; the split view with
   * 16-row groups g (row 7 * 8 + 3 * 64 + 15 = 263). */
  const int64_t shape_8[] = {8, 64};
  const weft_tensor_map_dim tall[] = {{0, 1, 16, 8}, {1, 1, 0, 64}},
                            wide_g[] = {{0, 8, 8, 8}, {0, 64, 0, 2}, {0, 1, 16, 8},
                                        {1, 1, 0, 64}};
  CHECK_DESC_FAILS(heap, 2, 2, shape_8, strides2, 2, tall, 0,
                   "the map reaches index 15 of dimension 0, beyond shape[0] = 8");
  CHECK_DESC_FAILS(heap, 2, 2, shape_a, strides_a, N_DIMS(wide_g), wide_g, 0,
                   "the map reaches index 263 of dimension 0, beyond shape[0] = 256");
  /* 64 bf16 elements as 16 groups of 4 (box 8 of them: 16 bytes): groups
   * 8 bytes apart, which a bulk copy cannot stride by. */
  const int64_t shape_64[] = {64};
  const weft_tensor_map_dim quads[] = {{0, 4, 16, 16}, {0, 1, 4, 8}},
                            octets[] = {{0, 8, 8, 16}, {0, 1, 8, 8}};
  CHECK_DESC_FAILS(heap, 2, 1, shape_64, unit, 2, quads, 0,
                   "map[0]: step 4 x strides[0] = 4 elements of 2 bytes (8 bytes) is "
                   "not a multiple of 16 bytes");
  CHECK_OK(weft_tensor_desc_encode(g_ctx, heap, 2, 1, shape_64, unit, 2, octets, 0, &d));
  /* Every other row of fp64 rows 2^39 bytes apart: 2^40 bytes. */
  const weft_tensor_map_dim far_step[] = {{0, 2, 1, 1}, {1, 1, 0, 2}};
  CHECK_DESC_FAILS(host, 8, 2, shape_far, strides_far, 2, far_step, 0,
                   "map[0]: step 2 x strides[0] = 2 x 68719476736 elements of 8 bytes is "
                   "not below 2^40 bytes");
  /* The innermost box and the swizzle. */
  const weft_tensor_map_dim narrow[] = {{0, 1, 0, 8}, {1, 1, 0, 4}};
  CHECK_DESC_FAILS(heap, 2, 2, shape2, strides2, 2, narrow, 0, "map[1].box = 4 elements "
                   "of 2 bytes (8 bytes) is not a multiple of 16 bytes");
  CHECK_DESC_FAILS(heap, 2, 2, shape2, strides2, 2, map2, 16,
                   "swizzle 16 is not 0, 32, 64 or 128");
  CHECK_DESC_FAILS(heap, 2, 2, shape2, strides2, 2, map2, 64, "map[1].box = 64 elements "
                   "of 2 bytes (128 bytes) is wider than the 64-byte swizzle");
  CHECK_DESC_FAILS(heap, 2, 2, shape_a, strides_a, N_DIMS(split), split, 32,
                   "map[3].box = 64 elements of 2 bytes (128 bytes) is wider than the "
                   "32-byte swizzle");
  /* The failures left the context as it was. */
  CHECK_OK(weft_tensor_desc_encode(g_ctx, heap, 2, 2, shape2, strides2, 2, map2, 128, &d));
  CHECK_OK(weft_free(g_ctx, heap));
  CHECK_OK(weft_finalize(g_ctx));
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: runtime_test CASE [ARGS]\n");
    return 2;
  }
  const char *c = argv[1];
  const char *arg = argc > 2 ? argv[2] : "";
  if (!strcmp(c, "heap")) return test_heap();
  if (!strcmp(c, "kernel")) return test_kernel(arg);
  if (!strcmp(c, "asymmetric")) return test_asymmetric();
  if (!strcmp(c, "errors")) return test_errors();
  if (!strcmp(c, "lost")) return test_lost(arg, argc > 3 ? atoi(argv[3]) : 1);
  if (!strcmp(c, "stubborn")) return test_stubborn();
  if (!strcmp(c, "auth")) return test_auth();
  if (!strcmp(c, "torchrun")) return test_torchrun();
  if (!strcmp(c, "interrupt")) return test_interrupt();
  if (!strcmp(c, "grid")) return test_grid(arg);
  if (!strcmp(c, "env")) return test_env();
  if (!strcmp(c, "single")) return test_single();
  if (!strcmp(c, "format")) return test_format(arg);
  if (!strcmp(c, "backends")) return test_backends();
  if (!strcmp(c, "gpu_common")) return test_gpu_common();
  if (!strcmp(c, "tensor_desc")) return test_tensor_desc();
  if (!strcmp(c, "sleep")) { sleep(600); return 0; }
  fprintf(stderr, "runtime_test: unknown case '%s'\n", c);
  return 2;
}
