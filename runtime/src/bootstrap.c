/*
 * Rendezvous and host-side collectives over Unix-domain sockets.
 *
 * Star topology: rank 0 listens on a socket in a private directory keyed by
 * the job id, every other rank connects to it. A collective is a gather to
 * rank 0 and a broadcast back, which also lets rank 0 notice a lost rank
 * while waiting for any of them and tell everybody which rank it was.
 *
 * Admission: the directory is 0700 and owned by us, the peer's uid is
 * checked with SO_PEERCRED, and a joining rank must present the job token
 * (WEFT_JOB_TOKEN, or a random token rank 0 writes to a 0600 file there).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define MAGIC 0x54464557u /* "WEFT" */
#define PROTOCOL_VERSION 1u
#define TOKEN_LEN 64

enum { FRAME_DATA = 1, FRAME_ERROR = 2 };

typedef struct frame_header {
  uint32_t type;
  uint32_t seq;
  uint64_t len;
  int32_t status; /* FRAME_ERROR: the status every rank returns */
  uint32_t num_fds;
} frame_header;

typedef struct hello {
  uint32_t magic;
  uint32_t version;
  int32_t rank;
  int32_t world_size;
  uint64_t job_hash;
  char token[TOKEN_LEN];
} hello;

typedef struct ack {
  uint32_t magic;
  int32_t status;
  char message[256];
} ack;

struct weft_bootstrap {
  int rank;
  int size;
  int *fds; /* rank 0: fds[r] connects to rank r; others: fds[0] to rank 0 */
  double op_timeout_s;
  uint32_t seq;
  weft_status broken; /* after a lost peer every collective fails at once */
  char broken_message[WEFT_ERROR_MAX];
};

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* poll() timeout until deadline (0: none). */
static int poll_ms(double deadline) {
  if (deadline <= 0)
    return -1;
  double left = deadline - now_s();
  return left <= 0 ? 0 : (int)(left * 1000) + 1;
}

static void sleep_s(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  nanosleep(&ts, NULL);
}

static uint64_t fnv1a(const char *s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *s; ++s)
    h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return h;
}

/* ---- private directory, socket path, token ---- */

static weft_status private_dir(const char *path) {
  if (mkdir(path, 0700) != 0 && errno != EEXIST)
    return weft_fail(WEFT_ERROR_BOOTSTRAP, "bootstrap: cannot create %s: %s",
                     path, strerror(errno));
  struct stat st;
  if (lstat(path, &st) != 0)
    return weft_fail(WEFT_ERROR_BOOTSTRAP, "bootstrap: %s: %s", path,
                     strerror(errno));
  /* Anything else could be another user's trap: refuse rather than fix. */
  if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
    return weft_fail(WEFT_ERROR_AUTH,
                     "bootstrap: %s must be a directory owned by uid %d with "
                     "mode 0700", path, (int)geteuid());
  return WEFT_SUCCESS;
}

typedef struct paths {
  char dir[160];
  char socket[192];
  char token[192];
} paths;

static weft_status make_paths(const char *job_id, paths *p) {
  char base[64];
  const char *xdg = getenv("XDG_RUNTIME_DIR");
  weft_status st;
  if (xdg && *xdg == '/' && strlen(xdg) < 48 && access(xdg, W_OK) == 0) {
    snprintf(base, sizeof base, "%s/weft", xdg);
  } else {
    snprintf(base, sizeof base, "/tmp/weft-%d", (int)geteuid());
  }
  if ((st = private_dir(base)) != WEFT_SUCCESS)
    return st;
  /* A readable prefix of the id for humans, its hash for uniqueness. */
  char name[32];
  size_t n = 0;
  for (const char *c = job_id; *c && n < 24; ++c)
    name[n++] = (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                        "0123456789-_.", *c)) ? *c : '_';
  name[n] = 0;
  snprintf(p->dir, sizeof p->dir, "%s/%s-%016llx", base, name,
           (unsigned long long)fnv1a(job_id));
  snprintf(p->socket, sizeof p->socket, "%s/rank0.sock", p->dir);
  snprintf(p->token, sizeof p->token, "%s/token", p->dir);
  if (strlen(p->socket) >= sizeof(((struct sockaddr_un *)0)->sun_path))
    return weft_fail(WEFT_ERROR_BOOTSTRAP,
                     "bootstrap: socket path %s is too long", p->socket);
  return private_dir(p->dir);
}

