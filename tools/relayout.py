"""Move modules to the package layout of issue 26 and rewrite every reference to them.

Run from the repository root, in a clean work tree:

    python tools/relayout.py            # git mv what is still at an old path, then rewrite
    python tools/relayout.py --check    # list what would change; exit 1 if anything would

After a merge: run it, commit, then ``python tools/relayout.py --check`` must print nothing
(a "merge by hand" line means a branch edited a module at its old path and git kept both
files), and ``pytest tests/test_import_cycles.py tests/test_layers.py`` must pass.

It is safe to run again at any time, for instance after merging a branch that still
imports ``manifesto.catalog``: files already at their new path are not moved, and
references already spelled the new way are left as they are. Commit the moves before
the rewrite (``--move-only``, commit, then ``--rewrite-only``) so ``git log --follow``
and a merge can see the renames.

What it rewrites, in manifesto/, tests/, benchmarks/, tools/, docs/, README.md and
pyproject.toml:

- import statements, at any indentation (a function's own imports too):
  ``import manifesto.x``, ``from manifesto.x import y``, ``from manifesto import x``
  (split into one statement per new home, keeping each local name);
- dotted names anywhere else: ``mock.patch("manifesto.x.y")``, importlib strings,
  import-linter contracts, entry points (``manifesto.x:main``), prose;
- file paths ``manifesto/x.py``;
- ``from manifesto.p import m`` in a module of ``p`` (``m`` a module) becomes
  ``import manifesto.p.m as m`` when ``p``'s ``__init__`` imports modules of its own: the
  ``from`` form would make that ``__init__`` part of an import cycle
  (tests/test_import_cycles.py).

``MOVES`` moves modules; ``SYMBOLS`` records functions that moved between modules (the
code move itself was a commit of its own): a ``from`` import of one is redirected, and a
use through a module alias (``checks.validate``) is reported by ``--check`` for a hand edit.

One old module path, ``manifesto.load``, is now a package. ``manifesto.load.NAME``
keeps its meaning when NAME is a module of the new package (in ``MOVES`` or on disk), and
``manifesto.load`` alone means the package; anything else under it was the old module's
and goes to ``manifesto.load.inputs``.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import subprocess
import sys

#: old module -> new module. Keep entries forever: a re-run fixes late imports of old paths.
MOVES = {
    # load/: reading YAML, loading inputs, the catalogs, the reference implementation's spellings
    "manifesto.yamlio": "manifesto.load.yamlio",
    "manifesto.load": "manifesto.load.inputs",
    "manifesto.catalog": "manifesto.load.catalog",
    "manifesto.legacy": "manifesto.load.spellings",
    "manifesto.digest": "manifesto.load.digest",
    # util/: small modules any layer may use
    "manifesto.fsutil": "manifesto.edge.fs",
    "manifesto.hashing": "manifesto.util.hashing",
    "manifesto.numbers": "manifesto.util.numbers",
    "manifesto.quantity": "manifesto.util.quantity",
    "manifesto.expr": "manifesto.resolve.expr",
    "manifesto.rules": "manifesto.util.rules",
    "manifesto.status": "manifesto.tasks.status",
    "manifesto.yamlemit": "manifesto.util.yamlemit",
    "manifesto.outputs": "manifesto.util.outputs",
    # the Plan's neighbours
    "manifesto.options": "manifesto.resolve.options",
    "manifesto.explain": "manifesto.resolve.explain",
    # review/: what a change to out/ means for a running deployment
    "manifesto.build_graph.semdiff": "manifesto.review.semdiff",
    # all argparse under cli/
    "manifesto.build_graph.cli": "manifesto.cli.build_cmds",
    # a new workspace's files
    "manifesto.scaffold": "manifesto.build_graph.scaffold",
    # stand-ins for trying the product without a cluster
    "manifesto.fake_kubectl": "manifesto.testing.fake_kubectl",
    # issue 37: one home per concept. File-system access lives in edge/ (the confined
    # opener and atomic writes; the build's stat signatures and file digests); util/ keeps
    # only what several layers share, each other module goes to the package that owns it;
    # tasks/inputs.py becomes a package of one module per input kind (``plan`` keeps the
    # resolve step; what moved out of it is in SYMBOLS).
    "manifesto.util.fsutil": "manifesto.edge.fs",
    "manifesto.build_graph.fsio": "manifesto.edge.signatures",
    "manifesto.util.expr": "manifesto.resolve.expr",
    "manifesto.util.gitops_rules": "manifesto.build_graph.gitops_rules",
    "manifesto.util.status": "manifesto.tasks.status",
    "manifesto.tasks.inputs": "manifesto.tasks.inputs.plan",
}

#: old dotted name of a function or class -> its new dotted name (moved by hand).
SYMBOLS: dict[str, str] = {
    # issue 26: schema.checks <-> quick was a cycle; validating moved out of checks
    "manifesto.schema.checks.compiled_class": "manifesto.schema.validation.compiled_class",
    "manifesto.schema.checks.validate": "manifesto.schema.validation.validate",
    "manifesto.schema.checks.validation_error": "manifesto.schema.validation.validation_error",
    "manifesto.schema.checks.validator": "manifesto.schema.validation.validator",
    "manifesto.schema.checks.field_names": "manifesto.schema.validation.field_names",
    # issue 26: diff --base is review, not the build graph's business
    "manifesto.build_graph.api.semantic_diff": "manifesto.review.base.semantic_diff",
    # issue 37: tasks/inputs.py split by input kind (what stayed is in tasks/inputs/plan.py)
    "manifesto.tasks.inputs._images": "manifesto.tasks.inputs.images._images",
    "manifesto.tasks.inputs.load_images": "manifesto.tasks.inputs.images.load_images",
    "manifesto.tasks.inputs._catalog_architecture": "manifesto.tasks.inputs.architecture._catalog_architecture",
    "manifesto.tasks.inputs.catalog_record": "manifesto.tasks.inputs.architecture.catalog_record",
    "manifesto.tasks.inputs.load_architecture": "manifesto.tasks.inputs.architecture.load_architecture",
    "manifesto.tasks.inputs._read_config_json": "manifesto.tasks.inputs.config_json.read_config_json",
    "manifesto.tasks.inputs._config_json_path": "manifesto.tasks.inputs.config_json.config_json_path",
    "manifesto.tasks.inputs._hf_cache_config": "manifesto.tasks.inputs.hf_cache.hf_cache_config",
    "manifesto.tasks.inputs.load_routing_profile": "manifesto.tasks.inputs.routing.load_routing_profile",
    "manifesto.tasks.inputs.refuse_slurm": "manifesto.tasks.inputs.monitoring.refuse_slurm",
    "manifesto.tasks.inputs.monitoring_text": "manifesto.tasks.inputs.monitoring.monitoring_text",
    # issue 37: build_graph/fsio.py's names that now live elsewhere (its read_bytes and
    # atomic_write are gone on purpose: use edge.signatures.holds, edge.fs.write_atomic)
    "manifesto.build_graph.fsio.TMP_MARK": "manifesto.edge.fs.TMP_MARK",
    "manifesto.build_graph.fsio.digest": "manifesto.load.digest.digest",
    # issue 37: engine.Session split by concern (the graph's loading, the store's bound)
    "manifesto.build_graph.engine._cached_config": "manifesto.build_graph.sources._cached_config",
    "manifesto.build_graph.engine._listing_ok": "manifesto.build_graph.sources._listing_ok",
    "manifesto.build_graph.engine._dirs_unchanged": "manifesto.build_graph.sources._dirs_unchanged",
    "manifesto.build_graph.engine._store_estimate": "manifesto.build_graph.store_bound._estimate",
    # issue 37: the rest of engine.Session by concern (planning, a pair's job, saving the manifest)
    "manifesto.build_graph.engine.Item": "manifesto.build_graph.planning.Item",
    "manifesto.build_graph.engine._why_inputs": "manifesto.build_graph.planning._why_inputs",
    "manifesto.build_graph.engine._SAVE_EVERY_NS": "manifesto.build_graph.saving._SAVE_EVERY_NS",
    "manifesto.build_graph.engine._SAVE_SHARE": "manifesto.build_graph.saving._SAVE_SHARE",
}

#: docstrings of the packages the moves create (written when a package has no __init__.py yet)
PACKAGES = {
    "manifesto/load": "Reading inputs: YAML with positions (``yamlio``), loading and validating model specs and\n"
                      "cluster profiles (``inputs``), the catalogs (``catalog``), the reference implementation's\n"
                      "spellings (``spellings``) and content digests with the code fingerprint (``digest``).\n\n"
                      "Importing the package is cheap: each module loads what it needs.\n",
    "manifesto/util": "Small modules any layer may use: atomic writes (``fsutil``), hashes, bounded numbers,\n"
                      "Kubernetes quantities, the ``computed`` expression evaluator, value grammars\n"
                      "(``rules``), the build's vocabularies (``status``), the YAML writer and the\n"
                      "``-o/--output`` printer. They import only each other and ``manifesto.errors``.\n",
    "manifesto/review": "Reviewing a change to ``out/``: the semantic diff of rendered artifacts (``semdiff``)\n"
                        "and ``diff --base REV`` (``base``).\n",
    "manifesto/testing": "Stand-ins for trying manifesto without a cluster (``manifesto-fake-kubectl``).\n",
    "manifesto/tasks/inputs": "The loading around resolution, one module per input kind: the image catalog\n"
                              "(``images``), a model's architecture (``architecture``: the bundled records;\n"
                              "``config_json``: a spec's config.json; ``hf_cache``: the Hugging Face cache),\n"
                              "routing profiles (``routing``), the resolve step of a pair's tasks on loaded\n"
                              "inputs and the Plan's warnings (``plan``), and the monitoring artifact's text\n"
                              "with its Slurm refusal (``monitoring``).\n\n"
                              "Importing the package is cheap: it imports none of its modules.\n",
}

ROOTS = ("manifesto", "tests", "benchmarks", "tools", "docs")
FILES = ("README.md", "pyproject.toml")
SUFFIXES = (".py", ".md", ".toml", ".txt", ".cfg", ".ini")
#: this script's table and its test name old paths on purpose
SELF = {os.path.join("tools", "relayout.py"), os.path.join("tests", "test_relayout.py")}

DOTTED = re.compile(r"(?<![\w.])manifesto(?:\.\w+)+")
PATH = re.compile(r"(?<![\w./-])manifesto/((?:\w+/)*\w+)\.py\b")
#: markdown and prose: ``from X import a, b`` on one line (Python files go through ast instead)
#: (also a statement quoted as a string on a line of its own, as a code generator writes it)
FROM_LINE = re.compile(r"^(?P<indent>[ \t>]*(?P<q>[\"']?))from[ \t]+(?P<mod>manifesto(?:\.\w+)*)[ \t]+import[ \t]+"
                       r"(?P<names>\w+(?:[ \t]+as[ \t]+\w+)?(?:[ \t]*,[ \t]*\w+(?:[ \t]+as[ \t]+\w+)?)*)"
                       r"(?P<rest>(?P=q),?[ \t]*(?:#.*)?)$", re.M)


def path_of(module: str) -> str:
    return module.replace(".", "/")


def on_disk(module: str) -> bool:
    p = path_of(module)
    return os.path.isfile(p + ".py") or os.path.isfile(os.path.join(p, "__init__.py"))


def _new_children(package: str) -> set[str]:
    """Names of modules under ``package`` in the new layout (table and disk)."""
    names = {v[len(package) + 1:].split(".")[0] for v in MOVES.values() if v.startswith(package + ".")}
    d = path_of(package)
    if os.path.isdir(d):
        names |= {n[:-3] if n.endswith(".py") else n for n in os.listdir(d)
                  if n.endswith(".py") or os.path.isfile(os.path.join(d, n, "__init__.py"))}
    return names


#: old module paths that are now package paths
AMBIGUOUS = {old for old in MOVES if any(new.startswith(old + ".") for new in MOVES.values())}


def new_name(dotted: str) -> str:
    """``dotted`` (a module, or a name inside one) spelled for the new layout."""
    parts = dotted.split(".")
    for n in range(len(parts), 1, -1):
        head, tail = ".".join(parts[:n]), parts[n:]
        if head in SYMBOLS:
            return ".".join([SYMBOLS[head], *tail])
        if head in MOVES:
            if head in AMBIGUOUS and (not tail or tail[0] in _new_children(head)):
                return dotted  # already the package's own name
            return ".".join([MOVES[head], *tail])
    return dotted


def _split_from(module: str, names: list[tuple[str, str | None]]) -> list[tuple[str, list[tuple[str, str | None]]]]:
    """``from module import names`` as (module, names) groups in the new layout, in first-seen order."""
    groups: dict[str, list[tuple[str, str | None]]] = {}
    for name, alias in names:
        full = f"{module}.{name}"
        # ``from manifesto import load`` names a module: the old one, never the new package
        moved = MOVES[full] if full in AMBIGUOUS else new_name(full)
        if name == "*" or moved == full and new_name(module) == module:
            target, leaf = module, name
        elif moved != full:
            target, leaf = moved.rsplit(".", 1)
        else:
            target, leaf = new_name(module), name
        local = alias or name
        groups.setdefault(target, []).append((leaf, None if local == leaf else local))
    return list(groups.items())


def _render_from(indent: str, groups, rest: str = "", every: bool = False) -> str:
    lines = []
    for target, names in groups:
        spelled = ", ".join(n if a is None else f"{n} as {a}" for n, a in names)
        lines.append(f"{indent}from {target} import {spelled}")
    if every or "noqa" in rest:
        lines = [line + rest for line in lines]
    else:
        lines[-1] += rest
    return "\n".join(lines)


def rewrite_python(text: str) -> str:
    """Import statements first (with ast: exact extents, function bodies included), then names."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return rewrite_text(text)
    lines = text.splitlines(keepends=True)
    edits = []  # (first line index, last line index, replacement lines)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and \
                (node.module == "manifesto" or node.module.startswith("manifesto.")):
            names = [(a.name, a.asname) for a in node.names]
            groups = _split_from(node.module, names)
            if groups == [(node.module, names)]:
                continue
        elif isinstance(node, ast.Import) and any(new_name(a.name) != a.name for a in node.names):
            groups = None
        else:
            continue
        first, last = node.lineno - 1, node.end_lineno - 1
        before = lines[first][:node.col_offset]
        after = lines[last][node.end_col_offset:].rstrip("\n")
        if before.strip() or (after.strip() and not after.strip().startswith("#")):
            continue  # shares its line with other code: the dotted pass below handles what it can
        if groups is None:
            spelled = ", ".join(new_name(a.name) + (f" as {a.asname}" if a.asname else "") for a in node.names)
            new = f"{before}import {spelled}{after}"
        else:
            new = _render_from(before, groups, after)
        edits.append((first, last, new + "\n"))
    for first, last, new in sorted(edits, reverse=True):
        lines[first:last + 1] = [new]
    return rewrite_text("".join(lines))


