"""Volumes, mounts, cache and log paths for model pods, from the cluster profile."""

from __future__ import annotations

import posixpath
import re

from manifesto.errors import ResolveError
from manifesto.resolve.plan import EnvVar, Mount, RoleStorage, Volume

__all__ = ["is_stateless", "expand", "cache_key_for", "cuda_tag", "plan_storage", "POD_JIT_ROOT"]

POD_JIT_ROOT = "/var/cache/manifesto-jit"
DEFAULT_POD_JIT_SIZE = "32Gi"

# (env var, sub-directory of the JIT cache root); all are cleared after a crash. Kernels
# that compile at start-up (FlashAttention's CuTe-DSL kernels on Blackwell, TileLang,
# FlashInfer's JIT modules) keep their output here so a restart reuses it, and HOME points
# here too, for libraries that only ever write under ~/.cache or ~/.<name>.
_CACHE_ENV = (
    ("VLLM_CACHE_ROOT", "vllm"),
    ("TRITON_CACHE_DIR", "triton"),
    ("TORCHINDUCTOR_CACHE_DIR", "inductor"),
    ("FLASHINFER_WORKSPACE_BASE", "flashinfer"),
    ("FLASH_ATTENTION_CUTE_DSL_CACHE_DIR", "flash-attn-cute"),
    ("CUTE_DSL_CACHE_DIR", "cute-dsl"),
    ("TILELANG_CACHE_DIR", "tilelang"),
    ("XDG_CACHE_HOME", "xdg"),
    ("CUDA_CACHE_PATH", "cuda"),
    ("HOME", "home"),
)
# FlashAttention writes its CuTe-DSL cache only when asked to.
_CACHE_SWITCHES = (("FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED", "1"),)


def is_stateless(cluster) -> bool:
    s, c = cluster.storage, cluster.cache
    return not any((s.shared_volume, s.local_nvme_path, c.hf_host_path, c.jit_host_path, c.hf_home,
                    cluster.logging, cluster.paths.cache_root, cluster.paths.log_root))


def expand(template: str, values: dict[str, str], where: str) -> str:
    """Fill ``{user}``-style placeholders; an unknown one is an error naming the choices.

    ``where`` names the template's source: a cluster field (``paths.cache_root``) or a CLI
    flag (``--cache-root``); it becomes the error's ``path`` for the caller to place.
    """
    try:  # what string.Formatter().parse calls, without the string module (0.4 ms of a cold render)
        from _string import formatter_parser
    except ImportError:  # pragma: no cover - other interpreters
        import string

        formatter_parser = string.Formatter().parse
    try:
        fields = [(f, spec, conv) for _, f, spec, conv in formatter_parser(template) if f is not None]
    except ValueError as exc:  # a lone '{' or '}'
        raise ResolveError(f"malformed template '{template}': {exc}; write {{{{ or }}}} for a literal brace",
                           path=where) from None
    for name, spec, conv in fields:
        if spec or conv:
            raise ResolveError(f"placeholder '{{{name}}}' in '{template}' takes no format spec or conversion",
                               path=where)
    for name in [f for f, _, _ in fields]:
        if name not in values:
            raise ResolveError(
                f"unknown placeholder '{{{name}}}' in '{template}'; known: "
                + ", ".join("{" + k + "}" for k in sorted(values)), path=where)
    return template.format_map(values)


def cache_key_for(image: str, explicit: str | None) -> str:
    """The compiled-cache namespace: cache.key, else the image digest or tag."""
    if explicit:
        return explicit
    if "@" in image:
        algo, _, digest = image.split("@", 1)[1].partition(":")
        return f"{algo}-{digest[:16]}"
    last = image.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else "latest"


def cuda_tag(arch_list: str | None) -> str:
    """A path-safe form of the accelerator's TORCH_CUDA_ARCH_LIST (``10.0+PTX`` -> ``10.0-ptx``)."""
    if not arch_list:
        return "default"
    return re.sub(r"[^a-z0-9.]+", "-", arch_list.lower()).strip("-")


def _static_prefix(template: str) -> str:
    head = template.split("{", 1)[0]
    return head.rstrip("/") if "{" not in head else head


def _source(overrides: dict[str, str | None], key: str, fields: list[tuple[str, str | None]]):
    """(template, where it came from): the CLI flag override, else the first cluster field set."""
    if overrides.get(key):
        return overrides[key], "--" + key.replace("_", "-")
    return next(((value, name) for name, value in fields if value), (None, ""))


def _hf_home(cluster) -> tuple[str | None, str]:
    """Where model weights are cached, and which cluster field chose it: an explicit
    cache.hf_home (or the cache.hf_host_path mount), else node-local NVMe (fast loads, no
    shared-filesystem contention), else the shared volume."""
    st, cc = cluster.storage, cluster.cache
    if cc.hf_home:
        return cc.hf_home, "cluster cache.hf_home"
    if cc.hf_host_path:
        return cc.hf_host_path, "cluster cache.hf_host_path"
    if st.local_nvme_path:
        return posixpath.join(st.local_nvme_path, "huggingface"), "cluster storage.local_nvme_path"
    if st.shared_volume is not None:
        return posixpath.join(st.shared_mount_path, "huggingface"), "cluster storage.shared_volume"
    return None, ""


