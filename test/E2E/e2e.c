/* End-to-end runs of compiled weft kernels on the host target, one process
 * per rank under weft-run:
 *   e2e barrier DIR   weft.barrier across programs and ranks, 4 launches
 *   e2e timeout DIR   a wait that never completes fails with a report
 *   e2e bad_peer DIR  a translate to no rank fails the launch with a report
 *                     under the debug checks
 *   e2e tile DIR      tile kernels: masked vector add for every tail length
 *                     mod 16, row maxima, a 2-D tile copy to a peer, row sums
 *                     stored to a peer, masked tile atomics on a peer, math
 *                     functions against libm, the maximum of row sums, f16
 *                     and bf16 conversions against a reference rounding */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/compiler.h"
#include "weft/runtime.h"

static int fail(const char *what, const char *message) {
  fprintf(stderr, "e2e: %s: %s\n", what, message);
  return 1;
}

/* Compiles DIR/NAME.mlir for the host (with the debug checks when `debug`)
 * and loads kernel NAME. */
static int load_kernel(weft_context *ctx, const char *dir, const char *name,
                       int debug, weft_kernel **kernel) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.mlir", dir, name);
  FILE *f = fopen(path, "rb");
  if (!f)
    return fail(path, "cannot open");
  static char ir[1 << 16];
  size_t size = fread(ir, 1, sizeof ir - 1, f);
  fclose(f);

  weft_compiler *compiler;
  weft_artifacts *out;
  weft_compile_options options;
  weft_compile_options_default(&options);
  options.target = "host";
  options.debug = debug;
  const void *image;
  size_t image_size;
  weft_module *module;
  if (weft_compiler_create(&compiler) != WEFT_SUCCESS)
    return fail("compiler", "cannot create");
  if (weft_compile(compiler, ir, size, &options, &out) != WEFT_SUCCESS)
    return fail("compile", weft_compiler_last_error(compiler));
  if (weft_artifacts_get(out, "so", &image, &image_size) != WEFT_SUCCESS ||
      weft_module_load(ctx, image, image_size, WEFT_MODULE_HOST_SO, &module) ||
      weft_module_get_kernel(module, name, kernel))
    return fail("load", weft_last_error(ctx));
  weft_artifacts_destroy(out);
  weft_compiler_destroy(compiler);
  return 0;
}

static int run_barrier(weft_context *ctx, const char *dir) {
  enum { PROGRAMS = 16, LAUNCHES = 4 };
  weft_kernel *kernel;
  int32_t *board, *counts;
  int ranks = weft_num_ranks(ctx);
  if (load_kernel(ctx, dir, "barrier", 0, &kernel))
    return 1;
  if (weft_malloc(ctx, sizeof *board * PROGRAMS * ranks, (void **)&board) ||
      weft_malloc(ctx, sizeof *counts * PROGRAMS, (void **)&counts))
    return fail("malloc", weft_last_error(ctx));
  for (int32_t epoch = 1; epoch <= LAUNCHES; ++epoch) {
    weft_launch_config config = {{PROGRAMS, 1, 1}, 1, 0, NULL, 0, {1, 1, 1}};
    void *args[] = {&board, &counts, &epoch};
    if (weft_launch(kernel, &config, args, 3) != WEFT_SUCCESS)
      return fail("launch", weft_last_error(ctx));
    for (int p = 0; p < PROGRAMS; ++p)
      if (counts[p] != ranks * PROGRAMS) {
        fprintf(stderr, "e2e: rank %d launch %d program %d saw %d of %d marks\n",
                weft_rank(ctx), epoch, p, counts[p], ranks * PROGRAMS);
        return 1;
      }
  }
  printf("rank %d: barrier ok (%d launches x %d programs x %d ranks)\n",
         weft_rank(ctx), LAUNCHES, PROGRAMS, ranks);
  return 0;
}

