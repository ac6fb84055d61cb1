/* Files submitted with a tau.yaml. */
#include "tauyaml/files.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/digest.h"
#include "core/base64.h"
#include "tauyaml/path.h"
#include "tauyaml/units.h"

const tg_tauyaml_file_t *tg_tauyaml_files_find(const tg_tauyaml_files_t *files, const char *name)
{
    if (!files || !name)
        return NULL;
    for (size_t i = 0; i < files->n; i++)
        if (files->v[i].name && strcmp(files->v[i].name, name) == 0)
            return &files->v[i];
    return NULL;
}

void tg_tauyaml_files_clean(tg_tauyaml_files_t *files)
{
    if (!files)
        return;
    if (files->owned) {
        for (size_t i = 0; i < files->n; i++) {
            free((char *)files->v[i].name);
            free((unsigned char *)files->v[i].data);
        }
    }
    free(files->v);
    files->v = NULL;
    files->n = 0;
}

tg_rc_e tg_tauyaml_files_from_json(const json_t *obj, tg_tauyaml_files_t *out,
                                   tg_tauyaml_diag_t *diag)
{
    tg_rc_e rc = TG_OK;
    out->v = NULL;
    out->n = 0;
    out->owned = 1;
    if (!obj)
        return TG_OK;
    if (!json_is_object(obj)) {
        tg_tauyaml_diag_error_at(diag, "files", 1, 1,
                                 "files must be an object of file name -> base64 content");
        return TG_EUNPROCESSABLE;
    }
    out->v = tg_xcalloc(json_object_size(obj) + 1, sizeof(*out->v));
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v) {
        char *path = tg_tauyaml_path_join("files", k);
        unsigned char *data = NULL;
        size_t len = 0;
        if (!json_is_string(v) || tg_base64_decode(json_string_value(v), json_string_length(v),
                                                   TG_B64_STD, &data, &len) != 0) {
            tg_tauyaml_diag_error_at(diag, path, 1, 1, "%s must be the file's content in base64",
                                     path);
            rc = TG_EUNPROCESSABLE;
        } else {
            out->v[out->n].name = tg_xstrdup(k);
            out->v[out->n].data = data;
            out->v[out->n].len = len;
            out->n++;
        }
        free(path);
    }
    return rc;
}

static uint32_t zip_u16(const unsigned char *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8);
}

static uint32_t zip_u32(const unsigned char *p)
{
    return zip_u16(p) | (zip_u16(p + 2) << 16);
}

int tg_tauyaml_zip_names(const unsigned char *d, size_t len, json_t *names)
{
    if (len < 22)
        return -1;
    /* The end-of-central-directory record sits in the last 22 + 65535 bytes. */
    size_t lo = len > 22 + 65535 ? len - 22 - 65535 : 0;
    size_t eocd = SIZE_MAX;
    for (size_t i = len - 22 + 1; i-- > lo;) {
        if (zip_u32(d + i) == 0x06054b50u) {
            eocd = i;
            break;
        }
    }
    if (eocd == SIZE_MAX)
        return -1;
    uint32_t count = zip_u16(d + eocd + 10);
    uint32_t cd_size = zip_u32(d + eocd + 12);
    uint32_t cd_off = zip_u32(d + eocd + 16);
    if ((size_t)cd_off + cd_size > eocd || count > 10000)
        return -1;
    size_t off = cd_off, end = (size_t)cd_off + cd_size;
    for (uint32_t i = 0; i < count; i++) {
        if (off + 46 > end || zip_u32(d + off) != 0x02014b50u)
            return -1;
        size_t n = zip_u16(d + off + 28), e = zip_u16(d + off + 30), c = zip_u16(d + off + 32);
        if (off + 46 + n + e + c > end)
            return -1;
        json_t *s = json_stringn((const char *)d + off + 46, n);
        if (!s)
            return -1;
        json_array_append_new(names, s);
        off += 46 + n + e + c;
    }
    return 0;
}

static int files_name_ok(const char *n)
{
    if (strlen(n) > 255 || !tg_tauyaml_path_clean_rel(n) || strcmp(n, ".") == 0)
        return 0;
    for (const char *p = n; *p; p++) {
        char c = *p;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_' || c == '-' || c == '/' || c == '+' || c == '@';
        if (!ok)
            return 0;
    }
    return 1;
}

/* Is `want` (relative to the project root) in the archive, at its root or
 * inside a single top-level directory? Also rejects unsafe entry names. */
