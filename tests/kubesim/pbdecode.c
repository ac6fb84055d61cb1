/* Protobuf request bodies (pbdecode.h). Wire format: varints, 64- and
 * 32-bit fixed values and length-delimited fields; proto2 as Kubernetes
 * generates it, so a non-pointer scalar is on the wire even when zero and
 * is dropped again when its JSON tag says omitempty. Fields the table
 * does not know are skipped, as the server's generated decoders do. */
#include "pbdecode.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>

#include "btypes.h"
#include "core/mem.h"
#include "util.h"

#define PB_MAX_DEPTH 64

typedef struct {
    const uint8_t *p, *end;
    char *err;
    size_t errn;
} pb_t;

static int fail(pb_t *b, const char *msg)
{
    if (b->err && !b->err[0])
        snprintf(b->err, b->errn, "%s", msg);
    return -1;
}

static int rd_varint(pb_t *b, uint64_t *v)
{
    uint64_t x = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (b->p >= b->end)
            return fail(b, "truncated varint");
        uint8_t c = *b->p++;
        x |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return fail(b, "varint too long");
}

/* A length-delimited field's bytes as a sub-reader. */
static int rd_bytes(pb_t *b, pb_t *sub)
{
    uint64_t n;
    if (rd_varint(b, &n) != 0)
        return -1;
    if (n > (uint64_t)(b->end - b->p))
        return fail(b, "length-delimited field past the end of the message");
    *sub = (pb_t){b->p, b->p + n, b->err, b->errn};
    b->p += n;
    return 0;
}

static int skip(pb_t *b, int wire)
{
    uint64_t v;
    pb_t sub;
    switch (wire) {
    case 0:
        return rd_varint(b, &v);
    case 1:
        if (b->end - b->p < 8)
            return fail(b, "truncated fixed64");
        b->p += 8;
        return 0;
    case 2:
        return rd_bytes(b, &sub);
    case 5:
        if (b->end - b->p < 4)
            return fail(b, "truncated fixed32");
        b->p += 4;
        return 0;
    default:
        return fail(b, "unsupported wire type");
    }
}

static json_t *b64(const pb_t *s)
{
    size_t n = (size_t)(s->end - s->p);
    char *out = tg_xmalloc(4 * ((n + 2) / 3) + 1);
    int len = EVP_EncodeBlock((unsigned char *)out, s->p, (int)n);
    json_t *j = json_stringn(out, len > 0 ? (size_t)len : 0);
    free(out);
    return j;
}

static json_t *str_of(pb_t *b, const pb_t *s)
{
    json_t *j = json_stringn((const char *)s->p, (size_t)(s->end - s->p));
    if (!j)
        fail(b, "string field is not valid UTF-8");
    return j;
}

static json_t *json_of(pb_t *b, const pb_t *s)
{
    if (s->end == s->p)
        return json_null();
    json_t *j = json_loadb((const char *)s->p, (size_t)(s->end - s->p), JSON_DECODE_ANY, NULL);
    if (!j)
        fail(b, "embedded raw JSON does not parse");
    return j;
}

/* Special message types (btypes.h). */
static json_t *special(pb_t *b, int kind, pb_t *s, int *zero)
{
    int64_t secs = 0, nanos = 0, type = 0, ival = 0;
    json_t *sval = NULL, *raw = NULL, *list = kind == KS_BT_STRLIST ? json_array() : NULL;
    while (s->p < s->end) {
        uint64_t key, v;
        pb_t sub;
        if (rd_varint(s, &key) != 0)
            goto bad;
        int num = (int)(key >> 3), wire = (int)(key & 7);
        if (wire == 0) {
            if (rd_varint(s, &v) != 0)
                goto bad;
            if (num == 1)
                secs = type = (int64_t)v;
            else if (num == 2)
                nanos = ival = (int32_t)v;
            continue;
        }
        if (wire != 2) {
            if (skip(s, wire) != 0)
                goto bad;
            continue;
        }
        if (rd_bytes(s, &sub) != 0)
            goto bad;
        if (kind == KS_BT_STRLIST && num == 1) {
            json_t *x = str_of(b, &sub);
            if (!x)
                goto bad;
            json_array_append_new(list, x);
        } else if ((kind == KS_BT_QUANTITY && num == 1) || (kind == KS_BT_INTORSTR && num == 3)) {
            json_decref(sval);
            if (!(sval = str_of(b, &sub)))
                goto bad;
        } else if ((kind == KS_BT_FIELDSV1 || kind == KS_BT_RAWEXT) && num == 1) {
            json_decref(raw);
            if (!(raw = json_of(b, &sub)))
                goto bad;
        }
    }
    *zero = 0;
    switch (kind) {
    case KS_BT_TIME:
    case KS_BT_MICROTIME: {
        char t[64];
        *zero = secs == 0 && nanos == 0;
        time_t tt = (time_t)secs;
        struct tm tm;
        gmtime_r(&tt, &tm);
        size_t n = strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%S", &tm);
        if (kind == KS_BT_MICROTIME)
            snprintf(t + n, sizeof(t) - n, ".%06dZ", (int)(nanos / 1000));
        else
            snprintf(t + n, sizeof(t) - n, "Z");
        return json_string(t);
    }
    case KS_BT_QUANTITY:
        return sval ? sval : json_string("0");
    case KS_BT_INTORSTR:
        if (type == 1) {
            return sval ? sval : json_string("");
        }
        json_decref(sval);
        return json_integer(ival);
    case KS_BT_STRLIST:
        return list;
    default: /* FIELDSV1, RAWEXT */
        return raw ? raw : json_null();
    }
bad:
    json_decref(sval);
    json_decref(raw);
    json_decref(list);
    return NULL;
}