def _module_of(path: str) -> str | None:
    """The dotted module name of a file under manifesto/, else None."""
    parts = os.path.normpath(path)[:-3].split(os.sep)
    if parts[0] != "manifesto":
        return None
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _init_imports_own(package: str) -> bool:
    """Whether ``package``'s ``__init__.py`` imports one of its own modules (anywhere in it)."""
    init = os.path.join(path_of(package), "__init__.py")
    if not os.path.isfile(init):
        return False
    with open(init, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.startswith(package + ".") for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and \
                (node.module.startswith(package + ".") or node.module == package):
            return True
    return False


def direct_submodules(text: str, module: str) -> str:
    """``from P import m`` inside package P (m a module of P) becomes ``import P.m as m``, when
    P's ``__init__`` imports modules of its own.

    The ``from`` form runs P's own ``__init__`` code to look ``m`` up, so the module
    graph counts an import of P: P's ``__init__`` importing any of its modules that
    import P so is a cycle (issue 26: ``build_graph``, ``cli``, ``render/slurm``).
    """
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    lines = text.splitlines(keepends=True)
    edits = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
                and (module == node.module or module.startswith(node.module + "."))
                and node.module.startswith("manifesto")):
            continue
        if node.module == "manifesto" or not _init_imports_own(node.module):
            continue
        subs = [a for a in node.names if on_disk(f"{node.module}.{a.name}")]
        if not subs:
            continue
        first, last = node.lineno - 1, node.end_lineno - 1
        before = lines[first][:node.col_offset]
        after = lines[last][node.end_col_offset:].rstrip("\n")
        if before.strip() or (after.strip() and not after.strip().startswith("#")):
            continue
        out = [f"{before}import {node.module}.{a.name} as {a.asname or a.name}" for a in subs]
        rest = [a for a in node.names if a not in subs]
        if rest:
            out.append(f"{before}from {node.module} import "
                       + ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in rest))
        out[-1] += after
        edits.append((first, last, "\n".join(out) + "\n"))
    for first, last, new in sorted(edits, reverse=True):
        lines[first:last + 1] = [new]
    return "".join(lines)


