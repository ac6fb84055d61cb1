"""The isolation matrix (issue #6): every operation of openapi.yaml against
every kind of caller, exhaustive by construction.

The operations are read from openapi.yaml when this module is imported, so a
new endpoint joins the matrix by itself. Each one is classified twice:

- by `derive_class`, from what the contract says (x-taugate-role, method,
  path prefix): public, self (any token, the caller's own things), ws-read /
  ws-write (viewer / researcher in /v1/workspaces/{ws}/...), run-read /
  run-write (viewer / researcher in the run's workspace, /v1/runs/{id}...),
  admin-read / admin-write (platform admins, /v1/admin/...);
- by MATRIX below, a table that also says how to call the operation (body,
  which objects, what a platform admin may change).

test_every_operation_is_classified fails when an operation is missing from
MATRIX, when MATRIX names one the contract no longer has, or when the two
classifications disagree; every per-operation test also fails for an
operation MATRIX does not cover.

The world (one gateway + PostgreSQL + kubesim for the module): workspaces
alpha (A, the callers' own) and bravo (B, the victim), sharing one
ClusterQueue. B holds real objects: a succeeded run whose logs, metrics and
checkpoints carry marker text, a running, a failed, a queued and a
cancelled run, quota requests, a token, members, a LocalQueue, a profile and
a policy rule, all named with "sekrit" markers. The checks:

- no token: every non-public operation is 401 (public ones are not);
- another tenant: every workspace, run and self operation called by A's
  researcher, viewer (direct and through a group) and workspace admin, a user
  without membership, and personal access tokens bound to A (of a user who is
  also a member of B, of a platform admin) with B's identifiers is 404
  problem+json and nothing else, with none of B's data in the body (B's
  identifiers only where the request named them); an operation that has both a workspace and an object in its path is
  also called with A's workspace and B's object, and a page cursor made
  from B's objects answers like one naming a missing object. Mutations
  change nothing (a snapshot of both workspaces, the catalogue and the
  tokens is compared); as a control, B's owner gets B's data from the same
  reads, and the leak check fires on it;
- own workspace: a viewer reads everything of A (200, and still none of B's
  data, which catches views aggregated across tenants) but cannot submit,
  validate, request quota, cancel, delete or resume (403); a researcher may
  submit but cannot cancel or resume another researcher's run (403);
- admin: every /v1/admin operation is 403 for every non-admin (including A's
  workspace admin and a platform admin's personal access token), on A's and
  on B's objects, and changes nothing; a platform admin may call each one
  (on scratch objects for mutations), and an object of B cannot be reached
  through A's path even by a platform admin.
"""
import base64
import json
import os
import re

import pytest
import yaml

import tokens
from gateway import ADMIN, Gateway
from kubesim import KubeSim
from wait import wait_for
from paths import BUILD, REPO
from world import admin_posts

A, B = "alpha", "bravo"
VERBS = ("get", "put", "post", "patch", "delete")


# ---- the operations, from the contract ------------------------------------------------------

class Operation:
    def __init__(self, op_id, method, path, role, query=()):
        self.id, self.method, self.path, self.role = op_id, method, path, role
        self.query = set(query)

    def __repr__(self):
        return f"{self.id} ({self.method} {self.path}, {self.role})"


def load_operations():
    with open(os.path.join(REPO, "openapi.yaml")) as f:
        doc = yaml.safe_load(f)

    def deref(x):
        if "$ref" not in x:
            return x
        node = doc
        for part in x["$ref"][2:].split("/"):
            node = node[part]
        return node

    ops = []
    for path, item in doc["paths"].items():
        for verb in VERBS:
            if verb in item:
                op = item[verb]
                params = [deref(p) for p in item.get("parameters", []) + op.get("parameters", [])]
                ops.append(Operation(op["operationId"], verb.upper(), path,
                                     op.get("x-taugate-role"),
                                     [p["name"] for p in params if p.get("in") == "query"]))
    return ops


OPERATIONS = load_operations()
BY_ID = {o.id: o for o in OPERATIONS}

PUBLIC, SELF = "public", "self"
WS_READ, WS_WRITE = "ws-read", "ws-write"
RUN_READ, RUN_WRITE = "run-read", "run-write"
ADMIN_READ, ADMIN_WRITE = "admin-read", "admin-write"
WRITES = {WS_WRITE, RUN_WRITE, ADMIN_WRITE}


def derive_class(op):
    """The class the contract implies, or None when the matrix has no rule
    for an operation like this one (then it must be extended)."""
    if op.role == "public":
        return PUBLIC
    if op.role == "authenticated":
        return SELF
    if op.path.startswith("/v1/admin/"):
        if op.role != "platform-admin":
            return None
        return ADMIN_READ if op.method == "GET" else ADMIN_WRITE
    if op.path.startswith("/v1/runs/{id}"):
        return {"viewer": RUN_READ, "researcher": RUN_WRITE}.get(op.role)
    if op.path.startswith("/v1/workspaces/{ws}"):
        return {"viewer": WS_READ, "researcher": WS_WRITE}.get(op.role)
    return None


# ---- how to call each operation ------------------------------------------------------------

def spec_text(ws, name, cpu="10m"):
    queue, profile = ("sekrit-q", "sekrit-job") if ws == B else (f"{ws}-q", f"{ws}-job")
    return (f"# {name}-spec-comment\n"
            f"name: {name}\nengine: job\nentrypoint: train.sh\n"
            f"compute:\n  gpus: 0\n  cpu_request: {cpu}\n  memory_request: 32Mi\n"
            "runtime:\n  image: bash:5.2\n"
            f"policy:\n  namespace: {ws}\n  profile: {profile}\n  queue: {queue}\n"
            f"experiment:\n  project: {name}-project\n  name: {name}-experiment\n")


