"""Nothing bypasses the edge: outside ``manifesto/edge`` and the program runners, no module
opens a file, changes the file system (deletes, renames, makes folders or links, changes
modes or times), starts a process, speaks HTTP or opens a socket itself, and no module
anywhere evaluates text as code or unpickles.

The scan reads the syntax tree of every module (so a script shipped as text, such as the
Slurm discovery snippet, is not code here) and fails naming each use and its line. The
allowed places are listed with the reason they may.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "manifesto"

#: Module (relative to the package) -> what it may do, and why.
ALLOWED: dict[str, tuple[set[str], str]] = {
    "render/k8s/idle.py": ({"open"}, "reads the idle controller's source from its own package folder, once"),
    "ops/kubectl.py": ({"subprocess"}, "the kubectl runner: a fixed argv, a deadline, escaped output"),
    "ops/slurm.py": ({"subprocess"}, "the Slurm runner (sbatch, squeue, scancel, ssh)"),
    "ops/programs.py": ({"subprocess"}, "the runner of the user's own interactive programs ($EDITOR, fzf)"),
    "testing/fake_kubectl.py": ({"open", "subprocess", "mutate"},
                                "a stand-in kubectl program for trying the lifecycle, not the tool"),
    "render/k8s/idle_controller.py": ({"open", "urllib", "http.client", "socket", "mutate"},
                                      "runs inside the cluster as the idle controller; shipped as text"),
}

#: Names whose import is a way around the edge.
_MODULES = {"subprocess": "subprocess", "urllib": "urllib", "urllib3": "urllib", "httpx": "urllib",
            "requests": "urllib", "http": "http.client", "socket": "socket", "pickle": "pickle",
            "shelve": "pickle", "pty": "subprocess", "webbrowser": "subprocess", "ctypes": "ctypes"}
#: Calls that read or run: name or dotted attribute -> kind.
_CALLS = {"open": "open", "io.open": "open", "os.open": "os.open", "os.fdopen": "open", "os.popen": "subprocess",
          "os.system": "subprocess", "os.spawnv": "subprocess", "os.spawnvp": "subprocess", "os.execv": "subprocess",
          "os.execvp": "subprocess", "os.execvpe": "subprocess", "os.posix_spawn": "subprocess",
          "eval": "eval", "exec": "eval", "compile": "eval", "__import__": "eval", "marshal.loads": "marshal"}
_MUTATIONS = ("os.remove", "os.unlink", "os.rename", "os.renames", "os.replace", "os.rmdir", "os.removedirs",
              "os.mkdir", "os.makedirs", "os.symlink", "os.link", "os.utime", "os.chmod", "os.chown", "os.lchown",
              "os.truncate", "os.mkfifo", "os.mknod", "shutil.rmtree", "shutil.move", "shutil.copy", "shutil.copy2",
              "shutil.copyfile", "shutil.copytree", "shutil.copymode", "shutil.copystat", "shutil.chown")
_CALLS.update(dict.fromkeys(_MUTATIONS, "mutate"))
#: Methods of pathlib.Path that read, write or change the file system (``replace`` and ``rename``
#: are left out: str.replace and the YAML maps' rename have the names too; ``os.replace`` and
#: ``os.rename`` are among the calls).
_METHODS = {"read_text": "open", "read_bytes": "open", "write_text": "open", "write_bytes": "open",
            "unlink": "mutate", "rmdir": "mutate", "mkdir": "mutate", "touch": "mutate",
            "symlink_to": "mutate", "hardlink_to": "mutate", "chmod": "mutate", "lchmod": "mutate"}
#: marshal decodes the build manifest, which state.py checks field by field (tests/edge/test_edge_state.py).
_MARSHAL_OK = {"build_graph/state.py"}


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _own_modules(tree: ast.AST) -> set[str]:
    """Names a module binds to manifesto's own modules (``from manifesto.edge import files``,
    ``import manifesto.load.yamlio as yamlio``): ``files.read_text(...)`` is the edge, not pathlib."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("manifesto"):
            names.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.asname or a.name for a in node.names if a.name.startswith("manifesto"))
    return names


