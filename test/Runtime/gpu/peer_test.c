/*
 * GPU validation of the runtime through its public API only, one process
 * per GPU under weft-run (scripts/gpu/validate_runtime.sh builds and runs
 * it):
 *
 *   peer_test peers MODULE [MiB]   symmetric writes and reads between every
 *                                  pair of ranks, then pull and push
 *                                  bandwidth to the next rank
 *   peer_test errors MODULE        module and launch errors are reported
 *   peer_test same-device MODULE   two ranks on one GPU are refused
 *   peer_test tensor-desc MODULE   tensor maps of weft_tensor_desc_encode,
 *                                  read by bulk tensor copies (TMA)
 *   peer_test early-start MODULE   launches with WEFT_LAUNCH_EARLY_START
 *   peer_test resident MODULE      launches with WEFT_LAUNCH_RESIDENT
 *
 * MODULE is peer_kernels.cu compiled to PTX or cubin. Device-side checks
 * count wrong words into the heap; expect_zero then fails the launch, so a
 * mismatch surfaces as a weft_synchronize error.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../check.h"

static weft_module *g_module;

#define THREADS 512
#define CHECK_GRID 128
#define ITERATIONS 50

/* The cuda backend on the local rank's device. */
static void init(void) {
  weft_init_options o = options_for(WEFT_BACKEND_CUDA);
  init_ok(&o);
}

static weft_kernel *kernel(const char *name) {
  weft_kernel *k;
  CHECK_OK(weft_module_get_kernel(g_module, name, &k));
  return k;
}