static int run_timeout(weft_context *ctx, const char *dir) {
  weft_kernel *kernel;
  int64_t *flag;
  if (load_kernel(ctx, dir, "stuck", 0, &kernel))
    return 1;
  if (weft_malloc(ctx, sizeof *flag, (void **)&flag))
    return fail("malloc", weft_last_error(ctx));
  *flag = 3;
  weft_launch_config config = {{2, 1, 1}, 1, 0, NULL, 0, {1, 1, 1}};
  void *args[] = {&flag};
  weft_status status = weft_launch(kernel, &config, args, 1);
  const char *message = weft_last_error(ctx);
  if (status != WEFT_ERROR_TIMEOUT)
    return fail("expected WEFT_ERROR_TIMEOUT, got", weft_status_string(status));
  char where[64];
  snprintf(where, sizeof where, "flag at rank %d's heap offset 0x",
           weft_rank(ctx));
  if (!strstr(message, where) || !strstr(message, "expected == 7") ||
      !strstr(message, "last seen 3"))
    return fail("report lacks the wait", message);
  printf("rank %d: timeout reported: %s\n", weft_rank(ctx), message);
  return 0;
}

/* A translate to a peer that is no rank: with the debug checks the program
 * stops instead of writing wherever the address happens to point, and the
 * launch fails with a report naming the kernel and the translate's line. */
static int run_bad_peer(weft_context *ctx, const char *dir) {
  weft_kernel *kernel;
  int32_t *p;
  int32_t peer = weft_num_ranks(ctx);
  if (load_kernel(ctx, dir, "bad_peer", 1, &kernel))
    return 1;
  if (weft_malloc(ctx, sizeof *p, (void **)&p))
    return fail("malloc", weft_last_error(ctx));
  *p = 0;
  void *args[] = {&p, &peer};
  weft_launch_config config = {{1, 1, 1}, 1, 0, NULL, 0, {1, 1, 1}};
  weft_status status = weft_launch(kernel, &config, args, 2);
  const char *message = weft_last_error(ctx);
  if (status != WEFT_ERROR_INVALID_ARGUMENT)
    return fail("expected WEFT_ERROR_INVALID_ARGUMENT, got",
                weft_status_string(status));
  char what[64];
  snprintf(what, sizeof what, "bad peer %d (of %d ranks)", peer, peer);
  if (!strstr(message, what) ||
      !strstr(message, "in kernel bad_peer at ") ||
      !strstr(message, "bad_peer.mlir:9:8") ||
      !strstr(message, "program (0,0,0)"))
    return fail("report lacks the check", message);
  if (*p != 0)
    return fail("bad_peer", "the program went on past the failed check");
  /* The record was cleared: a translate to this rank launches cleanly. */
  peer = weft_rank(ctx);
  if (weft_launch(kernel, &config, args, 2) != WEFT_SUCCESS || *p != 1)
    return fail("relaunch", weft_last_error(ctx));
  printf("rank %d: debug check reported: %s\n", weft_rank(ctx), message);
  return 0;
}

static int check(int ok, const char *what, int rank, int index) {
  if (!ok)
    fprintf(stderr, "e2e: rank %d: %s wrong at %d\n", rank, what, index);
  return !ok;
}

/* out = x + y for n = 1..17 and 240..271 (every tail length mod 16, and
 * grids of 1 to 5 programs of 64); past n, out keeps its sentinel. */
