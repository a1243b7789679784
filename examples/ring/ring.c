/* The demo: compile ring.mlir with the compiler C API for the host target,
 * run it on every rank, and check what each rank received.
 *   weft-run -n 4 -- weft-ring examples/ring/ring.mlir */
#include <stdio.h>
#include <stdlib.h>

#include "weft/compiler.h"
#include "weft/runtime.h"

enum { PROGRAMS = 8, LAUNCHES = 3 };

static int fail(const char *what, const char *message) {
  fprintf(stderr, "weft-ring: %s: %s\n", what, message);
  return 1;
}

static char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  char *text = NULL;
  if (f && fseek(f, 0, SEEK_END) == 0) {
    *size = (size_t)ftell(f);
    rewind(f);
    text = malloc(*size + 1);
    if (text && fread(text, 1, *size, f) == *size)
      text[*size] = '\0';
  }
  if (f)
    fclose(f);
  return text;
}

int main(int argc, char **argv) {
  size_t ir_size = 0;
  char *ir = argc > 1 ? read_file(argv[1], &ir_size) : NULL;
  if (!ir)
    return fail("usage", "weft-run -n N -- weft-ring ring.mlir");

  weft_compiler *compiler;
  weft_artifacts *out;
  weft_compile_options options;
  weft_compile_options_default(&options);
  options.target = "host";
  if (weft_compiler_create(&compiler) != WEFT_SUCCESS)
    return fail("compiler", "cannot create");
  if (weft_compile(compiler, ir, ir_size, &options, &out) != WEFT_SUCCESS)
    return fail("compile", weft_compiler_last_error(compiler));

  weft_init_options init;
  weft_init_options_default(&init);
  init.backend = WEFT_BACKEND_HOST;
  weft_context *ctx;
  if (weft_init(&init, &ctx) != WEFT_SUCCESS)
    return fail("init", weft_last_error(NULL));

  const void *image;
  size_t image_size;
  weft_module *module;
  weft_kernel *kernel;
  int32_t *inbox;
  int64_t *flag;
  if (weft_artifacts_get(out, "so", &image, &image_size) != WEFT_SUCCESS ||
      weft_module_load(ctx, image, image_size, WEFT_MODULE_AUTO, &module) ||
      weft_module_get_kernel(module, "ring", &kernel) ||
      weft_malloc(ctx, PROGRAMS * sizeof *inbox, (void **)&inbox) ||
      weft_malloc(ctx, sizeof *flag, (void **)&flag))
    return fail("setup", weft_last_error(ctx));

  int rank = weft_rank(ctx), ranks = weft_num_ranks(ctx);
  int prev = (rank + ranks - 1) % ranks, wrong = 0;
  for (int64_t epoch = 1; epoch <= LAUNCHES; ++epoch) {
    weft_launch_config config = {{PROGRAMS, 1, 1}, 1, 0, NULL, 0, {1, 1, 1}};
    void *args[] = {&inbox, &flag, &epoch};
    if (weft_launch(kernel, &config, args, 3) != WEFT_SUCCESS)
      return fail("launch", weft_last_error(ctx));
    for (int p = 0; p < PROGRAMS; ++p)
      wrong += inbox[p] != prev * 1000 + p;
  }
  printf("rank %d of %d: %d programs x %d launches from rank %d: %s\n", rank,
         ranks, PROGRAMS, LAUNCHES, prev, wrong ? "WRONG" : "ok");

  weft_module_unload(module);
  weft_finalize(ctx);
  weft_artifacts_destroy(out);
  weft_compiler_destroy(compiler);
  free(ir);
  return wrong ? 1 : 0;
}
