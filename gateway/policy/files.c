/* Policy file texts, read from policy_dir. */
#include "policy/files.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/buf.h"

static void files_err(json_t *errors, const char *file, const char *msg)
{
    json_array_append_new(errors, json_pack("{s:s, s:s, s:i, s:i, s:s}", "file", file, "path", "",
                                            "line", 0, "column", 0, "message", msg));
}

void tg_policy_files_add(tg_policy_files_t *f, const char *name, const char *text, size_t len)
{
    f->v = tg_xrealloc(f->v, (f->n + 1) * sizeof(*f->v));
    tg_policy_file_t *p = &f->v[f->n++];
    p->name = tg_xstrdup(name);
    p->text = tg_xmalloc(len + 1);
    memcpy(p->text, text, len);
    p->text[len] = '\0';
    p->len = len;
}

void tg_policy_files_copy(tg_policy_files_t *dst, const tg_policy_files_t *src)
{
    for (size_t i = 0; src && i < src->n; i++)
        tg_policy_files_add(dst, src->v[i].name, src->v[i].text, src->v[i].len);
}

void tg_policy_files_clean(tg_policy_files_t *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n; i++) {
        free(f->v[i].name);
        free(f->v[i].text);
    }
    TG_FREE_NULL(f->v);
    f->n = 0;
}

static int files_is_yaml(const char *name)
{
    size_t n = strlen(name);
    if (name[0] == '.')
        return 0;
    return (n > 5 && strcmp(name + n - 5, ".yaml") == 0) ||
           (n > 4 && strcmp(name + n - 4, ".yml") == 0);
}

static int files_name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Read one file of at most TG_POLICY_MAX_FILE_BYTES; 0 on success. */
static int files_slurp(const char *path, tg_buf_t *b, char *why, size_t whylen)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        snprintf(why, whylen, "cannot be read: %s", strerror(errno));
        return -1;
    }
    char chunk[8192];
    size_t got;
    int rc = 0;
    while ((got = fread(chunk, 1, sizeof(chunk), fp)) > 0) {
        if (tg_buf_append(b, chunk, got) != TG_OK) {
            snprintf(why, whylen, "is larger than %u bytes", TG_POLICY_MAX_FILE_BYTES);
            rc = -1;
            break;
        }
    }
    if (rc == 0 && ferror(fp)) {
        snprintf(why, whylen, "cannot be read: %s", strerror(errno));
        rc = -1;
    }
    fclose(fp);
    return rc;
}

tg_rc_e tg_policy_files_read(const char *dir, tg_policy_files_t *out, json_t *errors)
{
    memset(out, 0, sizeof(*out));
    DIR *d = opendir(dir);
    if (!d) {
        char msg[512];
        snprintf(msg, sizeof(msg), "policy folder %s cannot be opened: %s", dir, strerror(errno));
        files_err(errors, dir, msg);
        return TG_EINVAL;
    }
    char *names[TG_POLICY_MAX_FILES + 1];
    size_t n = 0;
    int too_many = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!files_is_yaml(e->d_name))
            continue;
        if (n == TG_POLICY_MAX_FILES) {
            too_many = 1;
            break;
        }
        names[n++] = tg_xstrdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof(char *), files_name_cmp);
    tg_rc_e rc = TG_OK;
    if (too_many) {
        char msg[128];
        snprintf(msg, sizeof(msg), "more than %d policy files", TG_POLICY_MAX_FILES);
        files_err(errors, dir, msg);
        rc = TG_EINVAL;
    }
    for (size_t i = 0; i < n; i++) {
        char path[4096], why[256];
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
            free(names[i]);
            continue;
        }
        tg_buf_t b;
        tg_buf_init(&b, TG_POLICY_MAX_FILE_BYTES);
        if (files_slurp(path, &b, why, sizeof(why)) != 0) {
            files_err(errors, names[i], why);
            rc = TG_EINVAL;
        } else {
            tg_policy_files_add(out, names[i], b.data ? b.data : "", b.len);
        }
        tg_buf_clean(&b);
        free(names[i]);
    }
    return rc;
}