static int files_zip_has(const json_t *names, const char *want, const char **unsafe)
{
    size_t i;
    const json_t *v;
    const char *top = NULL;
    size_t toplen = 0;
    int single_top = 1, found = 0;
    json_array_foreach(names, i, v) {
        const char *n = json_string_value(v);
        char tmp[1024];
        size_t len = strlen(n);
        if (len == 0 || len >= sizeof(tmp)) {
            *unsafe = n;
            return 0;
        }
        memcpy(tmp, n, len + 1);
        if (tmp[len - 1] == '/')
            tmp[len - 1] = '\0';
        if (tmp[0] == '\0' || !tg_tauyaml_path_clean_rel(tmp)) {
            *unsafe = n;
            return 0;
        }
        if (strcmp(n, want) == 0)
            found = 1;
        const char *slash = strchr(n, '/');
        size_t seg = slash ? (size_t)(slash - n) : len;
        if (!slash && n[len - 1] != '/')
            single_top = 0;
        if (!top) {
            top = n;
            toplen = seg;
        } else if (seg != toplen || strncmp(top, n, seg) != 0) {
            single_top = 0;
        }
    }
    if (found)
        return 1;
    if (single_top && top) {
        json_array_foreach(names, i, v) {
            const char *n = json_string_value(v);
            if (strlen(n) > toplen + 1 && strcmp(n + toplen + 1, want) == 0)
                return 1;
        }
    }
    return 0;
}

static void files_project(const tg_tauyaml_facts_t *f, const tg_tauyaml_files_t *files,
                          const tg_tauyaml_limits_t *lim, tg_tauyaml_diag_t *d)
{
    const tg_tauyaml_file_t *zip = tg_tauyaml_files_find(files, TG_TAUYAML_PROJECT_ARCHIVE);
    if (!zip) {
        tg_tauyaml_diag_error(d, "run.working_dir", TG_AT_VALUE,
                              "run.working_dir needs the project files: send the project directory "
                              "as a zip archive named " TG_TAUYAML_PROJECT_ARCHIVE
                              " (at most %zu bytes) with the spec, as `tau run` does",
                              lim->max_project_bytes);
        return;
    }
    if (zip->len > lim->max_project_bytes) {
        tg_tauyaml_diag_error(
            d, "run.working_dir", TG_AT_VALUE,
            "the project archive is %zu bytes; the limit is %zu bytes: leave large "
            "files out with run.working_dir_excludes and keep data on a PVC",
            zip->len, lim->max_project_bytes);
        return;
    }
    json_t *names = json_array();
    if (tg_tauyaml_zip_names(zip->data, zip->len, names) != 0) {
        tg_tauyaml_diag_error(d, "run.working_dir", TG_AT_VALUE,
                              "the project archive " TG_TAUYAML_PROJECT_ARCHIVE
                              " is not a valid zip "
                              "file");
        goto out;
    }
    if (!f->entrypoint || !f->working_dir)
        goto out;
    char want[1024];
    if (strcmp(f->working_dir, ".") == 0)
        snprintf(want, sizeof(want), "%s", f->entrypoint);
    else
        snprintf(want, sizeof(want), "%s/%s", f->working_dir, f->entrypoint);
    const char *unsafe = NULL;
    int has = files_zip_has(names, want, &unsafe);
    tg_tauyaml_qv_t q;
    if (unsafe)
        tg_tauyaml_diag_error(d, "run.working_dir", TG_AT_VALUE,
                              "the project archive has an unsafe entry \"%s\" (absolute or with "
                              "\"..\")",
                              tg_tauyaml_qv(&q, unsafe));
    else if (!has)
        tg_tauyaml_diag_error(d, f->entrypoint_path, TG_AT_VALUE,
                              "entrypoint \"%s\" is not in the project archive (looked for \"%s\")",
                              tg_tauyaml_qv(&q, f->entrypoint), want);
out:
    json_decref(names);
}

