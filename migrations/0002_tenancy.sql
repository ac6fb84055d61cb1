-- Tenancy: who belongs to which workspace with which role, personal access
-- tokens for machines, the audit trail of every change, and researchers'
-- requests for more quota.

CREATE TABLE workspace_members (
    workspace  text NOT NULL REFERENCES workspaces (name) ON DELETE CASCADE,
    kind       text NOT NULL CHECK (kind IN ('user', 'group')),
    subject    text NOT NULL CHECK (length(subject) BETWEEN 1 AND 256),
    role       text NOT NULL CHECK (role IN ('admin', 'researcher', 'viewer')),
    id         uuid NOT NULL DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace, kind, subject)
);
-- "Which workspaces may this principal see?" looks members up by subject.
CREATE INDEX workspace_members_subject ON workspace_members (kind, subject);
CREATE UNIQUE INDEX workspace_members_id ON workspace_members (id);

-- Personal access tokens: only the sha256 of the secret is kept.
CREATE TABLE api_tokens (
    id           uuid PRIMARY KEY,
    token_sha256 text NOT NULL UNIQUE,
    subject      text NOT NULL,
    name         text NOT NULL,
    workspace    text NOT NULL REFERENCES workspaces (name) ON DELETE CASCADE,
    role         text NOT NULL CHECK (role IN ('admin', 'researcher', 'viewer')),
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    revoked_at   timestamptz,
    last_used_at timestamptz
);
CREATE INDEX api_tokens_subject ON api_tokens (subject, created_at DESC);

-- Every mutating request: append-only (the gateway never updates or deletes).
CREATE TABLE audit_log (
    id         bigserial PRIMARY KEY,
    at         timestamptz NOT NULL DEFAULT now(),
    subject    text,
    method     text NOT NULL,
    route      text NOT NULL,
    target     text NOT NULL,
    workspace  text,
    status     integer NOT NULL,
    request_id text NOT NULL,
    detail     jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_log_at ON audit_log (at DESC, id DESC);
CREATE INDEX audit_log_subject ON audit_log (subject, at DESC);
CREATE INDEX audit_log_workspace ON audit_log (workspace, at DESC);

CREATE TABLE quota_requests (
    id          uuid PRIMARY KEY,
    workspace   text NOT NULL REFERENCES workspaces (name) ON DELETE CASCADE,
    requester   text NOT NULL,
    resource    text NOT NULL,
    amount      text NOT NULL,
    reason      text NOT NULL,
    state       text NOT NULL DEFAULT 'pending'
                CHECK (state IN ('pending', 'approved', 'rejected')),
    decided_by  text,
    decided_at  timestamptz,
    decision    text,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX quota_requests_workspace ON quota_requests (workspace, created_at DESC);
CREATE INDEX quota_requests_pending ON quota_requests (created_at) WHERE state = 'pending';
