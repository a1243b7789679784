/*
 * libweft-mpi.so: off-node transfers of host jobs over MPI-3 one-sided
 * communication (transport.h says what each entry promises).
 *
 * The heap of every rank is one window (MPI_Win_create over the memory the
 * host backend already maps), locked once for the job's life in a shared
 * passive-target epoch, so a put is MPI_Put, a completion MPI_Win_flush,
 * an atomic MPI_Accumulate (MPI_REPLACE or MPI_SUM) flushed at once.
 *
 * Progress: a rank whose programs spin on a flag makes no MPI call, and
 * many MPI implementations advance passive-target operations (connection
 * set-up, emulated atomics) only inside MPI calls of the target. A thread
 * per rank keeps calling into MPI (MPI_Iprobe, then a short sleep), and
 * every pair of ranks exchanges one operation while all of them are still
 * in MPI at set-up, so connections exist before any kernel runs.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "transport.h"

#define PROGRESS_SLEEP_NS 20000 /* between MPI_Iprobe calls of an idle rank */

typedef struct mpi_state {
  MPI_Comm comm;     /* the job's ranks, numbered as Weft numbers them */
  MPI_Comm progress; /* probed by the progress thread; carries no messages */
  MPI_Win win;
  int win_made, locked, comm_made, progress_made;
  pthread_t thread;
  int thread_started;
  atomic_int stop;
  pthread_mutex_t error_lock;
  char error[512];
} mpi_state;

static void fail(mpi_state *s, const char *call, int code, const char *fmt, ...) {
  char what[256] = "";
  if (fmt) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
  }
  char reason[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (code != MPI_SUCCESS)
    MPI_Error_string(code, reason, &len);
  pthread_mutex_lock(&s->error_lock);
  if (!s->error[0]) /* the first failure is the cause */
    snprintf(s->error, sizeof s->error, "mpi transport: %s%s%s%s%s", call,
             what[0] ? " " : "", what, reason[0] ? ": " : "", reason);
  pthread_mutex_unlock(&s->error_lock);
}

#define CHECK(s, call, args, ...)                                              \
  do {                                                                         \
    int code_ = call args;                                                     \
    if (code_ != MPI_SUCCESS) {                                                \
      fail(s, #call, code_, __VA_ARGS__);                                      \
      return -1;                                                               \
    }                                                                          \
  } while (0)

static void *progress_loop(void *arg) {
  mpi_state *s = arg;
  struct timespec pause = {0, PROGRESS_SLEEP_NS};
  while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, s->progress, &flag, MPI_STATUS_IGNORE);
    nanosleep(&pause, NULL);
  }
  return NULL;
}

/* MPI's components are plugins resolving symbols of libmpi: loaded from a
 * library that was itself dlopen'ed privately (as Python loads libweft),
 * they would not find them. */
static void make_mpi_global(void) {
  static const char *const names[] = {"libmpi.so.40", "libmpi.so.12", "libmpi.so"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
    if (dlopen(names[i], RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD))
      return;
}

static void finalize_at_exit(void) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    MPI_Finalize();
}

static int start_mpi(mpi_state *s) {
  int started = 0, provided = 0;
  MPI_Initialized(&started);
  if (!started) {
    make_mpi_global();
    CHECK(s, MPI_Init_thread, (NULL, NULL, MPI_THREAD_MULTIPLE, &provided), NULL);
    atexit(finalize_at_exit);
  } else {
    MPI_Query_thread(&provided);
  }
  if (provided < MPI_THREAD_MULTIPLE) {
    fail(s, "MPI_Init_thread", MPI_SUCCESS, "gave thread level %d, not "
         "MPI_THREAD_MULTIPLE (every program of a host launch is a thread)",
         provided);
    return -1;
  }
  return 0;
}

static int mpi_open(int rank, int num_ranks, void *heap, size_t heap_size,
                    void **out) {
  mpi_state *s = calloc(1, sizeof *s);
  *out = s;
  if (!s)
    return -1;
  pthread_mutex_init(&s->error_lock, NULL);
  if (start_mpi(s))
    return -1;
  int size = 0, mine = -1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != num_ranks) {
    fail(s, "MPI_Comm_size", MPI_SUCCESS, "is %d but the job has %d ranks: "
         "start every rank with one MPI launcher (weft-run --local-size does)",
         size, num_ranks);
    return -1;
  }
  /* Weft's rank may come from another launcher's variables: order by it. */
  CHECK(s, MPI_Comm_split, (MPI_COMM_WORLD, 0, rank, &s->comm), NULL);
  s->comm_made = 1;
  MPI_Comm_rank(s->comm, &mine);
  if (mine != rank) {
    fail(s, "MPI_Comm_split", MPI_SUCCESS, "numbered rank %d as %d: two ranks "
         "claim one rank number", rank, mine);
    return -1;
  }
  CHECK(s, MPI_Comm_dup, (s->comm, &s->progress), NULL);
  s->progress_made = 1;
  MPI_Info info;
  MPI_Info_create(&info);
  /* Flags are updated by atomics and read by plain loads of the target's
   * own threads; the puts beside them are plain data. */
  MPI_Info_set(info, "accumulate_ordering", "none");
  MPI_Info_set(info, "same_disp_unit", "true");
  int code = MPI_Win_create(heap, (MPI_Aint)heap_size, 1, info, s->comm, &s->win);
  MPI_Info_free(&info);
  if (code != MPI_SUCCESS) {
    fail(s, "MPI_Win_create", code, "over the %zu-byte heap", heap_size);
    return -1;
  }
  s->win_made = 1;
  CHECK(s, MPI_Win_lock_all, (MPI_MODE_NOCHECK, s->win), NULL);
  s->locked = 1;
  if (pthread_create(&s->thread, NULL, progress_loop, s)) {
    fail(s, "pthread_create", MPI_SUCCESS, "(the progress thread)");
    return -1;
  }
  s->thread_started = 1;
  /* Connect every pair now, while every rank is inside MPI. */
  uint64_t word;
  for (int p = 0; p < num_ranks; ++p)
    CHECK(s, MPI_Get, (&word, 8, MPI_BYTE, p, 0, 8, MPI_BYTE, s->win), "from rank %d", p);
  CHECK(s, MPI_Win_flush_all, (s->win), NULL);
  CHECK(s, MPI_Barrier, (s->comm), NULL);
  return 0;
}