def uses(path: Path) -> list[tuple[int, str, str]]:
    """(line, kind, what) for every way around the edge in one module."""
    found = []
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    own = _own_modules(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                if top in _MODULES and (top != "http" or alias.name.startswith("http.client")):
                    found.append((node.lineno, _MODULES[top], f"import {alias.name}"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            top = node.module.split(".")[0]
            if top in _MODULES and (top != "http" or node.module == "http.client"
                                    or any(a.name == "client" for a in node.names)):
                found.append((node.lineno, _MODULES[top], f"from {node.module} import ..."))
        elif isinstance(node, ast.Call):
            name = _dotted(node.func)
            if name in _CALLS:
                found.append((node.lineno, _CALLS[name], f"{name}(...)"))
            elif isinstance(node.func, ast.Attribute) and node.func.attr in _METHODS and not (
                    isinstance(node.func.value, ast.Name) and node.func.value.id in own):
                found.append((node.lineno, _METHODS[node.func.attr], f".{node.func.attr}(...)"))
    return found


def test_nothing_outside_the_edge_reads_runs_or_connects():
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("edge/"):
            continue
        allowed, _why = ALLOWED.get(rel, (set(), ""))
        for line, kind, what in uses(path):
            if kind in allowed or (kind == "marshal" and rel in _MARSHAL_OK):
                continue
            problems.append(f"manifesto/{rel}:{line}: {what} ({kind}) bypasses manifesto.edge")
    assert not problems, "\n".join(problems)


def test_the_edge_itself_never_evaluates_text():
    problems = [f"manifesto/{p.relative_to(PACKAGE).as_posix()}:{line}: {what}"
                for p in sorted((PACKAGE / "edge").rglob("*.py"))
                for line, kind, what in uses(p) if kind in ("eval", "pickle", "marshal", "ctypes")]
    assert not problems, "\n".join(problems)


def test_the_scan_sees_every_kind_of_bypass(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import subprocess\nfrom urllib.request import urlopen\nimport http.client\nfrom http import client\n"
        "import socket\nimport pickle\nopen('x')\nimport os\nos.open('x', 0)\nos.system('x')\n"
        "from pathlib import Path\nPath('x').read_text()\neval('1')\nexec('1')\nimport marshal\nmarshal.loads(b'')\n"
        "TEXT = 'open(1); import subprocess'\nfrom manifesto import yamlio\nyamlio.read_text('x')\n"
        "os.unlink('x')\nos.replace('a', 'b')\nimport shutil\nshutil.rmtree('d')\nPath('x').unlink()\n"
        "Path('d').mkdir()\nos.makedirs('d')\nos.symlink('a', 'b')\nos.rename('a', 'b')\n'x'.replace('a', 'b')\n",
        encoding="utf-8")
    kinds = [kind for _line, kind, _what in uses(sample)]
    assert kinds == ["subprocess", "urllib", "http.client", "http.client", "socket", "pickle", "open", "os.open",
                     "subprocess", "open", "eval", "eval", "marshal", "mutate", "mutate", "mutate", "mutate", "mutate",
                     "mutate", "mutate", "mutate"]
    assert all(rel.endswith(".py") and (PACKAGE / rel).is_file() or rel == "ops/programs.py" for rel in ALLOWED)


def test_one_home_for_each_file_primitive():
    """Issue 37: file-system access lives in ``manifesto/edge`` only, and each primitive once:
    one ``read_bytes`` (``edge/files.py``) and one atomic write (``edge/fs.py``,
    ``write_atomic``), where ``util/fsutil.py`` and ``build_graph/fsio.py`` had one each."""
    defined: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), rel)):
            if isinstance(node, ast.FunctionDef) and node.name in ("read_bytes", "atomic_write", "write_atomic"):
                defined.setdefault(node.name, []).append(rel)
    assert defined == {"read_bytes": ["edge/files.py"], "write_atomic": ["edge/fs.py"]}
    assert not (PACKAGE / "util" / "fsutil.py").exists() and not (PACKAGE / "build_graph" / "fsio.py").exists()
