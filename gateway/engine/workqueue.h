/* A work queue of keys (client-go's workqueue, in small).
 *
 * Items are strings. An item is queued at most once however often it is
 * added; an item being worked on is never handed to a second worker, and
 * one added meanwhile is queued again when the first worker is done (so the
 * latest state is always looked at once more). Items can be added after a
 * delay, and tg_workqueue_retry adds one after a delay that doubles with
 * each consecutive failure of that item (250 ms up to 30 s) until
 * tg_workqueue_forget.
 *
 * Thread-safety: every function may be called from any thread. */
#ifndef TG_ENGINE_WORKQUEUE_H
#define TG_ENGINE_WORKQUEUE_H

#include <stddef.h>

typedef struct tg_workqueue_s tg_workqueue_t;

tg_workqueue_t *tg_workqueue_new(void);
/* Free (after shutdown and after every worker has returned). NULL-safe. */
void tg_workqueue_free(tg_workqueue_t *q);

/* Queue item (copied) unless it is queued already. */
void tg_workqueue_add(tg_workqueue_t *q, const char *item);
/* The same, delay_ms from now. */
void tg_workqueue_add_after(tg_workqueue_t *q, const char *item, long delay_ms);
/* Queue item again after its failure back-off; RET the delay chosen (ms). */
long tg_workqueue_retry(tg_workqueue_t *q, const char *item);
/* Reset item's failure count (it succeeded). */
void tg_workqueue_forget(tg_workqueue_t *q, const char *item);

/* Wait for the next item: a malloc'd string to hand back with
 * tg_workqueue_done, or NULL once the queue is shut down. */
char *tg_workqueue_get(tg_workqueue_t *q);
/* The worker is done with item (freed here). */
void tg_workqueue_done(tg_workqueue_t *q, char *item);
/* Wake every waiting worker; get returns NULL from now on. */
void tg_workqueue_shutdown(tg_workqueue_t *q);

/* Items queued now (not counting delayed ones, nor those being worked on). */
size_t tg_workqueue_len(tg_workqueue_t *q);
/* Items waiting for their delay. */
size_t tg_workqueue_delayed(tg_workqueue_t *q);

#endif
