"""Python callers written against the reference implementation's documented usage, and the
shipped ``examples/non-indexed-job.yaml``.

The spec documents ``workload_settings(load_cluster(...)).accelerator("gb200")``; the
reference's callers also caught its configuration errors as ``ValueError`` and read
``settings.local_queue``, ``settings.pod`` and ``settings.model_dump()``.
"""

from __future__ import annotations

import pytest

import kit
from manifesto.cluster import load_cluster
from manifesto.errors import IncompatiblePairError, InputError, OpsError, ResolveError, SchemaError
from manifesto.spec import load_spec
from manifesto.workload import workload_settings

ROOT = kit.REPO_ROOT
GB200 = ROOT / "clusters" / "example-gb200.yaml"
EXAMPLE = ROOT / "examples" / "non-indexed-job.yaml"

KUEUE_CLUSTER = """\
name: queued
accelerators:
  default: h200
  profiles:
    h200:
      gpus_per_node: 8
      resource_name: nvidia.com/gpu
      presence_label: nvidia.com/gpu.present
kueue:
  local_queue: benchmark-queue
pod_defaults:
  tolerations:
    - {key: gpu, operator: Exists}
  image_pull_secrets: [registry-credentials]
"""


def test_configuration_errors_are_value_errors(tmp_path):
    assert issubclass(SchemaError, ValueError) and issubclass(IncompatiblePairError, ValueError)
    assert not issubclass(OpsError, ValueError)  # a cluster that misbehaves is not a bad value
    bad = tmp_path / "bad.yaml"
    bad.write_text("release: x\ntopology: aggregated\nroles: [{name: decode, nonsense: 1}]\n")
    with pytest.raises(ValueError) as info:
        load_spec(str(bad), load_cluster(GB200))
    assert isinstance(info.value, InputError)
    with pytest.raises(ValueError, match="is not offered by cluster"):
        workload_settings(load_cluster(GB200)).accelerator("quantum-gpu")


def test_the_documented_usage_and_the_reference_spellings(tmp_path):
    path = tmp_path / "queued.yaml"
    path.write_text(KUEUE_CLUSTER)
    settings = workload_settings(load_cluster(str(path)))
    accelerator = settings.accelerator("h200")  # the spec's example
    assert accelerator.resource_name == "nvidia.com/gpu"
    assert settings.local_queue == settings.queue_name == "benchmark-queue"
    assert settings.pod is settings.placement
    assert settings.pod.image_pull_secrets == ("registry-credentials",)
    assert settings.accelerator("any") == settings.accelerator() == accelerator
    for alias in ("local_queue", "pod"):
        with pytest.raises(AttributeError):
            setattr(settings, alias, None)  # read-only

    dumped = settings.model_dump()
    assert dumped["queue_name"] == "benchmark-queue"
    assert dumped["placement"]["tolerations"] == [{"key": "gpu", "operator": "Exists"}]
    assert dumped["accelerators"]["h200"]["node_selector"] == {"nvidia.com/gpu.present": "true"}
    assert "storage" not in dumped and "fabric" not in dumped and "where" not in dumped
    assert accelerator.model_dump()["gpus_per_node"] == 8
    # plain data: a copy the caller may change without touching the settings
    dumped["placement"]["tolerations"].append("x")
    assert len(settings.placement.tolerations) == 1


def test_a_cluster_profile_named_any_is_taken_literally(tmp_path):
    path = tmp_path / "odd.yaml"
    path.write_text(KUEUE_CLUSTER.replace("    h200:\n", "    any:\n      gpus_per_node: 4\n"
                                          "      resource_name: example.com/gpu\n    h200:\n"))
    settings = workload_settings(load_cluster(str(path)))
    assert settings.accelerator("any").resource_name == "example.com/gpu"


@pytest.mark.integration
def test_shipped_non_indexed_job_renders_and_validates(monkeypatch):
    from manifesto.cli.workload_cmds import render_workload_text
    import yaml

    monkeypatch.chdir(ROOT)
    text = render_workload_text("examples/non-indexed-job.yaml", load_cluster(GB200), "any", "team")
    assert "--accelerator gb200 --namespace team" in text.split("---\n", 1)[0]
    (job,) = [d for d in yaml.safe_load_all(text) if d]
    assert (job["apiVersion"], job["kind"]) == ("batch/v1", "Job")
    assert "completionMode" not in job["spec"] and job["spec"]["suspend"] is True
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"]["limits"] == {"nvidia.com/gpu": "1"}
    assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "example-gpu-queue"
    kit.validate_manifests(text)
