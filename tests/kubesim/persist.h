/* Optional state file: objects survive a kubesim restart. */
#ifndef KS_PERSIST_H
#define KS_PERSIST_H

/* Write every object (lock held); "" or NULL path is a no-op. */
int ks_persist_save(const char *path);
/* Load objects before anything else starts. Pods that were running are
 * marked failed: their processes did not survive the restart. */
int ks_persist_load(const char *path);

#endif