def _from_line(m: re.Match) -> str:
    names = []
    for part in m["names"].split(","):
        words = part.split()
        names.append((words[0], words[2] if len(words) == 3 else None))
    groups = _split_from(m["mod"], names)
    if groups == [(m["mod"], names)]:
        return m.group(0)
    return _render_from(m["indent"], groups, m["rest"], every=bool(m["q"]))


#: a dotted name ending in one of these is a file name (``manifesto.rules.yml``), not a module
EXTENSIONS = {"yml", "yaml", "json", "txt", "md", "py", "sh", "toml", "sbatch", "lua"}


def _dotted(m: re.Match) -> str:
    name = m.group(0)
    return name if name.rsplit(".", 1)[1] in EXTENSIONS else new_name(name)


def rewrite_text(text: str) -> str:
    text = FROM_LINE.sub(_from_line, text)
    text = DOTTED.sub(_dotted, text)

    def path(m: re.Match) -> str:
        module = "manifesto." + m[1].replace("/", ".")
        if module.endswith(".__init__"):
            return m.group(0)
        moved = MOVES[module] if module in AMBIGUOUS else new_name(module)  # a .py file is a module
        return m.group(0) if moved == module else path_of(moved) + ".py"

    return PATH.sub(path, text)


def files() -> list[str]:
    out = [f for f in FILES if os.path.isfile(f)]
    for root in ROOTS:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
            out += [os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith(SUFFIXES)]
    return [f for f in out if os.path.normpath(f) not in SELF]


