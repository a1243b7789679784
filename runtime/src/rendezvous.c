/*
 * Rendezvous: the bootstrap's star of sockets around rank 0.
 *
 * On one host (the default) rank 0 listens on a Unix-domain socket in a
 * private directory keyed by the job id. Admission: the directory is 0700
 * and owned by us, the peer's uid is checked with SO_PEERCRED, and a
 * joining rank must present the job token (WEFT_JOB_TOKEN, or a random
 * token rank 0 writes to a 0600 file there).
 *
 * Across hosts rank 0 listens on a TCP address every rank is given
 * (weft_bootstrap_address). No file or credential is shared there, so the
 * job token is the whole admission: WEFT_JOB_TOKEN must be set alike on
 * every rank. Descriptors cannot travel over TCP; what passes them (the
 * host heap's memfds) uses a node's own bootstrap, a Unix one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "bootstrap.h"

#define TOKEN_LEN WEFT_BS_TOKEN_LEN

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
           (unsigned long long)weft_hash_string(job_id));
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

/* ---- where rank 0 listens ---- */

typedef struct endpoint {
  struct sockaddr_storage addr;
  socklen_t len;
  const paths *unix_paths; /* a Unix-domain endpoint's, else NULL */
  char name[WEFT_BOOTSTRAP_ADDRESS_MAX + 8]; /* for messages */
} endpoint;

static void unix_endpoint(const paths *p, endpoint *ep) {
  memset(ep, 0, sizeof *ep);
  struct sockaddr_un *a = (struct sockaddr_un *)&ep->addr;
  a->sun_family = AF_UNIX;
  memcpy(a->sun_path, p->socket, strlen(p->socket) + 1); /* fits */
  ep->len = sizeof *a;
  ep->unix_paths = p;
  snprintf(ep->name, sizeof ep->name, "%s", p->dir);
}

/* "host:port" or "[v6]:port" as a TCP endpoint. */
static weft_status tcp_endpoint(const char *address, endpoint *ep) {
  memset(ep, 0, sizeof *ep);
  snprintf(ep->name, sizeof ep->name, "%s", address);
  char host[WEFT_BOOTSTRAP_ADDRESS_MAX];
  snprintf(host, sizeof host, "%s", address);
  char *colon = strrchr(host, ':');
  if (!colon || !colon[1] || colon == host)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "bootstrap: address '%s' is "
                     "not host:port", address);
  *colon = 0;
  const char *port = colon + 1, *name = host;
  if (host[0] == '[' && colon[-1] == ']') {
    colon[-1] = 0;
    ++name;
  }
  struct addrinfo hints = {0}, *found = NULL;
  hints.ai_socktype = SOCK_STREAM;
  int err = getaddrinfo(name, port, &hints, &found);
  if (err || !found)
    return weft_fail(WEFT_ERROR_BOOTSTRAP, "bootstrap: cannot resolve %s: %s",
                     address, err ? gai_strerror(err) : "no address");
  memcpy(&ep->addr, found->ai_addr, found->ai_addrlen);
  ep->len = found->ai_addrlen;
  freeaddrinfo(found);
  return WEFT_SUCCESS;
}

