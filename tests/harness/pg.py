"""A throwaway PostgreSQL cluster for tests: initdb + pg_ctl in a temp folder.

initdb refuses to run as root, so when the tests run as root the cluster is
owned by an unprivileged system user (created on first use)."""
import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid

from wait import wait_for

PG_USER = "taugate-pg"


def pg_bindir():
    try:
        out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, check=True)
        d = out.stdout.strip()
        if os.path.exists(os.path.join(d, "initdb")):
            return d
    except (OSError, subprocess.CalledProcessError):
        pass
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        raise RuntimeError("PostgreSQL server binaries not found; run `make deps`")
    return os.path.dirname(found[-1])


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ensure_user():
    try:
        pwd.getpwnam(PG_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                        PG_USER], check=True)


class Postgres:
    """One PostgreSQL server on 127.0.0.1:<free port> with database `taugate`."""

    def __init__(self, fast=True):
        self.bindir = pg_bindir()
        # the server's own psql: /usr/bin/psql is Debian's Perl wrapper, which
        # costs 40 ms of CPU per call before psql starts
        self.psql_bin = os.path.join(self.bindir, "psql")
        self.port = free_port()
        self.root = tempfile.mkdtemp(prefix="taugate-pg-")
        os.chmod(self.root, 0o755)
        self.datadir = os.path.join(self.root, "data")
        self.logfile = os.path.join(self.root, "postgres.log")
        self.fast = fast
        self.as_root = os.geteuid() == 0
        if self.as_root:
            _ensure_user()
            shutil.chown(self.root, PG_USER, PG_USER)
        self.dbname = "taugate"
        self.user = PG_USER if self.as_root else pwd.getpwuid(os.geteuid()).pw_name

    @property
    def url(self):
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{self.dbname}"

    def _run(self, args, **kw):
        if self.as_root:
            args = ["runuser", "-u", PG_USER, "--"] + args
        return subprocess.run(args, check=True, capture_output=True, text=True, **kw)

    def init(self):
        self._run([os.path.join(self.bindir, "initdb"), "-D", self.datadir, "-A", "trust",
                   "-U", self.user, "-E", "UTF8", "--no-locale", "--no-sync"])
        return self

    def start(self):
        opts = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1"
        if self.fast:
            opts += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        self._run([os.path.join(self.bindir, "pg_ctl"), "-D", self.datadir, "-l", self.logfile,
                   "-o", opts, "-w", "-t", "30", "start"])
        return self

    def create_db(self):
        self.psql("CREATE DATABASE taugate", db="postgres")
        return self

    def stop(self, mode="fast"):
        try:
            self._run([os.path.join(self.bindir, "pg_ctl"), "-D", self.datadir, "-m", mode,
                       "-w", "-t", "30", "stop"])
        except subprocess.CalledProcessError:
            pass

    def restart(self):
        self.stop()
        self.start()

    def psql(self, sql, db=None):
        out = subprocess.run(
            [self.psql_bin, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1",
             "-p", str(self.port), "-U", self.user, "-d", db or self.dbname, "-c", sql],
            capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(out.stderr)
        return out.stdout.strip()

    @contextlib.contextmanager
    def table_locked(self, db, table, mode="ACCESS EXCLUSIVE"):
        """Another session holds a `mode` lock on `table` in database `db`:
        statements that need a conflicting lock wait. Yields, once the lock
        is held, a function that lets it go; leaving the block lets it go
        too."""
        with self.transaction_open(db, f"LOCK TABLE {table} IN {mode} MODE") as release:
            yield release

    @contextlib.contextmanager
    def transaction_open(self, db, sql):
        """Another session runs `sql` in a transaction that it keeps open:
        its locks are held and its writes not yet seen. Yields, once `sql`
        has run, a function that commits it; leaving the block without it
        rolls the transaction back."""
        name = "test-open-" + uuid.uuid4().hex[:12]
        holder = subprocess.Popen(
            [self.psql_bin, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p",
             str(self.port), "-U", self.user, "-d", db],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        holder.stdin.write(f"SET application_name = '{name}';\nBEGIN;\n{sql};\n")
        holder.stdin.flush()

        def commit():
            if holder.stdin.closed:
                return
            holder.stdin.write("COMMIT;\n")
            holder.stdin.close()
            assert holder.wait(30) == 0, holder.stderr.read()
        try:
            wait_for(lambda: self.psql("SELECT count(*) FROM pg_stat_activity WHERE"
                                       f" application_name = '{name}'"
                                       " AND state = 'idle in transaction'", db=db) == "1"
                     or holder.poll() is not None,
                     10, "the transaction open", interval=0.05)
            assert holder.poll() is None, holder.stderr.read()
            yield commit
        finally:
            if not holder.stdin.closed:
                holder.stdin.close()  # psql ends: the transaction is rolled back
            holder.wait(30)

    def lock_waiters(self, db, application="taugate"):
        """How many of `application`'s sessions in `db` wait for a lock now."""
        return int(self.psql("SELECT count(*) FROM pg_stat_activity WHERE application_name ="
                             f" '{application}' AND datname = '{db}'"
                             " AND wait_event_type = 'Lock'", db=db))

    def destroy(self):
        self.stop(mode="immediate")
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self):
        return self.init().start().create_db()

    def __exit__(self, *exc):
        self.destroy()
