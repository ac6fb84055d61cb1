"""Fixtures for the kubesim tests: a fresh simulator per test."""

import pytest

from kubesim import KubeSim, kubectl_binary


@pytest.fixture
def ks():
    """A running kubesim in process mode (real pod processes)."""
    with KubeSim() as sim:
        yield sim


@pytest.fixture
def kubectl_bin():
    path = kubectl_binary()
    if not path:
        pytest.skip("kubectl 1.32 is not installed")
    return path
