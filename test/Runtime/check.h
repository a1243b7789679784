/*
 * Checks for the runtime tests (runtime_test.c, gpu/peer_test.c): a failed
 * check prints "rank R: FAIL file:line: ..." on stderr and exits 1. A test
 * sets g_rank once it knows its rank and keeps its context in g_ctx, whose
 * last error the failure messages quote.
 */
#ifndef WEFT_TEST_RUNTIME_CHECK_H
#define WEFT_TEST_RUNTIME_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/runtime.h"

static int g_rank = -1;
static weft_context *g_ctx;

#define FAIL(...)                                                              \
  do {                                                                         \
    fprintf(stderr, "rank %d: FAIL %s:%d: ", g_rank, __FILE__, __LINE__);      \
    fprintf(stderr, __VA_ARGS__);                                              \
    fprintf(stderr, "\n");                                                     \
    exit(1);                                                                   \
  } while (0)

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond))                                                               \
      FAIL("check failed: %s", #cond);                                         \
  } while (0)

#define CHECK_OK(call)                                                         \
  do {                                                                         \
    weft_status s_ = (call);                                                   \
    if (s_ != WEFT_SUCCESS)                                                    \
      FAIL("%s -> %s: %s", #call, weft_status_string(s_),                      \
           weft_last_error(g_ctx));                                            \
  } while (0)

/* call must fail with want, and the message must contain text. */
#define CHECK_FAILS(call, want, text)                                          \
  do {                                                                         \
    weft_status s_ = (call);                                                   \
    const char *m_ = weft_last_error(g_ctx);                                   \
    if (s_ != (want) || !strstr(m_, (text)))                                   \
      FAIL("%s -> %s \"%s\", expected %s containing \"%s\"", #call,            \
           weft_status_string(s_), m_, weft_status_string(want), (text));      \
  } while (0)

/* The rank weft-run gave this process (0 without weft-run), for the cases
 * that report failures before weft_init has said so. */
static inline int env_rank(void) {
  const char *rank = getenv("WEFT_RANK");
  return rank ? atoi(rank) : 0;
}

/* The default options, on backend. */
static inline weft_init_options options_for(weft_backend backend) {
  weft_init_options o;
  weft_init_options_default(&o);
  o.backend = backend;
  return o;
}

/* weft_init into g_ctx (and g_rank), which must succeed. */
static inline void init_ok(const weft_init_options *o) {
  CHECK_OK(weft_init(o, &g_ctx));
  g_rank = weft_rank(g_ctx);
}

#endif /* WEFT_TEST_RUNTIME_CHECK_H */
