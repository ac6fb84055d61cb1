/* Command-line options: a small getopt_long in the style of kubectl/gh.
 *
 * Options and positional arguments may be interleaved; "--" ends options.
 * Long options take "--name value" or "--name=value"; short ones "-w value"
 * or "-wvalue". Boolean flags take no value ("--wait"). */
#ifndef TAU_ARGS_H
#define TAU_ARGS_H

#include <stddef.h>

#define TAU_MAX_OPTS 64
#define TAU_MAX_POS  16

typedef struct tau_opt_s {
    const char *name; /* long name without dashes; NULL ends a table */
    char short_name;  /* 0 when none */
    const char *arg;  /* value placeholder ("WS"); NULL for a boolean flag */
    const char *help; /* one line; NULL hides the option from --help */
} tau_opt_t;

typedef struct tau_args_s {
    /* every occurrence in order: an option given twice appears twice */
    const tau_opt_t *opts[TAU_MAX_OPTS];
    const char *vals[TAU_MAX_OPTS]; /* value, or "" for a flag that was given */
    int nopts;
    const char *pos[TAU_MAX_POS];
    int npos;
} tau_args_t;

/* Parse argv[0..argc) against the option tables `tables` (NULL-terminated
 * list of tables; an option in an earlier table shadows a later one with the
 * same long or short name). On a usage error writes a message into err and
 * returns -1. Values point into argv. */
int tau_args_parse(tau_args_t *a, int argc, char **argv, const tau_opt_t *const *tables, char *err,
                   size_t errlen);

/* The value of option `name`, or NULL when absent (a flag gives ""). When
 * given more than once, the last one wins, as with most CLIs. */
const char *tau_arg(const tau_args_t *a, const char *name);
/* Every value of a repeatable option (`-f k=v -f k2=v2`), in order: the
 * i-th (from 0), or NULL past the last. */
const char *tau_arg_nth(const tau_args_t *a, const char *name, int i);
/* 1 when option `name` was given. */
int tau_flag(const tau_args_t *a, const char *name);
/* Parse option `name` as an integer in [min, max]; absent gives `def`.
 * Returns -1 with a message in err when it is not such an integer. */
int tau_arg_long(const tau_args_t *a, const char *name, long min, long max, long def, long *out,
                 char *err, size_t errlen);
/* Parse a duration ("90", "90s", "5m", "2h", "1h30m") into seconds; -1 when bad. */
long tau_parse_duration(const char *s);

#endif
