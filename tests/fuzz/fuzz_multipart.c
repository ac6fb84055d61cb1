/* libFuzzer harness for multipart/form-data (http/multipart.c), the parser
 * run submissions go through.
 *
 * Input: a Content-Type value up to the first newline, then the body. The
 * harness extracts the boundary, parses the body, and checks what every
 * successful parse promises: parts lie inside the body, in order, and their
 * names are NUL-terminated. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/multipart.h"

#define FUZZ_MAX_PARTS 66

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    if (!nl)
        return 0;
    size_t ctlen = (size_t)(nl - data);
    char *ct = malloc(ctlen + 1);
    memcpy(ct, data, ctlen);
    ct[ctlen] = '\0';
    /* the body in its own allocation, so ASan sees any read past it */
    size_t blen = size - ctlen - 1;
    char *body = malloc(blen ? blen : 1);
    memcpy(body, nl + 1, blen);

    char boundary[80];
    const char *why = NULL;
    if (tg_multipart_boundary(ct, boundary, sizeof(boundary), &why) == 0) {
        assert(strlen(boundary) > 0 && strlen(boundary) <= 70);
        tg_arena_t *arena = tg_arena_new(4096);
        tg_multipart_part_t parts[FUZZ_MAX_PARTS];
        size_t n = 0;
        tg_multipart_req_t r = {.boundary = boundary,
                                .body = body,
                                .len = blen,
                                .arena = arena,
                                .parts = parts,
                                .max_parts = FUZZ_MAX_PARTS};
        if (tg_multipart_parse(&r, &n, &why) == 0) {
            const char *prev = body;
            for (size_t i = 0; i < n; i++) {
                assert(parts[i].data >= prev && parts[i].data + parts[i].len <= body + blen);
                prev = parts[i].data + parts[i].len;
                if (parts[i].name)
                    assert(strlen(parts[i].name) < blen);
                if (parts[i].filename)
                    assert(strlen(parts[i].filename) < blen);
            }
        } else {
            assert(why && *why);
        }
        tg_arena_free(arena);
    } else {
        assert(why && *why);
    }
    free(body);
    free(ct);
    return 0;
}
