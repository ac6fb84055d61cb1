/* The client's configuration file. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"

#define CONFIG_MAX_BYTES (64 * 1024)

void tau_secret_free(char *s)
{
    if (!s)
        return;
    OPENSSL_cleanse(s, strlen(s));
    free(s);
}

void tau_config_clean(tau_config_t *cfg)
{
    TG_FREE_NULL(cfg->gateway);
    tau_secret_free(cfg->token);
    cfg->token = NULL;
    TG_FREE_NULL(cfg->workspace);
}

char *tau_config_path(void)
{
    tg_buf_t b;
    tg_buf_init(&b, 4096);
    const char *xdg = getenv("XDG_CONFIG_HOME");
    const char *home = getenv("HOME");
    tg_rc_e rc;
    /* The XDG spec says a relative XDG_CONFIG_HOME is invalid and ignored. */
    if (xdg && xdg[0] == '/')
        rc = tg_buf_printf(&b, "%s/tau/config", xdg);
    else if (home && *home)
        rc = tg_buf_printf(&b, "%s/.config/tau/config", home);
    else
        return NULL;
    if (rc != TG_OK) {
        tg_buf_clean(&b);
        return NULL;
    }
    return tg_buf_steal(&b, NULL);
}

static char *config_trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

int tau_config_load(const char *path, tau_config_t *cfg, int *loose, char *err, size_t errlen)
{
    memset(cfg, 0, sizeof(*cfg));
    *loose = 0;
    int rc = -1;
    tg_buf_t text;
    tg_buf_init(&text, CONFIG_MAX_BYTES);
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT || errno == ENOTDIR)
            return 0;
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && (st.st_mode & 077))
        *loose = 1;
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        if (tg_buf_append(&text, chunk, n) != TG_OK) {
            snprintf(err, errlen, "%s is larger than %d bytes", path, CONFIG_MAX_BYTES);
            goto out;
        }
    }
    if (ferror(f)) {
        snprintf(err, errlen, "cannot read %s", path);
        goto out;
    }
    int lineno = 0;
    char *line = text.data;
    while (line && *line) {
        char *next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        lineno++;
        char *s = config_trim(line);
        line = next;
        if (!*s || *s == '#')
            continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            snprintf(err, errlen, "%s:%d: expected key = value", path, lineno);
            goto out;
        }
        *eq = '\0';
        char *key = config_trim(s);
        char *val = config_trim(eq + 1);
        char **slot = NULL;
        if (strcmp(key, "gateway") == 0)
            slot = &cfg->gateway;
        else if (strcmp(key, "token") == 0)
            slot = &cfg->token;
        else if (strcmp(key, "workspace") == 0)
            slot = &cfg->workspace;
        else
            continue; /* unknown keys are kept for newer clients; ignore */
        if (slot == &cfg->token)
            tau_secret_free(*slot);
        else
            free(*slot);
        *slot = *val ? tg_xstrdup(val) : NULL;
    }
    rc = 0;
out:
    fclose(f);
    if (text.data)
        OPENSSL_cleanse(text.data, text.len);
    tg_buf_clean(&text);
    if (rc != 0)
        tau_config_clean(cfg);
    return rc;
}

/* mkdir -p for the parent folders of `path`; the last one gets mode 0700. */
static int config_mkdirs(const char *path, char *err, size_t errlen)
{
    char dir[4096];
    if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir)) {
        snprintf(err, errlen, "config path too long");
        return -1;
    }
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = '\0';
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
            snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
            return -1;
        }
        *p = '/';
    }
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    /* the folder holds a secret: keep it private even when it existed */
    if (chmod(dir, 0700) != 0) {
        snprintf(err, errlen, "cannot chmod %s: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

static int config_line_ok(const char *v)
{
    return !v || (!strchr(v, '\n') && !strchr(v, '\r'));
}

int tau_config_save(const char *path, const tau_config_t *cfg, char *err, size_t errlen)
{
    int rc = -1, fd = -1;
    tg_buf_t text, tmp;
    tg_buf_init(&text, CONFIG_MAX_BYTES);
    tg_buf_init(&tmp, 4096);
    if (!config_line_ok(cfg->gateway) || !config_line_ok(cfg->token) ||
        !config_line_ok(cfg->workspace)) {
        snprintf(err, errlen, "a setting holds a line break");
        goto out;
    }
    if (config_mkdirs(path, err, errlen) != 0)
        goto out;
    tg_rc_e r = tg_buf_puts(&text, "# tau CLI configuration, written by `tau login`. Keep it "
                                   "private: it holds a bearer token.\n");
    if (r == TG_OK && cfg->gateway)
        r = tg_buf_printf(&text, "gateway = %s\n", cfg->gateway);
    if (r == TG_OK && cfg->workspace)
        r = tg_buf_printf(&text, "workspace = %s\n", cfg->workspace);
    if (r == TG_OK && cfg->token)
        r = tg_buf_printf(&text, "token = %s\n", cfg->token);
    if (r == TG_OK)
        r = tg_buf_printf(&tmp, "%s.tmp.%ld", path, (long)getpid());
    if (r != TG_OK) {
        snprintf(err, errlen, "configuration too large");
        goto out;
    }
    unlink(tmp.data);
    fd = open(tmp.data, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "cannot write %s: %s", tmp.data, strerror(errno));
        goto out;
    }
    size_t off = 0;
    while (off < text.len) {
        ssize_t w = write(fd, text.data + off, text.len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            snprintf(err, errlen, "cannot write %s: %s", tmp.data, strerror(errno));
            goto out;
        }
        off += (size_t)w;
    }
    if (fchmod(fd, 0600) != 0 || fsync(fd) != 0 || close(fd) != 0) {
        fd = -1;
        snprintf(err, errlen, "cannot write %s: %s", tmp.data, strerror(errno));
        goto out;
    }
    fd = -1;
    if (rename(tmp.data, path) != 0) {
        snprintf(err, errlen, "cannot replace %s: %s", path, strerror(errno));
        goto out;
    }
    rc = 0;
out:
    if (fd >= 0)
        close(fd);
    if (rc != 0 && tmp.data)
        unlink(tmp.data);
    if (text.data)
        OPENSSL_cleanse(text.data, text.len);
    tg_buf_clean(&text);
    tg_buf_clean(&tmp);
    return rc;
}
