"""Deployment targets against a cluster: whether the artifact may be used here (the kube
context or Slurm host), and how its live objects compare with it.

The artifact itself (``manifesto.build_graph.deployments.TargetArtifact``) comes from the
build graph, fresh; everything here takes it as a plain value.
"""

from __future__ import annotations

import os

from manifesto.errors import OpsError

__all__ = ["target_plan", "check_context", "check_slurm_host",
           "parse_objects", "artifact_digest", "instance_of", "live_objects", "first_difference", "object_states",
           "summarize"]


def target_plan(art):
    """The Plan the artifact was rendered from (what readiness waits for)."""
    from manifesto.cluster import load_cluster
    from manifesto.resolve.plan import Options
    from manifesto.service import plan_for
    from manifesto.spec import load_spec

    cluster = load_cluster(art.cluster_path)
    opts = dict(art.options)
    if opts.get("routing_profile"):
        opts["routing_profile"] = os.path.join(art.root, opts["routing_profile"])
    plan, _ = plan_for(load_spec(art.model_path, cluster), cluster, Options(**opts))
    return plan


# -- where it runs ----------------------------------------------------------------------

def check_context(art, explicit: str | None, current: str | None) -> str:
    """The kube context to use: the target's, when ``--context`` or the current one is it."""
    if art.context is None:
        raise OpsError(f"{art.address} names no kube context; add `context: NAME` to it in BUILD.yaml, so that "
                       "manifesto knows which cluster it belongs to")
    have = explicit or current
    if have != art.context:
        said = f"--context is '{explicit}'" if explicit else f"the current kube context is '{current or '(none)'}'"
        raise OpsError(f"{art.address} belongs to kube context '{art.context}', but {said}; switch with "
                       f"`kubectl config use-context {art.context}` or pass --context {art.context}")
    return art.context


def check_slurm_host(art, ssh_host: str | None, local_host: str) -> None:
    """Refuse unless the host sbatch would run on (the profile's ssh host, else this one) is the target's."""
    if art.slurm_host is None:
        raise OpsError(f"{art.address} names no Slurm host; add `slurm_host: HOST` to it in BUILD.yaml, so that "
                       "manifesto knows which Slurm it belongs to")
    if ssh_host is not None:
        if ssh_host != art.slurm_host:
            raise OpsError(f"{art.address} belongs to Slurm host '{art.slurm_host}', but its cluster profile "
                           f"submits through ssh to '{ssh_host}'")
        return
    if art.slurm_host not in (local_host, local_host.split(".")[0]):
        raise OpsError(f"{art.address} belongs to Slurm host '{art.slurm_host}', but this is '{local_host}' and "
                       "the cluster profile sets no slurm.ssh_host; run it there")


# -- the artifact's objects and their live state ----------------------------------------

def parse_objects(text: str) -> list[dict]:
    """The objects of a Kubernetes artifact, as plain data."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    return [d for d in yaml.load_all(text) if d]


def artifact_digest(objs: list[dict]) -> str | None:
    from manifesto.render.k8s import DIGEST_ANNOTATION

    found = {((o.get("metadata") or {}).get("annotations") or {}).get(DIGEST_ANNOTATION) for o in objs}
    return found.pop() if len(found) == 1 else None


def instance_of(objs: list[dict]) -> str:
    from manifesto.ops.discovery import INSTANCE

    found = {((o.get("metadata") or {}).get("labels") or {}).get(INSTANCE) for o in objs} - {None}
    if len(found) != 1:
        raise OpsError(f"the artifact's objects name {len(found)} instances ({', '.join(sorted(found))}); expected one")
    return found.pop()


def live_objects(kube, objs: list[dict], instance: str) -> dict[tuple[str, str], dict]:
    """The instance's live objects of every kind the artifact holds, by (kind, name)."""
    from manifesto.ops.discovery import resource_of, selector
    from manifesto.ops.kubectl import failure, is_not_served, run

    live: dict[tuple[str, str], dict] = {}
    for kind in dict.fromkeys(o["kind"] for o in objs):
        call = kube.read("get", resource_of(kind), "-l", selector(instance), "-o", "json", check=False)
        result = run(call)
        if not result.ok:
            if is_not_served(result.stderr):
                continue  # the API is not installed: every object of the kind is missing
            raise OpsError(failure(call, result))
        for item in result.json().get("items") or []:
            live[(item.get("kind") or kind, (item.get("metadata") or {}).get("name", ""))] = item
    return live


def first_difference(want, have, path: str = "") -> str | None:
    """The first field of ``want`` that ``have`` lacks or holds differently (None: ``want`` is
    contained in ``have``; fields the API server adds are ignored)."""
    if isinstance(want, dict):
        if not isinstance(have, dict):
            return path or "."
        for key, value in want.items():
            if key not in have:
                return f"{path}.{key}"
            found = first_difference(value, have[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(want, list):
        if not isinstance(have, list) or len(have) != len(want):
            return path
        for i, (a, b) in enumerate(zip(want, have)):
            found = first_difference(a, b, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if str(want) == str(have) and (want is None) == (have is None) else path


def object_states(objs: list[dict], live: dict[tuple[str, str], dict]) -> list[tuple[str, str, str, str]]:
    """(kind, name, state, detail) per artifact object: in-sync, drifted or missing."""
    from manifesto.render.k8s import DIGEST_ANNOTATION

    want_digest = artifact_digest(objs)
    rows = []
    for obj in objs:
        kind, name = obj["kind"], obj["metadata"]["name"]
        have = live.get((kind, name))
        if have is None:
            rows.append((kind, name, "missing", "not in the cluster"))
            continue
        digest = ((have.get("metadata") or {}).get("annotations") or {}).get(DIGEST_ANNOTATION)
        if digest != want_digest:
            rows.append((kind, name, "drifted", f"applied from another artifact ({digest or 'no digest'})"))
            continue
        field = first_difference(obj, have)
        rows.append((kind, name, "drifted", f"{field.lstrip('.')} differs") if field else (kind, name, "in-sync", ""))
    return rows


def summarize(rows: list[tuple[str, str, str, str]]) -> str:
    """in-sync when every object is, missing when none is there, drifted otherwise."""
    states = {r[2] for r in rows}
    if states == {"in-sync"}:
        return "in-sync"
    if states == {"missing"}:
        return "missing"
    return "drifted"
