"""Start and drive kubesim, the in-repo Kubernetes API simulator.

Typical use (pytest)::

    from kubesim import KubeSim

    with KubeSim() as ks:                     # starts on a free loopback port
        ks.create({"apiVersion": "batch/v1", "kind": "Job", ...})
        job = ks.wait_for(lambda: ks.get_obj("batch/v1", "jobs", "demo", "default"),
                          cond=lambda j: j.get("status", {}).get("succeeded"))
        print(ks.logs("default", pod_name))
        ks.kubectl("get", "jobs")             # real kubectl 1.32 against it

Only the Python standard library (and wait.py beside it) is used. Every KubeSim runs in its own
temporary state directory; stop() (or leaving the with-block) kills the
simulator's process group and every pod process it started, found by the
KUBESIM_INSTANCE marker in their environment.
"""
import atexit
import http.client
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.parse
import uuid

import sanitizer
import wait

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_BUILD = os.environ.get("TAUGATE_BUILD", os.path.join(REPO, "build"))
DEFAULT_SCHEMAS = os.path.join(
    os.environ.get("TAUGATE_SHARED", os.path.join(os.path.dirname(REPO), "shared")),
    "k8s-schemas")


# Every kubesim started and not yet stopped: a test that fails before its
# cleanup leaves none running when its process ends.
_running = set()


@atexit.register
def _stop_all():
    for sim in list(_running):
        sim.stop()


def kubectl_binary():
    """The real kubectl 1.32 client (never the gcloud dispatcher)."""
    for cand in ("/usr/lib/google-cloud-sdk/bin/kubectl.1.32", "/usr/bin/kubectl.1.32"):
        if os.access(cand, os.X_OK):
            return cand
    # Debian's kubernetes-client package installs a plain kubectl.
    path = shutil.which("kubectl")
    if path and "google-cloud-sdk" not in os.path.realpath(path):
        return path
    return None


# apiVersion/kind -> (plural, namespaced) for the resources kubesim serves.
RESOURCES = {
    ("v1", "Namespace"): ("namespaces", False),
    ("v1", "Node"): ("nodes", False),
    ("v1", "Pod"): ("pods", True),
    ("v1", "Service"): ("services", True),
    ("v1", "Event"): ("events", True),
    ("v1", "ConfigMap"): ("configmaps", True),
    ("v1", "Secret"): ("secrets", True),
    ("batch/v1", "Job"): ("jobs", True),
    ("ray.io/v1", "RayJob"): ("rayjobs", True),
    ("ray.io/v1", "RayCluster"): ("rayclusters", True),
    ("kueue.x-k8s.io/v1beta1", "ResourceFlavor"): ("resourceflavors", False),
    ("kueue.x-k8s.io/v1beta1", "ClusterQueue"): ("clusterqueues", False),
    ("kueue.x-k8s.io/v1beta1", "LocalQueue"): ("localqueues", True),
    ("kueue.x-k8s.io/v1beta1", "Workload"): ("workloads", True),
    ("kueue.x-k8s.io/v1beta1", "WorkloadPriorityClass"): ("workloadpriorityclasses", False),
    ("v1", "ServiceAccount"): ("serviceaccounts", True),
    ("apps/v1", "Deployment"): ("deployments", True),
    ("policy/v1", "PodDisruptionBudget"): ("poddisruptionbudgets", True),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): ("clusterroles", False),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): ("clusterrolebindings", False),
    ("rbac.authorization.k8s.io/v1", "Role"): ("roles", True),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): ("rolebindings", True),
    ("apps/v1", "ReplicaSet"): ("replicasets", True),
    ("coordination.k8s.io/v1", "Lease"): ("leases", True),
}
NAMESPACED = {plural: ns for (_, _), (plural, ns) in RESOURCES.items()}


def api_path(api_version, plural, namespace=None, name=None, sub=None):
    """REST path for a resource: api_path("batch/v1", "jobs", "default", "x")."""
    base = "/api/v1" if api_version == "v1" else "/apis/" + api_version
    if namespace and NAMESPACED.get(plural, True):
        base += "/namespaces/" + namespace
    base += "/" + plural
    if name:
        base += "/" + name
    if sub:
        base += "/" + sub
    return base


class ApiError(Exception):
    """A non-2xx reply; .status is the HTTP code, .body the decoded Status."""

    def __init__(self, status, body):
        super().__init__("HTTP %d: %s" % (status, body))
        self.status = status
        self.body = body


