/* Packing a submission. */
#include "pack.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/digest.h"
#include "core/ids.h"
#include "output.h"
#include "progress.h"
#include "yamldoc.h"
#include "zip.h"

#define PACK_SPEC_MAX     (1024u * 1024)
#define PACK_FILE_MAX     (8u * 1024 * 1024)
#define PACK_MAX_ENTRIES  10000
#define PACK_MAX_DEPTH    32
#define PACK_MAX_EXCLUDES 256

static const char *const pack_default_excludes[] = {".git", "__pycache__", "*.pyc"};

static void pack_problem(tau_pack_t *p, const char *ypath, int line, int col, const char *msg)
{
    if (!p->problems)
        p->problems = json_array();
    json_t *e = json_object();
    json_object_set_new(e, "path", json_string(ypath ? ypath : ""));
    if (line > 0) {
        json_object_set_new(e, "line", json_integer(line));
        json_object_set_new(e, "column", json_integer(col));
    }
    /* the message may quote file names that are not UTF-8 */
    json_t *m = json_string(msg);
    json_object_set_new(e, "message", m ? m : json_string("(a message that is not UTF-8)"));
    json_array_append_new(p->problems, e);
}

void tau_pack_clean(tau_pack_t *p)
{
    free(p->spec_path);
    free(p->spec_name);
    free(p->spec);
    free(p->run_name);
    free(p->workspace);
    for (size_t i = 0; i < p->nfiles; i++) {
        free(p->files[i].name);
        free(p->files[i].data);
    }
    json_decref(p->problems);
    memset(p, 0, sizeof(*p));
}

/* Record a problem with the submission (at a node of the tau.yaml when n is
 * given) in p->problems, in the shape of a problem document's errors[]
 * entry: {path, line, column, message}. Returns the exit code (2). */
static int pack_error(const tau_ctx_t *ctx, tau_pack_t *p, const yaml_node_t *n, const char *ypath,
                      const char *fmt, ...) TG_PRINTF(5, 6);

static int pack_error(const tau_ctx_t *ctx, tau_pack_t *p, const yaml_node_t *n, const char *ypath,
                      const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    int line = 0, col = 0;
    if (n)
        tau_ydoc_pos(n, &line, &col);
    pack_problem(p, ypath, line, col, msg);
    (void)ctx;
    return TAU_EXIT_USAGE;
}

/* A clean relative path: not absolute, no "." or ".." segments (except a
 * lone "."), no empty segments. */
static int pack_rel_ok(const char *s, int allow_dot)
{
    if (!*s || s[0] == '/')
        return 0;
    if (strcmp(s, ".") == 0)
        return allow_dot;
    const char *p = s;
    while (*p) {
        size_t n = strcspn(p, "/");
        if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            return 0;
        p += n;
        if (*p == '/') {
            p++;
            if (!*p)
                return 0;
        }
    }
    return 1;
}

static void pack_join(tg_buf_t *b, const char *dir, const char *rel)
{
    tg_buf_reset(b);
    tg_rc_e rc = strcmp(dir, ".") == 0 && strcmp(rel, ".") != 0 ? tg_buf_puts(b, rel)
                 : strcmp(rel, ".") == 0                        ? tg_buf_puts(b, dir)
                                         : tg_buf_printf(b, "%s/%s", dir, rel);
    if (rc != TG_OK)
        tg_buf_reset(b);
}

static int pack_add_file(tau_pack_t *p, const char *name, char *data, size_t len)
{
    if (p->nfiles == TAU_PACK_MAX_FILES) {
        free(data);
        return -1;
    }
    p->files[p->nfiles].name = tg_xstrdup(name);
    p->files[p->nfiles].data = (unsigned char *)data;
    p->files[p->nfiles].len = len;
    p->nfiles++;
    return 0;
}

/* ---- excludes ---------------------------------------------------------------- */

