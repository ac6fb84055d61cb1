"""Manifests the kubesim tests build (not in conftest.py: tests/integration has
its own conftest, and `from conftest import` would pick whichever loaded first)."""


def job_manifest(name, command, namespace="default", queue=None, labels=None,
                 requests=None, annotations=None, **spec):
    """A batch/v1 Job dict running `command` (a shell string)."""
    meta = {"name": name, "namespace": namespace, "labels": dict(labels or {})}
    if queue:
        meta["labels"]["kueue.x-k8s.io/queue-name"] = queue
    container = {"name": "main", "image": "busybox:1.36", "command": ["sh", "-c", command]}
    if requests:
        container["resources"] = {"requests": requests}
    tmeta = {"annotations": annotations} if annotations else {}
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
           "spec": dict({"backoffLimit": 0, "template": {"metadata": tmeta, "spec": {
               "restartPolicy": "Never", "containers": [container]}}}, **spec)}
    return job
