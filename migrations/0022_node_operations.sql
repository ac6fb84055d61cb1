-- Node operations by platform admins (api/node_ops.c): cordon, uncordon,
-- drain. Who cordoned a node is read from taugate's annotations on the Node
-- (engine/node_health.c); `cordon_source` says whether it was a platform
-- admin (taugate.io/cordon-source: admin or drain), whose cordon the
-- node-health automation never takes back, or the automation itself (no
-- such annotation).
ALTER TABLE nodes ADD COLUMN cordon_source text NOT NULL DEFAULT 'automation'
    CHECK (cordon_source IN ('automation', 'admin', 'drain'));

ALTER TABLE node_events DROP CONSTRAINT node_events_kind_check;
ALTER TABLE node_events ADD CONSTRAINT node_events_kind_check
    CHECK (kind IN ('health', 'cordon', 'uncordon', 'drain', 'evict', 'recover', 'note'));