def submission(ws, name, script="#!/usr/bin/env bash\necho matrix\n", cpu="10m"):
    return {"spec": spec_text(ws, name, cpu),
            "files": {"train.sh": base64.b64encode(script.encode()).decode()}}


def ws_of(target):
    return {"A": A, "B": B}.get(target, A)


class Op:
    """How the matrix calls one operation.

    body(target) -> the JSON body (target "A", "B" or "S" for the platform
    admin's scratch call) or None. ok: the status of the allowed call (the
    platform admin's for admin operations, A's researcher's for ws-write).
    scratch: path parameters of the platform admin's call of a mutation
    (by parameter name, over B's objects). cross: for self operations, the
    status another tenant's identifiers get (a callable of the principal).
    query: the query string a call needs, from the objects it is made with."""

    def __init__(self, cls, body=None, ok=200, scratch=None, cross=None, query=None):
        self.cls, self.ok, self.scratch, self.cross = cls, ok, scratch or {}, cross
        self._body = body
        self.query = query  # query(world, ids) -> the query string the call needs

    def body(self, target):
        return self._body(target) if self._body else None


def const(value):
    return lambda target: value


def pat_refused(who):
    """createToken: a personal access token cannot mint tokens (403) whatever
    the workspace; a user gets 404 for a workspace they cannot see."""
    return 403 if who.endswith("_pat") else 404


MATRIX = {
    # public
    "getHealthz": Op(PUBLIC), "getReadyz": Op(PUBLIC), "getMetrics": Op(PUBLIC),
    "getVersion": Op(PUBLIC), "getOpenapi": Op(PUBLIC), "getOpenapiJson": Op(PUBLIC),
    "getEvidencePublicKey": Op(PUBLIC),
    # the caller's own things
    "listMyWorkspaces": Op(SELF, cross=lambda who: 200),
    "listTokens": Op(SELF, cross=lambda who: 200),
    "createToken": Op(SELF, cross=pat_refused,
                      body=lambda t: {"name": "matrix", "workspace": ws_of(t), "role": "viewer"}),
    "revokeToken": Op(SELF, cross=lambda who: 404),
    # a workspace
    "getMyWorkspace": Op(WS_READ), "listWorkspaceProfiles": Op(WS_READ),
    "getWorkspaceQueue": Op(WS_READ), "getWorkspacePolicy": Op(WS_READ),
    "getWorkspaceQuota": Op(WS_READ), "listQuotaRequests": Op(WS_READ),
    "getQuotaRequest": Op(WS_READ), "listRuns": Op(WS_READ), "countRuns": Op(WS_READ),
    "watchRunChanges": Op(WS_READ, query=lambda w, ids: "follow=false&after=0"),
    "listExperiments": Op(WS_READ),
    "compareRuns": Op(WS_READ, query=lambda w, ids: "ids=" + ",".join(
        (ids["runs"] + [w.runs["a_failed"]])[:2])),
    "createQuotaRequest": Op(WS_WRITE, ok=201, body=lambda t: {
        "resource": "cpu", "amount": "1", "reason": "matrix"}),
    "submitRun": Op(WS_WRITE, ok=201, body=lambda t: submission(ws_of(t), "matrix-submit")),
    "validateRun": Op(WS_WRITE, ok=200, body=lambda t: submission(ws_of(t), "matrix-validate")),
    "submitRunBatch": Op(WS_WRITE, ok=200,
                         body=lambda t: {"runs": [submission(ws_of(t), "matrix-batch")]}),
    # a run
    "getRun": Op(RUN_READ), "listRunEvents": Op(RUN_READ), "getRunLogs": Op(RUN_READ),
    "getRunMetrics": Op(RUN_READ), "listRunCheckpoints": Op(RUN_READ),
    "getRunEvidence": Op(RUN_READ),
    "deleteRun": Op(RUN_WRITE), "cancelRun": Op(RUN_WRITE),
    "resumeRun": Op(RUN_WRITE, body=const({"force": True})),
    # platform admins: operations
    "listAudit": Op(ADMIN_READ), "listAllQuotaRequests": Op(ADMIN_READ),
    "getAnyQuotaRequest": Op(ADMIN_READ),
    "approveQuotaRequest": Op(ADMIN_WRITE, body=const({"decision": "matrix ok"}),
                              scratch={"id": "qr-approve"}),
    "rejectQuotaRequest": Op(ADMIN_WRITE, body=const({"decision": "matrix no"}),
                             scratch={"id": "qr-reject"}),
    "getUsage": Op(ADMIN_READ), "getDrift": Op(ADMIN_READ), "listNodes": Op(ADMIN_READ),
    "getNode": Op(ADMIN_READ), "getFleet": Op(ADMIN_READ),
    "cordonNode": Op(ADMIN_WRITE, body=const({"reason": "matrix"}),
                     scratch={"name": "scratch-node"}),
    "uncordonNode": Op(ADMIN_WRITE, body=const({"reason": "matrix"}),
                       scratch={"name": "scratch-node"}),
    "drainNode": Op(ADMIN_WRITE, body=const({"reason": "matrix"}),
                    scratch={"name": "scratch-node"}),
    # platform admins: workspaces, their queues and members
    "listWorkspaces": Op(ADMIN_READ),
    "createWorkspace": Op(ADMIN_WRITE, ok=201,
                          body=const({"name": "made-ws", "namespace": "made-ws"})),
    "getWorkspace": Op(ADMIN_READ),
    "updateWorkspace": Op(ADMIN_WRITE, body=const({"ttl_seconds": 7200}),
                          scratch={"ws": "scratch-home"}),
    "deleteWorkspace": Op(ADMIN_WRITE, ok=204, scratch={"ws": "scratch-ws"}),
    "listLocalQueues": Op(ADMIN_READ),
    "createLocalQueue": Op(ADMIN_WRITE, ok=201, scratch={"ws": "scratch-home"},
                           body=const({"name": "made-q", "cluster_queue": "iso-cq"})),
    "getLocalQueue": Op(ADMIN_READ),
    "updateLocalQueue": Op(ADMIN_WRITE, body=const({"cluster_queue": "spare-cq"}),
                           scratch={"ws": "scratch-home", "name": "scratch-q"}),
    "deleteLocalQueue": Op(ADMIN_WRITE, ok=204,
                           scratch={"ws": "scratch-home", "name": "scratch-q-gone"}),
    "listMembers": Op(ADMIN_READ),
    "createMember": Op(ADMIN_WRITE, ok=201, scratch={"ws": "scratch-home"},
                       body=const({"kind": "user", "subject": "made-member", "role": "viewer"})),
    "getMember": Op(ADMIN_READ),
    "updateMember": Op(ADMIN_WRITE, body=const({"role": "admin"}),
                       scratch={"ws": "scratch-home", "member": "scratch-member"}),
    "deleteMember": Op(ADMIN_WRITE, ok=204,
                       scratch={"ws": "scratch-home", "member": "scratch-member-gone"}),
    # platform admins: the catalogue
    "listProfiles": Op(ADMIN_READ),
    "createProfile": Op(ADMIN_WRITE, ok=201, body=const({"name": "made-prof", "engine": "job"})),
    "getProfile": Op(ADMIN_READ),
    "updateProfile": Op(ADMIN_WRITE, body=const({"description": "patched by the matrix"}),
                        scratch={"name": "scratch-prof"}),
    "deleteProfile": Op(ADMIN_WRITE, ok=204, scratch={"name": "scratch-prof-gone"}),
    "listFlavors": Op(ADMIN_READ),
    "createFlavor": Op(ADMIN_WRITE, ok=201, body=const({"name": "made-flavor"})),
    "getFlavor": Op(ADMIN_READ),
    "updateFlavor": Op(ADMIN_WRITE, body=const({"node_labels": {"matrix": "patched"}}),
                       scratch={"name": "scratch-flavor"}),
    "deleteFlavor": Op(ADMIN_WRITE, ok=204, scratch={"name": "scratch-flavor-gone"}),
    "listClusterQueues": Op(ADMIN_READ),
    "createClusterQueue": Op(ADMIN_WRITE, ok=201, body=const({"name": "made-cq"})),
    "getClusterQueue": Op(ADMIN_READ),
    "updateClusterQueue": Op(ADMIN_WRITE, body=const({"cohort": "matrix-patched"}),
                             scratch={"name": "scratch-cq-kept"}),
    "deleteClusterQueue": Op(ADMIN_WRITE, ok=204, scratch={"name": "scratch-cq"}),
    "listPriorityClasses": Op(ADMIN_READ),
    "createPriorityClass": Op(ADMIN_WRITE, ok=201, body=const({"name": "made-pc", "value": 7})),
    "getPriorityClass": Op(ADMIN_READ),
    "updatePriorityClass": Op(ADMIN_WRITE, body=const({"description": "patched by the matrix"}),
                              scratch={"name": "scratch-pc"}),
    "deletePriorityClass": Op(ADMIN_WRITE, ok=204, scratch={"name": "scratch-pc-gone"}),
    # platform admins: policies
    "listPolicies": Op(ADMIN_READ),
    "createPolicy": Op(ADMIN_WRITE, ok=201, body=const({
        "id": "made-rule", "description": "made by the matrix", "action": "deny",
        "max_retries": 9})),
    "getPolicy": Op(ADMIN_READ),
    "updatePolicy": Op(ADMIN_WRITE, body=const({"enabled": False}),
                       scratch={"id": "scratch-rule"}),
    "deletePolicy": Op(ADMIN_WRITE, ok=204, scratch={"id": "scratch-rule-gone"}),
    "listPolicyVersions": Op(ADMIN_READ),
    "getEffectivePolicy": Op(ADMIN_READ),
    "reloadPolicies": Op(ADMIN_WRITE),
}