/* A stream socket of ep's family (flags: SOCK_NONBLOCK or 0). */
static weft_status endpoint_socket(const endpoint *ep, int flags, int *fd) {
  *fd = socket(ep->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | flags, 0);
  if (*fd < 0)
    return weft_fail(WEFT_ERROR_BOOTSTRAP, "bootstrap: socket: %s",
                     strerror(errno));
  /* Collectives are small messages that wait for their answers. */
  int one = 1;
  if (!ep->unix_paths)
    setsockopt(*fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return WEFT_SUCCESS;
}

static weft_status listen_on(const endpoint *ep, int *lfd) {
  weft_status st = endpoint_socket(ep, SOCK_NONBLOCK, lfd);
  if (st != WEFT_SUCCESS)
    return st;
  int one = 1;
  if (ep->unix_paths)
    unlink(ep->unix_paths->socket); /* a crashed earlier run of this job id */
  else
    setsockopt(*lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(*lfd, (const struct sockaddr *)&ep->addr, ep->len) != 0 ||
      (ep->unix_paths && chmod(ep->unix_paths->socket, 0600) != 0) ||
      listen(*lfd, WEFT_MAX_RANKS) != 0) {
    st = weft_fail(WEFT_ERROR_BOOTSTRAP, "bootstrap: cannot listen on %s: %s",
                   ep->name, strerror(errno));
    close(*lfd);
    if (ep->unix_paths)
      unlink(ep->unix_paths->socket);
  }
  return st;
}

/* ---- rendezvous ---- */

/* What a rank that never meets rank 0 has got wrong, for the timeout. */
static const char *meeting_rule(const endpoint *ep) {
  return ep->unix_paths ? "every rank must run on this host with the same job id"
                        : "every rank must reach this address with the same job id";
}

static int set_nonblocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  return flags < 0 ? -1 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

static void reply(int fd, weft_status status, const char *message) {
  weft_bs_ack a = {WEFT_BS_MAGIC, status, ""};
  snprintf(a.message, sizeof a.message, "%s", message);
  weft_bs_send_all(fd, &a, sizeof a, weft_bs_now() + 1.0);
}

/* Why a joining rank is refused, or NULL. */
static const char *admission(const endpoint *ep, int fd, weft_bootstrap *bs,
                             const char token[TOKEN_LEN], uint64_t job_hash,
                             double deadline, weft_status *verdict) {
  weft_bs_hello h;
  unsigned nfd = 0;
  /* A silent client must not stall the rendezvous for long. */
  double hello_deadline = weft_bs_now() + 2.0;
  if (deadline > 0 && deadline < hello_deadline)
    hello_deadline = deadline;
  *verdict = WEFT_ERROR_AUTH;
  if (ep->unix_paths) {
    struct ucred cred;
    socklen_t clen = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0 ||
        cred.uid != geteuid())
      return "connection from another user";
  }
  if (weft_bs_recv_all(fd, &h, sizeof h, hello_deadline, NULL, &nfd, 0) != 1 ||
      h.magic != WEFT_BS_MAGIC || h.version != WEFT_BS_PROTOCOL)
    return "not a weft rank of this protocol version";
  if (h.job_hash != job_hash || !token_equal(h.token, token))
    return "wrong job token";
  *verdict = WEFT_ERROR_BOOTSTRAP;
  if (h.world_size != bs->size)
    return "world size differs from rank 0's";
  if (h.rank <= 0 || h.rank >= bs->size || bs->fds[h.rank] >= 0)
    return "rank out of range or already joined";
  *verdict = WEFT_SUCCESS;
  bs->fds[h.rank] = fd;
  return NULL;
}

static weft_status root_accept(weft_bootstrap *bs, const endpoint *ep,
                               const char token[TOKEN_LEN], uint64_t job_hash,
                               double deadline) {
  int lfd;
  weft_status st = listen_on(ep, &lfd);
  if (st != WEFT_SUCCESS)
    return st;
  int joined = 1, rejected = 0;
  char why[256] = "";
  while (joined < bs->size) {
    struct pollfd pfd = {lfd, POLLIN, 0};
    int r = poll(&pfd, 1, weft_bs_poll_ms(deadline));
    if (r < 0 && errno == EINTR)
      continue;
    if (r == 0) {
      if (rejected)
        st = weft_fail(WEFT_ERROR_AUTH, "bootstrap: rank 0 timed out with "
                       "%d of %d ranks joined; rejected %d connection(s): %s",
                       joined, bs->size, rejected, why);
      else
        st = weft_fail(WEFT_ERROR_TIMEOUT, "bootstrap: rank 0 timed out with "
                       "%d of %d ranks joined at %s (%s)", joined, bs->size,
                       ep->name, meeting_rule(ep));
      break;
    }
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0)
      continue;
    weft_status verdict;
    const char *refused = admission(ep, fd, bs, token, job_hash, deadline,
                                    &verdict);
    if (refused) {
      reply(fd, verdict, refused);
      close(fd);
      ++rejected;
      snprintf(why, sizeof why, "%s", refused);
      continue;
    }
    int one = 1;
    if (!ep->unix_paths)
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    reply(fd, WEFT_SUCCESS, "");
    ++joined;
  }
  close(lfd);
  if (ep->unix_paths)
    unlink(ep->unix_paths->socket);
  return st;
}

