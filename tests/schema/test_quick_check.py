"""The quick check (``manifesto.schema.quick``) against pydantic-core on the same compiled schemas.

The quick check may give up on any data; when it does not, its value must be pydantic-core's,
to the type of every field and the set of fields given. Every bundled and upstream input must
pass it (else a render pays for importing pydantic-core), and no broken variant of them may:
each of those gives pydantic-core's errors, through the fallback.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys

import pytest

import kit
from manifesto.schema import checks, compiled, quick, validation
from test_compiled_schema import _BAD_VALUES, _data, _inputs, _paths, _replaced

REPO = kit.REPO_ROOT
_CLASSES = {"cluster": compiled.ClusterProfile, "model": compiled.ModelSpec, "routing": compiled.EndpointPickerConfig,
            "images": compiled.ImageCatalog, "workload": compiled.Workload}


def _typed(value):
    """``value`` with the type of every part spelled out (1 and 1.0 and True differ here)."""
    if isinstance(value, checks.Record):
        return (type(value).__name__, sorted(value.model_fields_set),
                [(k, _typed(v)) for k, v in value.__dict__.items()])
    if isinstance(value, dict):
        return ("dict", [(_typed(k), _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_typed(v) for v in value])
    return (type(value).__name__, value)


def _core(cls, data):
    """pydantic-core's value of ``data``, or None when it refuses it."""
    try:
        return validation.validator(cls).validate_python(copy.deepcopy(data))
    except validation.validation_error():
        return None


def _quick(cls, data):
    """The quick check's value of ``data``, or None when it gives up."""
    try:
        return quick.checker(cls.__name__)(copy.deepcopy(data))
    except Exception:  # noqa: BLE001 - giving up, whatever the reason, is the fallback
        return None


def test_every_schema_a_file_is_validated_with_has_a_quick_check():
    for name in compiled.TOP:
        assert quick.checker(name) is not None, name


@pytest.mark.parametrize(("kind", "path"), _inputs())
def test_every_input_passes_the_quick_check_with_pydantic_cores_value(kind, path):
    cls = _CLASSES[kind]
    data = _data(kind, path)
    value = _quick(cls, data)
    assert value is not None, "a valid input the quick check gives up on: a render would import pydantic-core"
    assert _typed(value) == _typed(_core(cls, data))


@pytest.mark.parametrize(("kind", "path"), [p for p in _inputs() if "/clusters/" not in p.id or "gb200" in p.id
                                            or "slurm.yaml" in p.id][:12])
def test_a_broken_variant_never_gets_a_value_pydantic_core_would_not_give(kind, path):
    """Every value of a good input replaced by each of a dozen others, and an unknown key in
    every mapping: the quick check gives up, or gives exactly what pydantic-core gives."""
    cls = _CLASSES[kind]
    data = _data(kind, path)
    agreed = refused = 0
    for where in list(_paths(data)):
        target = data
        for part in where:
            target = target[part]
        variants = [_replaced(data, where, bad) for bad in _BAD_VALUES]
        if isinstance(target, dict):
            variants.append(_replaced(data, where, {**target, "unknown_kye": 1}))
        for variant in variants:
            core, fast = _core(cls, variant), _quick(cls, variant)
            if fast is None:
                refused += 1
            else:
                assert core is not None, (where, "the quick check took data pydantic-core refuses")
                assert _typed(fast) == _typed(core), where
                agreed += 1
    assert agreed > 10 and refused > 10


