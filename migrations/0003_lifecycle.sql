-- The lifecycle after submission: the pods of each attempt, their logs kept
-- beyond the pods' lives, the metrics and checkpoints a workload reports,
-- and the sealed evidence record of each finished run.

CREATE TABLE run_pods (
    run_id      uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    attempt     integer NOT NULL,
    namespace   text NOT NULL,
    pod         text NOT NULL,
    uid         text NOT NULL,
    role        text NOT NULL DEFAULT 'main',   -- main, head, worker, submitter
    node        text,
    phase       text NOT NULL DEFAULT 'Pending',
    containers  text[] NOT NULL DEFAULT '{}',
    exit_code   integer,
    reason      text,
    started_at  timestamptz,
    finished_at timestamptz,
    -- log collection: how far the stored log goes, and whether it is complete
    log_bytes   bigint NOT NULL DEFAULT 0,
    log_done    boolean NOT NULL DEFAULT false,
    PRIMARY KEY (namespace, pod, uid)
);
CREATE INDEX run_pods_run ON run_pods (run_id, attempt);
CREATE INDEX run_pods_logs_pending ON run_pods (phase) WHERE NOT log_done;

-- Logs in chunks; seq orders the chunks of one pod container.
CREATE TABLE log_chunks (
    id         bigserial PRIMARY KEY,
    run_id     uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    attempt    integer NOT NULL,
    pod        text NOT NULL,
    container  text NOT NULL,
    seq        integer NOT NULL,
    first_at   timestamptz,
    last_at    timestamptz,
    lines      integer NOT NULL,
    content    text NOT NULL,
    sha256     text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (run_id, attempt, pod, container, seq)
);
CREATE INDEX log_chunks_run ON log_chunks (run_id, id);

-- Metrics a workload reports (marker lines on stdout, metrics.history files).
CREATE TABLE run_metrics (
    run_id  uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    attempt integer NOT NULL,
    name    text NOT NULL,
    step    bigint,
    at      timestamptz NOT NULL,
    value   double precision,       -- NULL for non-finite values
    raw     text,                   -- the value as reported when non-finite ("NaN", "inf")
    source  text NOT NULL DEFAULT 'stdout'
);
CREATE INDEX run_metrics_run ON run_metrics (run_id, name, at);

CREATE TABLE run_checkpoints (
    run_id     uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    attempt    integer NOT NULL,
    path       text NOT NULL,
    step       bigint,
    at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, attempt, path)
);
CREATE INDEX run_checkpoints_latest ON run_checkpoints (run_id, at DESC);

-- One sealed record per finished run.
CREATE TABLE evidence (
    run_id    uuid PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    sealed_at timestamptz NOT NULL DEFAULT now(),
    record    jsonb NOT NULL,
    sha256    text NOT NULL,
    signature text NOT NULL,
    key_id    text NOT NULL
);
