"""``manifesto.tasks.run``: one typed outcome per task, memoised through the store it is given."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("msgspec")

REPO = Path(__file__).resolve().parents[2]
SPEC = str(REPO / "models" / "qwen" / "qwen3-0.6b.yaml")
GB200 = str(REPO / "clusters" / "example-gb200.yaml")


def _memo(directory=None, code="code"):
    from manifesto.store import Store
    from manifesto.tasks.memo import Tasks

    return Tasks(Store(None if directory is None else str(directory)), code)


def _options():
    from manifesto.resolve.options import Options

    return Options(user="u", namespace="n")


def test_render_gives_the_text_of_resolving_and_rendering_the_loaded_pair():
    from manifesto.cluster import load_cluster
    from manifesto.render import artifact_text
    from manifesto.spec import load_spec
    from manifesto.tasks.status import Status
    from manifesto.tasks import Outcome, PairRequest, Task, run
    from manifesto.tasks.inputs.plan import resolution

    outcome = run(Task.RENDER, PairRequest(SPEC, GB200, _options()), _memo())
    assert isinstance(outcome, Outcome) and outcome.status == Status.OK and outcome.error is None
    cluster = load_cluster(GB200)
    spec = load_spec(SPEC, cluster)
    files, resolve = resolution(spec, cluster, _options())
    plan = resolve()
    assert (outcome.text, outcome.suffix) == artifact_text(plan, spec, cluster, _options())
    assert outcome.inputs == tuple(sorted(set(files))) and os.path.realpath(SPEC) in outcome.inputs
    assert outcome.cluster_name == "example-gb200" and outcome.plan == plan
    resolved = run(Task.RESOLVE, PairRequest(SPEC, GB200, _options()), _memo())
    assert resolved.plan == plan and resolved.text == ""


def test_an_incompatible_pair_and_a_bad_spec_are_outcomes_with_their_error_and_inputs(tmp_path):
    from manifesto.errors import IncompatiblePairError, InputError
    from manifesto.tasks.status import Status
    from manifesto.tasks import PairRequest, Task, run

    h200 = str(REPO / "models" / "qwen" / "h200-aggregated.yaml")
    skipped = run(Task.RENDER, PairRequest(h200, GB200, _options()), _memo())
    assert skipped.status == Status.SKIPPED and isinstance(skipped.error, IncompatiblePairError)
    assert skipped.reason == str(skipped.error) and "'h200' is not offered" in skipped.reason
    assert os.path.realpath(h200) in skipped.inputs and os.path.realpath(GB200) in skipped.inputs

    bad = tmp_path / "bad.yaml"
    bad.write_text((REPO / "models" / "qwen" / "qwen3-0.6b.yaml").read_text() + "\nno_such_key: 1\n")
    failed = run(Task.RENDER, PairRequest(str(bad), GB200, _options()), _memo())
    assert failed.status == Status.FAILED and isinstance(failed.error, InputError)
    assert "no_such_key" in failed.reason and str(bad.resolve()) in failed.inputs and failed.text == ""


def test_the_resolve_and_render_products_are_kept_and_reused_through_the_store(tmp_path):
    from manifesto.tasks import PairRequest, Task, run

    request = PairRequest(SPEC, GB200, _options())
    first = run(Task.RENDER, request, _memo(tmp_path / "store"))
    assert len(first.products) == 2
    kept = {p.name for p in (tmp_path / "store").rglob("*") if p.is_file()}
    # the two products, and the artifact text they share, kept once by content (a blob)
    from manifesto.load.digest import digest

    assert kept == {*first.products, digest(first.text.encode())}

    def never(*args):
        raise AssertionError("rendered again")

    import manifesto.render as render

    original = render.render_plan
    render.render_plan = never
    try:
        again = run(Task.RENDER, request, _memo(tmp_path / "store"))
    finally:
        render.render_plan = original
    assert (again.text, again.products) == (first.text, first.products)
    other_code = run(Task.RENDER, request, _memo(tmp_path / "store", code="other"))
    assert set(other_code.products).isdisjoint(first.products) and other_code.text == first.text


def test_each_file_is_read_and_digested_once_per_memo(tmp_path):
    from manifesto.load.digest import file_digest
    from manifesto.tasks import FileDigest, FileRequest, ParsedFile, ParseRequest, Task, run

    path = tmp_path / "a.yaml"
    path.write_text("a: 1\n")
    memo = _memo()
    first = run(Task.DIGEST, FileRequest(str(path)), memo)
    assert isinstance(first, FileDigest) and first.digest == file_digest(str(path))
    path.write_text("a: 2\n")
    assert run(Task.DIGEST, FileRequest(str(path)), memo).digest == first.digest  # read once
    assert run(Task.DIGEST, FileRequest(str(path)), _memo()).digest == file_digest(str(path)) != first.digest
    assert run(Task.DIGEST, FileRequest(str(tmp_path / "missing.yaml")), memo).digest is None

    parsed = run(Task.PARSE, ParseRequest(str(path), "shown.yaml"), memo)
    assert isinstance(parsed, ParsedFile) and parsed.data == {"a": 2}
    assert parsed.locations.find(("a",)).file == "shown.yaml"


def test_explain_is_the_explanation_of_the_pairs_plan():
    from manifesto.resolve.explain import explain_text
    from manifesto.tasks import PairRequest, Task, run

    explained = run(Task.EXPLAIN, PairRequest(SPEC, GB200, _options()), _memo())
    resolved = run(Task.RESOLVE, PairRequest(SPEC, GB200, _options()), _memo())
    assert explained.text == explain_text(resolved.plan) and explained.suffix == ""