int tau_pack_excluded(const char *rel, int is_dir, const char *const *patterns, size_t n)
{
    const char *base = strrchr(rel, '/');
    base = base ? base + 1 : rel;
    for (size_t i = 0; i < n; i++) {
        char pat[1024];
        const char *src = patterns[i];
        if (!src || !*src || src[0] == '#')
            continue;
        if (snprintf(pat, sizeof(pat), "%s", src) >= (int)sizeof(pat))
            continue;
        size_t len = strlen(pat);
        int dir_only = 0;
        while (len > 1 && pat[len - 1] == '/') {
            pat[--len] = '\0';
            dir_only = 1;
        }
        if (dir_only && !is_dir)
            continue;
        const char *pp = pat;
        int anchored = 0;
        if (pp[0] == '/') {
            pp++;
            anchored = 1;
        }
        if (strchr(pp, '/'))
            anchored = 1;
        if (strncmp(pp, "./", 2) == 0)
            pp += 2;
        int flags = strstr(pp, "**") ? 0 : FNM_PATHNAME;
        if (anchored ? fnmatch(pp, rel, flags) == 0 : fnmatch(pp, base, 0) == 0)
            return 1;
    }
    return 0;
}

/* ---- the project folder --------------------------------------------------------- */

typedef struct {
    char *rel; /* relative to the project folder */
    size_t size;
    unsigned mode;
} pack_entry_t;

typedef struct {
    pack_entry_t *v;
    size_t n, cap;
    const char **excludes;
    size_t nexcludes;
    size_t skipped_links;
    int too_many;
} pack_walk_t;

static int pack_name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int pack_walk(pack_walk_t *w, const char *root, const char *rel, int depth, char *err,
                     size_t errlen)
{
    int rc = -1;
    tg_buf_t path, child;
    tg_buf_init(&path, 8192);
    tg_buf_init(&child, 8192);
    char **names = NULL;
    size_t nn = 0, cap = 0;
    DIR *d = NULL;
    pack_join(&path, root, *rel ? rel : ".");
    if (depth > PACK_MAX_DEPTH) {
        snprintf(err, errlen, "%s nests more than %d folders deep", path.data, PACK_MAX_DEPTH);
        goto out;
    }
    d = opendir(path.data ? path.data : "");
    if (!d) {
        snprintf(err, errlen, "cannot read folder %s: %s", path.data ? path.data : rel,
                 strerror(errno));
        goto out;
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (nn == cap) {
            cap = cap ? cap * 2 : 32;
            names = tg_xrealloc(names, cap * sizeof(char *));
        }
        names[nn++] = tg_xstrdup(de->d_name);
    }
    qsort(names, nn, sizeof(char *), pack_name_cmp);
    for (size_t i = 0; i < nn; i++) {
        tg_buf_reset(&child);
        if ((*rel ? tg_buf_printf(&child, "%s/%s", rel, names[i])
                  : tg_buf_puts(&child, names[i])) != TG_OK) {
            snprintf(err, errlen, "a path under %s is too long", rel);
            goto out;
        }
        pack_join(&path, root, child.data);
        struct stat st;
        if (lstat(path.data, &st) != 0) {
            snprintf(err, errlen, "cannot stat %s: %s", path.data, strerror(errno));
            goto out;
        }
        int is_dir = S_ISDIR(st.st_mode);
        if (tau_pack_excluded(child.data, is_dir, pack_default_excludes,
                              TG_ARRAY_LEN(pack_default_excludes)) ||
            tau_pack_excluded(child.data, is_dir, w->excludes, w->nexcludes))
            continue;
        if (is_dir) {
            if (pack_walk(w, root, child.data, depth + 1, err, errlen) != 0)
                goto out;
        } else if (S_ISREG(st.st_mode)) {
            if (w->n == PACK_MAX_ENTRIES) {
                w->too_many = 1;
                snprintf(err, errlen,
                         "the project holds more than %d files; leave some out with "
                         "run.working_dir_excludes",
                         PACK_MAX_ENTRIES);
                goto out;
            }
            if (w->n == w->cap) {
                w->cap = w->cap ? w->cap * 2 : 64;
                w->v = tg_xrealloc(w->v, w->cap * sizeof(pack_entry_t));
            }
            w->v[w->n].rel = tg_xstrdup(child.data);
            w->v[w->n].size = (size_t)st.st_size;
            w->v[w->n].mode = (unsigned)st.st_mode & 0777u;
            w->n++;
        } else if (S_ISLNK(st.st_mode)) {
            w->skipped_links++; /* links could point outside the project: never followed */
        }
    }
    rc = 0;
out:
    if (d)
        closedir(d);
    for (size_t i = 0; i < nn; i++)
        free(names[i]);
    free(names);
    tg_buf_clean(&path);
    tg_buf_clean(&child);
    return rc;
}

