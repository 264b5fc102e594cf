#!/usr/bin/env python3
"""Derive the table of llm-d-router endpoint-picker plugins and flags from the router's source.

Not run by CI (it needs a clone of github.com/llm-d/llm-d-router). Run it when the catalog's
router pin moves, and commit its output:

    python3 tools/gen_router_table.py GIT_DIR v0.10.0 main    # writes manifesto/data/llm-d-router-<ref>.json

GIT_DIR is any clone (a bare one will do); nothing is checked out, files are read with
``git show REF:path``. For each ref it reads:

* the plugin registrations of the endpoint picker (``fwkplugin.Register(pkg.TypeConst,
  fwkplugin.StabilityX, pkg.Factory)`` in ``cmd/epp/runner/runner.go``), the type names and
  stability levels (Alpha, Beta, Stable) behind the constants, and for each factory the struct
  it decodes its parameters into (``rawParameters.Decode(&params)``; the loader's decoder has
  DisallowUnknownFields) with that struct's JSON fields, embedded structs inlined and nested
  structs listed with their own fields (strictness reaches them too). The decoder is followed
  into a helper of the factory's package it is handed to, at any argument position, and a
  local copied from a package variable (``params := defaultConfig``) takes that variable's
  type. A factory that captures the raw bytes (``json.RawMessage``) and then tries several
  structs in turn with ``StrictDecoder(raw).Decode(&x)`` gets the first as ``parameters`` and
  the others, in order, as ``alternatives`` (``disagg-profile-handler``: nested, then the
  deprecated flat spelling);
* the apiVersions the config loader accepts (``llm-d.ai`` first; the deprecated group after);
* the EPP flags (``fs.XxxVar(&opts.F, "name", ...)`` in ``pkg/epp/server/options.go`` and the
  runner) and the P/D sidecar's flags (``pkg/sidecar/proxy/options.go``, ``cmd/pd-sidecar``).

This is a reader of Go source by regular expressions, not a Go parser: what it cannot follow
(a factory that hands its decoder to a helper it cannot find) it records as not strict, so
Manifesto checks the plugin type but not its parameters, rather than guessing.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FORMAT = 1
MODULE = "github.com/llm-d/llm-d-router/"
RUNNER = "cmd/epp/runner/runner.go"


class Repo:
    def __init__(self, git_dir: str, ref: str) -> None:
        self.git_dir, self.ref = git_dir, ref
        self.commit = self._git("rev-parse", f"{ref}^{{commit}}").strip()
        self.files = [p for p in self._git("ls-tree", "-r", "--name-only", self.commit).splitlines()
                      if p.endswith(".go") and not p.endswith("_test.go")]

    def _git(self, *args: str) -> str:
        return subprocess.run(["git", "-C", self.git_dir, *args], check=True, capture_output=True,
                              text=True).stdout

    @lru_cache(maxsize=None)
    def read(self, path: str) -> str:
        return self._git("show", f"{self.commit}:{path}")

    @lru_cache(maxsize=None)
    def package(self, directory: str) -> list[tuple[str, str]]:
        """(path, source) of every non-test Go file directly in ``directory``."""
        return [(p, self.read(p)) for p in self.files if p.rsplit("/", 1)[0] == directory]


def imports(source: str) -> dict[str, str]:
    """alias -> directory in the repo, for the repo's own imports."""
    out = {}
    for alias, path in re.findall(r'^\s*(\w+\s+)?"' + re.escape(MODULE) + r'([^"]+)"', source, re.M):
        out[alias.strip() or path.rsplit("/", 1)[-1]] = path
    return out


def block(source: str, start: int) -> str:
    """The text from ``start`` through the brace that closes the first ``{`` after it."""
    i = source.index("{", start)
    depth = 0
    for j in range(i, len(source)):
        if source[j] == "{":
            depth += 1
        elif source[j] == "}":
            depth -= 1
            if depth == 0:
                return source[start:j + 1]
    return source[start:]


def const_value(repo: Repo, directory: str, name: str, depth: int = 0) -> str | None:
    """The string a constant names, following ``X = otherpkg.Y`` and ``X = Y`` a few steps."""
    for _, src in repo.package(directory):
        m = re.search(r"\b" + name + r'(?:[ \t]+\w+)?\s*=\s*(?:"([^"]+)"|(\w+)\.(\w+)\b|(\w+)\s*$)', src, re.M)
        if not m:
            continue
        if m.group(1) is not None:
            return m.group(1)
        if depth > 4:
            return None
        if m.group(2):
            target = imports(src).get(m.group(2))
            return const_value(repo, target, m.group(3), depth + 1) if target else None
        return const_value(repo, directory, m.group(4), depth + 1)
    return None