static int run_tile_vadd(weft_context *ctx, const char *dir) {
  enum { N = 320 };
  int rank = weft_rank(ctx);
  weft_kernel *kernel;
  float *x, *y, *out;
  if (load_kernel(ctx, dir, "tile_vadd", 0, &kernel))
    return 1;
  if (weft_malloc(ctx, sizeof *x * N, (void **)&x) ||
      weft_malloc(ctx, sizeof *y * N, (void **)&y) ||
      weft_malloc(ctx, sizeof *out * N, (void **)&out))
    return fail("malloc", weft_last_error(ctx));
  for (int i = 0; i < N; ++i) {
    x[i] = 0.5f * i;
    y[i] = 1000.0f * (rank + 1) - i;
  }
  for (int32_t n = 1; n <= 271; n = n == 17 ? 240 : n + 1) {
    for (int i = 0; i < N; ++i)
      out[i] = -1.0f;
    weft_launch_config config = {{(n + 63) / 64, 1, 1}, 1, 0, NULL, 0, {1, 1, 1}};
    void *args[] = {&x, &y, &out, &n};
    if (weft_launch(kernel, &config, args, 4) != WEFT_SUCCESS)
      return fail("launch", weft_last_error(ctx));
    for (int i = 0; i < N; ++i)
      if (check(out[i] == (i < n ? x[i] + y[i] : -1.0f), "vector add", rank, i))
        return 1;
  }
  return 0;
}

/* out[r] = max over the columns of a 64x64 i32 matrix, 16 rows a program. */
static int run_tile_row_max(weft_context *ctx, const char *dir) {
  enum { ROWS = 64, COLS = 64 };
  int rank = weft_rank(ctx);
  weft_kernel *kernel;
  int32_t *src, *out;
  if (load_kernel(ctx, dir, "tile_row_max", 0, &kernel))
    return 1;
  if (weft_malloc(ctx, sizeof *src * ROWS * COLS, (void **)&src) ||
      weft_malloc(ctx, sizeof *out * ROWS, (void **)&out))
    return fail("malloc", weft_last_error(ctx));
  for (int i = 0; i < ROWS * COLS; ++i)
    src[i] = (i / COLS * 37 + i % COLS * 11 + rank) % 97 - 40;
  weft_launch_config config = {{ROWS / 16, 1, 1}, 1, 0, NULL, 0, {1, 1, 1}};
  void *args[] = {&src, &out};
  if (weft_launch(kernel, &config, args, 2) != WEFT_SUCCESS)
    return fail("launch", weft_last_error(ctx));
  for (int r = 0; r < ROWS; ++r) {
    int32_t max = src[r * COLS];
    for (int c = 1; c < COLS; ++c)
      max = src[r * COLS + c] > max ? src[r * COLS + c] : max;
    if (check(out[r] == max, "row max", rank, r))
      return 1;
  }
  return 0;
}

/* Each rank sends its 64x64 tile to the next rank, then the row sums of it:
 * afterwards every rank holds the previous rank's tile and sums. */
static int run_tile_peer(weft_context *ctx, const char *dir) {
  enum { ROWS = 64, COLS = 64 };
  int rank = weft_rank(ctx), ranks = weft_num_ranks(ctx);
  int32_t next = (rank + 1) % ranks;
  int from = (rank + ranks - 1) % ranks;
  weft_kernel *copy, *row_sum;
  float *src, *dst, *sums;
  if (load_kernel(ctx, dir, "tile_copy_peer", 0, &copy) ||
      load_kernel(ctx, dir, "tile_row_sum_peer", 0, &row_sum))
    return 1;
  if (weft_malloc(ctx, sizeof *src * ROWS * COLS, (void **)&src) ||
      weft_malloc(ctx, sizeof *dst * ROWS * COLS, (void **)&dst) ||
      weft_malloc(ctx, sizeof *sums * ROWS, (void **)&sums))
    return fail("malloc", weft_last_error(ctx));
  for (int i = 0; i < ROWS * COLS; ++i) {
    src[i] = 10000.0f * rank + i;
    dst[i] = -1.0f;
  }
  for (int r = 0; r < ROWS; ++r)
    sums[r] = -1.0f;
  weft_launch_config config = {{ROWS / 16, 1, 1}, 1, 0, NULL, 0, {1, 1, 1}};
  void *args[] = {&src, &dst, &next};
  void *sum_args[] = {&src, &sums, &next};
  if (weft_barrier(ctx) || weft_launch(copy, &config, args, 3) ||
      weft_launch(row_sum, &config, sum_args, 3) || weft_barrier(ctx))
    return fail("launch", weft_last_error(ctx));
  for (int i = 0; i < ROWS * COLS; ++i)
    if (check(dst[i] == 10000.0f * from + i, "tile copied from the peer",
              rank, i))
      return 1;
  for (int r = 0; r < ROWS; ++r) {
    float sum = 0;
    for (int c = 0; c < COLS; ++c)
      sum += 10000.0f * from + r * COLS + c;
    if (check(sums[r] == sum, "row sum stored by the peer", rank, r))
      return 1;
  }
  return 0;
}

