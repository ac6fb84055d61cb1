"""The foundation: HTTP behaviour, limits, errors, logs, metrics, shutdown."""
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
import uuid

import pytest

from paths import BUILD, REPO
from gateway import Gateway
from wait import wait_for

PROBLEM_KEYS = {"type", "title", "status", "detail", "instance"}


def assert_problem(r, status):
    assert r.status == status, r
    assert r.header("Content-Type") == "application/problem+json"
    body = r.json()
    assert PROBLEM_KEYS <= set(body), body
    assert body["status"] == status
    assert body["type"].startswith("https://taugate.dev/problems/")
    return body


def test_healthz_and_request_id(gateway):
    r = gateway.req("GET", "/healthz", headers={"X-Request-Id": "req-42"})
    assert r.status == 200 and r.json() == {"status": "ok"}
    assert r.header("X-Request-Id") == "req-42"
    generated = gateway.req("GET", "/healthz").header("X-Request-Id")
    assert str(uuid.UUID(generated)) == generated
    # an id with characters that could break a log line is replaced
    r = gateway.req("GET", "/healthz", headers={"X-Request-Id": 'x"y'})
    assert r.header("X-Request-Id") != 'x"y'


def test_readyz_with_database(gateway):
    r = gateway.req("GET", "/readyz")
    assert r.status == 200 and r.json()["database"] == "ok"


def test_version(gateway):
    r = gateway.req("GET", "/v1/version")
    assert r.status == 200
    assert r.json()["name"] == "taugate" and r.json()["version"]


def test_unknown_route_is_404_problem(gateway):
    body = assert_problem(gateway.req("GET", "/v1/nothing-here"), 404)
    assert "/v1/nothing-here" in body["detail"]
    assert body["instance"]


def test_wrong_method_is_405_with_allow(gateway):
    r = gateway.req("DELETE", "/healthz")
    assert_problem(r, 405)
    assert r.header("Allow") == "GET, HEAD"


def test_head_is_served_for_get_routes(gateway):
    r = gateway.req("HEAD", "/healthz")
    assert r.status == 200 and r.body == b""


