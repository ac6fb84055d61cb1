-- The engine heals itself (engine/observer.h, engine/evidence.h): what its
-- level-triggered passes read must cost the same at 100,000 runs as at 100,
-- and evidence keys outlive the process that used them.

-- The resync pass pages through the runs that have not ended, by id.
CREATE INDEX runs_unfinished ON runs (id)
    WHERE state NOT IN ('Succeeded', 'Failed', 'Cancelled');

-- "Is work pending for this run?" (the resync, a cancel dropping creates).
CREATE INDEX outbox_run ON outbox (run_id);

-- The sealer takes the next due run in (not_before, run_id) order: with the
-- index on not_before alone, every claim sorted every due run (10,000 runs
-- ending together made each claim O(n)).
CREATE INDEX evidence_queue_next ON evidence_queue (not_before, run_id);
DROP INDEX evidence_queue_due;

-- Both queues are written and emptied all day: vacuum them as soon as a
-- thousand rows are gone, or every claim walks the dead index entries of
-- the runs already handled before it finds a live one.
ALTER TABLE evidence_queue SET (autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_cost_delay = 0);
ALTER TABLE outbox SET (autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_cost_delay = 0);

-- A run waiting to be sealed until its logs are collected is put back until
-- its grace ends; the moment a pod's log is complete it is due again, so
-- the sealer never polls runs whose logs are still coming. The update has
-- no other condition on purpose: while the sealer holds the row (deciding
-- to wait) it waits for it, then brings the new not_before forward; a
-- condition on not_before would skip the row the sealer is about to put
-- back and lose the wake-up.
CREATE FUNCTION evidence_logs_done() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE evidence_queue SET not_before = now() WHERE run_id = NEW.run_id;
    RETURN NULL;
END
$$;

CREATE TRIGGER run_pods_logs_done AFTER UPDATE OF log_done ON run_pods
    FOR EACH ROW WHEN (NEW.log_done AND NOT OLD.log_done)
    EXECUTE FUNCTION evidence_logs_done();

-- Every key that ever sealed a record (its public half), so a record sealed
-- before a key rotation, or by another replica, or by a process long gone,
-- still verifies: GET /v1/evidence/public-key serves them all. A key is
-- added when a gateway starts with it and again (idempotently) with the
-- first record it seals. `ephemeral`: generated at start because no
-- evidence_signing_key was configured.
CREATE TABLE evidence_keys (
    key_id         text PRIMARY KEY,
    algorithm      text NOT NULL,
    public_key_b64 text NOT NULL,
    public_key_pem text NOT NULL,
    ephemeral      boolean NOT NULL,
    first_seen_at  timestamptz NOT NULL DEFAULT now(),
    last_seen_at   timestamptz NOT NULL DEFAULT now()
);
