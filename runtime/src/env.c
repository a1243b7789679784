/* Rank discovery from the launchers' environments, and numeric settings. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* A non-negative int from variable `name`; 0 when unset, -1 when malformed. */
static int env_int(const char *name, int *out) {
  const char *text = getenv(name);
  if (!text || !*text)
    return 0;
  char *end;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (errno || *end || v < 0 || v > 1 << 30)
    return -1;
  *out = (int)v;
  return 1;
}

typedef struct launcher {
  const char *name;
  const char *rank, *size, *local_rank;
  const char *local_size; /* this host's ranks; NULL: the launcher has none */
} launcher;

/* In priority order: a torchrun job inside a Slurm allocation, or mpirun
 * under Slurm, sees the outer launcher's variables too. */
static const launcher launchers[] = {
    {"weft", "WEFT_RANK", "WEFT_WORLD_SIZE", "WEFT_LOCAL_RANK", NULL},
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"},
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
     "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID",
     "SLURM_NTASKS_PER_NODE"},
};

static const char *env_nonempty(const char *name) {
  const char *v = getenv(name);
  return v && *v ? v : NULL;
}

/* WEFT_JOB_ID names the job for any launcher (weft-run sets it); otherwise
 * the launcher's own job identity, the same on every rank of one job. */
static void job_id_for(const launcher *l, weft_env_info *out) {
  const char *a = env_nonempty("WEFT_JOB_ID"), *b = NULL;
  if (a) {
    snprintf(out->job_id, sizeof out->job_id, "%s", a);
    return;
  }
  if (!strcmp(l->name, "torchrun")) {
    a = env_nonempty("TORCHELASTIC_RUN_ID");
    if (!a) {
      a = env_nonempty("MASTER_ADDR");
      b = env_nonempty("MASTER_PORT");
      if (!a || !b)
        a = b = NULL;
    }
  } else if (!strcmp(l->name, "openmpi")) {
    a = env_nonempty("PMIX_NAMESPACE");
    if (!a)
      a = env_nonempty("OMPI_MCA_ess_base_jobid");
    if (!a)
      a = env_nonempty("OMPI_MCA_orte_ess_jobid");
  } else if (!strcmp(l->name, "slurm")) {
    a = env_nonempty("SLURM_JOB_ID");
    b = env_nonempty("SLURM_STEP_ID");
    if (a && !b)
      b = "0";
  }
  if (a && b)
    snprintf(out->job_id, sizeof out->job_id, "%s-%s:%s", l->name, a, b);
  else if (a)
    snprintf(out->job_id, sizeof out->job_id, "%s-%s", l->name, a);
}

/* Slurm's SLURM_TASKS_PER_NODE: "4" or "4(x3)" when every node has 4;
 * anything else ("4,2") is an uneven placement: -1. 0 when unset. */
static int slurm_tasks_per_node(int *out) {
  const char *text = env_nonempty("SLURM_TASKS_PER_NODE");
  if (!text)
    return 0;
  char *end;
  long v = strtol(text, &end, 10);
  if (end == text || v < 1 || v > WEFT_MAX_RANKS)
    return -1;
  if (!strncmp(end, "(x", 2)) {
    long times = strtol(end + 2, &end, 10);
    if (times < 1 || strcmp(end, ")"))
      return -1;
  } else if (*end) {
    return -1;
  }
  *out = (int)v;
  return 1;
}

/* Ranks per node: WEFT_LOCAL_SIZE, else what the launcher counts on this
 * host, else the whole job (one node). */
static weft_status detect_local_size(const launcher *l, weft_env_info *out) {
  int size = 0, has = env_int("WEFT_LOCAL_SIZE", &size);
  const char *from = "WEFT_LOCAL_SIZE";
  if (has == 0 && l && l->local_size) {
    from = l->local_size;
    has = env_int(from, &size);
    if (has == 0 && !strcmp(l->name, "slurm")) {
      from = "SLURM_TASKS_PER_NODE";
      has = slurm_tasks_per_node(&size);
    }
  }
  if (has == 0) {
    out->local_size = out->world_size;
    return WEFT_SUCCESS;
  }
  if (has < 0 || size < 1)
    return weft_fail(WEFT_ERROR_BOOTSTRAP, "%s='%s' is not a positive number "
                     "of ranks per node (Weft needs as many ranks on every node)",
                     from, getenv(from));
  if (out->world_size % size)
    return weft_fail(WEFT_ERROR_BOOTSTRAP, "%s=%d does not divide the job's %d "
                     "ranks into nodes of as many ranks", from, size,
                     out->world_size);
  out->local_size = size;
  out->local_size_from = from;
  return WEFT_SUCCESS;
}

