/*
 * weft-run: start N ranks of a command on this host.
 *
 *   weft-run -n N [--local-size K] [--backend host|cuda|hip] [--timeout S]
 *            -- CMD [ARGS...]
 *
 * Each rank gets WEFT_RANK, WEFT_WORLD_SIZE, WEFT_LOCAL_RANK, a unique
 * WEFT_JOB_ID and a random WEFT_JOB_TOKEN (and WEFT_BACKEND when given).
 * Each rank runs in its own process group, so stopping it reaches its
 * children too. If a rank fails (non-zero exit or a signal) or the timeout
 * expires, weft-run says which rank and how, sends SIGTERM to the others,
 * SIGKILL after WEFT_RUN_GRACE seconds (default 5), and exits non-zero.
 * SIGINT, SIGTERM and SIGHUP are forwarded to every rank.
 *
 * --local-size K runs the ranks as N/K simulated nodes of K consecutive
 * ranks (WEFT_LOCAL_SIZE): peers on other nodes are reached only through
 * the job's engine, and the ranks meet over TCP on the loopback
 * (WEFT_BOOTSTRAP_ADDR), as on separate machines. The host backend's engine
 * is MPI, which only an MPI launcher starts: with --backend host (or
 * WEFT_BACKEND=host) and more than one node, the ranks run under `mpirun`
 * ($WEFT_MPIRUN, else the one on PATH), which stops them all when one
 * fails, and weft-run watches it as its one child.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "weft/abi.h"

#define POLL_INTERVAL_S 0.01

static volatile sig_atomic_t received_signal;

static void on_signal(int sig) { received_signal = sig; }

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void sleep_s(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  nanosleep(&ts, NULL);
}

static void usage(FILE *f) {
  fprintf(f, "usage: weft-run -n N [--local-size K] [--backend host|cuda|hip] "
             "[--timeout S] -- CMD [ARGS...]\n");
}

/* A loopback TCP address nobody listens on now, for rank 0 to listen on. */
static int free_loopback_address(char *out, size_t size) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = {0};
  socklen_t len = sizeof a;
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int ok = fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
           getsockname(fd, (struct sockaddr *)&a, &len) == 0;
  if (fd >= 0)
    close(fd);
  if (!ok)
    return -1;
  snprintf(out, size, "127.0.0.1:%u", (unsigned)ntohs(a.sin_port));
  return 0;
}

/* mpirun's command line for the host backend's jobs across nodes: every
 * rank on this host (oversubscribed, unbound: a rank's programs are
 * threads), the environment inherited. */
static char **mpirun_command(int n, char **cmd) {
  size_t count = 0;
  while (cmd[count])
    ++count;
  char **argv = calloc(count + 16, sizeof *argv);
  static char ranks[16];
  snprintf(ranks, sizeof ranks, "%d", n);
  const char *mpirun = getenv("WEFT_MPIRUN");
  size_t i = 0;
  argv[i++] = (char *)(mpirun && *mpirun ? mpirun : "mpirun");
  argv[i++] = "-n";
  argv[i++] = ranks;
  argv[i++] = "--oversubscribe";
  argv[i++] = "--bind-to";
  argv[i++] = "none";
  if (geteuid() == 0)
    argv[i++] = "--allow-run-as-root";
  for (size_t c = 0; c <= count; ++c)
    argv[i++] = cmd[c];
  return argv;
}

static int random_hex(char *out, size_t bytes) {
  unsigned char raw[64];
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  ssize_t got = fd >= 0 ? read(fd, raw, bytes) : -1;
  if (fd >= 0)
    close(fd);
  if (got != (ssize_t)bytes)
    return -1;
  for (size_t i = 0; i < bytes; ++i)
    snprintf(out + 2 * i, 3, "%02x", raw[i]);
  return 0;
}

typedef struct rank_proc {
  pid_t pid;
  int running;
} rank_proc;

static void signal_all(rank_proc *ranks, int n, int sig) {
  for (int r = 0; r < n; ++r)
    if (ranks[r].running)
      killpg(ranks[r].pid, sig); /* the rank and whatever it started */
}