/* Each rank adds rank + 1 to the first 37 of 64 counters of the next rank,
 * one atomic per element; the old values come back (all 0). */
static int run_tile_atomic(weft_context *ctx, const char *dir) {
  enum { N = 64 };
  int rank = weft_rank(ctx), ranks = weft_num_ranks(ctx);
  int32_t next = (rank + 1) % ranks, n = 37;
  int from = (rank + ranks - 1) % ranks;
  weft_kernel *kernel;
  int32_t *counts, *old;
  if (load_kernel(ctx, dir, "tile_atomic_peer", 0, &kernel))
    return 1;
  if (weft_malloc(ctx, sizeof *counts * N, (void **)&counts) ||
      weft_malloc(ctx, sizeof *old * N, (void **)&old))
    return fail("malloc", weft_last_error(ctx));
  for (int i = 0; i < N; ++i) {
    counts[i] = 0;
    old[i] = -1;
  }
  weft_launch_config config = {{1, 1, 1}, 1, 0, NULL, 0, {1, 1, 1}};
  void *args[] = {&counts, &old, &n, &next};
  if (weft_barrier(ctx) || weft_launch(kernel, &config, args, 4) ||
      weft_barrier(ctx))
    return fail("launch", weft_last_error(ctx));
  for (int i = 0; i < N; ++i)
    if (check(counts[i] == (i < n ? from + 1 : 0), "atomic count", rank, i) ||
        check(old[i] == (i < n ? 0 : -1), "atomic old value", rank, i))
      return 1;
  return 0;
}

/* exp, log, sin, tanh, sqrt and erf of a tile against libm. The host
 * kernel calls libm too, but through the compiler's lowering, so this
 * checks that each op reaches the right function; the tolerance is a few
 * ulp, what the GPU libraries promise. */
static int run_tile_math(weft_context *ctx, const char *dir) {
  enum { N = 192, FUNCTIONS = 6 };
  static const char *const names[FUNCTIONS] = {"exp", "log", "sin",
                                               "tanh", "sqrt", "erf"};
  float (*const reference[FUNCTIONS])(float) = {expf, logf, sinf,
                                                tanhf, sqrtf, erff};
  int rank = weft_rank(ctx);
  weft_kernel *kernel;
  float *x, *out[FUNCTIONS];
  if (load_kernel(ctx, dir, "tile_math", 0, &kernel))
    return 1;
  if (weft_malloc(ctx, sizeof *x * N, (void **)&x))
    return fail("malloc", weft_last_error(ctx));
  for (int f = 0; f < FUNCTIONS; ++f)
    if (weft_malloc(ctx, sizeof *out[f] * N, (void **)&out[f]))
      return fail("malloc", weft_last_error(ctx));
  /* Positive (log, sqrt), up to 60: exp stays finite, sin needs its range
   * reduction, tanh and erf saturate. */
  for (int i = 0; i < N; ++i)
    x[i] = 0.01f + 0.31f * i + 0.001f * rank;
  weft_launch_config config = {{N / 64, 1, 1}, 1, 0, NULL, 0, {1, 1, 1}};
  void *args[] = {&x, &out[0], &out[1], &out[2], &out[3], &out[4], &out[5]};
  if (weft_launch(kernel, &config, args, 7) != WEFT_SUCCESS)
    return fail("launch", weft_last_error(ctx));
  for (int f = 0; f < FUNCTIONS; ++f)
    for (int i = 0; i < N; ++i) {
      float expected = reference[f](x[i]);
      float tolerance = 4 * FLT_EPSILON * fmaxf(fabsf(expected), FLT_MIN);
      if (check(fabsf(out[f][i] - expected) <= tolerance, names[f], rank, i))
        return 1;
    }
  return 0;
}

