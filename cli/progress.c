/* Progress on stderr. */
#include "progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/ids.h"

struct tau_progress_s {
    int shown;
    unsigned tick;
    uint64_t last_us;
    long long last_now;
};

tau_progress_t *tau_progress_new(const tau_ctx_t *ctx)
{
    if (!ctx->stderr_tty)
        return NULL;
    return tg_xcalloc(1, sizeof(tau_progress_t));
}

void tau_progress_free(tau_progress_t *p)
{
    if (!p)
        return;
    tau_progress_clear(p);
    free(p);
}

void tau_human_bytes(long long n, char *out, size_t outlen)
{
    if (n < 1024)
        snprintf(out, outlen, "%lld B", n);
    else if (n < 1024LL * 1024)
        snprintf(out, outlen, "%.1f KiB", (double)n / 1024.0);
    else
        snprintf(out, outlen, "%.1f MiB", (double)n / (1024.0 * 1024.0));
}

void tau_progress_bytes(tau_progress_t *p, const char *what, long long now, long long total)
{
    if (!p)
        return;
    uint64_t t = tg_now_mono_us();
    if (p->shown && (now == p->last_now || (now < total && t - p->last_us < 100000)))
        return; /* at most ten redraws a second, and none without news */
    p->last_us = t;
    p->last_now = now;
    char a[32], b[32];
    tau_human_bytes(now, a, sizeof(a));
    tau_human_bytes(total, b, sizeof(b));
    fprintf(stderr, "\r%s %s / %s (%lld%%)\033[K", what, a, b, total ? now * 100 / total : 100);
    fflush(stderr);
    p->shown = 1;
}

void tau_progress_text(tau_progress_t *p, const char *fmt, ...)
{
    static const char spin[] = "|/-\\";
    if (!p)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "\r%c ", spin[p->tick++ % 4]);
    vfprintf(stderr, fmt, ap);
    fputs("\033[K", stderr);
    va_end(ap);
    fflush(stderr);
    p->shown = 1;
}

void tau_progress_clear(tau_progress_t *p)
{
    if (!p || !p->shown)
        return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    p->shown = 0;
}
