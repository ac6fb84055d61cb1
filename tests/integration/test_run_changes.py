"""The workspace run-change stream (GET /v1/workspaces/{ws}/run-changes):
one event per new run and per state/reason/attempt change, in commit order,
resumable with Last-Event-ID across cuts with nothing lost or repeated, held
back while an earlier change is uncommitted, ended when the caller loses
access and when the server stops.

One gateway without a cluster (runs stay Accepted until cancelled) for the
module; its database is read with psql to compare the stream with the
change log."""
import http.client
import socket
import subprocess
import threading
import time

import pytest

import sse
import tokens
from gateway import Gateway
from paths import BUILD
from wait import wait_for
from world import kind_cpu_workspace, smoke_body

WS = "ray"
PATH = f"/v1/workspaces/{WS}/run-changes"


@pytest.fixture(scope="module")
def env(pg, db_url):
    gw = Gateway(BUILD, db_url).start()
    kind_cpu_workspace(gw, extra=[
        ("/v1/admin/workspaces", {"name": "calm", "namespace": "calm",
                                  "default_queue": "kind-cpu"}),
        ("/v1/admin/workspaces/calm/queues", {"name": "kind-cpu", "cluster_queue": "kind-cpu-cq"}),
        ("/v1/admin/profiles", {"name": "calm-job", "engine": "job",
                                "allowed_workspaces": ["calm"]}),
        ("/v1/admin/workspaces/ray/members",
         {"kind": "user", "subject": "vera@example.com", "role": "viewer"}),
    ])
    db = db_url.rsplit("/", 1)[1]

    class Env:
        pass
    e = Env()
    e.gw, e.pg, e.db = gw, pg, db
    e.sql = lambda q: pg.psql(q, db=db)
    yield e
    status = gw.stop()
    logs = gw.logs()
    gw.close()
    assert status == 0, logs[-3000:]


def auth(token=None):
    return {"Authorization": "Bearer " + (token or tokens.admin_token())}


def submit(gw, n=1, ws=WS):
    body = smoke_body()
    if ws != WS:
        body["spec"] = body["spec"].replace("namespace: ray", f"namespace: {ws}").replace(
            "profile: kind-cpu-job", f"profile: {ws}-job")
    if n == 1:
        r = gw.req("POST", f"/v1/workspaces/{ws}/runs", body=body)
        assert r.status == 201, r
        return [r.json()["id"]]
    r = gw.req("POST", f"/v1/workspaces/{ws}/runs:batch", body={"runs": [body] * n})
    assert r.status == 200, r
    return [x["run"]["id"] for x in r.json()["results"]]


def cancel(gw, rid):
    r = gw.req("POST", f"/v1/runs/{rid}:cancel")
    assert r.status == 200, r


def read_all(gw, after, token=None, ws=WS):
    """Everything after `after` up to now (follow=false): the events."""
    r = gw.req("GET", f"/v1/workspaces/{ws}/run-changes?follow=false&after={after}",
               **({"token": token} if token else {}))
    assert r.status == 200, r
    assert r.header("Content-Type").startswith("text/event-stream")
    events = sse.parse(r.body.decode())
    assert events[-1].event == "end" and events[-1].json() == {"reason": "complete"}, events
    return events


def position(gw):
    """Where a new stream starts now."""
    r = gw.req("GET", f"{PATH}?follow=false")
    events = sse.parse(r.body.decode())
    assert events[0].event == "ready", events
    return events[0].json()["position"]


def settled(env):
    """The stream position once every change committed so far is behind it
    (it trails the newest commit by a notifier tick), after the gateway has
    said of every new run that it waits for a cluster (there is none here:
    one change per run, made within a keeper tick)."""
    wait_for(lambda: env.sql("SELECT count(*) FROM runs WHERE state = 'Accepted'"
                             " AND reason IS DISTINCT FROM 'WaitingForCluster'").strip() == "0",
             10, "every accepted run marked as waiting for a cluster")
    top = int(env.sql("SELECT coalesce(max(id), 0) FROM run_changes"))
    deadline = time.time() + 10
    while True:
        pos = position(env.gw)
        if pos >= top:
            return pos
        assert time.time() < deadline, f"the stream position stays at {pos} < {top}"
        time.sleep(0.05)


def runs_of(events):
    return [e for e in events if e.event == "run"]


def read_rest(env, after):
    """The events after `after` up to the workspace's newest committed change."""
    top = int(env.sql(f"SELECT coalesce(max(id), 0) FROM run_changes WHERE workspace = '{WS}'"))
    out = []
    deadline = time.time() + 10
    while int(after) < top:
        got = runs_of(read_all(env.gw, after))
        out.extend(got)
        if got:
            after = got[-1].id
        else:
            assert time.time() < deadline, f"the stream stays before {top}"
            time.sleep(0.05)
    return out


