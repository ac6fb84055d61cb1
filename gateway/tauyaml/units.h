/* Syntax helpers shared by the semantic rules, the resolver and the renderer:
 * Go durations, container paths, Kubernetes names and labels. All are pure
 * functions on NUL-terminated strings. Kubernetes quantities are not here:
 * core/quantity.h is their one parser, shared with the policy, quota and CLI
 * code, and compares them exactly. */
#ifndef TG_TAUYAML_UNITS_H
#define TG_TAUYAML_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Parse a Go duration ("30s", "1h30m", "1.5h", "0") into nanoseconds.
 * 0 on success; -1 on bad syntax or overflow. */
int tg_tauyaml_duration_parse(const char *s, int64_t *ns);

/* "/a/b": absolute, no empty, "." or ".." segments, no trailing '/', no
 * whitespace or control characters. "/" alone is clean. */
int tg_tauyaml_path_clean_abs(const char *p);
/* "a/b" or ".": relative, no empty or ".." segments, no "." segment except
 * the whole path ".", no whitespace. */
int tg_tauyaml_path_clean_rel(const char *p);
/* `p` equals `dir` or lies below it (segment-wise). Both clean absolute. */
int tg_tauyaml_path_within(const char *p, const char *dir);
/* Two clean absolute paths overlap when one is within the other. */
int tg_tauyaml_path_overlap(const char *a, const char *b);
/* A relative path (segments may include "..") stays inside its base. */
int tg_tauyaml_path_rel_stays_inside(const char *p);

/* DNS-1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most `max` characters. */
int tg_tauyaml_dns_label(const char *s, size_t max);
/* Kubernetes label key: [prefix/]name, prefix a DNS subdomain <= 253, name
 * <= 63 of [A-Za-z0-9][-A-Za-z0-9_.]*[A-Za-z0-9]. */
int tg_tauyaml_label_key(const char *s);
/* Kubernetes label value: empty, or <= 63 characters as the key's name part. */
int tg_tauyaml_label_value(const char *s);

/* The suffix of `s` after the last '.', or "" (for ".py" checks). */
const char *tg_tauyaml_ext(const char *s);

#endif
