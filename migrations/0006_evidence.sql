-- Evidence sealing (engine/evidence.c, docs/evidence.md).
--
-- The sealed record keeps the exact canonical bytes that were hashed and
-- signed: jsonb normalises numbers and key order, so the bytes cannot be
-- rebuilt from `record` in every case (a real such as 1e+17 comes back as
-- 100000000000000000). `record` stays for queries and always equals
-- `canonical::jsonb` (the verifier checks it).
ALTER TABLE evidence ADD COLUMN canonical text NOT NULL DEFAULT '';
ALTER TABLE evidence ALTER COLUMN canonical DROP DEFAULT;
ALTER TABLE evidence ADD COLUMN algorithm text NOT NULL DEFAULT 'Ed25519';

-- Runs waiting to be sealed. A trigger enqueues a run when it ends, however
-- it ended (watcher, cancel, recovery giving up), so the sealer never scans
-- every ended run. Replicas claim rows with FOR UPDATE SKIP LOCKED; a run
-- whose record cannot be built is retried after `not_before` with the error
-- kept in last_error.
CREATE TABLE evidence_queue (
    run_id     uuid PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    queued_at  timestamptz NOT NULL DEFAULT now(),
    not_before timestamptz NOT NULL DEFAULT now(),
    tries      integer NOT NULL DEFAULT 0,
    last_error text
);
CREATE INDEX evidence_queue_due ON evidence_queue (not_before);

CREATE FUNCTION evidence_enqueue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO evidence_queue (run_id) VALUES (NEW.id) ON CONFLICT (run_id) DO NOTHING;
    RETURN NULL;
END
$$;

CREATE TRIGGER runs_evidence_enqueue AFTER INSERT OR UPDATE OF state ON runs
    FOR EACH ROW WHEN (NEW.state IN ('Succeeded', 'Failed', 'Cancelled'))
    EXECUTE FUNCTION evidence_enqueue();

-- Runs that ended before this migration and have no record yet.
INSERT INTO evidence_queue (run_id)
    SELECT r.id FROM runs r
    WHERE r.state IN ('Succeeded', 'Failed', 'Cancelled')
      AND NOT EXISTS (SELECT 1 FROM evidence e WHERE e.run_id = r.id);
