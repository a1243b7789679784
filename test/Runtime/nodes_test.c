/*
 * Jobs across nodes, on one machine: weft-run --local-size K runs N ranks
 * as N/K simulated nodes that meet over TCP on the loopback, map only their
 * node's heaps and reach other nodes through the host engine (MPI).
 *
 *   nodes_test layout            the node layout, what is mapped, peer ptrs
 *   nodes_test engine KERNELS    put (with a signal) and get across nodes,
 *                                and a put past the end of its allocation
 *   nodes_test tcp [VICTIM]      the bootstrap over TCP alone: collectives,
 *                                a wrong token, a rank lost across nodes
 *   nodes_test no_address        a job across nodes given no TCP address
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "internal.h"

static int expected_local_size(void) {
  const char *k = getenv("WEFT_LOCAL_SIZE");
  CHECK(k != NULL);
  return atoi(k);
}

static void init_host(void) {
  weft_init_options o = options_for(WEFT_BACKEND_HOST);
  o.heap_size = 4u << 20;
  init_ok(&o);
}

static int test_layout(void) {
  init_host();
  int n = weft_num_ranks(g_ctx), local = expected_local_size();
  int node = g_rank / local;
  CHECK(weft_local_size(g_ctx) == local && weft_node(g_ctx) == node &&
        weft_num_nodes(g_ctx) == n / local);
  weft_kernel_context k;
  CHECK_OK(weft_get_kernel_context(g_ctx, &k));
  CHECK(k.local_rank == g_rank % local && k.local_size == local && k.node == node &&
        k.num_nodes == n / local && k.abi_version == WEFT_ABI_VERSION);
  CHECK((k.engine != 0) == (n / local > 1));
  void *buf, *peer;
  CHECK_OK(weft_malloc(g_ctx, 4096, &buf));
  for (int r = 0; r < n; ++r) {
    int same_node = r / local == node;
    CHECK((k.heap_base[r] != 0) == same_node);
    if (same_node) {
      CHECK_OK(weft_peer_ptr(g_ctx, buf, r, &peer));
      CHECK(peer == (char *)(uintptr_t)k.heap_base[r] + ((char *)buf - (char *)(uintptr_t)k.heap_base[g_rank]));
    } else {
      char expect[96];
      snprintf(expect, sizeof expect, "rank %d is on node %d, not on this rank's node %d",
               r, r / local, node);
      CHECK_FAILS(weft_peer_ptr(g_ctx, buf, r, &peer), WEFT_ERROR_INVALID_ARGUMENT, expect);
    }
  }
  /* A node's ranks share memory: what one writes, the others read. */
  int64_t *mine = buf;
  mine[0] = 1000 + g_rank;
  CHECK_OK(weft_barrier(g_ctx));
  for (int j = 0; j < local; ++j) {
    int r = node * local + j;
    CHECK_OK(weft_peer_ptr(g_ctx, buf, r, &peer));
    CHECK(((int64_t *)peer)[0] == 1000 + r);
  }
  CHECK_OK(weft_free(g_ctx, buf));
  CHECK_OK(weft_finalize(g_ctx));
  return 0;
}

static int test_engine(const char *so) {
  setenv("WEFT_WAIT_TIMEOUT", "20", 1);
  init_host();
  int n = weft_num_ranks(g_ctx);
  weft_module *m;
  weft_kernel *put_ring, *get_previous;
  CHECK_OK(weft_module_load_file(g_ctx, so, WEFT_MODULE_AUTO, &m));
  CHECK_OK(weft_module_get_kernel(m, "put_ring", &put_ring));
  CHECK_OK(weft_module_get_kernel(m, "get_previous", &get_previous));
  enum { COUNT = 1000 };
  int64_t *src, *dst, local[COUNT];
  uint64_t *flag;
  CHECK_OK(weft_malloc(g_ctx, COUNT * sizeof *src, (void **)&src));
  CHECK_OK(weft_malloc(g_ctx, COUNT * sizeof *dst, (void **)&dst));
  CHECK_OK(weft_malloc(g_ctx, sizeof *flag, (void **)&flag));
  *flag = 0;
  int prev = (g_rank + n - 1) % n;
  weft_launch_config two = {{2, 1, 1}, 0, 0, NULL, 0, {1, 1, 1}};
  for (uint64_t epoch = 1; epoch <= 3; ++epoch) {
    for (int i = 0; i < COUNT; ++i)
      src[i] = (int64_t)epoch * 1000000 + g_rank * 10000 + i;
    CHECK_OK(weft_barrier(g_ctx)); /* nobody reads src before it is written */
    int64_t count = COUNT;
    void *args[] = {&src, &dst, &flag, &count, &epoch};
    CHECK_OK(weft_launch(put_ring, &two, args, 5));
    for (int i = 0; i < COUNT; ++i)
      if (dst[i] != (int64_t)epoch * 1000000 + prev * 10000 + i)
        FAIL("epoch %llu: dst[%d] = %lld from rank %d", (unsigned long long)epoch, i,
             (long long)dst[i], prev);
    int64_t *local_ptr = local;
    void *get_args[] = {&local_ptr, &src, &count};
    CHECK_OK(weft_launch(get_previous, &two, get_args, 3));
    CHECK(memcmp(local, dst, sizeof local) == 0);
    CHECK_OK(weft_barrier(g_ctx));
  }
  /* A put that runs past the end of its allocation fails where it is
   * checked, on the rank that made it, and the next launch is clean. */
  int64_t too_many = COUNT + 64;
  uint64_t epoch = 9;
  void *bad_args[] = {&src, &dst, &flag, &too_many, &epoch};
  weft_launch_config one = {{1, 1, 1}, 0, 0, NULL, 0, {1, 1, 1}};
  int next = (g_rank + 1) % n;
  if (weft_node(g_ctx) != next / weft_local_size(g_ctx)) {
    char expect[160];
    snprintf(expect, sizeof expect, "put of %lld bytes with rank %d at heap offset 0x",
             (long long)(too_many * 8), next);
    CHECK_FAILS(weft_launch(put_ring, &one, bad_args, 5), WEFT_ERROR_INVALID_ARGUMENT,
                expect);
    CHECK(strstr(weft_last_error(g_ctx), "runs past the end of its allocation"));
  }
  int64_t count = COUNT, *local_ptr = local;
  void *get_args[] = {&local_ptr, &src, &count};
  CHECK_OK(weft_launch(get_previous, &one, get_args, 3));
  CHECK_OK(weft_barrier(g_ctx));
  CHECK_OK(weft_module_unload(m));
  CHECK_OK(weft_finalize(g_ctx));
  return 0;
}

