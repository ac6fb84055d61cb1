/* -o jsonpath=TEMPLATE: kubectl's JSONPath templates over what -o json
 * prints.
 *
 * The subset (kubectl's syntax and output rules):
 *   text outside braces            printed as is
 *   {.a.b} {$.a} {['a']} {["a"]}   a field (a missing one prints nothing)
 *   {.items[0]} {[-1]} {[1:3]}     an index (negative from the end), a slice
 *   {.items[*]} {.a.*}             every element or member
 *   {..name}                       every "name" member at any depth
 *   {.items[?(@.state=="Failed")]} a filter: ==, !=, <, <=, >, >= against a
 *                                  number, a quoted string, true, false or
 *                                  null; {[?(@.reason)]} keeps elements whose
 *                                  field is present and not null or false
 *   {range .items[*]}...{end}      the template between, once per result
 *   {"\n"} {'\t'}                  a string literal (\n \t \r \\ \" \' escapes)
 * Several results of one expression print separated by a space; strings
 * print raw, other values as compact JSON. A template without braces is
 * taken as one expression ("jsonpath=.items[*].id"), as kubectl does. */
#ifndef TAU_JSONPATH_H
#define TAU_JSONPATH_H

#include <jansson.h>
#include <stddef.h>

#include "core/buf.h"
#include "tau.h"

/* Compile a template. NULL with a message in err on a syntax error. */
tau_jsonpath_t *tau_jsonpath_parse(const char *tmpl, char *err, size_t errlen);
void tau_jsonpath_free(tau_jsonpath_t *jp);

/* Render the template over `root` (borrowed) into out. Returns 0, or -1 when
 * out's bound is reached. */
int tau_jsonpath_render(const tau_jsonpath_t *jp, const json_t *root, tg_buf_t *out);

#endif
