"""Multi-port DP roles on a persistent cache root compile into a subdirectory per role:
prefill and decode of one release never compile into one directory at once."""

from __future__ import annotations

from pathlib import Path

from kit import plan_of

ROOT = Path(__file__).resolve().parents[2]
GB200 = str(ROOT / "clusters/example-gb200.yaml")
DSV4 = str(ROOT / "models/deepseek-v4/1P-EP8-1D-EP8.yaml")
KIMI_RANKS = str(ROOT / "models/kimi-k3/1P-1D-DP4-TP4.yaml")


def _env(role, name):
    return next(e.value for e in role.env if e.name == name)


def test_multi_port_roles_get_a_cache_directory_each():
    plan = plan_of(DSV4, GB200)[0]
    roles = {r.name: r for r in plan.roles}
    assert {r.layout.launch for r in roles.values()} == {"multi-port"}
    base = "/mnt/shared/u/jit-cache/gb200/10.0-ptx/v0.33.0/dsv4-1p-ep8-1d-ep8"
    for name, role in roles.items():
        assert role.storage.marker_dir == f"{base}/{name}"
        assert _env(role, "VLLM_CACHE_ROOT") == f"{base}/{name}/vllm"
        assert _env(role, "TILELANG_CACHE_DIR") == f"{base}/{name}/tilelang"
        assert all(d.startswith(f"{base}/{name}/") for d in role.storage.cache_dirs)
    assert not set(roles["prefill"].storage.cache_dirs) & set(roles["decode"].storage.cache_dirs)


def test_a_cache_root_template_naming_the_role_is_not_split_again(tmp_path):
    cluster = tmp_path / "templated.yaml"
    line = "  cache_root: /mnt/shared/{user}/jit-cache/{gpu_arch}/{cuda}/{cache_key}/{release}\n"
    text = Path(GB200).read_text()
    assert line in text
    cluster.write_text(text.replace("name: example-gb200", "name: templated")
                       .replace(line, "  cache_root: /cache/{user}/{release}/{role}\n"))
    plan = plan_of(DSV4, str(cluster))[0]
    assert {r.name: r.storage.marker_dir for r in plan.roles} == {
        "decode": "/cache/u/dsv4-1p-ep8-1d-ep8/decode", "prefill": "/cache/u/dsv4-1p-ep8-1d-ep8/prefill"}
    cluster.write_text(cluster.read_text().replace("/{role}\n", "\n"))
    plan = plan_of(DSV4, str(cluster))[0]
    assert {r.name: r.storage.marker_dir for r in plan.roles} == {
        "decode": "/cache/u/dsv4-1p-ep8-1d-ep8/decode", "prefill": "/cache/u/dsv4-1p-ep8-1d-ep8/prefill"}


def test_one_server_per_process_roles_keep_the_release_directory():
    plan = plan_of(KIMI_RANKS, GB200)[0]
    assert {r.layout.launch for r in plan.roles} == {"external-rank"}
    assert len({r.storage.marker_dir for r in plan.roles}) == 1