static int pack_size_cmp(const void *a, const void *b)
{
    const pack_entry_t *x = a, *y = b;
    return x->size < y->size ? 1 : x->size > y->size ? -1 : strcmp(x->rel, y->rel);
}

static int pack_project(const tau_ctx_t *ctx, tau_pack_t *p, tau_ydoc_t *doc, const char *dir,
                        const char *wd, size_t project_max)
{
    int rc = TAU_EXIT_USAGE;
    yaml_node_t *wd_node = tau_ydoc_get(doc, "run.working_dir");
    yaml_node_t *ex_node = tau_ydoc_get(doc, "run.working_dir_excludes");
    const char *excludes[PACK_MAX_EXCLUDES];
    pack_walk_t w = {.excludes = excludes};
    tau_zip_t z;
    tau_zip_init(&z, project_max);
    tg_buf_t root, full, name;
    tg_buf_init(&root, 8192);
    tg_buf_init(&full, 8192);
    tg_buf_init(&name, 8192);
    char err[512] = "";
    if (!pack_rel_ok(wd, 1)) {
        rc = pack_error(ctx, p, wd_node, "run.working_dir",
                        "\"%s\" must be a clean relative path to the project folder", wd);
        goto out;
    }
    if (ex_node && ex_node->type == YAML_SEQUENCE_NODE) {
        for (yaml_node_item_t *it = ex_node->data.sequence.items.start;
             it < ex_node->data.sequence.items.top && w.nexcludes < PACK_MAX_EXCLUDES; it++) {
            yaml_node_t *x = yaml_document_get_node(&doc->doc, *it);
            if (x && x->type == YAML_SCALAR_NODE)
                excludes[w.nexcludes++] = (const char *)x->data.scalar.value;
        }
    }
    pack_join(&root, dir, wd);
    struct stat st;
    if (!root.data || stat(root.data, &st) != 0 || !S_ISDIR(st.st_mode)) {
        rc = pack_error(ctx, p, wd_node, "run.working_dir", "%s is not a folder",
                        root.data ? root.data : wd);
        goto out;
    }
    if (pack_walk(&w, root.data, "", 0, err, sizeof(err)) != 0) {
        rc = pack_error(ctx, p, wd_node, "run.working_dir", "%s", err);
        goto out;
    }
    if (w.skipped_links)
        tau_warn(ctx, "left %zu symbolic link%s out of the project archive", w.skipped_links,
                 w.skipped_links == 1 ? "" : "s");
    /* the archive's size is known before reading anything: say what is too big */
    /* Entries sit under one top-level folder, which Ray strips when it
     * unpacks a working_dir archive: the working_dir path itself, or
     * TAU_PACK_PROJECT_TOP for "." (so a project whose only top-level entry
     * is a folder is not stripped by accident). The gateway looks for the
     * entrypoint at <working_dir>/<entrypoint>, or below one top folder. */
    const char *shown = strcmp(wd, ".") == 0 ? "" : wd; /* for messages */
    const char *prefix = *shown ? wd : TAU_PACK_PROJECT_TOP;
    size_t total = 22;
    for (size_t i = 0; i < w.n; i++)
        total += 76 + 2 * (strlen(prefix) + 1 + strlen(w.v[i].rel)) + w.v[i].size;
    if (total > project_max) {
        qsort(w.v, w.n, sizeof(pack_entry_t), pack_size_cmp);
        char big[512] = "";
        size_t used = 0;
        for (size_t i = 0; i < w.n && i < 3; i++) {
            char hb[32];
            tau_human_bytes((long long)w.v[i].size, hb, sizeof(hb));
            int k = snprintf(big + used, sizeof(big) - used, "%s%s%s%s (%s)", i ? ", " : "", shown,
                             *shown ? "/" : "", w.v[i].rel, hb);
            if (k < 0 || (size_t)k >= sizeof(big) - used)
                break;
            used += (size_t)k;
        }
        rc = pack_error(ctx, p, wd_node, "run.working_dir",
                        "the project archive would be about %zu bytes; the limit is %zu: leave "
                        "large files out with run.working_dir_excludes and keep data on a PVC "
                        "(largest: %s)",
                        total, project_max, big);
        goto out;
    }
    for (size_t i = 0; i < w.n; i++) {
        char *data = NULL;
        size_t len = 0;
        pack_join(&full, root.data, w.v[i].rel);
        tg_buf_reset(&name);
        tg_rc_e br = *prefix ? tg_buf_printf(&name, "%s/%s", prefix, w.v[i].rel)
                             : tg_buf_puts(&name, w.v[i].rel);
        if (br != TG_OK ||
            tau_read_file(full.data, project_max + 1, &data, &len, err, sizeof(err)) != 0) {
            rc = pack_error(ctx, p, wd_node, "run.working_dir", "%s",
                            br != TG_OK ? "a path is too long" : err);
            goto out;
        }
        int zr = tau_zip_add(&z, name.data, data, len, w.v[i].mode);
        free(data);
        if (zr != 0) {
            rc = pack_error(ctx, p, wd_node, "run.working_dir",
                            "the project archive grew past %zu bytes while packing (%s)",
                            project_max, name.data);
            goto out;
        }
    }
    if (tau_zip_finish(&z) != 0) {
        rc = pack_error(ctx, p, wd_node, "run.working_dir",
                        "the project archive is larger than %zu bytes", project_max);
        goto out;
    }
    p->project_entries = z.count;
    size_t zlen = 0;
    char *zdata = tg_buf_steal(&z.out, &zlen);
    if (pack_add_file(p, TAU_PACK_PROJECT_NAME, zdata, zlen) != 0) {
        rc = pack_error(ctx, p, wd_node, "run.working_dir", "too many files to send");
        goto out;
    }
    rc = 0;
out:
    for (size_t i = 0; i < w.n; i++)
        free(w.v[i].rel);
    free(w.v);
    tau_zip_clean(&z);
    tg_buf_clean(&root);
    tg_buf_clean(&full);
    tg_buf_clean(&name);
    return rc;
}

