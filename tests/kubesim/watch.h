/* Watch streams: chunked JSON lines (or one-row Tables for kubectl -w),
 * from a resourceVersion, with bookmarks and 410 Gone for expired ones. */
#ifndef KS_WATCH_H
#define KS_WATCH_H

#include "api.h"
#include "selectors.h"

/* Start a watch for target t; takes ownership of both selectors. */
void ks_watch_start(ks_req_t *r, ks_target_t *t, ks_sel_t *ls, ks_sel_t *fs);
/* Faults: hold back the events of every watch of resource type `rt`
 * (KS_RT_*; -1: of every watch) for `secs`; end all watches now. */
void ks_watch_stall(double secs, int rt);
void ks_watch_close_all(void);
/* Number of open watches (stats). */
int ks_watch_count(void);

#endif
