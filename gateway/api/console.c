/* GET /ui/...: the console's built files, served from memory (see console.h). */
#include "api/console.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "api/app.h"
#include "api/etag.h"
#include "http/problem.h"

enum { CONSOLE_IDENTITY = 0, CONSOLE_GZIP, CONSOLE_BROTLI, CONSOLE_NENC };

static const char *const console_enc_suffix[CONSOLE_NENC] = {"", ".gz", ".br"};
static const char *const console_enc_name[CONSOLE_NENC] = {NULL, "gzip", "br"};

typedef struct {
    char *data; /* NULL: this encoding was not built */
    size_t len;
    char etag[TG_ETAG_LEN]; /* of the bytes sent: each representation its own */
} console_body_t;

typedef struct {
    char *name; /* relative to the folder: "index.html", "assets/app-1a2b3c.js" */
    const char *type;
    int immutable; /* under assets/: content-hashed by the build */
    console_body_t body[CONSOLE_NENC];
} console_file_t;

/* Written only by load and free, which run while no request is served. */
struct tg_console_s {
    console_file_t *files; /* sorted by name */
    size_t n;
    const console_file_t *index;
};

typedef struct {
    const char *dir;
    console_file_t *files;
    size_t n;
    size_t bytes;
    char *err;
    size_t errlen;
} console_loader_t;

static const char *console_type(const char *name)
{
    static const struct {
        const char *ext;
        const char *type;
    } types[] = {
        {".html", "text/html; charset=utf-8"},
        {".js", "text/javascript; charset=utf-8"},
        {".mjs", "text/javascript; charset=utf-8"},
        {".css", "text/css; charset=utf-8"},
        {".json", "application/json"},
        {".map", "application/json"},
        {".webmanifest", "application/manifest+json"},
        {".svg", "image/svg+xml"},
        {".png", "image/png"},
        {".ico", "image/x-icon"},
        {".woff2", "font/woff2"},
        {".txt", "text/plain; charset=utf-8"},
    };
    const char *dot = strrchr(name, '.');
    for (size_t i = 0; dot && i < TG_ARRAY_LEN(types); i++)
        if (strcmp(dot, types[i].ext) == 0)
            return types[i].type;
    return "application/octet-stream";
}

/* Names the build writes: letters, digits, '.', '_', '-' and '/' between
 * segments; no segment starting with '.'. */
static int console_name_ok(const char *name)
{
    if (!*name || *name == '/' || *name == '.')
        return 0;
    for (const char *p = name; *p; p++) {
        int ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                 *p == '.' || *p == '_' || *p == '-' || *p == '/';
        if (!ok || (*p == '/' && (p[1] == '/' || p[1] == '.' || !p[1])))
            return 0;
    }
    return 1;
}

static int console_has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Read a whole file into *out (NUL-terminated). Returns TG_OK, or
 * TG_ENOTFOUND when it does not exist (only when `optional`). */
static tg_rc_e console_read(console_loader_t *L, const char *path, int optional, char **out,
                            size_t *outlen)
{
    tg_rc_e rc = TG_OK;
    char *data = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (optional && errno == ENOENT)
            return TG_ENOTFOUND;
        snprintf(L->err, L->errlen, "cannot open %s: %s", path, strerror(errno));
        return TG_EINTERNAL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(L->err, L->errlen, "%s is not a regular file", path);
        rc = TG_EINVAL;
        goto out;
    }
    if ((size_t)st.st_size > TG_CONSOLE_MAX_BYTES - L->bytes) {
        snprintf(L->err, L->errlen, "%s takes the console over %u bytes", path,
                 TG_CONSOLE_MAX_BYTES);
        rc = TG_ETOOLARGE;
        goto out;
    }
    size_t len = (size_t)st.st_size;
    data = tg_xmalloc(len + 1);
    if (fread(data, 1, len, f) != len) {
        snprintf(L->err, L->errlen, "cannot read %s", path);
        rc = TG_EINTERNAL;
        goto out;
    }
    data[len] = '\0';
    L->bytes += len;
    *out = data;
    *outlen = len;
    data = NULL;
out:
    free(data);
    fclose(f);
    return rc;
}

static void console_file_clean(console_file_t *f)
{
    free(f->name);
    for (int e = 0; e < CONSOLE_NENC; e++)
        free(f->body[e].data);
    memset(f, 0, sizeof(*f));
}