def test_new_runs_and_changes_arrive_live(env):
    gw = env.gw
    f = sse.Follower(gw.url, PATH, auth())
    assert f.status == 200
    ready = f.wait_for("ready", lambda ev: ev)[0]
    assert ready.event == "ready" and int(ready.id) == ready.json()["position"]
    (rid,) = submit(gw)
    submit(gw, ws="calm")  # another workspace's run never shows
    cancel(gw, rid)
    events = f.wait_for("created and cancelled",
                        lambda ev: len([e for e in ev if e.event == "run"]) >= 2)
    f.close()
    created, changed = runs_of(events)[:2]
    c, d = created.json(), changed.json()
    assert int(created.id) == c["id"] and int(changed.id) == d["id"] and c["id"] < d["id"]
    assert c["kind"] == "created" and c["run_id"] == rid and c["workspace"] == WS
    assert c["state"] == "Accepted" and c["previous"] is None and c["attempt"] == 1
    assert c["name"] == "tau-kind-smoke" and c["owner"] == "platform-admin@example.com"
    assert d["kind"] == "changed" and d["state"] == "Cancelled" and d["run_id"] == rid
    assert d["previous"] == {"state": "Accepted", "reason": None, "attempt": 1}
    run = gw.req("GET", f"/v1/runs/{rid}").json()
    assert d["reason"] == run["reason"] and d["message"] == run["message"]
    assert len(runs_of(events)) == 2, events


def test_resume_after_cuts_loses_and_repeats_nothing(env):
    """Writers commit runs and cancels concurrently (batches: several changes
    per transaction, out of id order across transactions) while a reader is
    cut after a few events each time and resumes with Last-Event-ID."""
    gw = env.gw
    start = position(gw)
    stop = threading.Event()
    made = []

    def writer():
        while not stop.is_set():
            ids = submit(gw, n=3)
            made.extend(ids)
            cancel(gw, ids[0])

    writers = [threading.Thread(target=writer) for _ in range(3)]
    for w in writers:
        w.start()
    got, last, cuts = [], str(start), 0
    try:
        while cuts < 8:
            f = sse.Follower(gw.url, PATH, dict(auth(), **{"Last-Event-ID": last}))
            want = 3 + cuts
            events = f.wait_for(f"{want} events", lambda ev: len(runs_of(ev)) >= want)
            f.close()  # a cut, in the middle of whatever the server was sending
            assert events[0].event == "ready" and events[0].id == last
            got.extend(runs_of(events))
            last = got[-1].id
            cuts += 1
    finally:
        stop.set()
        for w in writers:
            w.join()
    got.extend(read_rest(env, last))
    ids = [int(e.id) for e in got]
    assert ids == sorted(set(ids)), "an event came twice or out of order"
    # up to the last one read: read_rest read up to the newest change once the
    # writers had stopped, and the engine may have changed runs since
    logged = env.sql(f"SELECT string_agg(id::text, ',' ORDER BY id) FROM run_changes"
                     f" WHERE workspace = '{WS}' AND id > {start} AND id <= {ids[-1]}")
    assert ids == [int(x) for x in logged.split(",")], "an event was lost"
    # every run made shows as created, and each cancel as a change
    kinds = {}
    for e in got:
        d = e.json()
        kinds.setdefault(d["run_id"], []).append((d["kind"], d["state"]))
    # (runs made before `start` may show with a later change: the keeper's)
    assert set(made) <= set(kinds)
    cancelled = [r for r in made if ("changed", "Cancelled") in kinds[r]]
    assert len(cancelled) == len(made) // 3
    for r in made:
        assert kinds[r][0] == ("created", "Accepted")


