-- A run's files, attempts and events are written only by the gateway: the
-- first of each in the statement that stores the run (store/runs.c), later
-- ones for runs it has just read or locked. Their foreign keys to runs thus
-- never caught anything, yet each checked the run row on every insert: a
-- query and a row lock, about 100 µs of database CPU apiece, which made them
-- together a fifth of what a submission costs PostgreSQL (measured with
-- pgbench on the submission statement; docs/performance.md). They go; what
-- the keys' ON DELETE CASCADE did for an operator who deletes runs by hand
-- (the gateway never does) a statement trigger does, at no cost to inserts.
ALTER TABLE run_files DROP CONSTRAINT run_files_run_id_fkey;
ALTER TABLE run_attempts DROP CONSTRAINT run_attempts_run_id_fkey;
ALTER TABLE run_events DROP CONSTRAINT run_events_run_id_fkey;

CREATE FUNCTION runs_delete_children() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM run_files WHERE run_id IN (SELECT id FROM gone);
    DELETE FROM run_attempts WHERE run_id IN (SELECT id FROM gone);
    DELETE FROM run_events WHERE run_id IN (SELECT id FROM gone);
    RETURN NULL;
END
$$;

CREATE TRIGGER runs_delete_children AFTER DELETE ON runs
    REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION runs_delete_children();
