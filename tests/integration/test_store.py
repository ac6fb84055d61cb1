"""The PostgreSQL store: migrations and behaviour when the database goes away."""
import os
import shutil
import subprocess
import threading

import pytest

from paths import BUILD
from gateway import REPO, Gateway
from wait import wait_for


def migrate(db_url, migrations_dir):
    env = dict(os.environ, TAUGATE_DATABASE_URL=db_url, TAUGATE_MIGRATIONS_DIR=migrations_dir)
    return subprocess.run([os.path.join(BUILD, "taugate"), "migrate"], capture_output=True,
                          text=True, env=env)


@pytest.fixture
def fresh_db(pg, request):
    name = "m_" + request.node.name.lower()[:40]
    pg.psql(f"DROP DATABASE IF EXISTS {name}", db="postgres")
    pg.psql(f"CREATE DATABASE {name}", db="postgres")
    return name, f"postgresql://{pg.user}@127.0.0.1:{pg.port}/{name}"


def test_migrations_apply_once_with_checksums(pg, fresh_db):
    name, url = fresh_db
    out = migrate(url, os.path.join(REPO, "migrations"))
    assert out.returncode == 0, out.stderr
    rows = pg.psql("SELECT version, name, length(checksum) FROM schema_migrations", db=name)
    files = sorted(f for f in os.listdir(os.path.join(REPO, "migrations")) if f.endswith(".sql"))
    assert len(rows.splitlines()) == len(files)
    assert rows.splitlines()[0] == "1|0001_init.sql|64"
    for table in ("workspaces", "runs", "run_events", "outbox", "compute_profiles"):
        assert pg.psql(f"SELECT to_regclass('{table}') IS NOT NULL", db=name) == "t"
    again = migrate(url, os.path.join(REPO, "migrations"))
    assert again.returncode == 0 and "0 migrations applied" in again.stderr


def test_concurrent_migrators_are_serialised(pg, fresh_db):
    name, url = fresh_db
    results = []
    threads = [threading.Thread(target=lambda: results.append(
        migrate(url, os.path.join(REPO, "migrations")))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r.returncode == 0 for r in results), [r.stderr for r in results]
    assert pg.psql("SELECT count(*) FROM schema_migrations WHERE version = 1", db=name) == "1"


def test_editing_an_applied_migration_is_an_error(pg, fresh_db, tmp_path):
    name, url = fresh_db
    mdir = tmp_path / "migrations"
    shutil.copytree(os.path.join(REPO, "migrations"), mdir)
    assert migrate(url, str(mdir)).returncode == 0
    with open(mdir / "0001_init.sql", "a") as f:
        f.write("\n-- edited\n")
    out = migrate(url, str(mdir))
    assert out.returncode == 1
    assert "0001_init.sql was edited after it was applied" in out.stderr


def test_failing_migration_leaves_nothing_behind(pg, fresh_db, tmp_path):
    name, url = fresh_db
    mdir = tmp_path / "migrations"
    shutil.copytree(os.path.join(REPO, "migrations"), mdir)
    (mdir / "9999_broken.sql").write_text(
        "CREATE TABLE half_done (x int);\nSELECT no_such_function();\n")
    out = migrate(url, str(mdir))
    assert out.returncode == 1 and "9999_broken.sql" in out.stderr
    assert pg.psql("SELECT to_regclass('half_done') IS NULL", db=name) == "t"
    assert pg.psql("SELECT count(*) FROM schema_migrations WHERE version = 9999", db=name) == "0"


def test_database_down_then_back(pg, db_url):
    gw = Gateway(BUILD, db_url).start()
    try:
        assert gw.req("GET", "/readyz").status == 200
        assert gw.req("GET", "/v1/admin/workspaces").status == 200
        pg.stop()
        r = gw.req("GET", "/readyz")
        assert r.status == 503 and r.json()["status"] == 503
        r = gw.req("GET", "/v1/admin/workspaces")
        assert r.status == 503 and r.header("Retry-After")
        assert gw.req("GET", "/healthz").status == 200  # alive, not ready
        pg.start()
        wait_for(lambda: gw.req("GET", "/readyz").status, 15, "ready again once PostgreSQL is back",
                 cond=lambda s: s == 200)
        assert gw.req("GET", "/v1/admin/workspaces").status == 200
    finally:
        try:
            pg.psql("SELECT 1", db="postgres")
        except RuntimeError:
            pg.start()
        assert gw.stop() == 0
        gw.close()