def find_func(repo: Repo, directory: str, name: str) -> tuple[str, str] | None:
    """(file source, function text) of func ``name`` in the package."""
    return _find_block(repo, directory, r"^func " + name + r"\(")


def find_struct(repo: Repo, directory: str, name: str) -> tuple[str, str] | None:
    """(file source, type text) of struct ``name`` in the package."""
    return _find_block(repo, directory, r"^type " + name + r"\s+struct\s*\{")


def _find_block(repo: Repo, directory: str, start: str) -> tuple[str, str] | None:
    """(file source, the braced block starting at the first line matching ``start``)."""
    for _, src in repo.package(directory):
        m = re.search(start, src, re.M)
        if m:
            return src, block(src, m.start())
    return None


def underlying(repo: Repo, directory: str, name: str) -> str | None:
    """``type X string`` -> ``string``."""
    for _, src in repo.package(directory):
        m = re.search(r"^type " + name + r"\s+([\w.\[\]*]+)\s*$", src, re.M)
        if m:
            return m.group(1)
    return None


SCALARS = {"string": "string", "bool": "boolean", "float32": "number", "float64": "number",
           "time.Duration": "integer", "metav1.Duration": "string", "json.RawMessage": "any", "any": "any",
           "interface{}": "any"}


def decodes_itself(repo: Repo, directory: str, name: str) -> bool:
    """Whether type ``name`` has its own ``UnmarshalJSON`` (then its inside is not ours to list)."""
    pattern = r"^func \(\w+ \*?" + name + r"\) UnmarshalJSON\("
    return any(re.search(pattern, src, re.M) for _, src in repo.package(directory))


def json_type(repo: Repo, directory: str, src: str, go: str, depth: int = 0) -> dict:
    """``{"type": ...}`` of a Go type; a struct of the repo that encoding/json decodes field by
    field (strictly, like its parent) also gets its ``fields``."""
    go = go.lstrip("*")
    if go in SCALARS:
        return {"type": SCALARS[go]}
    if re.fullmatch(r"u?int(8|16|32|64)?", go):
        return {"type": "integer"}
    if go.startswith("[]"):
        return {"type": "array"}
    if go.startswith("map["):
        return {"type": "object"}
    pkg, dot, name = go.rpartition(".")
    where = imports(src).get(pkg, directory) if dot else directory
    if dot and pkg not in imports(src):
        return {"type": "any"}  # a type from outside the repo we do not model
    if find_struct(repo, where, name):
        out = {"type": "object"}
        if not decodes_itself(repo, where, name):
            fields = struct_fields(repo, where, name, "", depth + 1)
            if fields is not None:
                out["fields"] = sorted({f["name"]: f for f in fields}.values(), key=lambda f: f["name"])
        return out
    under = underlying(repo, where, name)
    if under and depth < 3:
        return json_type(repo, where, src, under, depth + 1)
    return {"type": "any"}


def struct_fields(repo: Repo, directory: str, type_expr: str, src: str, depth: int = 0) -> list[dict] | None:
    """JSON fields of struct ``type_expr`` (``Params`` or ``pkg.Params``), embedded ones inlined."""
    pkg, dot, name = type_expr.lstrip("*&").rpartition(".")
    where = imports(src).get(pkg, directory) if dot else directory
    found = find_struct(repo, where, name)
    if found is None or depth > 4:
        return None
    fsrc, text = found
    out = []
    body = text[text.index("{") + 1:-1]
    body = re.sub(r"//[^\n]*", "", body)
    for line in body.splitlines():
        line = line.strip()
        if not line:
            continue
        tag = re.search(r'`[^`]*json:"([^"]*)"[^`]*`', line)
        decl = re.sub(r"`[^`]*`", "", line).split()
        if len(decl) == 1:  # embedded: its fields are inlined unless the tag names it
            if tag and tag.group(1).split(",")[0]:
                out.append({"name": tag.group(1).split(",")[0], "type": "object"})
                continue
            inner = struct_fields(repo, where, decl[0], fsrc, depth + 1)
            if inner is None:
                return None
            out += inner
            continue
        if len(decl) < 2 or not decl[0][0].isupper():
            continue
        key = tag.group(1).split(",")[0] if tag else decl[0]
        if key == "-":
            continue
        out.append({"name": key or decl[0], **json_type(repo, where, fsrc, decl[1], depth)})
    return out


