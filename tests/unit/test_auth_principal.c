/* auth/principal: the principal built from verified claims. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "auth/principal.h"

/* ---- principal ----------------------------------------------------------- */

static void test_principal_claims(void **state)
{
    (void)state;
    tg_auth_list_t admins, names;
    tg_auth_list_parse(&admins, "gpu-admins");
    tg_auth_list_parse(&names, "display_name, email");
    tg_principal_policy_t pol = {
        .groups_claim = "realm_access.roles", .name_claims = &names, .admin_groups = &admins};
    json_t *claims = json_loads("{\"sub\":\"u1\",\"email\":\"u1@example.test\","
                                "\"realm_access\":{\"roles\":[\"gpu-admins\",\"ml\"]}}",
                                0, NULL);
    tg_principal_t p;
    tg_principal_init(&p);
    assert_int_equal(tg_principal_from_claims(&p, claims, &pol), 0);
    assert_string_equal(p.subject, "u1");
    assert_string_equal(p.name, "u1@example.test"); /* display_name absent */
    assert_int_equal(p.n_groups, 2);
    assert_true(p.is_admin);
    tg_principal_clean(&p);
    json_decref(claims);

    /* A namespaced claim name with dots is found as a member first. */
    pol.groups_claim = "https://taugate.example/groups";
    claims = json_loads("{\"sub\":\"u2\",\"https://taugate.example/groups\":[\"ml\"]}", 0, NULL);
    assert_int_equal(tg_principal_from_claims(&p, claims, &pol), 0);
    assert_int_equal(p.n_groups, 1);
    assert_string_equal(p.groups[0], "ml");
    assert_false(p.is_admin);
    assert_string_equal(p.name, "u2");
    tg_principal_clean(&p);
    json_decref(claims);

    /* A lone string is not read as one group (issue #17): refused. */
    claims =
        json_loads("{\"sub\":\"u2\",\"https://taugate.example/groups\":\"gpu-admins\"}", 0, NULL);
    tg_principal_init(&p);
    assert_int_equal(tg_principal_from_claims(&p, claims, &pol), -1);
    tg_principal_clean(&p);
    json_decref(claims);

    /* Limits: too many, too long, empty. */
    json_t *arr = json_array();
    for (int i = 0; i < TG_PRINCIPAL_MAX_GROUPS + 20; i++) {
        char g[16];
        snprintf(g, sizeof(g), "g%d", i);
        json_array_append_new(arr, json_string(g));
    }
    char longg[TG_PRINCIPAL_MAX_GROUP_LEN + 2];
    memset(longg, 'x', sizeof(longg) - 1);
    longg[sizeof(longg) - 1] = '\0';
    json_array_insert_new(arr, 0, json_string(longg));
    json_array_insert_new(arr, 0, json_string(""));
    claims = json_pack("{s:s, s:o}", "sub", "u3", "groups", arr);
    pol.groups_claim = NULL; /* default "groups" */
    pol.name_claims = NULL;  /* default name list */
    tg_principal_init(&p);
    assert_int_equal(tg_principal_from_claims(&p, claims, &pol), 0);
    assert_int_equal(p.n_groups, TG_PRINCIPAL_MAX_GROUPS);
    assert_string_equal(p.groups[0], "g0");
    tg_principal_clean(&p);
    json_decref(claims);

    /* Groups claim absent: no groups; of another type, or with a member
     * that is not a string: refused. */
    claims = json_loads("{\"sub\":\"u4\",\"name\":\"U Four\"}", 0, NULL);
    tg_principal_init(&p);
    assert_int_equal(tg_principal_from_claims(&p, claims, &pol), 0);
    assert_int_equal(p.n_groups, 0);
    assert_string_equal(p.name, "U Four");
    tg_principal_clean(&p);
    json_decref(claims);
    static const char *const bad[] = {"{\"sub\":\"u4\",\"groups\":{\"a\":1}}",
                                      "{\"sub\":\"u4\",\"groups\":[\"a\",1]}",
                                      "{\"sub\":\"u4\",\"groups\":true}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        claims = json_loads(bad[i], 0, NULL);
        tg_principal_init(&p);
        assert_int_equal(tg_principal_from_claims(&p, claims, &pol), -1);
        tg_principal_clean(&p);
        json_decref(claims);
    }

    /* Admin by subject, applied to a PAT principal built by hand. */
    tg_auth_list_t subs;
    tg_auth_list_parse(&subs, "svc-ci, u5");
    tg_principal_init(&p);
    p.kind = TG_PRINCIPAL_PAT;
    p.subject = strdup("u5");
    tg_principal_apply_admin(&p, &admins, &subs);
    assert_true(p.is_admin);
    tg_principal_clean(&p);
    tg_principal_clean(NULL);
    tg_auth_list_clean(&subs);
    tg_auth_list_clean(&admins);
    tg_auth_list_clean(&names);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_principal_claims),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
