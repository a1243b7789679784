/* Module images: format detection, loading through the backend, kernels. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

enum { EM_X86_64_ = 62, EM_AARCH64_ = 183, EM_CUDA_ = 190, EM_AMDGPU_ = 224 };

#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64_
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64_
#else
#define HOST_MACHINE -1
#endif

/* ELF e_machine of a little-endian image, or -1. */
static int elf_machine(const unsigned char *p, size_t size) {
  if (size < 20 || memcmp(p, "\177ELF", 4) != 0 || p[5] != 1 /* ELFDATA2LSB */)
    return -1;
  return p[18] | p[19] << 8;
}

weft_module_format weft_module_detect(const void *image, size_t size) {
  if (!image)
    return WEFT_MODULE_AUTO;
  int machine = elf_machine(image, size);
  if (machine == HOST_MACHINE)
    return WEFT_MODULE_HOST_SO;
  if (machine == EM_CUDA_)
    return WEFT_MODULE_CUBIN;
  if (machine == EM_AMDGPU_)
    return WEFT_MODULE_HSACO;
  if (machine >= 0)
    return WEFT_MODULE_AUTO;
  /* PTX is text; its header names the ISA version and target early on. */
  size_t head = size < 65536 ? size : 65536;
  if (memmem(image, head, ".version", 8) && memmem(image, head, ".target", 7))
    return WEFT_MODULE_PTX;
  return WEFT_MODULE_AUTO;
}

const char *weft_module_format_name(weft_module_format format) {
  switch (format) {
  case WEFT_MODULE_PTX: return "PTX";
  case WEFT_MODULE_CUBIN: return "cubin";
  case WEFT_MODULE_HSACO: return "HSACO";
  case WEFT_MODULE_HOST_SO: return "host shared object";
  case WEFT_MODULE_AUTO: break;
  }
  return "unknown";
}

static int backend_accepts(weft_backend backend, weft_module_format format) {
  switch (backend) {
  case WEFT_BACKEND_HOST: return format == WEFT_MODULE_HOST_SO;
  case WEFT_BACKEND_CUDA: return format == WEFT_MODULE_PTX || format == WEFT_MODULE_CUBIN;
  case WEFT_BACKEND_HIP: return format == WEFT_MODULE_HSACO;
  case WEFT_BACKEND_DEFAULT: break;
  }
  return 0;
}

static const char *backend_for(weft_module_format format) {
  switch (format) {
  case WEFT_MODULE_HOST_SO: return "host";
  case WEFT_MODULE_PTX:
  case WEFT_MODULE_CUBIN: return "cuda";
  case WEFT_MODULE_HSACO: return "hip";
  case WEFT_MODULE_AUTO: break;
  }
  return "?";
}

weft_status weft_module_load(weft_context *ctx, const void *image, size_t size,
                             weft_module_format format, weft_module **out) {
  if (!ctx || !out)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT,
                     "weft_module_load: %s is NULL", ctx ? "out" : "ctx");
  *out = NULL;
  if (!image || !size)
    return weft_ctx_fail(ctx, weft_fail(WEFT_ERROR_INVALID_ARGUMENT,
                         "weft_module_load: empty image"));
  if (format == WEFT_MODULE_AUTO) {
    format = weft_module_detect(image, size);
    if (format == WEFT_MODULE_AUTO) {
      int machine = elf_machine(image, size);
      if (machine >= 0)
        return weft_ctx_fail(ctx, weft_fail(WEFT_ERROR_MODULE,
                             "weft_module_load: ELF image for machine %d is "
                             "not a host shared object, cubin or HSACO", machine));
      return weft_ctx_fail(ctx, weft_fail(WEFT_ERROR_MODULE,
                           "weft_module_load: unrecognised image of %zu bytes "
                           "(not ELF, not PTX text)", size));
    }
  }
  if (!backend_accepts(ctx->backend, format))
    return weft_ctx_fail(ctx, weft_fail(WEFT_ERROR_MODULE,
                         "weft_module_load: a %s module cannot be loaded by "
                         "the %s backend (it needs the %s backend)",
                         weft_module_format_name(format), ctx->ops->name,
                         backend_for(format)));
  weft_module *m = calloc(1, sizeof *m);
  if (!m)
    return weft_ctx_fail(ctx, weft_fail(WEFT_ERROR_OUT_OF_MEMORY,
                         "weft_module_load: out of host memory"));
  weft_status st = ctx->ops->module_load(ctx->state, image, size, format, &m->handle);
  if (st != WEFT_SUCCESS) {
    free(m);
    return weft_ctx_fail(ctx, st);
  }
  m->ctx = ctx;
  m->format = format;
  m->next = ctx->modules;
  ctx->modules = m;
  *out = m;
  return WEFT_SUCCESS;
}

