/* Graphs of a stream's work (runtime.h, weft_graph_begin): the backend's
 * stream capture, and the graphs a context made, destroyed at finalize. */
#include <stdlib.h>

#include "internal.h"

struct weft_graph {
  weft_context *ctx;
  void *exec; /* the backend's instantiated graph */
  weft_graph *next;
};

static weft_status no_graphs(weft_context *ctx, const char *call) {
  return weft_fail(WEFT_ERROR_UNSUPPORTED, "%s: the %s backend has no graphs", call,
                   ctx->ops->name);
}

weft_status weft_graph_begin(weft_context *ctx, void *stream) {
  if (!ctx)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_graph_begin: ctx is NULL");
  if (!ctx->ops->graph_begin)
    return weft_ctx_fail(ctx, no_graphs(ctx, "weft_graph_begin"));
  return weft_ctx_fail(ctx, ctx->ops->graph_begin(ctx->state, stream));
}

weft_status weft_graph_end(weft_context *ctx, void *stream, weft_graph **out) {
  if (!ctx || !out)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_graph_end: NULL argument");
  *out = NULL;
  if (!ctx->ops->graph_end)
    return weft_ctx_fail(ctx, no_graphs(ctx, "weft_graph_end"));
  weft_graph *graph = calloc(1, sizeof *graph);
  void *exec = NULL;
  /* Ends the capture even when nothing can hold its graph. */
  weft_status st = ctx->ops->graph_end(ctx->state, stream, &exec);
  if (st == WEFT_SUCCESS && !graph) {
    ctx->ops->graph_destroy(ctx->state, exec);
    st = weft_fail(WEFT_ERROR_OUT_OF_MEMORY, "weft_graph_end: out of host memory");
  }
  if (st != WEFT_SUCCESS) {
    free(graph);
    return weft_ctx_fail(ctx, st);
  }
  *graph = (weft_graph){ctx, exec, ctx->graphs};
  ctx->graphs = *out = graph;
  return WEFT_SUCCESS;
}

weft_status weft_graph_launch(weft_graph *graph, void *stream) {
  if (!graph)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_graph_launch: graph is NULL");
  weft_context *ctx = graph->ctx;
  return weft_ctx_fail(ctx, ctx->ops->graph_launch(ctx->state, graph->exec, stream));
}

weft_status weft_graph_destroy(weft_graph *graph) {
  if (!graph)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_graph_destroy: graph is NULL");
  weft_context *ctx = graph->ctx;
  for (weft_graph **p = &ctx->graphs; *p; p = &(*p)->next)
    if (*p == graph) {
      *p = graph->next;
      weft_status st = ctx->ops->graph_destroy(ctx->state, graph->exec);
      free(graph);
      return weft_ctx_fail(ctx, st);
    }
  return weft_ctx_fail(ctx, weft_fail(WEFT_ERROR_INVALID_ARGUMENT,
                       "weft_graph_destroy: not a graph of this context"));
}

void weft_graphs_destroy_all(weft_context *ctx) {
  while (ctx->graphs) {
    weft_graph *graph = ctx->graphs;
    ctx->graphs = graph->next;
    ctx->ops->graph_destroy(ctx->state, graph->exec);
    free(graph);
  }
}
