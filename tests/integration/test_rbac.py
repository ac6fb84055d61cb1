"""The gateway's RBAC (deploy/base/rbac.yaml) is what the code uses: no less,
no more.

kubesim stores RBAC objects but does not enforce them, so the test
evaluates the rules itself, as the API server's RBAC authorizer would:
kubectl applies the kustomize output's RBAC to kubesim and the workspace
RoleBinding exactly as deploy/README.md says; a real gateway then runs
against kubesim through a recording proxy while it reconciles a catalogue,
runs, cancels and seals runs, follows logs, shows queues and cordons a
faulty GPU node; every request it made is turned into the API server's
request attributes (verb, group, resource, subresource, namespace) and
checked against the applied roles and bindings. Then the other way round:
each right granted must be needed by a request of the run, or by a code
path the run does not reach, listed in CODE_ONLY with the source line that
makes the call (checked to still be there)."""
import base64
import http.client
import json
import os
import re
import subprocess
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import yaml

from gateway import Gateway
from kubesim import KubeSim, kubectl_binary
from paths import BUILD, REPO, SHARED

SA = ("taugate-system", "taugate")
README = os.path.join(REPO, "deploy", "README.md")

# Rights used by code paths this test does not drive, with the file and a
# pattern of the call that needs them: (scope, group, resource, verb) where
# scope is "cluster" or "workspace".
CODE_ONLY = [
    ("workspace", "", "pods/eviction", "create", "gateway/engine/node_policy.c",
     r'\.sub = "eviction"'),
    ("workspace", "", "pods", "delete", "gateway/engine/node_policy.c",
     r"tg_kube_delete\(kube, &pref"),
    # a create whose answer was lost finds the object: is it the run's own?
    ("workspace", "batch", "jobs", "get", "gateway/engine/submitter.c",
     r"ALREADY_EXISTS && submit_is_ours"),
    ("workspace", "ray.io", "rayjobs", "get", "gateway/engine/submitter.c",
     r"ALREADY_EXISTS && submit_is_ours"),
    # multi-node runs' rendezvous Service, and RayJobs: the submitter's one
    # create path, for another kind than the Job the test runs
    ("workspace", "", "services", "create", "gateway/engine/submitter.c",
     r"return &gvr_services;"),
    ("workspace", "ray.io", "rayjobs", "create", "gateway/engine/submitter.c",
     r"return &tg_kube_gvr_rayjobs;"),
    ("workspace", "ray.io", "rayjobs", "delete", "gateway/engine/submitter.c",
     r'!strcmp\(kind, "RayJob"\) \? &tg_kube_gvr_rayjobs'),
]

# ---- the recording proxy ------------------------------------------------------------------


class Recorder:
    """An HTTP proxy in front of kubesim that keeps (method, path, query) of
    every request and streams answers through (watches, log follows)."""

    HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "proxy-connection"}

    def __init__(self, upstream):
        u = urllib.parse.urlsplit(upstream)
        self.requests = []
        lock = threading.Lock()
        rec = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def relay(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else None
                with lock:
                    rec.requests.append((self.command, self.path))
                up = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in rec.HOP}
                try:
                    up.request(self.command, self.path, body=body, headers=headers)
                    resp = up.getresponse()
                    self.send_response(resp.status, resp.reason)
                    for k, v in resp.getheaders():
                        if k.lower() not in rec.HOP:
                            self.send_header(k, v)
                    self.send_header("Connection", "close")  # the body ends with the connection
                    self.end_headers()
                    while True:
                        chunk = resp.read1(65536)
                        if not chunk:
                            break
                        self.wfile.write(chunk)
                        self.wfile.flush()
                except (OSError, http.client.HTTPException):
                    pass
                finally:
                    up.close()
                    self.close_connection = True

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = relay

            def log_message(self, *a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.1,), daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


# ---- request attributes and the authorizer --------------------------------------------------