void tg_tauyaml_files_check(const json_t *root, const tg_tauyaml_facts_t *f,
                            const tg_tauyaml_files_t *files, const tg_tauyaml_limits_t *lim,
                            tg_tauyaml_diag_t *d)
{
    tg_tauyaml_qv_t q;
    size_t n = files ? files->n : 0;
    if (n > lim->max_files)
        tg_tauyaml_diag_error_at(d, "files", 1, 1,
                                 "the submission carries %zu files; at most %zu are accepted", n,
                                 lim->max_files);
    for (size_t i = 0; i < n; i++) {
        const tg_tauyaml_file_t *fl = &files->v[i];
        if (!fl->name || !files_name_ok(fl->name)) {
            char *path = tg_tauyaml_path_join("files", fl->name ? fl->name : "");
            tg_tauyaml_diag_error_at(d, path, 1, 1,
                                     "submitted file name \"%s\" must be a clean relative path of "
                                     "letters, digits and ._-+@/",
                                     tg_tauyaml_qv(&q, fl->name ? fl->name : ""));
            free(path);
        }
    }
    if (f->is_ray && f->working_dir) {
        files_project(f, files, lim, d);
    } else if (tg_tauyaml_get(root, "run", "source")) {
        /* the entrypoint is a path inside the run.source image */
    } else if (f->entrypoint) {
        const tg_tauyaml_file_t *ep = tg_tauyaml_files_find(files, f->entrypoint);
        if (!ep) {
            tg_tauyaml_diag_error(d, f->entrypoint_path, TG_AT_VALUE,
                                  "entrypoint \"%s\" was not among the submitted files; send the "
                                  "script with the spec (`tau run` does this)",
                                  tg_tauyaml_qv(&q, f->entrypoint));
        } else if (ep->len > lim->max_script_bytes) {
            tg_tauyaml_diag_error(
                d, f->entrypoint_path, TG_AT_VALUE,
                "entrypoint \"%s\" is %zu bytes; a script may be at most %zu bytes "
                "(it travels inside the pod spec); ship larger code with "
                "run.working_dir or a data PVC",
                tg_tauyaml_qv(&q, f->entrypoint), ep->len, lim->max_script_bytes);
        } else if (f->is_job && !f->launcher_explicit &&
                   strcmp(tg_tauyaml_ext(f->entrypoint), ".py") != 0 &&
                   !(ep->len >= 2 && ep->data[0] == '#' && ep->data[1] == '!')) {
            tg_tauyaml_diag_error(
                d, f->entrypoint_path, TG_AT_VALUE,
                "script \"%s\" has no shebang and is not a .py file; add a shebang "
                "or set execution.launcher: python",
                tg_tauyaml_qv(&q, f->entrypoint));
        }
    }
    const tg_tauyaml_file_t *req = tg_tauyaml_files_find(files, TG_TAUYAML_REQUIREMENTS);
    if (req && req->len > lim->max_requirements_bytes)
        tg_tauyaml_diag_error_at(d, "files[\"" TG_TAUYAML_REQUIREMENTS "\"]", 1, 1,
                                 TG_TAUYAML_REQUIREMENTS " is %zu bytes; at most %zu are accepted",
                                 req->len, lim->max_requirements_bytes);
    for (size_t i = 0; i < n; i++) {
        const char *nm = files->v[i].name;
        if (!nm)
            continue;
        int used = strcmp(nm, TG_TAUYAML_REQUIREMENTS) == 0 ||
                   (f->entrypoint && strcmp(nm, f->entrypoint) == 0) ||
                   (f->working_dir && strcmp(nm, TG_TAUYAML_PROJECT_ARCHIVE) == 0);
        if (!used) {
            char *path = tg_tauyaml_path_join("files", nm);
            tg_tauyaml_diag_warn_at(d, path, 1, 1,
                                    "submitted file \"%s\" is not used by this spec and is ignored",
                                    tg_tauyaml_qv(&q, nm));
            free(path);
        }
    }
}

static void files_describe_one(json_t *out, const char *key, const tg_tauyaml_file_t *fl)
{
    if (!fl)
        return;
    char hex[65];
    tg_sha256_hex(fl->data, fl->len, hex);
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(fl->name));
    json_object_set_new(o, "size", json_integer((json_int_t)fl->len));
    json_object_set_new(o, "sha256", json_string(hex));
    json_object_set_new(out, key, o);
}

json_t *tg_tauyaml_files_describe(const tg_tauyaml_facts_t *f, const tg_tauyaml_files_t *files)
{
    json_t *out = json_object();
    if (f->is_ray && f->working_dir)
        files_describe_one(out, "project",
                           tg_tauyaml_files_find(files, TG_TAUYAML_PROJECT_ARCHIVE));
    else if (f->entrypoint)
        files_describe_one(out, "entrypoint", tg_tauyaml_files_find(files, f->entrypoint));
    files_describe_one(out, "requirements", tg_tauyaml_files_find(files, TG_TAUYAML_REQUIREMENTS));
    return out;
}