/* The world's bootstrap over TCP (weft-run --local-size sets
 * WEFT_BOOTSTRAP_ADDR): collectives, then a rank that presents the wrong
 * token is refused, then (with a victim) a lost rank is named by everyone. */
static int test_tcp(int victim) {
  weft_env_info env;
  CHECK_OK(weft_env_detect(&env));
  g_rank = env.rank;
  const char *address = getenv("WEFT_BOOTSTRAP_ADDR");
  CHECK(address != NULL);
  weft_bootstrap_config config = {env.rank, env.world_size, env.job_id, 30, 30, address};
  weft_bootstrap *bs;
  CHECK_OK(weft_bootstrap_open(&config, &bs));
  int32_t mine = 100 + env.rank, all[WEFT_MAX_RANKS];
  CHECK_OK(weft_bootstrap_allgather(bs, &mine, sizeof mine, all));
  for (int r = 0; r < env.world_size; ++r)
    CHECK(all[r] == 100 + r);
  /* Descriptors travel only between the ranks of one host. */
  CHECK_FAILS(weft_bootstrap_allgather_fd(bs, 0, (int *)all), WEFT_ERROR_INVALID_ARGUMENT,
              "descriptors travel only");
  CHECK_OK(weft_bootstrap_barrier(bs));
  if (victim < 0) {
    weft_bootstrap_close(bs);
    return 0;
  }
  if (env.rank == victim)
    _exit(0);
  char name[32];
  snprintf(name, sizeof name, "lost rank %d", victim);
  weft_status st = WEFT_SUCCESS;
  for (int i = 0; i < 1000 && st == WEFT_SUCCESS; ++i)
    st = weft_bootstrap_barrier(bs);
  if (st != WEFT_ERROR_PEER_LOST || !strstr(weft_thread_error(), name))
    FAIL("expected WEFT_ERROR_PEER_LOST naming rank %d, got %s: %s", victim,
         weft_status_string(st), weft_thread_error());
  weft_bootstrap_close(bs);
  return 0;
}

/* Without the job's token a rank cannot join over TCP: rank 1 presents
 * another one and is refused; rank 0 gives up naming the refusal. */
static int test_tcp_token(void) {
  weft_env_info env;
  CHECK_OK(weft_env_detect(&env));
  g_rank = env.rank;
  if (env.rank == 1)
    setenv("WEFT_JOB_TOKEN", "not-the-job-token", 1);
  weft_bootstrap_config config = {env.rank, env.world_size, env.job_id, 3, 30,
                                  getenv("WEFT_BOOTSTRAP_ADDR")};
  weft_bootstrap *bs = NULL;
  weft_status st = weft_bootstrap_open(&config, &bs);
  CHECK(st == WEFT_ERROR_AUTH && bs == NULL);
  CHECK(strstr(weft_thread_error(), env.rank == 1 ? "wrong job token" : "rejected"));
  /* Without any token the address is refused outright. */
  unsetenv("WEFT_JOB_TOKEN");
  st = weft_bootstrap_open(&config, &bs);
  CHECK(st == WEFT_ERROR_AUTH && strstr(weft_thread_error(), "needs WEFT_JOB_TOKEN"));
  return 0;
}

/* Without an address the nodes meet on this host's Unix socket, which a
 * rank on another host never reaches: rank 1 plays it (it never joins),
 * and rank 0's timeout says what a job across hosts needs. */
static int test_no_address(void) {
  unsetenv("WEFT_BOOTSTRAP_ADDR");
  weft_env_info env;
  CHECK_OK(weft_env_detect(&env));
  g_rank = env.rank;
  if (env.rank != 0)
    return 0;
  weft_init_options o = options_for(WEFT_BACKEND_HOST);
  o.timeout_s = 2;
  weft_context *ctx = NULL;
  CHECK_FAILS(weft_init(&o, &ctx), WEFT_ERROR_TIMEOUT,
              "a job across hosts meets over TCP: set MASTER_ADDR");
  CHECK(ctx == NULL);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: nodes_test CASE [ARGS]\n");
    return 2;
  }
  const char *c = argv[1];
  if (!strcmp(c, "layout")) return test_layout();
  if (!strcmp(c, "engine") && argc > 2) return test_engine(argv[2]);
  if (!strcmp(c, "tcp")) return test_tcp(argc > 2 ? atoi(argv[2]) : -1);
  if (!strcmp(c, "tcp_token")) return test_tcp_token();
  if (!strcmp(c, "no_address")) return test_no_address();
  fprintf(stderr, "nodes_test: unknown case '%s'\n", c);
  return 2;
}
