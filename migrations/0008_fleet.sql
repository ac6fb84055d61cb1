-- GPU fleet health (engine/nodes.c, api/fleet.c) and the platform metrics
-- computed from the database (engine/platform_metrics.c).

-- The last state of every Node, written by the replica holding the nodes
-- lock (engine/nodes.c) whenever something other than a heartbeat changes.
-- GPU counts are whole devices (nvidia.com/gpu, amd.com/gpu); MIG slices
-- are kept per resource in `mig` as {resource: {capacity, allocatable,
-- allocated}}. `gpus_allocated` is the sum of the GPU requests of the pods
-- bound to the node that have not ended (every pod, not only taugate's).
-- health: Healthy; Unhealthy (a configured GPU health condition is set);
-- NotReady (the kubelet's Ready condition is False); Unknown (no Ready
-- condition, or Ready is Unknown). `problems` lists the conditions that make
-- it so, each {type, status, reason, message, since}.
CREATE TABLE nodes (
    name             text PRIMARY KEY,
    gpu_class        text,                       -- NULL for a node without GPUs
    labels           jsonb NOT NULL DEFAULT '{}',
    gpus_capacity    integer NOT NULL DEFAULT 0 CHECK (gpus_capacity >= 0),
    gpus_allocatable integer NOT NULL DEFAULT 0 CHECK (gpus_allocatable >= 0),
    gpus_allocated   integer NOT NULL DEFAULT 0 CHECK (gpus_allocated >= 0),
    mig              jsonb NOT NULL DEFAULT '{}',
    health           text NOT NULL
                     CHECK (health IN ('Healthy', 'Unhealthy', 'NotReady', 'Unknown')),
    health_since     timestamptz NOT NULL DEFAULT now(),
    problems         jsonb NOT NULL DEFAULT '[]',
    conditions       jsonb NOT NULL DEFAULT '[]',
    ready            boolean,
    unschedulable    boolean NOT NULL DEFAULT false,
    -- set when taugate cordoned the node (annotations taugate.io/cordoned-by,
    -- taugate.io/cordon-reason, taugate.io/cordoned-at)
    cordoned_by      text,
    cordon_reason    text,
    cordoned_at      timestamptz,
    taints           jsonb NOT NULL DEFAULT '[]',
    observed_at      timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX nodes_gpu_class ON nodes (gpu_class);

-- Node history, append-only: health transitions and every action taken on
-- a node (cordon, uncordon, evict, recover, note), with the replica that
-- took it and whether the cluster accepted it.
CREATE TABLE node_events (
    id      bigserial PRIMARY KEY,
    node    text NOT NULL,
    at      timestamptz NOT NULL DEFAULT now(),
    kind    text NOT NULL
            CHECK (kind IN ('health', 'cordon', 'uncordon', 'evict', 'recover', 'note')),
    health  text,
    reason  text,
    message text,
    ok      boolean NOT NULL DEFAULT true,
    actor   text,
    data    jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX node_events_node ON node_events (node, id DESC);
CREATE INDEX node_events_kind ON node_events (kind, ok);

-- Attempts that ran on a node while it was unhealthy: one row per (run,
-- attempt, node), so the note on the run is written once however often the
-- node is seen, and a later failure of that attempt is a NodeFault.
CREATE TABLE node_fault_runs (
    run_id    uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    attempt   integer NOT NULL,
    node      text NOT NULL,
    problem   text NOT NULL,
    noted_at  timestamptz NOT NULL DEFAULT now(),
    recovered boolean NOT NULL DEFAULT false,    -- NodeFault recovery was asked for
    PRIMARY KEY (run_id, attempt, node)
);

-- "Which runs are on this node?"
CREATE INDEX run_pods_node ON run_pods (node) WHERE phase IN ('Pending', 'Running');

-- When an attempt was admitted (quota reserved and started), for the queue
-- wait histogram. The engine moves run_attempts.state; the trigger notes the
-- first time it reaches Admitted or a later state that implies admission.
ALTER TABLE run_attempts ADD COLUMN admitted_at timestamptz;

CREATE FUNCTION run_attempts_admitted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.admitted_at IS NULL AND NEW.state IN ('Admitted', 'Running', 'Succeeded') THEN
        NEW.admitted_at := now();
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER run_attempts_admitted BEFORE UPDATE OF state ON run_attempts
    FOR EACH ROW EXECUTE FUNCTION run_attempts_admitted();

-- Attempts admitted before this migration: their start is the best guess.
UPDATE run_attempts SET admitted_at = COALESCE(started_at, created_at)
    WHERE admitted_at IS NULL
      AND (started_at IS NOT NULL OR state IN ('Admitted', 'Running', 'Succeeded'));
