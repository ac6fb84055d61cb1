/* Managed workflow manifest compute sizing (tauyaml/managed.h): the manifest's
 * compute fields read and checked as TauGrid's cli/internal/manifest
 * Validate reads them, and the pod sizes its resourceSizingFor gives the
 * control (launcher), head and worker pods. */
#include "tauyaml/managed_sizing.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "tauyaml/path.h"
#include "tauyaml/semantic.h"

/* Text that is not blank. */
int tg_tauyaml_nonblank(const char *s)
{
    if (!s)
        return 0;
    for (; *s; s++)
        if (!isspace((unsigned char)*s))
            return 1;
    return 0;
}

/* An integer field: 0 when absent or null; -1 and an error when it is not
 * an integer (yaml.v3 refuses to decode other scalars into an int). */
int tg_tauyaml_managed_int(const json_t *root, const char *sect, const char *key, json_int_t *out,
                           tg_tauyaml_diag_t *d)
{
    const json_t *v = tg_tauyaml_get(root, sect, key);
    *out = 0;
    if (!v || json_is_null(v))
        return 0;
    if (json_is_real(v) && json_real_value(v) == (double)(json_int_t)json_real_value(v)) {
        *out = (json_int_t)json_real_value(v);
        return 0;
    }
    if (!json_is_integer(v)) {
        char path[96];
        snprintf(path, sizeof(path), "%s.%s", sect, key);
        tg_tauyaml_diag_error(d, path, TG_AT_VALUE, "%s must be an integer", path);
        return -1;
    }
    *out = json_integer_value(v);
    return 0;
}

/* TauGrid manifest memory quantities: ^([0-9]+)([EPTGMK]i?|[eptgmk]i?)?$,
 * above zero. The value in bytes, or -1 (why in *why). */
static double ms_memory(const char *s, const char **why)
{
    const char *p = s;
    double v = 0;
    *why = "must be a Kubernetes memory quantity like 512Mi or 32Gi";
    if (!isdigit((unsigned char)*p))
        return -1;
    for (; isdigit((unsigned char)*p); p++)
        v = v * 10 + (*p - '0');
    static const char units[] = "kmgtpe";
    double mult = 1;
    if (*p) {
        const char *u = strchr(units, tolower((unsigned char)*p));
        if (!u)
            return -1;
        int bin = p[1] == 'i';
        if (p[bin ? 2 : 1] != '\0')
            return -1;
        for (const char *k = units; k <= u; k++)
            mult *= bin ? 1024.0 : 1000.0;
    }
    if (v <= 0) {
        *why = "must be greater than zero";
        return -1;
    }
    return v * mult;
}

static tg_tauyaml_msizing_t ms_with_defaults(json_int_t cpu, json_int_t lim, const char *mem,
                                             const char *mem_lim, tg_tauyaml_msizing_t def)
{
    tg_tauyaml_msizing_t o = def;
    if (cpu > 0)
        o.cpu = cpu;
    if (lim > 0)
        o.cpu_limit = lim;
    else if (cpu > 0)
        o.cpu_limit = o.cpu;
    if (tg_tauyaml_nonblank(mem))
        o.memory = mem;
    if (tg_tauyaml_nonblank(mem_lim))
        o.memory_limit = mem_lim;
    else if (tg_tauyaml_nonblank(mem))
        o.memory_limit = o.memory;
    return o;
}

