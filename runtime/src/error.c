/* The last-error messages (per thread and per context). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static _Thread_local char thread_error[WEFT_ERROR_MAX];

weft_status weft_fail(weft_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(thread_error, sizeof thread_error, fmt, ap);
  va_end(ap);
  return status;
}

const char *weft_thread_error(void) { return thread_error; }

weft_status weft_ctx_fail(weft_context *ctx, weft_status status) {
  if (ctx && status != WEFT_SUCCESS)
    snprintf(ctx->last_error, sizeof ctx->last_error, "%s", thread_error);
  return status;
}

const char *weft_last_error(const weft_context *ctx) {
  return ctx ? ctx->last_error : thread_error;
}
