-- What the runs list, the run counts and the experiments read (store/
-- runs_query.c), each answered from an index.

-- The TauGrid experiment identity a run's resolved config carries, as
-- columns PostgreSQL keeps in step with `resolved` (a submission writes
-- nothing more), so an index can hold them.
ALTER TABLE runs
    ADD COLUMN exp_project text GENERATED ALWAYS AS (resolved #>> '{experiment,project}') STORED,
    ADD COLUMN exp_name    text GENERATED ALWAYS AS (resolved #>> '{experiment,name}') STORED,
    ADD COLUMN exp_group   text GENERATED ALWAYS AS (resolved #>> '{experiment,group}') STORED;

-- Catch-up after a stream cut: updated_since with sort=updated_at (either
-- direction), the id making the order total.
CREATE INDEX runs_workspace_updated ON runs (workspace, updated_at, id);

-- Counts by state, owner and engine: an index-only scan that holds every
-- column a filter of the list can name, grouped in index order.
CREATE INDEX runs_workspace_counts ON runs (workspace, state, owner, engine)
    INCLUDE (created_at, updated_at, name, exp_project, exp_name, exp_group);

-- Experiments (project -> experiment -> group) with run counts and last
-- activity, and an experiment's runs; only runs that name an experiment.
CREATE INDEX runs_workspace_experiments ON runs (workspace, exp_project, exp_name, exp_group)
    INCLUDE (state, created_at, updated_at)
    WHERE exp_name IS NOT NULL;
