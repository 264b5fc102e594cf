"""``config export``, ``config import`` and ``config edit``: moving specs in and out of the
user catalog without touching the bundled one."""

from __future__ import annotations

from manifesto.cli.common import run_of, search_of
from manifesto.cli.flags import file_arg
from manifesto.errors import CatalogError
from manifesto.cli.summaries import SUMMARIES

__all__ = ["register", "export_entry", "import_entry", "edit_entry"]

_KINDS = ("models", "clusters", "routing")


def register(csub, add) -> None:
    p = add(csub, "export", help=SUMMARIES["config export"])
    p.add_argument("kind", choices=_KINDS, help="the catalog: models, clusters or routing (profiles)")
    p.add_argument("name", help="the entry's catalog name, e.g. qwen/aggregated")
    p.add_argument("--output", "-o", required=True, metavar="FILE", type=file_arg, help="file to write").complete = "files"
    p.add_argument("--force", action="store_true", help="overwrite an existing file")
    p.set_defaults(func=lambda a: export_entry(a.kind, a.name, a.output, a.force, search_of(a), run=run_of(a)))
    p = add(csub, "import", help=SUMMARIES["config import"])
    p.add_argument("kind", choices=_KINDS, help="the catalog: models, clusters or routing (profiles)")
    p.add_argument("file", help="the spec, cluster profile or routing profile to install").complete = "files"
    p.add_argument("--name", required=True, help="catalog name, e.g. experiments/model")
    p.add_argument("--force", action="store_true", help="overwrite an existing user entry")
    p.set_defaults(func=lambda a: import_entry(a.kind, a.file, a.name, a.force, run=run_of(a)))
    p = add(csub, "edit", help=SUMMARIES["config edit"])
    p.add_argument("kind", choices=_KINDS, help="the catalog: models, clusters or routing (profiles)")
    p.add_argument("name", help="the entry's catalog name; a bundled entry is copied to the user catalog first")
    p.set_defaults(func=lambda a: edit_entry(a.kind, a.name, search_of(a), run=run_of(a)))


def _validate(kind: str, path):
    """Load ``path`` with the schema of ``kind``; returns the merged plain data."""
    from manifesto.load.inputs import load_model, load_typed

    if kind == "models":
        from manifesto.errors import say_warnings

        return say_warnings(load_model(path)[1]).data
    if kind == "clusters":
        from manifesto.schema.compiled import ClusterProfile

        return load_typed(ClusterProfile, path)[1].data
    from manifesto.schema.compiled import EndpointPickerConfig

    return load_typed(EndpointPickerConfig, path)[1].data


def _refuse_overwrite(path, force: bool, what: str) -> None:
    """Only a regular file is ever replaced, and only with ``--force``. A symlink is refused
    even then: replacing it would silently drop the link, following it could write anywhere."""
    from manifesto.edge.fs import target_problem

    problem = target_problem(path)
    if problem:
        raise CatalogError(f"{what} {path} {problem}")
    if path.exists() and not force:
        raise CatalogError(f"{what} {path} already exists; pass --force to overwrite it")


def _write(path, data, what: str) -> None:
    from manifesto.edge.fs import write_atomic

    try:
        write_atomic(path, data)
    except OSError as exc:
        raise CatalogError(f"cannot write {what} {path}: {exc.strerror or exc}") from None


def _user_path(kind: str, name: str):
    from pathlib import Path

    from manifesto.load.catalog import config_home, name_problem
    from manifesto.edge.escape import terminal

    clean = name[:-5] if name.endswith(".yaml") else name
    problem = name_problem(name)
    if problem:  # a look-alike or line-breaking entry: refuse it before anything is written
        raise CatalogError(f"catalog name '{terminal(name, 200)}' is refused: {problem}; use letters, digits, "
                           "'-', '_', '.' and '/' (e.g. experiments/model)")
    if not clean or clean.startswith(("/", ".")) or ".." in Path(clean).parts:
        raise CatalogError(f"catalog name '{name}' must be a relative name such as experiments/model")
    return config_home() / kind / f"{clean}.yaml"


def export_entry(kind: str, name: str, output: str, force: bool, search=None, *, run) -> int:
    from pathlib import Path

    from manifesto.load.catalog import find
    from manifesto.util.yamlemit import dump_yaml

    source = find(kind, name, search=search)
    data = _validate(kind, Path(source))
    target = Path(output)
    _refuse_overwrite(target, force, "output file")
    _write(target, f"# Exported from {kind} entry '{name}' by manifesto config export.\n" + dump_yaml(data),
           "output file")
    run.info(f"wrote {target}")
    return 0


def import_entry(kind: str, file: str, name: str, force: bool, *, run) -> int:
    from pathlib import Path

    source = Path(file)
    if kind == "models":
        from manifesto.load.inputs import load_yaml

        raw, locs = load_yaml(source)
        if isinstance(raw, dict) and "extends" in raw:
            raise CatalogError("import takes a self-contained spec; flatten it first with "
                               "`manifesto config export`", locs.find(("extends",)))
    _validate(kind, source)
    target = _user_path(kind, name)
    _refuse_overwrite(target, force, "user entry")
    from manifesto.edge.files import read_bytes

    _write(target, read_bytes(source, str(source)), "user entry")
    run.info(f"installed {target}")
    return 0