class Session:
    """An open psql session: statements run in order, each call returns once
    the server has answered (so a test knows which transaction holds what)."""

    MARK = "--done--"

    def __init__(self, env):
        self.proc = subprocess.Popen(
            [env.pg.psql_bin, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1",
             "-p", str(env.pg.port), "-U", env.pg.user, "-d", env.db],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def run(self, sql):
        self.proc.stdin.write(f"{sql}\n\\echo {self.MARK}\n")
        self.proc.stdin.flush()
        out = []
        while True:
            line = self.proc.stdout.readline()
            assert line, f"psql ended: {''.join(out)}"
            if line.strip() == self.MARK:
                return "".join(out).strip()
            out.append(line)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(10)


def assert_held_back(env, start, held, later, later_session=None):
    """`held`'s change is taken (reason HeldBack) in an open transaction;
    `later`'s change, with the next id, commits (through later_session, or
    the API's cancel). A follower from `start` sees neither while the first
    is open, then both, in id order, once it commits."""
    gw = env.gw
    holder = Session(env)
    try:
        holder.run(f"BEGIN; UPDATE runs SET reason = 'HeldBack' WHERE id = '{held}';")
        held_id = int(holder.run(f"SELECT max(id) FROM run_changes WHERE run_id = '{held}';"))
        if later_session:
            later_session.run(f"UPDATE runs SET state = 'Cancelled', reason = 'Later'"
                              f" WHERE id = '{later}'; COMMIT;")
        else:
            cancel(gw, later)
        later_id = int(env.sql(f"SELECT max(id) FROM run_changes WHERE run_id = '{later}'"))
        assert later_id > held_id
        # the follower sees nothing of it while the earlier change is open
        f = sse.Follower(gw.url, PATH, dict(auth(), **{"Last-Event-ID": str(start)}))
        f.wait_for("ready", lambda ev: ev)
        # a negative needs a window: six notifier ticks (250 ms each) in which
        # a reader that trusted ids alone would have sent the later change
        deadline = time.time() + 1.5
        while time.time() < deadline:
            assert not runs_of(f.events), f.events
            time.sleep(0.1)
        holder.run("COMMIT;")
        events = f.wait_for("both changes", lambda ev: len(runs_of(ev)) >= 2)
        f.close()
    finally:
        holder.close()
    first, second = [e.json() for e in runs_of(events)[:2]]
    assert (first["run_id"], first["reason"], first["id"]) == (held, "HeldBack", held_id)
    assert (second["run_id"], second["state"], second["id"]) == (later, "Cancelled", later_id)


def test_an_uncommitted_change_holds_back_later_ones(env):
    """Change ids are taken before commit: a later, committed change must not
    be sent while an earlier one may still commit, or a resume from it would
    lose the earlier one."""
    held, later = submit(env.gw, n=2)
    assert_held_back(env, settled(env), held, later)


def test_a_later_change_of_an_older_transaction_is_held_back_too(env):
    """Issue #18: the later change is committed by a transaction that began
    (took its transaction id) before the one holding the earlier change, and
    nothing newer has committed since. A snapshot's xmax is one past the
    newest *completed* transaction, not the next one to start, so a horizon
    that waited only for transactions below it passed the open one and sent
    the later change: the earlier one was lost for a client resuming there."""
    held, later = submit(env.gw, n=2)
    start = settled(env)
    older = Session(env)
    try:
        older.run("BEGIN; SELECT pg_current_xact_id();")
        assert_held_back(env, start, held, later, later_session=older)
    finally:
        older.close()


def test_access_is_checked_again_while_open(env):
    """A member removed from the workspace, and a revoked personal access
    token: their open streams end with reason "revoked"."""
    gw = env.gw
    vera = tokens.mint("vera@example.com")
    f = sse.Follower(gw.url, PATH, auth(vera))
    assert f.status == 200
    f.wait_for("ready", lambda ev: ev)
    members = gw.req("GET", f"/v1/admin/workspaces/{WS}/members").json()["items"]
    (mid,) = [m["id"] for m in members if m["subject"] == "vera@example.com"]
    assert gw.req("DELETE", f"/v1/admin/workspaces/{WS}/members/{mid}").status == 204
    events = f.wait_for("end", lambda ev: ev and ev[-1].event == "end", timeout=15)
    assert events[-1].json() == {"reason": "revoked"}
    f.close()
    # a token of a member that still is one: revoking the token ends it
    gw.req("POST", f"/v1/admin/workspaces/{WS}/members",
           body={"kind": "user", "subject": "tess@example.com", "role": "viewer"})
    tess = tokens.mint("tess@example.com")
    made = gw.req("POST", "/v1/tokens", token=tess,
                  body={"name": "ci", "workspace": WS, "role": "viewer"}).json()
    f = sse.Follower(gw.url, PATH, auth(made["token"]))
    f.wait_for("ready", lambda ev: ev)
    assert gw.req("DELETE", f"/v1/tokens/{made['id']}", token=tess).status == 204
    events = f.wait_for("end", lambda ev: ev and ev[-1].event == "end", timeout=15)
    assert events[-1].json() == {"reason": "revoked"}
    f.close()
    # and a JWT that expires while the stream is open
    short = tokens.mint("platform-admin@example.com", groups=[tokens.ADMIN_GROUP], ttl=2)
    f = sse.Follower(gw.url, PATH, auth(short))
    f.wait_for("ready", lambda ev: ev)
    events = f.wait_for("end", lambda ev: ev and ev[-1].event == "end", timeout=15)
    assert events[-1].json() == {"reason": "revoked"}
    f.close()


def test_old_changes_are_pruned_and_a_resume_before_them_resets(env, db_url):
    """Changes older than the retention (7 days) are deleted by a replica's
    notifier (at its first look, then every 10 minutes, with or without
    streams); a client resuming from before them gets a `reset` event with
    the position to go on from."""
    gw = env.gw
    # three runs at least, so that the pruned changes reach past the resume
    # point below even when this is the module's first test
    submit(gw, n=3)
    top = int(env.sql("SELECT max(id) FROM run_changes"))
    env.sql(f"UPDATE run_changes SET at = now() - interval '8 days' WHERE id < {top}")
    other = Gateway(BUILD, db_url).start()  # a replica: it prunes at its first look
    follower = sse.Follower(other.url, PATH, auth())  # a stream makes it look now
    try:
        deadline = time.time() + 15
        while int(env.sql("SELECT upto FROM run_changes_pruned")) < top - 1:
            assert time.time() < deadline, "nothing was pruned"
            time.sleep(0.1)
    finally:
        follower.close()
        other.stop()
        other.close()
    assert int(env.sql(f"SELECT count(*) FROM run_changes WHERE id < {top}")) == 0
    assert int(env.sql(f"SELECT count(*) FROM run_changes WHERE id = {top}")) == 1
    events = read_all(gw, 1)
    assert events[0].event == "reset" and events[0].json()["position"] >= top
    assert int(events[0].id) == events[0].json()["position"]
    assert not runs_of(events)
    # from a point that was kept, nothing is lost
    assert [int(e.id) for e in runs_of(read_all(gw, top - 1))][:1] == [top]


def sse_metric(gw, name):
    """A taugate_sse_* counter of the run-change streams, e.g.
    taugate_sse_bytes_total (bytes handed to their buffers since the
    start)."""
    r = gw.req("GET", "/metrics", token=None)
    assert r.status == 200, r
    for line in r.body.decode().splitlines():
        if line.startswith(name + '{stream="run_changes"}'):
            return int(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no {name} for run_changes")


def fat_backlog(env, n, message):
    """n changes of a new run in workspace calm, each with `message` (written
    straight into the change log): the run and the position before them."""
    rid = submit(env.gw, ws="calm")[0]
    start = settled(env)
    env.sql(f"INSERT INTO run_changes (workspace, run_id, kind, state, message, attempt,"
            f" prev_state, prev_attempt, at) SELECT 'calm', '{rid}', 'changed', 'Accepted',"
            f" '{message}', 1, 'Accepted', 1, now() FROM generate_series(1, {n})")
    return rid, start


def small_window_stream(gw, path, headers):
    """A stream read through a socket with a small receive buffer (256 KiB,
    which the kernel doubles), so a reader that pauses holds the server
    back: the connection and the response, status 200."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 256 * 1024)
    sock.settimeout(30)
    host, port = gw.url.rsplit("/", 1)[1].split(":")
    sock.connect((host, int(port)))
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    conn.sock = sock
    conn.request("GET", path, headers=headers)
    resp = conn.getresponse()
    assert resp.status == 200
    return conn, resp


def test_a_slow_reader_is_held_back_not_buffered(env):
    """A client that reads slowly does not make the server hold its backlog
    in memory: what was queued for it never runs further ahead of what it
    has read than the stream's buffer and the sockets' (about 5.3 MiB here),
    though ~15 MiB of changes wait for it; the rest waits in the database,
    and every change arrives, in order, without an `overflow` end."""
    gw = env.gw
    n, message = 12000, "m" * 1000
    rid, start = fat_backlog(env, n, message)
    backlog = n * (len(message) + 300)
    # the reader's socket takes 512 KiB at most (SO_RCVBUF doubled; far
    # smaller windows slow TCP down with delayed ACKs), so the server's send
    # buffer (4 MiB at most: net.ipv4.tcp_wmem) fills and the stream waits
    bound = 4 * 1024 * 1024 + 4 * 64 * 1024 + 1024 * 1024
    base = sse_metric(gw, "taugate_sse_bytes_total")
    conn, resp = small_window_stream(gw, f"/v1/workspaces/calm/run-changes?after={start}",
                                     auth())
    try:
        # events counted as they come (a marker may straddle two reads)
        body, read, ahead, seen, tail, sampled = [], 0, 0, 0, b"", 0
        while seen < n or not body[-1].endswith(b"\n\n"):
            chunk = resp.read1(65536)
            assert chunk, f"the stream ended after {seen} events: {b''.join(body)[-300:]!r}"
            body.append(chunk)
            read += len(chunk)
            seen += (tail + chunk).count(b"event: run\n") - tail.count(b"event: run\n")
            tail = (tail + chunk)[-32:]
            if read - sampled >= 256 * 1024:
                sampled = read
                ahead = max(ahead, sse_metric(gw, "taugate_sse_bytes_total") - base - read)
                assert ahead <= bound, f"{ahead} bytes queued ahead of the reader"
        assert read >= backlog * 0.8
    finally:
        conn.close()
    events = sse.parse(b"".join(body).decode())
    assert not [e for e in events if e.event == "end"], events[-1]
    # the engine's own word on the run (no cluster here) may come between
    got = [e for e in runs_of(events)
           if not e.json()["message"].startswith("waiting for a cluster")]
    assert [(e.json()["run_id"], e.json()["message"]) for e in got] == [(rid, message)] * n
    ids = [int(e.id) for e in got]
    assert ids == sorted(set(ids))
    env.sql(f"DELETE FROM run_changes WHERE workspace = 'calm' AND message = '{message}'")


def test_a_revoked_slow_reader_gets_no_backlog_and_a_whole_end(env):
    """A reader that stopped reading while a backlog waits for it loses
    access: what the server had queued and the client had not started to
    read is dropped (never cut inside an event), then `event: end` with
    reason "revoked" closes a stream whose every event is whole."""
    gw = env.gw
    gw.req("POST", "/v1/admin/workspaces/calm/members",
           body={"kind": "user", "subject": "rhea@example.com", "role": "viewer"})
    n, message = 12000, "r" * 1000
    rid, start = fat_backlog(env, n, message)
    revoked = sse_metric(gw, "taugate_sse_revoked_total")
    conn, resp = small_window_stream(gw, f"/v1/workspaces/calm/run-changes?after={start}",
                                     auth(tokens.mint("rhea@example.com")))
    try:
        body = [resp.read1(65536)]  # a first part, then the reader stops
        members = gw.req("GET", "/v1/admin/workspaces/calm/members").json()["items"]
        (mid,) = [m["id"] for m in members if m["subject"] == "rhea@example.com"]
        assert gw.req("DELETE", f"/v1/admin/workspaces/calm/members/{mid}").status == 204
        wait_for(lambda: sse_metric(gw, "taugate_sse_revoked_total") > revoked, 15,
                 "the stream seen as revoked")
        while True:
            chunk = resp.read1(65536)
            if not chunk:
                break
            body.append(chunk)
    finally:
        conn.close()
        env.sql(f"DELETE FROM run_changes WHERE workspace = 'calm' AND message = '{message}'")
    events = sse.parse(b"".join(body).decode())
    assert events[-1].event == "end" and events[-1].json() == {"reason": "revoked"}, events[-1]
    assert events[0].event == "ready"
    got = runs_of(events[1:-1])
    assert len(got) == len(events) - 2, [e.event for e in events if e.event != "run"]
    assert all(e.json()["run_id"] == rid for e in got)  # every one whole JSON
    ids = [int(e.id) for e in got]
    assert ids == sorted(set(ids))
    assert len(got) < n // 2, f"{len(got)} of {n} events after the revocation"


def test_bad_requests_and_strangers(env):
    gw = env.gw
    r = gw.req("GET", PATH, headers={"Last-Event-ID": "12x"})
    assert r.status == 400 and r.json()["errors"][0]["path"] == "Last-Event-ID", r
    r = gw.req("GET", f"{PATH}?after=-1")
    assert r.status == 400 and r.json()["errors"][0]["path"] == "after", r
    r = gw.req("GET", f"{PATH}?follow=maybe")
    assert r.status == 400 and r.json()["errors"][0]["path"] == "follow", r
    r = gw.req("GET", PATH, token=tokens.mint("stranger@example.com"))
    assert r.status == 404, r
    assert gw.req("GET", PATH, token=None).status == 401


def test_shutdown_ends_open_streams(env, db_url):
    # env: the workspace the stream is for exists (this test may run first)
    gw = Gateway(BUILD, db_url).start()
    try:
        f = sse.Follower(gw.url, PATH, auth())
        f.wait_for("ready", lambda ev: ev)
        gw.proc.send_signal(15)
        events = f.wait_for("end", lambda ev: ev and ev[-1].event == "end")
        assert events[-1].json() == {"reason": "shutdown"}
        f.close()
        assert gw.proc.wait(20) == 0
    finally:
        gw.stop()
        gw.close()
