/*
 * The bootstrap's two halves (not installed): rendezvous.c forms the star
 * of sockets (a Unix-domain socket in a private directory on one host, TCP
 * across hosts), bootstrap.c runs the host collectives over it. What they
 * share is here: the wire formats, the bootstrap itself and timed I/O.
 */
#ifndef WEFT_RUNTIME_BOOTSTRAP_H
#define WEFT_RUNTIME_BOOTSTRAP_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

#define WEFT_BS_MAGIC 0x54464557u /* "WEFT" */
#define WEFT_BS_PROTOCOL 2u
#define WEFT_BS_TOKEN_LEN 64

/* A joining rank's first message. */
typedef struct weft_bs_hello {
  uint32_t magic;
  uint32_t version;
  int32_t rank;
  int32_t world_size;
  uint64_t job_hash;
  char token[WEFT_BS_TOKEN_LEN];
} weft_bs_hello;

/* Rank 0's answer to it. */
typedef struct weft_bs_ack {
  uint32_t magic;
  int32_t status;
  char message[256];
} weft_bs_ack;

struct weft_bootstrap {
  int rank;
  int size;
  int *fds; /* rank 0: fds[r] connects to rank r; others: fds[0] to rank 0 */
  int passes_fds; /* Unix-domain sockets: descriptors can travel */
  double op_timeout_s;
  uint32_t seq;
  weft_status broken; /* after a lost peer every collective fails at once */
  char broken_message[WEFT_ERROR_MAX];
};

double weft_bs_now(void);
/* poll()'s timeout until deadline (0: none). */
int weft_bs_poll_ms(double deadline);
void weft_bs_sleep(double s);

/* 1: sent, 0: the peer is gone, -1: timed out. */
int weft_bs_send_all(int fd, const void *buf, size_t len, double deadline);
/* Receives exactly len bytes; SCM_RIGHTS descriptors that arrive are
 * appended to fds (up to max_fds, extras are closed). 1 / 0 gone / -1 timed
 * out. */
int weft_bs_recv_all(int fd, void *buf, size_t len, double deadline, int *fds,
                     unsigned *num_fds, unsigned max_fds);

#endif /* WEFT_RUNTIME_BOOTSTRAP_H */