/* out[0] = max over the rows of a 16x64 i32 tile of the row's sum: a
 * reduction of a reduction's result. */
static int run_tile_max_of_sums(weft_context *ctx, const char *dir) {
  enum { ROWS = 16, COLS = 64 };
  int rank = weft_rank(ctx);
  weft_kernel *kernel;
  int32_t *src, *out;
  if (load_kernel(ctx, dir, "tile_max_of_sums", 0, &kernel))
    return 1;
  if (weft_malloc(ctx, sizeof *src * ROWS * COLS, (void **)&src) ||
      weft_malloc(ctx, sizeof *out, (void **)&out))
    return fail("malloc", weft_last_error(ctx));
  for (int i = 0; i < ROWS * COLS; ++i)
    src[i] = (i / COLS * 53 + i % COLS * 29 + rank * 7) % 101 - 50;
  weft_launch_config config = {{1, 1, 1}, 1, 0, NULL, 0, {1, 1, 1}};
  void *args[] = {&src, &out};
  if (weft_launch(kernel, &config, args, 2) != WEFT_SUCCESS)
    return fail("launch", weft_last_error(ctx));
  int32_t max = INT32_MIN;
  for (int r = 0; r < ROWS; ++r) {
    int32_t sum = 0;
    for (int c = 0; c < COLS; ++c)
      sum += src[r * COLS + c];
    max = sum > max ? sum : max;
  }
  return check(*out == max, "max of row sums", rank, 0);
}

/* Reference conversions, written out so that the test does not depend on
 * the C compiler's _Float16 and __bf16 (which would call the same
 * compiler-rt functions the kernel links). */
static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = h >> 10 & 0x1f,
           mant = h & 0x3ff, bits;
  if (exp == 0x1f)
    bits = sign | 0x7f800000 | mant << 13;
  else if (exp != 0)
    bits = sign | (exp + 112) << 23 | mant << 13;
  else if (mant == 0)
    bits = sign;
  else { /* subnormal: normalise */
    exp = 113;
    while (!(mant & 0x400)) {
      mant <<= 1;
      --exp;
    }
    bits = sign | exp << 23 | (mant & 0x3ff) << 13;
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static float bf16_to_float(uint16_t b) {
  uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* `mant` >> `shift`, rounded to nearest, ties to even. */
static uint32_t shift_rne(uint32_t mant, unsigned shift) {
  if (shift == 0)
    return mant;
  if (shift > 25)
    return 0;
  uint32_t q = mant >> shift, rem = mant & ((1u << shift) - 1),
           half = 1u << (shift - 1);
  return q + (rem > half || (rem == half && (q & 1)));
}

static uint16_t float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  uint16_t sign = x >> 16 & 0x8000;
  uint32_t abs = x & 0x7fffffff, exp = abs >> 23,
           mant = (abs & 0x7fffff) | 0x800000;
  if (abs > 0x7f800000)
    return sign | 0x7e00;
  if (abs == 0x7f800000)
    return sign | 0x7c00;
  if (exp < 113) /* below 2^-14: a subnormal in units of 2^-24 */
    return sign | shift_rne(mant, 126 - exp);
  /* Normal: rebias and round off 13 bits; a carry may reach infinity. */
  uint32_t h = shift_rne(abs - 0x38000000, 13);
  return sign | (h >= 0x7c00 ? 0x7c00 : h);
}

static uint16_t float_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  if ((x & 0x7fffffff) > 0x7f800000)
    return (x >> 16) | 0x40;
  return (x + 0x7fff + (x >> 16 & 1)) >> 16;
}

