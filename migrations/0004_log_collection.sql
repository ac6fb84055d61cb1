-- Log collection (engine/logs.c): which replica follows which pod container,
-- and whether that container's log is complete. Several gateway replicas
-- collect at once; each container is followed by the replica holding its
-- lease (claimed_by, claimed_until), renewed while the follow lasts. A lease
-- that is not renewed (the replica died) runs out and another replica takes
-- the container over, resuming after the last stored line. claimed_until
-- also serves as "not before" when a follow ended early and is retried.
CREATE TABLE log_streams (
    namespace     text NOT NULL,
    pod           text NOT NULL,
    uid           text NOT NULL,
    container     text NOT NULL,
    claimed_by    text,
    claimed_until timestamptz NOT NULL DEFAULT '-infinity',
    done          boolean NOT NULL DEFAULT false,
    failures      integer NOT NULL DEFAULT 0,
    last_error    text,
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (namespace, pod, uid, container),
    FOREIGN KEY (namespace, pod, uid) REFERENCES run_pods (namespace, pod, uid) ON DELETE CASCADE
);
CREATE INDEX log_streams_claimed ON log_streams (claimed_by) WHERE claimed_by IS NOT NULL;

-- Retention: tg_logs_prune deletes chunks by age.
CREATE INDEX log_chunks_created ON log_chunks (created_at);

-- Metric points get a stable order for cursor paging (GET /v1/runs/{id}/metrics?name=).
ALTER TABLE run_metrics ADD COLUMN id bigserial;
CREATE UNIQUE INDEX run_metrics_points ON run_metrics (run_id, name, id);
