/* The kubelet: process mode, simulated mode, status, termination. */
#include "pods.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "events.h"
#include "gc.h"
#include "procenv.h"
#include "rtypes.h"
#include "map.h"
#include "store.h"
#include "util.h"
#include "work.h"

#define KS_MAX_CONT 8

enum { CS_WAITING = 0, CS_RUNNING, CS_DONE };

typedef struct {
    char name[64];
    pid_t pid;
    int state;
    int exit_code;
    char reason[32];
    double started, finished;
    int oom;
    int restarts;
    char *log;      /* current log file */
    char *prev_log; /* the last terminated instance's, when has_prev */
    int has_prev;
    int log_pending; /* simulated: the "started" line is not written yet */
    double sim_end;
    int sim_exit;
    int reaped; /* set by the reader thread once waitpid returned */
    int wstatus;
} ks_cont_t;

typedef struct ks_prun_s {
    char uid[40], ns[256], name[256];
    char *dir;
    int ncont;
    ks_cont_t *c;
    /* Init containers (process mode) run one at a time before c[]: init_next
     * is the one running or due; c[] starts once it reaches ninit. */
    int ninit, init_next, init_failed;
    ks_cont_t *init;
    int simulated;
    int terminating;
    double kill_at;
    int evicted;
    char evict_reason[64], evict_msg[256];
    int changed;
    char restart_policy[16];
    int has_driver;
    ks_cont_t driver;
    char follow_uid[40];
    int gone; /* the pod object is gone; free once reaped */
    struct ks_prun_s *next;
} ks_prun_t;

static ks_prun_t *g_runs;
static ks_map_t *g_by_uid; /* pod uid -> run */
static int g_gone;         /* some run's pod is gone: free it once reaped */
static unsigned g_ipseq = 2;

typedef struct {
    ks_prun_t *run;
    ks_cont_t *c;
    int fd;
    int logfd;
} reader_t;

static ks_prun_t *run_find(const char *uid)
{
    return uid && g_by_uid ? ks_map_get(g_by_uid, uid) : NULL;
}

static void set_path(char **dst, const char *path)
{
    free(*dst);
    *dst = tg_xstrdup(path);
}

/* Look at the run's pod again in the next kubelet pass. */
static void run_touch(ks_prun_t *run)
{
    char ref[KS_REF_MAX];
    ks_ref_fmt(ref, sizeof(ref), KS_RT_PODS, run->ns, run->name);
    ks_work_add(KS_WQ_KUBELET, ref);
}

static void run_touch_at(ks_prun_t *run, double when)
{
    char ref[KS_REF_MAX];
    ks_ref_fmt(ref, sizeof(ref), KS_RT_PODS, run->ns, run->name);
    ks_work_at(when, KS_WQ_KUBELET, ref);
}

/* Submitter pods follow a head pod's driver: wake them when it changes. */
static void touch_followers(const char *head_uid)
{
    for (ks_prun_t *p = g_runs; p; p = p->next)
        if (!strcmp(p->follow_uid, head_uid))
            run_touch(p);
}

static void run_free(ks_prun_t *run)
{
    for (int i = 0; i < run->ncont; i++) {
        free(run->c[i].log);
        free(run->c[i].prev_log);
    }
    for (int i = 0; i < run->ninit; i++) {
        free(run->init[i].log);
        free(run->init[i].prev_log);
    }
    free(run->init);
    free(run->driver.log);
    free(run->driver.prev_log);
    free(run->c);
    free(run->dir);
    free(run);
}

int ks_pods_running(void)
{
    int n = 0;
    for (ks_prun_t *p = g_runs; p; p = p->next)
        for (int i = 0; i < p->ncont; i++)
            n += p->c[i].state == CS_RUNNING;
    return n;
}

void ks_pods_init(void)
{
    signal(SIGPIPE, SIG_IGN);
}

/* Append data to the log with a timestamp at each line start. */
static void log_write(int logfd, const char *buf, size_t n, int *at_line_start)
{
    char ts[48];
    size_t i = 0;
    while (i < n) {
        if (*at_line_start) {
            ks_fmt_time_nano(ks_now(), ts, sizeof(ts));
            size_t tl = strlen(ts);
            ts[tl++] = ' ';
            if (write(logfd, ts, tl) < 0)
                return;
            *at_line_start = 0;
        }
        const char *nl = memchr(buf + i, '\n', n - i);
        size_t len = nl ? (size_t)(nl - (buf + i)) + 1 : n - i;
        if (write(logfd, buf + i, len) < 0)
            return;
        if (nl)
            *at_line_start = 1;
        i += len;
    }
}

