"""The ``real_cluster`` session fixture: a Kubernetes control plane built from the real
components (``tools/testcluster``: etcd, kube-apiserver, controllers, scheduler, simulated
GPU nodes) and the real ``kubectl`` of the same release.

Tests that use it carry ``pytestmark = realkube.MARKS``: marked ``real_cluster`` and
``integration``, and all in one xdist group, so that one worker starts one cluster and
stops it at the end of its session. ``TESTCLUSTER_ENV`` (the ``DIR/env`` file of a
cluster started by ``tools/testcluster up DIR``) makes the fixture use that cluster and
leave it running. Without Go the tests skip; under ``CI=true`` they fail instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

import kit
from realkube import SCRIPT, Cluster, cache_dir

# Read before the per-test isolation points XDG_CACHE_HOME at a temporary folder: the
# built binaries belong in the user's real cache, where the next run finds them.
_CACHE = cache_dir()


@pytest.fixture(scope="session")
def real_cluster(tmp_path_factory) -> Cluster:
    given = os.environ.get("TESTCLUSTER_ENV")
    if given:
        yield Cluster.from_env(Path(given))
        return
    if shutil.which("go") is None:
        kit.unavailable("Go is not installed: tools/testcluster builds the control plane with it")
    kit.require_shared("k8s-schemas/crds")
    state = tmp_path_factory.mktemp("testcluster")
    env = {**os.environ, "TESTCLUSTER_CACHE": str(_CACHE)}
    up = subprocess.run([str(SCRIPT), "up", str(state)], env=env, capture_output=True, text=True,
                        timeout=3600, check=False)
    if up.returncode != 0:
        pytest.fail(f"tools/testcluster up failed ({up.returncode}):\n{up.stderr[-4000:]}", pytrace=False)
    try:
        yield Cluster.from_env(state / "env")
    finally:
        subprocess.run([str(SCRIPT), "down", str(state)], env=env, capture_output=True, timeout=120,
                       check=False)