def plan_storage(cluster, *, kind: str, role: str, values: dict[str, str], ephemeral: str | None,
                 cleanup: bool, overrides: dict[str, str | None], multi_port: bool = False
                 ) -> tuple[RoleStorage, list[EnvVar]]:
    """The storage and cache env of one role. ``kind`` is the workload kind. ``multi_port``: the
    role's pods run several DP API servers (vLLM's multi-port external load balancing); on a
    persistent cache root shared by the release's roles, such a role compiles into a
    subdirectory of its own, so prefill and decode never compile into one directory at once."""
    if is_stateless(cluster) and not any(overrides.values()):
        return RoleStorage(), []
    vols: list[Volume] = []
    mounts: list[Mount] = []
    env: list[EnvVar] = []
    st, cc, paths = cluster.storage, cluster.cache, cluster.paths

    if st.shared_volume is not None:
        if not st.shared_mount_path:
            raise ResolveError("storage.shared_volume needs storage.shared_mount_path", path="storage.shared_volume")
        vols.append(Volume("shared", dict(st.shared_volume)))
        mounts.append(Mount("shared", st.shared_mount_path))
    if st.local_nvme_path:
        # Directory, not DirectoryOrCreate: on a node without the NVMe mount the pod must fail
        # rather than fill the root disk with model weights.
        vols.append(Volume("local-nvme", {"hostPath": {"path": st.local_nvme_path, "type": "Directory"}}))
        mounts.append(Mount("local-nvme", st.local_nvme_path))
    if cc.hf_host_path:
        vols.append(Volume("hf-cache", {"hostPath": {"path": cc.hf_host_path, "type": "DirectoryOrCreate"}}))
        mounts.append(Mount("hf-cache", cc.hf_home or cc.hf_host_path))

    log_dir = None
    lg = cluster.logging
    log_root, log_source = _source(overrides, "log_root",
                                   [("logging.root", lg.root)] if lg else [("paths.log_root", paths.log_root)])
    if lg is not None and lg.pvc:
        shared_claim = (st.shared_volume or {}).get("persistentVolumeClaim", {}).get("claimName")
        same = shared_claim == lg.pvc and st.shared_mount_path == lg.mount_path
        if not same:
            if not lg.mount_path:
                raise ResolveError("logging.pvc needs logging.mount_path", path="logging.pvc")
            vols.append(Volume("logs", {"persistentVolumeClaim": {"claimName": lg.pvc}}))
            mounts.append(Mount("logs", lg.mount_path))
    if log_root:
        log_dir = posixpath.join(expand(log_root, values, log_source), role)

    hf_home, hf_source = _hf_home(cluster)
    if hf_home:
        env.append(EnvVar("HF_HOME", hf_home, source=hf_source))

    cache_root, cache_source = _source(overrides, "cache_root", [("paths.cache_root", paths.cache_root)])
    # Checked for every role, though only LeaderWorkerSet pods use it: a bad template must not
    # pass `config validate` just because today's spec has no multi-node role.
    cache_template = expand(cache_root, values, cache_source) if cache_root else None
    if kind == "Deployment":
        size = ephemeral or DEFAULT_POD_JIT_SIZE
        vols.append(Volume("jit-cache", {"emptyDir": {"sizeLimit": size}}))
        mounts.append(Mount("jit-cache", POD_JIT_ROOT))
        jit_root = POD_JIT_ROOT
    elif cache_root:
        jit_root = cache_template
        if multi_port and kind == "LeaderWorkerSet" and "{role}" not in cache_root:
            jit_root = posixpath.join(jit_root, role)
        if cc.jit_host_path:
            prefix = _static_prefix(cache_root)
            vols.append(Volume("jit-cache", {"hostPath": {"path": cc.jit_host_path, "type": "DirectoryOrCreate"}}))
            mounts.append(Mount("jit-cache", prefix))
    elif st.shared_volume is not None:
        jit_root = posixpath.join(st.shared_mount_path, values["user"], "jit-cache", values["gpu_arch"],
                                  values["cache_key"], values["release"])
        if multi_port and kind == "LeaderWorkerSet":
            jit_root = posixpath.join(jit_root, role)
    else:
        jit_root = None

    cache_dirs: list[str] = []
    if jit_root:
        source = "cluster paths.cache_root" if kind != "Deployment" else "pod JIT cache"
        for name, sub in _CACHE_ENV:
            path = posixpath.join(jit_root, sub)
            env.append(EnvVar(name, path, source=source))
            cache_dirs.append(path)
        env += [EnvVar(name, value, source=source) for name, value in _CACHE_SWITCHES]
    storage = RoleStorage(
        volumes=tuple(vols), mounts=tuple(mounts), log_dir=log_dir, cache_dirs=tuple(cache_dirs),
        cleanup_on_crash=cleanup and bool(cache_dirs),
        marker_dir=jit_root,
    )
    return storage, env
