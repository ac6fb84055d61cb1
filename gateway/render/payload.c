/* Files carried inside a pod template. */
#include "render/payload.h"

#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "render/pod.h"
#include "core/digest.h"
#include "core/base64.h"

/* Decodes TAU_PAYLOAD_<i> = "<name>:<sha256>:<base64>" into $TAU_PAYLOAD_DIR
 * (default /script) and verifies each digest. */
static const char payload_py[] =
    "import base64, hashlib, os, sys\n"
    "d = os.environ.get('TAU_PAYLOAD_DIR', '/script')\n"
    "i = 0\n"
    "while 'TAU_PAYLOAD_%d' % i in os.environ:\n"
    "    name, digest, data = os.environ['TAU_PAYLOAD_%d' % i].split(':', 2)\n"
    "    raw = base64.b64decode(data)\n"
    "    if hashlib.sha256(raw).hexdigest() != digest:\n"
    "        sys.exit('tau-payload: digest mismatch for ' + name)\n"
    "    with open(os.path.join(d, os.path.basename(name)), 'wb') as f:\n"
    "        f.write(raw)\n"
    "    i += 1\n"
    "print('tau-payload: %d file(s) in %s' % (i, d))\n";

void tg_render_payload_init(tg_render_payload_t *p, const char *dir)
{
    p->n = 0;
    tg_render_env_init(&p->env);
    tg_buf_init(&p->list, 1 << 20);
    if (strcmp(dir, TG_RENDER_SCRIPT_DIR) != 0)
        tg_render_env_set(&p->env, "TAU_PAYLOAD_DIR", dir);
}

void tg_render_payload_clean(tg_render_payload_t *p)
{
    tg_render_env_clean(&p->env);
    tg_buf_clean(&p->list);
}

void tg_render_payload_add(tg_render_payload_t *p, const char *name, const void *data, size_t len,
                           const char hex[65])
{
    char key[32];
    char *b64 = tg_base64_encode(data, len, TG_B64_STD);
    size_t nl = strlen(name), bl = strlen(b64);
    /* name:hex:b64, put together without printf. */
    char *val = tg_xmalloc(nl + 66 + bl + 1);
    memcpy(val, name, nl);
    val[nl] = ':';
    memcpy(val + nl + 1, hex, 64);
    val[nl + 65] = ':';
    memcpy(val + nl + 66, b64, bl + 1);
    char num[24];
    tg_render_cat(key, sizeof(key), "TAU_PAYLOAD_", tg_render_int_text(num, (json_int_t)p->n++),
                  NULL);
    tg_render_env_set(&p->env, key, val);
    if (tg_buf_append(&p->list, name, nl) != TG_OK || tg_buf_append(&p->list, ":", 1) != TG_OK ||
        tg_buf_append(&p->list, hex, 64) != TG_OK || tg_buf_append(&p->list, "\n", 1) != TG_OK)
        tg_buf_reset(&p->list);
    free(val);
    free(b64);
}

void tg_render_payload_digest(const tg_render_payload_t *p, char out[72])
{
    char hex[65];
    tg_sha256_hex(p->list.data ? p->list.data : "", p->list.len, hex);
    memcpy(out, "sha256:", 7);
    memcpy(out + 7, hex, 65);
}

/* The payload's directory, from its env (TAU_PAYLOAD_DIR) or the default. */
static const char *payload_dir(const tg_render_env_t *env)
{
    for (size_t i = 0; i < env->n; i++)
        if (strcmp(env->pool.data + env->v[i].name, "TAU_PAYLOAD_DIR") == 0)
            return env->pool.data + env->v[i].value;
    return TG_RENDER_SCRIPT_DIR;
}

static void payload_container(tg_render_ctx_t *c, const char *name, const tg_render_env_t *env)
{
    tg_jw_t *w = c->w;
    const char *dir = payload_dir(env);
    tg_jw_obj(w);
    tg_jw_karr(w, "command");
    tg_jw_str(w, "python3");
    tg_jw_str(w, "-c");
    tg_jw_str(w, payload_py);
    tg_jw_end_arr(w);
    tg_render_k_env(w, env);
    tg_jw_kstr(w, "image", c->image);
    tg_jw_kstr(w, "name", name);
    tg_render_k_small_resources(c);
    tg_render_k_container_security(c);
    tg_jw_karr(w, "volumeMounts");
    tg_jw_obj(w);
    tg_jw_kstr(w, "mountPath", dir);
    tg_jw_kstr(w, "name", dir + 1);
    tg_jw_end_obj(w);
    tg_jw_end_arr(w);
    tg_jw_end_obj(w);
}

void tg_render_k_payload_container(tg_render_ctx_t *c, const char *name,
                                   const tg_render_payload_t *p)
{
    payload_container(c, name, &p->env);
}

void tg_render_k_payload_init(tg_render_ctx_t *c, const char *name, const tg_render_env_t *env)
{
    tg_jw_karr(c->w, "initContainers");
    payload_container(c, name, env);
    tg_jw_end_arr(c->w);
}
