-- taugate: the first schema. Workspaces, compute profiles, queues, priority
-- classes, runs with their attempts, events and files, and the outbox that
-- carries accepted runs to the cluster.

CREATE TABLE workspaces (
    name               text PRIMARY KEY
                       CHECK (name ~ '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$'),
    namespace          text NOT NULL UNIQUE
                       CHECK (namespace ~ '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$'),
    default_queue      text,
    default_priority   text,
    default_profile    text,
    output_root        text,
    ttl_seconds        integer CHECK (ttl_seconds >= 0),
    log_retention_days integer NOT NULL DEFAULT 30 CHECK (log_retention_days > 0),
    pvcs               text[] NOT NULL DEFAULT '{}',
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now()
);

-- A compute profile's settings (GPU class and resource, node selector,
-- tolerations, default image, resource defaults, default queue) are one JSON
-- document validated by the gateway; the engine is a column because listings
-- filter on it. An empty allowed_workspaces means every workspace.
CREATE TABLE compute_profiles (
    name               text PRIMARY KEY
                       CHECK (name ~ '^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$'),
    engine             text NOT NULL CHECK (engine IN ('job', 'rayjob')),
    description        text NOT NULL DEFAULT '',
    settings           jsonb NOT NULL DEFAULT '{}',
    allowed_workspaces text[] NOT NULL DEFAULT '{}',
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX compute_profiles_allowed ON compute_profiles USING gin (allowed_workspaces);

-- Kueue objects the platform owns. The gateway reconciles these rows into
-- the cluster; the columns follow Kueue's v1beta1 fields in snake_case.
CREATE TABLE resource_flavors (
    name        text PRIMARY KEY CHECK (name ~ '^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$'),
    node_labels jsonb NOT NULL DEFAULT '{}',
    node_taints jsonb NOT NULL DEFAULT '[]',
    tolerations jsonb NOT NULL DEFAULT '[]',
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE cluster_queues (
    name              text PRIMARY KEY CHECK (name ~ '^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$'),
    cohort            text,
    queueing_strategy text NOT NULL DEFAULT 'BestEffortFIFO'
                      CHECK (queueing_strategy IN ('StrictFIFO', 'BestEffortFIFO')),
    preemption        jsonb NOT NULL DEFAULT '{}',
    resource_groups   jsonb NOT NULL DEFAULT '[]',
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now()
);

-- LocalQueues a workspace may submit to, and the ClusterQueue behind each.
CREATE TABLE local_queues (
    workspace     text NOT NULL REFERENCES workspaces (name) ON DELETE CASCADE,
    name          text NOT NULL CHECK (name ~ '^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$'),
    cluster_queue text NOT NULL REFERENCES cluster_queues (name) ON DELETE RESTRICT,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace, name)
);
CREATE INDEX local_queues_cluster_queue ON local_queues (cluster_queue);

CREATE TABLE priority_classes (
    name        text PRIMARY KEY CHECK (name ~ '^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$'),
    value       integer NOT NULL,
    description text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE runs (
    id              uuid PRIMARY KEY,
    workspace       text NOT NULL REFERENCES workspaces (name) ON DELETE RESTRICT,
    name            text NOT NULL,
    owner           text NOT NULL,
    engine          text NOT NULL CHECK (engine IN ('job', 'rayjob')),
    state           text NOT NULL DEFAULT 'Accepted'
                    CHECK (state IN ('Accepted', 'Queued', 'Admitted', 'Running', 'Recovering',
                                     'Succeeded', 'Failed', 'Cancelled')),
    reason          text,
    message         text,
    spec_text       text NOT NULL,
    resolved        jsonb NOT NULL,
    manifests       jsonb NOT NULL,
    config_hash     text NOT NULL,
    attempt         integer NOT NULL DEFAULT 1 CHECK (attempt >= 1),
    idempotency_key text,
    request_hash    text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    started_at      timestamptz,
    finished_at     timestamptz,
    CHECK ((idempotency_key IS NULL) = (request_hash IS NULL))
);
-- A client retry with the same key finds the original run.
CREATE UNIQUE INDEX runs_idempotency ON runs (workspace, owner, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
-- Listing a workspace's runs newest first, with a (created_at, id) cursor.
CREATE INDEX runs_workspace_created ON runs (workspace, created_at DESC, id DESC);
-- The engine's scans touch only runs that have not ended.
CREATE INDEX runs_active ON runs (state)
    WHERE state NOT IN ('Succeeded', 'Failed', 'Cancelled');

-- The files a submission carried (entrypoint, requirements, project archive).
CREATE TABLE run_files (
    run_id  uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    name    text NOT NULL,
    content bytea NOT NULL,
    sha256  text NOT NULL,
    PRIMARY KEY (run_id, name)
);

CREATE TABLE run_attempts (
    run_id      uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    attempt     integer NOT NULL CHECK (attempt >= 1),
    state       text NOT NULL,
    reason      text,
    -- the Job or RayJob of this attempt, so cluster events find their run
    namespace   text,
    object_name text,
    object_kind text,
    queue_info  jsonb NOT NULL DEFAULT '{}',
    -- why this attempt exists (NULL for the first): Preempted, Evicted,
    -- OOMKilled, NodeFault (which does not spend the retry budget), Resumed
    retry_reason text,
    node_names  text[] NOT NULL DEFAULT '{}',
    exit_code   integer,
    gpu_count   integer NOT NULL DEFAULT 0,
    created_at  timestamptz NOT NULL DEFAULT now(),
    started_at  timestamptz,
    finished_at timestamptz,
    PRIMARY KEY (run_id, attempt)
);
CREATE UNIQUE INDEX run_attempts_object ON run_attempts (namespace, object_name)
    WHERE object_name IS NOT NULL;

-- Append-only history; each event carries the hash of the one before it.
CREATE TABLE run_events (
    id        bigserial PRIMARY KEY,
    run_id    uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq       integer NOT NULL CHECK (seq >= 1),
    at        timestamptz NOT NULL DEFAULT now(),
    state     text,
    reason    text,
    message   text,
    source    text NOT NULL,
    data      jsonb NOT NULL DEFAULT '{}',
    prev_hash text,
    hash      text NOT NULL,
    UNIQUE (run_id, seq)
);

-- Work for the engine: create or delete a run's objects in the cluster.
CREATE TABLE outbox (
    id         bigserial PRIMARY KEY,
    run_id     uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    attempt    integer NOT NULL,
    -- create: the first attempt's objects; retry: render and create a later
    -- attempt; delete: remove an attempt's objects
    action     text NOT NULL CHECK (action IN ('create', 'retry', 'delete')),
    not_before timestamptz NOT NULL DEFAULT now(),
    tries      integer NOT NULL DEFAULT 0,
    last_error text,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX outbox_ready ON outbox (not_before, id);
