/* Each rank writes its rank into the next rank's copy of a symmetric int.
 * The host backend's heap is host memory, so plain stores reach the peer:
 *   build/bin/weft-run -n 4 --backend host -- build/bin/heap_ring */
#include <stdio.h>
#include <weft/runtime.h>

#define TRY(call)                                                              \
  if ((st = (call)) != WEFT_SUCCESS) {                                         \
    fprintf(stderr, "%s: %s\n", weft_status_string(st), weft_last_error(ctx)); \
    return 1;                                                                  \
  }

int main(void) {
  weft_context *ctx = NULL;
  weft_status st;
  TRY(weft_init(NULL, &ctx));
  int rank = weft_rank(ctx), n = weft_num_ranks(ctx);
  int *slot, *next;
  TRY(weft_malloc(ctx, sizeof *slot, (void **)&slot));     /* same offset everywhere */
  TRY(weft_peer_ptr(ctx, slot, (rank + 1) % n, (void **)&next));
  *next = rank;                                            /* write the peer's copy */
  TRY(weft_barrier(ctx));
  int ok = *slot == (rank + n - 1) % n;
  printf("rank %d of %d: got %d from rank %d: %s\n", rank, n, *slot, (rank + n - 1) % n,
         ok ? "ok" : "WRONG");
  TRY(weft_free(ctx, slot));
  TRY(weft_finalize(ctx));
  return !ok;
}