# Cases that fail because of a gateway bug in code this change may not edit:
# {(test, operationId): reason}. Each is xfail(strict=True), so it flips when fixed.
KNOWN_BUGS = {}


def op_params(test, classes):
    """pytest parameters: every operation of the contract whose derived class
    is in `classes` (an unclassifiable one is in every test, and fails)."""
    out = []
    for o in OPERATIONS:
        cls = derive_class(o)
        if cls is not None and cls not in classes:
            continue
        marks = []
        if (test, o.id) in KNOWN_BUGS:
            marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_BUGS[(test, o.id)]))
        out.append(pytest.param(o.id, id=o.id, marks=marks))
    return out


def recipe(op_id):
    op = BY_ID[op_id]
    assert op_id in MATRIX, (
        f"{op!r} is not in the isolation matrix: add it to MATRIX in {__file__}")
    assert derive_class(op) is not None, (
        f"{op!r}: the matrix has no rule for this role/path; extend derive_class")
    return MATRIX[op_id]


# ---- principals -----------------------------------------------------------------------------

SUBJECTS = {
    "alice": "alice@alpha.test",            # researcher in A
    "alice2": "alice2@alpha.test",          # researcher in A, owns A's running/failed runs
    "victor": "victor@alpha.test",          # viewer in A
    "ada": "ada@alpha.test",                # workspace admin of A
    "nobody": "nobody@nowhere.test",        # no membership anywhere
    "bob": "bob.sekrit@bravo.test",         # researcher in B, owns B's objects
    "dual": "dual@both.test",               # researcher in A and in B
    "gina": "gina@alpha.test",              # viewer in A through group alpha-team
}
OUTSIDERS = ["alice", "victor", "ada", "nobody", "dual_pat", "padmin_pat", "gina"]
A_MEMBERS = ["alice", "victor", "ada", "dual_pat", "padmin_pat", "gina"]
NON_ADMINS = ["alice", "victor", "ada", "nobody", "bob", "gina", "dual_pat", "padmin_pat"]

UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
PARAM_RE = re.compile(r"\{(\w+)\}")


# ---- the world ------------------------------------------------------------------------------

class World:
    def __init__(self, gw, ks):
        self.gw, self.ks = gw, ks
        self.tok = {k: tokens.mint(s) for k, s in SUBJECTS.items()}
        self.tok["gina"] = tokens.mint(SUBJECTS["gina"], groups=["alpha-team"])
        self.tok["padmin"] = tokens.admin_token()
        self.calls = {}  # check -> number of requests, for the summary

    # requests

    def req(self, who, method, path, body=None, check=None):
        token = None if who is None else (ADMIN if who == "padmin" else self.tok[who])
        if check:
            self.calls[check] = self.calls.get(check, 0) + 1
        return self.gw.req(method, path, body=body, token=token)

    def ok(self, who, method, path, body=None, status=200):
        r = self.req(who, method, path, body=body)
        assert r.status == status, (who, method, path, r)
        return r.json() if r.body else None

    def items(self, path, who="padmin"):
        return self.ok(who, "GET", path)["items"]

    def wait(self, what, fn, timeout=60):
        return wait_for(fn, timeout, what, interval=0.25, detail=lambda: self.gw.logs()[-3000:])

    def run_state(self, run_id, states):
        def probe():
            run = self.ok("padmin", "GET", f"/v1/runs/{run_id}")
            return run if run["state"] in states else None
        return self.wait(f"run {run_id} in {states}", probe)

    # building

    def member(self, ws, kind, subject, role):
        return self.ok("padmin", "POST", f"/v1/admin/workspaces/{ws}/members",
                       {"kind": kind, "subject": subject, "role": role}, 201)["id"]

    def submit(self, who, ws, name, script, cpu="10m"):
        return self.ok(who, "POST", f"/v1/workspaces/{ws}/runs",
                       submission(ws, name, script, cpu), 201)["id"]

    def quota_request(self, who, ws, reason, amount="1"):
        return self.ok(who, "POST", f"/v1/workspaces/{ws}/quota-requests",
                       {"resource": "cpu", "amount": amount, "reason": reason}, 201)["id"]

    def pat(self, who, name, ws, role):
        t = self.ok(who, "POST", "/v1/tokens", {"name": name, "workspace": ws, "role": role}, 201)
        return t["id"], t["token"]

    def build(self):
        for ns in (A, B, "scratch-home", "scratch-ws"):
            self.ks.ensure_namespace(ns)
        rg = [{"covered_resources": ["cpu", "memory"], "flavors": [{
            "name": "default-flavor", "resources": [{"name": "cpu", "nominal_quota": "4"},
                                                    {"name": "memory", "nominal_quota": "12Gi"}]}]}]
        admin_posts(self.gw, [
            ("/v1/admin/flavors", {"name": "default-flavor"}),
            ("/v1/admin/cluster-queues", {"name": "iso-cq", "resource_groups": rg}),
            ("/v1/admin/cluster-queues", {"name": "spare-cq"}),
            ("/v1/admin/priority-classes", {"name": "taugrid-default", "value": 1000}),
            ("/v1/admin/workspaces", {"name": A, "namespace": A, "default_queue": "alpha-q"}),
            ("/v1/admin/workspaces", {"name": B, "namespace": B, "default_queue": "sekrit-q"}),
            ("/v1/admin/workspaces/alpha/queues", {"name": "alpha-q", "cluster_queue": "iso-cq"}),
            ("/v1/admin/workspaces/bravo/queues", {"name": "sekrit-q", "cluster_queue": "iso-cq"}),
            ("/v1/admin/profiles", {"name": "alpha-job", "engine": "job",
                                    "allowed_workspaces": [A]}),
            ("/v1/admin/profiles", {"name": "sekrit-job", "engine": "job",
                                    "allowed_workspaces": [B]}),
            ("/v1/admin/policies", {"id": "alpha-rule", "description": "rule of alpha",
                                    "action": "deny", "scope": {"workspaces": [A]},
                                    "max_retries": 5}),
            ("/v1/admin/policies", {"id": "sekrit-rule", "description": "sekrit rule of bravo",
                                    "action": "deny", "scope": {"workspaces": [B]},
                                    "max_retries": 5}),
            # scratch objects a platform admin changes, and others it deletes
            # (-gone: an update never finds its object deleted, whatever the order)
            ("/v1/admin/workspaces", {"name": "scratch-ws", "namespace": "scratch-ws"}),
            ("/v1/admin/workspaces", {"name": "scratch-home", "namespace": "scratch-home"}),
            ("/v1/admin/workspaces/scratch-home/queues",
             {"name": "scratch-q", "cluster_queue": "iso-cq"}),
            ("/v1/admin/workspaces/scratch-home/queues",
             {"name": "scratch-q-gone", "cluster_queue": "iso-cq"}),
            ("/v1/admin/profiles", {"name": "scratch-prof", "engine": "job"}),
            ("/v1/admin/profiles", {"name": "scratch-prof-gone", "engine": "job"}),
            ("/v1/admin/flavors", {"name": "scratch-flavor"}),
            ("/v1/admin/flavors", {"name": "scratch-flavor-gone"}),
            ("/v1/admin/cluster-queues", {"name": "scratch-cq"}),
            ("/v1/admin/cluster-queues", {"name": "scratch-cq-kept"}),  # updated, never deleted
            ("/v1/admin/priority-classes", {"name": "scratch-pc", "value": 5}),
            ("/v1/admin/priority-classes", {"name": "scratch-pc-gone", "value": 6}),
            ("/v1/admin/policies", {"id": "scratch-rule", "description": "scratch",
                                    "action": "deny", "max_retries": 50}),
            ("/v1/admin/policies", {"id": "scratch-rule-gone", "description": "scratch",
                                    "action": "deny", "max_retries": 50}),
        ])
        a_member = self.member(A, "user", SUBJECTS["alice"], "researcher")
        self.member(A, "user", SUBJECTS["alice2"], "researcher")
        self.member(A, "user", SUBJECTS["victor"], "viewer")
        self.member(A, "user", SUBJECTS["ada"], "admin")
        self.member(A, "user", SUBJECTS["dual"], "researcher")
        self.member(A, "group", "alpha-team", "viewer")
        b_member = self.member(B, "user", SUBJECTS["bob"], "researcher")
        b_group = self.member(B, "group", "sekrit-group", "viewer")
        self.member(B, "user", SUBJECTS["dual"], "researcher")
        scratch_member = self.member("scratch-home", "user", "scratch-user", "viewer")
        scratch_member_gone = self.member("scratch-home", "user", "scratch-user-2", "viewer")

        # tokens: B's, and A's (a member of B's, a platform admin's, a group
        # member's) that must not reach B
        b_tok_id, self.b_pat = self.pat("bob", "sekrit-token", B, "viewer")
        a_tok_id, _ = self.pat("alice", "alpha-token", A, "viewer")
        _, self.tok["dual_pat"] = self.pat("dual", "dual-alpha", A, "researcher")
        _, self.tok["padmin_pat"] = self.pat("padmin", "padmin-alpha", A, "admin")
        _, self.tok["gina_pat"] = self.pat("gina", "gina-alpha", A, "viewer")

        # runs: B's data is marked so that a leak shows; A's likewise
        def done_script(tag):
            return (f"#!/usr/bin/env bash\necho {tag}-log-line\n"
                    f"echo 'TAU_METRIC {{\"_step\": 1, \"{tag}_metric\": 0.5, \"loss\": 2}}'\n"
                    "echo 'TAU_METRIC {\"_step\": 2, \"loss\": 1}'\n"
                    f"echo 'TAU_CHECKPOINT {{\"path\": \"/out/{tag}-ckpt\", \"step\": 1}}'\n")
        live = "#!/usr/bin/env bash\necho started\nsleep 600\n"
        failed = "#!/usr/bin/env bash\necho about to fail\nexit 3\n"
        # one at a time: kubesim's pods share the host's /tmp, where the Job
        # writes its script
        plan = [("b_done", "bob", B, "sekrit-run-done", done_script("sekrit"), "Succeeded"),
                ("b_failed", "bob", B, "sekrit-run-failed", failed, "Failed"),
                ("b_live", "bob", B, "sekrit-run-live", live, "Running"),
                ("a_done", "alice", A, "alpha-run-done", done_script("alpha"), "Succeeded"),
                ("a_failed", "alice2", A, "alpha-run-failed", failed, "Failed"),
                ("a_live", "alice2", A, "alpha-run-live", live, "Running")]
        runs = {}
        for key, who, ws, name, script, want in plan:
            rid = runs[key] = self.submit(who, ws, name, script)
            got = self.run_state(rid, {"Succeeded", "Failed", "Cancelled", want})
            assert got["state"] == want, (key, got)
            if want == "Running":
                self.wait(f"{key} started", lambda r=rid: b"started" in self.req(
                    "padmin", "GET", f"/v1/runs/{r}/logs").body)
        # more than the ClusterQueue holds: pending in the shared queue for
        # good, and one that its owner cancels (the event names him)
        for key in ("b_queued", "b_cancelled"):
            runs[key] = self.submit("bob", B, f"sekrit-run-{key[2:]}", live, cpu="64")
            self.run_state(runs[key], {"Queued"})
        self.ok("bob", "POST", f"/v1/runs/{runs['b_cancelled']}:cancel")
        self.runs = runs
        a_qr = self.quota_request("alice", A, "alpha-reason")
        b_qr = self.quota_request("bob", B, "sekrit-reason", amount="3")
        b_qr2 = self.quota_request("bob", B, "sekrit-reason-2", amount="5")
        self.scratch_qr = {"qr-approve": self.quota_request("alice", A, "approve me"),
                           "qr-reject": self.quota_request("alice", A, "reject me")}

        # what a leak would show is really there
        for tag, rid in (("sekrit", runs["b_done"]), ("alpha", runs["a_done"])):
            for path, text in ((f"/v1/runs/{rid}/logs", f"{tag}-log-line"),
                               (f"/v1/runs/{rid}/metrics", f"{tag}_metric"),
                               (f"/v1/runs/{rid}/checkpoints", f"/out/{tag}-ckpt")):
                self.wait(f"{text} in {path}",
                          lambda p=path, t=text: t in self.req("padmin", "GET", p).body.decode())
        # a node a platform admin cordons, uncordons and drains
        self.ks.create({"apiVersion": "v1", "kind": "Node",
                        "metadata": {"name": "scratch-node", "labels": {"matrix": "scratch"}}})
        nodes = self.wait("the nodes", lambda: [
            n for n in self.items("/v1/admin/nodes") if n["name"] != "scratch-node"])

        common = {"flavors": "default-flavor", "cluster-queues": "iso-cq",
                  "priority-classes": "taugrid-default", "nodes": nodes[0]["name"]}
        self.ids = {
            "B": dict(common, **{
                "workspaces": B, "runs": [runs[k] for k in (
                    "b_done", "b_live", "b_failed", "b_queued", "b_cancelled")],
                "quota-requests": b_qr, "tokens": b_tok_id, "queues": "sekrit-q",
                "members": b_member, "profiles": "sekrit-job", "policies": "sekrit-rule"}),
            "A": dict(common, **{
                "workspaces": A, "runs": [runs["a_done"]], "quota-requests": a_qr,
                "tokens": a_tok_id, "queues": "alpha-q", "members": a_member,
                "profiles": "alpha-job", "policies": "alpha-rule"}),
        }
        # A's runs a caller may try to change: another researcher's, running and failed
        self.a_others_runs = [runs["a_live"], runs["a_failed"]]
        self.scratch = {"scratch-member": scratch_member,
                        "scratch-member-gone": scratch_member_gone, **self.scratch_qr}
        self.fixed_runs = set(runs.values())
        # B's data: none of it may reach a caller of A unless the request named it
        self.secrets = ["sekrit", "bravo"] + sorted(
            {rid for k, rid in runs.items() if k.startswith("b_")} |
            {b_qr, b_qr2, b_tok_id, b_member, b_group})
        self.b_ids = set(self.secrets[2:])

    # parameters

    @staticmethod
    def paths_of(template, ids, what=""):
        """Every concrete path of a template for one set of objects, keyed by
        the collection before each parameter (a run operation once per run)."""
        out = [template]
        for m in PARAM_RE.finditer(template):
            seg = template[:m.start()].rstrip("/").rsplit("/", 1)[-1]
            assert seg in ids, (f"{what}: no object to put in {{{m.group(1)}}} after /{seg}/; "
                                "add one to World.ids")
            values = ids[seg] if isinstance(ids[seg], list) else [ids[seg]]
            out = [p.replace(m.group(0), v, 1) for p in out for v in values]
        return out

    def paths(self, op_id, ids):
        return self.with_query(op_id, self.paths_of(BY_ID[op_id].path, ids, op_id), ids)

    def with_query(self, op_id, paths, ids):
        q = MATRIX[op_id].query if op_id in MATRIX else None
        return [f"{p}?{q(self, ids)}" for p in paths] if q else paths

    def scratch_paths(self, op_id):
        """A platform admin's call of a mutation: the operation's scratch
        parameters by name, B's objects for the rest."""
        template = BY_ID[op_id].path
        for name, value in MATRIX[op_id].scratch.items():
            template = template.replace("{%s}" % name, self.scratch.get(value, value))
        return self.with_query(op_id, self.paths_of(template, self.ids["B"], op_id),
                               self.ids["B"])

    # checks

    def assert_no_leak(self, r, sent, what):
        """None of B's data in the answer, apart from what the request named."""
        text = r.body.decode(errors="replace")
        for secret in self.secrets:
            if secret in sent:
                continue
            assert secret not in text, f"{what}: the answer leaks {secret!r}: {text[:600]}"
        for u in set(UUID_RE.findall(text)) & self.b_ids:
            assert u in sent, f"{what}: the answer leaks B's id {u}: {text[:600]}"

    def assert_problem(self, r, status, what):
        """An RFC 9457 problem and nothing else: no room for data."""
        assert r.status == status, f"{what}: want {status}, got {r!r}"
        ct = r.header("Content-Type") or ""
        assert ct.startswith("application/problem+json"), f"{what}: {ct}"
        p = r.json()
        assert p["status"] == status and p["type"].startswith("https://taugate.dev/problems/"), p
        assert set(p) <= {"type", "title", "status", "detail", "instance"}, f"{what}: {p}"

    def snapshot(self):
        """What a mutation would change: both workspaces' runs, quota
        requests, members and queues, the catalogue and everyone's tokens."""
        snap = {}
        for ws in (A, B):
            snap[f"runs {ws}"] = sorted(
                (r["id"], r["state"], r["attempt"]) if r["id"] in self.fixed_runs else (r["id"],)
                for r in self.items(f"/v1/workspaces/{ws}/runs?limit=200"))
            snap[f"quota {ws}"] = sorted(
                (q["id"], q["state"], q["amount"])
                for q in self.items(f"/v1/workspaces/{ws}/quota-requests?limit=200"))
            for sub in ("members", "queues"):
                snap[f"{sub} {ws}"] = self.items(f"/v1/admin/workspaces/{ws}/{sub}?limit=200")
        for coll in ("workspaces", "profiles", "flavors", "cluster-queues", "priority-classes",
                     "policies"):
            snap[coll] = self.items(f"/v1/admin/{coll}?limit=200")
        for who in SUBJECTS:
            snap[f"tokens {who}"] = sorted((t["id"], t["revoked_at"])
                                           for t in self.items("/v1/tokens", who))
        snap["tokens work"] = [
            self.gw.req("GET", f"/v1/workspaces/{ws}", token=t).status
            for ws, t in ((B, self.b_pat), (A, self.tok["dual_pat"]),
                          (A, self.tok["padmin_pat"]), (A, self.tok["gina_pat"]))]
        return snap

    def assert_unchanged(self, before, what):
        after = self.snapshot()
        changed = [k for k in before if before[k] != after[k]]
        assert not changed, f"{what} changed {changed}: " + "; ".join(
            f"{k}: {before[k]} -> {after[k]}" for k in changed)[:3000]