def git(*args: str) -> None:
    subprocess.run(["git", *args], check=True)


def move(dry: bool) -> list[str]:
    done = []
    for old, new in MOVES.items():
        src, dst = path_of(old) + ".py", path_of(new) + ".py"
        if os.path.isfile(src) and os.path.exists(dst):
            # a merge brought the old file back beside the moved one (git did not see the rename)
            done.append(f"merge by hand: {src} and {dst} both exist; fold {src}'s changes into {dst}, then git rm it")
            continue
        if not os.path.isfile(src):
            continue
        done.append(f"git mv {src} {dst}")
        if dry:
            continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        git("mv", src, dst)
    return done


def packages(dry: bool) -> list[str]:
    done = []
    for folder, doc in PACKAGES.items():
        init = os.path.join(folder, "__init__.py")
        if os.path.isdir(folder) and not os.path.exists(init):
            done.append(f"create {init}")
            if not dry:
                with open(init, "w", encoding="utf-8") as fh:
                    fh.write(f'"""{doc}"""\n')
                git("add", init)
    return done


#: a use of a moved function through a module alias, e.g. ``checks.validate(``
def _alias_uses(text: str) -> list[str]:
    found = []
    for old in SYMBOLS:
        module, name = old.rsplit(".", 1)
        leaf = module.rsplit(".", 1)[1]
        found += [f"{leaf}.{name}" for _ in re.finditer(rf"(?<![\w.]){leaf}\.{name}\b", text)]
    return found


