"""Every model x cluster pair, upstream (``<shared>/reference/upstream-examples``) and bundled.

Each pair runs ``manifesto config validate SPEC --cluster CLUSTER --user u --namespace ns``
(in-process through ``manifesto.cli.main``) and either passes, or exits 1 with exactly one
line: the accelerator-mismatch error naming the cluster's choices. A platform whose
renderer does not exist yet (Slurm, for now) is checked with ``manifesto explain`` instead,
which resolves without rendering; for Kubernetes that fallback also skips the test (fails
it under ``CI=true``) so a green CI always rendered.

The upstream inputs live in the shared dir: the tests skip when it is missing, except under
``CI=true`` where they fail.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import kit
from kit import cli_in_process, plan_of

UPSTREAM_SUBDIR = "reference/upstream-examples"
REPO = kit.REPO_ROOT


def _models(root: Path) -> list[Path]:
    """Every model file (suffix or not); ``*-base.yaml`` files are only extended, never rendered."""
    return sorted(p for p in (root / "models").rglob("*")
                  if p.is_file() and not p.name.startswith(".") and not p.name.endswith("-base.yaml"))


def _clusters(root: Path) -> list[Path]:
    return sorted(p for p in (root / "clusters").iterdir() if p.is_file() and p.suffix == ".yaml")


def _pairs(root: Path) -> list:
    return [pytest.param(m, c, id=f"{m.relative_to(root / 'models').as_posix()}@{c.stem}")
            for m in _models(root) for c in _clusters(root)]


def _upstream_root() -> Path:
    return kit.shared_dir() / UPSTREAM_SUBDIR


_MISSING = pytest.param(None, None, id="upstream-examples-missing")
UPSTREAM_PAIRS = _pairs(_upstream_root()) if _upstream_root().is_dir() else [_MISSING]
BUNDLED_PAIRS = _pairs(REPO)


MISMATCH = re.compile(
    r"error: (?P<origin>[^\n]+?):(?P<line>\d+):(?P<col>\d+): accelerator: '(?P<accel>[^']+)' is not "
    r"offered by cluster '(?P<cluster>[^']+)'; it offers: (?P<offers>[^\n]+)\n"
)


def _pod_storage(data: dict) -> set[str]:
    """Pod storage requests (ephemeral_storage, shm_size) that some role of the spec makes."""
    return {k for role in data.get("roles") or [] for k in (role.get("resources") or {})
            if k in ("ephemeral_storage", "shm_size")}


def _untabled_warning(model: Path) -> str:
    """Upstream specs may run an image that names no vLLM release (``:nightly``): its arguments
    cannot be checked, and the render says so once (docs/decisions.md)."""
    from manifesto.load.inputs import load_model_data
    from manifesto.resolve.vllm_check import vllm_version

    image = (load_model_data(model).data.get("model") or {}).get("image")
    if not image or vllm_version(image):
        return ""
    return (f"manifesto: warning: the image {image} names no vLLM release; vLLM arguments and VLLM_* variables "
            f"are not checked\n")


def check_pair(model: Path, cluster: Path) -> None:
    """The pair renders, or fails with exactly one expected error: the spec pins an
    accelerator the cluster lacks, or (on Slurm) it asks for Kubernetes-only pod sidecars."""
    from manifesto.cluster import load_cluster
    from manifesto.load.inputs import load_model_data

    profile = load_cluster(str(cluster))
    common = (str(model), "--cluster", str(cluster), "--user", "u", "--namespace", "ns")
    rc, out, err = cli_in_process("config", "validate", *common)
    if rc == 0:
        assert err == _untabled_warning(model), err
        assert out.startswith(f"ok: {model} renders against {profile.name} ("), out
        return
    assert rc == 1, err
    assert out == ""
    data = load_model_data(model).data
    if profile.platform == "slurm" and data.get("runtime", {}).get("sidecars") and "runtime.sidecars" in err:
        assert err.count("\n") == 1 and err.startswith("error: ") and "Slurm" in err, err
        return
    if profile.platform == "slurm" and _pod_storage(data) and ".resources." in err:
        # Kubernetes pod storage requests in the spec are refused on Slurm, naming the field.
        assert err.count("\n") == 1 and err.startswith("error: ") and "is a Kubernetes pod" in err, err
        assert any(f"].resources.{name}: " in err for name in _pod_storage(data)), err
        return
    if kit.fit_refusal(err):  # the model does not fit this cluster's GPUs: one error, placed
        assert err.count("\n") == 1 and err.startswith("error: ") and ".yaml:" in err, err
        return
    match = MISMATCH.fullmatch(err)
    assert match, f"expected only the accelerator-mismatch error, got:\n{err}"
    offers = sorted(profile.profile.accelerators.profiles)
    assert match["cluster"] == profile.name
    assert match["offers"].split(", ") == offers
    assert match["accel"] not in offers
    # It is the spec's own pin (through its extends chain) that the cluster lacks.
    assert data.get("accelerator") == match["accel"]


@pytest.mark.parametrize(("model", "cluster"), UPSTREAM_PAIRS)
def test_upstream_pair(model, cluster):
    kit.require_shared(UPSTREAM_SUBDIR)
    check_pair(model, cluster)


@pytest.mark.parametrize(("model", "cluster"), BUNDLED_PAIRS)
def test_bundled_pair(model, cluster):
    check_pair(model, cluster)


def _renders_somewhere(root: Path) -> None:
    from manifesto.errors import IncompatiblePairError
    from manifesto.cluster import load_cluster

    clusters = [load_cluster(str(c)) for c in _clusters(root)]
    for model in _models(root):
        ok, too_big = [], []
        for cl in clusters:
            try:
                plan_of(model, cl)
            except IncompatiblePairError as exc:
                if kit.fit_refusal(str(exc)):
                    too_big.append(cl.name)
                continue
            ok.append(cl.name)
        # A reference layout the fit check refuses everywhere it could run still resolves.
        assert ok or (root != REPO and too_big), f"{model} resolves against none of the clusters"


def test_every_upstream_model_resolves_on_some_cluster():
    _renders_somewhere(kit.require_shared(UPSTREAM_SUBDIR))


def test_every_bundled_model_resolves_on_some_cluster():
    _renders_somewhere(REPO)


def test_base_files_load_as_parents():
    """``*-base.yaml`` files are not render targets, but they must parse and merge."""
    from manifesto.load.inputs import load_model_data

    bases = sorted(REPO.glob("models/**/*-base.yaml"))
    shared = _upstream_root()
    if shared.is_dir():
        bases += sorted(shared.glob("models/**/*-base.yaml"))
    assert bases
    for base in bases:
        assert load_model_data(base).data["roles"]


# ---- routing profiles and image catalogs through their schemas -----------------------------


def _routing_files() -> list:
    files = [pytest.param(p, id=f"bundled/{p.name}") for p in sorted((REPO / "routing").glob("*.yaml"))]
    shared = _upstream_root()
    if shared.is_dir():
        files += [pytest.param(p, id=f"upstream/{p.name}") for p in sorted((shared / "routing").glob("*.yaml"))]
    elif os.environ.get("CI") == "true":
        files.append(pytest.param(None, id="upstream-missing"))
    return files


@pytest.mark.parametrize("path", _routing_files())
def test_routing_profile_loads(path):
    from manifesto.load.inputs import load_typed
    from manifesto.schema.routing import EndpointPickerConfig

    if path is None:
        kit.require_shared(UPSTREAM_SUBDIR)
    cfg, _ = load_typed(EndpointPickerConfig, path)
    assert cfg.kind == "EndpointPickerConfig"
    declared = {p.ref for p in cfg.plugins}
    assert all(ref.pluginRef in declared for prof in cfg.schedulingProfiles for ref in prof.plugins)


def test_upstream_image_catalog_loads():
    from manifesto.load.inputs import load_typed
    from manifesto.schema.routing import ImageCatalog

    catalog, _ = load_typed(ImageCatalog, kit.require_shared(UPSTREAM_SUBDIR) / "config" / "images.yaml")
    assert "standard" in catalog.vllm


def test_bundled_image_catalog_loads():
    from manifesto.load.catalog import images_path
    from manifesto.load.inputs import load_typed
    from manifesto.schema.routing import ImageCatalog

    catalog, _ = load_typed(ImageCatalog, images_path())
    assert "standard" in catalog.vllm
    assert {"epp", "envoy", "routing_sidecar"} <= set(catalog.llm_d)


def test_upstream_routing_profile_is_used_by_explain():
    """The upstream wide-EP profile drives a P/D spec's endpoint picker configuration."""
    root = kit.require_shared(UPSTREAM_SUBDIR)
    profile = root / "routing" / "wide-ep-lws-config.yaml"
    rc, out, err = cli_in_process("explain", str(REPO / "models/qwen/qwen3-0.6b-pd.yaml"), "--cluster",
                                  str(REPO / "clusters/example-stateless-b200.yaml"), "--user", "u", "--namespace", "ns",
                                  "--routing-profile", str(profile), "--output", "json")
    assert (rc, err) == (0, "")
    import json

    routing = json.loads(out)["routing"]
    assert routing["config_files"] == [["plugins.yaml", profile.read_text(encoding="utf-8")]]


def test_older_and_newer_accelerator_shapes_normalise_to_one_model():
    """Upstream clusters use both ``resource_name`` (older) and ``allocation:`` (newer)."""
    root = kit.require_shared(UPSTREAM_SUBDIR)
    seen = set()
    for path in _clusters(root):
        plan, _, cl = plan_of(REPO / "models/qwen/qwen3-0.6b-pd.yaml", path)
        acc = plan.accelerator
        seen.add(acc.backend)
        assert acc.gpus_per_node >= 1
        if acc.backend == "extended_resource":
            assert acc.resource_name
        elif acc.backend == "slurm":
            assert acc.gres and cl.platform == "slurm"
    assert {"extended_resource", "slurm"} <= seen