@pytest.fixture(scope="module")
def cluster():
    ks = KubeSim().start()
    yield ks
    ks.stop()


@pytest.fixture(scope="module")
def world(db_url, cluster):
    gw = Gateway(BUILD, db_url, extra_env={"TAUGATE_KUBE_API_URL": cluster.url,
                                           "TAUGATE_RECONCILE_INTERVAL_S": "1"}).start()
    w = World(gw, cluster)
    try:
        w.build()
        yield w
        print("\nisolation matrix requests by check: " + json.dumps(w.calls, sort_keys=True))
    finally:
        status = gw.stop()
        logs = gw.logs()
        gw.close()
    assert status == 0, logs[-3000:]


# ---- the tests ------------------------------------------------------------------------------

def test_every_operation_is_classified():
    ids = [o.id for o in OPERATIONS]
    assert len(ids) == len(set(ids)), "duplicate operationIds in openapi.yaml"
    missing = [repr(o) for o in OPERATIONS if o.id not in MATRIX]
    stale = sorted(set(MATRIX) - set(ids))
    unruled = [repr(o) for o in OPERATIONS if derive_class(o) is None]
    disagree = [f"{o!r}: MATRIX says {MATRIX[o.id].cls}, the contract implies {derive_class(o)}"
                for o in OPERATIONS if o.id in MATRIX and MATRIX[o.id].cls != derive_class(o)]
    assert not (missing or stale or unruled or disagree), (
        f"not in MATRIX: {missing}\nin MATRIX but not in openapi.yaml: {stale}\n"
        f"no rule in derive_class: {unruled}\nclassified differently: {disagree}")
    # every class is exercised, so no rule of the matrix is dead
    assert {derive_class(o) for o in OPERATIONS} == {
        PUBLIC, SELF, WS_READ, WS_WRITE, RUN_READ, RUN_WRITE, ADMIN_READ, ADMIN_WRITE}