def raw_exchange(port, head, body_chunks=()):
    """Send a request by hand, tolerating the server closing early, and
    return what came back."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(head)
        try:
            for chunk in body_chunks:
                s.sendall(chunk)
        except OSError:
            pass  # the server answered and closed before reading it all
        data = b""
        while True:
            try:
                part = s.recv(65536)
            except OSError:
                break
            if not part:
                break
            data += part
        return data


def test_body_over_limit_is_413(gateway):
    size = 1024 * 1024 + 10
    # with Expect: 100-continue the client never has to send the body
    data = raw_exchange(gateway.port,
                        b"POST /v1/admin/workspaces HTTP/1.1\r\nHost: x\r\n"
                        b"Content-Type: application/json\r\nExpect: 100-continue\r\n"
                        b"Content-Length: %d\r\n\r\n" % size)
    assert data.startswith(b"HTTP/1.1 413"), data[:200]
    assert b"application/problem+json" in data and b"1048576" in data
    # without it, the answer still comes even though the body was cut off
    data = raw_exchange(gateway.port,
                        b"POST /v1/admin/workspaces HTTP/1.1\r\nHost: x\r\n"
                        b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % size,
                        [b" " * 65536] * 17)
    assert data.startswith(b"HTTP/1.1 413"), data[:200]


def test_chunked_body_over_limit_is_413(gateway):
    chunk = b"a" * 65536
    data = raw_exchange(gateway.port,
                        b"POST /v1/admin/workspaces HTTP/1.1\r\nHost: x\r\n"
                        b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
                        [b"%x\r\n%s\r\n" % (len(chunk), chunk)] * 20 + [b"0\r\n\r\n"])
    assert data.startswith(b"HTTP/1.1 413"), data[:200]


def test_malformed_json_is_400_naming_position(gateway):
    r = gateway.req("POST", "/v1/admin/workspaces", body=b'{"name": "a",\n  "namespace": }',
                    headers={"Content-Type": "application/json"})
    body = assert_problem(r, 400)
    assert "line 2" in body["detail"]
    assert body["errors"][0]["line"] == 2 and body["errors"][0]["column"] > 0


def test_access_log_is_json_per_request(gateway):
    gateway.req("GET", "/healthz", headers={"X-Request-Id": "log-probe-1",
                                             "Authorization": "Bearer secret-token-value"})
    # the access line is written once the response is out
    mine = wait_for(lambda: [json.loads(l) for l in gateway.logs().splitlines()
                             if l.startswith("{") and '"log-probe-1"' in l], 10,
                    "the request's access log line")
    mine = [l for l in mine if l.get("request_id") == "log-probe-1"]
    assert len(mine) == 1
    entry = mine[0]
    assert entry["component"] == "access" and entry["method"] == "GET"
    assert entry["route"] == "/healthz" and entry["status"] == 200
    assert entry["duration_us"] >= 0 and entry["bytes"] == 15
    assert "secret-token-value" not in gateway.logs()


def test_metrics_pass_promtool(gateway, tmp_path):
    gateway.req("GET", "/healthz")
    gateway.req("GET", "/readyz")
    r = gateway.req("GET", "/metrics")
    assert r.status == 200
    assert r.header("Content-Type").startswith("text/plain; version=0.0.4")
    text = r.body.decode()
    assert 'taugate_http_requests_total{route="/healthz",method="GET",code="200"}' in text
    assert "taugate_http_request_duration_seconds_bucket" in text
    assert "taugate_db_pool_in_use" in text and "taugate_db_pool_waits_total" in text
    assert "taugate_build_info{version=" in text
    out = subprocess.run(["promtool", "check", "metrics"], input=r.body,
                         capture_output=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_slow_client_cannot_hold_the_server(gateway, db_url):
    # `gateway` (the module's) has migrated the database this one only uses
    gw = Gateway(BUILD, db_url, extra_env={"TAUGATE_CONNECTION_TIMEOUT_S": "1",
                                           "TAUGATE_MIGRATE_ON_START": "false"}).start()
    try:
        slow = [socket.create_connection(("127.0.0.1", gw.port)) for _ in range(8)]
        for s in slow:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # never finishes headers
        # the server keeps answering others meanwhile
        assert gw.req("GET", "/healthz", timeout=5).status == 200
        for s in slow:
            s.settimeout(15)  # the awaited fact: the server's idle timeout (1 s) closes it
            assert s.recv(1024) == b""
            s.close()
    finally:
        assert gw.stop() == 0
        gw.close()


def test_invalid_config_exits_2_naming_the_key():
    out = subprocess.run([os.path.join(BUILD, "taugate"), "serve", "--threads=0"],
                         capture_output=True, text=True)
    assert out.returncode == 2
    assert "threads" in out.stderr and "[1, 256]" in out.stderr
    env = dict(os.environ, TAUGATE_LOG_LEVEL="loud")
    out = subprocess.run([os.path.join(BUILD, "taugate"), "serve"], capture_output=True,
                         text=True, env=env)
    assert out.returncode == 2
    assert "log_level" in out.stderr and "TAUGATE_LOG_LEVEL" in out.stderr
    out = subprocess.run([os.path.join(BUILD, "taugate"), "serve", "--no-such-key=1"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "no-such-key" in out.stderr


def test_help_lists_every_key():
    out = subprocess.run([os.path.join(BUILD, "taugate"), "--help"], capture_output=True,
                         text=True)
    assert out.returncode == 0
    for key in ("listen_address", "threads", "database_url", "db_pool_size", "max_body_bytes",
                "connection_timeout_s", "log_level", "TAUGATE_DATABASE_URL"):
        assert key in out.stdout


def help_keys():
    """{key: default} as `taugate --help` prints the config table."""
    out = subprocess.run([os.path.join(BUILD, "taugate"), "--help"], capture_output=True,
                         text=True, check=True).stdout
    keys, key = {}, None
    for line in out.splitlines():
        m = re.match(r"  --(\w+)\s", line)
        if m:
            key = m.group(1)
            keys[key] = ""
            continue
        m = re.match(r"\s+default ?(.*?)(?:, range \[.*| \(secret.*)?$", line)
        if m and key:
            keys[key] = m.group(1).strip()
    return keys


def readme_config_rows():
    """[(keys, defaults column)] of README's configuration table."""
    with open(os.path.join(REPO, "README.md")) as f:
        text = f.read()
    section = text.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("key", "---"):
            continue
        keys, prev = [], None
        for name in re.findall(r"`([\w]+)`(?:/`(_\w+)`)?", cells[0]):
            prev = name[0]
            keys.append(prev)
            if name[1]:  # `rate_limit_rps`/`_burst`
                keys.append(prev.rsplit("_", 1)[0] + name[1])
        rows.append((keys, cells[1]))
    return rows