static void *reader_main(void *arg)
{
    reader_t *rd = arg;
    char buf[8192];
    int at_start = 1;
    for (;;) {
        ssize_t n = read(rd->fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        log_write(rd->logfd, buf, (size_t)n, &at_start);
    }
    if (!at_start && write(rd->logfd, "\n", 1) < 0)
        at_start = 1;
    close(rd->fd);
    close(rd->logfd);
    int st = 0;
    while (waitpid(rd->c->pid, &st, 0) < 0 && errno == EINTR)
        ;
    ks_lock();
    rd->c->wstatus = st;
    rd->c->reaped = 1;
    rd->run->changed = 1;
    if (rd->run->gone)
        g_gone = 1;
    run_touch(rd->run);
    ks_unlock();
    free(rd);
    return NULL;
}

/* Spawn argv with envp in dir; output goes through a reader thread into
 * c->log. Lock held. Returns 0 or -1. */
static int spawn(ks_prun_t *run, ks_cont_t *c, char **argv, char **envp, const char *cwd)
{
    int pfd[2];
    int logfd = open(c->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (logfd < 0)
        return -1;
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        close(logfd);
        return -1;
    }
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    pid_t pid = fork();
    if (pid == 0) {
        /* Child: only async-signal-safe calls until exec. */
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (devnull >= 0)
            dup2(devnull, 0);
        dup2(pfd[1], 1);
        dup2(pfd[1], 2);
        if (chdir(cwd) != 0)
            _exit(126);
        execvpe(argv[0], argv, envp);
        static const char msg[] = "exec failed: executable file not found in $PATH\n";
        if (write(2, msg, sizeof(msg) - 1) < 0)
            _exit(127);
        _exit(127);
    }
    if (devnull >= 0)
        close(devnull);
    close(pfd[1]);
    if (pid < 0) {
        close(pfd[0]);
        close(logfd);
        return -1;
    }
    setpgid(pid, pid); /* race-free either way */
    c->pid = pid;
    c->reaped = 0;
    reader_t *rd = tg_xcalloc(1, sizeof(*rd));
    rd->run = run;
    rd->c = c;
    rd->fd = pfd[0];
    rd->logfd = logfd;
    pthread_t th;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&at, 256 * 1024);
    if (pthread_create(&th, &at, reader_main, rd) != 0) {
        /* Without a reader nobody reaps; kill and reap now. */
        kill(-pid, SIGKILL);
        waitpid(pid, NULL, 0);
        close(pfd[0]);
        close(logfd);
        free(rd);
        pthread_attr_destroy(&at);
        return -1;
    }
    pthread_attr_destroy(&at);
    return 0;
}

/* A simulated container logs one line when it starts. The sandbox and the
 * file are made when the log is first read or moved (a restart), so that
 * thousands of simulated pods cost no file system work. */
