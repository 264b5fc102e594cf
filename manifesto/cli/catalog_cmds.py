"""``config export``, ``config import`` and ``config edit``: moving specs in and out of the
user catalog without touching the bundled one."""

from __future__ import annotations

from manifesto.cli.common import info
from manifesto.errors import CatalogError

__all__ = ["register", "export_entry", "import_entry", "edit_entry"]

_KINDS = ("models", "clusters", "routing")


def register(csub, add) -> None:
    p = add(csub, "export", help="write a self-contained copy of an entry (model extends flattened)")
    p.add_argument("kind", choices=_KINDS)
    p.add_argument("name")
    p.add_argument("--output", "-o", required=True, metavar="FILE", help="file to write").complete = "files"
    p.add_argument("--force", action="store_true", help="overwrite an existing file")
    p.set_defaults(func=lambda a: export_entry(a.kind, a.name, a.output, a.force))
    p = add(csub, "import", help="validate a file and install it in the user catalog")
    p.add_argument("kind", choices=_KINDS)
    p.add_argument("file").complete = "files"
    p.add_argument("--name", required=True, help="catalog name, e.g. experiments/model")
    p.add_argument("--force", action="store_true", help="overwrite an existing user entry")
    p.set_defaults(func=lambda a: import_entry(a.kind, a.file, a.name, a.force))
    p = add(csub, "edit", help="edit the user-catalog copy of an entry in $EDITOR (bundled entries are copied first)")
    p.add_argument("kind", choices=_KINDS)
    p.add_argument("name")
    p.set_defaults(func=lambda a: edit_entry(a.kind, a.name))


def _validate(kind: str, path):
    """Load ``path`` with the schema of ``kind``; returns the merged plain data."""
    from manifesto.load import load_model, load_typed

    if kind == "models":
        return load_model(path)[1].data
    if kind == "clusters":
        from manifesto.schema.cluster import ClusterProfile

        return load_typed(ClusterProfile, path)[1].data
    from manifesto.schema.routing import EndpointPickerConfig

    return load_typed(EndpointPickerConfig, path)[1].data


def _refuse_overwrite(path, force: bool, what: str) -> None:

    if path.exists() and not force:
        raise CatalogError(f"{what} {path} already exists; pass --force to overwrite it")


def _user_path(kind: str, name: str):
    from pathlib import Path

    from manifesto.catalog import config_home

    clean = name[:-5] if name.endswith(".yaml") else name
    if not clean or clean.startswith(("/", ".")) or ".." in Path(clean).parts:
        raise CatalogError(f"catalog name '{name}' must be a relative name such as experiments/model")
    return config_home() / kind / f"{clean}.yaml"


def export_entry(kind: str, name: str, output: str, force: bool) -> int:
    from pathlib import Path

    from manifesto.catalog import find
    from manifesto.fsutil import write_atomic
    from manifesto.yamlemit import dump_yaml

    source = find(kind, name)
    data = _validate(kind, Path(source))
    target = Path(output)
    _refuse_overwrite(target, force, "output file")
    write_atomic(target, f"# Exported from {kind} entry '{name}' by manifesto config export.\n" + dump_yaml(data))
    info(f"wrote {target}")
    return 0


def import_entry(kind: str, file: str, name: str, force: bool) -> int:
    from pathlib import Path

    from manifesto.fsutil import write_atomic

    source = Path(file)
    if kind == "models":
        from manifesto.load import load_yaml

        raw, locs = load_yaml(source)
        if isinstance(raw, dict) and "extends" in raw:
            raise CatalogError("import takes a self-contained spec; flatten it first with "
                               "`manifesto config export`", locs.find(("extends",)))
    _validate(kind, source)
    target = _user_path(kind, name)
    _refuse_overwrite(target, force, "user entry")
    write_atomic(target, source.read_bytes())
    info(f"installed {target}")
    return 0


def _copy_with_parents(kind: str, source, target) -> None:
    """Copy a bundled entry into the user catalog, with the relative ``extends`` files it names."""
    import os

    from manifesto.fsutil import write_atomic
    from manifesto.load import load_yaml

    todo = [(source, target)]
    while todo:
        src, dst = todo.pop()
        if not dst.exists():
            write_atomic(dst, src.read_bytes())
        if kind != "models":
            continue
        data, _ = load_yaml(src)
        parent = data.get("extends") if isinstance(data, dict) else None
        if isinstance(parent, str) and not os.path.isabs(parent):
            todo.append((src.parent / parent, dst.parent / parent))


def edit_entry(kind: str, name: str) -> int:
    import os
    from pathlib import Path

    import subprocess

    from manifesto.catalog import config_home, find

    target = _user_path(kind, name)
    if not target.exists():
        try:
            source = Path(find(kind, name))
        except CatalogError:
            source = None  # a new name starts a new user entry
        if source is not None and config_home() not in source.resolve().parents:
            _copy_with_parents(kind, source, target)
            info(f"copied {source} to {target}")
        elif source is None:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.touch()
    import shlex

    editor = os.environ.get("EDITOR") or "vi"
    from manifesto.errors import ManifestoError

    subprocess.run([*shlex.split(editor), str(target)], check=False)
    try:
        _validate(kind, target)
    except ManifestoError as exc:  # keep the file so the same command can fix it
        raise CatalogError(f"{target} was kept but does not validate; run the same command to fix it:\n"
                           + exc.format()) from None
    info(f"{target} is valid")
    return 0