/* ---- the whole submission ------------------------------------------------------- */

static const char *pack_entrypoint(tau_ydoc_t *doc, const char **ypath)
{
    static const char *const paths[] = {"run.entrypoint", "run.script", "entrypoint", "script"};
    for (size_t i = 0; i < TG_ARRAY_LEN(paths); i++) {
        const char *v = tau_ydoc_str(doc, paths[i]);
        if (v) {
            *ypath = paths[i];
            return v;
        }
    }
    return NULL;
}

/* Does runtime.pip name requirements.txt ("-r requirements.txt")? */
static yaml_node_t *pack_pip_mentions(tau_ydoc_t *doc)
{
    yaml_node_t *pip = tau_ydoc_get(doc, "runtime.pip");
    if (!pip || pip->type != YAML_SEQUENCE_NODE)
        return NULL;
    for (yaml_node_item_t *it = pip->data.sequence.items.start; it < pip->data.sequence.items.top;
         it++) {
        yaml_node_t *x = yaml_document_get_node(&doc->doc, *it);
        if (x && x->type == YAML_SCALAR_NODE &&
            strstr((const char *)x->data.scalar.value, TAU_PACK_REQUIREMENTS))
            return x;
    }
    return NULL;
}

int tau_pack_load(const tau_ctx_t *ctx, const char *path, size_t project_max, tau_pack_t *p,
                  json_t **problems)
{
    *problems = NULL;
    memset(p, 0, sizeof(*p));
    tau_ydoc_t doc;
    memset(&doc, 0, sizeof(doc));
    tg_buf_t full;
    tg_buf_init(&full, 8192);
    char err[512];
    int rc = TAU_EXIT_USAGE;
    p->spec_path = tg_xstrdup(path);
    const char *slash = strrchr(path, '/');
    p->spec_name = tg_xstrdup(slash ? slash + 1 : path);
    char *dir = slash ? tg_xstrndup(path, (size_t)(slash - path)) : tg_xstrdup(".");
    if (slash == path) {
        free(dir);
        dir = tg_xstrdup("/");
    }
    if (tau_read_file(path, PACK_SPEC_MAX, &p->spec, &p->spec_len, err, sizeof(err)) != 0) {
        rc = pack_error(ctx, p, NULL, NULL, "%s", err);
        goto out;
    }
    int line, col;
    if (tau_ydoc_parse(&doc, p->spec, p->spec_len, err, sizeof(err), &line, &col) != 0) {
        pack_problem(p, NULL, line, col, err);
        goto out;
    }
    yaml_node_t *root = yaml_document_get_root_node(&doc.doc);
    if (!root || root->type != YAML_MAPPING_NODE) {
        rc = pack_error(ctx, p, root, NULL, "a tau.yaml must be a mapping of keys to values");
        goto out;
    }
    const char *v = tau_ydoc_str(&doc, "run.name");
    if (!v)
        v = tau_ydoc_str(&doc, "name");
    p->run_name = v ? tg_xstrdup(v) : NULL;
    v = tau_ydoc_str(&doc, "policy.workspace");
    p->workspace = v ? tg_xstrdup(v) : NULL;

    const char *ep_path = NULL;
    const char *ep = pack_entrypoint(&doc, &ep_path);
    const char *wd = tau_ydoc_str(&doc, "run.working_dir");
    if (wd) {
        rc = pack_project(ctx, p, &doc, dir, wd, project_max);
        if (rc != 0)
            goto out;
    } else if (ep) {
        yaml_node_t *n = tau_ydoc_get(&doc, ep_path);
        if (!pack_rel_ok(ep, 0)) {
            rc = pack_error(ctx, p, n, ep_path,
                            "\"%s\" must be a clean path relative to the tau.yaml's folder", ep);
            goto out;
        }
        char *data = NULL;
        size_t len = 0;
        pack_join(&full, dir, ep);
        if (!full.data ||
            tau_read_file(full.data, PACK_FILE_MAX, &data, &len, err, sizeof(err)) != 0) {
            rc = pack_error(ctx, p, n, ep_path, "%s", full.data ? err : "path too long");
            goto out;
        }
        if (pack_add_file(p, ep, data, len) != 0) {
            rc = pack_error(ctx, p, n, ep_path, "too many files to send");
            goto out;
        }
    }
    yaml_node_t *pip = pack_pip_mentions(&doc);
    pack_join(&full, dir, TAU_PACK_REQUIREMENTS);
    struct stat st;
    if (full.data && stat(full.data, &st) == 0 && S_ISREG(st.st_mode)) {
        char *data = NULL;
        size_t len = 0;
        if (tau_read_file(full.data, PACK_FILE_MAX, &data, &len, err, sizeof(err)) != 0) {
            rc = pack_error(ctx, p, NULL, NULL, "%s", err);
            goto out;
        }
        if (pack_add_file(p, TAU_PACK_REQUIREMENTS, data, len) != 0) {
            rc = pack_error(ctx, p, NULL, NULL, "too many files to send");
            goto out;
        }
    } else if (pip) {
        rc = pack_error(ctx, p, pip, "runtime.pip", "names %s but %s does not exist",
                        TAU_PACK_REQUIREMENTS, full.data ? full.data : TAU_PACK_REQUIREMENTS);
        goto out;
    }
    rc = 0;
out:
    tau_ydoc_clean(&doc);
    tg_buf_clean(&full);
    free(dir);
    if (rc != 0) {
        if (!p->problems)
            pack_problem(p, NULL, 0, 0, "the submission cannot be packed");
        *problems = p->problems;
        p->problems = NULL;
        tau_pack_clean(p);
    }
    return rc;
}