class KubeSim:
    """One kubesim process on a free loopback port with a temporary state dir.

    Parameters: build (folder holding the kubesim binary; $TAUGATE_BUILD),
    schemas (k8s-schemas folder), token (require this bearer token), tls
    (serve HTTPS with a generated CA, see ca_path), simulated (pods run as
    timers, not processes), nodes (list of node specs or a path to a JSON
    file), state_file (persist objects across restarts), extra_args (more
    command-line flags, e.g. ["--backoff", "1"]).
    """

    def __init__(self, build=None, schemas=None, token=None, tls=False, simulated=False,
                 nodes=None, state_file=None, extra_args=(), workdir=None, port=0):
        self.build = build or DEFAULT_BUILD
        self.binary = os.path.join(self.build, "kubesim")
        self.schemas = schemas or DEFAULT_SCHEMAS
        self.token = token
        self.tls = tls
        self.simulated = simulated
        self.nodes = nodes
        self.state_file = state_file
        self.fixed_port = port  # non-zero: restarts come back on the same port
        self.extra_args = list(extra_args)
        self._own_dir = workdir is None
        self.dir = workdir or tempfile.mkdtemp(prefix="kubesim-")
        self.state_dir = os.path.join(self.dir, "state")
        self.instance = uuid.uuid4().hex
        self.proc = None
        self.port = None
        self._kubeconfig = None
        self._cachedir = None
        self._exits = []  # exit statuses of processes that ended on their own

    # ---- lifecycle -------------------------------------------------------

    def start(self, timeout=15):
        """Start kubesim and wait until /healthz answers. Returns self."""
        port_file = os.path.join(self.dir, "port")
        if os.path.exists(port_file):
            os.unlink(port_file)
        args = [self.binary, "--port", str(self.fixed_port or 0), "--port-file", port_file,
                "--state-dir", self.state_dir, "--schemas", self.schemas,
                "--backoff", "1", "--grace-cap", "2"]
        if self.token:
            args += ["--token", self.token]
        if self.tls:
            args.append("--tls")
        if self.simulated:
            args.append("--simulated")
        if self.nodes is not None:
            path = self.nodes
            if not isinstance(path, str):
                path = os.path.join(self.dir, "nodes.json")
                with open(path, "w") as f:
                    json.dump(self.nodes, f)
            args += ["--nodes", path]
        if self.state_file:
            args += ["--state-file", self.state_file]
        args += self.extra_args
        env = dict(os.environ, KUBESIM_INSTANCE=self.instance)
        self.log_path = os.path.join(self.dir, "kubesim.log")
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(args, stdout=self._log, stderr=subprocess.STDOUT, env=env,
                                     start_new_session=True)
        _running.add(self)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("kubesim exited early (%s): %s" % (self.proc.returncode,
                                                                      self.read_log()))
            if os.path.exists(port_file):
                with open(port_file) as f:
                    txt = f.read().strip()
                if txt:
                    self.port = int(txt)
                    try:
                        status, _, _ = self.request("GET", "/healthz", raw=True)
                        if status == 200:
                            return self
                    except OSError:
                        pass
            time.sleep(0.02)
        self.stop()
        raise RuntimeError("kubesim did not become ready: " + self.read_log())

    def stop(self):
        """Stop kubesim; kill its process group and any pod process left."""
        if self.proc and self.proc.poll() is not None:  # nobody told it to
            self._exits.append(self.proc.returncode)
        if self.proc and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        self._kill_strays()
        if getattr(self, "_log", None):
            self._log.close()
            self._log = None
        self.proc = None
        _running.discard(self)

    def restart(self, timeout=15):
        """Stop and start again (keeps the state dir; a new port unless one
        was fixed with port=)."""
        self.stop()
        self._kubeconfig = None
        return self.start(timeout)

    def cleanup(self):
        """stop() and remove the temporary directory. A kubesim that ended
        by itself, or a sanitizer report in its log (SAN builds: ASan, UBSan,
        and LeakSanitizer's at exit, from every process the log saw), then
        fails the caller."""
        self.stop()
        found = self.sanitizer_errors()
        if self._exits:
            found.append(f"kubesim ended by itself (exit status {self._exits})")
        detail = "\n".join(found) + "\n" + self.read_log() if found else ""
        if self._own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)
        assert not found, detail

    def _kill_strays(self):
        marker = ("KUBESIM_INSTANCE=" + self.instance).encode()
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or int(pid) == os.getpid():
                continue
            try:
                with open("/proc/%s/environ" % pid, "rb") as f:
                    env = f.read()
            except OSError:
                continue
            if marker in env.split(b"\0"):
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except OSError:
                    pass

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.cleanup()

    def sanitizer_errors(self):
        """Sanitizer error lines from kubesim's log (SAN builds; LeakSanitizer
        reports when kubesim exits); [] if clean."""
        try:
            with open(self.log_path, "rb") as f:
                return sanitizer.reports(f.read().decode(errors="replace"))
        except (OSError, AttributeError):
            return []

    def read_log(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode(errors="replace")[-4000:]
        except OSError:
            return ""

    # ---- addresses and kubeconfig ----------------------------------------

    @property
    def url(self):
        return "%s://127.0.0.1:%d" % ("https" if self.tls else "http", self.port)

    @property
    def ca_path(self):
        """PEM CA of the serving certificate (tls=True only)."""
        return os.path.join(self.state_dir, "ca.crt")

    def write_kubeconfig(self, path=None, namespace="default", token=None):
        """Write a kubeconfig for this instance and return its path.

        With tls=True it embeds the CA; the token (default: the instance's)
        is included, though client-go drops credentials over plain HTTP."""
        path = path or os.path.join(self.dir, "kubeconfig")
        cluster = "    server: %s\n" % self.url
        if self.tls:
            import base64
            with open(self.ca_path, "rb") as f:
                cluster += "    certificate-authority-data: %s\n" % base64.b64encode(
                    f.read()).decode()
        user = "  user: {}\n"
        tok = token or self.token
        if tok:
            user = "  user:\n    token: %s\n" % tok
        with open(path, "w") as f:
            f.write("apiVersion: v1\nkind: Config\nclusters:\n- name: kubesim\n  cluster:\n"
                    + cluster + "users:\n- name: kubesim\n" + user
                    + "contexts:\n- name: kubesim\n  context:\n    cluster: kubesim\n"
                    "    user: kubesim\n    namespace: %s\ncurrent-context: kubesim\n" % namespace)
        return path

    @property
    def kubeconfig(self):
        """Path of a kubeconfig for this instance (written on first use)."""
        if not self._kubeconfig:
            self._kubeconfig = self.write_kubeconfig()
        return self._kubeconfig

    def kubectl(self, *args, input=None, check=True, timeout=60, cache_dir=None):
        """Run real kubectl 1.32 against this instance with a fresh cache dir.

        Returns subprocess.CompletedProcess (text mode); raises
        AssertionError with stderr when check and the exit code is non-zero."""
        binary = kubectl_binary()
        if not binary:
            raise RuntimeError("kubectl 1.32 not found")
        if cache_dir is None:
            if not self._cachedir:
                self._cachedir = tempfile.mkdtemp(prefix="kubecache-", dir=self.dir)
            cache_dir = self._cachedir
        # a call lives for a fraction of a second: without Go's garbage
        # collector and with one thread running Go code it costs a quarter
        # less CPU (measured 238 -> 175 ms per apply or get on two cores)
        env = dict(os.environ, KUBECONFIG=self.kubeconfig, KUBECACHEDIR=cache_dir, GOGC="off",
                   GOMAXPROCS="1")
        cp = subprocess.run([binary] + list(args), input=input, capture_output=True, text=True,
                            env=env, timeout=timeout)
        if check and cp.returncode != 0:
            raise AssertionError("kubectl %s failed (%d): %s%s" % (
                " ".join(args), cp.returncode, cp.stdout, cp.stderr))
        return cp

    def kubectl_popen(self, *args):
        """Start a long-running kubectl (e.g. get -w); caller terminates it."""
        if not self._cachedir:
            self._cachedir = tempfile.mkdtemp(prefix="kubecache-", dir=self.dir)
        env = dict(os.environ, KUBECONFIG=self.kubeconfig, KUBECACHEDIR=self._cachedir)
        return subprocess.Popen([kubectl_binary()] + list(args), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env)

    # ---- HTTP -------------------------------------------------------------

    def _conn(self, timeout):
        if self.tls:
            ctx = ssl.create_default_context(cafile=self.ca_path)
            return http.client.HTTPSConnection("127.0.0.1", self.port, timeout=timeout,
                                               context=ctx)
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, method, path, body=None, query=None, headers=None,
                content_type="application/json", raw=False, timeout=30):
        """Send one request; returns (status, headers, body).

        body may be bytes/str (sent as is) or JSON-able. The reply body is
        decoded JSON when it parses (unless raw), else text."""
        if query:
            path += ("&" if "?" in path else "?") + urllib.parse.urlencode(query)
        hdrs = {"Accept": "application/json"}
        if self.token:
            hdrs["Authorization"] = "Bearer " + self.token
        data = None
        if body is not None:
            data = body if isinstance(body, (bytes, str)) else json.dumps(body)
            if isinstance(data, str):
                data = data.encode()
            hdrs["Content-Type"] = content_type
        hdrs.update(headers or {})
        conn = self._conn(timeout)
        try:
            conn.request(method, path, body=data, headers=hdrs)
            resp = conn.getresponse()
            payload = resp.read()
            rh = {k.lower(): v for k, v in resp.getheaders()}
            status = resp.status
        finally:
            conn.close()
        text = payload.decode(errors="replace")
        if raw:
            return status, rh, text
        try:
            return status, rh, json.loads(text)
        except ValueError:
            return status, rh, text

    def _ok(self, method, path, body=None, **kw):
        status, _, out = self.request(method, path, body, **kw)
        if status >= 300:
            raise ApiError(status, out)
        return out

    def get(self, path, **query):
        """GET a path; raises ApiError on non-2xx."""
        return self._ok("GET", path, query=query or None)

    def post(self, path, body, **query):
        return self._ok("POST", path, body, query=query or None)

    def put(self, path, body, **query):
        return self._ok("PUT", path, body, query=query or None)

    def patch(self, path, body, patch_type="merge", **query):
        """PATCH with patch_type merge | json | strategic | apply."""
        ct = {"merge": "application/merge-patch+json", "json": "application/json-patch+json",
              "strategic": "application/strategic-merge-patch+json",
              "apply": "application/apply-patch+yaml"}[patch_type]
        return self._ok("PATCH", path, body, content_type=ct, query=query or None)

    def delete(self, path, propagation="Background", **query):
        body = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": propagation}
        return self._ok("DELETE", path, body, query=query or None)

    # object-level helpers

    def path_of(self, obj, name=True):
        plural, _ = RESOURCES[(obj["apiVersion"], obj["kind"])]
        ns = obj.get("metadata", {}).get("namespace", "default")
        return api_path(obj["apiVersion"], plural, ns,
                        obj["metadata"].get("name") if name else None)

    def create(self, obj, namespace=None):
        """POST an object built as a dict; returns the stored object."""
        if namespace:
            obj.setdefault("metadata", {})["namespace"] = namespace
        return self.post(self.path_of(obj, name=False), obj)

    def apply(self, obj, manager="kubesim-harness"):
        """Server-side apply (creates or merges)."""
        return self.patch(self.path_of(obj), obj, patch_type="apply", fieldManager=manager,
                          force="true")

    def get_obj(self, api_version, plural, name, namespace=None):
        """The object, or None when it does not exist."""
        status, _, out = self.request("GET", api_path(api_version, plural, namespace, name))
        if status == 404:
            return None
        if status >= 300:
            raise ApiError(status, out)
        return out

    def list(self, api_version, plural, namespace=None, **query):
        """Items of a list (labelSelector=..., fieldSelector=... as keywords)."""
        return self.get(api_path(api_version, plural, namespace), **query)["items"]

    def ensure_namespace(self, name):
        if not self.get_obj("v1", "namespaces", name):
            self.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})

    def logs(self, namespace, pod, **query):
        """Pod log text (container=, tailLines=, timestamps='true', ...)."""
        status, _, out = self.request("GET", api_path("v1", "pods", namespace, pod, "log"),
                                      query=query or None, raw=True)
        if status >= 300:
            raise ApiError(status, out)
        return out

    def watch(self, path, timeout=30, **query):
        """Generator of watch events (dicts) until the stream ends or timeout."""
        query = dict(query, watch="true")
        path += ("&" if "?" in path else "?") + urllib.parse.urlencode(query)
        conn = self._conn(timeout)
        hdrs = {"Accept": "application/json"}
        if self.token:
            hdrs["Authorization"] = "Bearer " + self.token
        conn.request("GET", path, headers=hdrs)
        resp = conn.getresponse()
        try:
            if resp.status != 200:
                raise ApiError(resp.status, resp.read().decode(errors="replace"))
            while True:
                try:
                    line = resp.readline()
                except (socket.timeout, TimeoutError):
                    return
                if not line:
                    return
                line = line.strip()
                if line:
                    yield json.loads(line)
        finally:
            conn.close()

    # ---- control, faults and waiting --------------------------------------

    def control(self, path, body=None, method="POST"):
        """Call a /kubesim/ control endpoint (faults, stats); returns JSON."""
        return self._ok(method, "/kubesim/" + path.lstrip("/"), body if body is not None else {})

    def stats(self):
        return self.get("/kubesim/stats")

    def wait_for(self, fn, cond=bool, timeout=30, interval=0.1, what="condition"):
        """Call fn() until cond(result) holds; returns the result (wait.wait_for)."""
        return wait.wait_for(fn, timeout, what, cond=cond, interval=interval)
