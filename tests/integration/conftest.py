"""Fixtures for integration tests: one PostgreSQL server for the session, a
fresh database per test module, and the real taugate binary.

Under pytest-xdist every worker is a session of its own: its own PostgreSQL
(free port, temporary folder), its own gateways and kubesims, so modules
spread over workers share nothing. The REST contract is checked once when
the whole session ends (harness/contract_check.py, registered by
tests/conftest.py)."""
import itertools
import os

import pytest

from paths import BUILD
from gateway import Gateway
from pg import Postgres

_dbseq = itertools.count(1)


@pytest.fixture(scope="session")
def pg():
    server = Postgres().init().start()
    server.psql("SELECT 1", db="postgres")
    yield server
    server.destroy()


@pytest.fixture(scope="module")
def db_url(pg):
    name = f"t{os.getpid()}_{next(_dbseq)}"
    pg.psql(f"CREATE DATABASE {name}", db="postgres")
    yield f"postgresql://{pg.user}@127.0.0.1:{pg.port}/{name}"


@pytest.fixture(scope="module")
def gateway(db_url, request):
    """The gateway, configured further by the module's GATEWAY_ENV (a dict of
    TAUGATE_* variables) when it has one."""
    gw = Gateway(BUILD, db_url, extra_env=getattr(request.module, "GATEWAY_ENV", None)).start()
    yield gw
    status = gw.stop()
    logs = gw.logs()
    gw.close()
    assert status == 0, f"taugate exited with {status}:\n{logs[-3000:]}"
