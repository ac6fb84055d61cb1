"""The smallest world a run needs, shared by the end-to-end tests.

kind_cpu_cluster(ks) lays out kubesim like TauGrid's kind smoke test:
namespace `ray`, ResourceFlavor `default-flavor`, ClusterQueue `kind-cpu-cq`
(4 cpu, 12Gi), WorkloadPriorityClass `taugrid-default` and LocalQueue
`kind-cpu`. kind_cpu_workspace(gw) registers the matching workspace `ray`,
its queue, the `kind-cpu-job` profile and the priority class in the gateway."""

import base64
import contextlib
import os

from gateway import Gateway
from paths import BUILD, SHARED

KV = "kueue.x-k8s.io/v1beta1"

RAY_WORKSPACE = [
    ("/v1/admin/workspaces", {"name": "ray", "namespace": "ray", "default_queue": "kind-cpu"}),
    ("/v1/admin/cluster-queues", {"name": "kind-cpu-cq"}),
    ("/v1/admin/workspaces/ray/queues", {"name": "kind-cpu", "cluster_queue": "kind-cpu-cq"}),
    ("/v1/admin/profiles", {"name": "kind-cpu-job", "engine": "job",
                            "allowed_workspaces": ["ray"]}),
    ("/v1/admin/priority-classes", {"name": "taugrid-default", "value": 1000}),
]


def kind_cpu_cluster(ks, cpu="4", memory="12Gi"):
    """Create the kind-cpu Kueue objects in kubesim; returns ks."""
    ks.ensure_namespace("ray")
    ks.create({"apiVersion": KV, "kind": "ResourceFlavor", "metadata": {"name": "default-flavor"},
               "spec": {}})
    ks.create({"apiVersion": KV, "kind": "ClusterQueue", "metadata": {"name": "kind-cpu-cq"},
               "spec": {"namespaceSelector": {}, "queueingStrategy": "BestEffortFIFO",
                        "resourceGroups": [{"coveredResources": ["cpu", "memory"], "flavors": [
                            {"name": "default-flavor", "resources": [
                                {"name": "cpu", "nominalQuota": cpu},
                                {"name": "memory", "nominalQuota": memory}]}]}]}})
    ks.create({"apiVersion": KV, "kind": "WorkloadPriorityClass",
               "metadata": {"name": "taugrid-default"}, "value": 1000})
    ks.create({"apiVersion": KV, "kind": "LocalQueue",
               "metadata": {"name": "kind-cpu", "namespace": "ray"},
               "spec": {"clusterQueue": "kind-cpu-cq"}})
    return ks


def admin_posts(gw, posts, ok=(201,)):
    """POST each (path, body) as a platform admin; each must answer a status in `ok`
    (201: created; add 409 where an earlier test of the module may have made it)."""
    for path, body in posts:
        r = gw.req("POST", path, body=body)
        assert r.status in ok, (path, r)


def kind_cpu_workspace(gw, extra=(), ok=(201,)):
    """Register workspace `ray` and what it uses, then `extra` (path, body) pairs."""
    admin_posts(gw, RAY_WORKSPACE + list(extra), ok)


def smoke_body(script=b"#!/bin/sh\necho hi\n"):
    """A JSON submission of TauGrid's kind smoke test (conformance 01) and
    its entrypoint."""
    with open(os.path.join(SHARED, "conformance", "taugrid", "01-kind-smoke_tau.yaml")) as f:
        spec = f.read()
    return {"spec": spec, "files": {"train.sh": base64.b64encode(script).decode()}}


@contextlib.contextmanager
def kind_cpu_gateway(db_url, threads=None, **env):
    """A gateway without a cluster (runs stay Accepted), workspace `ray`
    registered; `threads` HTTP event loops and as many database connections
    when given, and the settings in `env` (TAUGATE_...). It must exit
    cleanly."""
    if threads:
        env.update(TAUGATE_THREADS=str(threads), TAUGATE_DB_POOL_SIZE=str(threads))
    g = Gateway(BUILD, db_url, extra_env=env or None).start()
    try:
        kind_cpu_workspace(g, ok=(201, 409))  # another gateway may have registered it
        yield g
    finally:
        status = g.stop()
        g.close()
    assert status == 0