static weft_status random_token(char token[TOKEN_LEN]) {
  unsigned char raw[TOKEN_LEN / 2];
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  ssize_t got = fd >= 0 ? read(fd, raw, sizeof raw) : -1;
  if (fd >= 0)
    close(fd);
  if (got != (ssize_t)sizeof raw)
    return weft_fail(WEFT_ERROR_BOOTSTRAP, "bootstrap: cannot read "
                     "/dev/urandom for the job token");
  static const char hex[] = "0123456789abcdef";
  for (size_t i = 0; i < sizeof raw; ++i) { /* exactly TOKEN_LEN, no NUL */
    token[2 * i] = hex[raw[i] >> 4];
    token[2 * i + 1] = hex[raw[i] & 15];
  }
  return WEFT_SUCCESS;
}

/* The token goes to a temporary file renamed into place, so a reader never
 * sees half of it. */
static weft_status write_token(const paths *p, const char token[TOKEN_LEN]) {
  char tmp[sizeof p->token + 16];
  snprintf(tmp, sizeof tmp, "%s.%d", p->token, (int)getpid());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    return weft_fail(WEFT_ERROR_BOOTSTRAP, "bootstrap: %s: %s", tmp,
                     strerror(errno));
  ssize_t put = write(fd, token, TOKEN_LEN);
  close(fd);
  if (put != TOKEN_LEN || rename(tmp, p->token) != 0) {
    unlink(tmp);
    return weft_fail(WEFT_ERROR_BOOTSTRAP, "bootstrap: cannot write %s",
                     p->token);
  }
  return WEFT_SUCCESS;
}

static int read_token(const paths *p, char token[TOKEN_LEN]) {
  int fd = open(p->token, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return 0;
  ssize_t got = read(fd, token, TOKEN_LEN);
  close(fd);
  return got == TOKEN_LEN;
}

/* The token from the environment, normalised to TOKEN_LEN bytes. */
static int env_token(char token[TOKEN_LEN]) {
  const char *t = getenv("WEFT_JOB_TOKEN");
  if (!t || !*t)
    return 0;
  memset(token, 0, TOKEN_LEN);
  memcpy(token, t, strnlen(t, TOKEN_LEN));
  return 1;
}

static int token_equal(const char *a, const char *b) {
  unsigned char diff = 0;
  for (int i = 0; i < TOKEN_LEN; ++i)
    diff |= (unsigned char)(a[i] ^ b[i]);
  return diff == 0;
}

/* ---- framed, timed socket I/O ---- */

/* After a socket call on fd failed (errno says why): 1 to call it again
 * (interrupted, or fd became ready for `events`), 0: the peer is gone,
 * -1: timed out. */
static int retry(int fd, short events, double deadline) {
  if (errno == EINTR)
    return 1;
  if (errno != EAGAIN && errno != EWOULDBLOCK)
    return 0;
  struct pollfd pfd = {fd, events, 0};
  return poll(&pfd, 1, poll_ms(deadline)) == 0 ? -1 : 1;
}

/* 1: sent, 0: the peer is gone, -1: timed out. */
static int send_all(int fd, const void *buf, size_t len, double deadline) {
  const char *p = buf;
  while (len) {
    ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
    if (n > 0) {
      p += n;
      len -= (size_t)n;
      continue;
    }
    int r = n < 0 ? retry(fd, POLLOUT, deadline) : 0;
    if (r != 1)
      return r;
  }
  return 1;
}

/* Room for one SCM_RIGHTS message of up to WEFT_MAX_RANKS descriptors. */
typedef union control_buf {
  struct cmsghdr align;
  char buf[CMSG_SPACE(sizeof(int) * WEFT_MAX_RANKS)];
} control_buf;

/* Receives exactly len bytes; SCM_RIGHTS descriptors that arrive are
 * appended to fds (up to max_fds, extras are closed). 1 / 0 gone / -1 timed out. */
static int recv_all(int fd, void *buf, size_t len, double deadline, int *fds,
                    unsigned *num_fds, unsigned max_fds) {
  char *p = buf;
  while (len) {
    control_buf control;
    struct iovec iov = {p, len};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1,
                         .msg_control = control.buf,
                         .msg_controllen = sizeof control.buf};
    ssize_t n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0) {
      int r = retry(fd, POLLIN, deadline);
      if (r != 1)
        return r;
      continue;
    }
    if (n == 0)
      return 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
        continue;
      size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      int *in = (int *)CMSG_DATA(c);
      for (size_t i = 0; i < count; ++i) {
        if (fds && *num_fds < max_fds)
          fds[(*num_fds)++] = in[i];
        else
          close(in[i]);
      }
    }
    p += n;
    len -= (size_t)n;
  }
  return 1;
}

