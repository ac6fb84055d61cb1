"""kubesim at scale (issue #16 item 6; not a timed test, not run by make test).

For each N (default 1,000 and 10,000, in the same run, each on a fresh
kubesim in simulated mode), creates N Kueue-queued Jobs, waits until every
one is Complete (an informer-style watcher that relists on 410 Gone), and
prints kubesim's peak RSS, its RSS per Job, and its CPU time per Job, then
the ratio of the per-Job CPU at the largest N to the smallest: work
proportional to what changed keeps it near 1.

Usage: TAUGATE_BUILD=build python3 tests/bench/kubesim_scale.py [N ...]
Extra kubesim flags: KS_BENCH_ARGS="--watch-window 20000".
"""
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))
sys.path.insert(0, HERE)
from kubesim import KubeSim  # noqa: E402
from kubesim_bench import KV, JOBS, create_all, cpu_seconds  # noqa: E402

DEADLINE_S = 900


class Informer:
    """Follows Jobs as client-go's reflector does: list, then watch from the
    list's resourceVersion, relisting when the watch answers 410 Gone."""

    def __init__(self, ks, n):
        self.ks, self.n = ks, n
        self.complete = set()
        self.relists = 0
        self.done = threading.Event()

    def _see(self, obj):
        if obj.get("status", {}).get("succeeded"):
            self.complete.add(obj["metadata"]["name"])

    def run(self):
        deadline = time.time() + DEADLINE_S
        while not self.done.is_set() and time.time() < deadline:
            lst = self.ks.get(JOBS)
            for j in lst["items"]:
                self._see(j)
            rv = lst["metadata"]["resourceVersion"]
            try:
                for ev in self.ks.watch(JOBS, timeout=60, resourceVersion=rv,
                                        timeoutSeconds="60"):
                    if ev["type"] == "ERROR":
                        break
                    self._see(ev["object"])
                    if len(self.complete) >= self.n:
                        self.done.set()
                        return
            except Exception:  # a broken stream: relist
                pass
            if len(self.complete) >= self.n:
                self.done.set()
                return
            self.relists += 1


def run_one(n):
    nodes = [{"namePrefix": "bench-node-", "count": 50,
              "capacity": {"cpu": "256", "memory": "1Ti", "pods": "1000"}}]
    extra = ["--no-events", "--sim-duration", "0.2"] + os.environ.get("KS_BENCH_ARGS", "").split()
    ks = KubeSim(simulated=True, nodes=nodes, extra_args=extra)
    ks.start()
    try:
        ks.create({"apiVersion": KV, "kind": "ResourceFlavor", "metadata": {"name": "rf"}})
        ks.create({"apiVersion": KV, "kind": "ClusterQueue", "metadata": {"name": "cq"},
                   "spec": {"namespaceSelector": {}, "resourceGroups": [{
                       "coveredResources": ["cpu"], "flavors": [{"name": "rf", "resources": [
                           {"name": "cpu", "nominalQuota": "2000"}]}]}]}})
        ks.create({"apiVersion": KV, "kind": "LocalQueue",
                   "metadata": {"name": "lq", "namespace": "default"},
                   "spec": {"clusterQueue": "cq"}})
        base = ks.stats()
        inf = Informer(ks, n)
        t = threading.Thread(target=inf.run, daemon=True)
        t.start()
        cpu0 = cpu_seconds(ks.proc.pid)
        t0 = time.time()
        create_all(ks, n)
        if not inf.done.wait(DEADLINE_S):
            raise SystemExit("FAIL: %d of %d jobs complete" % (len(inf.complete), n))
        wall = time.time() - t0
        cpu = cpu_seconds(ks.proc.pid) - cpu0
        st = ks.stats()
        objs = sum(st["objects"].values()) - sum(base["objects"].values())
        # At rest: every Job, pod and Workload cold (store.h), nothing read
        # meanwhile but the statistics (unless cooling is off).
        cooling = "--cool-after" not in extra or float(extra[extra.index("--cool-after") + 1]) > 0
        rest = st if not cooling else ks.wait_for(ks.stats, cond=lambda s: all(
            s["coldObjects"][r] == s["objects"][r] for r in ("jobs", "pods", "workloads")),
            timeout=120, interval=0.5, what="every Job, pod and Workload cold")
        return {"n": n, "wall": wall, "cpu": cpu, "peak": st["peakRssKiB"] / 1024.0,
                "rss": st["rssKiB"] / 1024.0, "objects": objs, "relists": inf.relists,
                "writes": st["resourceVersion"] - base["resourceVersion"],
                "rest_heap": rest["heapInUseKiB"] / 1024.0}
    finally:
        ks.cleanup()


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [1000, 10000]
    rows = [run_one(n) for n in sizes]
    for r in rows:
        print("N=%-6d all Complete after %5.1fs; %d objects, %d writes; kubesim CPU %.1fs "
              "(%.2f ms/Job); peak RSS %.1f MiB (%.1f KiB/Job), RSS at the end %.1f MiB; "
              "%d relists; at rest (all cold) its heap holds %.1f MiB" % (
                  r["n"], r["wall"], r["objects"], r["writes"], r["cpu"],
                  1000 * r["cpu"] / r["n"], r["peak"], 1024 * r["peak"] / r["n"],
                  r["rss"], r["relists"], r["rest_heap"]))
    if len(rows) > 1:
        a, b = rows[0], rows[-1]
        print("CPU per Job at N=%d / at N=%d: %.2f" % (b["n"], a["n"],
                                                        (b["cpu"] / b["n"]) / (a["cpu"] / a["n"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
