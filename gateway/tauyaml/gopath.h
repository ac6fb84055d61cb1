/* Container paths as TauGrid checks them: Go's path.Clean (lexical; "" is
 * "."), and the "clean absolute path below /" rule its image assets and
 * run.source use. */
#ifndef TG_TAUYAML_GOPATH_H
#define TG_TAUYAML_GOPATH_H

#include <stddef.h>

/* path.Clean(in) into out[n]. Returns the length, or (size_t)-1 when it
 * does not fit (out is then ""). */
size_t tg_tauyaml_gopath_clean(const char *in, char *out, size_t n);

/* `p` is absolute, not "/", and path.Clean leaves it unchanged. */
int tg_tauyaml_gopath_clean_below_root(const char *p);

/* a == b, or one lies below the other (plain prefix + '/', as TauGrid
 * compares mount paths). */
int tg_tauyaml_gopath_overlap(const char *a, const char *b);

#endif
