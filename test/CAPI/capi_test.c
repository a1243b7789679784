/*
 * libWeftCAPI as ctypes uses it: one process, one compiler, many compiles,
 * every failure a status plus a message and never an exit. Each check
 * prints what it saw when it fails; the last line is "N passed, N failed".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/compiler.h"

static int passed, failed;

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (cond) {                                                                \
      ++passed;                                                                \
    } else {                                                                   \
      ++failed;                                                                \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);          \
      fprintf(stderr, __VA_ARGS__);                                            \
      fputc('\n', stderr);                                                     \
    }                                                                          \
  } while (0)

static const char kernel[] =
    "func.func @put(%dst: !weft.ptr<i32>, %v: i32) attributes {weft.kernel} {\n"
    "  %r = weft.rank : i32\n"
    "  %n = weft.num_ranks : i32\n"
    "  %c1 = arith.constant 1 : i32\n"
    "  %next = arith.addi %r, %c1 : i32\n"
    "  %peer = arith.remui %next, %n : i32\n"
    "  %p = weft.translate %dst, %peer : !weft.ptr<i32>\n"
    "  weft.store release sys %p, %v : !weft.ptr<i32>\n"
    "  return\n"
    "}\n";

/* A release load: the verifier must reject it with a located message. */
static const char bad_order[] =
    "func.func @k(%p: !weft.ptr<i32>) attributes {weft.kernel} {\n"
    "  %v = weft.load release sys %p : !weft.ptr<i32>\n"
    "  return\n"
    "}\n";

static int contains(const void *data, size_t size, const char *needle) {
  size_t n = strlen(needle);
  for (size_t i = 0; i + n <= size; ++i)
    if (!memcmp((const char *)data + i, needle, n))
      return 1;
  return 0;
}

/* Compiles `kernel` for target and checks that artifact `name` holds
 * `needle` (or, for ELF artifacts, starts with the ELF magic). */
static void compile_for(weft_compiler *c, const char *target, const char *name,
                        const char *needle) {
  weft_compile_options o;
  weft_compile_options_default(&o);
  o.target = target;
  weft_artifacts *a = NULL;
  weft_status st = weft_compile(c, kernel, sizeof kernel - 1, &o, &a);
  CHECK(st == WEFT_SUCCESS, "%s: %s: %s", target, weft_status_string(st),
        weft_compiler_last_error(c));
  if (st != WEFT_SUCCESS)
    return;
  const void *data;
  size_t size;
  st = weft_artifacts_get(a, name, &data, &size);
  CHECK(st == WEFT_SUCCESS, "%s: no artifact %s in %s", target, name,
        weft_artifacts_names(a));
  if (st == WEFT_SUCCESS)
    CHECK(contains(data, size < 4096 ? size : 4096, needle),
          "%s: artifact %s lacks '%s'", target, name, needle);
  const char *names = weft_artifacts_names(a);
  CHECK(strncmp(names, "weft,", 5) == 0 && contains(names, strlen(names), ",llir"),
        "%s: names '%s'", target, names);
  CHECK(weft_artifacts_get(a, "nonesuch", &data, &size) == WEFT_ERROR_NOT_FOUND,
        "unknown artifact name");
  weft_artifacts_destroy(a);
}

static void expect_failure(weft_compiler *c, const char *ir,
                           const weft_compile_options *o, weft_status want,
                           const char *message) {
  weft_artifacts *a = (weft_artifacts *)1;
  weft_status st = weft_compile(c, ir, strlen(ir), o, &a);
  CHECK(st == want, "got %s, want %s (%s)", weft_status_string(st),
        weft_status_string(want), weft_compiler_last_error(c));
  CHECK(a == NULL, "artifacts set on failure");
  CHECK(strstr(weft_compiler_last_error(c), message) != NULL,
        "message '%s' lacks '%s'", weft_compiler_last_error(c), message);
}

int main(void) {
  weft_compiler *c = NULL;
  weft_status st = weft_compiler_create(&c);
  CHECK(st == WEFT_SUCCESS && c, "create: %s", weft_status_string(st));
  if (!c)
    return 1;
  CHECK(strncmp(weft_compiler_version(), "weft ", 5) == 0, "version '%s'",
        weft_compiler_version());

  /* The same compiler, every target, twice: state must not leak between
   * compiles. */
  for (int round = 0; round < 2; ++round) {
    compile_for(c, "host", "so", "\177ELF");
    compile_for(c, "host", "llir", "define");
    compile_for(c, "cuda:90", "ptx", ".target sm_90");
    compile_for(c, "cuda:90", "ptx", "st.release.sys");
    compile_for(c, "cuda:90", "kernels", "\"early_start\":true");
    compile_for(c, "hip:gfx942", "hsaco", "\177ELF");
    compile_for(c, "hip:gfx942", "amdgcn", "gfx942");
  }
  CHECK(weft_compiler_last_error(c)[0] == '\0', "error after success: '%s'",
        weft_compiler_last_error(c));

  weft_compile_options o;
  weft_compile_options_default(&o);
  expect_failure(c, bad_order, &o, WEFT_ERROR_COMPILE, "error:");
  expect_failure(c, bad_order, &o, WEFT_ERROR_COMPILE, "release");
  expect_failure(c, "func.func @k( {", &o, WEFT_ERROR_COMPILE, "<input>:1:");
  o.target = "cuda:12";
  expect_failure(c, kernel, &o, WEFT_ERROR_INVALID_ARGUMENT, "cuda:12");
  o.target = "tpu";
  expect_failure(c, kernel, &o, WEFT_ERROR_INVALID_ARGUMENT, "tpu");
  weft_compile_options_default(&o);
  o.num_warps = 3;
  expect_failure(c, kernel, &o, WEFT_ERROR_INVALID_ARGUMENT, "num_warps");
  o.num_warps = 4;
  o.opt_level = 7;
  expect_failure(c, kernel, &o, WEFT_ERROR_INVALID_ARGUMENT, "opt_level");

  /* After failures, the compiler still works. */
  compile_for(c, "host", "so", "\177ELF");

  char *text = NULL;
  st = weft_run_pipeline(c, kernel, sizeof kernel - 1,
                         "builtin.module(weft-lower{target=host})", &text);
  CHECK(st == WEFT_SUCCESS && text && strstr(text, "llvm.func"),
        "pipeline: %s: %s", weft_status_string(st), weft_compiler_last_error(c));
  weft_string_free(text);
  text = (char *)1;
  st = weft_run_pipeline(c, kernel, sizeof kernel - 1, "builtin.module(nonesuch)",
                         &text);
  CHECK(st == WEFT_ERROR_COMPILE && text == NULL, "bad pipeline: %s",
        weft_status_string(st));
  CHECK(strstr(weft_compiler_last_error(c), "nonesuch") != NULL,
        "bad pipeline message '%s'", weft_compiler_last_error(c));

  /* NULL arguments are statuses, not crashes. */
  CHECK(weft_compile(NULL, kernel, 1, NULL, NULL) == WEFT_ERROR_INVALID_ARGUMENT,
        "NULL compiler");
  CHECK(weft_compile(c, NULL, 0, NULL, NULL) == WEFT_ERROR_INVALID_ARGUMENT,
        "NULL ir");
  CHECK(weft_artifacts_get(NULL, "so", NULL, NULL) == WEFT_ERROR_INVALID_ARGUMENT,
        "NULL artifacts");
  CHECK(weft_compiler_create(NULL) == WEFT_ERROR_INVALID_ARGUMENT, "NULL out");

  CHECK(weft_compiler_destroy(c) == WEFT_SUCCESS, "destroy");
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
