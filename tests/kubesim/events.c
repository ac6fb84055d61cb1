/* core/v1 Events. */
#include "events.h"

#include <stdarg.h>
#include <stdio.h>

#include "config.h"
#include "rtypes.h"
#include "store.h"
#include "util.h"

void ks_event_emit(int rt, json_t *obj, const char *type, const char *reason, const char *fmt,
                   ...)
{
    if (!ks_cfg.events || !obj)
        return;
    char msg[1024], name[400], sfx[40], gv[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    const ks_rtype_t *t = ks_rtype(rt);
    ks_rtype_gv(t, gv, sizeof(gv));
    ks_uuid(sfx, sizeof(sfx));
    snprintf(name, sizeof(name), "%s.%.8s%.8s", ks_meta_name(obj), sfx, sfx + 9);
    const char *ns = ks_meta_ns(obj);
    if (!ns)
        ns = "default";
    json_t *now = ks_json_now();
    json_t *ev = json_pack(
        "{s:s,s:s,s:{s:s,s:s},s:{s:s,s:s,s:s,s:s?,s:s?},s:s,s:s,s:{s:s},s:O,s:O,s:i,s:s,s:s}",
        "kind", "Event", "apiVersion", "v1", "metadata", "name", name, "namespace", ns,
        "involvedObject", "kind", t->kind, "apiVersion", gv, "name", ks_meta_name(obj),
        "namespace", ks_meta_ns(obj), "uid", ks_meta_uid(obj), "reason", reason, "message", msg,
        "source", "component", "kubesim", "firstTimestamp", now, "lastTimestamp", now, "count", 1,
        "type", type, "reportingComponent", "kubesim");
    json_decref(now);
    if (ev)
        ks_store_create(KS_RT_EVENTS, ev, NULL);
}
