"""A stand-in renderer for the build-engine tests (``MANIFESTO_BUILD_RENDERER=fake_renderer``).

It follows the renderer contract of ``manifesto.tasks`` (``run(task, request, store) ->
Outcome``, see ``manifesto.build_graph.renderer``) with a toy input format, one
``key: value`` per line:

    extends: base.yaml          parent file, relative to this one (followed, cycles fail)
    accelerator: gb200          the cluster must list it under ``accelerators:``
    fail: some message          fail with an InputError pointing at this line (listing its inputs)

A cluster lists ``accelerators: a b`` and ``platform: slurm`` for ``.sbatch``. The
artifact holds the file names and contents it read, never an absolute path.
Test hooks (plain environment variables of the test process):

    FAKE_RENDER_LOG    append "<model file>|<cluster file>" for every render
    FAKE_CODE_FILE     one more file in the code fingerprint
    FAKE_RENDER_SPIN   burn this many milliseconds of CPU per render (benchmarks)
    FAKE_RENDER_SLEEP  sleep this many milliseconds per render (kill tests)

An ``extends`` parent that is missing (or a cycle) fails without naming inputs: the build
cannot keep such an outcome and tries again next time.
"""

from __future__ import annotations

import os
import time

from manifesto.errors import ExtendsError, IncompatiblePairError, InputError, ManifestoError, Origin


def __getattr__(name: str):
    """``RenderOptions``: the one Struct of every render option, imported on first use (a
    no-op build must not import msgspec)."""
    if name == "RenderOptions":
        from manifesto.resolve.options import Options

        return Options
    raise AttributeError(name)


def code_fingerprint_paths() -> list[str]:
    extra = os.environ.get("FAKE_CODE_FILE")
    return [os.path.abspath(__file__)] + ([extra] if extra else [])


def run(task, request, store):
    """The build's entry: the RENDER task of a ``PairRequest`` (the store is not used)."""
    from manifesto.tasks import Task

    if task != Task.RENDER:
        return _outcome("failed", reason=f"the test renderer renders pairs only, not {task}")
    return outcome_of(request.spec, request.cluster, request.options)


def render_pair(model: str, cluster: str, options):
    """The outcome of rendering ``model`` on ``cluster``; its error, if any, is raised."""
    outcome = outcome_of(model, cluster, options)
    if outcome.error is not None:
        raise outcome.error
    return outcome


def outcome_of(model: str, cluster: str, options):
    _log(model, cluster)
    _spend_time()
    try:
        chain = _chain(model, ())
    except ManifestoError as exc:  # no inputs named: the build does not keep this outcome
        return _outcome("failed", reason=str(exc), error=exc)
    fields = _fields(chain)
    inputs = (*chain, cluster) + ((options.routing_profile,) if options.routing_profile else ())
    cluster_fields = _fields([cluster])
    refused = _check_accelerator(model, cluster, fields, cluster_fields)
    if refused is not None:
        return _outcome("skipped", reason=str(refused), inputs=inputs, error=refused)
    if "fail" in fields:  # like a careful renderer, say which files the error came from
        path, line, value = fields["fail"]
        err = InputError(value, Origin(os.path.basename(path), line, 1), "fail")
        return _outcome("failed", reason=str(err), inputs=inputs, error=err)
    suffix = ".sbatch" if cluster_fields.get("platform", ("", 0, ""))[2] == "slurm" else ".yaml"
    return _outcome("ok", text=_text(inputs, options), suffix=suffix, inputs=inputs)


def _outcome(status: str, **fields):
    from manifesto.tasks.status import Status
    from manifesto.tasks import Outcome

    return Outcome(Status(status), **fields)


def _log(model: str, cluster: str) -> None:
    log = os.environ.get("FAKE_RENDER_LOG")
    if log:
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(fd, f"{_short(model)}|{os.path.basename(cluster)}\n".encode())
        os.close(fd)


def _short(path: str) -> str:
    parts = path.split(os.sep)
    return "/".join(parts[parts.index("models") + 1:]) if "models" in parts else os.path.basename(path)


def _spend_time() -> None:
    spin = float(os.environ.get("FAKE_RENDER_SPIN") or 0) / 1000
    end = time.process_time() + spin  # CPU time, like a real render, even on a busy machine
    while spin and time.process_time() < end:
        pass
    sleep = float(os.environ.get("FAKE_RENDER_SLEEP") or 0) / 1000
    if sleep:
        time.sleep(sleep)


def _chain(path: str, seen: tuple) -> list[str]:
    if path in seen:
        names = " -> ".join(os.path.basename(p) for p in (*seen, path))
        raise ExtendsError(f"extends cycle: {names}", Origin(os.path.basename(path)))
    if not os.path.isfile(path):
        raise ExtendsError("extends parent not found", Origin(os.path.basename(path)))
    parent = _fields([path]).get("extends")
    if parent is None:
        return [path]
    return _chain(os.path.join(os.path.dirname(path), parent[2]), (*seen, path)) + [path]


def _fields(paths) -> dict:
    """``key -> (file, line, value)``; later files override earlier ones."""
    out = {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                key, sep, value = line.partition(":")
                if sep and not line.startswith((" ", "#")):
                    out[key.strip()] = (path, n, value.strip())
    return out


def _check_accelerator(model, cluster, fields, cluster_fields):
    """The IncompatiblePairError of a pinned accelerator the cluster does not offer, or None."""
    wanted = fields.get("accelerator", (None, 0, ""))[2]
    offered = cluster_fields.get("accelerators", (None, 0, ""))[2].split()
    if wanted and wanted not in offered:
        name = os.path.basename(cluster).removesuffix(".yaml")
        return IncompatiblePairError(
            f"the spec pins accelerator '{wanted}' but cluster '{name}' offers {', '.join(offered) or 'none'}",
            Origin(_short(model)),
        )
    return None


def _text(inputs, options) -> str:
    lines = [f"# options: {options.user} {options.namespace} {options.idle_shutdown} {options.idle_timeout_minutes}"]
    for path in inputs:
        with open(path, encoding="utf-8") as f:
            lines.append(f"--- {os.path.basename(path)}\n{f.read().rstrip()}")
    return "\n".join(lines) + "\n"
