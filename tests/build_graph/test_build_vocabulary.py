"""Issue 15: the build's words come from the enums of ``manifesto.tasks.status`` (Status, Need,
Source, Reported), one meaning each, not from string literals scattered in the engine."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("module", ["manifesto/build_graph/engine.py", "manifesto/build_graph/planning.py",
                                    "manifesto/build_graph/saving.py", "manifesto/build_graph/report.py",
                                    "manifesto/build_graph/executor.py"])
def test_item_and_record_words_are_enum_members(module):
    tree = ast.parse((REPO / module).read_text())
    literals = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            watched = any(isinstance(s, ast.Attribute) and s.attr in ("kind", "how", "status") for s in sides)
            words = [s for s in sides if isinstance(s, ast.Constant) and isinstance(s.value, str)]
            words += [e for s in sides if isinstance(s, (ast.Tuple, ast.List, ast.Set)) for e in s.elts
                      if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if watched and words:
                literals.append(ast.unparse(node))
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr in ("kind", "how")
                                                for t in node.targets):
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                literals.append(ast.unparse(node))
    assert literals == []


def test_each_enum_word_has_one_meaning():
    from manifesto.tasks.status import Need, Reported, Source, Status

    for enum in (Status, Need, Source, Reported):
        values = [m.value for m in enum]
        assert len(values) == len(set(values))
    # A word shared by two enums means the same there: skipped/failed are outcomes the report repeats.
    shared = {m.value for m in Status} & {m.value for m in Reported}
    assert shared == {"skipped", "failed"}
    assert not ({m.value for m in Need} & {m.value for m in Status})
    assert not ({m.value for m in Source} & ({m.value for m in Need} | {m.value for m in Status}))