static void sim_log_flush(ks_prun_t *run, ks_cont_t *c)
{
    if (!c->log_pending)
        return;
    c->log_pending = 0;
    ks_mkdirs(run->dir, 0755);
    int fd = open(c->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    char ts[48], line[256];
    ks_fmt_time_nano(c->started, ts, sizeof(ts));
    if (c == &run->driver)
        snprintf(line, sizeof(line), "%s kubesim: simulated ray job driver started\n", ts);
    else
        snprintf(line, sizeof(line), "%s kubesim: simulated container %s started\n", ts,
                 c->name);
    if (write(fd, line, strlen(line)) < 0)
        line[0] = '\0'; /* a lost log line is no reason to fail the pod */
    close(fd);
}

static int pod_simulated(json_t *pod)
{
    const char *m = ks_annotation(pod, "kubesim.io/mode");
    if (m)
        return !strcmp(m, "simulated");
    return ks_cfg.simulated;
}

static double ann_double(json_t *pod, const char *key, double dflt)
{
    const char *v = ks_annotation(pod, key);
    return v ? strtod(v, NULL) : dflt;
}

static void start_container(ks_prun_t *run, ks_cont_t *c, json_t *pod, json_t *cspec)
{
    c->state = CS_RUNNING;
    c->started = ks_now();
    c->reason[0] = '\0';
    c->oom = 0;
    if (run->follow_uid[0])
        return; /* follows the Ray driver; no process */
    if (run->simulated) {
        c->sim_end = c->started + ann_double(pod, "kubesim.io/duration-seconds", ks_cfg.sim_duration);
        c->sim_exit = (int)ann_double(pod, "kubesim.io/exit-code", 0);
        run_touch_at(run, c->sim_end);
        c->log_pending = 1;
        return;
    }
    ks_procspec_t ps;
    if (ks_procspec_build(&ps, pod, cspec, run->dir) != 0 ||
        spawn(run, c, ps.argv, ps.envp, ps.cwd) != 0) {
        c->state = CS_DONE;
        c->exit_code = 128;
        c->reaped = 1;
        c->pid = 0;
        ks_strlcpy(c->reason, "StartError", sizeof(c->reason));
        c->finished = ks_now();
    }
    ks_procspec_clean(&ps);
}

static void cont_init(ks_prun_t *run, ks_cont_t *c, json_t *cspec)
{
    char path[2048];
    ks_strlcpy(c->name, ks_jstr(cspec, "name"), sizeof(c->name));
    ks_fmt(path, sizeof(path), "%s/%s.log", run->dir, ks_jstr(cspec, "name"));
    set_path(&c->log, path);
    c->reaped = 1;
}

static void start_main(ks_prun_t *run, json_t *pod)
{
    for (int k = 0; k < run->ncont; k++)
        start_container(run, &run->c[k], pod,
                        json_array_get(ks_jget(pod, "spec.containers"), (size_t)k));
}

static ks_prun_t *run_create(json_t *pod)
{
    ks_prun_t *run = tg_xcalloc(1, sizeof(*run));
    ks_strlcpy(run->uid, ks_meta_uid(pod), sizeof(run->uid));
    ks_strlcpy(run->ns, ks_meta_ns(pod), sizeof(run->ns));
    ks_strlcpy(run->name, ks_meta_name(pod), sizeof(run->name));
    char path[2048];
    ks_fmt(path, sizeof(path), "%s/pods/%s_%s_%.8s", ks_cfg.state_dir, ks_meta_ns(pod),
           ks_meta_name(pod), ks_meta_uid(pod));
    set_path(&run->dir, path);
    run->simulated = pod_simulated(pod);
    if (!run->simulated)
        ks_mkdirs(run->dir, 0755); /* simulated: see sim_log_flush */
    const char *fu = ks_annotation(pod, "kubesim.io/follow-driver");
    if (fu)
        ks_strlcpy(run->follow_uid, fu, sizeof(run->follow_uid));
    const char *rp = ks_jstr(pod, "spec.restartPolicy");
    ks_strlcpy(run->restart_policy, rp ? rp : "Always", sizeof(run->restart_policy));
    size_t i;
    json_t *cs;
    size_t want = json_array_size(ks_jget(pod, "spec.containers"));
    run->c = tg_xcalloc(want ? (want < KS_MAX_CONT ? want : KS_MAX_CONT) : 1, sizeof(*run->c));
    json_array_foreach(ks_jget(pod, "spec.containers"), i, cs)
    {
        if (run->ncont == KS_MAX_CONT)
            break;
        cont_init(run, &run->c[run->ncont++], cs);
    }
    /* Simulated pods skip their init containers: they stand for no work. */
    want = run->simulated ? 0 : json_array_size(ks_jget(pod, "spec.initContainers"));
    run->init =
        want ? tg_xcalloc(want < KS_MAX_CONT ? want : KS_MAX_CONT, sizeof(*run->init)) : NULL;
    json_array_foreach(want ? ks_jget(pod, "spec.initContainers") : NULL, i, cs)
    {
        if (run->ninit == KS_MAX_CONT)
            break;
        cont_init(run, &run->init[run->ninit++], cs);
    }
    run->next = g_runs;
    g_runs = run;
    if (!g_by_uid)
        g_by_uid = ks_map_new();
    ks_map_put(g_by_uid, run->uid, run);
    if (run->ninit)
        start_container(run, &run->init[0], pod,
                        json_array_get(ks_jget(pod, "spec.initContainers"), 0));
    else
        start_main(run, pod);
    run->changed = 1;
    return run;
}

static const char *find_driver_log(const char *head_uid)
{
    ks_prun_t *h = run_find(head_uid);
    return h && h->has_driver ? h->driver.log : NULL;
}

/* initContainerStatuses, and the Initialized condition. */
static void write_init_status(ks_prun_t *run, json_t *st, json_t *pod)
{
    json_t *arr = json_array();
    char ts[48], ts2[48];
    for (int i = 0; i < run->ninit; i++) {
        ks_cont_t *c = &run->init[i];
        const char *image =
            ks_jstr(json_array_get(ks_jget(pod, "spec.initContainers"), (size_t)i), "image");
        json_t *state = json_object();
        if (c->state == CS_RUNNING) {
            ks_fmt_time(c->started, ts, sizeof(ts));
            json_object_set_new(state, "running", json_pack("{s:s}", "startedAt", ts));
        } else if (c->state == CS_DONE) {
            ks_fmt_time(c->started, ts, sizeof(ts));
            ks_fmt_time(c->finished, ts2, sizeof(ts2));
            json_object_set_new(state, "terminated",
                                json_pack("{s:i,s:s,s:s,s:s}", "exitCode", c->exit_code, "reason",
                                          c->reason, "startedAt", ts, "finishedAt", ts2));
        } else {
            json_object_set_new(state, "waiting", json_pack("{s:s}", "reason", "PodInitializing"));
        }
        json_array_append_new(arr,
                              json_pack("{s:s,s:o,s:b,s:i,s:s,s:s,s:b}", "name", c->name, "state",
                                        state, "ready", c->state == CS_DONE && !c->exit_code,
                                        "restartCount", c->restarts, "image", image ? image : "",
                                        "imageID", "", "started", c->state == CS_RUNNING));
    }
    json_object_set_new(st, "initContainerStatuses", arr);
    int done = run->init_next >= run->ninit;
    ks_cond_set(st, "Initialized", done ? "True" : "False", done ? "" : "ContainersNotInitialized",
                done ? "" : "containers with incomplete status: [init]", 0);
}

/* Container and pod status from the runtime state. */
static void write_status(ks_prun_t *run, json_t *pod)
{
    json_t *st = ks_jobj(pod, "status");
    json_t *arr = json_array();
    int all_done = 1, any_fail = 0, ready = 1;
    int initializing = run->init_next < run->ninit;
    char ts[48];
    if (run->ninit)
        write_init_status(run, st, pod);
    for (int i = 0; i < run->ncont; i++) {
        ks_cont_t *c = &run->c[i];
        json_t *spec = json_array_get(ks_jget(pod, "spec.containers"), (size_t)i);
        char cid[64];
        snprintf(cid, sizeof(cid), "kubesim://%s-%d-%d", run->uid, i, c->restarts);
        json_t *state = json_object();
        if (c->state == CS_RUNNING) {
            ks_fmt_time(c->started, ts, sizeof(ts));
            json_object_set_new(state, "running", json_pack("{s:s}", "startedAt", ts));
            all_done = 0;
        } else if (c->state == CS_DONE) {
            char ts2[48];
            ks_fmt_time(c->started, ts, sizeof(ts));
            ks_fmt_time(c->finished, ts2, sizeof(ts2));
            json_object_set_new(state, "terminated",
                                json_pack("{s:i,s:s,s:s,s:s,s:s}", "exitCode", c->exit_code,
                                          "reason", c->reason, "startedAt", ts, "finishedAt", ts2,
                                          "containerID", cid));
            if (c->exit_code)
                any_fail = 1;
            ready = 0;
        } else {
            json_object_set_new(state, "waiting",
                                json_pack("{s:s}", "reason",
                                          initializing ? "PodInitializing" : "ContainerCreating"));
            all_done = 0;
            ready = 0;
        }
        json_t *cs = json_pack("{s:s,s:o,s:b,s:i,s:s,s:s,s:s,s:b}", "name", c->name, "state",
                               state, "ready", c->state == CS_RUNNING, "restartCount", c->restarts,
                               "image", ks_jstr(spec, "image") ? ks_jstr(spec, "image") : "",
                               "imageID", "", "containerID", cid, "started",
                               c->state == CS_RUNNING);
        if (c->has_prev)
            json_object_set_new(cs, "lastState",
                                json_pack("{s:{s:i,s:s}}", "terminated", "exitCode", 1, "reason",
                                          "Error"));
        json_array_append_new(arr, cs);
    }
    json_object_set_new(st, "containerStatuses", arr);
    const char *phase = initializing ? "Pending" : "Running";
    if (run->init_failed) {
        phase = "Failed"; /* restartPolicy Never: a failed init container ends the pod */
    } else if (run->evicted) {
        phase = "Failed";
        json_object_set_new(st, "reason", json_string(run->evict_reason));
        json_object_set_new(st, "message", json_string(run->evict_msg));
    } else if (all_done) {
        phase = any_fail ? "Failed" : "Succeeded";
    }
    json_object_set_new(st, "phase", json_string(phase));
    ks_cond_set(st, "Ready", ready && !all_done ? "True" : "False",
                ready && !all_done ? "" : (all_done ? "PodCompleted" : "ContainersNotReady"), "", 0);
    ks_cond_set(st, "ContainersReady", ready && !all_done ? "True" : "False",
                ready && !all_done ? "" : (all_done ? "PodCompleted" : "ContainersNotReady"), "",
                0);
}

/* The running init container: once it ends, start the next one or the
 * main containers; a failure ends the pod under restartPolicy Never (or
 * while it is deleted) and restarts the init container otherwise. Lock
 * held. */
static void collect_init(ks_prun_t *run, json_t *pod)
{
    ks_cont_t *c = &run->init[run->init_next];
    json_t *specs = ks_jget(pod, "spec.initContainers");
    if (c->state == CS_RUNNING && c->pid && c->reaped) {
        int st = c->wstatus;
        c->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        c->state = CS_DONE;
        c->finished = ks_now();
        c->pid = 0;
        ks_strlcpy(c->reason, c->exit_code ? "Error" : "Completed", sizeof(c->reason));
        run->changed = 1;
    }
    if (c->state != CS_DONE || !c->reaped)
        return;
    if (!c->exit_code && !run->terminating) {
        if (++run->init_next < run->ninit)
            start_container(run, &run->init[run->init_next], pod,
                            json_array_get(specs, (size_t)run->init_next));
        else
            start_main(run, pod);
    } else if (run->terminating || !strcmp(run->restart_policy, "Never")) {
        run->init_failed = 1; /* the main containers never start */
    } else {
        c->restarts++;
        start_container(run, c, pod, json_array_get(specs, (size_t)run->init_next));
    }
    run->changed = 1;
}

/* Record reaped processes and restarts; lock held. */
static void collect(ks_prun_t *run, json_t *pod)
{
    if (run->init_next < run->ninit && !run->init_failed) {
        collect_init(run, pod);
        return;
    }
    for (int i = 0; i < run->ncont; i++) {
        ks_cont_t *c = &run->c[i];
        if (c->state == CS_RUNNING && run->follow_uid[0]) {
            int code = 0;
            int ds = ks_pods_driver_state(run->follow_uid, &code);
            const char *dl = find_driver_log(run->follow_uid);
            if (dl && strcmp(dl, c->log))
                set_path(&c->log, dl);
            if (ds == 2 || !run_find(run->follow_uid)) {
                c->state = CS_DONE;
                c->exit_code = ds == 2 ? code : 1;
                c->finished = ks_now();
                ks_strlcpy(c->reason, c->exit_code ? "Error" : "Completed", sizeof(c->reason));
                run->changed = 1;
            }
        } else if (c->state == CS_RUNNING && run->simulated && !c->pid) {
            if (ks_now() >= c->sim_end || run->terminating) {
                c->state = CS_DONE;
                c->exit_code = run->terminating ? 137 : c->sim_exit;
                if (c->oom)
                    c->exit_code = 137;
                c->finished = ks_now();
                ks_strlcpy(c->reason, c->oom ? "OOMKilled" : c->exit_code ? "Error" : "Completed",
                           sizeof(c->reason));
                run->changed = 1;
            }
        } else if (c->state == CS_RUNNING && c->pid && c->reaped) {
            int st = c->wstatus;
            c->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            if (c->oom)
                c->exit_code = 137;
            c->state = CS_DONE;
            c->finished = ks_now();
            c->pid = 0;
            ks_strlcpy(c->reason, c->oom ? "OOMKilled" : c->exit_code ? "Error" : "Completed",
                       sizeof(c->reason));
            run->changed = 1;
        }
        /* restartPolicy: OnFailure restarts failed containers, Always all. */
        if (c->state == CS_DONE && !run->terminating && !run->evicted && c->reaped &&
            (!strcmp(run->restart_policy, "Always") ||
             (!strcmp(run->restart_policy, "OnFailure") && c->exit_code != 0))) {
            char prev[2048];
            sim_log_flush(run, c);
            ks_fmt(prev, sizeof(prev), "%s/%s.%d.log", run->dir, c->name, c->restarts);
            set_path(&c->prev_log, prev);
            if (rename(c->log, c->prev_log) == 0)
                c->has_prev = 1;
            c->restarts++;
            start_container(run, c, pod, json_array_get(ks_jget(pod, "spec.containers"),
                                                         (size_t)i));
            run->changed = 1;
        }
    }
    if (run->has_driver && run->driver.state == CS_RUNNING) {
        ks_cont_t *d = &run->driver;
        if ((d->pid && d->reaped) || (!d->pid && ks_now() >= d->sim_end)) {
            d->exit_code = d->pid ? (WIFEXITED(d->wstatus) ? WEXITSTATUS(d->wstatus)
                                                           : 128 + WTERMSIG(d->wstatus))
                                  : d->sim_exit;
            d->state = CS_DONE;
            d->finished = ks_now();
            d->pid = 0;
            run->changed = 1;
            touch_followers(run->uid);
        }
    }
}

static int all_reaped(ks_prun_t *run)
{
    for (int i = 0; i < run->ncont; i++)
        if (!run->c[i].reaped)
            return 0;
    for (int i = 0; i < run->ninit; i++)
        if (!run->init[i].reaped)
            return 0;
    return !run->has_driver || run->driver.reaped;
}

static void signal_all(ks_prun_t *run, int sig)
{
    for (int i = 0; i < run->ncont; i++)
        if (run->c[i].pid && !run->c[i].reaped)
            kill(-run->c[i].pid, sig);
    for (int i = 0; i < run->ninit; i++)
        if (run->init[i].pid && !run->init[i].reaped)
            kill(-run->init[i].pid, sig);
    if (run->has_driver && run->driver.pid && !run->driver.reaped)
        kill(-run->driver.pid, sig);
}

static int node_ready(const char *node)
{
    json_t *n = ks_store_get(KS_RT_NODES, NULL, node);
    return n && ks_cond_true(json_object_get(n, "status"), "Ready");
}

static void assign_ip(json_t *pod)
{
    char ip[32];
    unsigned s = g_ipseq++;
    snprintf(ip, sizeof(ip), "10.244.%u.%u", (s / 250) % 250, s % 250 + 2);
    json_t *st = ks_jobj(pod, "status");
    json_object_set_new(st, "podIP", json_string(ip));
    json_object_set_new(st, "podIPs", json_pack("[{s:s}]", "ip", ip));
    json_object_set_new(st, "hostIP", json_string("192.168.0.10"));
    json_object_set_new(st, "startTime", ks_json_now());
}

static int touch_pod(json_t *p, void *arg)
{
    (void)arg;
    ks_work_add_obj(KS_WQ_KUBELET, KS_RT_PODS, p);
    return 0;
}

void ks_pods_observe(int rt, json_t *old, json_t *obj)
{
    if (rt == KS_RT_NODES) {
        /* Pods wait for a Ready node before they start. */
        ks_store_each(KS_RT_PODS, touch_pod, NULL);
        return;
    }
    if (rt != KS_RT_PODS)
        return;
    if (obj) {
        ks_work_add_obj(KS_WQ_KUBELET, rt, obj);
        return;
    }
    ks_prun_t *run = run_find(ks_meta_uid(old));
    if (run) {
        /* Freed in the next pass (free_gone), which this queued name brings. */
        run->gone = 1;
        g_gone = 1;
        ks_work_add_obj(KS_WQ_KUBELET, rt, old);
    }
}

/* One pod: start it once bound to a Ready node, collect its containers,
 * publish status changes, finish a graceful deletion. */
static void sync_pod(json_t *pod)
{
    const char *uid = ks_meta_uid(pod);
    ks_prun_t *run = run_find(uid);
    const char *node = ks_jstr(pod, "spec.nodeName");
    const char *phase = ks_jstr(pod, "status.phase");
    int terminal = ks_streq(phase, "Succeeded") || ks_streq(phase, "Failed");
    int deleting = ks_jget(pod, "metadata.deletionTimestamp") != NULL;
    if (!run && node && !terminal && !deleting && node_ready(node)) {
        run = run_create(pod);
        json_t *c = ks_copy_for_status(pod);
        assign_ip(c);
        json_t *st = ks_jobj(c, "status");
        ks_cond_set(st, "Initialized", "True", "", "", 0);
        ks_cond_set(st, "PodReadyToStartContainers", "True", "", "", 0);
        write_status(run, c);
        run->changed = 0;
        ks_event_emit(KS_RT_PODS, pod, "Normal", "Started", "Started container %s",
                      run->ncont ? run->c[0].name : "");
        ks_store_update(KS_RT_PODS, c, NULL);
        return;
    }
    if (!run) {
        /* A deleting pod without processes goes once finalizers allow. */
        if (deleting && !json_array_size(ks_jget(pod, "metadata.finalizers")))
            ks_store_remove(KS_RT_PODS, ks_meta_ns(pod), ks_meta_name(pod));
        return;
    }
    if (run->terminating && ks_now() >= run->kill_at)
        signal_all(run, SIGKILL);
    collect(run, pod);
    if (run->changed) {
        run->changed = 0;
        json_t *c = ks_copy_for_status(pod);
        write_status(run, c);
        ks_store_update(KS_RT_PODS, c, NULL);
    }
    int done = 1;
    for (int k = 0; k < run->ncont && !run->init_failed; k++)
        if (run->c[k].state != CS_DONE)
            done = 0;
    if (deleting && done && all_reaped(run)) {
        json_t *cur = ks_store_get(KS_RT_PODS, run->ns, run->name);
        if (cur && !json_array_size(ks_jget(cur, "metadata.finalizers")))
            ks_store_remove(KS_RT_PODS, run->ns, run->name);
    }
}

/* Forget runs whose pods are gone and whose processes are reaped. */
static void free_gone(void)
{
    g_gone = 0;
    ks_prun_t **pp = &g_runs;
    while (*pp) {
        ks_prun_t *r = *pp;
        if (r->gone) {
            signal_all(r, SIGKILL);
            if (all_reaped(r)) {
                *pp = r->next;
                ks_map_del(g_by_uid, r->uid);
                touch_followers(r->uid);
                run_free(r);
                continue;
            }
            g_gone = 1; /* its reader thread touches it when reaped */
        }
        pp = &r->next;
    }
}

void ks_pods_pass(void)
{
    char **refs = NULL;
    size_t n = ks_work_take(KS_WQ_KUBELET, KS_WORK_ROUND, &refs);
    for (size_t i = 0; i < n; i++) {
        json_t *pod = json_incref(ks_store_get_ref(refs[i], NULL));
        if (pod)
            sync_pod(pod);
        json_decref(pod);
    }
    ks_work_release(refs, n);
    if (g_gone)
        free_gone();
}

int ks_pods_kill(json_t *pod, long grace)
{
    ks_prun_t *run = run_find(ks_meta_uid(pod));
    if (!run)
        return 0;
    int running = run->init_next < run->ninit && !run->init_failed;
    for (int i = 0; i < run->ncont; i++)
        if (run->c[i].state == CS_RUNNING)
            running = 1;
    if (run->has_driver && run->driver.state == CS_RUNNING)
        running = 1;
    if (!running)
        return 0;
    if (grace < 0)
        grace = (long)ks_jint(pod, "spec.terminationGracePeriodSeconds", 30);
    if (grace > ks_cfg.grace_secs)
        grace = (long)ks_cfg.grace_secs;
    run->terminating = 1;
    run->kill_at = ks_now() + (double)grace;
    signal_all(run, grace == 0 ? SIGKILL : SIGTERM);
    run_touch(run);
    run_touch_at(run, run->kill_at);
    return 1;
}

void ks_pods_shutdown(void)
{
    ks_lock();
    for (ks_prun_t *r = g_runs; r; r = r->next)
        signal_all(r, SIGKILL);
    ks_unlock();
    /* Give reader threads a moment to reap, then free what is reaped. */
    for (int tries = 0; tries < 50; tries++) {
        int pending = 0;
        ks_lock();
        for (ks_prun_t *r = g_runs; r; r = r->next)
            pending += !all_reaped(r);
        ks_unlock();
        if (!pending)
            break;
        usleep(20000);
    }
    ks_lock();
    while (g_runs) {
        ks_prun_t *r = g_runs;
        if (!all_reaped(r))
            break; /* a reader still holds it; leak on exit rather than race */
        g_runs = r->next;
        run_free(r);
    }
    if (!g_runs) {
        ks_map_free(g_by_uid);
        g_by_uid = NULL;
    }
    ks_unlock();
}

int ks_pods_oomkill(const char *ns, const char *name, const char *container)
{
    json_t *pod = ks_store_get(KS_RT_PODS, ns, name);
    ks_prun_t *run = pod ? run_find(ks_meta_uid(pod)) : NULL;
    if (!run)
        return -1;
    int hit = 0;
    for (int i = 0; i < run->ncont; i++) {
        ks_cont_t *c = &run->c[i];
        if (c->state != CS_RUNNING || (container && strcmp(container, c->name)))
            continue;
        c->oom = 1;
        if (c->pid)
            kill(-c->pid, SIGKILL);
        else
            c->sim_end = 0;
        hit = 1;
    }
    run_touch(run);
    return hit ? 0 : -1;
}

int ks_pods_evict(const char *ns, const char *name, const char *reason, const char *msg)
{
    json_t *pod = ks_store_get(KS_RT_PODS, ns, name);
    ks_prun_t *run = pod ? run_find(ks_meta_uid(pod)) : NULL;
    if (!run)
        return -1;
    run->evicted = 1;
    ks_strlcpy(run->evict_reason, reason ? reason : "Evicted", sizeof(run->evict_reason));
    ks_strlcpy(run->evict_msg, msg ? msg : "The node was low on resource: memory.",
               sizeof(run->evict_msg));
    run->terminating = 1;
    run->kill_at = ks_now();
    signal_all(run, SIGKILL);
    for (int i = 0; i < run->ncont; i++)
        if (run->c[i].state == CS_RUNNING && !run->c[i].pid)
            run->c[i].sim_end = 0;
    run->changed = 1;
    run_touch(run);
    json_t *c = ks_copy_for_status(pod);
    ks_cond_set(ks_jobj(c, "status"), "DisruptionTarget", "True", "TerminationByKubelet",
                run->evict_msg, 0);
    ks_store_update(KS_RT_PODS, c, NULL);
    ks_event_emit(KS_RT_PODS, pod, "Warning", "Evicted", "%s", run->evict_msg);
    return 0;
}

void ks_pods_eviction(ks_req_t *r, ks_target_t *t)
{
    if (strcmp(r->method, "POST")) {
        ks_reply_status(r, 405, "MethodNotAllowed",
                        "the server does not allow this method on the requested resource", NULL);
        return;
    }
    ks_lock();
    int rc = ks_delete(KS_RT_PODS, t->ns, t->name, "Background", -1, NULL);
    ks_unlock();
    if (rc) {
        ks_reply_notfound(r, KS_RT_PODS, t->name);
        return;
    }
    ks_reply_json(r, 201, json_pack("{s:s,s:s,s:{},s:s,s:i}", "kind", "Status", "apiVersion",
                                    "v1", "metadata", "status", "Success", "code", 201));
}

int ks_pods_log_path(const char *uid, const char *container, int previous, char *out, size_t n,
                     int *running)
{
    ks_prun_t *run = run_find(uid);
    if (!run)
        return -1;
    for (int i = 0; i < run->ncont + run->ninit; i++) {
        ks_cont_t *c = i < run->ncont ? &run->c[i] : &run->init[i - run->ncont];
        if (strcmp(c->name, container))
            continue;
        if (previous && !c->has_prev)
            return -1;
        sim_log_flush(run, c);
        ks_prun_t *head = run->follow_uid[0] ? run_find(run->follow_uid) : NULL;
        if (head && head->has_driver)
            sim_log_flush(head, &head->driver); /* a submitter shows the driver's log */
        ks_strlcpy(out, previous ? c->prev_log : c->log, n);
        if (running)
            *running = !previous && (c->state == CS_RUNNING || !c->reaped);
        return 0;
    }
    return -1;
}

int ks_pods_start_driver(const char *head_uid, const char *cmd, json_t *cspec, double sim_secs,
                         int sim_exit)
{
    ks_prun_t *run = run_find(head_uid);
    if (!run || run->has_driver)
        return -1;
    json_t *pod = ks_store_get(KS_RT_PODS, run->ns, run->name);
    if (!pod)
        return -1;
    ks_cont_t *d = &run->driver;
    run->has_driver = 1;
    ks_strlcpy(d->name, "ray-job-driver", sizeof(d->name));
    char path[2048];
    ks_fmt(path, sizeof(path), "%s/driver.log", run->dir);
    set_path(&d->log, path);
    d->state = CS_RUNNING;
    d->started = ks_now();
    d->reaped = 1;
    if (run->simulated) {
        d->sim_end = d->started + sim_secs;
        d->sim_exit = sim_exit;
        run_touch_at(run, d->sim_end);
        d->log_pending = 1;
        return 0;
    }
    ks_procspec_t ps;
    json_t *spec = json_deep_copy(cspec ? cspec : json_object());
    json_object_set_new(spec, "command", json_pack("[s,s,s]", "/bin/sh", "-c", cmd));
    json_object_del(spec, "args");
    int rc = ks_procspec_build(&ps, pod, spec, run->dir);
    if (rc == 0)
        rc = spawn(run, d, ps.argv, ps.envp, ps.cwd);
    ks_procspec_clean(&ps);
    json_decref(spec);
    if (rc != 0) {
        d->state = CS_DONE;
        d->exit_code = 127;
        d->finished = ks_now();
    }
    return 0;
}

int ks_pods_driver_state(const char *head_uid, int *code)
{
    ks_prun_t *run = run_find(head_uid);
    if (!run || !run->has_driver)
        return 0;
    if (run->driver.state == CS_DONE) {
        if (code)
            *code = run->driver.exit_code;
        return 2;
    }
    return 1;
}
