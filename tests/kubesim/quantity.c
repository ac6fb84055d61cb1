/* Resource quantities. */
#include "quantity.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/quantity.h"
#include "util.h"

int ks_qty_parse(const char *s, long long *milli)
{
    /* the gateway's exact parser: kubesim reads quantities as it writes them */
    tg_qty_t q;
    int64_t m;
    if (tg_qty_parse(s, &q) != TG_QTY_OK || tg_qty_to_milli(&q, &m) != TG_QTY_OK)
        return -1;
    *milli = m;
    return 0;
}

long long ks_qty_json(json_t *v)
{
    long long m = 0;
    if (json_is_string(v) && ks_qty_parse(json_string_value(v), &m) == 0)
        return m;
    if (json_is_integer(v))
        return (long long)json_integer_value(v) * 1000;
    if (json_is_real(v))
        return (long long)llround(json_real_value(v) * 1000.0);
    return 0;
}

void ks_qty_fmt(long long milli, char *out, size_t n)
{
    if (milli % 1000 != 0) {
        snprintf(out, n, "%lldm", milli);
        return;
    }
    long long v = milli / 1000;
    static const struct {
        const char *s;
        long long m;
    } bin[] = {{"Ti", 1099511627776LL}, {"Gi", 1073741824LL}, {"Mi", 1048576LL}, {"Ki", 1024LL}};
    for (size_t i = 0; i < 4 && v; i++) {
        if (v >= bin[i].m && v % bin[i].m == 0) {
            snprintf(out, n, "%lld%s", v / bin[i].m, bin[i].s);
            return;
        }
    }
    snprintf(out, n, "%lld", v);
}

static void add_requests(json_t *acc, json_t *container)
{
    const char *k;
    json_t *v;
    json_t *req = ks_jget(container, "resources.requests");
    json_t *lim = ks_jget(container, "resources.limits");
    json_object_foreach(req, k, v)
    {
        long long cur = json_integer_value(json_object_get(acc, k));
        json_object_set_new(acc, k, json_integer(cur + ks_qty_json(v)));
    }
    json_object_foreach(lim, k, v)
    {
        if (json_object_get(req, k))
            continue;
        long long cur = json_integer_value(json_object_get(acc, k));
        json_object_set_new(acc, k, json_integer(cur + ks_qty_json(v)));
    }
}

json_t *ks_pod_requests(json_t *podspec)
{
    json_t *sum = json_object();
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(podspec, "containers"), i, c) add_requests(sum, c);
    json_array_foreach(json_object_get(podspec, "initContainers"), i, c)
    {
        json_t *one = json_object();
        add_requests(one, c);
        const char *k;
        json_t *v;
        json_object_foreach(one, k, v)
        {
            if (json_integer_value(v) > json_integer_value(json_object_get(sum, k)))
                json_object_set(sum, k, v);
        }
        json_decref(one);
    }
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(podspec, "overhead"), k, v)
    {
        long long cur = json_integer_value(json_object_get(sum, k));
        json_object_set_new(sum, k, json_integer(cur + ks_qty_json(v)));
    }
    return sum;
}
