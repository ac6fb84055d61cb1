/* Decoding JSON text into only the fields a mask names.
 *
 * A watch event carries a whole object (a Pod is 5-10 KB of JSON, most of
 * it managedFields, spec and status fields nobody here reads), while the
 * informers keep a few hundred bytes of it (kube/cache.h). Building every
 * event as a jansson tree and then projecting it was half the gateway's
 * instructions at 10,000 runs; this decoder scans the text once and
 * builds jansson values only for the paths the mask names.
 *
 * The mask language is tg_kube_project's (kube/cache.h): `true` keeps a
 * field whole, an object keeps those of its fields, an array [m] applies m
 * to every element of an array. For valid JSON the result equals
 * tg_kube_project(json_loadb(text), mask). Invalid JSON is rejected
 * wherever it is (brackets, strings, escapes, numbers, literals are all
 * checked); what is skipped is not checked for valid UTF-8 nor for
 * duplicate keys (what is kept is, as JSON_REJECT_DUPLICATES does).
 *
 * jansson: mask is borrowed; returned values are NEW references. */
#ifndef TG_KUBE_JSON_MASK_H
#define TG_KUBE_JSON_MASK_H

#include <jansson.h>
#include <stddef.h>

/* The masked fields of the JSON value in text[0..len) (a NEW reference).
 * RET NULL when the text is not valid JSON (err says where), and also, with
 * err->text empty, when the value is not of the mask's kind (an object
 * mask over an array, say), as tg_kube_project returns NULL. */
json_t *tg_kube_json_load_masked(const char *text, size_t len, const json_t *mask,
                                 json_error_t *err);

/* A mask keeping what either a or b keeps (a NEW reference); NULL
 * stands for "nothing". */
json_t *tg_kube_mask_union(const json_t *a, const json_t *b);

#endif
