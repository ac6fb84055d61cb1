"""Driving build/tau in tests: the Tau runner (a private config home, the
gateway and token in the environment), a stand-in gateway (Stub), and the
project and run helpers the CLI tests share."""
import json
import os
import re
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import tokens
from paths import BUILD, SHARED

TAU = os.path.join(BUILD, "tau")
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
SMOKE = os.path.join(SHARED, "conformance", "taugrid", "01-kind-smoke_tau.yaml")
ADMIN = tokens.admin_token()


class Tau:
    """Runs build/tau with a given gateway, token and config home."""

    def __init__(self, url, home):
        self.url = url
        self.home = str(home)

    def env(self, token=ADMIN, gateway=True, extra=None):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("TAU_") and k != "NO_COLOR"}
        env["XDG_CONFIG_HOME"] = self.home
        env["TAU_RETRIES"] = "0"
        if gateway:
            env["TAU_GATEWAY"] = self.url
        if token:
            env["TAU_TOKEN"] = token
        env.update(extra or {})
        return env

    def __call__(self, *args, token=ADMIN, gateway=True, env=None, stdin=None, cwd=None,
                 timeout=60):
        return subprocess.run([TAU, *args], env=self.env(token, gateway, env), input=stdin,
                              cwd=cwd, capture_output=True, text=True, timeout=timeout)


def load_yaml(text):
    """Parse YAML output (python3-yaml; the test skips without it)."""
    return pytest.importorskip("yaml").safe_load(text)


def route_missing(gw, method, path, body=None):
    """True while the gateway has no such route (404 'no resource' or 405)."""
    r = gw.req(method, path, body=body)
    if r.status == 405:
        return True
    if r.status == 404:
        try:
            return r.json().get("detail", "").startswith("no resource at")
        except ValueError:
            return True
    return False


def skip_unless_route(gw, method, path, body=None):
    if route_missing(gw, method, path, body):
        pytest.skip(f"endpoint not built yet: {method} {path}")


def project(tmp_path, script="#!/usr/bin/env bash\necho hello from taugate\n", name=None,
            spec=None):
    """A folder with the kind-smoke tau.yaml and its train.sh."""
    d = tmp_path / (name or "proj")
    d.mkdir()
    with open(SMOKE) as f:
        text = spec or f.read()
    if name:
        text = text.replace("name: tau-kind-smoke", f"name: {name}")
    (d / "tau.yaml").write_text(text)
    (d / "train.sh").write_text(script)
    return d


def submit(tau, d, *extra):
    r = tau("run", "-w", "ray", *extra, cwd=str(d))
    assert r.returncode == 0, r.stderr
    run_id = r.stdout.strip()
    assert UUID.match(run_id), r.stdout
    return run_id


def wait_state(gw, run_id, states, timeout=40):
    deadline = time.time() + timeout
    while time.time() < deadline:
        run = gw.req("GET", f"/v1/runs/{run_id}").json()
        if run["state"] in states:
            return run
        time.sleep(0.2)
    raise AssertionError(f"run {run_id} stayed {run['state']}")


def canonical(record):
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


class Stub:
    """A stand-in gateway on a free port. `answers` maps a path to a value
    (JSON, or bytes served as text/plain) or to a list of (status, value)
    answered in turn (the last one repeats). Requests are kept in .requests
    as (method, path, headers, body)."""

    def __init__(self, answers):
        answers_ = {k: list(v) if isinstance(v, list) else [(200, v)] for k, v in answers.items()}
        requests = self.requests = []

        class H(BaseHTTPRequestHandler):
            def answer(self):
                n = int(self.headers.get("Content-Length") or 0)
                requests.append((self.command, self.path, dict(self.headers),
                                 self.rfile.read(n) if n else b""))
                seq = answers_.get(self.path.split("?")[0])
                if not seq:
                    status, body = 404, {"title": "Not Found", "status": 404,
                                         "detail": f"no resource at {self.path}"}
                else:
                    status, body = seq.pop(0) if len(seq) > 1 else seq[0]
                self.send_response(status)
                if isinstance(body, bytes):
                    payload, ctype = body, "text/plain"
                else:
                    payload = json.dumps(body).encode()
                    ctype = "application/json" if status < 400 else "application/problem+json"
                self.send_header("Content-Type", ctype)
                if status in (429, 503):
                    self.send_header("Retry-After", "0")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_DELETE = do_PATCH = answer

            def log_message(self, *a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,),
                                       daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
