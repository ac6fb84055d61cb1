/* The standard process_* metrics, as the Prometheus client libraries
 * (client_golang, client_python) define them, read from Linux's /proc:
 *   process_cpu_seconds_total      counter  user + system CPU time
 *   process_resident_memory_bytes  gauge    resident set size
 *   process_virtual_memory_bytes   gauge    virtual memory size
 *   process_open_fds               gauge    open file descriptors
 *   process_max_fds                gauge    the open-files limit (RLIMIT_NOFILE)
 *   process_start_time_seconds     gauge    start time, Unix seconds
 * A value that cannot be read (no /proc) is left out rather than shown as
 * zero. No jansson values; thread-safe (reads only). */
#ifndef TG_CORE_PROCESS_METRICS_H
#define TG_CORE_PROCESS_METRICS_H

#include "core/buf.h"

/* The values of the calling process; -1 for one that cannot be read. */
typedef struct tg_process_stats_s {
    double cpu_seconds;
    double resident_bytes;
    double virtual_bytes;
    double open_fds;
    double max_fds;
    double start_time_seconds;
} tg_process_stats_t;

void tg_process_stats_read(tg_process_stats_t *st);

/* Append the families in the text format 0.0.4. */
tg_rc_e tg_process_metrics_render(tg_buf_t *out) TG_MUSTCHECK;

#endif