weft_status weft_module_load_file(weft_context *ctx, const char *path,
                                  weft_module_format format, weft_module **out) {
  if (!ctx || !path || !out)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT,
                     "weft_module_load_file: NULL argument");
  *out = NULL;
  FILE *f = fopen(path, "rbe");
  if (!f)
    return weft_ctx_fail(ctx, weft_fail(errno == ENOENT ? WEFT_ERROR_NOT_FOUND
                                                        : WEFT_ERROR_MODULE,
                         "weft_module_load_file: %s: %s", path, strerror(errno)));
  char *data = NULL;
  size_t size = 0, cap = 0;
  int oom = 0, read_error = 0;
  for (;;) {
    if (size == cap) {
      cap = cap ? cap * 2 : 1 << 16;
      char *grown = realloc(data, cap);
      if (!grown) {
        oom = 1;
        break;
      }
      data = grown;
    }
    size_t n = fread(data + size, 1, cap - size, f);
    size += n;
    if (n == 0) {
      read_error = ferror(f);
      break;
    }
  }
  fclose(f);
  weft_status st = WEFT_SUCCESS;
  if (oom)
    st = weft_fail(WEFT_ERROR_OUT_OF_MEMORY, "weft_module_load_file: %s: out "
                   "of host memory", path);
  else if (read_error)
    st = weft_fail(WEFT_ERROR_MODULE, "weft_module_load_file: %s: read error",
                   path);
  else if (size == 0)
    st = weft_fail(WEFT_ERROR_MODULE, "weft_module_load_file: %s is empty", path);
  if (st != WEFT_SUCCESS) {
    free(data);
    return weft_ctx_fail(ctx, st);
  }
  st = weft_module_load(ctx, data, size, format, out);
  free(data);
  if (st != WEFT_SUCCESS) /* name the file, keep the loader's reason */
    snprintf(ctx->last_error, sizeof ctx->last_error, "%s: %s", path,
             weft_thread_error());
  return st;
}

static void release(weft_module *m) {
  for (weft_kernel *k = m->kernels, *next; k; k = next) {
    next = k->next;
    free(k);
  }
  m->ctx->ops->module_unload(m->ctx->state, m->handle);
  free(m);
}

weft_status weft_module_unload(weft_module *module) {
  if (!module)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_module_unload: NULL");
  weft_context *ctx = module->ctx;
  for (weft_module **p = &ctx->modules; *p; p = &(*p)->next)
    if (*p == module) {
      *p = module->next;
      release(module);
      return WEFT_SUCCESS;
    }
  return weft_ctx_fail(ctx, weft_fail(WEFT_ERROR_INVALID_ARGUMENT,
                       "weft_module_unload: not a loaded module"));
}

void weft_modules_unload_all(weft_context *ctx) {
  while (ctx->modules) {
    weft_module *m = ctx->modules;
    ctx->modules = m->next;
    release(m);
  }
}

weft_status weft_module_get_kernel(weft_module *module, const char *name,
                                   weft_kernel **out) {
  if (!module || !name || !out)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT,
                     "weft_module_get_kernel: NULL argument");
  *out = NULL;
  for (weft_kernel *k = module->kernels; k; k = k->next)
    if (!strcmp(k->name, name)) {
      *out = k;
      return WEFT_SUCCESS;
    }
  weft_context *ctx = module->ctx;
  void *function = NULL;
  weft_status st = ctx->ops->module_get_function(ctx->state, module->handle,
                                                 name, &function);
  if (st != WEFT_SUCCESS)
    return weft_ctx_fail(ctx, st);
  size_t len = strlen(name) + 1;
  weft_kernel *k = calloc(1, sizeof *k + len);
  if (!k)
    return weft_ctx_fail(ctx, weft_fail(WEFT_ERROR_OUT_OF_MEMORY,
                         "weft_module_get_kernel: out of host memory"));
  k->module = module;
  k->function = function;
  memcpy(k->name, name, len);
  k->next = module->kernels;
  module->kernels = k;
  *out = k;
  return WEFT_SUCCESS;
}