static int send_frame(int fd, const frame_header *h, const void *payload,
                      const int *fds, double deadline) {
  control_buf control;
  struct iovec iov = {(void *)h, sizeof *h};
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
  if (h->num_fds) {
    memset(&control, 0, sizeof control);
    msg.msg_control = control.buf;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * h->num_fds);
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * h->num_fds);
    memcpy(CMSG_DATA(c), fds, sizeof(int) * h->num_fds);
  }
  /* The descriptors ride on the header's bytes; the rest is a plain stream. */
  ssize_t n;
  for (;;) {
    n = sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (n >= 0)
      break;
    int r = retry(fd, POLLOUT, deadline);
    if (r != 1)
      return r;
  }
  int r = send_all(fd, (const char *)h + n, sizeof *h - (size_t)n, deadline);
  if (r == 1 && h->len)
    r = send_all(fd, payload, h->len, deadline);
  return r;
}

static void close_fds(int *fds, unsigned n) {
  for (unsigned i = 0; i < n; ++i)
    if (fds[i] >= 0)
      close(fds[i]);
}

/* ---- failure reporting ---- */

static weft_status lost(weft_bootstrap *bs, int peer, const char *how) {
  bs->broken = weft_fail(WEFT_ERROR_PEER_LOST, "rank %d lost rank %d (%s)",
                         bs->rank, peer, how);
  snprintf(bs->broken_message, sizeof bs->broken_message, "%s",
           weft_thread_error());
  return bs->broken;
}

static weft_status timed_out(weft_bootstrap *bs, int peer) {
  bs->broken = weft_fail(WEFT_ERROR_TIMEOUT,
                         "rank %d: timed out after %g s waiting for rank %d "
                         "in a host collective (WEFT_COLLECTIVE_TIMEOUT)",
                         bs->rank, bs->op_timeout_s, peer);
  snprintf(bs->broken_message, sizeof bs->broken_message, "%s",
           weft_thread_error());
  return bs->broken;
}

/* Rank 0 tells every remaining rank why the collective failed. */
static void broadcast_error(weft_bootstrap *bs, weft_status status,
                            const char *message, double deadline) {
  frame_header h = {FRAME_ERROR, bs->seq, strlen(message) + 1, status, 0};
  for (int r = 1; r < bs->size; ++r)
    if (bs->fds[r] >= 0)
      send_frame(bs->fds[r], &h, message, NULL, deadline);
}

/* Rank 0 gives up on a collective: every rank learns why (the calling
 * thread's message), and the descriptors gathered so far are closed. */
static weft_status root_abort(weft_bootstrap *bs, weft_status st, int *fds) {
  broadcast_error(bs, st, weft_thread_error(), now_s() + 1.0);
  if (fds)
    close_fds(fds, (unsigned)bs->size);
  return st;
}