weft_status weft_env_detect(weft_env_info *out) {
  memset(out, 0, sizeof *out);
  const launcher *found = NULL;
  out->rank = 0;
  out->world_size = 1;
  out->local_rank = 0;
  out->launcher = "none";
  for (size_t i = 0; i < sizeof launchers / sizeof launchers[0]; ++i) {
    const launcher *l = &launchers[i];
    int rank = -1, size = -1, local = -1;
    int has_rank = env_int(l->rank, &rank), has_size = env_int(l->size, &size);
    if (has_rank == 0 && has_size == 0)
      continue;
    if (has_rank <= 0 || has_size <= 0)
      return weft_fail(WEFT_ERROR_BOOTSTRAP,
                       "%s environment: %s='%s' and %s='%s' must both be set "
                       "to non-negative integers",
                       l->name, l->rank, getenv(l->rank) ? getenv(l->rank) : "",
                       l->size, getenv(l->size) ? getenv(l->size) : "");
    if (size < 1 || size > WEFT_MAX_RANKS || rank >= size)
      return weft_fail(WEFT_ERROR_BOOTSTRAP,
                       "%s environment: rank %d of world size %d is out of "
                       "range (at most %d ranks)",
                       l->name, rank, size, WEFT_MAX_RANKS);
    int has_local = env_int(l->local_rank, &local);
    if (has_local < 0)
      return weft_fail(WEFT_ERROR_BOOTSTRAP, "%s environment: %s='%s' is not "
                       "a non-negative integer", l->name, l->local_rank,
                       getenv(l->local_rank));
    out->rank = rank;
    out->world_size = size;
    /* Without a local rank every rank is assumed to be on this host. */
    out->local_rank = has_local ? local : rank;
    out->launcher = l->name;
    found = l;
    job_id_for(l, out);
    if (!out->job_id[0] && size > 1)
      return weft_fail(WEFT_ERROR_BOOTSTRAP,
                       "%s environment: no job id to rendezvous on (set "
                       "WEFT_JOB_ID to the same value on every rank)",
                       l->name);
    break;
  }
  if (!out->job_id[0]) {
    const char *explicit_id = env_nonempty("WEFT_JOB_ID");
    if (explicit_id)
      snprintf(out->job_id, sizeof out->job_id, "%s", explicit_id);
    else { /* a lone process: nobody to meet, the id only has to be unique */
      snprintf(out->job_id, sizeof out->job_id, "single-%ld", (long)getpid());
      out->job_id_defaulted = 1;
    }
  }
  return detect_local_size(found, out);
}

weft_status weft_parse_size(const char *text, size_t *out) {
  char *end;
  errno = 0;
  if (!text || !*text || *text == '-')
    goto bad;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno || end == text)
    goto bad;
  unsigned shift = 0;
  switch (*end) {
  case 'k': case 'K': shift = 10; ++end; break;
  case 'm': case 'M': shift = 20; ++end; break;
  case 'g': case 'G': shift = 30; ++end; break;
  case 't': case 'T': shift = 40; ++end; break;
  default: break;
  }
  if (shift && *end == 'i')
    ++end;
  if (*end == 'b' || *end == 'B')
    ++end;
  if (*end || (shift && v > (~0ull >> shift)))
    goto bad;
  *out = (size_t)(v << shift);
  return WEFT_SUCCESS;
bad:
  return weft_fail(WEFT_ERROR_INVALID_ARGUMENT,
                   "bad size '%s' (expected bytes with an optional K, M, G or "
                   "T suffix, e.g. 256M)", text ? text : "");
}

weft_status weft_env_seconds(const char *name, double dflt, double *out) {
  const char *text = getenv(name);
  *out = dflt;
  if (!text || !*text)
    return WEFT_SUCCESS;
  char *end;
  double v = strtod(text, &end);
  if (*end || !(v >= 0) || isinf(v))
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT,
                     "%s='%s' is not a number of seconds", name, text);
  *out = v;
  return WEFT_SUCCESS;
}

weft_status weft_env_count(const char *name, size_t dflt, size_t *out) {
  const char *text = getenv(name);
  *out = dflt;
  if (!text || !*text)
    return WEFT_SUCCESS;
  size_t v;
  if (weft_parse_size(text, &v) != WEFT_SUCCESS || v == 0)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT,
                     "%s='%s' is not a positive number", name, text);
  *out = v;
  return WEFT_SUCCESS;
}

int weft_env_is(const char *name, const char *value) {
  const char *v = getenv(name);
  return v && !strcmp(v, value);
}
