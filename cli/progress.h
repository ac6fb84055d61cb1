/* Progress on stderr while uploading or waiting, only on a terminal: one line
 * redrawn in place ("\r...\033[K") and cleared before anything else prints. */
#ifndef TAU_PROGRESS_H
#define TAU_PROGRESS_H

#include "tau.h"

typedef struct tau_progress_s tau_progress_t;

/* A progress line, or NULL when stderr is not a terminal (all functions
 * accept NULL and then do nothing). */
tau_progress_t *tau_progress_new(const tau_ctx_t *ctx);
void tau_progress_free(tau_progress_t *p);
/* "uploading 12.0 KiB / 40.0 KiB (30%)" */
void tau_progress_bytes(tau_progress_t *p, const char *what, long long now, long long total);
/* "<spinner> <text>"; the spinner advances on each call. */
void tau_progress_text(tau_progress_t *p, const char *fmt, ...) TG_PRINTF(2, 3);
/* Erase the line (before printing something else). */
void tau_progress_clear(tau_progress_t *p);

/* "12.0 KiB" into out. */
void tau_human_bytes(long long n, char *out, size_t outlen);

#endif
