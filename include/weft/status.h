/* Status codes shared by the runtime (libweft) and the compiler C API
 * (libWeftCAPI). Every fallible call returns one; the message that goes with
 * it comes from weft_last_error() / weft_compiler_last_error(). */
#ifndef WEFT_STATUS_H
#define WEFT_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum weft_status {
  WEFT_SUCCESS = 0,
  WEFT_ERROR_INVALID_ARGUMENT = 1, /* bad pointer, size, peer, option */
  WEFT_ERROR_OUT_OF_MEMORY = 2,    /* heap exhausted, host allocation failed */
  WEFT_ERROR_ASYMMETRIC = 3,       /* ranks disagreed on a collective call */
  WEFT_ERROR_BOOTSTRAP = 4,        /* rendezvous failed (environment, socket) */
  WEFT_ERROR_AUTH = 5,             /* a peer presented the wrong job token */
  WEFT_ERROR_PEER_LOST = 6,        /* a peer process went away */
  WEFT_ERROR_TIMEOUT = 7,          /* bootstrap or a device wait timed out */
  WEFT_ERROR_BACKEND = 8,          /* the GPU driver or OS reported an error */
  WEFT_ERROR_UNSUPPORTED = 9,      /* not available with this backend/build */
  WEFT_ERROR_NOT_FOUND = 10,       /* no such kernel, no driver library */
  WEFT_ERROR_MODULE = 11,          /* a module image could not be loaded */
  WEFT_ERROR_COMPILE = 12,         /* compiler: parse, verify or codegen error */
} weft_status;

/* A static, human-readable name for a status ("WEFT_ERROR_ASYMMETRIC"). */
const char *weft_status_string(weft_status status);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_STATUS_H */
