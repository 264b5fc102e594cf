#!/usr/bin/env python3
"""Derive the labels LeaderWorkerSet's DisaggregatedSet controller puts on the pods it makes,
from its Go source, into ``tests/data/lws-<ref>-pod-labels.json``.

Not run by CI (it needs a clone of github.com/kubernetes-sigs/lws). Run it when the LWS pin
moves, and commit its output (tests/render/test_pd_set_labels.py reads it):

    python3 tools/gen_lws_pod_labels.py GIT_DIR v0.10.0           # writes the table
    python3 tools/gen_lws_pod_labels.py GIT_DIR v0.10.0 --check   # exit 1 when it differs

GIT_DIR is any clone (a bare one will do); files are read with ``git show REF:path``. It reads:

* ``GenerateLabels`` (pkg/utils/disaggregatedset/utils.go): the map the controller adds to
  both pod templates of every role: the ``app`` label's format and the keys of the
  ``disaggregatedsetv1`` label constants it sets (role, slice, set name, revision);
* the label constants' values (api/disaggregatedset/v1 and api/leaderworkerset/v1 types);
* ``mergeLabels`` (pkg/controllers/disaggregatedset/lws_manager.go): whether the controller's
  labels win over the template's (copied last);
* the LeaderWorkerSet labels every LWS pod carries (set name, group index, worker index).

A reader of Go source by regular expressions: when the source no longer has the shape it
expects, it stops with the reason instead of guessing.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "tests" / "data"


def _show(git: str, ref: str, path: str) -> str:
    proc = subprocess.run(["git", "-C", git, "show", f"{ref}:{path}"], capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"gen_lws_pod_labels: {ref}:{path}: {proc.stderr.strip()}")
    return proc.stdout


def _constants(text: str) -> dict[str, str]:
    """``Name string = "value"`` constants of a Go file."""
    return dict(re.findall(r'^\s*(\w+)\s+string\s*=\s*"([^"]*)"', text, re.M))


def _function(text: str, name: str) -> str:
    start = text.index(f"func {name}(")
    return text[start:text.index("\n}\n", start)]


def derive(git: str, ref: str) -> dict:
    """The table for ``ref``."""
    ds_keys = _constants(_show(git, ref, "api/disaggregatedset/v1/disaggregatedset_types.go"))
    lws_keys = _constants(_show(git, ref, "api/leaderworkerset/v1/leaderworkerset_types.go"))
    utils = _show(git, ref, "pkg/utils/disaggregatedset/utils.go")
    manager = _show(git, ref, "pkg/controllers/disaggregatedset/lws_manager.go")
    body = _function(utils, "GenerateLabels")
    entries = re.findall(r'^\s*("app"|disaggregatedsetv1\.(\w+)):\s*(.+?),\s*$', body, re.M)
    app = re.search(r'"app":\s*fmt\.Sprintf\("([^"]+)", baseName, slice, role\)', body)
    if app is None or not entries:
        sys.exit("gen_lws_pod_labels: GenerateLabels no longer has the shape this reader knows")
    merged = []
    for template in ("WorkerTemplate", "LeaderTemplate"):
        merged.append(f"LeaderWorkerTemplate.{template}.Labels = mergeLabels(config.Spec.LeaderWorkerTemplate."
                      f"{template}.Labels, params.Labels)" in manager)
    merge = _function(manager, "mergeLabels")
    set_wins = merge.index("maps.Copy(merged, userLabels)") < merge.index("maps.Copy(merged, autoLabels)")
    commit = subprocess.run(["git", "-C", git, "rev-parse", f"{ref}^{{commit}}"], capture_output=True,
                            text=True, check=True).stdout.strip()
    return {
        "source": f"kubernetes-sigs/lws {ref}",
        "commit": commit,
        # the Sprintf of the app label: base name (the set's), slice, role
        "app_format": app.group(1),
        # constant name -> label key, for each label GenerateLabels sets besides "app"
        "set_labels": {const: ds_keys[const] for literal, const, _ in entries if literal != '"app"'},
        "both_templates_merged": all(merged),
        "set_labels_win": set_wins,
        "lws_labels": {name: lws_keys[name] for name in ("SetNameLabelKey", "GroupIndexLabelKey",
                                                         "WorkerIndexLabelKey")},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("git_dir")
    parser.add_argument("ref")
    parser.add_argument("--check", action="store_true", help="compare with the committed table; exit 1 on a difference")
    args = parser.parse_args()
    table = json.dumps(derive(args.git_dir, args.ref), indent=2, sort_keys=True) + "\n"
    path = OUT / f"lws-{args.ref}-pod-labels.json"
    if args.check:
        current = path.read_text() if path.exists() else ""
        if current != table:
            print(f"{path} differs from what {args.ref} gives; run without --check", file=sys.stderr)
            return 1
        return 0
    path.write_text(table)
    print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
