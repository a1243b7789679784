/*
 * Host-side collectives over the bootstrap's sockets (rendezvous.c forms
 * them: a star around rank 0).
 *
 * A collective is a gather to rank 0 and a broadcast back, which also lets
 * rank 0 notice a lost rank while waiting for any of them and tell
 * everybody which rank it was. Over Unix-domain sockets a collective may
 * carry one file descriptor per rank (SCM_RIGHTS).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap.h"

enum { FRAME_DATA = 1, FRAME_ERROR = 2 };

typedef struct frame_header {
  uint32_t type;
  uint32_t seq;
  uint64_t len;
  int32_t status; /* FRAME_ERROR: the status every rank returns */
  uint32_t num_fds;
} frame_header;

double weft_bs_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int weft_bs_poll_ms(double deadline) {
  if (deadline <= 0)
    return -1;
  double left = deadline - weft_bs_now();
  return left <= 0 ? 0 : (int)(left * 1000) + 1;
}

void weft_bs_sleep(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  nanosleep(&ts, NULL);
}

uint64_t weft_hash_string(const char *s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *s; ++s)
    h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return h;
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
  return poll(&pfd, 1, weft_bs_poll_ms(deadline)) == 0 ? -1 : 1;
}

int weft_bs_send_all(int fd, const void *buf, size_t len, double deadline) {
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

int weft_bs_recv_all(int fd, void *buf, size_t len, double deadline, int *fds,
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
  int r = weft_bs_send_all(fd, (const char *)h + n, sizeof *h - (size_t)n, deadline);
  if (r == 1 && h->len)
    r = weft_bs_send_all(fd, payload, h->len, deadline);
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
  broadcast_error(bs, st, weft_thread_error(), weft_bs_now() + 1.0);
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
  double deadline = weft_bs_now() + 0.1;
  if (weft_bs_recv_all(bs->fds[0], &h, sizeof h, deadline, NULL, NULL, 0) == 1 &&
      h.type == FRAME_ERROR && h.len > 0 && h.len <= sizeof msg &&
      weft_bs_recv_all(bs->fds[0], msg, h.len, deadline, NULL, NULL, 0) == 1) {
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
  r = weft_bs_recv_all(fd, &h, sizeof h, deadline, fds, &got_fds,
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
  r = weft_bs_recv_all(fd, payload, h.len, deadline, NULL, NULL, 0);
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
  } else if (len) { /* h.len is len * size */
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
      int ready = poll(pfds, (nfds_t)(n - 1), weft_bs_poll_ms(deadline));
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
    int r = weft_bs_recv_all(bs->fds[p], &h, sizeof h, deadline, &fd_in, &got, 1);
    char *payload = NULL;
    if (r == 1 && h.len <= (1ull << 32) && (payload = malloc(h.len ? h.len : 1)))
      r = weft_bs_recv_all(bs->fds[p], payload, h.len, deadline, NULL, NULL, 0);
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
  double deadline = bs->op_timeout_s > 0 ? weft_bs_now() + bs->op_timeout_s : 0;
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
  if (!bs->passes_fds && bs->size > 1)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "allgather_fd: descriptors "
                     "travel only between ranks of one host (a node's bootstrap)");
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
