"""kubesim scale benchmark (not a timed test; not run by make test).

Creates N queued Jobs in simulated mode, lets Kueue admit them through a
ClusterQueue while W watchers follow Workloads and Jobs, and prints the
throughput (objects/s), the time until every Job was admitted and until
every Job completed, and kubesim's peak memory. Exits non-zero unless every
Job really completed.

The watchers only count event lines (no JSON decoding), so that the Python
client is not what limits the numbers; one more watcher decodes Job events
to time admission and completion.

Usage: TAUGATE_BUILD=build python3 tests/bench/kubesim_bench.py [N] [W]
"""
import http.client
import json
import os
import resource
import signal
import socket
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))
from kubesim import KubeSim  # noqa: E402

KV = "kueue.x-k8s.io/v1beta1"
JOBS = "/apis/batch/v1/namespaces/default/jobs"
DEADLINE_S = 1800


def job(i):
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "b%05d" % i, "namespace": "default",
                         "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
            "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{
                "name": "main", "image": "busybox",
                "resources": {"requests": {"cpu": "100m"}}}]}}}}


def cpu_seconds(pid):
    """User + system CPU time of a process."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Counter:
    """A watcher that counts event lines; reconnects from the latest
    resourceVersion when its stream ends (timeout, 410 Gone)."""

    def __init__(self, ks, path, stop):
        self.ks, self.path, self.stop = ks, path, stop
        self.events = 0
        self.reconnects = 0

    def run(self, rv):
        while not self.stop.is_set():
            try:
                sock = socket.create_connection(("127.0.0.1", self.ks.port), timeout=1)
                sock.sendall(("GET %s?watch=true&resourceVersion=%s HTTP/1.1\r\n"
                              "Host: kubesim\r\nAccept: application/json\r\n\r\n"
                              % (self.path, rv)).encode())
                header, last = True, b""
                while not self.stop.is_set():
                    try:
                        chunk = sock.recv(1 << 16)
                    except socket.timeout:
                        continue
                    if not chunk:
                        break
                    if header:
                        chunk = chunk.split(b"\r\n\r\n", 1)[-1]
                        header = False
                    # Each event ends in a bare \n (JSON holds no raw newline);
                    # the chunked framing adds \r\n pairs, maybe split by recv.
                    split_crlf = last == b"\r" and chunk[:1] == b"\n"
                    self.events += chunk.count(b"\n") - chunk.count(b"\r\n") - split_crlf
                    last = chunk[-1:]
                    if b'"type":"ERROR"' in chunk:
                        break
                sock.close()
            except OSError:
                time.sleep(0.2)
            if not self.stop.is_set():
                self.reconnects += 1
                rv = self.ks.stats()["resourceVersion"]


class Tracker:
    """Decodes Job events: when each Job was admitted (unsuspended) and
    when it completed."""

    def __init__(self, ks, n, stop):
        self.ks, self.n, self.stop = ks, n, stop
        self.admitted, self.complete = {}, {}
        self.all_admitted = self.all_complete = None
        self.done = threading.Event()

    def run(self, rv):
        while not self.stop.is_set() and not self.done.is_set():
            try:
                for ev in self.ks.watch(JOBS, timeout=DEADLINE_S, resourceVersion=str(rv),
                                        timeoutSeconds=str(DEADLINE_S)):
                    obj = ev.get("object", {})
                    rv = obj.get("metadata", {}).get("resourceVersion", rv)
                    name = obj.get("metadata", {}).get("name")
                    now = time.time()
                    if obj.get("spec", {}).get("suspend") is False:
                        self.admitted.setdefault(name, now)
                    if obj.get("status", {}).get("succeeded"):
                        self.complete.setdefault(name, now)
                    if self.all_admitted is None and len(self.admitted) >= self.n:
                        self.all_admitted = now
                    if len(self.complete) >= self.n:
                        self.all_complete = now
                        self.done.set()
                        return
            except Exception:  # the stream broke: resume from the last seen version
                time.sleep(0.2)


def create_all(ks, n, threads=8):
    """POST every Job over one keep-alive connection per thread."""
    local = threading.local()

    def post(i):
        conn = getattr(local, "conn", None)
        if conn is None:
            conn = local.conn = http.client.HTTPConnection("127.0.0.1", ks.port, timeout=60)
        conn.request("POST", JOBS, body=json.dumps(job(i)),
                     headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        body = resp.read()
        if resp.status != 201:
            raise RuntimeError("create b%05d: HTTP %d %s" % (i, resp.status, body[:200]))

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(post, range(n)))


def main():
    # A killed benchmark still stops its kubesim (the finally below).
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(1))
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
    watchers = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    nodes = [{"namePrefix": "bench-node-", "count": 50,
              "capacity": {"cpu": "256", "memory": "1Ti", "pods": "1000"}}]
    ks = KubeSim(simulated=True, nodes=nodes, extra_args=["--no-events", "--sim-duration", "0.2"])
    ks.start()
    stop = threading.Event()
    try:
        ks.create({"apiVersion": KV, "kind": "ResourceFlavor", "metadata": {"name": "rf"}})
        ks.create({"apiVersion": KV, "kind": "ClusterQueue", "metadata": {"name": "cq"},
                   "spec": {"namespaceSelector": {}, "resourceGroups": [{
                       "coveredResources": ["cpu"], "flavors": [{"name": "rf", "resources": [
                           {"name": "cpu", "nominalQuota": "2000"}]}]}]}})
        ks.create({"apiVersion": KV, "kind": "LocalQueue",
                   "metadata": {"name": "lq", "namespace": "default"},
                   "spec": {"clusterQueue": "cq"}})
        start = ks.stats()
        counters = [Counter(ks, "/apis/%s/workloads" % KV if i % 2 else "/apis/batch/v1/jobs",
                            stop) for i in range(watchers)]
        tracker = Tracker(ks, n, stop)
        threads = [threading.Thread(target=c.run, args=(start["resourceVersion"],), daemon=True)
                   for c in counters]
        threads.append(threading.Thread(target=tracker.run, args=(start["resourceVersion"],),
                                        daemon=True))
        for t in threads:
            t.start()
        cpu0 = cpu_seconds(ks.proc.pid)
        client0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.time()
        create_all(ks, n)
        t_create = time.time() - t0
        print("created %d jobs in %.1fs (%.0f creates/s)" % (n, t_create, n / t_create),
              flush=True)
        if not tracker.done.wait(DEADLINE_S):
            print("FAIL: only %d of %d jobs completed within %ds"
                  % (len(tracker.complete), n, DEADLINE_S))
            return 1
        total = tracker.all_complete - t0
        st = ks.stats()
        cpu = cpu_seconds(ks.proc.pid) - cpu0
        client1 = resource.getrusage(resource.RUSAGE_SELF)
        client = (client1.ru_utime + client1.ru_stime) - (client0.ru_utime + client0.ru_stime)
        stop.set()
        # What the tracker saw, checked against the stored Jobs.
        jobs = ks.list("batch/v1", "jobs", "default")
        done = [j for j in jobs if j.get("status", {}).get("succeeded") == 1 and any(
            c["type"] == "Complete" and c["status"] == "True"
            for c in j["status"].get("conditions", []))]
        if len(jobs) != n or len(done) != n:
            print("FAIL: %d jobs stored, %d complete, %d expected" % (len(jobs), len(done), n))
            return 1
        created = sum(st["objects"].values()) - sum(start["objects"].values())
        writes = st["resourceVersion"] - start["resourceVersion"]
        print("all %d jobs admitted after %.1fs and complete after %.1fs (verified: %d/%d "
              "Complete)" % (n, tracker.all_admitted - t0, total, len(done), n))
        print("objects created %d (jobs, workloads, pods): %.0f objects/s; %d writes: %.0f "
              "writes/s; %.0f jobs/s" % (created, created / total, writes, writes / total,
                                         n / total))
        print("watch events delivered: %d over %d watchers (%d reconnects)"
              % (sum(c.events for c in counters), watchers,
                 sum(c.reconnects for c in counters)))
        print("CPU: kubesim %.1fs (%.0f%% of one core), this client %.1fs"
              % (cpu, 100 * cpu / total, client))
        print("kubesim peak RSS: %.1f MiB (%.1f KiB per stored object, watch window included)"
              % (st["peakRssKiB"] / 1024.0,
                 st["peakRssKiB"] / max(1, sum(st["objects"].values()))))
        return 0
    finally:
        stop.set()
        ks.cleanup()


if __name__ == "__main__":
    sys.exit(main())
