/*
 * expect_exit: runs a command, relays its output, and checks how it ended.
 *
 *   expect_exit [--status 0|nonzero] [--within SECONDS] [--output TEXT]...
 *               -- CMD [ARGS...]
 *
 * Used for the tests where a rank is meant to fail: weft-run must exit
 * non-zero, within a bound, and say which rank failed and how.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  int want_zero = 0;
  double within = 0;
  const char *texts[16];
  int num_texts = 0, i = 1;
  for (; i < argc; ++i) {
    if (!strcmp(argv[i], "--")) {
      ++i;
      break;
    }
    if (i + 1 >= argc)
      break;
    if (!strcmp(argv[i], "--status"))
      want_zero = !strcmp(argv[++i], "0");
    else if (!strcmp(argv[i], "--within"))
      within = atof(argv[++i]);
    else if (!strcmp(argv[i], "--output") && num_texts < 16)
      texts[num_texts++] = argv[++i];
    else
      break;
  }
  if (i >= argc) {
    fprintf(stderr, "usage: expect_exit [--status 0|nonzero] [--within S] "
                    "[--output TEXT]... -- CMD...\n");
    return 2;
  }
  int pipefd[2];
  if (pipe(pipefd) != 0)
    return 2;
  double start = now_s();
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipefd[1], 1);
    dup2(pipefd[1], 2);
    close(pipefd[0]);
    close(pipefd[1]);
    execvp(argv[i], argv + i);
    perror(argv[i]);
    _exit(127);
  }
  close(pipefd[1]);
  size_t len = 0, cap = 1 << 16;
  char *out = malloc(cap);
  for (;;) {
    if (len + 1 == cap)
      out = realloc(out, cap *= 2);
    ssize_t n = read(pipefd[0], out + len, cap - len - 1);
    if (n <= 0)
      break;
    fwrite(out + len, 1, (size_t)n, stdout);
    len += (size_t)n;
  }
  out[len] = 0;
  int status;
  waitpid(pid, &status, 0);
  double elapsed = now_s() - start;
  int ok = 1;
  int zero = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  printf("expect_exit: command ended (%s %d) after %.2f s\n",
         WIFEXITED(status) ? "status" : "signal",
         WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), elapsed);
  if (zero != want_zero) {
    printf("expect_exit: FAIL: expected %s exit\n", want_zero ? "a zero" : "a non-zero");
    ok = 0;
  }
  if (within > 0 && elapsed > within) {
    printf("expect_exit: FAIL: took longer than %g s\n", within);
    ok = 0;
  }
  for (int t = 0; t < num_texts; ++t)
    if (!strstr(out, texts[t])) {
      printf("expect_exit: FAIL: output lacks \"%s\"\n", texts[t]);
      ok = 0;
    }
  free(out);
  return ok ? 0 : 1;
}
