/* run.source and storage.image_assets rules. */
#include "tauyaml/semantic_sources.h"

#include <stdio.h>
#include <string.h>

#include "tauyaml/gopath.h"
#include "tauyaml/path.h"
#include "tauyaml/units.h"

#define SS_PINNED_MSG                                                                              \
    "must be a complete lowercase OCI image reference pinned by an @sha256:<64 lowercase hex> "    \
    "digest"

/* One path component of a repository: [a-z0-9]+((.|_|__|-+)[a-z0-9]+)*. */
static int ss_component(const char *s, size_t n)
{
    size_t i = 0;
    if (n == 0)
        return 0;
    while (i < n) {
        size_t run = 0;
        while (i < n && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9'))) {
            i++;
            run++;
        }
        if (run == 0)
            return 0;
        if (i == n)
            return 1;
        /* a separator, then more alphanumerics */
        if (s[i] == '.') {
            i++;
        } else if (s[i] == '_') {
            i++;
            if (i < n && s[i] == '_')
                i++;
        } else if (s[i] == '-') {
            while (i < n && s[i] == '-')
                i++;
        } else {
            return 0;
        }
        if (i == n)
            return 0;
    }
    return 1;
}

/* A registry host: a DNS name with a '.' or "localhost", or a bracketed
 * IPv6 address, each with an optional :port. */
static int ss_domain(const char *s, size_t n)
{
    size_t host = n;
    const char *colon = NULL;
    if (n > 0 && s[0] == '[') {
        const char *close = memchr(s, ']', n);
        if (!close || close == s + 1)
            return 0;
        for (const char *p = s + 1; p < close; p++)
            if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || *p == ':'))
                return 0;
        host = (size_t)(close - s) + 1;
        if (host < n && s[host] != ':')
            return 0;
        colon = host < n ? s + host : NULL;
    } else {
        colon = memchr(s, ':', n);
        host = colon ? (size_t)(colon - s) : n;
        if (host == 0)
            return 0;
        int dot = 0;
        for (size_t i = 0; i < host; i++) {
            char c = s[i];
            if (c == '.')
                dot = 1;
            else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
                return 0;
        }
        if (!dot && !(host == 9 && memcmp(s, "localhost", 9) == 0))
            return 0;
    }
    if (colon) {
        size_t digits = n - (size_t)(colon - s) - 1;
        if (digits == 0)
            return 0;
        for (size_t i = 0; i < digits; i++)
            if (colon[1 + i] < '0' || colon[1 + i] > '9')
                return 0;
    }
    return 1;
}