/* h[i] = f16(f32(a[i]) + f32(b[i])) and bf[i] = bf16(...) for an f16 `a`
 * and a bf16 `b` across their ranges (subnormals, ties, overflow to
 * infinity), bit-exactly; a NaN sum only has to stay a NaN. */
static int run_tile_half(weft_context *ctx, const char *dir) {
  enum { N = 4096 };
  int rank = weft_rank(ctx);
  weft_kernel *kernel;
  uint16_t *a, *b, *h, *bf;
  if (load_kernel(ctx, dir, "tile_half", 0, &kernel))
    return 1;
  if (weft_malloc(ctx, sizeof *a * N, (void **)&a) ||
      weft_malloc(ctx, sizeof *b * N, (void **)&b) ||
      weft_malloc(ctx, sizeof *h * N, (void **)&h) ||
      weft_malloc(ctx, sizeof *bf * N, (void **)&bf))
    return fail("malloc", weft_last_error(ctx));
  uint32_t seed = 12345u + rank;
  for (int i = 0; i < N; ++i) {
    seed = seed * 1664525u + 1013904223u;
    a[i] = seed >> 16;
    seed = seed * 1664525u + 1013904223u;
    /* Mostly within f16's range, so that both roundings matter. */
    uint16_t exp = (i % 4 ? 97 + (seed >> 24) % 48 : (seed >> 24) & 0xff);
    b[i] = (seed >> 16 & 0x807f) | exp << 7;
  }
  weft_launch_config config = {{N / 64, 1, 1}, 1, 0, NULL, 0, {1, 1, 1}};
  void *args[] = {&a, &b, &h, &bf};
  if (weft_launch(kernel, &config, args, 4) != WEFT_SUCCESS)
    return fail("launch", weft_last_error(ctx));
  for (int i = 0; i < N; ++i) {
    float sum = half_to_float(a[i]) + bf16_to_float(b[i]);
    if (isnan(sum)) {
      if (check(isnan(half_to_float(h[i])) && isnan(bf16_to_float(bf[i])),
                "NaN sum", rank, i))
        return 1;
    } else if (check(h[i] == float_to_half(sum), "f16 sum", rank, i) ||
               check(bf[i] == float_to_bf16(sum), "bf16 sum", rank, i)) {
      return 1;
    }
  }
  return 0;
}

static int run_tile(weft_context *ctx, const char *dir) {
  if (run_tile_vadd(ctx, dir) || run_tile_row_max(ctx, dir) ||
      run_tile_peer(ctx, dir) || run_tile_atomic(ctx, dir) ||
      run_tile_math(ctx, dir) || run_tile_max_of_sums(ctx, dir) ||
      run_tile_half(ctx, dir))
    return 1;
  printf("rank %d: tile kernels ok (%d ranks)\n", weft_rank(ctx),
         weft_num_ranks(ctx));
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3)
    return fail("usage", "e2e barrier|timeout|bad_peer|tile DIR");
  weft_init_options init;
  weft_init_options_default(&init);
  init.backend = WEFT_BACKEND_HOST;
  weft_context *ctx;
  if (weft_init(&init, &ctx) != WEFT_SUCCESS)
    return fail("init", weft_last_error(NULL));
  int rc = strcmp(argv[1], "barrier") == 0   ? run_barrier(ctx, argv[2])
           : strcmp(argv[1], "timeout") == 0 ? run_timeout(ctx, argv[2])
           : strcmp(argv[1], "bad_peer") == 0 ? run_bad_peer(ctx, argv[2])
           : strcmp(argv[1], "tile") == 0     ? run_tile(ctx, argv[2])
                                             : fail("unknown test", argv[1]);
  weft_finalize(ctx);
  return rc;
}