def attributes(method, target):
    """The RBAC request attributes of an API request, as the API server's
    RequestInfoFactory derives them: (verb, group, resource, namespace, name),
    resource with "/subresource"; None for a non-resource URL."""
    u = urllib.parse.urlsplit(target)
    parts = [p for p in u.path.split("/") if p]
    query = urllib.parse.parse_qs(u.query)
    if parts[:1] == ["api"] and len(parts) >= 2:
        group, rest = "", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 3:
        group, rest = parts[1], parts[3:]
    else:
        return None
    if not rest:
        return None  # discovery of a group version
    ns = None
    if rest[0] == "namespaces" and len(rest) >= 3:
        ns, rest = rest[1], rest[2:]
    resource, name, sub = rest[0], rest[1] if len(rest) > 1 else None, rest[2:3]
    if rest[0] == "namespaces" and len(rest) == 2:
        resource, name = "namespaces", rest[1]
    if sub:
        resource += "/" + sub[0]
    watch = query.get("watch", ["false"])[0] in ("true", "1")
    verb = {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(method)
    if method == "GET":
        verb = "watch" if watch else ("get" if name else "list")
    elif method == "DELETE":
        verb = "delete" if name else "deletecollection"
    return verb, group, resource, ns, name


def rule_allows(rule, verb, group, resource, name):
    return (("*" in rule.get("verbs", []) or verb in rule.get("verbs", []))
            and ("*" in rule.get("apiGroups", []) or group in rule.get("apiGroups", []))
            and ("*" in rule.get("resources", []) or resource in rule.get("resources", []))
            and (not rule.get("resourceNames") or name in rule["resourceNames"]))


class Authorizer:
    """RBAC for the gateway's ServiceAccount from the applied objects."""

    def __init__(self, objs):
        roles = {("ClusterRole", None, o["metadata"]["name"]): o.get("rules") or []
                 for o in objs if o["kind"] == "ClusterRole"}
        roles.update({("Role", o["metadata"]["namespace"], o["metadata"]["name"]):
                      o.get("rules") or [] for o in objs if o["kind"] == "Role"})
        self.cluster_rules, self.ns_rules = [], {}
        for b in objs:
            if b["kind"] not in ("ClusterRoleBinding", "RoleBinding"):
                continue
            if not any(s.get("kind") == "ServiceAccount" and s.get("name") == SA[1]
                       and s.get("namespace", b["metadata"].get("namespace")) == SA[0]
                       for s in b.get("subjects") or []):
                continue
            ref = b["roleRef"]
            ns = b["metadata"].get("namespace") if b["kind"] == "RoleBinding" else None
            rules = roles.get((ref["kind"], ns if ref["kind"] == "Role" else None, ref["name"]))
            assert rules is not None, f"{b['kind']} {b['metadata']['name']} names a missing role"
            if b["kind"] == "ClusterRoleBinding":
                self.cluster_rules += rules
            else:
                self.ns_rules.setdefault(ns, []).extend(rules)

    def allowed(self, verb, group, resource, ns, name):
        rules = self.cluster_rules + (self.ns_rules.get(ns, []) if ns else [])
        return any(rule_allows(r, verb, group, resource, name) for r in rules)

    def grants(self):
        """{(scope, group, resource, verb)} granted; scope "cluster" or a namespace."""
        out = set()
        for scope, rules in [("cluster", self.cluster_rules)] + list(self.ns_rules.items()):
            for r in rules:
                for g in r.get("apiGroups", []):
                    for res in r.get("resources", []):
                        for v in r.get("verbs", []):
                            out.add((scope, g, res, v))
        return out


# ---- the deployment's RBAC in kubesim ----------------------------------------------------------


def kubectl():
    k = kubectl_binary()
    if not k:
        pytest.skip("kubectl 1.32 is not installed")
    return k


def documented_workspace_binding():
    """The command deploy/README.md gives to grant the gateway a workspace's
    namespace (between its rbac-workspace markers), with WS as the namespace."""
    with open(README) as f:
        text = f.read()
    m = re.search(r"<!-- rbac-workspace -->\s*```sh\n(.*?)```", text, re.S)
    assert m, "deploy/README.md lost its <!-- rbac-workspace --> command"
    return m.group(1).strip()


def apply_rbac(ks):
    out = subprocess.run([kubectl(), "kustomize", os.path.join(REPO, "deploy")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    docs = [o for o in yaml.safe_load_all(out.stdout) if o]
    kinds = ("Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role",
             "RoleBinding")
    rbac = [o for o in docs if o["kind"] in kinds]
    assert {o["kind"] for o in rbac} >= {"ClusterRole", "ClusterRoleBinding", "ServiceAccount"}
    ks.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(rbac))


def bind_workspace(ks, ws):
    cmd = documented_workspace_binding().replace("WS", ws)
    env = dict(os.environ, KUBECONFIG=ks.kubeconfig, PATH=os.path.dirname(kubectl()) + ":" +
               os.environ["PATH"])
    # the README says `kubectl`; run this test's kubectl 1.32 under that name
    cp = subprocess.run(["bash", "-euo", "pipefail", "-c",
                         cmd.replace("kubectl ", kubectl() + " ")],
                        env=env, capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0, cp.stdout + cp.stderr


def applied_rbac(ks):
    out = ks.kubectl("get", "clusterroles,clusterrolebindings,roles,rolebindings", "-A",
                     "-o", "json").stdout
    return json.loads(out)["items"]


# ---- the scenario -------------------------------------------------------------------------


def kget(ks, path):
    """The object at path in kubesim, or None."""
    status, _, body = ks.request("GET", path)
    return body if status == 200 else None


def wait(what, fn, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(0.2)
    raise AssertionError(f"no {what} within {timeout}s")


def spec(name):
    with open(os.path.join(SHARED, "conformance", "taugrid", "01-kind-smoke_tau.yaml")) as f:
        return f.read().replace("name: tau-kind-smoke", f"name: {name}")


def b64(text):
    return base64.b64encode(text.encode()).decode()


CATALOG = [
    ("/v1/admin/flavors", {"name": "default-flavor"}),
    ("/v1/admin/cluster-queues", {"name": "kind-cpu-cq", "resource_groups": [{
        "covered_resources": ["cpu", "memory"], "flavors": [
            {"name": "default-flavor", "resources": [
                {"name": "cpu", "nominal_quota": "4"},
                {"name": "memory", "nominal_quota": "12Gi"}]}]}]}),
    ("/v1/admin/workspaces", {"name": "ray", "namespace": "ray", "default_queue": "kind-cpu"}),
    ("/v1/admin/workspaces/ray/queues", {"name": "kind-cpu", "cluster_queue": "kind-cpu-cq"}),
    ("/v1/admin/profiles", {"name": "kind-cpu-job", "engine": "job",
                            "allowed_workspaces": ["ray"]}),
    ("/v1/admin/priority-classes", {"name": "taugrid-default", "value": 1000}),
]

XID = {"type": "XidErrors", "status": "True", "reason": "XidError79",
       "message": "GPU has fallen off the bus"}


def drive(gw, ks):
    """What a day of operation asks of the cluster."""
    for path, body in CATALOG:
        r = gw.req("POST", path, body=body)
        assert r.status == 201, (path, r)
    wait("namespace ray", lambda: kget(ks, "/api/v1/namespaces/ray"))
    bind_workspace(ks, "ray")
    lq_path = "/apis/kueue.x-k8s.io/v1beta1/namespaces/ray/localqueues/kind-cpu"
    wait("LocalQueue kind-cpu", lambda: kget(ks, lq_path))
    # a hand edit of a managed object is corrected (an update)
    ks.patch(lq_path, {"spec": {"stopPolicy": "Hold"}})
    wait("the correction", lambda: kget(ks, lq_path)["spec"].get("stopPolicy", "None") == "None")
    # a run to the end: submit, watch, logs, sealing
    r = gw.req("POST", "/v1/workspaces/ray/runs",
               body={"spec": spec("rbac-ok"),
                     "files": {"train.sh": b64("#!/usr/bin/env bash\necho rbac\n")}})
    assert r.status == 201, r
    ok = r.json()["id"]
    # a run cancelled while it runs: its objects are deleted
    r = gw.req("POST", "/v1/workspaces/ray/runs",
               body={"spec": spec("rbac-long"),
                     "files": {"train.sh": b64("#!/usr/bin/env bash\nsleep 120\n")}})
    assert r.status == 201, r
    long = r.json()["id"]
    wait("the long run running", lambda: gw.req("GET", f"/v1/runs/{long}").json()["state"]
         == "Running")
    # views that ask the cluster
    assert gw.req("GET", "/v1/workspaces/ray/queue").status == 200
    assert gw.req("GET", "/v1/workspaces/ray/quota").status == 200
    assert gw.req("POST", f"/v1/runs/{long}:cancel").status == 200
    wait("the cancel", lambda: not [
        j for j in kget(ks, "/apis/batch/v1/namespaces/ray/jobs")["items"]
        if j["metadata"].get("labels", {}).get("taugate.io/run-id") == long])
    wait("the first run's evidence", lambda: (lambda r: r.status == 200 and r.json().get(
        "sealed"))(gw.req("GET", f"/v1/runs/{ok}/evidence")), timeout=90)
    assert b"rbac" in gw.req("GET", f"/v1/runs/{ok}/logs").body
    # catalogue changes reach the cluster: create, update, delete of each kind
    kv = "/apis/kueue.x-k8s.io/v1beta1"
    for path, body, obj in [
        ("/v1/admin/flavors", {"name": "rbac-flavor", "node_labels": {"pool": "a"}},
         f"{kv}/resourceflavors/rbac-flavor"),
        ("/v1/admin/cluster-queues", {"name": "rbac-cq"}, f"{kv}/clusterqueues/rbac-cq"),
        ("/v1/admin/priority-classes", {"name": "rbac-pc", "value": 5},
         f"{kv}/workloadpriorityclasses/rbac-pc"),
        ("/v1/admin/workspaces/ray/queues", {"name": "rbac-lq", "cluster_queue": "kind-cpu-cq"},
         f"{kv}/namespaces/ray/localqueues/rbac-lq"),
    ]:
        assert gw.req("POST", path, body=body).status == 201, path
        wait(obj, lambda: kget(ks, obj))
    changes = [
        ("/v1/admin/flavors/rbac-flavor", {"node_labels": {"pool": "b"}},
         f"{kv}/resourceflavors/rbac-flavor", lambda o: o["spec"]["nodeLabels"] == {"pool": "b"}),
        ("/v1/admin/priority-classes/rbac-pc", {"value": 6},
         f"{kv}/workloadpriorityclasses/rbac-pc", lambda o: o["value"] == 6),
        ("/v1/admin/cluster-queues/rbac-cq", {"cohort": "rbac"},
         f"{kv}/clusterqueues/rbac-cq", lambda o: o["spec"].get("cohort") == "rbac"),
        ("/v1/admin/workspaces/ray/queues/rbac-lq", {"cluster_queue": "rbac-cq"},
         f"{kv}/namespaces/ray/localqueues/rbac-lq",
         lambda o: o["spec"]["clusterQueue"] == "rbac-cq"),
    ]
    for path, body, obj, done in changes:
        r = gw.req("PATCH", path, body=body)
        assert r.status == 200, (path, r)
        wait(f"{obj} changed", lambda: (lambda x: x and done(x))(kget(ks, obj)))
    for path, obj in [("/v1/admin/workspaces/ray/queues/rbac-lq",
                       f"{kv}/namespaces/ray/localqueues/rbac-lq"),
                      ("/v1/admin/cluster-queues/rbac-cq", f"{kv}/clusterqueues/rbac-cq"),
                      ("/v1/admin/priority-classes/rbac-pc",
                       f"{kv}/workloadpriorityclasses/rbac-pc"),
                      ("/v1/admin/flavors/rbac-flavor", f"{kv}/resourceflavors/rbac-flavor")]:
        assert gw.req("DELETE", path).status == 204, path
        wait(f"{obj} deleted", lambda: ks.request("GET", obj)[0] == 404)
    # a GPU fault: the nodes loop cordons the node, and uncordons it when healthy
    nodes = kget(ks, "/api/v1/nodes")["items"]
    gpu = next(n["metadata"]["name"] for n in nodes
               if "nvidia.com/gpu" in n["status"].get("capacity", {}))
    node_path = f"/api/v1/nodes/{gpu}"
    ks.control(f"nodes/{gpu}/condition", XID)
    wait("the cordon", lambda: kget(ks, node_path)["spec"].get("unschedulable"))
    ks.control(f"nodes/{gpu}/condition", dict(XID, status="False", reason="NoXidErrors"))
    wait("the uncordon", lambda: not kget(ks, node_path)["spec"].get("unschedulable"))


@pytest.fixture(scope="module")
def recorded(db_url):
    kubectl()
    ks = KubeSim().start()
    rec = Recorder(ks.url)
    g = None
    try:
        apply_rbac(ks)
        g = Gateway(BUILD, db_url, extra_env={"TAUGATE_KUBE_API_URL": rec.url,
                                              "TAUGATE_RECONCILE_INTERVAL_S": "1"}).start()
        drive(g, ks)
        status = g.stop()
        assert status == 0, g.logs()[-3000:]
        yield rec.requests, Authorizer(applied_rbac(ks))
    finally:
        if g:
            g.stop()
            g.close()
        rec.close()
        ks.stop()


def needs(requests, workspaces):
    """What the requests need: {(scope, group, resource, verb)}, scope
    "cluster" for cluster-scoped or all-namespace requests and for namespaces
    that are no workspace's, else "workspace". A namespaced request a
    cluster-wide right already covers needs nothing more."""
    cluster, ns_level = set(), set()
    for method, target in requests:
        a = attributes(method, target)
        if not a:
            continue
        verb, group, resource, ns, _ = a
        (ns_level if ns in workspaces else cluster).add((group, resource, verb))
    need = {("cluster",) + x for x in cluster}
    need |= {("workspace",) + x for x in ns_level - cluster}
    return need


def test_every_request_the_gateway_makes_is_allowed(recorded):
    requests, authz = recorded
    resource_requests = [(m, t) for m, t in requests if attributes(m, t)]
    assert len(resource_requests) > 50, requests
    denied = sorted({f"{a[0]} {a[1] or 'core'}/{a[2]} in {a[3] or '(cluster)'}"
                     for a in (attributes(m, t) for m, t in resource_requests)
                     if not authz.allowed(*a)})
    assert not denied, "the roles do not allow:\n" + "\n".join(denied)
    # non-resource URLs (discovery, /version) are open to every authenticated
    # subject through the system:discovery default role
    for m, t in requests:
        if not attributes(m, t):
            assert m == "GET" and re.match(r"^/(api|apis|version|openapi)\b", t), t


def test_nothing_more_is_granted(recorded):
    requests, authz = recorded
    for scope, _, _, _, path, pattern in CODE_ONLY:
        with open(os.path.join(REPO, path)) as f:
            assert re.search(pattern, f.read()), f"CODE_ONLY is stale: {path}: {pattern}"
    need = needs(requests, set(authz.ns_rules)) | {x[:4] for x in CODE_ONLY}
    granted = {("cluster" if s == "cluster" else "workspace",) + tuple(rest)
               for s, *rest in authz.grants()}
    unused = sorted(granted - need)
    assert not unused, f"granted but never needed: {unused}\nneeded: {sorted(need)}"
    # a workspace right is never granted cluster-wide
    for scope, group, resource, verb in need:
        if scope == "workspace":
            assert ("cluster", group, resource, verb) not in granted, (group, resource, verb)


def test_the_cluster_wide_role_writes_nothing_namespaced(recorded):
    _, authz = recorded
    for scope, group, resource, verb in authz.grants():
        if scope == "cluster" and verb in ("create", "update", "patch", "delete"):
            assert resource in ("nodes", "namespaces", "resourceflavors", "clusterqueues",
                                "workloadpriorityclasses"), (group, resource, verb)
        assert resource not in ("secrets", "configmaps", "roles", "rolebindings",
                                "clusterroles", "clusterrolebindings", "*")
        assert verb not in ("*", "escalate", "bind", "impersonate")
