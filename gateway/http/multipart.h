/* multipart/form-data bodies (RFC 7578), parsed in one pass over a body held
 * in memory.
 *
 * The body is a preamble, then parts each opened by "--<boundary>" CRLF,
 * holding header lines, an empty line and the content, and the whole closed
 * by "--<boundary>--". A part's Content-Disposition must be form-data; its
 * name and filename parameters (quoted, or bare tokens) are read from that
 * header alone. Anything else is refused with a reason, never guessed at: a
 * missing or unterminated delimiter, a part without end of headers, header
 * lines without a colon or folded, a Content-Disposition that is not
 * form-data or repeats, a quoted parameter that does not close, more parts
 * than the caller allows.
 *
 * Pure: no I/O, no globals; thread-safe. Memory comes from the caller's
 * arena. */
#ifndef TG_HTTP_MULTIPART_H
#define TG_HTTP_MULTIPART_H

#include <stddef.h>

#include "core/arena.h"

typedef struct tg_multipart_part_s {
    const char *name;     /* form field name (arena, NUL-terminated); NULL when absent */
    const char *filename; /* filename parameter (arena); NULL when absent */
    const char *data;     /* content: points into the body, not NUL-terminated */
    size_t len;
} tg_multipart_part_t;

/* The boundary parameter of a multipart Content-Type into out[n] (at most
 * 70 characters, RFC 2046). RET: 0, or -1 with *why. */
int tg_multipart_boundary(const char *content_type, char *out, size_t n, const char **why);

/* A body to parse and where its parts go. */
typedef struct tg_multipart_req_s {
    const char *boundary; /* from tg_multipart_boundary */
    const char *body;     /* len bytes; parts point into it */
    size_t len;
    tg_arena_t *arena;          /* part names and filenames */
    tg_multipart_part_t *parts; /* room for max_parts */
    size_t max_parts;
} tg_multipart_req_t;

/* Parse r->body. OUT: r->parts[0..*nparts). RET: 0, or -1 with *why (a
 * static message) when the body is not well-formed or holds more than
 * r->max_parts parts. */
int tg_multipart_parse(const tg_multipart_req_t *r, size_t *nparts, const char **why);

#endif