/* ---- the collective: gather at rank 0, broadcast back ---- */

/* Rank 0 went away: if it left word of why (a lost rank it saw first), that
 * is the better report. */
static weft_status root_gone(weft_bootstrap *bs) {
  frame_header h;
  char msg[WEFT_ERROR_MAX];
  double deadline = now_s() + 0.1;
  if (recv_all(bs->fds[0], &h, sizeof h, deadline, NULL, NULL, 0) == 1 &&
      h.type == FRAME_ERROR && h.len > 0 && h.len <= sizeof msg &&
      recv_all(bs->fds[0], msg, h.len, deadline, NULL, NULL, 0) == 1) {
    msg[h.len - 1] = 0;
    bs->broken = weft_fail((weft_status)h.status, "%s", msg);
    snprintf(bs->broken_message, sizeof bs->broken_message, "%s", msg);
    return bs->broken;
  }
  return lost(bs, 0, "connection closed: it exited or crashed");
}

static weft_status collective_peer(weft_bootstrap *bs, const void *mine,
                                   size_t len, void *all, int myfd, int *fds,
                                   double deadline) {
  int fd = bs->fds[0];
  frame_header h = {FRAME_DATA, bs->seq, len, 0, myfd >= 0 ? 1u : 0u};
  int r = send_frame(fd, &h, mine, &myfd, deadline);
  if (r == 0)
    return root_gone(bs);
  if (r < 0)
    return timed_out(bs, 0);
  unsigned got_fds = 0;
  r = recv_all(fd, &h, sizeof h, deadline, fds, &got_fds,
               fds ? (unsigned)bs->size : 0);
  if (r == 0)
    return lost(bs, 0, "connection closed: it exited or crashed");
  if (r < 0)
    return timed_out(bs, 0);
  char *payload = malloc(h.len ? h.len : 1);
  if (!payload) {
    close_fds(fds, got_fds);
    return lost(bs, 0, "out of host memory for its message");
  }
  r = recv_all(fd, payload, h.len, deadline, NULL, NULL, 0);
  weft_status st = WEFT_SUCCESS;
  if (r == 0)
    st = lost(bs, 0, "connection closed: it exited or crashed");
  else if (r < 0)
    st = timed_out(bs, 0);
  else if (h.type == FRAME_ERROR) {
    payload[h.len ? h.len - 1 : 0] = 0;
    st = weft_fail((weft_status)h.status, "%s", payload);
    if (h.status == WEFT_ERROR_PEER_LOST || h.status == WEFT_ERROR_TIMEOUT) {
      bs->broken = (weft_status)h.status;
      snprintf(bs->broken_message, sizeof bs->broken_message, "%s", payload);
    }
  } else if (h.len != len * (size_t)bs->size ||
             got_fds != (fds ? (unsigned)bs->size : 0u)) {
    st = lost(bs, 0, "protocol error");
  } else if (h.len) {
    memcpy(all, payload, h.len);
  }
  free(payload);
  if (st != WEFT_SUCCESS)
    close_fds(fds, got_fds);
  return st;
}

