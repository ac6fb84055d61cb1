/* The resume rule and chunk batching (see logs_batch.h). */
#include "engine/logs_batch.h"

#include <string.h>

#include "core/ids.h"
#include "engine/markers.h"

#define BATCH_SLACK 256 /* room for a line's timestamp and newline over max_line */

/* Length of a valid UTF-8 sequence at s, or 0. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    if (c >= 0x01 && c < 0x80)
        return 1;
    size_t need;
    unsigned cp;
    if (c >= 0xc2 && c <= 0xdf) {
        need = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        need = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        need = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (n < need)
        return 0;
    for (size_t i = 1; i < need; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((need == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
        (need == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    return need;
}

tg_rc_e tg_logs_utf8_append(tg_buf_t *out, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, run = 0; /* run: valid bytes not yet copied, ending at i */
    while (i < len) {
        size_t k = utf8_seq(p + i, len - i);
        if (k) {
            i += k;
            run += k;
            continue;
        }
        if (run && tg_buf_append(out, p + i - run, run) != TG_OK)
            return TG_ETOOLARGE;
        run = 0;
        if (tg_buf_append(out, "\xef\xbf\xbd", 3) != TG_OK)
            return TG_ETOOLARGE;
        i++;
    }
    if (run && tg_buf_append(out, p + i - run, run) != TG_OK)
        return TG_ETOOLARGE;
    return TG_OK;
}

/* ---- resume ---- */

void tg_logs_resume_none(tg_logs_resume_t *r)
{
    memset(r, 0, sizeof(*r));
    r->passed = 1;
}

void tg_logs_resume_at(tg_logs_resume_t *r, int64_t last_ns, long equal)
{
    memset(r, 0, sizeof(*r));
    r->active = 1;
    r->last_ns = last_ns;
    r->equal = equal;
}

/* Walk the lines of one chunk backwards; returns 1 when a line before T was
 * met (the count is final). */
static int resume_scan_chunk(tg_logs_resume_t *r, const char *c, size_t len)
{
    size_t end = len;
    while (end > 0) {
        if (c[end - 1] == '\n')
            end--;
        size_t start = end;
        while (start > 0 && c[start - 1] != '\n')
            start--;
        int64_t ns;
        const char *text;
        size_t tlen;
        if (tg_logs_line_split(c + start, end - start, &ns, &text, &tlen)) {
            if (!r->active) {
                tg_logs_resume_at(r, ns, 1);
            } else if (ns == r->last_ns) {
                r->equal++;
            } else {
                return 1;
            }
        } else if (r->active) {
            return 1; /* a line without a timestamp ends the run */
        }
        end = start;
    }
    return 0;
}

void tg_logs_resume_from_content(tg_logs_resume_t *r, const char *const *contents,
                                 const size_t *lens, size_t n)
{
    tg_logs_resume_none(r);
    r->passed = 0;
    for (size_t i = 0; i < n; i++)
        if (resume_scan_chunk(r, contents[i], lens[i]))
            break;
    if (!r->active)
        tg_logs_resume_none(r);
}

int tg_logs_resume_keep(tg_logs_resume_t *r, int has_ts, int64_t ns)
{
    if (r->passed || !r->active)
        return 1;
    if (!has_ts || ns < r->last_ns)
        return 0;
    if (ns == r->last_ns && r->seen_equal < r->equal) {
        r->seen_equal++;
        return 0;
    }
    r->passed = 1;
    return 1;
}

/* ---- batching ---- */

void tg_logs_batch_init(tg_logs_batch_t *b, size_t max_bytes, size_t max_line_bytes)
{
    memset(b, 0, sizeof(*b));
    b->max_bytes = max_bytes;
    /* a full batch plus one line, grown by U+FFFD replacement (3x) */
    tg_buf_init(&b->content, max_bytes + 3 * max_line_bytes + BATCH_SLACK);
    b->metrics = json_array();
    b->checkpoints = json_array();
}

void tg_logs_batch_clean(tg_logs_batch_t *b)
{
    tg_buf_clean(&b->content);
    json_decref(b->metrics);
    json_decref(b->checkpoints);
    memset(b, 0, sizeof(*b));
}

void tg_logs_batch_reset(tg_logs_batch_t *b)
{
    tg_buf_reset(&b->content);
    b->lines = 0;
    b->has_ts = 0;
    b->first_ns = b->last_ns = 0;
    b->opened_us = 0;
    b->invalid_markers = 0;
    json_array_clear(b->metrics);
    json_array_clear(b->checkpoints);
}

static json_t *batch_time(int64_t us)
{
    char at[40];
    tg_time_rfc3339(us, at, sizeof(at));
    return json_string(at);
}

static void batch_markers(tg_logs_batch_t *b, const char *text, size_t tlen, int64_t ns)
{
    tg_marker_t m;
    int64_t at_us = ns / 1000;
    tg_marker_kind_e kind = tg_marker_parse(text, tlen, at_us, &m);
    if (kind == TG_MARKER_METRIC) {
        for (size_t i = 0; i < m.nfields; i++) {
            const tg_marker_field_t *f = &m.fields[i];
            json_t *row = json_pack("{s:s, s:o, s:o, s:o, s:o}", "name", f->name, "step",
                                    m.has_step ? json_integer(m.step) : json_null(), "at",
                                    batch_time(m.at_us), "value",
                                    f->finite ? json_real(f->value) : json_null(), "raw",
                                    f->raw ? json_string(f->raw) : json_null());
            if (row)
                json_array_append_new(b->metrics, row);
        }
    } else if (kind == TG_MARKER_CHECKPOINT) {
        json_t *row =
            json_pack("{s:s, s:o, s:o}", "path", m.path, "step",
                      m.has_step ? json_integer(m.step) : json_null(), "at", batch_time(m.at_us));
        if (row)
            json_array_append_new(b->checkpoints, row);
    } else if (kind == TG_MARKER_INVALID) {
        b->invalid_markers++;
    }
    tg_marker_clean(&m);
}

tg_rc_e tg_logs_batch_add(tg_logs_batch_t *b, const char *line, size_t len, uint64_t now_us)
{
    size_t mark = b->content.len;
    if (tg_logs_utf8_append(&b->content, line, len) != TG_OK ||
        tg_buf_append(&b->content, "\n", 1) != TG_OK) {
        b->content.len = mark; /* roll the partial line back */
        if (b->content.data)
            b->content.data[mark] = '\0';
        return TG_ETOOLARGE;
    }
    const char *stored = b->content.data + mark;
    size_t slen = b->content.len - mark - 1;
    int64_t ns = 0;
    const char *text;
    size_t tlen;
    if (tg_logs_line_split(stored, slen, &ns, &text, &tlen)) {
        if (!b->has_ts)
            b->first_ns = ns;
        b->has_ts = 1;
        b->last_ns = ns;
        batch_markers(b, text, tlen, ns);
    } else {
        batch_markers(b, stored, slen, tg_now_wall_us() * 1000);
    }
    if (b->lines++ == 0)
        b->opened_us = now_us ? now_us : 1;
    return TG_OK;
}

int tg_logs_batch_due(const tg_logs_batch_t *b, uint64_t now_us, uint64_t interval_us)
{
    if (b->lines == 0)
        return 0;
    return b->content.len >= b->max_bytes || now_us - b->opened_us >= interval_us;
}