@pytest.mark.parametrize("op_id", op_params("test_no_token", {
    PUBLIC, SELF, WS_READ, WS_WRITE, RUN_READ, RUN_WRITE, ADMIN_READ, ADMIN_WRITE}))
def test_no_token(world, op_id):
    """Without a token: 401 with WWW-Authenticate, except on public operations."""
    op = recipe(op_id)
    o = BY_ID[op_id]
    before = world.snapshot() if op.cls in WRITES else None
    for path in world.paths(op_id, world.ids["B"]):
        r = world.req(None, o.method, path, body=op.body("B"), check="no token")
        if op.cls == PUBLIC:
            assert r.status != 401 and r.status < 500, (path, r)
            continue
        world.assert_problem(r, 401, f"{o.method} {path} without a token")
        assert r.header("WWW-Authenticate"), path
        world.assert_no_leak(r, path, f"{o.method} {path} without a token")
    if before:
        world.assert_unchanged(before, f"{op_id} without a token")


@pytest.mark.parametrize("op_id", op_params("test_other_tenant", {
    SELF, WS_READ, WS_WRITE, RUN_READ, RUN_WRITE}))
def test_other_tenant(world, op_id):
    """A's callers with B's identifiers: 404 and none of B's data; nothing of
    B changes. Self operations answer the caller's own things only."""
    op = recipe(op_id)
    o = BY_ID[op_id]
    writes = op.cls in WRITES or o.method != "GET"
    before = world.snapshot() if writes else None
    cases = [(who, path) for who in OUTSIDERS for path in world.paths(op_id, world.ids["B"])]
    if "{ws}" in o.path and len(PARAM_RE.findall(o.path)) > 1:
        # A's workspace in the path, B's object after it
        mixed = dict(world.ids["B"], workspaces=A)
        cases += [(who, path) for who in A_MEMBERS for path in world.paths(op_id, mixed)]
    for who, path in cases:
        body = op.body("B")
        what = f"{who}: {o.method} {path} {json.dumps(body) if body else ''}"
        r = world.req(who, o.method, path, body=body, check="other tenant")
        want = op.cross(who) if op.cross else 404
        if want >= 400:
            world.assert_problem(r, want, what)
        else:
            assert r.status == want, f"{what}: {r!r}"
        world.assert_no_leak(r, path + json.dumps(body or {}), what)
    if before:
        world.assert_unchanged(before, f"{op_id} with B's identifiers")