/* child: a rank's number, or -1 for mpirun (which stands for them all). */
static void describe(int child, int status) {
  char who[32];
  snprintf(who, sizeof who, child < 0 ? "mpirun (the ranks)" : "rank %d", child);
  if (WIFSIGNALED(status))
    fprintf(stderr, "weft-run: %s killed by signal %d (%s)\n", who,
            WTERMSIG(status), strsignal(WTERMSIG(status)));
  else
    fprintf(stderr, "weft-run: %s exited with status %d\n", who,
            WEXITSTATUS(status));
}

/* Reaps every rank that has ended; returns the number reaped. */
static int reap(rank_proc *ranks, int n, int under_mpirun, int *failed_rank,
                int *failed_status) {
  int reaped = 0;
  for (;;) {
    int status;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0)
      return reaped;
    for (int r = 0; r < n; ++r) {
      if (ranks[r].pid != pid || !ranks[r].running)
        continue;
      ranks[r].running = 0;
      ++reaped;
      int bad = WIFSIGNALED(status) || WEXITSTATUS(status) != 0;
      if (bad && *failed_rank < 0) {
        *failed_rank = r;
        *failed_status = status;
        describe(under_mpirun ? -1 : r, status);
      }
    }
  }
}

int main(int argc, char **argv) {
  int n = 0, local_size = 0;
  const char *backend = NULL;
  double timeout = 0;
  int i = 1;
  for (; i < argc; ++i) {
    const char *a = argv[i];
    if (!strcmp(a, "--")) {
      ++i;
      break;
    }
    if ((!strcmp(a, "-n") || !strcmp(a, "--nranks")) && i + 1 < argc) {
      n = atoi(argv[++i]);
    } else if (!strcmp(a, "--local-size") && i + 1 < argc) {
      char *end;
      long k = strtol(argv[++i], &end, 10);
      if (*end || k < 1 || k > WEFT_MAX_RANKS) {
        fprintf(stderr, "weft-run: bad --local-size '%s'\n", argv[i]);
        return 2;
      }
      local_size = (int)k;
    } else if (!strcmp(a, "--backend") && i + 1 < argc) {
      backend = argv[++i];
    } else if (!strcmp(a, "--timeout") && i + 1 < argc) {
      char *end;
      timeout = strtod(argv[++i], &end);
      if (*end || timeout < 0) {
        fprintf(stderr, "weft-run: bad --timeout '%s'\n", argv[i]);
        return 2;
      }
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      return 0;
    } else if (a[0] != '-') {
      break; /* the command, without a "--" */
    } else {
      fprintf(stderr, "weft-run: unknown option '%s'\n", a);
      usage(stderr);
      return 2;
    }
  }
  if (n < 1 || n > WEFT_MAX_RANKS || i >= argc) {
    fprintf(stderr, "weft-run: need -n N (1..%d) and a command\n", WEFT_MAX_RANKS);
    usage(stderr);
    return 2;
  }
  if (backend && strcmp(backend, "host") && strcmp(backend, "cuda") &&
      strcmp(backend, "hip")) {
    fprintf(stderr, "weft-run: unknown backend '%s' (host, cuda or hip)\n",
            backend);
    return 2;
  }
  if (local_size && n % local_size) {
    fprintf(stderr, "weft-run: --local-size %d does not divide %d ranks into "
                    "nodes\n", local_size, n);
    return 2;
  }
  char **cmd = argv + i;
  int spans_nodes = local_size && local_size < n;
  const char *chosen = backend ? backend : getenv("WEFT_BACKEND");
  int under_mpirun = spans_nodes && chosen && !strcmp(chosen, "host");
  char address[64] = "", size_text[16];
  snprintf(size_text, sizeof size_text, "%d", local_size);
  if (spans_nodes && free_loopback_address(address, sizeof address)) {
    fprintf(stderr, "weft-run: no loopback TCP port for the ranks to meet on: "
                    "%s\n", strerror(errno));
    return 1;
  }

  char nonce[17], token[65], job_id[64];
  if (random_hex(nonce, 8) || random_hex(token, 32)) {
    fprintf(stderr, "weft-run: cannot read /dev/urandom\n");
    return 1;
  }
  snprintf(job_id, sizeof job_id, "weft-run-%ld-%s", (long)getpid(), nonce);
  double grace = 5;
  const char *g = getenv("WEFT_RUN_GRACE");
  if (g && *g)
    grace = atof(g);

  struct sigaction sa = {0};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);

  rank_proc ranks[WEFT_MAX_RANKS] = {{0}};
  int failed_rank = -1, failed_status = 0, exit_code = 0, running = 0;
  /* Under mpirun there is one child, mpirun, standing for every rank. */
  int children = under_mpirun ? 1 : n;
  for (int r = 0; r < children; ++r) {
    pid_t pid = fork();
    if (pid < 0) {
      fprintf(stderr, "weft-run: fork: %s\n", strerror(errno));
      exit_code = 1;
      break;
    }
    if (pid == 0) {
      setpgid(0, 0);
      signal(SIGINT, SIG_DFL);
      signal(SIGTERM, SIG_DFL);
      signal(SIGHUP, SIG_DFL);
      char num[16];
      setenv("WEFT_JOB_ID", job_id, 1);
      setenv("WEFT_JOB_TOKEN", token, 1);
      if (backend)
        setenv("WEFT_BACKEND", backend, 1);
      if (local_size)
        setenv("WEFT_LOCAL_SIZE", size_text, 1);
      if (address[0])
        setenv("WEFT_BOOTSTRAP_ADDR", address, 1);
      if (under_mpirun) { /* the ranks take mpirun's numbering */
        unsetenv("WEFT_RANK");
        unsetenv("WEFT_LOCAL_RANK");
        unsetenv("WEFT_WORLD_SIZE");
        char **mpi = mpirun_command(n, cmd);
        execvp(mpi[0], mpi);
        fprintf(stderr, "weft-run: cannot run %s: %s (the host backend reaches "
                "other nodes through MPI; install Open MPI or set "
                "WEFT_MPIRUN)\n", mpi[0], strerror(errno));
        _exit(127);
      }
      snprintf(num, sizeof num, "%d", r);
      setenv("WEFT_RANK", num, 1);
      setenv("WEFT_LOCAL_RANK", num, 1);
      snprintf(num, sizeof num, "%d", n);
      setenv("WEFT_WORLD_SIZE", num, 1);
      execvp(cmd[0], cmd);
      fprintf(stderr, "weft-run: rank %d: cannot run %s: %s\n", r, cmd[0],
              strerror(errno));
      _exit(127);
    }
    setpgid(pid, pid); /* also here: no window where a kill misses it */
    ranks[r] = (rank_proc){pid, 1};
    ++running;
  }

  double start = now_s(), kill_at = 0;
  int stopping = exit_code != 0;
  if (stopping) {
    signal_all(ranks, n, SIGTERM);
    kill_at = now_s() + grace;
  }
  while (running > 0) {
    running -= reap(ranks, n, under_mpirun, &failed_rank, &failed_status);
    if (running == 0)
      break;
    if (received_signal) {
      int sig = received_signal;
      received_signal = 0;
      fprintf(stderr, "weft-run: received signal %d (%s); passing it to the "
                      "ranks\n", sig, strsignal(sig));
      signal_all(ranks, n, sig);
      if (!stopping) {
        stopping = 1;
        exit_code = 128 + sig;
        kill_at = now_s() + grace;
      }
    }
    if (!stopping && failed_rank >= 0) {
      stopping = 1;
      fprintf(stderr, "weft-run: stopping the other %d rank(s)\n", running);
      signal_all(ranks, n, SIGTERM);
      kill_at = now_s() + grace;
    }
    if (!stopping && timeout > 0 && now_s() - start > timeout) {
      stopping = 1;
      exit_code = 124;
      fprintf(stderr, "weft-run: timed out after %g s; stopping %d rank(s)\n",
              timeout, running);
      signal_all(ranks, n, SIGTERM);
      kill_at = now_s() + grace;
    }
    if (stopping && kill_at > 0 && now_s() > kill_at) {
      fprintf(stderr, "weft-run: %d rank(s) still running after %g s; "
                      "sending SIGKILL\n", running, grace);
      signal_all(ranks, n, SIGKILL);
      kill_at = 0;
    }
    sleep_s(POLL_INTERVAL_S);
  }
  if (exit_code)
    return exit_code;
  if (failed_rank >= 0)
    return WIFSIGNALED(failed_status) ? 128 + WTERMSIG(failed_status)
                                      : WEXITSTATUS(failed_status);
  return 0;
}
