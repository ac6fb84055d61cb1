/* String-keyed hash map (chained). Keys are copied; values are opaque. */
#ifndef KS_MAP_H
#define KS_MAP_H

#include <stddef.h>

typedef struct ks_map_s ks_map_t;

ks_map_t *ks_map_new(void);
/* Frees the map; values are not touched (the caller owns them). */
void ks_map_free(ks_map_t *m);
void *ks_map_get(const ks_map_t *m, const char *key);
/* Insert or replace; returns the previous value or NULL. */
void *ks_map_put(ks_map_t *m, const char *key, void *val);
/* Remove; returns the value or NULL. */
void *ks_map_del(ks_map_t *m, const char *key);
size_t ks_map_len(const ks_map_t *m);
/* Visit every entry; stop early when fn returns non-zero. */
void ks_map_each(const ks_map_t *m, int (*fn)(const char *key, void *val, void *arg), void *arg);

#endif