static weft_status peer_connect(weft_bootstrap *bs, const endpoint *ep,
                                uint64_t job_hash, double deadline) {
  char token[TOKEN_LEN];
  int from_env = env_token(token);
  double backoff = 0.005;
  char last[320];
  snprintf(last, sizeof last, "rank 0 never listened (%s)", meeting_rule(ep));
  weft_status last_status = WEFT_ERROR_TIMEOUT;
  for (;;) {
    if (deadline > 0 && weft_bs_now() >= deadline)
      return weft_fail(last_status, "bootstrap: rank %d could not join job "
                       "at %s: %s", bs->rank, ep->name, last);
    int fd;
    weft_status st = endpoint_socket(ep, 0, &fd);
    if (st != WEFT_SUCCESS)
      return st;
    /* Rank 0 writes the token before it listens, so reading it after
     * connecting never sees a stale token of an earlier run. */
    if (connect(fd, (const struct sockaddr *)&ep->addr, ep->len) != 0 ||
        (!from_env && !read_token(ep->unix_paths, token))) {
      close(fd);
      weft_bs_sleep(backoff);
      if (backoff < 0.1)
        backoff *= 2;
      continue;
    }
    set_nonblocking(fd);
    weft_bs_hello h = {WEFT_BS_MAGIC, WEFT_BS_PROTOCOL, bs->rank, bs->size,
                       job_hash, {0}};
    memcpy(h.token, token, TOKEN_LEN);
    weft_bs_ack a;
    unsigned nfd = 0;
    if (weft_bs_send_all(fd, &h, sizeof h, deadline) == 1 &&
        weft_bs_recv_all(fd, &a, sizeof a, deadline, NULL, &nfd, 0) == 1 &&
        a.magic == WEFT_BS_MAGIC) {
      if (a.status == WEFT_SUCCESS) {
        bs->fds[0] = fd;
        return WEFT_SUCCESS;
      }
      a.message[sizeof a.message - 1] = 0;
      close(fd);
      if (a.status == WEFT_ERROR_AUTH && from_env)
        return weft_fail(WEFT_ERROR_AUTH, "bootstrap: rank 0 of job at %s "
                         "rejected rank %d: %s", ep->name, bs->rank, a.message);
      if (a.status != WEFT_ERROR_AUTH)
        return weft_fail((weft_status)a.status, "bootstrap: rank 0 rejected "
                         "rank %d: %s", bs->rank, a.message);
      /* A token file token can be an earlier run's: read it again. */
      last_status = WEFT_ERROR_AUTH;
      snprintf(last, sizeof last, "rejected: %s", a.message);
    } else {
      close(fd);
    }
    weft_bs_sleep(backoff);
  }
}

/* Rank 0's token: WEFT_JOB_TOKEN, else (on one host) a random one written
 * where joining ranks read it. */
static weft_status root_token(const endpoint *ep, char token[TOKEN_LEN]) {
  if (env_token(token))
    return WEFT_SUCCESS;
  weft_status st = random_token(token);
  return st != WEFT_SUCCESS ? st : write_token(ep->unix_paths, token);
}

weft_status weft_bootstrap_address(char *out, size_t size) {
  const char *explicit_address = getenv("WEFT_BOOTSTRAP_ADDR");
  out[0] = 0;
  if (explicit_address && *explicit_address) {
    if (strlen(explicit_address) >= size)
      return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "WEFT_BOOTSTRAP_ADDR is "
                       "longer than %zu bytes", size - 1);
    snprintf(out, size, "%s", explicit_address);
    return WEFT_SUCCESS;
  }
  const char *host = getenv("MASTER_ADDR");
  if (!host || !*host)
    return WEFT_SUCCESS;
  /* torchrun's store listens on MASTER_PORT: Weft takes the next port. */
  const char *port = getenv("WEFT_BOOTSTRAP_PORT");
  long number = 0;
  if (port && *port) {
    number = strtol(port, NULL, 10);
  } else if ((port = getenv("MASTER_PORT")) && *port) {
    number = strtol(port, NULL, 10) + 1;
  }
  if (number <= 0 || number > 65535)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "MASTER_ADDR=%s needs a port: "
                     "WEFT_BOOTSTRAP_PORT, or MASTER_PORT (Weft listens on the "
                     "port after it)", host);
  int n = snprintf(out, size, strchr(host, ':') ? "[%s]:%ld" : "%s:%ld", host,
                   number);
  if (n < 0 || (size_t)n >= size)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "MASTER_ADDR is too long");
  return WEFT_SUCCESS;
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
  bs->passes_fds = !config->address;
  for (int r = 0; r < bs->size; ++r)
    fds[r] = -1;
  if (bs->size == 1) {
    *out = bs;
    return WEFT_SUCCESS;
  }
  paths p;
  endpoint ep;
  weft_status st;
  char token[TOKEN_LEN];
  if (config->address) {
    st = tcp_endpoint(config->address, &ep);
    if (st == WEFT_SUCCESS && !env_token(token))
      st = weft_fail(WEFT_ERROR_AUTH, "bootstrap: a job whose ranks meet at %s "
                     "(across hosts) needs WEFT_JOB_TOKEN, a secret set alike on "
                     "every rank (weft-run sets one)", config->address);
  } else {
    st = make_paths(config->job_id, &p);
    if (st == WEFT_SUCCESS)
      unix_endpoint(&p, &ep);
  }
  double deadline = config->connect_timeout_s > 0
                        ? weft_bs_now() + config->connect_timeout_s : 0;
  uint64_t job_hash = weft_hash_string(config->job_id);
  if (st == WEFT_SUCCESS && bs->rank == 0) {
    st = root_token(&ep, token);
    if (st == WEFT_SUCCESS)
      st = root_accept(bs, &ep, token, job_hash, deadline);
    if (ep.unix_paths) {
      unlink(p.token);
      rmdir(p.dir);
    }
  } else if (st == WEFT_SUCCESS) {
    st = peer_connect(bs, &ep, job_hash, deadline);
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
