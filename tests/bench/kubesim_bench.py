"""kubesim scale benchmark (not a timed test; not run by make test).

Creates N queued Jobs in simulated mode, lets Kueue admit them through a
ClusterQueue while W watchers follow Workloads and Jobs, and prints the
throughput (objects/s) and kubesim's peak memory.

Usage: TAUGATE_BUILD=build python3 tests/bench/kubesim_bench.py [N] [W]
"""
import os
import signal
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))
from kubesim import KubeSim  # noqa: E402

KV = "kueue.x-k8s.io/v1beta1"


def main():
    # A killed benchmark still stops its kubesim (the finally below).
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(1))
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
    watchers = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    nodes = [{"namePrefix": "bench-node-", "count": 50,
              "capacity": {"cpu": "256", "memory": "1Ti", "pods": "1000"}}]
    ks = KubeSim(simulated=True, nodes=nodes,
                 extra_args=["--no-events", "--sim-duration", "0.2", "--watch-window", "400000"])
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
        seen = [0] * watchers
        stop = threading.Event()

        def watch(i):
            path = "/apis/%s/workloads" % KV if i % 2 else "/apis/batch/v1/jobs"
            while not stop.is_set():
                try:
                    for _ in ks.watch(path, timeout=600, resourceVersion="1",
                                      timeoutSeconds=600):
                        seen[i] += 1
                        if stop.is_set():
                            return
                except Exception:
                    time.sleep(0.2)
        threads = [threading.Thread(target=watch, args=(i,), daemon=True)
                   for i in range(watchers)]
        for t in threads:
            t.start()

        def job(i):
            return {"apiVersion": "batch/v1", "kind": "Job",
                    "metadata": {"name": "b%05d" % i, "namespace": "default",
                                 "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
                    "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{
                        "name": "main", "image": "busybox",
                        "resources": {"requests": {"cpu": "100m"}}}]}}}}
        t0 = time.time()
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda i: ks.create(job(i)), range(n)))
        t_create = time.time() - t0
        print("created %d jobs in %.1fs (%.0f creates/s)" % (n, t_create, n / t_create))
        while True:
            done = sum(1 for j in ks.list("batch/v1", "jobs", "default")
                       if j.get("status", {}).get("succeeded"))
            if done >= n:
                break
            time.sleep(1)
        total = time.time() - t0
        st = ks.stats()
        objs = sum(st["objects"].values())
        stop.set()
        print("all %d jobs admitted and complete in %.1fs: %.0f jobs/s" % (n, total, n / total))
        print("objects stored %d, resourceVersion %d -> %.0f writes/s"
              % (objs, st["resourceVersion"], st["resourceVersion"] / total))
        print("watch events delivered: %d over %d watchers" % (sum(seen), watchers))
        print("kubesim peak RSS: %.1f MiB" % (st["peakRssKiB"] / 1024.0))
    finally:
        ks.cleanup()


if __name__ == "__main__":
    main()