def rewrite(dry: bool) -> list[str]:
    done = []
    for f in files():
        with open(f, encoding="utf-8") as fh:
            text = fh.read()
        new = rewrite_python(text) if f.endswith(".py") else rewrite_text(text)
        module = _module_of(f) if f.endswith(".py") else None
        if module:
            new = direct_submodules(new, module)
        if new != text:
            done.append(f"rewrite {f}")
            if not dry:
                with open(f, "w", encoding="utf-8") as fh:
                    fh.write(new)
        done += [f"hand edit {f}: {use} moved ({SYMBOLS_BY_LEAF[use]})" for use in _alias_uses(new)]
    return done


SYMBOLS_BY_LEAF = {f"{k.rsplit('.', 2)[1]}.{k.rsplit('.', 1)[1]}": v for k, v in SYMBOLS.items()}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--check", action="store_true", help="list what would change; exit 1 if anything would")
    p.add_argument("--move-only", action="store_true", help="git mv only (commit that on its own)")
    p.add_argument("--rewrite-only", action="store_true", help="rewrite references only")
    args = p.parse_args(argv)
    if not os.path.isdir("manifesto") or not os.path.isfile("pyproject.toml"):
        p.error("run from the repository root")
    todo = []
    if not args.rewrite_only:
        todo += move(args.check)
    if not args.move_only:
        todo += packages(args.check)
        todo += rewrite(args.check)
    for line in todo:
        print(line)
    if args.check:
        return 1 if todo else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
