/* Managed workflow manifest compute sizing (tauyaml/managed.h).
 *
 * compute.gpus (0..8 per worker), compute.workers (>= 1, default 1) and the
 * integer cpus/cpu_limit/worker_cpus/worker_cpu_limit and memory quantities
 * memory/memory_limit/worker_memory/worker_memory_limit, checked with
 * TauGrid's words and defaulted as its resourceSizingFor defaults them:
 *   control (the launcher pod): 2/4 CPUs, 8Gi/16Gi;
 *   CPU-only: head 1 CPU 2Gi (or the given cpus/memory), workers as the head
 *     unless worker_* is given (worker memory 4Gi when no memory is given);
 *   GPU: head 8/16 CPUs 64Gi/128Gi (or the given ones), workers likewise,
 *     inheriting the head's override;
 *   eval (rayjob-eval): the GPU actor worker ("head") 4/8 CPUs 32Gi/64Gi,
 *     the CPU fan-out workers 1/2 CPUs 4Gi/8Gi, each unless given. */
#ifndef TG_TAUYAML_MANAGED_SIZING_H
#define TG_TAUYAML_MANAGED_SIZING_H

#include <jansson.h>

#include "tauyaml/diag.h"

typedef struct tg_tauyaml_msizing_s {
    json_int_t cpu, cpu_limit;
    const char *memory, *memory_limit; /* borrowed from the document, or literals */
} tg_tauyaml_msizing_t;

/* The manifest's compute fields, and the pod sizes they give. */
typedef struct tg_tauyaml_mcompute_s {
    json_int_t gpus, workers, cpus, cpu_limit, worker_cpus, worker_cpu_limit;
    const char *memory, *memory_limit, *worker_memory, *worker_memory_limit;
    tg_tauyaml_msizing_t control, head, worker;
} tg_tauyaml_mcompute_t;

/* 1 when s is text that is not blank (NULL is blank). */
int tg_tauyaml_nonblank(const char *s);

/* The integer sect.key of `root` (borrowed) in *out: 0 when absent or null,
 * a whole-number float as its integer; otherwise an error and -1 (yaml.v3
 * decodes no other scalar into an int). */
int tg_tauyaml_managed_int(const json_t *root, const char *sect, const char *key, json_int_t *out,
                           tg_tauyaml_diag_t *d);

/* Read, check and default the compute section of `root` (borrowed) into
 * `c`; `eval` when the manifest has an eval shape (CPU-only is refused
 * then, and the eval sizes apply). Strings in `c` point into `root`. */
void tg_tauyaml_managed_compute(const json_t *root, int eval, tg_tauyaml_mcompute_t *c,
                                tg_tauyaml_diag_t *d);

/* {cpu, cpu_limit, memory, memory_limit} as Kubernetes quantity texts (a
 * new object). */
json_t *tg_tauyaml_managed_sizing_json(const tg_tauyaml_msizing_t *z);

#endif