/* ---- request bodies ------------------------------------------------------------- */

static int pack_has(const tau_pack_t *p, const char *needle, size_t nlen)
{
    if (memmem(p->spec, p->spec_len, needle, nlen))
        return 1;
    for (size_t i = 0; i < p->nfiles; i++)
        if (memmem(p->files[i].data, p->files[i].len, needle, nlen))
            return 1;
    return 0;
}

static int pack_multipart(const tau_pack_t *p, tg_buf_t *body, char *ctype, size_t ctlen)
{
    /* The boundary derives from the content, so the same submission always
     * gives the same bytes: a repeat with the same Idempotency-Key (a later
     * `tau run --idempotency-key K`) then matches the first request. */
    char boundary[64], hex[65];
    tg_buf_t all;
    tg_buf_init(&all, 0);
    tg_rc_e hr = tg_buf_append(&all, p->spec, p->spec_len);
    for (size_t i = 0; i < p->nfiles && hr == TG_OK; i++) {
        hr = tg_buf_printf(&all, "\n%s\n%zu\n", p->files[i].name, p->files[i].len);
        if (hr == TG_OK)
            hr = tg_buf_append(&all, p->files[i].data, p->files[i].len);
    }
    tg_sha256_hex(all.data ? all.data : "", all.len, hex);
    tg_buf_clean(&all);
    snprintf(boundary, sizeof(boundary), "tau-%.40s", hex);
    for (int tries = 0; hr != TG_OK || pack_has(p, boundary, strlen(boundary)); tries++) {
        char u[TG_UUID_LEN + 1];
        if (tries > 8)
            return -1;
        tg_uuid_v4(u);
        snprintf(boundary, sizeof(boundary), "tau-%s", u);
        hr = TG_OK;
    }
    for (size_t i = 0; i < p->nfiles; i++)
        if (strpbrk(p->files[i].name, "\"\r\n\\"))
            return -1;
    tg_rc_e rc = tg_buf_printf(body,
                               "--%s\r\nContent-Disposition: form-data; name=\"spec\"; "
                               "filename=\"tau.yaml\"\r\nContent-Type: application/yaml\r\n\r\n",
                               boundary);
    if (rc == TG_OK)
        rc = tg_buf_append(body, p->spec, p->spec_len);
    for (size_t i = 0; i < p->nfiles && rc == TG_OK; i++) {
        const tau_pack_file_t *f = &p->files[i];
        rc =
            tg_buf_printf(body,
                          "\r\n--%s\r\nContent-Disposition: form-data; name=\"files\"; "
                          "filename=\"%s\"\r\nContent-Type: %s\r\n\r\n",
                          boundary, f->name,
                          strcmp(f->name, TAU_PACK_PROJECT_NAME) == 0 ? "application/zip"
                                                                      : "application/octet-stream");
        if (rc == TG_OK)
            rc = tg_buf_append(body, f->data, f->len);
    }
    if (rc == TG_OK)
        rc = tg_buf_printf(body, "\r\n--%s--\r\n", boundary);
    if (rc != TG_OK)
        return -1;
    snprintf(ctype, ctlen, "multipart/form-data; boundary=%s", boundary);
    return 0;
}

