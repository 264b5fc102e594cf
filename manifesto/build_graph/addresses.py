"""Build addresses and what they match.

    //models/deepseek-v4:1P-EP8-1D-EP8   one target (a file, named without ``.yaml``)
    //models/deepseek-v4:all             every target in that directory
    //models/deepseek-v4:                the same
    //models::  or  //models/...         every target below models/, recursively
    //::        or  //...                every target
    models/qwen:aggregated, models::     the same without the leading // (as Pants accepts them)
    models/qwen/aggregated.yaml          a file path (relative to the working directory)

Parsing is pure; ``match`` looks the spec up in a ``Graph``.
"""

from __future__ import annotations

import os

__all__ = ["AddressSpec", "match", "parse_address"]


class AddressSpec:
    """A parsed address: ``kind`` is "target", "dir", "tree" or "file"."""

    __slots__ = ("text", "kind", "dir", "name")

    def __init__(self, text: str, kind: str, dir: str, name: str = "") -> None:
        self.text, self.kind, self.dir, self.name = text, kind, dir, name

    @property
    def single(self) -> bool:
        """True when the address names exactly one target (not a wildcard)."""
        return self.kind in ("target", "file")

    def __repr__(self) -> str:
        return f"AddressSpec({self.text!r})"


def parse_address(text: str) -> AddressSpec:
    """Parse ``text``; raises BuildError for malformed addresses."""
    if not text.startswith("//"):
        if ":" not in text and text != "..." and not text.endswith("/..."):
            return AddressSpec(text, "file", "", text)
        text = "//" + text.removeprefix("./")  # an address written without its leading //
    body = text[2:]
    if body == "..." or body.endswith("/..."):
        return AddressSpec(text, "tree", _dir(text, body[:-3]))
    if body.endswith("::"):
        return AddressSpec(text, "tree", _dir(text, body[:-2]))
    if ":" not in body:
        _fail(f"'{text}' is not an address: add ':NAME', ':' (the directory) or '::' (recursive)")
    directory, name = body.split(":", 1)
    if ":" in name or "/" in name:
        _fail(f"'{text}' is not an address: a target name has no ':' or '/'")
    if name in ("", "all"):
        return AddressSpec(text, "dir", _dir(text, directory))
    return AddressSpec(text, "target", _dir(text, directory), name)


def _dir(text: str, directory: str) -> str:
    directory = directory.rstrip("/")
    parts = directory.split("/") if directory else []
    if any(p in ("", ".", "..") for p in parts):
        _fail(f"'{text}' is not an address: the directory must be a plain path below the build root")
    return directory


def _fail(message: str):
    from manifesto.errors import BuildError

    raise BuildError(message)


def match(spec: AddressSpec, graph, cwd: str | None = None) -> list:
    """The targets of ``graph`` that ``spec`` names, sorted by address."""
    if spec.kind == "target":
        hit = graph.targets.get(f"//{spec.dir}:{spec.name}")
        if hit is None:
            _unknown(spec.text, graph.targets)
        return [hit]
    if spec.kind == "file":
        return [_match_file(spec.text, graph, cwd or os.getcwd())]
    inside = graph.sorted_targets()
    if spec.kind != "tree" or spec.dir:  # not //::, which names every target
        inside = [t for t in inside if _below(t.dir, spec.dir, spec.kind == "tree")]
    if not inside:
        _unknown(spec.text, _dir_choices(spec, graph))
    return inside


def _dir_choices(spec: AddressSpec, graph) -> list[str]:
    """Existing directories, spelled the way ``spec`` spelled its own."""
    dirs = set()
    for t in graph.targets.values():
        parts = t.dir.split("/") if t.dir else []
        dirs.update("/".join(parts[:n]) for n in range(1, len(parts) + 1))
    tail = spec.text[2 + len(spec.dir):]  # "::", "/...", ":" or ":all"
    return sorted(f"//{d}{tail}" for d in dirs)


def _below(target_dir: str, directory: str, recursive: bool) -> bool:
    if target_dir == directory:
        return True
    return recursive and (not directory or target_dir.startswith(directory + "/"))


def _match_file(text: str, graph, cwd: str):
    rel = os.path.relpath(os.path.join(cwd, text), graph.root).replace(os.sep, "/")
    hit = graph.by_path.get(rel)
    if hit is not None:
        return hit
    if os.path.isfile(os.path.join(graph.root, rel)) and not rel.startswith("../"):
        _fail(f"{text} is not a build target (BUILD.yaml's sources do not include it)")
    _unknown(text, sorted(graph.by_path))


def _unknown(text: str, choices) -> None:
    from manifesto.errors import did_you_mean

    _fail(f"unknown target {text}{did_you_mean(text, choices)}")
