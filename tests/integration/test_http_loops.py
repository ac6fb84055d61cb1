"""Connections opened together are served together: each goes to its own
HTTP event loop (http/acceptor.c), so a request blocked in PostgreSQL holds
up no other connection. libmicrohttpd's own thread pool let the first worker
to wake accept a burst of connections, which then waited for each other."""
import http.client
import json
import threading
from urllib.parse import urlparse

import pytest

import tokens
from wait import wait_for
from world import kind_cpu_gateway, smoke_body

LOOPS = 8
BODY = json.dumps(smoke_body())


@pytest.fixture(scope="module")
def gw(db_url):
    with kind_cpu_gateway(db_url, LOOPS) as g:
        yield g


def test_a_burst_of_connections_is_served_in_parallel(gw, pg, db_url):
    db = db_url.rsplit("/", 1)[1]
    # every submission blocks inside PostgreSQL while the outbox is held
    with pg.table_locked(db, "outbox") as release:
        url = urlparse(gw.url)
        conns = [http.client.HTTPConnection(url.hostname, url.port, timeout=30)
                 for _ in range(LOOPS)]
        for c in conns:  # all open before any request: one burst of connections
            c.connect()
        headers = {"Content-Type": "application/json",
                   "Authorization": f"Bearer {tokens.admin_token()}"}
        statuses = []

        def submit(c):
            c.request("POST", "/v1/workspaces/ray/runs", body=BODY, headers=headers)
            r = c.getresponse()
            r.read()
            statuses.append(r.status)

        threads = [threading.Thread(target=submit, args=(c,)) for c in conns]
        for t in threads:
            t.start()
        # every connection's request reaches PostgreSQL while the others wait
        # there (served one at a time, one would wait and the rest queue)
        wait_for(lambda: pg.lock_waiters(db), 30, f"{LOOPS} requests in PostgreSQL at once",
                 cond=lambda n: n == LOOPS, interval=0.05)
        release()
        for t in threads:
            t.join(30)
        assert statuses == [201] * LOOPS
        for c in conns:
            c.close()
