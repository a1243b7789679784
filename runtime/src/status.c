/* Status names: shared by libweft and libWeftCAPI (one definition). */
#include "weft/status.h"

const char *weft_status_string(weft_status status) {
  switch (status) {
  case WEFT_SUCCESS: return "WEFT_SUCCESS";
  case WEFT_ERROR_INVALID_ARGUMENT: return "WEFT_ERROR_INVALID_ARGUMENT";
  case WEFT_ERROR_OUT_OF_MEMORY: return "WEFT_ERROR_OUT_OF_MEMORY";
  case WEFT_ERROR_ASYMMETRIC: return "WEFT_ERROR_ASYMMETRIC";
  case WEFT_ERROR_BOOTSTRAP: return "WEFT_ERROR_BOOTSTRAP";
  case WEFT_ERROR_AUTH: return "WEFT_ERROR_AUTH";
  case WEFT_ERROR_PEER_LOST: return "WEFT_ERROR_PEER_LOST";
  case WEFT_ERROR_TIMEOUT: return "WEFT_ERROR_TIMEOUT";
  case WEFT_ERROR_BACKEND: return "WEFT_ERROR_BACKEND";
  case WEFT_ERROR_UNSUPPORTED: return "WEFT_ERROR_UNSUPPORTED";
  case WEFT_ERROR_NOT_FOUND: return "WEFT_ERROR_NOT_FOUND";
  case WEFT_ERROR_MODULE: return "WEFT_ERROR_MODULE";
  case WEFT_ERROR_COMPILE: return "WEFT_ERROR_COMPILE";
  }
  return "WEFT_ERROR_UNKNOWN";
}