static int pack_json(const tau_pack_t *p, tg_buf_t *body, char *ctype, size_t ctlen)
{
    int rc = -1;
    json_t *files = json_object();
    json_t *spec = json_stringn(p->spec, p->spec_len);
    json_t *o = NULL;
    char *text = NULL;
    if (!spec)
        goto out; /* not UTF-8 */
    for (size_t i = 0; i < p->nfiles; i++) {
        const tau_pack_file_t *f = &p->files[i];
        size_t n = 4 * ((f->len + 2) / 3) + 1;
        unsigned char *b64 = tg_xmalloc(n);
        int w = EVP_EncodeBlock(b64, f->data, (int)f->len);
        json_object_set_new(files, f->name, json_stringn((const char *)b64, (size_t)w));
        free(b64);
    }
    o = json_pack("{s:o, s:O}", "spec", spec, "files", files);
    spec = NULL;
    text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    if (!text || tg_buf_puts(body, text) != TG_OK)
        goto out;
    snprintf(ctype, ctlen, "application/json");
    rc = 0;
out:
    free(text);
    json_decref(o);
    json_decref(spec);
    json_decref(files);
    return rc;
}

int tau_pack_body(const tau_pack_t *p, tau_enc_e enc, tg_buf_t *body, char *ctype, size_t ctlen)
{
    tg_buf_reset(body);
    return enc == TAU_ENC_JSON ? pack_json(p, body, ctype, ctlen)
                               : pack_multipart(p, body, ctype, ctlen);
}
