"""Properties of the third round's edge (issue 35, items 4 to 7), over generated input:

- the gitops grammar (``manifesto.build_graph.gitops_rules``): what it accepts, written as init
  writes it, reads back as the same string; a URL with credentials is always refused and the
  refusal never repeats them;
- the bearer token never survives ``edge.escape.terminal(..., secrets=...)``, whatever the
  case, the escapes around it or the cut;
- a config.json's counts: any value is an Architecture or one InputError, never another
  exception (a 401-digit integer was an OverflowError);
- quantities: Kubernetes' suffixes and exponents read exactly; a byte count refuses a
  fraction's suffix.
"""

from __future__ import annotations

import json
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from manifesto.edge.escape import terminal
from manifesto.errors import InputError
from manifesto.load.yamlio import parse_yaml
from manifesto.build_graph import gitops_rules as rules
from manifesto.util import quantity

FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_REF_CHARS = string.ascii_letters + string.digits + "._-/+!#%&,=@~^:?*[\\ '\"\u202e\u200b\u00e9"


@FAST
@given(st.text(alphabet=_REF_CHARS, min_size=1, max_size=40) | st.text(max_size=20))
def test_an_accepted_revision_reads_back_as_the_same_string(text):
    if rules.revision_problem(text) is not None:
        return
    assert text.isprintable() and not any(ch.isspace() for ch in text)
    data, _ = parse_yaml(f"revision: {rules.yaml_string(text)}\n", "BUILD.yaml")
    assert data == {"revision": text}


@FAST
@given(st.sampled_from(["https", "http", "git", "ssh"]), st.text(alphabet=string.ascii_letters + string.digits + "-._",
                                                                min_size=1, max_size=12),
       st.text(alphabet=string.ascii_letters + string.digits + "-._~!$&'()*+,;=%/@:", min_size=1, max_size=24),
       st.sampled_from(["git.example.com", "10.0.0.1", "[::1]:8443", "h"]))
def test_a_url_with_a_password_is_refused_without_repeating_it(scheme, user, password, host):
    secret = f"S3cr3t{password}"
    url = f"{scheme}://{user}:{secret}@{host}/team/repo.git"
    for problem in (rules.repo_url_problem(url), rules.server_problem(url), rules.revision_problem(url),
                    rules.cluster_name_problem(url), rules.project_problem(url), rules.path_problem(url)):
        assert problem is not None and "with credentials" in problem
        assert secret not in problem


@FAST
@given(st.text(alphabet=string.ascii_letters + string.digits + "/:.@-_~", min_size=1, max_size=60))
def test_an_accepted_repository_url_reads_back_and_holds_no_credentials(url):
    if rules.repo_url_problem(url) is not None:
        return
    assert not rules.has_credentials(url)
    data, _ = parse_yaml(f"repo_url: {rules.yaml_string(url)}\n", "BUILD.yaml")
    assert data == {"repo_url": url}


@pytest.mark.parametrize("url", [
    "https://github.com/acme/serving.git", "http://git.internal:8080/team/serving", "git://git.example.com/serving",
    "ssh://git@github.com/acme/serving.git", "ssh://git@git.example.com:2222/~alice/serving.git",
    "git@github.com:acme/serving.git", "https://[::1]:8443/r.git",
])
def test_usual_repository_urls_are_accepted(url):
    assert rules.repo_url_problem(url) is None


@FAST
@given(st.text(alphabet=string.ascii_letters + string.digits + "-_.", min_size=8, max_size=40),
       st.text(max_size=60), st.text(max_size=60), st.integers(min_value=0, max_value=200), st.booleans())
def test_the_token_never_survives_a_line_for_the_terminal(token, before, after, limit, upper):
    shown = token.upper() if upper else token
    line = terminal(before + shown + "\x1b[2J\n" + after + shown, limit, secrets=(token,))
    assert token.lower() not in line.lower()
    if limit:
        assert len(line) <= max(limit, 3)


@FAST
@given(st.sampled_from(["hidden_size", "num_attention_heads", "num_key_value_heads", "num_hidden_layers", "vocab_size",
                        "head_dim", "intermediate_size", "kv_lora_rank", "num_experts", "max_position_embeddings",
                        "sliding_window", "q_lora_rank"]),
       st.one_of(st.integers(min_value=-(10 ** 401), max_value=10 ** 401), st.floats(allow_nan=True),
                 st.text(max_size=5), st.booleans(), st.none(), st.lists(st.integers(), max_size=3)))
def test_a_config_json_count_is_an_architecture_or_one_input_error(key, value):
    from kit import REPO_ROOT
    from manifesto.resolve.architecture import from_config

    config = json.loads((REPO_ROOT / "catalog/architectures/Qwen/Qwen3-0.6B.json").read_text())["config"]
    config[key] = value
    try:
        arch = from_config(config, source="config.json")
    except InputError as exc:
        message = str(exc)
        assert "\n" not in message and len(message) < 300  # one line; a config.json's value is never repeated
        assert not (isinstance(value, int) and abs(value) > 10 ** 12 and str(abs(value))[:12] in message)
        return
    assert arch.attention_heads >= 1 and arch.kv_heads >= 1 and arch.layers >= 1 and arch.hidden_size >= 1
    assert arch.hidden_size <= 1 << 20 and arch.layers <= 1 << 16 and arch.vocab_size <= 1 << 26


@pytest.mark.parametrize("text,value", [
    ("8", 8), ("500m", quantity.parse("0.5")), ("64Gi", 64 << 30), ("2G", 2 * 10 ** 9), ("1e3", 1000), ("1E9", 10 ** 9),
    ("5.", 5), ("+5", 5), ("100n", quantity.parse("0.0000001")), ("3u", quantity.parse("0.000003")),
    ("1.5Gi", 3 << 29), ("1e+2", 100),
])
def test_quantities_read_as_kubernetes_reads_them(text, value):
    assert quantity.parse(text) == value


@pytest.mark.parametrize("text", ["500m", "2u", "7n", "1.5m", "0.5m"])
def test_a_byte_count_refuses_a_fractions_suffix(text):
    with pytest.raises(ValueError, match="is a fraction of a byte"):
        quantity.byte_count(text)
    from manifesto.store import parse_limit

    with pytest.raises(ValueError, match="is a fraction of a byte"):
        parse_limit(text)


@pytest.mark.parametrize("text", ["\u0661\u0662", "1e999", "1e-999", "", ".", "e3", "1Gb", "-1Gi", "1" * 65])
def test_what_is_not_a_quantity_is_one_value_error(text):
    with pytest.raises(ValueError):
        quantity.parse(text)


@pytest.mark.parametrize("tag", ["!!python/object:os.system", "!Ref", "!<tag:example.com,2024:x>", "!!binaryx",
                                 "!!python/tuple"])
def test_a_tag_the_loader_does_not_know_is_refused_at_its_position(tag):
    from manifesto.errors import YamlSyntaxError

    with pytest.raises(YamlSyntaxError) as info:
        parse_yaml(f"a: 1\nb: {tag} x\n", "f.yaml")
    assert str(info.value).startswith("f.yaml:2:4: the tag ") and "\n" not in str(info.value)


def test_yamls_own_tags_still_read():
    data, _ = parse_yaml("a: !!str 1\nb: !!int '2'\nc: !!float 3\nd: !!bool true\ne: !!null ''\nf: !!map {x: 1}\n"
                         "g: !!seq [1]\n", "f.yaml")
    assert data == {"a": "1", "b": 2, "c": 3.0, "d": True, "e": None, "f": {"x": 1}, "g": [1]}
