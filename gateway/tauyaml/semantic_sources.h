/* Semantic rules for what a Job copies out of images: run.source (a source
 * tree staged from a digest-pinned image into /tau/source) and
 * storage.image_assets (read-only trees from digest-pinned images), with
 * TauGrid's rules and words (core/runconfig: Source.Validate,
 * ValidateImageAssets, validatePinnedImage, ValidateExecution). */
#ifndef TG_TAUYAML_SEMANTIC_SOURCES_H
#define TG_TAUYAML_SEMANTIC_SOURCES_H

#include <jansson.h>

#include "tauyaml/diag.h"
#include "tauyaml/semantic.h"

/* Where run.source stages its tree in the container. */
#define TG_TAUYAML_SOURCE_MOUNT "/tau/source"

void tg_tauyaml_semantic_sources(const json_t *root, const tg_tauyaml_facts_t *f,
                                 tg_tauyaml_diag_t *diag);

/* A complete lowercase image reference with an explicit registry, pinned by
 * @sha256:<64 lowercase hex> (an optional tag before it), as TauGrid's
 * validatePinnedImage accepts. */
int tg_tauyaml_image_pinned(const char *image);

#endif