def test_readme_config_table_matches_the_code():
    """README's table names every key of gateway/core/config.c, and only
    those, with the default the code has."""
    code = help_keys()
    rows = readme_config_rows()
    documented = [k for keys, _ in rows for k in keys]
    assert len(code) > 60, code
    assert sorted(set(code) - set(documented)) == []
    assert sorted(set(documented) - set(code)) == []
    sizes = {"1 MiB": "1048576", "32 KiB": "32768"}
    for keys, defaults in rows:
        if "--help" in defaults:
            continue
        for human, raw in sizes.items():
            defaults = defaults.replace(human, raw)
        words = set(re.findall(r"[^\s,`()]+", defaults))
        words |= {p for w in list(words) for p in w.split("/")}
        for k in keys:
            if code[k]:
                assert code[k] in words, (k, code[k], defaults)


def test_sigterm_finishes_in_flight_request(gateway, db_url):
    # `gateway` (the module's) has migrated the database this one only uses
    gw = Gateway(BUILD, db_url, extra_env={"TAUGATE_MIGRATE_ON_START": "false"}).start()
    try:
        s = socket.create_connection(("127.0.0.1", gw.port), timeout=10)
        body = b'{"name": "x"'
        s.sendall(b"POST /v1/admin/workspaces HTTP/1.1\r\nHost: x\r\n"
                  b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % (len(body) + 1))
        s.sendall(body)  # one byte short: the request is in flight
        wait_for(lambda: gw.holds_connection(s), 10, "the gateway to accept the connection")
        gw.proc.send_signal(signal.SIGTERM)
        wait_for(lambda: "SIGTERM: draining" in gw.logs(), 10, "the gateway to start draining")
        assert gw.proc.poll() is None, "exited with a request in flight"
        # new connections are refused while draining
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", gw.port), timeout=2).recv(1)
        s.sendall(b"}")
        data = s.recv(65536)
        assert data.startswith(b"HTTP/1.1 "), data
        assert gw.proc.wait(timeout=10) == 0
    finally:
        gw.close()


def test_oversized_headers_are_refused(gateway):
    big = "x" * 40000
    data = raw_exchange(gateway.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\n\r\n"
                        % big.encode())
    status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else 0
    assert status in (413, 414, 431), data[:200]
    assert gateway.req("GET", "/healthz").status == 200  # and the server is fine


def test_pool_exhaustion_answers_503_not_a_hang(pg, db_url):
    gw = Gateway(BUILD, db_url, extra_env={"TAUGATE_DB_POOL_SIZE": "1",
                                           "TAUGATE_DB_CHECKOUT_TIMEOUT_MS": "300"}).start()
    dbname = db_url.rsplit("/", 1)[1]
    first = {}
    try:
        # a lock holds the pool's only connection inside a request
        with pg.table_locked(dbname, "workspaces") as release:
            t = threading.Thread(target=lambda: first.update(
                r=gw.req("GET", "/v1/admin/workspaces", timeout=10)))
            t.start()
            wait_for(lambda: pg.lock_waiters(dbname), 10, "the request waiting on the lock",
                     interval=0.05)
            started = time.monotonic()
            r = gw.req("GET", "/v1/admin/workspaces", timeout=10)
            assert r.status == 503 and r.header("Retry-After") == "1", r
            assert time.monotonic() - started < 2  # the checkout timeout (0.3 s), not a hang
            release()
            t.join()
        assert first["r"].status == 200  # the blocked one finished once the lock went
        metrics = gw.req("GET", "/metrics").body.decode()
        # the request's timeout, and any of the background loops' (the
        # evidence sealer looks for work every second, cluster or not)
        timeouts = re.search(r"^taugate_db_pool_timeouts_total (\d+)$", metrics, re.M)
        assert timeouts and int(timeouts.group(1)) >= 1, metrics
    finally:
        assert gw.stop() == 0
        gw.close()