def var_type(repo: Repo, directory: str, func: str, var: str) -> str | None:
    """The Go type of local ``var`` in ``func``, or of the package variable it is copied from."""
    for pat in (r"\bvar\s+" + var + r"\s+(\*?[\w.]+)",
                r"\b" + var + r"\s*:?=\s*&?([\w.]+)\s*\{",
                r"\b" + var + r"\s*:?=\s*new\(([\w.]+)\)",
                r"\b" + var + r"\s+(\*?[\w.]+)\s*$"):
        t = re.search(pat, func, re.M)
        if t:
            return t.group(1)
    copied = re.search(r"\b" + var + r"\s*:?=\s*(\w+)\s*$", func, re.M)  # parameters := defaultConfig
    if copied:
        for _, src in repo.package(directory):
            t = (re.search(r"^(?:var\s+)?\s*" + copied.group(1) + r"\s*=\s*&?([\w.]+)\s*\{", src, re.M)
                 or re.search(r"^var\s+" + copied.group(1) + r"\s+(\*?[\w.]+)\s*$", src, re.M))
            if t:
                return t.group(1)
    return None


def decoded_types(repo: Repo, directory: str, func: str) -> list[str] | None:
    """The Go types a factory decodes its parameters into, read off the function's own body: one,
    or, when it first captures the raw bytes (``json.RawMessage``) and then tries several structs
    each with ``StrictDecoder(raw).Decode(&x)``, those structs in the order it tries them."""
    m = re.search(r"\.Decode\(\s*&?(\w+)\s*\)", func) or re.search(r"json\.Unmarshal\([^,]+,\s*&?(\w+)\s*\)", func)
    if not m:
        return None
    first = var_type(repo, directory, func, m.group(1))
    if first != "json.RawMessage":
        return [first] if first else None
    raw = m.group(1)
    if re.search(r"json\.Unmarshal\(\s*" + raw + r"\b", func):
        return None  # decoded again without DisallowUnknownFields: anything goes
    tries = re.findall(r"\bStrictDecoder\(\s*" + raw + r"\s*\)\.Decode\(\s*&?(\w+)\s*\)", func)
    types = [var_type(repo, directory, func, v) for v in tries]
    return types if types and all(types) else None


def follow_decoder(repo: Repo, directory: str, src: str, func: str, decoder: str,
                   depth: int = 0) -> tuple[str, list[str]] | None:
    """(file source, decoded types) for the function that receives the parameter decoder
    ``decoder``: ``func`` itself, or a function of the same package it hands the decoder to
    (at any argument position), followed a few steps."""
    types = decoded_types(repo, directory, func)
    if types is not None:
        return src, types
    if depth > 2:
        return None
    for helper, args in re.findall(r"\b(\w+)\(([^()]*)\)", func):
        if decoder not in re.findall(r"\w+", args):
            continue
        inner = find_func(repo, directory, helper)
        if inner is None:
            continue
        header = inner[1][:inner[1].index("{")]
        param = re.search(r"(\w+)\s+\*json\.Decoder", header)
        if param:
            found = follow_decoder(repo, directory, inner[0], inner[1], param.group(1), depth + 1)
            if found:
                return found
    return None


STABILITY = ("Alpha", "Beta", "Stable")


def plugin(repo: Repo, runner: str, alias_const: str, alias_factory: str, alias_stability: str) -> dict | None:
    imp = imports(runner)
    cpkg, _, cname = alias_const.partition(".")
    fpkg, _, fname = alias_factory.partition(".")
    type_name = const_value(repo, imp[cpkg], cname) if cpkg in imp else None
    if type_name is None:
        return None
    spkg, _, sname = alias_stability.partition(".")
    stability = const_value(repo, imp[spkg], sname) if spkg in imp else None
    base = {"type": type_name, "stability": stability if stability in STABILITY else None}
    fdir = imp.get(fpkg)
    found = find_func(repo, fdir, fname) if fdir else None
    if found is None:
        return {**base, "parameters": None, "strict": False}
    src, func = found
    header = func[:func.index("{")]
    raw = re.search(r"\((?:\w+\s+string,\s*)?(\w+)\s+\*json\.Decoder", header)
    if raw and raw.group(1) == "_":
        return {**base, "parameters": [], "strict": False}  # parameters are ignored
    decoded = follow_decoder(repo, fdir, src, func, raw.group(1)) if raw else None
    if decoded is None:
        types = decoded_types(repo, fdir, func)
        decoded = (src, types) if types else None
    schemas = [struct_fields(repo, fdir, t, decoded[0]) for t in decoded[1]] if decoded else [None]
    if any(s is None for s in schemas):
        return {**base, "parameters": None, "strict": False}
    schemas = [sorted({f["name"]: f for f in s}.values(), key=lambda f: f["name"]) for s in schemas]
    out = {**base, "parameters": schemas[0], "strict": True}
    if len(schemas) > 1:
        out["alternatives"] = schemas[1:]  # tried in order when the first does not decode
    return out