static int decode_msg(pb_t *b, const ks_bt_msg_t *m, json_t *obj, int depth);

/* One value of field f; *zero says whether Go would see a zero value. */
static json_t *value(pb_t *b, const ks_bt_field_t *f, int wire, int depth, int *zero)
{
    uint64_t v = 0;
    pb_t sub;
    *zero = 0;
    int want = f->kind == KS_BT_F64                                                    ? 1
               : f->kind == KS_BT_BOOL || f->kind == KS_BT_I32 || f->kind == KS_BT_I64 ? 0
                                                                                       : 2;
    if (wire != want) {
        fail(b, "field has the wrong wire type for its declared type");
        return NULL;
    }
    switch (f->kind) {
    case KS_BT_BOOL:
        if (rd_varint(b, &v) != 0)
            return NULL;
        *zero = v == 0;
        return json_boolean(v != 0);
    case KS_BT_I32:
        if (rd_varint(b, &v) != 0)
            return NULL;
        *zero = v == 0;
        return json_integer((int32_t)v);
    case KS_BT_I64:
        if (rd_varint(b, &v) != 0)
            return NULL;
        *zero = v == 0;
        return json_integer((json_int_t)v);
    case KS_BT_F64: {
        double d;
        if (b->end - b->p < 8) {
            fail(b, "truncated fixed64");
            return NULL;
        }
        memcpy(&d, b->p, 8); /* little-endian on every host kubesim runs on */
        b->p += 8;
        *zero = d == 0;
        return json_real(d);
    }
    default:
        break;
    }
    if (rd_bytes(b, &sub) != 0)
        return NULL;
    if (f->kind == KS_BT_STR) {
        *zero = sub.p == sub.end;
        return str_of(b, &sub);
    }
    if (f->kind == KS_BT_BYTES)
        return b64(&sub);
    if (f->kind == KS_BT_MSG) {
        json_t *o = json_object();
        if (decode_msg(&sub, f->msg, o, depth + 1) != 0) {
            json_decref(o);
            return NULL;
        }
        return o;
    }
    return special(b, f->kind, &sub, zero);
}

/* A map entry {1: key, 2: value} into the object at obj[f->json]. */
static int map_entry(pb_t *b, const ks_bt_field_t *f, json_t *obj, int depth)
{
    pb_t e;
    if (rd_bytes(b, &e) != 0)
        return -1;
    json_t *key = NULL, *val = NULL;
    while (e.p < e.end) {
        uint64_t tag;
        if (rd_varint(&e, &tag) != 0)
            goto bad;
        int num = (int)(tag >> 3), wire = (int)(tag & 7);
        if (num == 1 && wire == 2) {
            pb_t k;
            if (rd_bytes(&e, &k) != 0)
                goto bad;
            json_decref(key);
            if (!(key = str_of(b, &k)))
                goto bad;
        } else if (num == 2) {
            int zero;
            json_decref(val);
            if (!(val = value(&e, f, wire, depth, &zero)))
                goto bad;
        } else if (skip(&e, wire) != 0) {
            goto bad;
        }
    }
    json_t *map = json_object_get(obj, f->json);
    if (!json_is_object(map)) {
        map = json_object();
        json_object_set_new(obj, f->json, map);
    }
    if (!val) /* an entry without a value holds the zero value */
        val = f->kind == KS_BT_STR || f->kind == KS_BT_BYTES ? json_string("")
              : f->kind == KS_BT_MSG                         ? json_object()
                                                             : json_null();
    json_object_set_new(map, key ? json_string_value(key) : "", val);
    json_decref(key);
    return 0;
bad:
    json_decref(key);
    json_decref(val);
    return -1;
}

