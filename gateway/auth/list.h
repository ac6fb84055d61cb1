/* Comma-separated configuration lists ("admins, ops,sre") as string arrays. */
#ifndef TG_AUTH_LIST_H
#define TG_AUTH_LIST_H

#include <stddef.h>

typedef struct tg_auth_list_s {
    char **v; /* owned strings */
    size_t n;
} tg_auth_list_t;

/* Split `csv` on commas, trim spaces and tabs, drop empty items. NULL or ""
 * gives an empty list. Replaces nothing: `l` must be empty or cleaned. */
void tg_auth_list_parse(tg_auth_list_t *l, const char *csv);
/* Append a copy of `s` (length `n`). */
void tg_auth_list_push(tg_auth_list_t *l, const char *s, size_t n);
/* 1 when `s` equals an item exactly. */
int tg_auth_list_has(const tg_auth_list_t *l, const char *s);
void tg_auth_list_clean(tg_auth_list_t *l);

#endif