static weft_status collective_root(weft_bootstrap *bs, const void *mine,
                                   size_t len, void *all, int myfd, int *fds,
                                   double deadline) {
  int n = bs->size;
  char mismatch[512] = "";
  weft_status st = WEFT_SUCCESS;
  if (len)
    memcpy(all, mine, len);
  if (fds) {
    for (int r = 0; r < n; ++r)
      fds[r] = -1;
    if ((fds[0] = fcntl(myfd, F_DUPFD_CLOEXEC, 0)) < 0)
      return weft_fail(WEFT_ERROR_BOOTSTRAP, "bootstrap: dup: %s",
                       strerror(errno));
  }
  struct pollfd pfds[WEFT_MAX_RANKS];
  for (int p = 1; p < n && st == WEFT_SUCCESS; ++p) {
    /* Wait for rank p, but watch every other rank for a hang-up. */
    for (;;) {
      for (int q = 1; q < n; ++q) {
        short events = (short)(POLLRDHUP | (q == p ? POLLIN : 0));
        pfds[q - 1] = (struct pollfd){bs->fds[q], events, 0};
      }
      int ready = poll(pfds, (nfds_t)(n - 1), poll_ms(deadline));
      if (ready < 0 && errno == EINTR)
        continue;
      if (ready == 0) {
        st = timed_out(bs, p);
        break;
      }
      int dead = -1;
      for (int q = 1; q < n; ++q)
        if (q != p && (pfds[q - 1].revents & (POLLRDHUP | POLLHUP | POLLERR)))
          dead = q;
      if (dead > 0) {
        st = lost(bs, dead, "connection closed: it exited or crashed");
        break;
      }
      if (pfds[p - 1].revents)
        break;
    }
    if (st != WEFT_SUCCESS)
      break;
    frame_header h;
    unsigned got = 0;
    int fd_in = -1;
    int r = recv_all(bs->fds[p], &h, sizeof h, deadline, &fd_in, &got, 1);
    char *payload = NULL;
    if (r == 1 && h.len <= (1ull << 32) && (payload = malloc(h.len ? h.len : 1)))
      r = recv_all(bs->fds[p], payload, h.len, deadline, NULL, NULL, 0);
    else if (r == 1)
      r = 0;
    if (r == 0)
      st = lost(bs, p, "connection closed: it exited or crashed");
    else if (r < 0)
      st = timed_out(bs, p);
    else if (h.type != FRAME_DATA)
      st = lost(bs, p, "protocol error");
    else if (h.len != len || h.seq != bs->seq || (got == 1) != (myfd >= 0)) {
      /* Keep reading the others so that every rank stays in step. */
      if (!mismatch[0])
        snprintf(mismatch, sizeof mismatch,
                 "ranks disagree on a collective call (host collective #%u): "
                 "rank 0 exchanges %zu bytes%s, rank %d exchanges %llu "
                 "bytes%s (host collective #%u); e.g. weft_malloc on one rank "
                 "and weft_barrier on another",
                 bs->seq, len, myfd >= 0 ? " and a descriptor" : "", p,
                 (unsigned long long)h.len, got ? " and a descriptor" : "",
                 h.seq);
      if (got)
        close(fd_in);
    } else {
      if (len)
        memcpy((char *)all + (size_t)p * len, payload, len);
      if (fds)
        fds[p] = fd_in;
    }
    free(payload);
  }
  if (st == WEFT_SUCCESS && mismatch[0])
    st = weft_fail(WEFT_ERROR_ASYMMETRIC, "%s", mismatch);
  if (st != WEFT_SUCCESS)
    return root_abort(bs, st, fds);
  frame_header h = {FRAME_DATA, bs->seq, len * (uint64_t)n, 0,
                    fds ? (uint32_t)n : 0u};
  for (int p = 1; p < n; ++p) {
    int r = send_frame(bs->fds[p], &h, all, fds, deadline);
    if (r != 1) {
      st = r == 0 ? lost(bs, p, "connection closed: it exited or crashed")
                  : timed_out(bs, p);
      return root_abort(bs, st, fds);
    }
  }
  return WEFT_SUCCESS;
}

static weft_status collective(weft_bootstrap *bs, const void *mine, size_t len,
                              void *all, int myfd, int *fds) {
  if (bs->broken)
    return weft_fail(bs->broken, "%s", bs->broken_message);
  if (bs->size == 1) {
    if (len)
      memcpy(all, mine, len);
    if (fds && (fds[0] = fcntl(myfd, F_DUPFD_CLOEXEC, 0)) < 0)
      return weft_fail(WEFT_ERROR_BOOTSTRAP, "bootstrap: dup: %s",
                       strerror(errno));
    return WEFT_SUCCESS;
  }
  ++bs->seq;
  double deadline = bs->op_timeout_s > 0 ? now_s() + bs->op_timeout_s : 0;
  return bs->rank == 0 ? collective_root(bs, mine, len, all, myfd, fds, deadline)
                       : collective_peer(bs, mine, len, all, myfd, fds, deadline);
}

