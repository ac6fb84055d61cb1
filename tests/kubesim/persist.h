/* Optional state file: objects survive a kubesim restart. */
#ifndef KS_PERSIST_H
#define KS_PERSIST_H

/* Write every object (lock held); "" or NULL path is a no-op. */
int ks_persist_save(const char *path);
/* Load objects before anything else starts (store lock held), as a
 * restarted API server finds them: same uids and resourceVersions, the
 * watch window starting at the saved resourceVersion (older watches get
 * 410 Gone). Pods that were running then fail, as new changes: their
 * processes did not survive the restart. */
int ks_persist_load(const char *path);

#endif
