"""Fixtures for the kubesim tests: a fresh simulator per test."""
import os

import pytest

from kubesim import KubeSim, kubectl_binary


@pytest.fixture
def ks():
    """A running kubesim in process mode (real pod processes)."""
    sim = KubeSim()
    sim.start()
    try:
        yield sim
        sim.stop()
        assert sim.sanitizer_errors() == [], sim.read_log()
    finally:
        sim.cleanup()


@pytest.fixture
def kubectl_bin():
    path = kubectl_binary()
    if not path:
        pytest.skip("kubectl 1.32 is not installed")
    return path


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