weft_status weft_bootstrap_allgather(weft_bootstrap *bs, const void *mine,
                                     size_t len, void *all) {
  if (!bs || (len && (!mine || !all)))
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "allgather: bad arguments");
  return collective(bs, mine, len, all, -1, NULL);
}

weft_status weft_bootstrap_allgather_fd(weft_bootstrap *bs, int myfd, int *fds) {
  if (!bs || myfd < 0 || !fds)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "allgather_fd: bad arguments");
  char dummy = 0, all[WEFT_MAX_RANKS];
  return collective(bs, &dummy, 1, all, myfd, fds);
}

weft_status weft_bootstrap_barrier(weft_bootstrap *bs) {
  if (!bs)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "barrier: no bootstrap");
  return collective(bs, NULL, 0, NULL, -1, NULL);
}

/* One rank's verdict in weft_bootstrap_agree, ahead of its payload. */
typedef struct verdict {
  int32_t status;
  char message[252];
} verdict;

weft_status weft_bootstrap_agree(weft_bootstrap *bs, weft_status mine,
                                 const void *payload, size_t len, void *all) {
  char own[WEFT_ERROR_MAX] = "";
  if (mine)
    snprintf(own, sizeof own, "%s", weft_thread_error());
  if (!bs || (len && (!payload || !all)))
    return mine ? weft_fail(mine, "%s", own)
                : weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "agree: bad arguments");
  size_t rec = sizeof(verdict) + len;
  char *buf = calloc((size_t)bs->size + 1, rec);
  if (!buf)
    return mine ? mine : weft_fail(WEFT_ERROR_OUT_OF_MEMORY,
                                   "bootstrap: out of host memory");
  verdict v = {(int32_t)mine, ""};
  snprintf(v.message, sizeof v.message, "%s", own);
  memcpy(buf, &v, sizeof v);
  if (len)
    memcpy(buf + sizeof v, payload, len);
  char *everyone = buf + rec;
  weft_status st = weft_bootstrap_allgather(bs, buf, rec, everyone);
  for (int r = 0; st == WEFT_SUCCESS && !mine && r < bs->size; ++r) {
    const char *theirs = everyone + (size_t)r * rec;
    memcpy(&v, theirs, sizeof v);
    v.message[sizeof v.message - 1] = 0;
    if (v.status != WEFT_SUCCESS)
      st = weft_fail((weft_status)v.status, "rank %d: %s", r, v.message);
    else if (len)
      memcpy((char *)all + (size_t)r * len, theirs + sizeof v, len);
  }
  free(buf);
  return mine ? weft_fail(mine, "%s", own) : st;
}

/* ---- rendezvous ---- */

static int set_nonblocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  return flags < 0 ? -1 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

static void reply(int fd, weft_status status, const char *message) {
  ack a = {MAGIC, status, ""};
  snprintf(a.message, sizeof a.message, "%s", message);
  send_all(fd, &a, sizeof a, now_s() + 1.0);
}

/* A Unix-domain stream socket (flags: SOCK_NONBLOCK or 0) and the address
 * of the job's rank-0 socket. */
static weft_status job_socket(const paths *p, int flags, int *fd,
                              struct sockaddr_un *addr) {
  *fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | flags, 0);
  if (*fd < 0)
    return weft_fail(WEFT_ERROR_BOOTSTRAP, "bootstrap: socket: %s",
                     strerror(errno));
  memset(addr, 0, sizeof *addr);
  addr->sun_family = AF_UNIX;
  memcpy(addr->sun_path, p->socket, strlen(p->socket) + 1); /* fits */
  return WEFT_SUCCESS;
}