static void launch(weft_kernel *k, uint32_t grid, void **args, size_t n) {
  weft_launch_config c = {{grid, 1, 1}, THREADS, 0, NULL, 0, {1, 1, 1}};
  CHECK_OK(weft_launch(k, &c, args, n));
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Tags of the word patterns (pattern = tag << 40 | index). */
static uint32_t slot_tag(int writer, int owner) {
  return 1u + (uint32_t)writer * WEFT_MAX_RANKS + (uint32_t)owner;
}
static uint32_t copy_tag(int rank) { return 0x800000u | (uint32_t)rank; }

/* Fails unless peer's copy of p[0..n) holds pattern(tag). */
static void expect_words(uint64_t *p, uint64_t n, uint32_t tag, int peer,
                         unsigned long long *errors, int check) {
  void *args[] = {&p, &n, &tag, &peer, &errors};
  launch(kernel("check_words"), CHECK_GRID, args, 5);
  void *zargs[] = {&errors, &check};
  launch(kernel("expect_zero"), 1, zargs, 2);
  CHECK_OK(weft_synchronize(g_ctx));
}

/* Rank r writes slot r of every rank's copy; every rank then checks its
 * own copy, and every peer's copy read across the link. */
static void check_slots(uint64_t words, unsigned long long *errors) {
  int n = weft_num_ranks(g_ctx);
  uint64_t *slots;
  CHECK_OK(weft_malloc(g_ctx, words * 8 * (size_t)n, (void **)&slots));
  uint64_t *mine = slots + (size_t)g_rank * words;
  for (int peer = 0; peer < n; ++peer) {
    uint32_t tag = slot_tag(g_rank, peer);
    void *args[] = {&mine, &words, &tag, &peer};
    launch(kernel("fill_words"), CHECK_GRID, args, 4);
  }
  CHECK_OK(weft_barrier(g_ctx));
  for (int i = 0; i < n; ++i) {
    int owner = (g_rank + i) % n; /* own copy first */
    for (int w = 0; w < n; ++w)
      expect_words(slots + (size_t)w * words, words, slot_tag(w, owner), owner,
                   errors, 1);
  }
  printf("rank %d: slots ok: %d x %llu words written to every rank, checked "
         "on every copy\n", g_rank, n, (unsigned long long)words);
  CHECK_OK(weft_barrier(g_ctx));
  CHECK_OK(weft_free(g_ctx, slots));
}

/* A weft_malloc_local block (rank 0 takes one more: not collective) is
 * device memory that kernels, weft_memcpy and weft_memset reach. */
static void check_local(unsigned long long *errors) {
  uint64_t words = 1 << 16, *block, *spare = NULL, got[2];
  CHECK_OK(weft_malloc_local(g_ctx, words * 8, (void **)&block));
  if (g_rank == 0)
    CHECK_OK(weft_malloc_local(g_ctx, 4096, (void **)&spare));
  uint32_t tag = copy_tag(g_rank);
  void *args[] = {&block, &words, &tag, &g_rank};
  launch(kernel("fill_words"), CHECK_GRID, args, 4);
  expect_words(block, words, tag, g_rank, errors, 3);
  CHECK_OK(weft_memset(g_ctx, block, 0, 8));
  CHECK_OK(weft_memcpy(g_ctx, got, block, sizeof got));
  CHECK(got[0] == 0 && got[1] == ((uint64_t)tag << 40 | 1));
  CHECK_OK(weft_free_local(g_ctx, block));
  CHECK_OK(weft_free_local(g_ctx, spare));
  printf("rank %d: local block ok\n", g_rank);
}

/* Pull (read next's memory) and push (write next's memory), timed over
 * ITERATIONS launches for each grid size, then the moved bytes are checked. */
static void bandwidth(uint64_t bytes, unsigned long long *errors) {
  static const uint32_t grids[] = {8, 32, 132}; /* 132: one program per SM */
  int n = weft_num_ranks(g_ctx), next = (g_rank + 1) % n,
      prev = (g_rank + n - 1) % n;
  uint64_t words = bytes / 8, n16 = bytes / 16;
  uint64_t *src, *dst;
  CHECK_OK(weft_malloc(g_ctx, bytes, (void **)&src));
  CHECK_OK(weft_malloc(g_ctx, bytes, (void **)&dst));
  uint32_t tag = copy_tag(g_rank);
  void *fill[] = {&src, &words, &tag, &g_rank};
  launch(kernel("fill_words"), CHECK_GRID, fill, 4);
  weft_kernel *copy = kernel("copy_next");
  for (int pull = 1; pull >= 0; --pull) {
    void *args[] = {&dst, &src, &n16, &pull};
    for (size_t g = 0; g < sizeof grids / sizeof grids[0]; ++g) {
      launch(copy, grids[g], args, 4); /* warm-up */
      CHECK_OK(weft_barrier(g_ctx));
      double t0 = now_s();
      for (int i = 0; i < ITERATIONS; ++i)
        launch(copy, grids[g], args, 4);
      CHECK_OK(weft_synchronize(g_ctx));
      double t = now_s() - t0;
      printf("rank %d: %s rank %d, %llu MiB x %d, %u programs x %d threads: "
             "%.1f GB/s\n", g_rank, pull ? "pull (read) from" : "push (write) to",
             next, (unsigned long long)(bytes >> 20), ITERATIONS, grids[g],
             THREADS, (double)bytes * ITERATIONS / t * 1e-9);
      CHECK_OK(weft_barrier(g_ctx));
    }
    /* pull: own dst holds next's src; push: prev wrote its src into it. */
    expect_words(dst, words, copy_tag(pull ? next : prev), g_rank, errors, 2);
    CHECK_OK(weft_barrier(g_ctx));
  }
  CHECK_OK(weft_free(g_ctx, src));
  CHECK_OK(weft_free(g_ctx, dst));
}

static int test_peers(const char *module, uint64_t mib) {
  init();
  CHECK_OK(weft_module_load_file(g_ctx, module, WEFT_MODULE_AUTO, &g_module));
  unsigned long long *errors;
  CHECK_OK(weft_malloc(g_ctx, sizeof *errors, (void **)&errors));
  void *args[] = {&errors};
  launch(kernel("zero"), 1, args, 1);
  check_slots((uint64_t)1 << 20, errors);
  check_local(errors);
  bandwidth(mib << 20, errors);
  CHECK_OK(weft_finalize(g_ctx));
  return 0;
}

/* Bad PTX comes back with the JIT log, a missing kernel as NOT_FOUND, and
 * a faulting kernel as an illegal address at weft_synchronize. */
static int test_errors(const char *module) {
  init();
  static const char bad[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                            ".visible .entry broken() { frobnicate; }\n";
  weft_module *m;
  CHECK_FAILS(weft_module_load(g_ctx, bad, sizeof bad - 1, WEFT_MODULE_AUTO, &m),
              WEFT_ERROR_MODULE, "CUDA_ERROR_INVALID_PTX");
  CHECK(strstr(weft_last_error(g_ctx), "frobnicate")); /* the JIT log */
  printf("rank %d: bad PTX: %s\n", g_rank, weft_last_error(g_ctx));
  CHECK_OK(weft_module_load_file(g_ctx, module, WEFT_MODULE_AUTO, &g_module));
  weft_kernel *k;
  CHECK_FAILS(weft_module_get_kernel(g_module, "no_such_kernel", &k),
              WEFT_ERROR_NOT_FOUND, "no_such_kernel");
  launch(kernel("fault"), 1, NULL, 0);
  CHECK_FAILS(weft_synchronize(g_ctx), WEFT_ERROR_BACKEND,
              "CUDA_ERROR_ILLEGAL_ADDRESS");
  printf("rank %d: fault: %s\n", g_rank, weft_last_error(g_ctx));
  /* The context is lost now; finalize must still return, not hang. */
  weft_status st = weft_finalize(g_ctx);
  printf("rank %d: finalize after the fault: %s\n", g_rank, weft_status_string(st));
  return 0;
}

/* A translate to a peer that is no rank, compiled by weft-compile --debug
 * (bad_peer.mlir): weft_synchronize reports the kernel and its source line
 * instead of faulting, and the record is cleared for the next launch. */
static int test_debug(const char *module) {
  init();
  CHECK_OK(weft_module_load_file(g_ctx, module, WEFT_MODULE_AUTO, &g_module));
  int32_t *p;
  CHECK_OK(weft_malloc(g_ctx, sizeof *p, (void **)&p));
  int32_t peer = weft_num_ranks(g_ctx);
  void *args[] = {&p, &peer};
  /* weft-compile's default: 4 warps per program. */
  weft_launch_config c = {{1, 1, 1}, 128, 0, NULL, 0, {1, 1, 1}};
  CHECK_OK(weft_launch(kernel("bad_peer"), &c, args, 2));
  CHECK_FAILS(weft_synchronize(g_ctx), WEFT_ERROR_INVALID_ARGUMENT,
              "in kernel bad_peer at bad_peer.mlir:9:8");
  printf("rank %d: debug: %s\n", g_rank, weft_last_error(g_ctx));
  peer = g_rank;
  CHECK_OK(weft_launch(kernel("bad_peer"), &c, args, 2));
  CHECK_OK(weft_synchronize(g_ctx));
  CHECK_OK(weft_finalize(g_ctx));
  return 0;
}

/* A 2-D tensor of 16-bit elements (bf16 to TMA: only the size matters),
 * its rows padded to a pitch of 208 bytes. */
#define TD_ROWS 20
#define TD_COLS 100
#define TD_PITCH 104

/* The split view of an A block: a 256 x 64 tensor of 16-bit elements
 * whose 128-row blocks land in shared memory in the row order 0-7, 64-71,
 * 8-15, 72-79, ... in one bulk copy. */
#define SV_ROWS 256
#define SV_COLS 64

/* Tensor row of shared-memory row s of the split view's box at t0: map
 * dimensions i (outer, 8), t (2 of them from t0) and g (inner, 8) walk row
 * 64 * t + 8 * i + g; -1 past the map (t >= 4), which reads as zeros. */
static int split_row(int t0, int s) {
  int t = t0 + (s / 8) % 2, i = s / 16, g = s % 8;
  return t < SV_ROWS / 64 ? 64 * t + 8 * i + g : -1;
}

/* Descriptors of device memory: without a map no tensor map; with the
 * plain 2-D map of 8 x 64 boxes, without and with the 128-byte swizzle,
 * the map drives a bulk tensor copy of a box partly outside the tensor,
 * which must bring the tensor's elements and zeros beyond it (never the
 * padding). Then a 4-D view of a 2-D tensor (strides not growing
 * outwards): one box of it gathers 128 rows in the interleaved order. */
static int test_tensor_desc(const char *module) {
  init();
  CHECK_OK(weft_module_load_file(g_ctx, module, WEFT_MODULE_AUTO, &g_module));
  static uint16_t host[TD_ROWS][TD_PITCH];
  for (int r = 0; r < TD_ROWS; ++r)
    for (int c = 0; c < TD_PITCH; ++c)
      host[r][c] = c < TD_COLS ? (uint16_t)(r * 1000 + c) : 0xffff;
  uint16_t *tensor;
  void *out;
  CHECK_OK(weft_malloc(g_ctx, sizeof host, (void **)&tensor));
  CHECK_OK(weft_malloc(g_ctx, 128 * SV_COLS * 2, &out));
  CHECK_OK(weft_memcpy(g_ctx, tensor, host, sizeof host));
  const int64_t shape[] = {TD_ROWS, TD_COLS}, strides[] = {TD_PITCH, 1};
  const weft_tensor_map_dim map[] = {{0, 1, 0, 8}, {1, 1, 0, 64}};
  static const unsigned char zeros[128];
  weft_tensor_desc d;
  CHECK_OK(weft_tensor_desc_encode(g_ctx, tensor, 2, 2, shape, strides, 0, NULL, 0, &d));
  CHECK(!memcmp(d.tensor_map, zeros, sizeof zeros));
  static const int swizzles[] = {0, 128};
  for (size_t s = 0; s < sizeof swizzles / sizeof swizzles[0]; ++s) {
    int swizzle = swizzles[s];
    CHECK_OK(weft_tensor_desc_encode(g_ctx, tensor, 2, 2, shape, strides, 2, map, swizzle,
                                     &d));
    CHECK(memcmp(d.tensor_map, zeros, sizeof zeros) != 0);
    CHECK(d.base == (uint64_t)(uintptr_t)tensor && d.shape[0] == TD_ROWS &&
          d.shape[1] == TD_COLS && d.strides[0] == TD_PITCH && d.strides[1] == 1);
    int32_t row0 = 16, col0 = 64; /* rows 16..23, columns 64..127 */
    void *args[] = {&d, &row0, &col0, &out};
    weft_launch_config c = {{1, 1, 1}, 128, 0, NULL, 0, {1, 1, 1}};
    CHECK_OK(weft_launch(kernel("tma_load_box"), &c, args, 4));
    uint16_t got[8][64];
    CHECK_OK(weft_memcpy(g_ctx, got, out, sizeof got));
    for (int r = 0; r < 8; ++r)
      for (int i = 0; i < 64; ++i) {
        /* The 128-byte swizzle puts 16-byte chunk k of row r at k ^ r. */
        int at = swizzle ? ((i / 8) ^ r) * 8 + i % 8 : i;
        int tr = row0 + r, tc = col0 + i;
        uint16_t want = tr < TD_ROWS && tc < TD_COLS ? host[tr][tc] : 0;
        if (got[r][at] != want)
          FAIL("swizzle %d: box element (%d, %d) = %u, expected %u", swizzle, r, i,
               got[r][at], want);
      }
  }
  printf("rank %d: tensor maps ok: an 8 x 64 box of a %d x %d tensor, swizzle 0 "
         "and 128\n", g_rank, TD_ROWS, TD_COLS);
  /* TMA's rules are the runtime's, before the driver sees them. */
  CHECK_FAILS(weft_tensor_desc_encode(g_ctx, tensor, 2, 2, shape, strides, 2, map, 64, &d),
              WEFT_ERROR_INVALID_ARGUMENT, "is wider than the 64-byte swizzle");

  /* The split view, outermost first: i (8 groups of 8 rows, 1024 bytes
   * apart), t (the rest in steps of 64 rows: 4, 2 per box, 8192 bytes),
   * g (8 rows, 128 bytes), k (the 64 columns). */
  static uint16_t a[SV_ROWS][SV_COLS];
  for (int r = 0; r < SV_ROWS; ++r)
    for (int c = 0; c < SV_COLS; ++c)
      a[r][c] = (uint16_t)(r * SV_COLS + c + 1); /* never 0 */
  uint16_t *a_dev;
  CHECK_OK(weft_malloc(g_ctx, sizeof a, (void **)&a_dev));
  CHECK_OK(weft_memcpy(g_ctx, a_dev, a, sizeof a));
  const int64_t a_shape[] = {SV_ROWS, SV_COLS}, a_strides[] = {SV_COLS, 1};
  const weft_tensor_map_dim split[] = {
      {0, 8, 8, 8}, {0, 64, 0, 2}, {0, 1, 8, 8}, {1, 1, 0, 64}};
  /* The 128-byte swizzle the compiler's rings use encodes too. */
  CHECK_OK(weft_tensor_desc_encode(g_ctx, a_dev, 2, 2, a_shape, a_strides, 4, split, 128,
                                   &d));
  CHECK(memcmp(d.tensor_map, zeros, sizeof zeros) != 0);
  CHECK_OK(weft_tensor_desc_encode(g_ctx, a_dev, 2, 2, a_shape, a_strides, 4, split, 0, &d));
  CHECK(memcmp(d.tensor_map, zeros, sizeof zeros) != 0);
  CHECK(d.base == (uint64_t)(uintptr_t)a_dev && d.shape[0] == SV_ROWS &&
        d.shape[1] == SV_COLS && d.strides[0] == SV_COLS && d.strides[1] == 1);
  /* Blocks b = 0 and 1 (t0 = 2 * b: rows from 128 * b), then t0 = 3,
   * whose second half of t lies past the map: zeros. */
  static const int32_t t0s[] = {0, 2, 3};
  for (size_t n = 0; n < sizeof t0s / sizeof t0s[0]; ++n) {
    int32_t k0 = 0, g0 = 0, t0 = t0s[n], i0 = 0;
    uint32_t bytes = 128 * SV_COLS * 2;
    void *args[] = {&d, &k0, &g0, &t0, &i0, &bytes, &out};
    weft_launch_config c = {{1, 1, 1}, 128, 0, NULL, 0, {1, 1, 1}};
    CHECK_OK(weft_memset(g_ctx, out, 0xff, bytes));
    CHECK_OK(weft_launch(kernel("tma_load_box4"), &c, args, 7));
    static uint16_t got[128][SV_COLS];
    CHECK_OK(weft_memcpy(g_ctx, got, out, sizeof got));
    for (int s = 0; s < 128; ++s) {
      int row = split_row(t0, s);
      for (int k = 0; k < SV_COLS; ++k) {
        uint16_t want = row >= 0 ? a[row][k] : 0;
        if (got[s][k] != want)
          FAIL("split view, t0 %d: shared row %d column %d = %u (tensor row %d, "
               "column %d), expected %u (tensor row %d)", t0, s, k, got[s][k],
               got[s][k] ? (got[s][k] - 1) / SV_COLS : -1,
               got[s][k] ? (got[s][k] - 1) % SV_COLS : -1, want, row);
      }
    }
  }
  printf("rank %d: tensor maps ok: one box of a 4-D view of a %d x %d tensor gathers "
         "rows 0-7, 64-71, 8-15, 72-79, ... (blocks 0 and 1, and a box half past the "
         "view)\n", g_rank, SV_ROWS, SV_COLS);
  /* The runtime refuses a view reaching past the tensor (16-row groups). */
  const weft_tensor_map_dim wide_g[] = {
      {0, 8, 8, 8}, {0, 64, 0, 2}, {0, 1, 16, 8}, {1, 1, 0, 64}};
  CHECK_FAILS(weft_tensor_desc_encode(g_ctx, a_dev, 2, 2, a_shape, a_strides, 4, wide_g, 0,
                                      &d),
              WEFT_ERROR_INVALID_ARGUMENT,
              "the map reaches index 263 of dimension 0, beyond shape[0] = 256");
  CHECK_OK(weft_finalize(g_ctx));
  return 0;
}

/* Early start: launched plainly, set_flag waits for the kernel before it
 * to give up spinning for its flag; with WEFT_LAUNCH_EARLY_START it runs
 * beside it and sets the flag. A chain of launches that each wait for the previous
 * one, all starting early, loses no update. */
static int test_early_start(const char *module) {
  init();
  CHECK_OK(weft_module_load_file(g_ctx, module, WEFT_MODULE_AUTO, &g_module));
  struct {
    unsigned flag;
    unsigned long long errors;
  } *w;
  CHECK_OK(weft_malloc(g_ctx, sizeof *w, (void **)&w));
  unsigned long long timeout_ns = 200000000ull, *errors = &w->errors;
  weft_launch_config one = {{1, 1, 1}, 32, 0, NULL, 0, {1, 1, 1}};
  void *spin_args[] = {&w, &errors, &timeout_ns}, *set_args[] = {&w};
  /* The plain launch first: a kernel's first launch may load its code
   * (CUDA's lazy loading), which waits for the device, spinner included. */
  for (int early = 0; early <= 1; ++early) {
    CHECK_OK(weft_memset(g_ctx, w, 0, sizeof *w));
    CHECK_OK(weft_launch(kernel("release_and_spin"), &one, spin_args, 3));
    weft_launch_config then = one;
    then.flags = early ? WEFT_LAUNCH_EARLY_START : 0;
    CHECK_OK(weft_launch(kernel("set_flag"), &then, set_args, 1));
    CHECK_OK(weft_synchronize(g_ctx));
    unsigned long long timeouts;
    CHECK_OK(weft_memcpy(g_ctx, &timeouts, errors, sizeof timeouts));
    if (timeouts != (early ? 0u : 1u))
      FAIL("%s launch: the spinning kernel timed out %llu times, expected %d",
           early ? "an early" : "a plain", timeouts, early ? 0 : 1);
  }
  enum { WORDS = 1 << 22, LAUNCHES = 200 };
  uint32_t *p;
  CHECK_OK(weft_malloc(g_ctx, sizeof(uint32_t) * WORDS, (void **)&p));
  CHECK_OK(weft_memset(g_ctx, p, 0, sizeof(uint32_t) * WORDS));
  uint64_t words = WORDS;
  void *args[] = {&p, &words};
  weft_launch_config c = {{CHECK_GRID, 1, 1}, THREADS, 0, NULL, WEFT_LAUNCH_EARLY_START,
                          {1, 1, 1}};
  for (int i = 0; i < LAUNCHES; ++i)
    CHECK_OK(weft_launch(kernel("increment_after_wait"), &c, args, 2));
  static uint32_t got[WORDS];
  CHECK_OK(weft_memcpy(g_ctx, got, p, sizeof got));
  for (int i = 0; i < WORDS; ++i)
    if (got[i] != LAUNCHES)
      FAIL("word %d is %u after %d early-started increments", i, got[i], LAUNCHES);
  printf("rank %d: early start: the next kernel ran beside a spinning one (a plain "
         "launch waited for it); %d chained launches all counted\n", g_rank, LAUNCHES);
  CHECK_OK(weft_finalize(g_ctx));
  return 0;
}

/* A resident launch runs the programs that fit the device at once: fewer
 * with more shared memory each, whole clusters in clusters. launch.c keeps
 * a kernel's count for its last shape, so each change of shape must count
 * again (and a return to the first shape give the first count). */
static int test_resident(const char *module) {
  init();
  CHECK_OK(weft_module_load_file(g_ctx, module, WEFT_MODULE_AUTO, &g_module));
  unsigned *count;
  CHECK_OK(weft_malloc(g_ctx, sizeof *count, (void **)&count));
  void *args[] = {&count};
  const struct {
    uint32_t shared, cluster;
  } shapes[] = {{0, 1}, {100 << 10, 1}, {0, 1}, {100 << 10, 2}};
  enum { SHAPES = sizeof shapes / sizeof shapes[0] };
  unsigned ran[SHAPES];
  for (int i = 0; i < SHAPES; ++i) {
    CHECK_OK(weft_memset(g_ctx, count, 0, sizeof *count));
    weft_launch_config c = {{1u << 20, 1, 1}, 128, shapes[i].shared, NULL,
                            WEFT_LAUNCH_RESIDENT, {shapes[i].cluster, 1, 1}};
    CHECK_OK(weft_launch(kernel("count_programs"), &c, args, 1));
    CHECK_OK(weft_memcpy(g_ctx, &ran[i], count, sizeof ran[i]));
  }
  if (!(ran[0] > ran[1] && ran[1] > 0 && ran[2] == ran[0] && ran[3] > 0 &&
        ran[3] <= ran[1] && ran[3] % 2 == 0))
    FAIL("resident launches ran %u, %u (100 KiB shared each), %u and %u (in pairs) "
         "programs", ran[0], ran[1], ran[2], ran[3]);
  printf("rank %d: resident: %u programs, %u with 100 KiB of shared memory each, %u "
         "again, %u in clusters of 2\n", g_rank, ran[0], ran[1], ran[2], ran[3]);
  CHECK_OK(weft_free(g_ctx, count));
  CHECK_OK(weft_finalize(g_ctx));
  return 0;
}

static int test_same_device(void) {
  weft_init_options o = options_for(WEFT_BACKEND_CUDA);
  o.device = 0;
  CHECK_FAILS(weft_init(&o, &g_ctx), WEFT_ERROR_INVALID_ARGUMENT,
              "both use the GPU");
  CHECK(g_ctx == NULL);
  printf("%s\n", weft_last_error(NULL));
  return 0;
}

int main(int argc, char **argv) {
  g_rank = env_rank();
  if (argc < 3) {
    fprintf(stderr, "usage: peer_test peers|errors|debug|same-device|tensor-desc|"
                    "early-start|resident MODULE "
                    "[MiB]\n");
    return 2;
  }
  if (!strcmp(argv[1], "peers"))
    return test_peers(argv[2], argc > 3 ? strtoull(argv[3], NULL, 10) : 256);
  if (!strcmp(argv[1], "errors"))
    return test_errors(argv[2]);
  if (!strcmp(argv[1], "debug"))
    return test_debug(argv[2]);
  if (!strcmp(argv[1], "same-device"))
    return test_same_device();
  if (!strcmp(argv[1], "tensor-desc"))
    return test_tensor_desc(argv[2]);
  if (!strcmp(argv[1], "early-start"))
    return test_early_start(argv[2]);
  if (!strcmp(argv[1], "resident"))
    return test_resident(argv[2]);
  fprintf(stderr, "peer_test: unknown case '%s'\n", argv[1]);
  return 2;
}
