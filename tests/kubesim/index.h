/* A string multimap for the controllers' lookups that would otherwise scan
 * the store: owner uid -> dependents, job uid -> pods. Sets are expected
 * to be small (members are found by a linear search). */
#ifndef KS_INDEX_H
#define KS_INDEX_H

#include <stddef.h>

typedef struct ks_index_s ks_index_t;

ks_index_t *ks_index_new(void);
void ks_index_free(ks_index_t *ix);
/* Add member to key's set (no duplicates); remove it (a no-op if absent). */
void ks_index_add(ks_index_t *ix, const char *key, const char *member);
void ks_index_del(ks_index_t *ix, const char *key, const char *member);
/* A copy of key's members (the caller may change the index meanwhile);
 * none for a NULL index or key; free with ks_index_release. */
size_t ks_index_members(ks_index_t *ix, const char *key, char ***out);
void ks_index_release(char **members, size_t n);

#endif