static weft_status root_accept(weft_bootstrap *bs, const paths *p,
                               const char token[TOKEN_LEN], uint64_t job_hash,
                               double deadline) {
  int lfd;
  struct sockaddr_un addr;
  weft_status st = job_socket(p, SOCK_NONBLOCK, &lfd, &addr);
  if (st != WEFT_SUCCESS)
    return st;
  unlink(p->socket); /* a crashed earlier run of this job id */
  if (bind(lfd, (struct sockaddr *)&addr, sizeof addr) != 0 ||
      chmod(p->socket, 0600) != 0 || listen(lfd, WEFT_MAX_RANKS) != 0) {
    st = weft_fail(WEFT_ERROR_BOOTSTRAP, "bootstrap: cannot listen on %s: %s",
                   p->socket, strerror(errno));
    close(lfd);
    unlink(p->socket);
    return st;
  }
  int joined = 1, rejected = 0;
  char why[256] = "";
  while (joined < bs->size) {
    struct pollfd pfd = {lfd, POLLIN, 0};
    int r = poll(&pfd, 1, poll_ms(deadline));
    if (r < 0 && errno == EINTR)
      continue;
    if (r == 0) {
      if (rejected)
        st = weft_fail(WEFT_ERROR_AUTH, "bootstrap: rank 0 timed out with "
                       "%d of %d ranks joined; rejected %d connection(s): %s",
                       joined, bs->size, rejected, why);
      else
        st = weft_fail(WEFT_ERROR_TIMEOUT, "bootstrap: rank 0 timed out with "
                       "%d of %d ranks joined at %s (every rank must run on "
                       "this host with the same job id)", joined, bs->size,
                       p->dir);
      break;
    }
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0)
      continue;
    struct ucred cred;
    socklen_t clen = sizeof cred;
    hello h;
    unsigned nfd = 0;
    weft_status verdict = WEFT_SUCCESS;
    const char *msg = "";
    /* A silent client must not stall the rendezvous for long. */
    double hello_deadline = now_s() + 2.0;
    if (deadline > 0 && deadline < hello_deadline)
      hello_deadline = deadline;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0 ||
        cred.uid != geteuid()) {
      verdict = WEFT_ERROR_AUTH;
      msg = "connection from another user";
    } else if (recv_all(fd, &h, sizeof h, hello_deadline, NULL, &nfd, 0) != 1 ||
               h.magic != MAGIC || h.version != PROTOCOL_VERSION) {
      verdict = WEFT_ERROR_AUTH;
      msg = "not a weft rank of this protocol version";
    } else if (h.job_hash != job_hash || !token_equal(h.token, token)) {
      verdict = WEFT_ERROR_AUTH;
      msg = "wrong job token";
    } else if (h.world_size != bs->size) {
      verdict = WEFT_ERROR_BOOTSTRAP;
      msg = "world size differs from rank 0's";
    } else if (h.rank <= 0 || h.rank >= bs->size || bs->fds[h.rank] >= 0) {
      verdict = WEFT_ERROR_BOOTSTRAP;
      msg = "rank out of range or already joined";
    }
    if (verdict != WEFT_SUCCESS) {
      reply(fd, verdict, msg);
      close(fd);
      ++rejected;
      snprintf(why, sizeof why, "%s", msg);
      continue;
    }
    reply(fd, WEFT_SUCCESS, "");
    bs->fds[h.rank] = fd;
    ++joined;
  }
  close(lfd);
  unlink(p->socket);
  return st;
}