/* Add the file `rel` (and its .gz/.br twins when built) to the table. */
static tg_rc_e console_add(console_loader_t *L, const char *rel)
{
    if (!console_name_ok(rel)) {
        snprintf(L->err, L->errlen, "%s/%s: a console file name must use [A-Za-z0-9._-/]", L->dir,
                 rel);
        return TG_EINVAL;
    }
    if (L->n == TG_CONSOLE_MAX_FILES) {
        snprintf(L->err, L->errlen, "%s holds more than %d files", L->dir, TG_CONSOLE_MAX_FILES);
        return TG_ETOOLARGE;
    }
    console_file_t f = {.name = tg_xstrdup(rel),
                        .type = console_type(rel),
                        .immutable = strncmp(rel, "assets/", 7) == 0};
    tg_rc_e rc = TG_OK;
    for (int e = 0; e < CONSOLE_NENC; e++) {
        char path[4096];
        int w = snprintf(path, sizeof(path), "%s/%s%s", L->dir, rel, console_enc_suffix[e]);
        if (w < 0 || (size_t)w >= sizeof(path)) {
            snprintf(L->err, L->errlen, "%s/%s: path too long", L->dir, rel);
            rc = TG_EINVAL;
            goto out;
        }
        rc = console_read(L, path, e != CONSOLE_IDENTITY, &f.body[e].data, &f.body[e].len);
        if (rc == TG_ENOTFOUND) {
            rc = TG_OK;
            continue;
        }
        if (rc != TG_OK)
            goto out;
        tg_etag_of(f.body[e].data, f.body[e].len, f.body[e].etag);
    }
    L->files[L->n++] = f;
    return TG_OK;
out:
    console_file_clean(&f);
    return rc;
}

/* Walk `rel` (relative to L->dir; "" for the folder itself). Compressed
 * twins are read with the file they belong to, not on their own. */
static tg_rc_e console_walk(console_loader_t *L, const char *rel, int depth)
{
    char path[4096];
    int w = snprintf(path, sizeof(path), "%s%s%s", L->dir, *rel ? "/" : "", rel);
    if (w < 0 || (size_t)w >= sizeof(path)) {
        snprintf(L->err, L->errlen, "%s/%s: path too long", L->dir, rel);
        return TG_EINVAL;
    }
    DIR *d = opendir(path);
    if (!d) {
        snprintf(L->err, L->errlen, "cannot open the folder %s: %s", path, strerror(errno));
        return errno == ENOENT ? TG_ENOTFOUND : TG_EINTERNAL;
    }
    tg_rc_e rc = TG_OK;
    struct dirent *de;
    while (rc == TG_OK && (de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        char child[2048];
        w = snprintf(child, sizeof(child), "%s%s%s", rel, *rel ? "/" : "", de->d_name);
        if (w < 0 || (size_t)w >= sizeof(child)) {
            snprintf(L->err, L->errlen, "%s/%s/%s: path too long", L->dir, rel, de->d_name);
            rc = TG_EINVAL;
            break;
        }
        char full[4096];
        w = snprintf(full, sizeof(full), "%s/%s", L->dir, child);
        struct stat st;
        if (w < 0 || (size_t)w >= sizeof(full) || stat(full, &st) != 0) {
            snprintf(L->err, L->errlen, "cannot stat %s/%s", L->dir, child);
            rc = TG_EINTERNAL;
        } else if (S_ISDIR(st.st_mode)) {
            if (depth + 1 >= TG_CONSOLE_MAX_DEPTH) {
                snprintf(L->err, L->errlen, "%s is nested deeper than %d folders", full,
                         TG_CONSOLE_MAX_DEPTH);
                rc = TG_EINVAL;
            } else {
                rc = console_walk(L, child, depth + 1);
            }
        } else if (!console_has_suffix(child, ".gz") && !console_has_suffix(child, ".br")) {
            rc = console_add(L, child);
        }
    }
    closedir(d);
    return rc;
}

static int console_cmp(const void *a, const void *b)
{
    return strcmp(((const console_file_t *)a)->name, ((const console_file_t *)b)->name);
}

static const console_file_t *console_find(const console_file_t *files, size_t n, const char *name)
{
    console_file_t key = {.name = (char *)name};
    return bsearch(&key, files, n, sizeof(*files), console_cmp);
}

static void console_free_table(console_file_t *files, size_t n)
{
    for (size_t i = 0; i < n; i++)
        console_file_clean(&files[i]);
    free(files);
}

tg_rc_e tg_console_load(const char *dir, tg_console_t **out, char *err, size_t errlen)
{
    *out = NULL;
    console_loader_t L = {.dir = dir,
                          .files = tg_xcalloc(TG_CONSOLE_MAX_FILES, sizeof(console_file_t)),
                          .err = err,
                          .errlen = errlen};
    tg_rc_e rc = console_walk(&L, "", 0);
    if (rc != TG_OK)
        goto out;
    qsort(L.files, L.n, sizeof(*L.files), console_cmp);
    const console_file_t *index = console_find(L.files, L.n, "index.html");
    if (!index) {
        snprintf(err, errlen, "%s has no index.html", dir);
        rc = TG_ENOTFOUND;
        goto out;
    }
    tg_console_t *c = tg_xcalloc(1, sizeof(*c));
    c->files = L.files;
    c->n = L.n;
    c->index = index;
    *out = c;
    return TG_OK;
out:
    console_free_table(L.files, L.n);
    return rc;
}

void tg_console_free(tg_console_t *c)
{
    if (!c)
        return;
    console_free_table(c->files, c->n);
    free(c);
}

/* The loaded console, or NULL. */
static const tg_console_t *console_of(tg_req_t *req)
{
    const tg_app_t *app = tg_req_app(req);
    return app->console;
}

/* The q-value Accept-Encoding gives `coding` (RFC 9110 §12.5.3): its own
 * entry's, else the "*" entry's, else 0. */
static double console_accept_q(const char *accept, const char *coding)
{
    double own = -1, any = -1;
    size_t clen = strlen(coding);
    const char *p = accept;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        size_t n = strcspn(p, ",;");
        size_t name_len = n;
        while (name_len > 0 && (p[name_len - 1] == ' ' || p[name_len - 1] == '\t'))
            name_len--;
        double q = 1;
        const char *params = p + n;
        size_t plen = *params == ';' ? strcspn(params, ",") : 0;
        for (const char *s = params; s < params + plen; s++) {
            if ((*s == 'q' || *s == 'Q') && s[1] == '=') {
                q = strtod(s + 2, NULL);
                break;
            }
        }
        if (name_len == clen && strncasecmp(p, coding, clen) == 0)
            own = q;
        else if (name_len == 1 && *p == '*')
            any = q;
        p = params + plen;
        if (*p && *p != ',')
            p += strcspn(p, ",");
    }
    if (own >= 0)
        return own;
    return any >= 0 ? any : 0;
}