static void ms_pair(const char *prefix, json_int_t cpu, json_int_t lim, const char *mem,
                    const char *mem_lim, tg_tauyaml_diag_t *d)
{
    const char *why;
    if (cpu < 1)
        tg_tauyaml_diag_error(d, "compute", TG_AT_KEY,
                              "%s.cpus: want >= 1, got %" JSON_INTEGER_FORMAT, prefix, cpu);
    else if (lim < cpu)
        tg_tauyaml_diag_error(d, "compute", TG_AT_KEY,
                              "%s.cpu_limit=%" JSON_INTEGER_FORMAT
                              " must be >= %s.cpus=%" JSON_INTEGER_FORMAT,
                              prefix, lim, prefix, cpu);
    double r = ms_memory(mem, &why), l = ms_memory(mem_lim, &why);
    if (r >= 0 && l >= 0 && l < r)
        tg_tauyaml_diag_error(d, "compute", TG_AT_KEY, "%s.memory_limit=%s must be >= %s.memory=%s",
                              prefix, mem_lim, prefix, mem);
}

void tg_tauyaml_managed_compute(const json_t *root, int eval, tg_tauyaml_mcompute_t *c,
                                tg_tauyaml_diag_t *d)
{
    memset(c, 0, sizeof(*c));
    tg_tauyaml_managed_int(root, "compute", "gpus", &c->gpus, d);
    tg_tauyaml_managed_int(root, "compute", "workers", &c->workers, d);
    static const struct {
        const char *key;
        size_t off;
    } ints[] = {{"cpus", offsetof(tg_tauyaml_mcompute_t, cpus)},
                {"cpu_limit", offsetof(tg_tauyaml_mcompute_t, cpu_limit)},
                {"worker_cpus", offsetof(tg_tauyaml_mcompute_t, worker_cpus)},
                {"worker_cpu_limit", offsetof(tg_tauyaml_mcompute_t, worker_cpu_limit)}};
    for (size_t i = 0; i < TG_ARRAY_LEN(ints); i++) {
        json_int_t *v = (json_int_t *)((char *)c + ints[i].off);
        tg_tauyaml_managed_int(root, "compute", ints[i].key, v, d);
        if (*v < 0)
            tg_tauyaml_diag_error(d, "compute", TG_AT_KEY,
                                  "compute.%s: want >= 1 when set, got %" JSON_INTEGER_FORMAT,
                                  ints[i].key, *v);
    }
    static const char *const mems[] = {"memory", "memory_limit", "worker_memory",
                                       "worker_memory_limit"};
    const char **mv[] = {&c->memory, &c->memory_limit, &c->worker_memory, &c->worker_memory_limit};
    for (size_t i = 0; i < TG_ARRAY_LEN(mems); i++) {
        const json_t *v = tg_tauyaml_get(root, "compute", mems[i]);
        *mv[i] = json_is_string(v) ? json_string_value(v) : NULL;
        char path[64];
        snprintf(path, sizeof(path), "compute.%s", mems[i]);
        const char *why;
        if (v && !json_is_null(v) && !json_is_string(v))
            tg_tauyaml_diag_error(d, path, TG_AT_VALUE,
                                  "%s: must be a Kubernetes memory quantity "
                                  "like 512Mi or 32Gi",
                                  path);
        else if (*mv[i] && **mv[i] && ms_memory(*mv[i], &why) < 0)
            tg_tauyaml_diag_error(
                d, path, TG_AT_VALUE, "%s: %s", path,
                isspace((unsigned char)**mv[i]) ? "must not have surrounding whitespace" : why);
        if (*mv[i] && !**mv[i])
            *mv[i] = NULL;
    }
    if (c->gpus < 0 || c->gpus > 8)
        tg_tauyaml_diag_error(
            d, "compute.gpus", TG_AT_VALUE,
            "compute.gpus: want 0..8 (per-worker; 0 = CPU-only), got %" JSON_INTEGER_FORMAT,
            c->gpus);
    if (c->workers == 0)
        c->workers = 1;
    if (c->workers < 1)
        tg_tauyaml_diag_error(d, "compute.workers", TG_AT_VALUE,
                              "compute.workers: want >= 1, got %" JSON_INTEGER_FORMAT, c->workers);
    if (c->cpus > 0 && c->cpu_limit > 0 && c->cpu_limit < c->cpus)
        tg_tauyaml_diag_error(d, "compute.cpu_limit", TG_AT_VALUE,
                              "compute.cpu_limit=%" JSON_INTEGER_FORMAT
                              " must be >= compute.cpus=%" JSON_INTEGER_FORMAT,
                              c->cpu_limit, c->cpus);
    c->control = (tg_tauyaml_msizing_t){2, 4, "8Gi", "16Gi"};
    if (c->gpus == 0) {
        int mem_given = tg_tauyaml_nonblank(c->memory);
        if (!c->cpus)
            c->cpus = 1;
        if (!c->cpu_limit)
            c->cpu_limit = c->cpus;
        if (!c->worker_cpus)
            c->worker_cpus = c->cpus;
        if (!c->worker_cpu_limit)
            c->worker_cpu_limit = c->worker_cpus;
        if (!mem_given)
            c->memory = "2Gi";
        if (!tg_tauyaml_nonblank(c->memory_limit))
            c->memory_limit = c->memory;
        if (!tg_tauyaml_nonblank(c->worker_memory))
            c->worker_memory = mem_given ? c->memory : "4Gi";
        if (!tg_tauyaml_nonblank(c->worker_memory_limit))
            c->worker_memory_limit = c->worker_memory;
        ms_pair("compute", c->cpus, c->cpu_limit, c->memory, c->memory_limit, d);
        ms_pair("compute.worker", c->worker_cpus, c->worker_cpu_limit, c->worker_memory,
                c->worker_memory_limit, d);
        c->head = ms_with_defaults(c->cpus, c->cpu_limit, c->memory, c->memory_limit,
                                   (tg_tauyaml_msizing_t){1, 1, "2Gi", "2Gi"});
        c->worker = ms_with_defaults(c->worker_cpus, c->worker_cpu_limit, c->worker_memory,
                                     c->worker_memory_limit, c->head);
        if (eval)
            tg_tauyaml_diag_error(d, "compute.gpus", TG_AT_VALUE,
                                  "compute.gpus=0 is CPU-only training and cannot be combined with "
                                  "eval.cpu_workers or eval.upstream; use compute.gpus > 0 for "
                                  "rayjob-eval");
        return;
    }
    if (eval) {
        /* rayjob-eval: "head" sizes the GPU actor worker, "worker" the CPU
         * fan-out pods */
        c->head = ms_with_defaults(c->cpus, c->cpu_limit, c->memory, c->memory_limit,
                                   (tg_tauyaml_msizing_t){4, 8, "32Gi", "64Gi"});
        c->worker =
            ms_with_defaults(c->worker_cpus, c->worker_cpu_limit, c->worker_memory,
                             c->worker_memory_limit, (tg_tauyaml_msizing_t){1, 2, "4Gi", "8Gi"});
        return;
    }
    c->head = ms_with_defaults(c->cpus, c->cpu_limit, c->memory, c->memory_limit,
                               (tg_tauyaml_msizing_t){8, 16, "64Gi", "128Gi"});
    int head_override = c->cpus > 0 || c->cpu_limit > 0 || tg_tauyaml_nonblank(c->memory) ||
                        tg_tauyaml_nonblank(c->memory_limit);
    c->worker = ms_with_defaults(
        c->worker_cpus, c->worker_cpu_limit, c->worker_memory, c->worker_memory_limit,
        head_override ? c->head : (tg_tauyaml_msizing_t){8, 16, "64Gi", "128Gi"});
}

json_t *tg_tauyaml_managed_sizing_json(const tg_tauyaml_msizing_t *z)
{
    char a[24], b[24];
    snprintf(a, sizeof(a), "%" JSON_INTEGER_FORMAT, z->cpu);
    snprintf(b, sizeof(b), "%" JSON_INTEGER_FORMAT, z->cpu_limit);
    return json_pack("{s:s, s:s, s:s, s:s}", "cpu", a, "cpu_limit", b, "memory", z->memory,
                     "memory_limit", z->memory_limit);
}
