"""A DisaggregatedSet through deploy, ready, status, a move back to the pair, and stop,
against the fake kubectl (which plays the v0.10.0 controller: each role's pods, labelled as
it labels them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubefake import FAKE, FakeCluster, install
from manifesto.cli import main
from manifesto.ops.kubectl import Kube
from manifesto.ops.targets import live_objects, object_states, parse_objects

ROOT = Path(__file__).resolve().parents[2]
K3 = str(ROOT / "models" / "kimi-k3" / "1P-1D-DP4-TP4.yaml")
LWS010 = str(ROOT / "clusters" / "example-gb200-lws.yaml")
GB200 = str(ROOT / "clusters" / "example-gb200.yaml")
INSTANCE = "kimi-k3-1p-1d-dp4tp4"
COMMON = ("--user", "u", "--namespace", "ns")

pytestmark = pytest.mark.integration


@pytest.fixture
def fake(tmp_path, monkeypatch, capsys) -> FakeCluster:
    return FakeCluster(install(tmp_path, monkeypatch, FAKE.read_text()), capsys, main)


def _pods(fake: FakeCluster) -> list[dict]:
    """The model server pods (not the endpoint picker's or the idle controller's)."""
    return [o for o in fake.state["objects"] if o["kind"] == "Pod"
            and o["metadata"]["labels"].get("app.kubernetes.io/component") == "model-server"]


def test_deploy_ready_status_and_back_to_the_pair(fake, tmp_path):
    rc, out, err = fake.run("deploy", K3, "--cluster", LWS010, *COMMON)
    assert rc == 0, err
    assert fake.objects("DisaggregatedSet") == [INSTANCE]
    pods = _pods(fake)
    assert len(pods) == 8  # 4 prefill + 4 decode pods, one group each
    revisions = {p["metadata"]["labels"]["disaggregatedset.x-k8s.io/revision"] for p in pods}
    assert len(revisions) == 1
    (revision,) = revisions
    # The controller's LeaderWorkerSets, one a role: <set>-<slice>-<revision>-<role>.
    assert fake.objects("LeaderWorkerSet") == [f"{INSTANCE}-0-{revision}-decode", f"{INSTANCE}-0-{revision}-prefill"]
    assert {p["metadata"]["labels"]["manifesto.llm-d.ai/role"] for p in pods} == {"prefill", "decode"}

    rc, _, err = fake.run("ready", K3, "--cluster", LWS010, *COMMON, "--timeout", "60")
    assert rc == 0, err
    assert f"{INSTANCE} is ready" in err

    # status: an applied artifact's objects against the live ones, as `manifesto status`
    # compares them (the digest annotation ties them to the artifact).
    artifact = tmp_path / "k3.yaml"
    rc, _, err = fake.run("render", "file", K3, "--cluster", LWS010, *COMMON, "-o", str(artifact))
    assert rc == 0, err
    rc, _, err = fake.run("file", "apply", str(artifact))
    assert rc == 0, err
    objs = parse_objects(artifact.read_text())

    def states() -> dict[str, str]:
        rows = object_states(objs, live_objects(Kube(namespace="ns"), objs, INSTANCE))
        return {f"{kind}/{name}": state + (f" ({detail})" if state == "drifted" else "") for kind, name, state, detail in rows}
    assert set(states().values()) == {"in-sync"}, states()

    # The idle-shutdown controller's patch: both roles at zero.
    state = fake.state
    (ds,) = [o for o in state["objects"] if o["kind"] == "DisaggregatedSet"]
    for role in ds["spec"]["roles"]:
        role["spec"]["replicas"] = 0
    fake._write(state)
    assert {k: v for k, v in states().items() if v != "in-sync"} == {f"DisaggregatedSet/{INSTANCE}": "idle"}

    # The same spec on a cluster without LWS 0.10: the set goes first, then the pair comes.
    rc, out, err = fake.run("deploy", K3, "--cluster", GB200, *COMMON)
    assert rc == 0, err
    assert f"deleting disaggregatedsets.disaggregatedset.x-k8s.io/{INSTANCE} first: its roles move out" in err
    assert fake.objects("DisaggregatedSet") == []
    assert fake.objects("LeaderWorkerSet") == [f"{INSTANCE}-decode", f"{INSTANCE}-prefill"]
    assert not any("disaggregatedset.x-k8s.io/revision" in p["metadata"]["labels"] for p in _pods(fake))

    # ... and back into the set: the pair's LeaderWorkerSets go first.
    rc, out, err = fake.run("deploy", K3, "--cluster", LWS010, *COMMON)
    assert rc == 0, err
    assert f"its role moves into DisaggregatedSet {INSTANCE}" in err
    assert fake.objects("DisaggregatedSet") == [INSTANCE]
    assert all(n.startswith(f"{INSTANCE}-0-") for n in fake.objects("LeaderWorkerSet"))

    rc, _, err = fake.run("stop", "-n", "ns", "--instance", INSTANCE, "--user", "u")
    assert rc == 0, err
    assert fake.objects("DisaggregatedSet") == [] and _pods(fake) == [] and fake.objects("LeaderWorkerSet") == []
    assert not [o for o in fake.state["objects"] if o["kind"] == "Pod"]


def test_a_template_change_rolls_both_roles_to_one_new_revision(fake, tmp_path):
    assert fake.run("deploy", K3, "--cluster", LWS010, *COMMON)[0] == 0
    before = {p["metadata"]["labels"]["disaggregatedset.x-k8s.io/revision"] for p in _pods(fake)}
    spec = tmp_path / "k3.yaml"
    spec.write_text(f"extends: {K3}\nroles:\n  decode:\n    vllm: {{max_num_seqs: 16}}\n")
    assert fake.run("deploy", str(spec), "--cluster", LWS010, *COMMON)[0] == 0
    after = {p["metadata"]["labels"]["disaggregatedset.x-k8s.io/revision"] for p in _pods(fake)}
    assert len(before) == len(after) == 1 and before != after
    assert len(_pods(fake)) == 8
    children = fake.objects("LeaderWorkerSet")
    assert children == [f"{INSTANCE}-0-{r}-{role}" for r in after for role in ("decode", "prefill")]
    rc, _, err = fake.run("ready", str(spec), "--cluster", LWS010, *COMMON, "--timeout", "60")
    assert rc == 0 and f"{INSTANCE} is ready" in err, err
    # The spec as it was is not what runs: ready waits for its revision (which never comes).
    rc, _, err = fake.run("ready", K3, "--cluster", LWS010, *COMMON, "--timeout", "0")
    assert rc != 0 and "its controller has not made the LeaderWorkerSets of the applied templates yet" in err, err
