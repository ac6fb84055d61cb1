/* A streaming JSON text writer over a bounded tg_buf_t.
 *
 * The renderers write manifests straight to text: the manifests are stored
 * and sent to Kubernetes as bytes anyway, and building them as jansson trees
 * first costs several allocations per value. Commas and colons are placed by
 * the writer; errors (buffer ceiling, nesting past 64) are sticky in w->rc. */
#ifndef TG_CORE_JSON_WRITER_H
#define TG_CORE_JSON_WRITER_H

#include <jansson.h>
#include <stddef.h>
#include <string.h>

#include "core/buf.h"

#define TG_JW_MAX_DEPTH 64

typedef struct tg_jw_s {
    tg_buf_t *b;
    unsigned depth;
    unsigned char first[TG_JW_MAX_DEPTH]; /* no element written yet at this level */
    int after_key;
    tg_rc_e rc;
} tg_jw_t;

void tg_jw_init(tg_jw_t *w, tg_buf_t *b);

void tg_jw_obj(tg_jw_t *w); /* { as a value */
void tg_jw_arr(tg_jw_t *w); /* [ as a value */
void tg_jw_end_obj(tg_jw_t *w);
void tg_jw_end_arr(tg_jw_t *w);
void tg_jw_keyn(tg_jw_t *w, const char *k, size_t n);
void tg_jw_strn(tg_jw_t *w, const char *s, size_t n);
void tg_jw_kstrn(tg_jw_t *w, const char *k, size_t kn, const char *v, size_t vn);
void tg_jw_int(tg_jw_t *w, json_int_t v);
void tg_jw_bool(tg_jw_t *w, int v);
void tg_jw_null(tg_jw_t *w);
/* A jansson value (borrowed), in canonical form (core/json_canon.h). */
void tg_jw_json(tg_jw_t *w, const json_t *v);
/* Key k and a string value whose contents `fill` appends to the buffer,
 * already escaped as a JSON string's: text made to be quoted (the canonical
 * JSON of the provenance) is written once, not built and then escaped. */
typedef tg_rc_e (*tg_jw_fill_fn)(const void *arg, tg_buf_t *b);
void tg_jw_kfill(tg_jw_t *w, const char *k, tg_jw_fill_fn fill, const void *arg);

/* Inline so that the length of a literal key is known at compile time. */
static inline void tg_jw_key(tg_jw_t *w, const char *k)
{
    tg_jw_keyn(w, k, strlen(k));
}

static inline void tg_jw_str(tg_jw_t *w, const char *s) /* NULL writes null */
{
    if (s)
        tg_jw_strn(w, s, strlen(s));
    else
        tg_jw_null(w);
}

/* key + value shorthands */
static inline void tg_jw_kstr(tg_jw_t *w, const char *k, const char *v)
{
    if (v) {
        tg_jw_kstrn(w, k, strlen(k), v, strlen(v));
    } else {
        tg_jw_key(w, k);
        tg_jw_null(w);
    }
}

static inline void tg_jw_kint(tg_jw_t *w, const char *k, json_int_t v)
{
    tg_jw_key(w, k);
    tg_jw_int(w, v);
}

static inline void tg_jw_kbool(tg_jw_t *w, const char *k, int v)
{
    tg_jw_key(w, k);
    tg_jw_bool(w, v);
}

static inline void tg_jw_kobj(tg_jw_t *w, const char *k)
{
    tg_jw_key(w, k);
    tg_jw_obj(w);
}

static inline void tg_jw_karr(tg_jw_t *w, const char *k)
{
    tg_jw_key(w, k);
    tg_jw_arr(w);
}

#endif