int tg_tauyaml_image_pinned(const char *image)
{
    const char *at = strchr(image, '@');
    if (!at || strchr(at + 1, '@'))
        return 0;
    const char *dg = at + 1;
    if (strncmp(dg, "sha256:", 7) != 0 || strlen(dg + 7) != 64)
        return 0;
    for (const char *p = dg + 7; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            return 0;
    size_t nlen = (size_t)(at - image);
    /* an optional :tag after the last '/' */
    const char *slash = NULL;
    for (const char *p = image; p < at; p++)
        if (*p == '/')
            slash = p;
    if (!slash)
        return 0; /* no registry: TauGrid would normalise it to docker.io/library/... */
    const char *tag = memchr(slash, ':', (size_t)(at - slash));
    if (tag) {
        size_t tl = (size_t)(at - tag) - 1;
        if (tl == 0 || tl > 128)
            return 0;
        for (size_t i = 0; i < tl; i++) {
            char c = tag[1 + i];
            int ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
                     (i > 0 && (c == '.' || c == '-'));
            if (!ok)
                return 0;
        }
        nlen = (size_t)(tag - image);
    }
    /* domain / component [/ component ...] */
    const char *first = memchr(image, '/', nlen);
    if (!first || !ss_domain(image, (size_t)(first - image)))
        return 0;
    const char *p = first + 1, *end = image + nlen;
    if (p >= end)
        return 0;
    while (p < end) {
        const char *q = memchr(p, '/', (size_t)(end - p));
        size_t cl = q ? (size_t)(q - p) : (size_t)(end - p);
        if (!ss_component(p, cl))
            return 0;
        p += cl + (q ? 1 : 0);
        if (q && p >= end)
            return 0;
    }
    return 1;
}

static void ss_source(const json_t *root, const tg_tauyaml_facts_t *f, tg_tauyaml_diag_t *d)
{
    const json_t *src = tg_tauyaml_get(root, "run", "source");
    if (!json_is_object(src))
        return;
    tg_tauyaml_qv_t q;
    const char *image = json_string_value(json_object_get(src, "image"));
    const char *path = json_string_value(json_object_get(src, "path"));
    if (!image || !tg_tauyaml_image_pinned(image))
        tg_tauyaml_diag_error(d, "run.source.image", image ? TG_AT_VALUE : TG_AT_KEY,
                              "run.source.image " SS_PINNED_MSG);
    if (!path || !tg_tauyaml_gopath_clean_below_root(path))
        tg_tauyaml_diag_error(d, "run.source.path", path ? TG_AT_VALUE : TG_AT_KEY,
                              "run.source.path must be a clean absolute path below /");
    else if (strcmp(path, "/tau-source") == 0 || strncmp(path, "/tau-source/", 12) == 0)
        tg_tauyaml_diag_error(d, "run.source.path", TG_AT_VALUE,
                              "run.source.path \"%s\" is hidden by Tau's staging volume",
                              tg_tauyaml_qv(&q, path));
    if (f->is_ray)
        tg_tauyaml_diag_error(d, "run.source", TG_AT_KEY, "run.source requires engine: job");
    if (f->working_dir)
        tg_tauyaml_diag_error(d, "run.source", TG_AT_KEY,
                              "run.source and run.working_dir cannot be used together");
    if (tg_tauyaml_get(root, "runtime", "working_dir"))
        tg_tauyaml_diag_error(
            d, "runtime.working_dir", TG_AT_KEY,
            "runtime.working_dir and run.source cannot be used together; "
            "run.source fixes the container working directory at " TG_TAUYAML_SOURCE_MOUNT);
    if (!f->entrypoint) {
        tg_tauyaml_diag_error(d, "run.source", TG_AT_KEY, "run.source requires entrypoint");
        return;
    }
    char clean[1100];
    const char *ep = f->entrypoint;
    if (ep[0] == '/' || strcmp(ep, ".") == 0 || strcmp(ep, "..") == 0 ||
        strncmp(ep, "../", 3) == 0 || strchr(ep, '\\') ||
        tg_tauyaml_gopath_clean(ep, clean, sizeof(clean)) == (size_t)-1 || strcmp(clean, ep) != 0)
        tg_tauyaml_diag_error(d, f->entrypoint_path, TG_AT_VALUE,
                              "entrypoint \"%s\" must be a clean relative path inside run.source",
                              tg_tauyaml_qv(&q, ep));
}

static const char *const ss_reserved[] = {
    "/data", "/mnt",     "/script",      "/manifest",
    "/tmp",  "/dev/shm", "/var/run/tau", TG_TAUYAML_SOURCE_MOUNT};

static void ss_assets(const json_t *root, const tg_tauyaml_facts_t *f, tg_tauyaml_diag_t *d)
{
    const json_t *assets = tg_tauyaml_get(root, "storage", "image_assets");
    if (!json_is_array(assets) || json_array_size(assets) == 0)
        return;
    tg_tauyaml_qv_t q, q2;
    if (json_array_size(assets) > 8)
        tg_tauyaml_diag_error(d, "storage.image_assets", TG_AT_KEY,
                              "storage.image_assets supports at most 8 entries");
    if (f->is_ray)
        tg_tauyaml_diag_error(d, "storage.image_assets", TG_AT_KEY,
                              "storage.image_assets requires engine: job");
    size_t i;
    const json_t *a;
    json_array_foreach(assets, i, a) {
        char field[64], path[96];
        snprintf(field, sizeof(field), "storage.image_assets[%zu]", i);
        if (!json_is_object(a))
            continue;
        const char *name = json_string_value(json_object_get(a, "name"));
        const char *image = json_string_value(json_object_get(a, "image"));
        const char *spath = json_string_value(json_object_get(a, "source_path"));
        const char *mpath = json_string_value(json_object_get(a, "mount_path"));
        snprintf(path, sizeof(path), "%s.name", field);
        if (!name || !tg_tauyaml_dns_label(name, 50)) {
            tg_tauyaml_diag_error(d, name ? path : field, name ? TG_AT_VALUE : TG_AT_KEY,
                                  "%s.name must be a lowercase DNS label no longer than 50 "
                                  "characters",
                                  field);
        } else {
            for (size_t j = 0; j < i; j++)
                if (json_equal(json_object_get(json_array_get(assets, j), "name"),
                               json_object_get(a, "name"))) {
                    tg_tauyaml_diag_error(d, path, TG_AT_VALUE,
                                          "storage.image_assets name \"%s\" is declared more than "
                                          "once",
                                          tg_tauyaml_qv(&q, name));
                    break;
                }
        }
        snprintf(path, sizeof(path), "%s.image", field);
        if (!image || !tg_tauyaml_image_pinned(image))
            tg_tauyaml_diag_error(d, image ? path : field, image ? TG_AT_VALUE : TG_AT_KEY,
                                  "%s.image " SS_PINNED_MSG, field);
        snprintf(path, sizeof(path), "%s.source_path", field);
        if (!spath || !tg_tauyaml_gopath_clean_below_root(spath))
            tg_tauyaml_diag_error(d, spath ? path : field, spath ? TG_AT_VALUE : TG_AT_KEY,
                                  "%s.source_path must be a clean absolute path below /", field);
        else if (strcmp(spath, "/tau-asset") == 0 || strncmp(spath, "/tau-asset/", 11) == 0)
            tg_tauyaml_diag_error(d, path, TG_AT_VALUE,
                                  "%s.source_path \"%s\" is hidden by Tau's staging volume", field,
                                  tg_tauyaml_qv(&q, spath));
        snprintf(path, sizeof(path), "%s.mount_path", field);
        if (!mpath || !tg_tauyaml_gopath_clean_below_root(mpath)) {
            tg_tauyaml_diag_error(d, mpath ? path : field, mpath ? TG_AT_VALUE : TG_AT_KEY,
                                  "%s.mount_path must be a clean absolute path below /", field);
            continue;
        }
        for (size_t k = 0; k < TG_ARRAY_LEN(ss_reserved); k++)
            if (tg_tauyaml_gopath_overlap(mpath, ss_reserved[k]))
                tg_tauyaml_diag_error(d, path, TG_AT_VALUE,
                                      "%s.mount_path \"%s\" overlaps Tau-reserved path %s", field,
                                      tg_tauyaml_qv(&q, mpath), ss_reserved[k]);
        for (size_t j = 0; j < i; j++) {
            const char *other =
                json_string_value(json_object_get(json_array_get(assets, j), "mount_path"));
            if (!other)
                continue;
            if (strcmp(other, mpath) == 0)
                tg_tauyaml_diag_error(d, path, TG_AT_VALUE,
                                      "storage.image_assets mount_path \"%s\" is declared more "
                                      "than once",
                                      tg_tauyaml_qv(&q, mpath));
            else if (tg_tauyaml_gopath_overlap(other, mpath))
                tg_tauyaml_diag_error(d, path, TG_AT_VALUE,
                                      "storage.image_assets mount paths \"%s\" and \"%s\" overlap",
                                      tg_tauyaml_qv(&q, other), tg_tauyaml_qv(&q2, mpath));
        }
    }
}

void tg_tauyaml_semantic_sources(const json_t *root, const tg_tauyaml_facts_t *f,
                                 tg_tauyaml_diag_t *diag)
{
    ss_source(root, f, diag);
    ss_assets(root, f, diag);
}
