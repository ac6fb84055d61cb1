/* Unit tests: route matching, parameters, 405 method sets */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "http/router.h"

static void h_dummy(tg_req_t *req)
{
    (void)req;
}

static const tg_route_t routes[] = {
    {TG_M_GET, "/healthz", h_dummy, TG_ROUTE_PUBLIC, NULL},
    {TG_M_GET, "/v1/workspaces/{ws}/runs", h_dummy, 0, NULL},
    {TG_M_POST, "/v1/workspaces/{ws}/runs", h_dummy, 0, NULL},
    {TG_M_POST, "/v1/workspaces/{ws}/runs:validate", h_dummy, 0, NULL},
    {TG_M_GET, "/v1/runs/{id}", h_dummy, 0, NULL},
    {TG_M_POST, "/v1/runs/{id}:cancel", h_dummy, 0, NULL},
    {TG_M_DELETE, "/v1/runs/{id}", h_dummy, 0, NULL},
};

static tg_req_t *new_req(void)
{
    tg_arena_t *a = tg_arena_new(1024);
    tg_req_t *req = tg_arena_alloc(a, sizeof(*req));
    req->arena = a;
    return req;
}

static void test_literal_and_params(void **state)
{
    (void)state;
    tg_router_t *r = tg_router_new(routes, 7);
    tg_req_t *req = new_req();
    unsigned allowed;
    assert_int_equal(tg_router_match(r, TG_M_GET, "/healthz", req, &allowed), 0);
    assert_int_equal(tg_router_match(r, TG_M_HEAD, "/healthz", req, &allowed), 0);
    assert_int_equal(tg_router_match(r, TG_M_GET, "/v1/workspaces/vision/runs", req, &allowed), 1);
    assert_string_equal(tg_req_param(req, "ws"), "vision");
    assert_int_equal(
        tg_router_match(r, TG_M_POST, "/v1/workspaces/vision/runs:validate", req, &allowed), 3);
    assert_string_equal(tg_req_param(req, "ws"), "vision");
    assert_int_equal(tg_router_match(r, TG_M_POST, "/v1/runs/abc:cancel", req, &allowed), 5);
    assert_string_equal(tg_req_param(req, "id"), "abc");
    /* a plain {id} never swallows a custom method */
    assert_int_equal(tg_router_match(r, TG_M_GET, "/v1/runs/abc:cancel", req, &allowed), -1);
    assert_int_equal(allowed, TG_M_POST);
    /* trailing slash tolerated, empty segments are not */
    assert_int_equal(tg_router_match(r, TG_M_GET, "/v1/runs/abc/", req, &allowed), 4);
    assert_int_equal(tg_router_match(r, TG_M_GET, "/v1//runs/abc", req, &allowed), -1);
    assert_int_equal(tg_router_match(r, TG_M_GET, "/v1/runs", req, &allowed), -1);
    assert_int_equal(allowed, 0);
    tg_arena_free(req->arena);
    tg_router_free(r);
}

static void test_method_not_allowed_lists_methods(void **state)
{
    (void)state;
    tg_router_t *r = tg_router_new(routes, 7);
    unsigned allowed;
    assert_int_equal(tg_router_match(r, TG_M_PUT, "/v1/runs/x", NULL, &allowed), -1);
    char allow[64];
    tg_router_allow_header(allowed, allow, sizeof(allow));
    assert_string_equal(allow, "GET, HEAD, DELETE");
    tg_router_free(r);
}

static void test_too_many_segments_do_not_match(void **state)
{
    (void)state;
    tg_router_t *r = tg_router_new(routes, 7);
    char path[256] = "";
    for (int i = 0; i < 40; i++)
        strcat(path, "/a");
    unsigned allowed;
    assert_int_equal(tg_router_match(r, TG_M_GET, path, NULL, &allowed), -1);
    tg_router_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_literal_and_params),
        cmocka_unit_test(test_method_not_allowed_lists_methods),
        cmocka_unit_test(test_too_many_segments_do_not_match),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
