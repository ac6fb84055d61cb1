"""Start the real taugate binary for integration tests."""
import atexit
import os
import signal
import subprocess
import tempfile

import sanitizer
import tokens
from http_client import request
from pg import free_port
from wait import wait_for

ADMIN = object()  # the default: act as a platform admin

# Every gateway started and not yet ended: a test that fails before it stops
# its gateway (a cleanup step that raised first) leaves none running when
# its process ends.
_running = set()


@atexit.register
def _kill_all():
    for gw in list(_running):
        gw.kill()

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Gateway:
    """taugate serving on 127.0.0.1:<free port> against a given database URL."""

    def __init__(self, build, database_url, extra_env=None, args=None, wrapper=None):
        """wrapper: a command the gateway runs under (valgrind, say)."""
        self.binary = os.path.join(build, "taugate")
        self.wrapper = list(wrapper or [])
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.database_url = database_url
        self.extra_env = extra_env or {}
        self.args = args or []
        self.proc = None
        self.log = tempfile.NamedTemporaryFile(prefix="taugate-", suffix=".log", delete=False)

    def env(self):
        env = dict(os.environ)
        env.update({
            "TAUGATE_PORT": str(self.port),
            "TAUGATE_DATABASE_URL": self.database_url,
            "TAUGATE_MIGRATIONS_DIR": os.path.join(REPO, "migrations"),
            "TAUGATE_SCHEMA_FILE": os.path.join(REPO, "schema", "tau.schema.json"),
            "TAUGATE_OPENAPI_FILE": os.path.join(REPO, "openapi.yaml"),
            "TAUGATE_POLICY_DIR": os.path.join(REPO, "policies"),
            "TAUGATE_POLICY_SCHEMA_FILE": os.path.join(REPO, "schema", "policy.schema.json"),
            "TAUGATE_EVIDENCE_LOG_GRACE_S": "5",
            "TAUGATE_ENGINE_POLL_MS": "100",
            "TAUGATE_THREADS": "2",
            "TAUGATE_DB_POOL_SIZE": "4",
            "TAUGATE_DB_CHECKOUT_TIMEOUT_MS": "1000",
            "TAUGATE_DB_CONNECT_TIMEOUT_S": "2",
            "TAUGATE_AUTH_ISSUER": tokens.ISSUER,
            "TAUGATE_AUTH_AUDIENCE": tokens.AUDIENCE,
            "TAUGATE_AUTH_HS256_SECRET": tokens.SECRET,
            "TAUGATE_AUTH_ADMIN_GROUPS": tokens.ADMIN_GROUP,
            "TAUGATE_RATE_LIMIT_RPS": "100000",
            "TAUGATE_RATE_LIMIT_BURST": "100000",
            "TAUGATE_SUBMIT_RATE_LIMIT_RPS": "100000",
            "TAUGATE_SUBMIT_RATE_LIMIT_BURST": "100000",
        })
        env.update(self.extra_env)
        return env

    def start(self, wait=True, probe="/readyz", timeout=20):
        """Start the gateway; with wait, until `probe` answers 200 (/readyz:
        migrated and ready; /healthz: merely serving, e.g. without a
        database), for at most `timeout` seconds."""
        self.proc = subprocess.Popen(self.wrapper + [self.binary, "serve"] + self.args,
                                     env=self.env(), stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        _running.add(self)
        if wait:
            try:
                self.wait_ready(timeout=timeout, probe=probe)
            except BaseException:
                # the caller gets no gateway to close: none is left running
                self.kill()
                raise
        return self

    def wait_ready(self, timeout=20, probe="/readyz"):
        def ready():
            if self.proc.poll() is not None:
                raise RuntimeError(f"taugate exited with {self.proc.returncode}:\n{self.logs()}")
            return request(self.url, "GET", probe, timeout=2).status == 200
        wait_for(ready, timeout, f"taugate to answer {probe} with 200", interval=0.05,
                 ignore=(OSError,), detail=self.logs)

    def _client_sockets(self):
        """{socket inode link: client port} of the TCP connections to the
        gateway's port that the gateway process has accepted."""
        peers = {}
        with open(f"/proc/{self.proc.pid}/net/tcp") as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                local, remote = (int(x.rsplit(":", 1)[1], 16) for x in fields[1:3])
                if local == self.port and fields[3] == "01":  # ESTABLISHED
                    peers[f"socket:[{fields[9]}]"] = remote
        fd_dir = f"/proc/{self.proc.pid}/fd"
        held = {}
        for fd in os.listdir(fd_dir):
            try:
                link = os.readlink(os.path.join(fd_dir, fd))
            except OSError:  # closed meanwhile
                continue
            if link in peers:
                held[link] = peers[link]
        return held

    def holds_connection(self, sock):
        """Has the gateway accepted the client socket `sock` (it is among the
        process's open files), rather than it waiting in the listen backlog?"""
        return sock.getsockname()[1] in self._client_sockets().values()

    def connections(self):
        """How many client connections the gateway holds open now."""
        return len(self._client_sockets())

    def logs(self):
        with open(self.log.name, "rb") as f:
            return f.read().decode(errors="replace")

    def req(self, method, path, body=None, headers=None, timeout=30, token=ADMIN):
        """One request; by default as a platform admin. token=None sends no
        Authorization header; a string is sent as the bearer token."""
        hdrs = dict(headers or {})
        if token is ADMIN:
            token = tokens.admin_token()
        if token is not None and "Authorization" not in hdrs:
            hdrs["Authorization"] = f"Bearer {token}"
        return request(self.url, method, path, body=body, headers=hdrs, timeout=timeout)

    def stop(self, sig=signal.SIGTERM, timeout=20):
        """Stop the gateway; returns its exit status."""
        if not self.proc or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            raise

    def kill(self):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def close(self):
        """Stop the gateway and remove its log. In sanitizer builds the stop
        is a clean one, so that LeakSanitizer reports what the gateway did
        not free, and any sanitizer report fails the caller."""
        if sanitizer.SANITIZED and self.proc and self.proc.poll() is None:
            self.stop()
        found = sanitizer.reports(self.logs()) if sanitizer.SANITIZED else []
        self.kill()
        _running.discard(self)
        detail = self.logs()[-6000:] if found else ""
        os.unlink(self.log.name)
        assert not found, detail