static weft_status peer_connect(weft_bootstrap *bs, const paths *p,
                                uint64_t job_hash, double deadline) {
  char token[TOKEN_LEN];
  int from_env = env_token(token);
  double backoff = 0.005;
  char last[320] = "rank 0 never listened (every rank must run on one "
                    "host with the same job id)";
  weft_status last_status = WEFT_ERROR_TIMEOUT;
  for (;;) {
    if (deadline > 0 && now_s() >= deadline)
      return weft_fail(last_status, "bootstrap: rank %d could not join job "
                       "at %s: %s", bs->rank, p->dir, last);
    int fd;
    struct sockaddr_un addr;
    weft_status st = job_socket(p, 0, &fd, &addr);
    if (st != WEFT_SUCCESS)
      return st;
    /* Rank 0 writes the token before it listens, so reading it after
     * connecting never sees a stale token of an earlier run. */
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0 ||
        (!from_env && !read_token(p, token))) {
      close(fd);
      sleep_s(backoff);
      if (backoff < 0.1)
        backoff *= 2;
      continue;
    }
    set_nonblocking(fd);
    hello h = {MAGIC, PROTOCOL_VERSION, bs->rank, bs->size, job_hash, {0}};
    memcpy(h.token, token, TOKEN_LEN);
    ack a;
    unsigned nfd = 0;
    if (send_all(fd, &h, sizeof h, deadline) == 1 &&
        recv_all(fd, &a, sizeof a, deadline, NULL, &nfd, 0) == 1 &&
        a.magic == MAGIC) {
      if (a.status == WEFT_SUCCESS) {
        bs->fds[0] = fd;
        return WEFT_SUCCESS;
      }
      a.message[sizeof a.message - 1] = 0;
      close(fd);
      if (a.status == WEFT_ERROR_AUTH && from_env)
        return weft_fail(WEFT_ERROR_AUTH, "bootstrap: rank 0 of job at %s "
                         "rejected rank %d: %s", p->dir, bs->rank, a.message);
      if (a.status != WEFT_ERROR_AUTH)
        return weft_fail((weft_status)a.status, "bootstrap: rank 0 rejected "
                         "rank %d: %s", bs->rank, a.message);
      /* A token file token can be an earlier run's: read it again. */
      last_status = WEFT_ERROR_AUTH;
      snprintf(last, sizeof last, "rejected: %s", a.message);
    } else {
      close(fd);
    }
    sleep_s(backoff);
  }
}

weft_status weft_bootstrap_open(const weft_bootstrap_config *config,
                                weft_bootstrap **out) {
  *out = NULL;
  weft_bootstrap *bs = calloc(1, sizeof *bs);
  int *fds = calloc((size_t)config->world_size, sizeof(int));
  if (!bs || !fds) {
    free(bs);
    free(fds);
    return weft_fail(WEFT_ERROR_OUT_OF_MEMORY, "bootstrap: out of host memory");
  }
  bs->rank = config->rank;
  bs->size = config->world_size;
  bs->fds = fds;
  bs->op_timeout_s = config->op_timeout_s;
  for (int r = 0; r < bs->size; ++r)
    fds[r] = -1;
  if (bs->size == 1) {
    *out = bs;
    return WEFT_SUCCESS;
  }
  paths p;
  weft_status st = make_paths(config->job_id, &p);
  double deadline = config->connect_timeout_s > 0
                        ? now_s() + config->connect_timeout_s : 0;
  uint64_t job_hash = fnv1a(config->job_id);
  if (st == WEFT_SUCCESS && bs->rank == 0) {
    char token[TOKEN_LEN];
    if (!env_token(token)) {
      st = random_token(token);
      if (st == WEFT_SUCCESS)
        st = write_token(&p, token);
    }
    if (st == WEFT_SUCCESS)
      st = root_accept(bs, &p, token, job_hash, deadline);
    unlink(p.token);
    rmdir(p.dir);
  } else if (st == WEFT_SUCCESS) {
    st = peer_connect(bs, &p, job_hash, deadline);
  }
  if (st != WEFT_SUCCESS) {
    weft_bootstrap_close(bs);
    return st;
  }
  *out = bs;
  return WEFT_SUCCESS;
}

void weft_bootstrap_close(weft_bootstrap *bs) {
  if (!bs)
    return;
  for (int r = 0; r < bs->size; ++r)
    if (bs->fds[r] >= 0)
      close(bs->fds[r]);
  free(bs->fds);
  free(bs);
}
