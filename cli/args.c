/* Command-line options. */
#include "args.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const tau_opt_t *args_find_long(const tau_opt_t *const *tables, const char *name, size_t len)
{
    for (const tau_opt_t *const *t = tables; *t; t++)
        for (const tau_opt_t *o = *t; o->name; o++)
            if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
                return o;
    return NULL;
}

static const tau_opt_t *args_find_short(const tau_opt_t *const *tables, char c)
{
    for (const tau_opt_t *const *t = tables; *t; t++)
        for (const tau_opt_t *o = *t; o->name; o++)
            if (o->short_name == c)
                return o;
    return NULL;
}

static int args_set(tau_args_t *a, const tau_opt_t *o, const char *val, char *err, size_t errlen)
{
    if (a->nopts == TAU_MAX_OPTS) {
        snprintf(err, errlen, "too many options");
        return -1;
    }
    a->opts[a->nopts] = o;
    a->vals[a->nopts] = val;
    a->nopts++;
    return 0;
}

int tau_args_parse(tau_args_t *a, int argc, char **argv, const tau_opt_t *const *tables, char *err,
                   size_t errlen)
{
    memset(a, 0, sizeof(*a));
    int only_pos = 0;
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        if (only_pos || s[0] != '-' || s[1] == '\0') {
            if (a->npos == TAU_MAX_POS) {
                snprintf(err, errlen, "too many arguments");
                return -1;
            }
            a->pos[a->npos++] = s;
            continue;
        }
        if (strcmp(s, "--") == 0) {
            only_pos = 1;
            continue;
        }
        const tau_opt_t *o;
        const char *val = NULL;
        if (s[1] == '-') {
            const char *name = s + 2;
            const char *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            o = args_find_long(tables, name, len);
            if (!o) {
                snprintf(err, errlen, "unknown option --%.*s", (int)len, name);
                return -1;
            }
            if (eq) {
                if (!o->arg) {
                    snprintf(err, errlen, "option --%s takes no value", o->name);
                    return -1;
                }
                val = eq + 1;
            }
        } else {
            o = args_find_short(tables, s[1]);
            if (!o) {
                snprintf(err, errlen, "unknown option -%c", s[1]);
                return -1;
            }
            if (s[2]) {
                if (!o->arg) {
                    snprintf(err, errlen, "option -%c takes no value", s[1]);
                    return -1;
                }
                val = s + 2;
            }
        }
        if (o->arg && !val) {
            if (i + 1 >= argc) {
                snprintf(err, errlen, "option --%s needs a value (%s)", o->name, o->arg);
                return -1;
            }
            val = argv[++i];
        }
        if (args_set(a, o, o->arg ? val : "", err, errlen) != 0)
            return -1;
    }
    return 0;
}

const char *tau_arg(const tau_args_t *a, const char *name)
{
    for (int i = a->nopts - 1; i >= 0; i--)
        if (strcmp(a->opts[i]->name, name) == 0)
            return a->vals[i];
    return NULL;
}

const char *tau_arg_nth(const tau_args_t *a, const char *name, int n)
{
    for (int i = 0; i < a->nopts; i++)
        if (strcmp(a->opts[i]->name, name) == 0 && n-- == 0)
            return a->vals[i];
    return NULL;
}

int tau_flag(const tau_args_t *a, const char *name)
{
    return tau_arg(a, name) != NULL;
}

int tau_arg_long(const tau_args_t *a, const char *name, long min, long max, long def, long *out,
                 char *err, size_t errlen)
{
    const char *v = tau_arg(a, name);
    if (!v) {
        *out = def;
        return 0;
    }
    char *end = NULL;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (!*v || *end || errno || n < min || n > max) {
        snprintf(err, errlen, "--%s must be an integer from %ld to %ld (got '%s')", name, min, max,
                 v);
        return -1;
    }
    *out = n;
    return 0;
}

long tau_parse_duration(const char *s)
{
    if (!s || !*s)
        return -1;
    long total = 0;
    const char *p = s;
    while (*p) {
        char *end = NULL;
        errno = 0;
        long n = strtol(p, &end, 10);
        if (end == p || errno || n < 0)
            return -1;
        long mult = 1;
        switch (*end) {
        case '\0':
            mult = 1;
            break;
        case 's':
            mult = 1;
            end++;
            break;
        case 'm':
            mult = 60;
            end++;
            break;
        case 'h':
            mult = 3600;
            end++;
            break;
        case 'd':
            mult = 86400;
            end++;
            break;
        default:
            return -1;
        }
        if (n > (1L << 40) / mult)
            return -1;
        total += n * mult;
        p = end;
    }
    return total;
}
