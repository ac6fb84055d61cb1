-- Kueue synchronisation (engine/reconcile.c) and quota requests that change
-- quotas (api/quota.c).

-- What the reconciler found in the cluster that does not match the database:
--   edited         a managed object changed by hand (its live spec hash is
--                  not the one taugate annotated)
--   unmanaged      an object of the same name exists that taugate does not
--                  manage; it is left alone
--   orphan_in_use  a managed object no longer in the database is kept because
--                  work still uses it (admitted workloads, a referencing queue)
--   failed         the cluster refused the desired object (the summary says why)
-- One open row per object and problem; resolved_at/resolution close it
-- (corrected, updated, in_sync, deleted, gone).
CREATE TABLE kueue_drift (
    id           bigserial PRIMARY KEY,
    kind         text NOT NULL,
    namespace    text NOT NULL DEFAULT '',   -- '' for cluster-scoped objects
    name         text NOT NULL,
    problem      text NOT NULL
                 CHECK (problem IN ('edited', 'unmanaged', 'orphan_in_use', 'failed')),
    summary      text NOT NULL,
    live         jsonb,                      -- normalised managed part, as found
    desired      jsonb,                      -- normalised managed part, as wanted
    detected_at  timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    seen_count   integer NOT NULL DEFAULT 1,
    resolved_at  timestamptz,
    resolution   text,
    CHECK ((resolved_at IS NULL) = (resolution IS NULL))
);
CREATE UNIQUE INDEX kueue_drift_open ON kueue_drift (kind, namespace, name, problem)
    WHERE resolved_at IS NULL;
CREATE INDEX kueue_drift_recent ON kueue_drift (id DESC) WHERE resolved_at IS NULL;

-- The last reconcile step, whoever the leader was.
CREATE TABLE kueue_sync (
    id      integer PRIMARY KEY CHECK (id = 1),
    holder  text NOT NULL,
    step_at timestamptz NOT NULL DEFAULT now(),
    report  jsonb NOT NULL DEFAULT '{}'
);

-- Quota requests name the LocalQueue (and optionally the flavor) whose
-- ClusterQueue should grow; approval records what it changed.
ALTER TABLE quota_requests
    ADD COLUMN queue           text,
    ADD COLUMN flavor          text,
    ADD COLUMN cluster_queue   text,
    ADD COLUMN applied         jsonb,
    ADD COLUMN idempotency_key text,
    ADD COLUMN request_hash    text;
CREATE UNIQUE INDEX quota_requests_idempotency
    ON quota_requests (workspace, requester, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE INDEX quota_requests_state ON quota_requests (state, created_at DESC, id DESC);

-- Usage reports scan attempts by start time.
CREATE INDEX run_attempts_started ON run_attempts (started_at) WHERE started_at IS NOT NULL;
