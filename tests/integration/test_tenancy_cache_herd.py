"""Requests that miss the tenancy cache on the same entry together read it
from PostgreSQL once: the first reads, the others wait for its answer
(store/tenancy_cache.c). Entries expire together, and every handler thread
asking PostgreSQL the same thing at once was a latency spike."""
import contextlib
import threading
import time

import pytest

from wait import wait_for
from world import kind_cpu_gateway, smoke_body

THREADS = 6
BODY = smoke_body()


@pytest.fixture(scope="module")
def gw(db_url):
    # the requests behind the reader wait for it far longer than the test
    # looks: under load, their default 2 s could run out while it looks
    with kind_cpu_gateway(db_url, THREADS, TAUGATE_TENANCY_CACHE_WAIT_MS="120000") as g:
        yield g


@contextlib.contextmanager
def misses_behind_a_held_read(g, pg, db, priority_class):
    """THREADS submissions that all miss the workspace settings (creating a
    priority class voids the cache) while reading them waits on a lock held
    on compute_profiles. Yields once the requests are sent; leaving the
    block lets the lock go and checks that every submission got its 201."""
    assert g.req("POST", "/v1/admin/priority-classes",
                 body={"name": priority_class, "value": 5}).status == 201
    with pg.table_locked(db, "compute_profiles") as release:
        statuses = []

        def submit():
            statuses.append(g.req("POST", "/v1/workspaces/ray/runs", body=BODY).status)

        threads = [threading.Thread(target=submit) for _ in range(THREADS)]
        for t in threads:
            t.start()
        yield
        release()
        for t in threads:
            t.join(30)
    assert statuses == [201] * THREADS


def test_concurrent_misses_read_the_workspace_settings_once(gw, pg, db_url):
    db = db_url.rsplit("/", 1)[1]
    with misses_behind_a_held_read(gw, pg, db, "herd"):
        # every request has reached the gateway; one reads the settings,
        # the others wait for its answer (never a second reader)
        wait_for(lambda: gw.connections(), 30, f"the gateway to hold {THREADS} requests",
                 cond=lambda n: n >= THREADS, interval=0.02)
        seen = [pg.lock_waiters(db)]
        end = time.monotonic() + 1.0  # the others' time to reach the cache
        while time.monotonic() < end:
            seen.append(pg.lock_waiters(db))
            time.sleep(0.05)
        assert max(seen) == 1, seen


def test_requests_behind_a_stuck_reader_read_on_their_own_after_the_wait(db_url, pg):
    # a reader that takes too long (here: held by the lock) holds the others
    # back only tenancy_cache_wait_ms; then each reads the entry itself
    db = db_url.rsplit("/", 1)[1]
    with kind_cpu_gateway(db_url, THREADS, TAUGATE_TENANCY_CACHE_WAIT_MS="100") as g:
        with misses_behind_a_held_read(g, pg, db, "herd-wait"):
            wait_for(lambda: pg.lock_waiters(db), 30, f"{THREADS} readers of the settings",
                     cond=lambda n: n == THREADS, interval=0.02)
