/* Schema patterns compiled once into a byte-at-a-time automaton.
 *
 * glibc's regexec costs about a microsecond per call even for a short label,
 * and validation calls it for every string field with a pattern. The
 * schema's patterns are anchored POSIX EREs in a small subset, so at load
 * time each is compiled (pattern text -> NFA -> DFA table) and a match is one
 * table lookup per byte. A pattern outside the subset compiles to NULL and
 * the caller keeps using regexec; the subset is matched exactly as regexec
 * matches it in the C locale, the daemon's (it never calls setlocale), where
 * every byte is a character (tests/unit/test_tauyaml_pattern.c compares the two
 * on the schema's patterns and random strings).
 *
 * Subset: the whole pattern is ^...$ (no other anchors); literals (UTF-8
 * ones too, as their bytes); '.';
 * backslash escapes of . [ ] ( ) * + ? { } | ^ $ \; bracket expressions with
 * ASCII ranges and negation (no [:class:], [=x=], [.x.]); groups; '|' inside
 * groups; the quantifiers * + ?. No intervals ({n,m}), no back references,
 * no GNU escapes (\w, \b...). */
#ifndef TG_TAUYAML_PATTERN_H
#define TG_TAUYAML_PATTERN_H

typedef struct tg_tauyaml_pattern_s tg_tauyaml_pattern_t;

/* Compile `re`; NULL when it is outside the subset or too large. */
tg_tauyaml_pattern_t *tg_tauyaml_pattern_compile(const char *re);
void tg_tauyaml_pattern_free(tg_tauyaml_pattern_t *p);

/* 1 when the whole of the C string `s` matches, else 0. */
int tg_tauyaml_pattern_match(const tg_tauyaml_pattern_t *p, const char *s);

#endif
