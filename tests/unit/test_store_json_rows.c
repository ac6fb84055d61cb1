/* Unit tests: compacting PostgreSQL's jsonb text (store/json_rows.h), which
 * GET /v1/runs/{id} answers without parsing it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "store/json_rows.h"

static void compacts(const char *in, const char *want)
{
    char *s = strdup(in);
    assert_string_equal(tg_json_text_compact(s), want);
    /* and it is still the same JSON */
    json_t *a = json_loads(in, 0, NULL), *b = json_loads(s, 0, NULL);
    assert_non_null(a);
    assert_true(json_equal(a, b));
    json_decref(a);
    json_decref(b);
    free(s);
}

static void test_blanks_go_only_outside_strings(void **state)
{
    (void)state;
    compacts("{\"a\": 1, \"b\": [1, 2, {\"c\": null}]}", "{\"a\":1,\"b\":[1,2,{\"c\":null}]}");
    compacts("{\"m\": \"waiting for 4 gpu, queue: 3 of 7\"}",
             "{\"m\":\"waiting for 4 gpu, queue: 3 of 7\"}");
    /* an escaped quote does not end the string; an escaped backslash does not escape it */
    compacts("{\"q\": \"say \\\"a, b\\\" then\", \"p\": \"c:\\\\\", \"r\": \" x \"}",
             "{\"q\":\"say \\\"a, b\\\" then\",\"p\":\"c:\\\\\",\"r\":\" x \"}");
    compacts(" [ ] ", "[]");
    compacts("{\"u\": \"\\u00e9 \\n\"}", "{\"u\":\"\\u00e9 \\n\"}");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blanks_go_only_outside_strings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