def _copy_with_parents(kind: str, source, target) -> None:
    """Copy a bundled entry into the user catalog, with the relative ``extends`` files it names.

    Every destination must stay inside the catalog's ``kind`` folder: a parent named
    ``../../x`` is refused before anything is written (flatten such a spec with
    ``config export`` and ``config import`` instead).
    """
    import os

    from manifesto.load.inputs import load_yaml

    from manifesto.load.catalog import config_home

    root = os.path.join(os.path.realpath(config_home() / kind), "")
    copies, todo, seen = [], [(source, target)], set()
    while todo:
        src, dst = todo.pop()
        real = os.path.realpath(dst)
        if not real.startswith(root):
            raise CatalogError(f"{source}: the extends chain reaches {src}, whose copy would be written to {real}, "
                               f"outside the user catalog {root.rstrip('/')}; nothing was copied. Flatten the spec "
                               "with `manifesto config export` and `manifesto config import` instead")
        if real in seen:
            continue
        seen.add(real)
        copies.append((src, dst))
        if kind != "models":
            continue
        data, _ = load_yaml(src)
        parent = data.get("extends") if isinstance(data, dict) else None
        if isinstance(parent, str) and not os.path.isabs(parent):
            todo.append((src.parent / parent, dst.parent / parent))
    from manifesto.edge.files import read_bytes

    for src, dst in copies:
        if not os.path.lexists(dst):
            _write(dst, read_bytes(src, str(src)), "user entry")



# What `config edit KIND NEW` opens: a valid minimal entry whose comments name the next fields
# to set (saved unchanged, it still validates).
SKELETONS = {
    "models": """\
# A new model spec: `manifesto explain NAME --cluster C` shows how it resolves,
# `manifesto render manifest NAME --cluster C` what it renders.
release: {release}           # instance name: a DNS label, unique per user and namespace
model:
  id: Qwen/Qwen3-0.6B        # the Hugging Face model id vLLM serves
  # image_ref: vllm.standard # catalog image (catalog/images.yaml)
routing: {{kind: disabled}}    # or {{kind: load_aware, target_role: decode}}, {{kind: pd, ...}}
roles:
  - name: decode
    lws: {{size: 1}}           # nodes per replica; add `replicas: N` for more copies
    parallelism: {{tp: 1}}     # tensor-parallel GPUs (dp, ep: data/expert parallelism)
    # resources: {{cpu: "8", memory: 32Gi}}
    # vllm: {{max_model_len: 8192}}
""",
    "clusters": """\
# A new cluster profile: `manifesto config validate SPEC --cluster NAME` checks it.
name: {release}
platform: kubernetes          # or openshift, slurm (then add a slurm: section)
accelerators:
  default: gpu
  profiles:
    gpu:
      gpus_per_node: 8
      allocation:
        extended_resource: {{resource_name: nvidia.com/gpu}}
# storage, paths, cache: see clusters/example-*.yaml in the bundled catalog
""",
    "routing": """\
# A new endpoint picker policy: select it with --routing-profile NAME.
apiVersion: llm-d.ai/v1alpha1
kind: EndpointPickerConfig
plugins:
  - {{type: queue-scorer}}
  - {{type: max-score-picker}}
schedulingProfiles:
  - name: default
    plugins:
      - {{pluginRef: queue-scorer, weight: 1}}
      - {{pluginRef: max-score-picker}}
""",
}


def skeleton(kind: str, name: str) -> str:
    import re

    release = re.sub(r"[^a-z0-9-]+", "-", name.rsplit("/", 1)[-1].lower()).strip("-")[:40].strip("-") or "new"
    return SKELETONS[kind].format(release=release)


def edit_entry(kind: str, name: str, search=None, *, run) -> int:
    import os
    from pathlib import Path

    from manifesto.load.catalog import config_home, find

    target = _user_path(kind, name)
    if not target.exists():
        try:
            source = Path(find(kind, name, search=search))
        except CatalogError:
            source = None  # a new name starts a new user entry
        if source is not None and config_home() not in source.resolve().parents:
            _copy_with_parents(kind, source, target)
            run.info(f"copied {source} to {target}")
        elif source is None:
            _write(target, skeleton(kind, name).encode(), "user entry")
            run.info(f"new {kind[:-1] if kind != 'routing' else 'routing profile'} {target}, from a skeleton")
    from manifesto.errors import ManifestoError
    from manifesto.ops.programs import edit_file

    editor = os.environ.get("EDITOR") or "vi"
    problem = edit_file(editor, str(target))
    if problem:
        raise CatalogError(f"EDITOR={editor[:60]!r}: cannot start the editor ({problem}); {target} is unchanged")
    try:
        _validate(kind, target)
    except ManifestoError as exc:  # keep the file so the same command can fix it
        raise CatalogError(f"{target} was kept but does not validate; run the same command to fix it:\n"
                           + exc.format()) from None
    run.info(f"{target} is valid")
    return 0
