"""Files, YAML and JSON through the edge (issue 25): bounded before any recursive parser,
confined reads, strict decoding, and one clean error for every hostile input.

The deep cases run in a child process: a regression there is a SIGSEGV, which must fail
the test, not kill the suite. Every child's return code must be 0 or 1, never a signal.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from kit import REPO_ROOT, run_cli
from manifesto.edge import files, jsonio, limits
from manifesto.errors import InputError, Origin, YamlSyntaxError
from manifesto.load.yamlio import parse_yaml

DEEP = 100_000
#: Seconds any one hostile input may take, process start included (the machine is shared).
BOUND = 60
QWEN = (REPO_ROOT / "models/qwen/aggregated.yaml").read_text()
VALIDATE = ("config", "validate", "spec.yaml", "--cluster", "example-gb200", "--user", "u", "--namespace", "n")


def _one_error(proc, *needles: str) -> str:
    """The child ended by itself with exit 1 and one error line, no traceback; returns it."""
    assert proc.returncode == 1, (proc.returncode, proc.stderr[-2000:])
    lines = proc.stderr.strip().splitlines()
    assert "Traceback" not in proc.stderr and len(lines) == 1 and lines[0].startswith("error: "), proc.stderr[-2000:]
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def _run(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess:
    start = time.monotonic()
    proc = run_cli(*argv, cwd=tmp_path, timeout=BOUND,
                   env={"MANIFESTO_CONFIG_HOME": str(tmp_path / "config"), "XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert time.monotonic() - start < BOUND
    assert proc.returncode >= 0, f"killed by signal {-proc.returncode}"
    return proc


def _spec_with(vllm_value: str) -> str:
    return QWEN.replace("    parallelism: {tp: 1, dp: false, ep: false}\n",
                        f"    parallelism: {{tp: 1, dp: false, ep: false}}\n    vllm: {{x: {vllm_value}}}\n")


# -- limits: the bound over the text, the exact count, their positions ---------------------

def _depth(text: str) -> int:
    from ruamel.yaml import YAML

    depth = deepest = 0
    for event in YAML(typ="rt", pure=True).parse(text):
        kind = type(event).__name__
        if kind in ("SequenceStartEvent", "MappingStartEvent"):
            depth += 1
            deepest = max(deepest, depth)
        elif kind in ("SequenceEndEvent", "MappingEndEvent"):
            depth -= 1
    return deepest


@pytest.mark.parametrize("text", [
    "a: 1\n", "- - - - x\n", "a:\n- b:\n  - c:\n    - d\n", "? - a\n  - b\n: c\n", "a: &a[b]\n",
    "- &x [&y [&z [1]]]\n", "a: \"[[[[\"\n[1, [2, [3]]]: 4\n", "a: |\n  [[[[\n  - - -\nb: [[[[1]]]]\n",
    "{a: {b: {c: [d, {e: f}]}}}\n", "a:\r  b:\r    c: [1]\r", "a:\u2028  b:\u2028    - [x]\n",
])
def test_the_bound_over_the_text_is_never_below_the_real_depth(text):
    assert limits.yaml_depth_bound(text) >= _depth(text)


def test_ordinary_files_need_no_parse_to_be_within_bounds():
    for path in [*REPO_ROOT.glob("models/*/*.yaml"), *REPO_ROOT.glob("clusters/*.yaml"), REPO_ROOT / "BUILD.yaml"]:
        assert limits.yaml_depth_bound(path.read_text()) <= limits.MAX_DEPTH, path


@pytest.mark.parametrize("text, where", [
    ("a: " + "[" * 200 + "]" * 200 + "\n", (1, 3 + limits.MAX_DEPTH)),
    ("a: " + "{b: " * 200 + "1" + "}" * 200 + "\n", None),
    ("a:\n" + "".join(" " * i + f"k{i}:\n" for i in range(1, 200)) + " " * 200 + "x: 1\n", None),
    ("top:\n" + "- " * 300 + "x\n", None),
    ("é: " + "[" * 500 + "]" * 500 + "\n", (1, 3 + limits.MAX_DEPTH)),  # the slow path, as ruamel reads it
])
def test_too_deep_yaml_is_one_error_at_its_position(text, where):
    with pytest.raises(YamlSyntaxError) as info:
        parse_yaml(text, "f.yaml")
    err = info.value
    assert "nest more than 64 deep" in err.message and err.origin.line > 0 and err.origin.col > 0
    if where:
        assert (err.origin.line, err.origin.col) == where


def test_deep_but_within_the_limit_reads():
    depth = limits.MAX_DEPTH - 1
    data, _ = parse_yaml("a: " + "[" * depth + "1" + "]" * depth + "\n", "f.yaml")
    node, levels = data["a"], 1
    while isinstance(node, list):
        node, levels = node[0], levels + 1
    assert (node, levels) == (1, limits.MAX_DEPTH)


def test_alias_bomb_and_alias_count_are_refused_at_the_alias():
    bomb = "".join(f"{n}: &{n} [{', '.join([f'*{p}'] * 9) if p else ', '.join(['x'] * 9)}]\n"
                   for p, n in zip(["", *"abcdefg"], "abcdefgh"))
    with pytest.raises(YamlSyntaxError, match="alias bomb"):
        parse_yaml(bomb, "b.yaml")
    with pytest.raises(YamlSyntaxError, match="alias use number 1001") as info:
        parse_yaml("s: &s x\nl: [" + ", ".join(["*s"] * 1001) + "]\n", "a.yaml")
    assert info.value.origin.line == 2


def test_too_many_entries_is_refused_before_parsing():
    start = time.monotonic()
    with pytest.raises(YamlSyntaxError, match="holds 300002 lines"):
        parse_yaml("env:\n" + "".join(f"  K{i}: v\n" for i in range(300_000)) + "x: 1\n", "big.yaml")
    assert time.monotonic() - start < 5


# -- files: confined, regular, bounded, strict ---------------------------------------------

def test_a_symlink_below_the_root_is_refused_even_to_a_file_inside(tmp_path):
    ws = tmp_path / "ws"
    (ws / "real").mkdir(parents=True)
    (ws / "real" / "a.yaml").write_text("a: 1\n")
    (ws / "link.yaml").symlink_to(ws / "real" / "a.yaml")
    (ws / "linkdir").symlink_to(ws / "real")
    roots = files.confinement([ws])
    assert files.read_text(ws / "real" / "a.yaml", "a.yaml", roots) == "a: 1\n"
    with pytest.raises(InputError, match=r"link\.yaml is a symlink \(to .*a\.yaml\); a build reads no symlink"):
        files.read_text(ws / "link.yaml", "link.yaml", roots)
    with pytest.raises(InputError, match=r"linkdir is a symlink"):
        files.read_text(ws / "linkdir" / "a.yaml", "a.yaml", roots)
    assert files.read_text(ws / "link.yaml", "link.yaml") == "a: 1\n"  # unconfined: the user named it


def test_a_file_outside_the_roots_is_refused_with_its_real_path(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "out.yaml").write_text("a: 1\n")
    with pytest.raises(InputError, match="outside the build workspace"):
        files.read_text(tmp_path / "ws" / ".." / "out.yaml", "x", files.confinement([tmp_path / "ws"]))


@pytest.mark.parametrize("kind", ["fifo", "dir", "dev"])
def test_special_files_are_refused_without_blocking(tmp_path, kind):
    path = tmp_path / "x"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dir":
        path.mkdir()
    else:
        path = Path("/dev/zero")
    for roots in ((), files.confinement([tmp_path])) if kind != "dev" else ((),):
        with pytest.raises(InputError, match="is a (FIFO|directory|device)"):
            files.read_text(path, "x", roots)


def test_size_cap_utf8_and_bom(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"a" * 101)
    with pytest.raises(InputError, match="larger than 100 bytes"):
        files.read_text(path, "f", limit=100)
    path.write_bytes(b"a: \xff\n")
    with pytest.raises(InputError, match=r"not UTF-8 text \(invalid start byte\)"):
        files.read_text(path, "f")
    path.write_bytes("\ufeffa: 1\n".encode())
    assert files.read_text(path, "f") == "a: 1\n"


# -- JSON -----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, message, line, col", [
    ("[" * 100 + "]" * 100, "nest more than 64 deep", 1, 65),
    ('{\n  "a": ' + "1" * 5000 + "}", "a whole number of 5000 digits", 2, 8),
    ('{"a": 1,}', "not valid JSON: Expecting property name", 1, 9),
    ('"\\ud800"', "lone UTF-16 surrogate", 0, 0),
    ("", "not valid JSON: Expecting value", 1, 1),
])
def test_json_refusals_say_where_and_why(text, message, line, col):
    with pytest.raises(InputError) as info:
        jsonio.loads(text, "c.json")
    assert message in info.value.message
    assert (info.value.origin.line, info.value.origin.col) == (line, col)


def test_json_values_read_as_json_reads_them():
    import math

    data = jsonio.loads(b'{"a": [1, 2.5, "\\u00e9", null, true], "b": NaN, "c": -Infinity, "d": "\\ud83d\\ude00"}', "c")
    assert data["a"] == [1, 2.5, "é", None, True] and math.isnan(data["b"]) and data["c"] == -math.inf
    assert data["d"] == "\U0001f600"
    with pytest.raises(InputError, match="not UTF-8"):
        jsonio.loads(b'{"a": "\xc3"}', "c")


# -- model.config_json ----------------------------------------------------------------------

def _spec(ws: Path, config_json: str):
    spec_file = ws / "models" / "m.yaml"
    return SimpleNamespace(validated=SimpleNamespace(model=SimpleNamespace(config_json=config_json, id="org/m",
                                                                             revision=None)),
                           where=lambda path: Origin(str(spec_file), 5, 3), path=str(spec_file))


@pytest.fixture
def ws(tmp_path):
    ws = tmp_path / "ws"
    (ws / "models").mkdir(parents=True)
    (tmp_path / "outside.json").write_text('{"hidden_size": 1}')
    return ws


@pytest.mark.parametrize("value, message", [
    ("../../outside.json", "an absolute path or one with '..' leads out of the build workspace"),
    ("sub/../../../outside.json", "an absolute path or one with '..'"),
    ("{abs}", "an absolute path or one with '..'"),
    ("link.json", "resolves to"),
    ("dirlink/outside.json", "resolves to"),
    ("pipe.json", "is a FIFO"),
    ("inner.json", "inner.json is a symlink"),
])
def test_config_json_in_a_build_stays_in_the_workspace(ws, tmp_path, value, message):
    from manifesto.tasks.inputs.architecture import load_architecture

    (ws / "models" / "link.json").symlink_to(tmp_path / "outside.json")
    (ws / "models" / "dirlink").symlink_to(tmp_path)
    (ws / "models" / "c.json").write_text("{}")
    (ws / "models" / "inner.json").symlink_to(ws / "models" / "c.json")
    os.mkfifo(ws / "models" / "pipe.json")
    value = value.replace("{abs}", str(tmp_path / "outside.json"))
    with pytest.raises(InputError) as info:
        load_architecture(_spec(ws, value), within=files.confinement([ws]))
    assert message in str(info.value)


def test_config_json_values_never_reach_an_error(ws):
    from manifesto.tasks.inputs.architecture import load_architecture

    secret = "SECRETvalue123"
    for body in (f'{{"hidden_size": "{secret}"}}', f'{{"torch_dtype": "{secret}", "hidden_size": 1}}',
                 f'{{"hidden_size": 8, "num_attention_heads": 1, "num_hidden_layers": 1, "vocab_size": 1, '
                 f'"quantization_config": {{"quant_method": "{secret}"}}}}',
                 f'{{"hidden_size": [{"[" * 80}"{secret}"{"]" * 80}]}}', f'{{"a": "{secret}" x}}'):
        (ws / "models" / "c.json").write_text(body)
        with pytest.raises(InputError) as info:
            load_architecture(_spec(ws, "c.json"), within=files.confinement([ws]))
        assert secret not in str(info.value), str(info.value)


# -- through the CLI, in a child process: one error, no signal, within the bound ---------------

def _deep_flow() -> str:
    return "[" * DEEP + "]" * DEEP


@pytest.mark.integration
@pytest.mark.parametrize("case", ["flow", "block-compact", "block-indent", "flow-unicode"])
def test_deep_spec_is_one_error_not_a_crash(tmp_path, case):
    text = {"flow": _spec_with(_deep_flow()),
            "flow-unicode": "# é\n" + _spec_with(_deep_flow()),
            "block-compact": QWEN + "extra:\n" + "- " * DEEP + "x\n",
            "block-indent": QWEN + "extra:\n" + "".join(" " * i + f"k{i}:\n" for i in range(1, 3000)) + "x: 1\n"}[case]
    (tmp_path / "spec.yaml").write_text(text)
    _one_error(_run(tmp_path, *VALIDATE), "spec.yaml:", "nest more than 64 deep")


@pytest.mark.integration
def test_deep_cluster_is_one_error_not_a_crash(tmp_path):
    cluster = (REPO_ROOT / "clusters/example-gb200.yaml").read_text() + "extra: " + _deep_flow() + "\n"
    (tmp_path / "c.yaml").write_text(cluster)
    (tmp_path / "spec.yaml").write_text(QWEN)
    argv = [a if a != "example-gb200" else "c.yaml" for a in VALIDATE]
    _one_error(_run(tmp_path, *argv), "c.yaml:", "nest more than 64 deep")


@pytest.mark.integration
@pytest.mark.parametrize("case", ["flow", "block"])
def test_deep_build_yaml_is_one_error_not_a_crash(tmp_path, case):
    ws = tmp_path / "ws"
    (ws / "models").mkdir(parents=True)
    (ws / "models" / "m.yaml").write_text(QWEN)
    deep = ("x: " + _deep_flow() + "\n") if case == "flow" else ("x:\n" + "- " * DEEP + "y\n")
    (ws / "BUILD.yaml").write_text("targets:\n  - {kind: model, path: models, sources: ['*.yaml']}\n" + deep)
    _one_error(_run(ws, "build"), "BUILD.yaml:", "nest more than 64 deep")
    assert not (ws / "out").exists() or not any((ws / "out").rglob("*.yaml"))


@pytest.mark.integration
def test_deep_config_json_is_one_error_not_a_crash(tmp_path):
    (tmp_path / "spec.yaml").write_text(QWEN.replace("  image_ref: vllm.standard\n",
                                                     "  image_ref: vllm.standard\n  config_json: c.json\n"))
    (tmp_path / "c.json").write_text('{"a": ' + _deep_flow() + "}")
    _one_error(_run(tmp_path, *VALIDATE), "c.json:1:", "nest more than 64 deep")


@pytest.mark.integration
def test_config_json_out_of_a_build_workspace_is_refused(tmp_path):
    ws = tmp_path / "ws"
    (ws / "models").mkdir(parents=True)
    (ws / "clusters").mkdir()
    shutil.copy(REPO_ROOT / "clusters/example-gb200.yaml", ws / "clusters" / "gpu.yaml")
    (tmp_path / "outside.json").write_text('{"hidden_size": "SECRETvalue123"}')
    out = "  image_ref: vllm.standard\n  config_json: ../../outside.json\n"
    (ws / "models" / "m.yaml").write_text(QWEN.replace("  image_ref: vllm.standard\n", out))
    (ws / "BUILD.yaml").write_text("options:\n  default: {user: u, namespace: ns}\ntargets:\n"
                                   "  - {kind: cluster, path: clusters, sources: ['*.yaml']}\n"
                                   "  - {kind: model, path: models, sources: ['*.yaml']}\n")
    proc = _run(ws, "build")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr and "SECRET" not in proc.stderr + proc.stdout
    assert "model.config_json" in proc.stderr and "leads out of the build workspace" in proc.stderr


@pytest.mark.integration
@pytest.mark.parametrize("case", ["deep-flow", "deep-block", "huge-int", "entries", "alias-bomb", "not-utf8"])
def test_migrate_reads_through_the_loaders_bounds(tmp_path, case):
    text = {"deep-flow": "model: " + _deep_flow() + "\n",
            "deep-block": "model:\n" + "- " * DEEP + "x\n",
            "huge-int": "model:\n  n: 1" + "0" * 5000 + "\n",
            "entries": "model:\n  id: org/m\nenv:\n" + "".join(f"  K{i}: v\n" for i in range(300_000)),
            "alias-bomb": "".join(f"{n}: &{n} [{', '.join([f'*{p}'] * 9) if p else ', '.join(['x'] * 9)}]\n"
                                  for p, n in zip(["", *"abcdefg"], "abcdefgh")),
            "not-utf8": None}[case]
    path = tmp_path / "legacy.yaml"
    if text is None:
        path.write_bytes(b"model:\n  id: \xff\xfe\n")
    else:
        path.write_text(text)
    start = time.monotonic()
    proc = _run(tmp_path, "migrate", "legacy.yaml", "-o", "new.yaml")
    assert time.monotonic() - start < 30
    expect = {"deep-flow": "nest more than 64 deep", "deep-block": "nest more than 64 deep",
              "huge-int": "a whole number of 5001 digits", "entries": "holds 300003 lines",
              "alias-bomb": "alias bomb", "not-utf8": "not UTF-8 text"}[case]
    _one_error(proc, "legacy.yaml", expect)
    assert not (tmp_path / "new.yaml").exists()


@pytest.mark.integration
@pytest.mark.parametrize("kind", ["symlink-out", "fifo"])
def test_build_yaml_is_read_from_the_workspace_itself(tmp_path, kind):
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "real.yaml").write_text("targets: []\n")
    if kind == "fifo":
        os.mkfifo(ws / "BUILD.yaml")
    else:
        (ws / "BUILD.yaml").symlink_to(tmp_path / "real.yaml")
    line = _one_error(_run(ws, "build"), "BUILD.yaml")
    assert ("outside the build workspace" in line) if kind == "symlink-out" else ("FIFO" in line)


@pytest.mark.integration
def test_a_spec_named_as_a_pipe_is_still_read_once_and_bounded(tmp_path):
    (tmp_path / "spec.yaml").write_text(QWEN)
    (tmp_path / "deep.yaml").write_text(_spec_with("[" * 5000 + "]" * 5000))
    base = f"{sys.executable} -m manifesto config validate <(cat {{}}) --cluster example-gb200 --user u --namespace n"
    ok = subprocess.run(["bash", "-c", base.format("spec.yaml")], cwd=tmp_path, capture_output=True, text=True,
                        timeout=BOUND)
    assert ok.returncode == 0, ok.stderr
    deep = subprocess.run(["bash", "-c", base.format("deep.yaml")], cwd=tmp_path, capture_output=True, text=True,
                          timeout=BOUND)
    _one_error(deep, "nest more than 64 deep")


def test_the_fast_path_reader_bounds_text_as_the_edge_does():
    from manifesto.edge import limits, raw

    assert raw.LENIENT_LIMIT == limits.MAX_TEXT_BYTES
