/* What libmicrohttpd 0.9.75 lets through a request head and RFC 9112 does
 * not: checked once the head is whole, before a byte of the body is read,
 * so a refusal closes the connection (nothing that follows can be taken for
 * another request).
 *
 * Refused: two Content-Length headers (the library uses the first), one with
 * Transfer-Encoding, a Transfer-Encoding other than chunked (501), a header
 * name that is not a token (a space before the colon, a control byte), a
 * control byte in a value, a NUL or control byte in the target, raw or
 * percent-encoded (the library decodes %00 into the end of the path), an
 * HTTP/1.1 request without Host, an Expect other than 100-continue (417), a
 * target over 8 KiB (414), headers over max_header_bytes (431; a bearer
 * token over it is a 401). libmicrohttpd's memory limit is set above these so
 * they are answered here, as problem+json. */
#ifndef TG_HTTP_HEAD_CHECK_H
#define TG_HTTP_HEAD_CHECK_H

#include <microhttpd.h>

#include "core/config.h"

#define TG_HEAD_MAX_TARGET_BYTES 8192

typedef struct {
    unsigned status; /* 0: the head is acceptable */
    const char *slug;
    const char *title;
    const char *www_authenticate; /* a 401's challenge, else NULL */
    char detail[256];
} tg_head_fault_t;

/* raw_target: the request target as sent (before percent-decoding). 0 when
 * acceptable, else -1 with f filled. */
int tg_head_check(struct MHD_Connection *conn, const char *raw_target, const char *version,
                  const tg_config_t *cfg, tg_head_fault_t *f);

#endif
