"""The fresh out/ artifact of a deployment target, named by its address or its out/ path.

A deployment target (``kind: deployment`` in BUILD.yaml) fixes model, cluster, namespace,
user, render options and where it runs (a kube context or a Slurm host). Lifecycle
commands use exactly the bytes its build wrote to ``out/deploy/<name>``: a stale or
hand-edited artifact is refused (or rebuilt first when asked).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from manifesto.errors import OpsError

__all__ = ["TargetArtifact", "is_target_ref", "load_target"]


@dataclass(frozen=True)
class TargetArtifact:
    """A fresh deployment artifact and where it belongs."""

    address: str
    rel: str  # out/deploy/<name>.yaml|.sbatch, relative to the workspace root
    path: str
    text: str
    namespace: str
    user: str
    context: str | None
    slurm_host: str | None
    root: str  # the workspace; absolute paths of the inputs, and the render options
    model_path: str
    cluster_path: str
    options: dict

    @property
    def platform(self) -> str:
        return "slurm" if self.rel.endswith(".sbatch") else "kubernetes"


def _as_address(ref: str) -> str | None:
    """``ref`` as a build address: ``//...`` as written, or one written without its leading
    ``//`` (``:NAME``, ``models/qwen:NAME``) when no file of that name exists."""
    if ref.startswith("//"):
        return ref
    if ":" in ref and not os.path.exists(ref):
        return "//" + ref.removeprefix("./")
    return None


def is_target_ref(ref: str | None) -> bool:
    """Whether ``ref`` names a build target (``//...``) or a file below a workspace's out/."""
    if not ref:
        return False
    if _as_address(ref) is not None:
        return True
    return _out_path(ref) is not None


def _out_path(ref: str):
    """(workspace, path relative to out/) when ``ref`` is a file below a workspace's out/."""
    from manifesto.build_graph.workspace import BUILD_FILE, Workspace

    if not os.path.isfile(ref):
        return None
    real = os.path.realpath(ref)
    probe = os.path.dirname(real)
    while True:
        if os.path.basename(probe) == "out" and os.path.isfile(os.path.join(os.path.dirname(probe), BUILD_FILE)):
            return Workspace(os.path.dirname(probe)), os.path.relpath(real, probe).replace(os.sep, "/")
        parent = os.path.dirname(probe)
        if parent == probe:
            return None
        probe = parent


def _address_of(ref: str) -> tuple[str, str | None]:
    """(address, workspace root or None for the working directory's) of ``ref``."""
    address = _as_address(ref)
    if address is not None:
        return address, None
    from manifesto.build_graph.graph import DEPLOY_DIR

    found = _out_path(ref)
    if found is None:  # `status`, `stop`, ... take no spec file: only a target or its out/deploy/ artifact
        from manifesto.edge.escape import terminal

        what = "is not a file below a workspace's out/" if os.path.isfile(ref) else "is no file"
        raise OpsError(f"{terminal(ref)} {what} and not a build address; name a deployment target "
                       f"(`kind: deployment` in BUILD.yaml) by its address, e.g. //:NAME, or by its artifact "
                       f"out/{DEPLOY_DIR}/NAME.yaml")
    ws, rel = found

    head, _, tail = rel.partition("/")
    name, dot, suffix = tail.rpartition(".")
    if head != DEPLOY_DIR or "/" in tail or not dot or suffix not in ("yaml", "sbatch"):
        raise OpsError(f"{ref} is a matrix artifact of the build, rendered with BUILD.yaml's example options; "
                       "deploy a deployment target instead (`kind: deployment` in BUILD.yaml, built into "
                       f"out/{DEPLOY_DIR}/NAME), e.g. `manifesto deploy //:NAME`")
    return f"//:{name}", ws.root


def _read_artifact(root: str, rel: str, address: str) -> bytes | None:
    """The bytes of ``root/rel``, None when missing; never through a symlink, never a FIFO
    (out/ is committed: a pull request can plant either)."""
    from manifesto.edge.raw import TooLarge, read_regular
    from manifesto.edge.fs import UnsafePath

    try:
        return read_regular(os.path.join(root, rel), root=root)
    except TooLarge as exc:
        raise OpsError(f"{rel}: {exc.message}; remove it and run `manifesto build {address}`") from None
    except (FileNotFoundError, NotADirectoryError):
        return None
    except UnsafePath as exc:
        raise OpsError(f"{os.path.relpath(exc.filename, root)} {exc.strerror}; remove it and run "
                       f"`manifesto build {address}`") from None


def load_target(ref: str, *, build: bool = False, allow_stale: bool = False, ui=None) -> TargetArtifact:
    """The deployment artifact ``ref`` names, verified fresh (or, with ``build``, rebuilt;
    ``allow_stale`` takes the bytes in out/ as they are, for commands about what was deployed)."""
    import manifesto.build_graph.api as api
    from manifesto.errors import BuildError

    address, root = _address_of(ref)
    dep, options, ws, cluster = api.deployment(address, root=root)
    report = api.build([address], check=not build, root=ws.root, ui=ui)
    item, row = report.items[0], report.rows[0]
    if row["status"] == "failed":
        raise BuildError(f"{address}: {item.message}")
    rel = row["artifact"]
    path = os.path.join(ws.root, rel)
    data = _read_artifact(ws.root, rel, address)
    problems = [why for where, why in report.problems if where == rel]
    if problems and not (allow_stale and data is not None):
        raise OpsError(f"{rel}: {problems[0]}; run `manifesto build {address}` first (or pass --build to build "
                       "it now)")
    from manifesto.load.digest import digest

    if not problems and digest(data) != item.art_digest:
        raise OpsError(f"{rel} changed while it was checked; run the command again")
    from manifesto.edge.files import decode

    return TargetArtifact(address, rel, path, decode(data, rel, error=OpsError), options["namespace"], options["user"], dep.context,
                          dep.slurm_host, ws.root, os.path.join(ws.root, dep.model),
                          os.path.join(ws.root, cluster), options)