static void console_security_headers(tg_req_t *req)
{
    tg_resp_header(req, "Content-Security-Policy", TG_CONSOLE_CSP);
    tg_resp_header(req, "X-Content-Type-Options", "nosniff");
    tg_resp_header(req, "Referrer-Policy", "no-referrer");
    tg_resp_header(req, "X-Frame-Options", "DENY");
    tg_resp_header(req, "Cross-Origin-Opener-Policy", "same-origin");
    tg_resp_header(req, "Cross-Origin-Resource-Policy", "same-origin");
    tg_resp_header(req, "Permissions-Policy", "camera=(), microphone=(), geolocation=()");
}

void tg_console_serve(tg_req_t *req)
{
    const tg_console_t *console = console_of(req);
    if (!console) {
        tg_problem(req, TG_EUNAVAILABLE, NULL,
                   "the console was not built or not found (config key console_dir); "
                   "`make console` builds it");
        console_security_headers(req);
        return;
    }
    /* "/ui", "/ui/" and "/ui/<name>": the router matched the prefix. */
    const char *name = req->path + 3;
    while (*name == '/')
        name++;
    const console_file_t *f = *name ? console_find(console->files, console->n, name) : NULL;
    if (!f) {
        if (strncmp(name, "assets/", 7) == 0) {
            /* An old page asking for an asset of an earlier build: index.html
             * would be read as script, so say it plainly. */
            tg_problem(req, TG_ENOTFOUND, NULL, "no console asset at %s", req->path);
            console_security_headers(req);
            return;
        }
        f = console->index; /* a console route: the page routes itself */
    }
    const char *accept = tg_req_header(req, "Accept-Encoding");
    int enc = CONSOLE_IDENTITY;
    if (accept) {
        if (f->body[CONSOLE_BROTLI].data && console_accept_q(accept, "br") > 0)
            enc = CONSOLE_BROTLI;
        else if (f->body[CONSOLE_GZIP].data && console_accept_q(accept, "gzip") > 0)
            enc = CONSOLE_GZIP;
    }
    const console_body_t *b = &f->body[enc];
    tg_resp_conditional(req, f->type, b->data, b->len, b->etag,
                        f->immutable ? "public, max-age=31536000, immutable" : "no-cache");
    if (console_enc_name[enc] && req->status == 200)
        tg_resp_header(req, "Content-Encoding", console_enc_name[enc]);
    if (f->body[CONSOLE_GZIP].data || f->body[CONSOLE_BROTLI].data)
        tg_resp_header(req, "Vary", "Accept-Encoding");
    console_security_headers(req);
}

void tg_console_root(tg_req_t *req)
{
    if (!console_of(req)) {
        /* No console: the root is what it was, nothing. */
        tg_problem(req, TG_ENOTFOUND, NULL, "no resource at /; the API is under /v1");
        return;
    }
    tg_resp_bytes(req, 302, NULL, "", 0);
    tg_resp_header(req, "Location", "/ui/");
    tg_resp_header(req, "Cache-Control", "no-cache");
    console_security_headers(req);
}
