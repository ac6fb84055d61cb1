/* Go's path.Clean and the path rules TauGrid builds on it. */
#include "tauyaml/gopath.h"

#include <string.h>

size_t tg_tauyaml_gopath_clean(const char *in, char *out, size_t n)
{
    size_t len = strlen(in);
    if (n == 0)
        return (size_t)-1;
    if (len == 0) {
        if (n < 2)
            goto overflow;
        memcpy(out, ".", 2);
        return 1;
    }
    int rooted = in[0] == '/';
    /* The result is never longer than the input (plus "." for empty). */
    if (len + 1 > n)
        goto overflow;
    size_t w = 0, r = 0, dotdot = 0;
    if (rooted) {
        out[w++] = '/';
        r = 1;
        dotdot = 1;
    }
    while (r < len) {
        if (in[r] == '/') {
            r++;
        } else if (in[r] == '.' && (r + 1 == len || in[r + 1] == '/')) {
            r++;
        } else if (in[r] == '.' && in[r + 1] == '.' && (r + 2 == len || in[r + 2] == '/')) {
            r += 2;
            if (w > dotdot) {
                /* back up to the previous separator */
                w--;
                while (w > dotdot && out[w] != '/')
                    w--;
            } else if (!rooted) {
                if (w > 0)
                    out[w++] = '/';
                out[w++] = '.';
                out[w++] = '.';
                dotdot = w;
            }
        } else {
            if ((rooted && w != 1) || (!rooted && w != 0))
                out[w++] = '/';
            for (; r < len && in[r] != '/'; r++)
                out[w++] = in[r];
        }
    }
    if (w == 0)
        out[w++] = '.';
    out[w] = '\0';
    return w;
overflow:
    out[0] = '\0';
    return (size_t)-1;
}

int tg_tauyaml_gopath_clean_below_root(const char *p)
{
    char buf[4200];
    if (p[0] != '/' || strcmp(p, "/") == 0)
        return 0;
    if (tg_tauyaml_gopath_clean(p, buf, sizeof(buf)) == (size_t)-1)
        return 0;
    return strcmp(buf, p) == 0;
}

int tg_tauyaml_gopath_overlap(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (strcmp(a, b) == 0)
        return 1;
    if (la > lb && strncmp(a, b, lb) == 0 && a[lb] == '/')
        return 1;
    return lb > la && strncmp(b, a, la) == 0 && b[la] == '/';
}