@pytest.mark.parametrize(("schema", "good", "bad"), [
    ({"type": "int"}, [0, -3, 10**30], [True, 1.0, "1", None]),
    ({"type": "float"}, [1.5, 2, -0.0], [True, "1.5", None]),
    ({"type": "bool"}, [True, False], [1, 0, "true", None]),
    ({"type": "str", "min_length": 2}, ["ab", "abc"], ["a", "", 12, b"ab"]),
    ({"type": "literal", "expected": ["a", 1]}, ["a", 1], [True, 1.0, "b", ["a"]]),
    ({"type": "list", "items_schema": {"type": "int"}, "min_length": 1}, [[1], [1, 2]], [[], (1,), [True], "1"]),
    ({"type": "dict", "keys_schema": {"type": "str"}, "values_schema": {"type": "int"}}, [{}, {"a": 1}],
     [{1: 1}, {"a": "1"}, [("a", 1)]]),
    ({"type": "nullable", "schema": {"type": "int"}}, [None, 3], ["3"]),
    ({"type": "union", "choices": [{"type": "int"}, {"type": "float"}]}, [1, 1.5], [True, "1"]),
    ({"type": "union", "choices": [{"type": "float"}, {"type": "int"}]}, [1, 1.5], [True]),
])
def test_each_construct_takes_what_strict_pydantic_core_takes_and_keeps_its_type(schema, good, bad):
    """The constructs one by one, inside a strict model as every input schema is."""
    from pydantic_core import SchemaValidator

    model = {"type": "model", "cls": compiled.Dra, "ref": "M", "schema": {
        "type": "model-fields", "model_name": "M", "computed_fields": [],
        "fields": {"f": {"type": "model-field", "schema": schema}}},
        "custom_init": False, "root_model": False,
        "config": {"extra_fields_behavior": "forbid", "strict": True, "title": "M"}}
    check = quick._Builder({"M": model}).ref("M")
    core = SchemaValidator(model)
    for value in good:
        assert _typed(check({"f": value})) == _typed(core.validate_python({"f": value})), value
    for value in bad:
        with pytest.raises(Exception):  # noqa: B017 - giving up, or pydantic-core's refusal
            check({"f": value})


def test_a_construct_it_does_not_read_leaves_the_schema_to_pydantic_core():
    with pytest.raises(quick.Unsupported, match="pattern"):
        quick._Builder({"S": {"type": "str", "pattern": "^a"}}).ref("S")
    with pytest.raises(quick.Unsupported, match="with-info"):
        quick._Builder({"S": {"type": "function-after", "function": {"type": "with-info", "function": len},
                              "schema": {"type": "str"}}}).ref("S")
    lax = {"type": "model", "cls": compiled.Dra, "schema": {"type": "model-fields", "fields": {}},
           "config": {"extra_fields_behavior": "ignore", "strict": True}}
    with pytest.raises(quick.Unsupported, match="not strict"):
        quick._Builder({"M": lax}).ref("M")


def test_defaults_are_pydantic_cores_own_fresh_copies():
    one = validation.validate(compiled.ModelSpec, _data("model", REPO / "models" / "qwen" / "qwen3-0.6b.yaml"))
    two = validation.validate(compiled.ModelSpec, _data("model", REPO / "models" / "qwen" / "qwen3-0.6b.yaml"))
    for name, value in one.__dict__.items():
        if isinstance(value, (list, dict)) and name not in one.model_fields_set:
            assert value is not two.__dict__[name], name


@pytest.mark.integration
@pytest.mark.parametrize("spec", ["models/qwen/qwen3-0.6b.yaml", "models/deepseek-v4/1P-EP8-1D-EP8.yaml"])
def test_a_render_of_valid_inputs_imports_neither_pydantic_nor_what_it_does_not_use(tmp_path, spec):
    script = (
        "import sys\n"
        "from manifesto.cli import main\n"
        f"code = main(['render', 'manifest', '{spec}', '--cluster',"
        " 'clusters/example-gb200.yaml', '--user', 'u', '--namespace', 'ns'])\n"
        "assert code == 0, code\n"
        "open(sys.argv[1], 'w').write(repr(sorted(m for m in sys.modules if m.startswith(('pydantic', 'hashlib',"
        " 'manifesto.cli.ops_cmds', 'manifesto.cli.init_cmds', 'dataclasses', 'fractions', 'pathlib')))))\n"
    )
    env = {**os.environ, "MANIFESTO_NO_CACHE": "1"}
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "modules")], cwd=REPO, env=env,
                         capture_output=True, text=True, check=True)
    assert out.stdout.count("kind: ") > 1
    assert (tmp_path / "modules").read_text() == "[]"  # neither pydantic nor pydantic_core


def test_an_invalid_input_still_gets_pydantic_cores_errors(tmp_path):
    from manifesto.errors import ManifestoError
    from manifesto.load.inputs import load_cluster_file

    text = (REPO / "clusters" / "example-gb200.yaml").read_text().replace("gpus_per_node: 4", "gpus_per_node: four", 1)
    assert "four" in text
    (tmp_path / "c.yaml").write_text(text)
    with pytest.raises(ManifestoError) as caught:
        load_cluster_file(tmp_path / "c.yaml")
    assert "gpus_per_node" in caught.value.format() and "c.yaml:" in caught.value.format()
