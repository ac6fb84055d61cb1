/* Packing a submission: the tau.yaml plus the files it names.
 *
 *   entrypoint   first of run.entrypoint, run.script, entrypoint, script; a
 *                path relative to the tau.yaml's folder, sent under the name
 *                the spec gives it (the server looks it up by that name);
 *   requirements requirements.txt next to the tau.yaml when it exists (an
 *                error when runtime.pip mentions it and it is missing);
 *   project      with run.working_dir, that folder as a stored zip named
 *                _tau_project.zip, entries under one top-level folder that
 *                Ray strips on unpacking: "<working_dir>/", or "project/"
 *                for ".". It leaves out run.working_dir_excludes and the default
 *                excludes (.git, __pycache__, *.pyc); at most
 *                TAU_PACK_PROJECT_MAX bytes (TauGrid's 45 KiB; TAU_MAX_PROJECT_BYTES
 *                overrides). The entrypoint then lives inside the archive.
 *
 * Exclude patterns follow .gitignore: a pattern without '/' matches a name at
 * any depth ("*.ckpt", "data"); one with '/' is anchored at the project root
 * ("/build", "docs/drafts"); a trailing '/' matches folders only; "**" crosses
 * folders. */
#ifndef TAU_PACK_H
#define TAU_PACK_H

#include <jansson.h>
#include <stddef.h>

#include "core/buf.h"
#include "tau.h"

#define TAU_PACK_PROJECT_MAX  (45u * 1024)
#define TAU_PACK_PROJECT_NAME "_tau_project.zip"
#define TAU_PACK_REQUIREMENTS "requirements.txt"
#define TAU_PACK_PROJECT_TOP  "project" /* the top folder for working_dir "." */
#define TAU_PACK_MAX_FILES    8

typedef struct tau_pack_file_s {
    char *name;
    unsigned char *data;
    size_t len;
} tau_pack_file_t;

typedef struct tau_pack_s {
    char *spec_path; /* as the user gave it: FILE in FILE:LINE:COLUMN messages */
    char *spec_name; /* its base name, for the multipart part */
    char *spec;      /* the YAML text */
    size_t spec_len;
    char *run_name;  /* name or run.name, when set */
    char *workspace; /* policy.workspace, when set */
    tau_pack_file_t files[TAU_PACK_MAX_FILES];
    size_t nfiles;
    unsigned project_entries; /* files in the project archive */
    json_t *problems;         /* while loading: what is wrong, as errors[] entries */
} tau_pack_t;

typedef enum {
    TAU_ENC_MULTIPART = 0,
    TAU_ENC_JSON,
} tau_enc_e;

/* Read the tau.yaml at `path` and the files it names into p. Returns 0, or
 * an exit code (2) with what is wrong in *problems: a new array of problem
 * document errors[] entries {path, line?, column?, message} (the caller
 * prints them: tau_problem_entry). */
int tau_pack_load(const tau_ctx_t *ctx, const char *path, size_t project_max, tau_pack_t *p,
                  json_t **problems);
void tau_pack_clean(tau_pack_t *p);

/* The request body for p in `enc` into body; its Content-Type into ctype.
 * Returns 0 or -1 (too large, or the spec is not UTF-8 for JSON). */
int tau_pack_body(const tau_pack_t *p, tau_enc_e enc, tg_buf_t *body, char *ctype,
                  size_t ctlen) TG_MUSTCHECK;

/* 1 when the relative path `rel` is left out by one of the patterns. */
int tau_pack_excluded(const char *rel, int is_dir, const char *const *patterns, size_t n);

#endif