def plugins(repo: Repo) -> list[dict]:
    runner = repo.read(RUNNER)
    out = {}
    pattern = r"\bfwkplugin\.Register(\w*)\(\s*(\w+\.\w+)\s*,\s*([\w.]+)\s*,\s*(\w+\.\w+)\s*((?:,[^)]*)?)\)"
    for variant, c, s, f, rest in re.findall(pattern, re.sub(r"//[^\n]*", "", runner)):
        p = plugin(repo, runner, c, f, s)
        if p is None:
            continue
        p["deprecated"] = None
        if "Deprecated" in variant:  # (..., "since", "removed in", ReplacementType)
            versions = re.findall(r'"(v[\d.]+)"', rest)
            repl = re.findall(r"(\w+)\.(\w+Type)\b", rest)
            imp = imports(runner)
            replacement = const_value(repo, imp[repl[-1][0]], repl[-1][1]) if repl and repl[-1][0] in imp else None
            p["deprecated"] = {"since": versions[0] if versions else None,
                               "removed_in": versions[1] if len(versions) > 1 else None,
                               "replacement": replacement}
        out[p["type"]] = p
    return sorted(out.values(), key=lambda p: p["type"])

FLAG = re.compile(r"\b(?:fs|flag|flags|pflag|f)\.(String|Int|Int64|Uint|Bool|Duration|Float64|StringSlice|"
                  r'StringArray|IntSlice|Var|StringToString)(?:Var)?(?:P)?\(\s*(?:&[\w.\[\]]+\s*,\s*)?(?:"([\w-]+)"|(\w+))\s*,')


def flags(repo: Repo, paths: list[str]) -> list[dict]:
    """Flags declared in ``paths``; a name given by a constant is looked up in its package."""
    out = {}
    for path in paths:
        for kind, name, const in FLAG.findall(repo.read(path)):
            name = name or const_value(repo, path.rsplit("/", 1)[0], const)
            if name:
                out[name] = {"name": name, "type": kind.lower()}
    return sorted(out.values(), key=lambda f: f["name"])


def go_files_under(repo: Repo, *prefixes: str) -> list[str]:
    return [p for p in repo.files if p.startswith(prefixes)]


def api_versions(repo: Repo) -> list[str]:
    reg = repo.read("apix/config/v1alpha1/zz_generated.register.go")
    group = re.search(r'GroupName\s*=\s*"([^"]+)"', reg).group(1)
    out = [f"{group}/v1alpha1"]
    for src in (repo.read(p) for p in go_files_under(repo, "pkg/epp/config/loader/")):
        for g, v in re.findall(r'deprecated\w*\s*=\s*schema\.GroupVersion\{Group:\s*"([^"]+)",\s*Version:\s*"([^"]+)"\}',
                               src):
            out.append(f"{g}/{v}")
    return out


def table(git_dir: str, ref: str) -> dict:
    repo = Repo(git_dir, ref)
    epp = [p for p in go_files_under(repo, "pkg/epp/server/options.go", "cmd/epp/", "pkg/common/observability/logging/")]
    sidecar = go_files_under(repo, "pkg/sidecar/proxy/options.go", "cmd/pd-sidecar/", "pkg/common/observability/logging/")
    return {
        "format": FORMAT,
        "router": ref,
        "commit": repo.commit,
        "source": f"https://{MODULE}tree/{ref} (commit {repo.commit})",
        "generator": "tools/gen_router_table.py",
        "api_versions": api_versions(repo),
        "plugins": plugins(repo),
        "epp_flags": flags(repo, epp),
        "sidecar_flags": flags(repo, sidecar),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("git_dir", help="a clone of github.com/llm-d/llm-d-router (bare is fine)")
    ap.add_argument("refs", nargs="+", help="tags or branches to read, e.g. v0.10.0 main")
    args = ap.parse_args(argv)
    for ref in args.refs:
        data = table(args.git_dir, ref)
        target = ROOT / "manifesto" / "data" / f"llm-d-router-{ref}.json"
        target.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
        strict = sum(p["strict"] for p in data["plugins"])
        print(f"wrote {target.relative_to(ROOT)}: {len(data['plugins'])} plugins ({strict} with strict parameters), "
              f"{len(data['epp_flags'])} EPP flags, {len(data['sidecar_flags'])} sidecar flags")
    return 0


if __name__ == "__main__":
    sys.exit(main())