static int decode_msg(pb_t *b, const ks_bt_msg_t *m, json_t *obj, int depth)
{
    if (depth > PB_MAX_DEPTH)
        return fail(b, "message nesting too deep");
    while (b->p < b->end) {
        uint64_t tag;
        if (rd_varint(b, &tag) != 0)
            return -1;
        int num = (int)(tag >> 3), wire = (int)(tag & 7);
        const ks_bt_field_t *f = ks_bt_field_num(m, num);
        if (!f) {
            if (skip(b, wire) != 0)
                return -1;
            continue;
        }
        if (f->flags & KS_BT_INLINE) {
            pb_t sub;
            if (wire != 2 || rd_bytes(b, &sub) != 0 || decode_msg(&sub, f->msg, obj, depth + 1))
                return fail(b, "malformed inlined message");
            continue;
        }
        if (f->shape == 'm') {
            if (wire != 2 || map_entry(b, f, obj, depth) != 0)
                return fail(b, "malformed map entry");
            continue;
        }
        if (f->shape == 'r') {
            json_t *arr = json_object_get(obj, f->json);
            if (!json_is_array(arr)) {
                arr = json_array();
                json_object_set_new(obj, f->json, arr);
            }
            int packed = wire == 2 && (f->kind == KS_BT_BOOL || f->kind == KS_BT_I32 ||
                                       f->kind == KS_BT_I64 || f->kind == KS_BT_F64);
            pb_t sub = *b;
            if (packed && rd_bytes(b, &sub) != 0)
                return -1;
            do {
                int zero;
                json_t *v = value(packed ? &sub : b, f,
                                  packed ? (f->kind == KS_BT_F64 ? 1 : 0) : wire, depth, &zero);
                if (!v)
                    return -1;
                json_array_append_new(arr, v);
            } while (packed && sub.p < sub.end);
            continue;
        }
        int zero;
        json_t *v = value(b, f, wire, depth, &zero);
        if (!v)
            return -1;
        /* Go would drop a zero non-pointer omitempty value when writing JSON
         * (a zero Time has no JSON form at all). */
        if (zero && (f->kind == KS_BT_TIME || f->kind == KS_BT_MICROTIME ||
                     (!(f->flags & KS_BT_PTR) && (f->flags & KS_BT_OMIT))))
            json_decref(v);
        else
            json_object_set_new(obj, f->json, v);
    }
    return 0;
}

int ks_pb_is_protobuf(const char *ct)
{
    return ct && !strncasecmp(ct, "application/vnd.kubernetes.protobuf", 35);
}

json_t *ks_pb_decode(const void *data, size_t len, char *err, size_t errn)
{
    static const uint8_t magic[4] = {'k', '8', 's', 0};
    pb_t b = {data, (const uint8_t *)data + len, err, errn};
    json_t *obj = NULL;
    char api_version[256] = "", kind[256] = "";
    pb_t raw = {NULL, NULL, err, errn};
    if (errn)
        err[0] = '\0';
    if (len < 4 || memcmp(data, magic, 4) != 0) {
        fail(&b, "provided data does not have a protobuf envelope");
        return NULL;
    }
    b.p += 4;
    /* runtime.Unknown: 1 typeMeta {1 apiVersion, 2 kind}, 2 raw. */
    while (b.p < b.end) {
        uint64_t tag;
        pb_t sub;
        if (rd_varint(&b, &tag) != 0)
            return NULL;
        int num = (int)(tag >> 3), wire = (int)(tag & 7);
        if (wire != 2) {
            if (skip(&b, wire) != 0)
                return NULL;
            continue;
        }
        if (rd_bytes(&b, &sub) != 0)
            return NULL;
        if (num == 2) {
            raw = sub;
        } else if (num == 1) {
            while (sub.p < sub.end) {
                uint64_t t2;
                pb_t s2;
                if (rd_varint(&sub, &t2) != 0 || (t2 & 7) != 2 || rd_bytes(&sub, &s2) != 0) {
                    fail(&b, "malformed typeMeta");
                    return NULL;
                }
                size_t n = (size_t)(s2.end - s2.p);
                char *dst = (t2 >> 3) == 1 ? api_version : (t2 >> 3) == 2 ? kind : NULL;
                if (dst && n < sizeof(api_version)) {
                    memcpy(dst, s2.p, n);
                    dst[n] = '\0';
                }
            }
        }
    }
    const ks_bt_msg_t *m = ks_bt_root(api_version, kind);
    if (!m) {
        if (errn)
            snprintf(err, errn, "no kind \"%s\" is registered for version \"%s\"", kind,
                     api_version);
        return NULL;
    }
    obj = json_object();
    if (raw.p && decode_msg(&raw, m, obj, 0) != 0) {
        json_decref(obj);
        return NULL;
    }
    json_object_set_new(obj, "apiVersion", json_string(api_version));
    json_object_set_new(obj, "kind", json_string(kind));
    return obj;
}