def b64url_decode(text):
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()
    except ValueError:
        return None


# extra query parameters a page of the operation needs
PAGE_QUERY = {"getRunMetrics": "name=loss&"}


@pytest.mark.parametrize("op_id", [
    p for p in op_params("test_foreign_cursor", {WS_READ, RUN_READ})
    if "cursor" in BY_ID[p.values[0]].query])
def test_foreign_cursor(world, op_id):
    """A page cursor made from B's objects, used on A's list, answers exactly
    like the same cursor naming an object that does not exist: a cursor is no
    oracle for B's ids or times."""
    recipe(op_id)
    extra = PAGE_QUERY.get(op_id, "")
    cursors = []
    for path in world.paths(op_id, world.ids["B"]):
        page = world.ok("bob", "GET", f"{path}?{extra}limit=1")
        if page.get("next_cursor"):
            cursors.append(page["next_cursor"])
    assert cursors, f"{op_id}: B has no second page; give B more objects"
    checked = 0
    for cur in cursors:
        raw = b64url_decode(cur)
        forged_raw = UUID_RE.sub("00000000-0000-4000-8000-000000000000", raw or cur)
        if (raw or cur) == forged_raw:
            continue  # the cursor names no object of B
        forged = (base64.urlsafe_b64encode(forged_raw.encode()).decode().rstrip("=")
                  if raw is not None else forged_raw)
        for who in ["victor", "alice", "dual_pat"]:
            for path in world.paths(op_id, world.ids["A"]):
                answers = []
                for c in (cur, forged):
                    r = world.req(who, "GET", f"{path}?{extra}limit=50&cursor={c}",
                                  check="foreign cursor")
                    answers.append((r.status, r.json().get("items") if r.status == 200 else
                                    r.json()["detail"].replace(c, "<cursor>")))
                assert answers[0] == answers[1], (
                    f"{who}: {path} answers B's cursor {cur} ({raw}) unlike a cursor of a "
                    f"missing object: {answers[0]} vs {answers[1]}")
                checked += 1
    # checked == 0: the operation's cursors name no object (a position in a
    # series), so there is nothing to forge


@pytest.mark.parametrize("op_id", op_params("test_viewer_in_own_workspace", {
    WS_READ, WS_WRITE, RUN_READ, RUN_WRITE}))
