"""Generate ``manifesto/render/metric_names.py``: the metric names the monitoring
dashboards, rules and the fake exporter of the tests may use, read from the pinned releases.

Sources (pass each on the command line; nothing is fetched here):

- vLLM: the release wheel (``pip download vllm==<version> --no-deps``); every
  ``name="vllm:..."`` given to a Gauge/Counter/Histogram constructor in
  ``vllm/v1/metrics/*.py`` (Python's ``ast``, so comments and help texts cannot match).
- llm-d router: a git checkout of llm-d/llm-d-router at the named revision; every
  ``prometheus.New<Kind>[Vec](...Opts{Subsystem: X, Name: "y"})`` in the endpoint picker's
  metrics files, with ``X`` resolved through the package constants.
- dcgm-exporter: a git checkout of NVIDIA/dcgm-exporter at the image's tag;
  ``etc/default-counters.csv``, including the fields it lists commented out (they are valid
  DCGM fields the default set leaves off; ``default`` says which is which).

    python tests/tools/gen_metric_names.py --vllm-wheel vllm-0.33.0-....whl \
        --router-repo /path/llm-d-router.git --router-rev <commit> \
        --dcgm-repo /path/dcgm-exporter.git --dcgm-tag 4.5.2-4.8.1 > manifesto/render/metric_names.py
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
import zipfile

_KINDS = {"gauge": "gauge", "counter": "counter", "histogram": "histogram", "info": "gauge"}
ROUTER_FILES = (
    "pkg/common/observability/metrics/metrics.go",
    "pkg/epp/metrics/metrics.go",
    "pkg/epp/metrics/llm_d_router_metrics.go",
    "pkg/epp/framework/plugins/scheduling/profilehandler/disagg/metrics.go",
)


def _kind_of(call: ast.Call) -> str | None:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    low = name.lower()
    for word, kind in _KINDS.items():
        if word in low:
            return kind
    return None


def vllm_metrics(wheel: str) -> dict[str, str]:
    out: dict[str, str] = {}
    with zipfile.ZipFile(wheel) as zf:
        for member in sorted(zf.namelist()):
            if not re.fullmatch(r"vllm/v1/metrics/[a-z_]+\.py", member):
                continue
            tree = ast.parse(zf.read(member).decode("utf-8"))
            for node in ast.walk(tree):
                if not isinstance(node, ast.Call):
                    continue
                for kw in node.keywords:
                    if (kw.arg == "name" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str)
                            and kw.value.value.startswith("vllm:")):
                        kind = _kind_of(node)
                        if kind:
                            out[kw.value.value] = kind
    return dict(sorted(out.items()))


def _git_show(repo: str, rev: str, path: str) -> str:
    return subprocess.run(["git", "--git-dir", repo, "show", f"{rev}:{path}"], check=True,
                          capture_output=True, text=True).stdout


_CONST = re.compile(r"^\s*(\w+)\s*=\s*(?:\"([^\"]*)\"|([\w.]+))\s*$", re.M)
_NEW = re.compile(r"\bNew(Counter|Gauge|Histogram)(?:Vec)?\(\s*&?\w+\.\w+Opts\{(?P<body>.*?)\n\s*\}", re.S)


def router_metrics(repo: str, rev: str) -> dict[str, str]:
    texts = [_git_show(repo, rev, path) for path in ROUTER_FILES]
    strings: dict[str, str] = {}
    aliases: dict[str, str] = {}
    for text in texts:
        for ident, value, alias in _CONST.findall(text):
            if value or not alias:
                strings[ident] = value
            else:
                aliases[ident] = alias.rsplit(".", 1)[-1]

    def resolve(ident: str) -> str:
        ident = ident.rsplit(".", 1)[-1]
        for _ in range(8):
            if ident in strings:
                return strings[ident]
            ident = aliases[ident]
        raise SystemExit(f"cannot resolve subsystem {ident}")

    out: dict[str, str] = {}
    for text in texts:
        for match in _NEW.finditer(text):
            body = match["body"]
            sub = re.search(r"Subsystem:\s*([\w.]+)", body)
            name = re.search(r"Name:\s*\"(\w+)\"", body)
            if sub and name:
                out[f"{resolve(sub[1])}_{name[1]}"] = match[1].lower()
    return dict(sorted(out.items()))


def dcgm_fields(repo: str, tag: str) -> dict[str, tuple[str, bool]]:
    out: dict[str, tuple[str, bool]] = {}
    for line in _git_show(repo, tag, "etc/default-counters.csv").splitlines():
        m = re.fullmatch(r"\s*(#\s*)?(DCGM_FI_\w+)\s*,\s*(gauge|counter|label)\s*,.*", line)
        if m and m[3] != "label":
            default = not m[1]
            out[m[2]] = (m[3], default or out.get(m[2], ("", False))[1])
    return dict(sorted(out.items()))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vllm-wheel", required=True)
    ap.add_argument("--router-repo", required=True)
    ap.add_argument("--router-rev", required=True)
    ap.add_argument("--dcgm-repo", required=True)
    ap.add_argument("--dcgm-tag", required=True)
    a = ap.parse_args(argv)
    wheel = a.vllm_wheel.rsplit("/", 1)[-1]
    lines = [
        '"""Metric names of the pinned releases, for the monitoring dashboards and rules.',
        "",
        "Generated by tests/tools/gen_metric_names.py; do not edit. Sources:",
        f"  vLLM: {wheel} (vllm/v1/metrics/*.py)",
        f"  llm-d router: github.com/llm-d/llm-d-router@{a.router_rev} ({', '.join(ROUTER_FILES[1:])})",
        f"  dcgm-exporter: github.com/NVIDIA/dcgm-exporter@{a.dcgm_tag} (etc/default-counters.csv)",
        '"""',
        "",
        '__all__ = ["VLLM", "EPP", "DCGM"]',
        "",
        "#: vLLM metric -> kind (counters are exposed with a ``_total`` suffix).",
        "VLLM = {",
        *(f"    {n!r}: {k!r}," for n, k in vllm_metrics(a.vllm_wheel).items()),
        "}",
        "",
        "#: endpoint-picker metric -> kind.",
        "EPP = {",
        *(f"    {n!r}: {k!r}," for n, k in router_metrics(a.router_repo, a.router_rev).items()),
        "}",
        "",
        "#: DCGM field -> (kind, in dcgm-exporter's default counter set).",
        "DCGM = {",
        *(f"    {n!r}: ({k!r}, {d!r})," for n, (k, d) in dcgm_fields(a.dcgm_repo, a.dcgm_tag).items()),
        "}",
    ]
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
