/* jansson's memory through a per-thread cache of freed small blocks.
 *
 * A request builds and frees a few hundred small jansson nodes; glibc keeps
 * only seven free blocks per size in its thread cache, so most of them went
 * through the slower fastbin and consolidation paths (about a fifth of the
 * tau.yaml pipeline's CPU). This cache keeps up to a bounded number of freed
 * blocks per size class for the thread that freed them.
 *
 * Every block is an ordinary malloc block, cached or not: memory jansson
 * hands out (json_dumps text included) may still be released with free(),
 * from any thread, at any time. Sanitizer builds leave jansson on plain
 * malloc so that ASan sees every use after free. */
#ifndef TG_CORE_JSON_ALLOC_H
#define TG_CORE_JSON_ALLOC_H

/* Route jansson's allocations through the cache. Call once at startup,
 * before other threads use jansson (json_set_alloc_funcs is not atomic). */
void tg_json_alloc_install(void);

#endif
