-- Platform policy rules managed through /v1/admin/policies (gateway/api/policies.c).
-- The policy in force is the policy files (policy_dir) plus the enabled rows
-- here; a row with the id of a file rule replaces it. `rule` is one rule as
-- schema/policy.schema.json#/$defs/rule describes it (its id is the row's).
-- Every change bumps `version` and is kept in policy_versions, so decisions
-- recorded in run evidence ({rule_id, version}) can be traced to the text
-- they applied; the HTTP request itself is in audit_log (request_id links
-- the two).
CREATE TABLE policies (
    id         text PRIMARY KEY
               CHECK (id ~ '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$' AND length(id) <= 63),
    version    integer NOT NULL CHECK (version >= 1),
    rule       jsonb NOT NULL CHECK (jsonb_typeof(rule) = 'object'),
    enabled    boolean NOT NULL DEFAULT true,
    created_by text,
    updated_by text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- Append-only history: one row per create, update and delete. `seq` orders
-- all changes; its maximum is the policy generation replicas compare to
-- notice a change made through another replica.
CREATE TABLE policy_versions (
    seq        bigserial PRIMARY KEY,
    policy_id  text NOT NULL,
    version    integer NOT NULL CHECK (version >= 1),
    change     text NOT NULL CHECK (change IN ('create', 'update', 'delete')),
    rule       jsonb,             -- NULL for a delete
    enabled    boolean NOT NULL,
    changed_by text,
    request_id text,
    changed_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (policy_id, version)
);

-- The policy decisions taken when a run was accepted (policy/eval.h:
-- [{rule_id, version, outcome, path, line, column, actual, expected, ...}]),
-- embedded in its evidence record; and the digest of the policy in force.
ALTER TABLE runs ADD COLUMN policy_decisions jsonb NOT NULL DEFAULT '[]';
ALTER TABLE runs ADD COLUMN policy_digest text;
