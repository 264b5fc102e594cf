"""The one definition of every render option (``manifesto.resolve.options``) and every surface it
generates: the flags, the settings, the Struct, BUILD.yaml, the header and the options a
deployment target fixes. A new option that one surface misses fails here, and so does a
ninth hand-written list of option names anywhere in the package."""

from __future__ import annotations

import argparse
import re
import shlex

import pytest

from manifesto.resolve import options
from manifesto.resolve.options import OPTIONS, by_name

#: One non-default value per option, as a user would type it on the command line. A new
#: option must add its own here (test_every_option_has_an_example).
EXAMPLES = {
    "user": "alice",
    "namespace": "team-a",
    "accelerator": "b200",
    "vllm_env": "/shared/vllm-envs/main",
    "user_root": "/home/{user}",
    "log_root": "/logs/{user}",
    "cache_root": "/cache/{user}",
    "pre_launch": ["nvidia-smi", "echo 'ready; go'"],
    "routing_profile": "routing/wide.yaml",
    "idle_shutdown": False,
    "idle_timeout_minutes": "2h",
    "argocd_sync_waves": True,
}
EXPECTED = {**EXAMPLES, "pre_launch": tuple(EXAMPLES["pre_launch"]), "idle_timeout_minutes": 120}


def _argv() -> list[str]:
    words = []
    for o in OPTIONS:
        value = EXAMPLES[o.name]
        if o.kind == "switch":
            words.append(o.flag if value else "--no-" + o.flag[2:])
        elif o.kind == "list":
            for item in value:
                words += [o.flag, item]
        else:
            words += [o.flag, value]
    return words


def _render_parser() -> argparse.ArgumentParser:
    from manifesto.cli import get_parser

    root = get_parser("render")
    render = next(a for a in root._actions if isinstance(a, argparse._SubParsersAction)).choices["render"]
    return next(a for a in render._actions if isinstance(a, argparse._SubParsersAction)).choices["manifest"]


def test_every_option_has_an_example():
    assert set(EXAMPLES) == set(options.FIELDS)


def test_the_struct_is_the_plan_options_and_the_render_options():
    import msgspec

    from manifesto.tasks import pair as build_renderer
    from manifesto.resolve import plan

    assert plan.Options is options.Options is build_renderer.RenderOptions
    assert tuple(f.name for f in msgspec.structs.fields(options.Options)) == options.FIELDS


def test_every_flag_parses_into_every_field_and_back_through_the_header():
    """Flags -> settings -> Options -> header flags -> flags: every option survives the loop."""
    from manifesto.cli.settings import Settings, options as cli_options

    parser = _render_parser()
    flags = {s for a in parser._actions for s in a.option_strings}
    for o in OPTIONS:
        assert set(o.flags) <= flags, o
    args = parser.parse_args(["spec.yaml", *_argv()])
    opts = cli_options(args, Settings())
    assert msgspec_builtins(opts) == EXPECTED
    words = shlex.split(" ".join(options.header_flags(opts)))
    again = cli_options(parser.parse_args(["spec.yaml", "--routing-profile", "routing/wide.yaml", *words]),
                        Settings())
    assert again == opts
    # The header names every option but the routing profile (inlined as a heredoc).
    named = {w for w in words if w.startswith("--")}
    for o in OPTIONS:
        assert (o.name == "routing_profile") != bool(named & {o.flag, "--no-" + o.flag[2:]}), o


def msgspec_builtins(opts) -> dict:
    return {f: getattr(opts, f) for f in options.FIELDS}


def test_gpu_is_an_alias_of_accelerator():
    parser = _render_parser()
    assert parser.parse_args(["s", "--gpu", "h200"]).accelerator == "h200"
    assert "--accelerator ACCELERATOR, --gpu ACCELERATOR" in parser.format_help()


def test_buildfile_takes_every_build_option_with_the_flag_grammar():
    from manifesto.build_graph import buildfile, renderer

    assert renderer.OPTION_FIELDS == options.BUILD_FIELDS == buildfile.OPTION_FIELDS
    assert set(buildfile._OPTION_KEYS) == {"extends", *options.BUILD_FIELDS}
    for name in options.BUILD_FIELDS:
        o = by_name(name)
        assert options.build_value(o, EXAMPLES[name]) == EXPECTED[name]
    # log_root and vllm_env, which BUILD.yaml could not set before, are build options.
    assert {"log_root", "vllm_env", "accelerator", "pre_launch"} <= set(options.BUILD_FIELDS)


def test_a_deployment_target_fixes_every_fixed_option():
    from manifesto.cli.target_cmds import _fixed

    parser = _render_parser()
    dests = {a.dest for a in parser._actions}
    fixed = set(_fixed())
    for o in OPTIONS:
        assert set(o.dests) <= dests
        assert o.fixed == (set(o.dests) <= fixed), o


@pytest.mark.parametrize("name, value, problem", [
    ("user", "../../x", "must be a single path segment"),
    ("namespace", "Bad_NS", "must be a DNS label"),
    ("accelerator", "a/b", "must be a single path segment"),
    ("vllm_env", "rel/path", "must be an absolute path"),
    ("log_root", "/l\n/x", "must be one line"),
    ("idle_timeout_minutes", "99999999999999999999999", "expected a positive duration of at most a year"),
    ("idle_timeout_minutes", 525601, "expected a positive duration of at most a year"),
])
def test_one_grammar_for_every_source(name, value, problem):
    """The same checker refuses a value from a flag and from BUILD.yaml."""
    o = by_name(name)
    assert problem in (options.check(o, value) or "")
    with pytest.raises(ValueError, match=re.escape(problem)):
        options.build_value(o, value)
    if isinstance(value, str):
        from manifesto.errors import InputError

        with pytest.raises(InputError, match=re.escape(problem)):
            options.value_of(o, value, {})


def test_an_empty_flag_value_says_it_is_empty():
    """`--user "$USER"` with USER unset: the error says the value is empty, not that '' is not
    a path segment."""
    from manifesto.errors import InputError

    for name in ("user", "namespace", "accelerator", "vllm_env"):
        o = by_name(name)
        with pytest.raises(InputError) as info:
            options.value_of(o, "", {})
        assert str(info.value).startswith(f"{o.label} is empty: a shell variable that expanded to nothing?")
    assert str(info.value).endswith("Give a value")
    with pytest.raises(InputError, match=re.escape('(e.g. --user "$(id -un)")')):
        options.value_of(by_name("user"), "", {})


def test_no_other_module_lists_the_options():
    """A ninth place: any module but options.py naming four option fields in one line."""
    from pathlib import Path

    import manifesto

    names = [n for n in options.FIELDS if "_" in n]  # the distinctive names
    for path in Path(manifesto.__file__).parent.rglob("*.py"):
        if path.name == "options.py" and path.parent.name == "resolve":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            hits = [n for n in names if f'"{n}"' in line or f"'{n}'" in line]
            assert len(hits) < 4, f"{path}:{number} lists options by hand: {hits}"
