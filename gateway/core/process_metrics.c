/* process_* metrics from /proc (see process_metrics.h). */
#include "core/process_metrics.h"

#include <dirent.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* The system's boot time (Unix seconds) from /proc/stat's btime; -1. */
static double pm_boot_time(void)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return -1;
    char line[256];
    double bt = -1;
    while (fgets(line, sizeof(line), f)) {
        unsigned long long v;
        if (sscanf(line, "btime %llu", &v) == 1) {
            bt = (double)v;
            break;
        }
    }
    fclose(f);
    return bt;
}

/* utime, stime, starttime (clock ticks), vsize (bytes), rss (pages) from
 * /proc/self/stat. The command name (field 2) may hold spaces and ')', so
 * the fields are counted from its last ')'. Returns 0 or -1. */
static int pm_stat(unsigned long long *utime, unsigned long long *stime, unsigned long long *start,
                   unsigned long long *vsize, long long *rss)
{
    char buf[1024];
    FILE *f = fopen("/proc/self/stat", "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    if (!p)
        return -1;
    /* after ")": field 3 (state) ... 14 utime, 15 stime, 22 starttime, 23 vsize, 24 rss */
    int got = sscanf(p + 1,
                     " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d"
                     " %*d %*d %llu %llu %lld",
                     utime, stime, start, vsize, rss);
    return got == 5 ? 0 : -1;
}

static double pm_open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    double n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (de->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1; /* not the one reading the folder */
}

void tg_process_stats_read(tg_process_stats_t *st)
{
    st->cpu_seconds = st->resident_bytes = st->virtual_bytes = -1;
    st->open_fds = st->max_fds = st->start_time_seconds = -1;
    unsigned long long ut, stm, start, vsize;
    long long rss;
    long ticks = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
    if (pm_stat(&ut, &stm, &start, &vsize, &rss) == 0 && ticks > 0 && page > 0) {
        st->cpu_seconds = (double)(ut + stm) / (double)ticks;
        st->virtual_bytes = (double)vsize;
        st->resident_bytes = (double)rss * (double)page;
        double boot = pm_boot_time();
        if (boot >= 0)
            st->start_time_seconds = boot + (double)start / (double)ticks;
    }
    st->open_fds = pm_open_fds();
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
        st->max_fds = rl.rlim_cur == RLIM_INFINITY ? -1 : (double)rl.rlim_cur;
}

tg_rc_e tg_process_metrics_render(tg_buf_t *out)
{
    static const struct {
        const char *name, *type, *help;
        size_t offset;
    } fams[] = {
        {"process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.",
         offsetof(tg_process_stats_t, cpu_seconds)},
        {"process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
         offsetof(tg_process_stats_t, resident_bytes)},
        {"process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.",
         offsetof(tg_process_stats_t, virtual_bytes)},
        {"process_open_fds", "gauge", "Number of open file descriptors.",
         offsetof(tg_process_stats_t, open_fds)},
        {"process_max_fds", "gauge", "Maximum number of open file descriptors.",
         offsetof(tg_process_stats_t, max_fds)},
        {"process_start_time_seconds", "gauge",
         "Start time of the process since unix epoch in seconds.",
         offsetof(tg_process_stats_t, start_time_seconds)},
    };
    tg_process_stats_t st;
    tg_process_stats_read(&st);
    for (size_t i = 0; i < TG_ARRAY_LEN(fams); i++) {
        double v = *(const double *)((const char *)&st + fams[i].offset);
        if (v < 0)
            continue;
        if (tg_buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n%s %.15g\n", fams[i].name, fams[i].help,
                          fams[i].name, fams[i].type, fams[i].name, v) != TG_OK)
            return TG_ETOOLARGE;
    }
    return TG_OK;
}
