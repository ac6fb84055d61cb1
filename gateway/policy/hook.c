/* Plugging policy evaluation into the tau.yaml pipeline. */
#include "policy/hook.h"

#include <string.h>

int tg_policy_locate_pos(void *pos, const char *spec_path, int want_value, unsigned *line,
                         unsigned *column)
{
    const tg_tauyaml_mark_t *m =
        pos ? tg_tauyaml_pos_get((const tg_tauyaml_pos_t *)pos, spec_path) : NULL;
    if (!m)
        return 0;
    *line = want_value ? m->vline : m->kline;
    *column = want_value ? m->vcol : m->kcol;
    return 1;
}

static void hook_append(json_t *dst, const json_t *src, size_t max)
{
    size_t i;
    json_t *e;
    json_array_foreach(src, i, e) {
        if (json_array_size(dst) >= max)
            return;
        json_array_append(dst, e);
    }
}

tg_rc_e tg_policy_spec_hook(void *arg, const tg_tauyaml_pos_t *pos, json_t **resolved,
                            tg_tauyaml_prov_t *provenance, tg_tauyaml_diag_t *diag)
{
    tg_policy_hook_t *h = arg;
    if (!h || !h->snapshot || !resolved || !json_is_object(*resolved))
        return TG_EINTERNAL;
    /* The pipeline built the config and its provenance for this request
     * alone: defaults may be written into them rather than into copies. */
    int owned = provenance && (*resolved)->refcount == 1;
    tg_policy_input_t in = {.resolved = *resolved,
                            .provenance = provenance,
                            .workspace = h->workspace,
                            .locate = tg_policy_locate_pos,
                            .locate_arg = (void *)pos,
                            .patch_in_place = owned};
    tg_policy_result_clean(&h->result);
    tg_rc_e rc = tg_policy_evaluate(h->snapshot, &in, &h->result);
    if (rc == TG_EINVAL)
        return TG_EINTERNAL;
    h->ran = 1;
    if (h->result.patched) {
        json_decref(*resolved);
        *resolved = json_incref(h->result.resolved);
        const tg_tauyaml_prov_t *p = tg_policy_result_provenance(&h->result);
        if (provenance && p != provenance)
            tg_tauyaml_prov_copy(provenance, p);
    }
    /* Policy findings are few and each names its rule; they are kept even
     * when the spec stages already filled the error list. */
    hook_append(diag->errors, h->result.errors, diag->max_errors + 64);
    hook_append(diag->warnings, h->result.warnings, diag->max_errors + 64);
    return TG_OK;
}

json_t *tg_policy_hook_decisions(const tg_policy_hook_t *h)
{
    return h && h->ran ? tg_policy_result_decisions(&h->result) : json_array();
}

json_t *tg_policy_hook_evidence(const tg_policy_hook_t *h)
{
    return tg_policy_result_evidence(h && h->ran ? &h->result : NULL);
}

void tg_policy_hook_clean(tg_policy_hook_t *h)
{
    if (!h)
        return;
    tg_policy_result_clean(&h->result);
    h->ran = 0;
}
