-- The workspace run-change stream (api/run_changes.c, GET
-- /v1/workspaces/{ws}/run-changes): every new run and every change of a
-- run's state, reason or attempt, in a log written by triggers on runs, so
-- whatever writes runs (the API, the engine of any replica, an operator)
-- feeds it without knowing about it.
--
-- Ids come from a sequence while the writer holds the run's row lock, so the
-- changes of one run are in id order. Ids are handed out before commit, so a
-- reader must not pass an id whose transaction may still commit: it only
-- reads up to a horizon below which every transaction has ended
-- (store/run_changes.h explains how it is found). Rows carry no foreign key:
-- like run_events they are written only by these triggers, and a key would
-- cost a lookup per change.
CREATE TABLE run_changes (
    id           bigserial PRIMARY KEY,
    workspace    text NOT NULL,
    run_id       uuid NOT NULL,
    kind         text NOT NULL CHECK (kind IN ('created', 'changed')),
    state        text NOT NULL,
    reason       text,
    message      text,
    attempt      integer NOT NULL,
    prev_state   text,
    prev_reason  text,
    prev_attempt integer,
    at           timestamptz NOT NULL
);
CREATE INDEX run_changes_workspace ON run_changes (workspace, id);

-- Changes older than the retention are pruned from the bottom; `upto` is the
-- highest id pruned, so a client resuming below it is told to start over.
CREATE TABLE run_changes_pruned (
    one  boolean PRIMARY KEY DEFAULT true CHECK (one),
    upto bigint NOT NULL DEFAULT 0
);
INSERT INTO run_changes_pruned DEFAULT VALUES;

-- New runs: one statement-level trigger, so a batch submission costs one
-- INSERT ... SELECT. It runs after the rows are written, when the
-- transaction already holds its id (the horizon relies on that).
CREATE FUNCTION run_changes_created() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO run_changes (workspace, run_id, kind, state, reason, message, attempt, at)
    SELECT workspace, id, 'created', state, reason, message, attempt, created_at
      FROM fresh ORDER BY created_at, id;
    RETURN NULL;
END
$$;

CREATE TRIGGER runs_changes_created AFTER INSERT ON runs
    REFERENCING NEW TABLE AS fresh
    FOR EACH STATEMENT EXECUTE FUNCTION run_changes_created();

-- Changes: only when state, reason or attempt really changed (an UPDATE that
-- sets the message or the manifests alone fires nothing).
CREATE FUNCTION run_changes_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO run_changes (workspace, run_id, kind, state, reason, message, attempt,
                             prev_state, prev_reason, prev_attempt, at)
    VALUES (NEW.workspace, NEW.id, 'changed', NEW.state, NEW.reason, NEW.message, NEW.attempt,
            OLD.state, OLD.reason, OLD.attempt, NEW.updated_at);
    RETURN NULL;
END
$$;

CREATE TRIGGER runs_changes_changed AFTER UPDATE OF state, reason, attempt ON runs
    FOR EACH ROW
    WHEN (OLD.state IS DISTINCT FROM NEW.state OR OLD.reason IS DISTINCT FROM NEW.reason
          OR OLD.attempt IS DISTINCT FROM NEW.attempt)
    EXECUTE FUNCTION run_changes_changed();