def test_viewer_in_own_workspace(world, op_id):
    """A's viewer reads everything of A (200) but cannot submit, validate,
    request quota, cancel, delete or resume (403)."""
    op = recipe(op_id)
    o = BY_ID[op_id]
    readers = ["victor", "gina", "alice", "ada", "dual_pat"]
    if op.cls in (WS_READ, RUN_READ):
        for who in readers:
            for path in world.paths(op_id, world.ids["A"]):
                r = world.req(who, o.method, path, check="own workspace read")
                assert r.status == 200, (who, path, r)
                # a view of A must not carry B's data either
                world.assert_no_leak(r, "", f"{who}: {o.method} {path}")
        return
    before = world.snapshot()
    ids = dict(world.ids["A"], runs=world.a_others_runs + [world.runs["a_done"]])
    for path in world.paths(op_id, ids):
        body = op.body("A")
        r = world.req("victor", o.method, path, body=body, check="viewer write")
        world.assert_problem(r, 403, f"viewer: {o.method} {path}")
        assert "researcher" in r.json()["detail"], r
    world.assert_unchanged(before, f"{op_id} by A's viewer")


@pytest.mark.parametrize("op_id", op_params("test_researcher_in_own_workspace", {
    WS_WRITE, RUN_WRITE}))
def test_researcher_in_own_workspace(world, op_id):
    """A's researcher submits in A, but cannot cancel, delete or resume
    another researcher's run (403, "cancel own runs"); neither can a
    researcher's token."""
    op = recipe(op_id)
    o = BY_ID[op_id]
    if op.cls == WS_WRITE:
        for who in ("alice", "dual_pat"):
            (path,) = world.paths(op_id, world.ids["A"])
            r = world.req(who, o.method, path, body=op.body("A"), check="researcher write")
            assert r.status == op.ok, (who, path, r)
            world.assert_no_leak(r, "", f"{who}: {o.method} {path}")
        return
    before = world.snapshot()
    for who in ("alice", "dual_pat"):
        for path in world.paths(op_id, dict(world.ids["A"], runs=world.a_others_runs)):
            r = world.req(who, o.method, path, body=op.body("A"), check="researcher others run")
            world.assert_problem(r, 403, f"{who}: {o.method} {path}")
            assert "only their own runs" in r.json()["detail"], r
    world.assert_unchanged(before, f"{op_id} on another researcher's run")


@pytest.mark.parametrize("op_id", op_params("test_admin_only", {ADMIN_READ, ADMIN_WRITE}))
def test_admin_only(world, op_id):
    """Every /v1/admin operation: 403 for every non-admin on A's and B's
    objects, nothing changed; a platform admin may call it."""
    op = recipe(op_id)
    o = BY_ID[op_id]
    writes = op.cls == ADMIN_WRITE
    before = world.snapshot() if writes else None
    for who in NON_ADMINS:
        for target in ("A", "B"):
            for path in world.paths(op_id, world.ids[target]):
                body = op.body(target)
                what = f"{who}: {o.method} {path}"
                r = world.req(who, o.method, path, body=body, check="non-admin")
                world.assert_problem(r, 403, what)
                assert r.json()["detail"].endswith("is for platform admins"), (what, r)
                world.assert_no_leak(r, path + json.dumps(body or {}), what)
    if writes:
        world.assert_unchanged(before, f"{op_id} by non-admins")
    if "{ws}" in o.path and len(PARAM_RE.findall(o.path)) > 1:
        # not even a platform admin reaches B's queue or member through A's path
        before = world.snapshot() if writes else None
        for path in world.paths(op_id, dict(world.ids["B"], workspaces=A)):
            r = world.req("padmin", o.method, path, body=op.body("B"), check="admin mixed path")
            world.assert_problem(r, 404, f"platform admin: {o.method} {path}")
        if writes:
            world.assert_unchanged(before, f"{op_id} with A's workspace and B's object")
    # a platform admin may (B's objects for reads, scratch ones for mutations)
    paths = world.scratch_paths(op_id) if writes else world.paths(op_id, world.ids["B"])
    for path in paths:
        r = world.req("padmin", o.method, path, body=op.body("S"), check="platform admin")
        assert r.status == op.ok, (path, r)


@pytest.mark.parametrize("op_id", op_params("test_owner_reads_what_others_must_not", {
    WS_READ, RUN_READ}))
def test_owner_reads_what_others_must_not(world, op_id):
    """The control for the 404s: B's researcher reads the same objects (200),
    and the leak check fires on what B's own answers carry, so a gateway that
    answered an outsider like the owner would fail the matrix."""
    o = BY_ID[op_id]
    revealing = 0
    for path in world.paths(op_id, world.ids["B"]):
        r = world.req("bob", o.method, path, check="owner read")
        if op_id == "getRunEvidence" and r.status == 409:
            continue  # not ended yet: nothing sealed
        assert r.status == 200, (path, r)
        try:
            world.assert_no_leak(r, "", path)
        except AssertionError:
            revealing += 1
    assert revealing, f"{op_id}: none of B's answers carries B's data; the leak check is blind"


# A personal access token takes its role from the minter's direct membership
# only (api/authz.c, tg_authz_role_or_reply: a token carries no groups and no
# platform-admin flag), so a token minted (201) by a platform admin or by a
# member through a group finds its own workspace "does not exist" (404).
def test_token_of_a_platform_admin_reaches_its_workspace(world):
    r = world.req("padmin_pat", "GET", f"/v1/workspaces/{A}", check="token role")
    assert r.status == 200 and r.json()["role"] == "admin", r


def test_token_of_a_group_member_reaches_its_workspace(world):
    assert world.req("gina", "GET", f"/v1/workspaces/{A}").json()["role"] == "viewer"
    r = world.req("gina_pat", "GET", f"/v1/workspaces/{A}", check="token role")
    assert r.status == 200 and r.json()["role"] == "viewer", r


def test_owner_and_workspace_admin_may_cancel(world):
    """The other side of the 403s: the owner and A's workspace admin cancel."""
    r = world.req("ada", "POST", f"/v1/runs/{world.runs['a_live']}:cancel")
    assert r.status == 200 and r.json()["state"] == "Cancelled", r
    r = world.req("bob", "DELETE", f"/v1/runs/{world.runs['b_live']}")
    assert r.status == 200 and r.json()["state"] == "Cancelled", r