static void mpi_close(void *state) {
  mpi_state *s = state;
  if (!s)
    return;
  if (s->locked)
    MPI_Win_unlock_all(s->win);
  if (s->win_made)
    MPI_Win_free(&s->win); /* collective: every rank's puts are done */
  if (s->thread_started) {
    atomic_store(&s->stop, 1);
    pthread_join(s->thread, NULL);
  }
  if (s->progress_made)
    MPI_Comm_free(&s->progress);
  if (s->comm_made)
    MPI_Comm_free(&s->comm);
  pthread_mutex_destroy(&s->error_lock);
  free(s);
}

static const char *mpi_error(void *state) {
  mpi_state *s = state;
  return s && s->error[0] ? s->error : "mpi transport: out of host memory";
}

/* MPI_Put (get 0) or MPI_Get (get 1) of n bytes between `local` and peer's
 * heap at offset; MPI counts are ints, so large ones go in pieces. */
static int transfer(mpi_state *s, int get, void *local, uint64_t offset, size_t n,
                    int peer) {
  const size_t piece = (size_t)1 << 30;
  for (size_t done = 0; done < n; done += piece) {
    int count = (int)(n - done < piece ? n - done : piece);
    char *at = (char *)local + done;
    MPI_Aint disp = (MPI_Aint)(offset + done);
    int code = get ? MPI_Get(at, count, MPI_BYTE, peer, disp, count, MPI_BYTE, s->win)
                   : MPI_Put(at, count, MPI_BYTE, peer, disp, count, MPI_BYTE, s->win);
    if (code != MPI_SUCCESS) {
      fail(s, get ? "MPI_Get" : "MPI_Put", code, "of %zu bytes %s rank %d", n,
           get ? "from" : "to", peer);
      return -1;
    }
  }
  return 0;
}

static int mpi_put(void *state, uint64_t offset, const void *src, size_t n, int peer) {
  return transfer(state, 0, (void *)(uintptr_t)src, offset, n, peer);
}

static int mpi_get(void *state, void *dst, uint64_t offset, size_t n, int peer) {
  mpi_state *s = state;
  if (transfer(s, 1, dst, offset, n, peer))
    return -1;
  CHECK(s, MPI_Win_flush, (peer, s->win), "to rank %d", peer);
  return 0;
}

static int mpi_atomic(void *state, uint64_t offset, uint64_t value, int add,
                      int bytes, int peer) {
  mpi_state *s = state;
  uint32_t narrow = (uint32_t)value;
  const void *origin = bytes == 4 ? (const void *)&narrow : (const void *)&value;
  MPI_Datatype type = bytes == 4 ? MPI_UINT32_T : MPI_UINT64_T;
  CHECK(s, MPI_Accumulate, (origin, 1, type, peer, (MPI_Aint)offset, 1, type,
                            add ? MPI_SUM : MPI_REPLACE, s->win),
        "on rank %d", peer);
  /* The origin is on this stack: complete before returning. */
  CHECK(s, MPI_Win_flush, (peer, s->win), "to rank %d", peer);
  return 0;
}

static int mpi_flush(void *state, int peer) {
  mpi_state *s = state;
  if (peer < 0)
    CHECK(s, MPI_Win_flush_all, (s->win), NULL);
  else
    CHECK(s, MPI_Win_flush, (peer, s->win), "to rank %d", peer);
  return 0;
}

static const weft_transport transport = {
    .version = WEFT_TRANSPORT_VERSION,
    .name = "mpi",
    .open = mpi_open,
    .close = mpi_close,
    .error = mpi_error,
    .put = mpi_put,
    .get = mpi_get,
    .atomic = mpi_atomic,
    .flush = mpi_flush,
};

__attribute__((visibility("default"))) const weft_transport *weft_transport_get(void) {
  return &transport;
}
