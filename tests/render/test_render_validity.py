"""The post-render check (``manifesto.render.k8s.validity``) and the YAML writer's last line of defence.

Inputs refuse bad values long before rendering (``test_hostile_render``); these tests feed the
check objects that break one rule each, as a future renderer bug would, and assert the
internal error names the object and the field. The writer must escape every character a
YAML reader would not read back as written.
"""

from __future__ import annotations

import copy

import pytest
import yaml

from manifesto.errors import RenderCheckError
from manifesto.render.k8s.validity import check_objects
from manifesto.util.yamlemit import dump_all, dump_yaml

POD = {
    "metadata": {"labels": {"app": "demo"}},
    "spec": {
        "containers": [{"name": "vllm", "image": "x", "env": [{"name": "A", "value": "1"}],
                        "ports": [{"name": "http", "containerPort": 8000}],
                        "volumeMounts": [{"name": "cache", "mountPath": "/cache"}]}],
        "volumes": [{"name": "cache", "emptyDir": {}}],
        "nodeSelector": {"nvidia.com/gpu.present": "true"},
    },
}
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment",
              "metadata": {"name": "demo-decode", "namespace": "ns", "labels": {"app": "demo"}},
              "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "demo"}}, "template": POD}}
SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "demo-http", "namespace": "ns"},
           "spec": {"selector": {"app": "demo"}, "ports": [{"name": "http", "port": 80, "targetPort": 8000}]}}


def broken(path: str, value, base=DEPLOYMENT) -> dict:
    obj = copy.deepcopy(base)
    node = obj
    parts = path.split(".")
    for part in parts[:-1]:
        node = node[int(part)] if part.isdigit() else node[part]
    last = parts[-1]
    node[int(last) if last.isdigit() else last] = value
    return obj


CONTAINER = "spec.template.spec.containers.0"
CASES = [
    ("name-too-long", broken("metadata.name", "d" * 64),
     "Deployment", "metadata.name", f"'{'d' * 64}' has 64 characters (at most 63)"),
    ("name-uppercase", broken("metadata.name", "Demo"), "Deployment", "metadata.name",
     "'Demo' must be a DNS label: lowercase letters, digits and '-', starting and ending with a letter or digit"),
    ("service-name-starts-with-digit", broken("metadata.name", "1-http", SERVICE), "Service", "metadata.name",
     "'1-http' must be a DNS-1035 label: lowercase letters, digits and '-', starting and ending with a letter or "
     "digit, starting with a letter"),
    ("namespace", broken("metadata.namespace", "a_b"), "Deployment", "metadata.namespace",
     "'a_b' must be a DNS label: lowercase letters, digits and '-', starting and ending with a letter or digit"),
    ("label-value", broken("metadata.labels", {"app": "a b"}), "Deployment", "metadata.labels.app",
     "label value 'a b' must be a label value: empty, or letters, digits, '-', '_' or '.', starting and ending "
     "with a letter or digit"),
    ("pod-label-key", broken("spec.template.metadata.labels", {"-x": "y"}), "Deployment",
     "spec.template.metadata.labels", "label key '-x' must be a qualified name: an optional DNS-subdomain prefix "
     "and '/', then letters, digits, '-', '_' or '.', starting and ending with a letter or digit"),
    ("annotation-key", broken("metadata.annotations", {"a/b/c": "x"}), "Deployment", "metadata.annotations",
     "annotation key 'a/b/c' has an invalid prefix 'a/b': it must be a DNS subdomain such as example.com"),
    ("env-name", broken(f"{CONTAINER}.env", [{"name": "A-B", "value": "1"}]), "Deployment",
     f"{CONTAINER.replace('.0', '[0]')}.env[0].name",
     "'A-B' is not a valid environment variable name: use letters, digits and '_', not starting with a digit "
     "(the name is also exported by shell scripts)"),
    ("container-port", broken(f"{CONTAINER}.ports", [{"name": "http", "containerPort": 70000}]), "Deployment",
     f"{CONTAINER.replace('.0', '[0]')}.ports[0].containerPort", "70000 is not a TCP port (1-65535)"),
    ("port-name", broken(f"{CONTAINER}.ports", [{"name": "a-very-long-port-name", "containerPort": 1}]),
     "Deployment", f"{CONTAINER.replace('.0', '[0]')}.ports[0].name",
     "'a-very-long-port-name' must be at most 15 characters (it has 21)"),
    ("service-port", broken("spec.ports", [{"name": "http", "port": 0}], SERVICE), "Service", "spec.ports[0].port",
     "0 is not a TCP port (1-65535)"),
    ("replicas", broken("spec.replicas", 2**31), "Deployment", "spec.replicas", "2147483648 is outside 0..2147483647"),
    ("mount-path", broken(f"{CONTAINER}.volumeMounts", [{"name": "cache", "mountPath": "cache"}]), "Deployment",
     f"{CONTAINER.replace('.0', '[0]')}.volumeMounts[0].mountPath", "'cache' must be an absolute path (starting "
     "with '/')"),
    ("volume-name", broken("spec.template.spec.volumes", [{"name": "Cache", "emptyDir": {}}]), "Deployment",
     "spec.template.spec.volumes[0].name", "'Cache' must be a DNS label: lowercase letters, digits and '-', "
     "starting and ending with a letter or digit"),
    ("node-selector", broken("spec.template.spec.nodeSelector", {"k": "v v"}), "Deployment",
     "spec.template.spec.nodeSelector.k", "label value 'v v' must be a label value: empty, or letters, digits, "
     "'-', '_' or '.', starting and ending with a letter or digit"),
    ("dns-policy", broken("spec.template.spec.dnsPolicy", "Cluster"), "Deployment", "spec.template.spec.dnsPolicy",
     "'Cluster' is not one of ClusterFirst, ClusterFirstWithHostNet, Default, None"),
    ("grace-period", broken("spec.template.spec.terminationGracePeriodSeconds", -1), "Deployment",
     "spec.template.spec.terminationGracePeriodSeconds", "-1 is outside 0..2147483647"),
    ("resource-name", broken(f"{CONTAINER}.resources", {"limits": {"gpu": "1"}}), "Deployment",
     f"{CONTAINER.replace('.0', '[0]')}.resources.limits", "resource 'gpu' must be an extended resource name with a "
     "domain prefix, such as nvidia.com/gpu"),
    ("topology-key", broken("spec.template.spec.affinity", {"podAffinity": {"x": [{"topologyKey": "a b"}]}}),
     "Deployment", "spec.template.spec.affinity.podAffinity.x[0].topologyKey", "'a b' must be a qualified name: an "
     "optional DNS-subdomain prefix and '/', then letters, digits, '-', '_' or '.', starting and ending with a "
     "letter or digit"),
]


@pytest.mark.parametrize("obj,kind,field,problem", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_rule_names_object_and_field(obj, kind, field, problem):
    with pytest.raises(RenderCheckError) as info:
        check_objects([obj])
    name = obj["metadata"]["name"]
    assert str(info.value) == (f"internal error: the rendered {kind} '{name}' breaks a Kubernetes rule at {field}: "
                               f"{problem}; this is a bug in manifesto, please report it")


def test_valid_objects_pass_and_come_back_unchanged():
    objs = [copy.deepcopy(DEPLOYMENT), copy.deepcopy(SERVICE)]
    assert check_objects(objs) == [DEPLOYMENT, SERVICE]


def test_duplicate_kind_and_name_is_refused():
    with pytest.raises(RenderCheckError) as info:
        check_objects([DEPLOYMENT, copy.deepcopy(DEPLOYMENT)])
    assert info.value.excess == -1
    assert "another object of this kind has the same name" in str(info.value)


def test_same_name_of_another_kind_is_fine():
    check_objects([DEPLOYMENT, broken("metadata.name", "demo-decode", SERVICE)])


def test_lws_pod_names_count_group_and_worker_index():
    lws = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
           "metadata": {"name": "w" * 59, "namespace": "ns"},
           "spec": {"replicas": 100, "leaderWorkerTemplate": {"size": 2}}}
    with pytest.raises(RenderCheckError) as info:
        check_objects([lws])
    assert info.value.excess == 10  # w*59 + "-99-<hash>" (below) is further over than w*59 + "-99-1"


def test_lws_statefulset_revision_label_fits_63():
    """The StatefulSet controller labels each pod controller-revision-hash=<StatefulSet>-<hash
    of up to 10 characters>; a longer label makes every pod creation fail (seen on the real
    controller in tests/cluster). The pod-name rule alone let 59-character names through."""
    lws = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
           "metadata": {"name": "w" * 50, "namespace": "ns"},
           "spec": {"replicas": 10, "leaderWorkerTemplate": {"size": 2}}}
    check_objects([lws])  # w*50 + "-9" + "-" + 10 = 63
    lws["metadata"]["name"] = "w" * 51
    with pytest.raises(RenderCheckError) as info:
        check_objects([lws])
    assert info.value.excess == 1 and "controller-revision-hash" in str(info.value)
    lws["spec"]["leaderWorkerTemplate"]["size"] = 1  # no worker StatefulSets: the leaders' is w*51
    check_objects([lws])
    lws["metadata"]["name"] = "w" * 53
    with pytest.raises(RenderCheckError):
        check_objects([lws])


HOSTILE_TEXT = ["nul\x00", "esc\x1b[2J", "bell\x07", "del\x7f", "nel\x85", "c1\x9b", "ls\u2028", "ps\u2029",
                "\ufeffbom", "tab\tin", "cr\rlf", "multi\nline\x01\n", "ok", "a: b", "- x", "#c", "'q'", "yes", "0x1F"]


@pytest.mark.parametrize("text", HOSTILE_TEXT, ids=[repr(t) for t in HOSTILE_TEXT])
def test_writer_never_emits_raw_control_characters(text):
    out = dump_yaml({"k": text, text: [text]})
    assert all(c in "\n" or c >= " " and not 0x7F <= ord(c) <= 0x9F and c not in "\u2028\u2029\ufeff"
               for c in out), repr(out)
    assert yaml.safe_load(out) == {"k": text, text: [text]}
    assert list(yaml.safe_load_all(dump_all([{"k": text}]))) == [{"k": text}]


@pytest.mark.parametrize("check", ["dns_label", "dns1035_label", "dns_subdomain", "label_value", "env_name",
                                   "port_name", "path_segment"])
def test_a_trailing_line_break_is_not_part_of_a_valid_name(check):
    """``$`` in a pattern also matches before a final newline; every grammar must end at ``\\Z``."""
    from manifesto.util import rules

    func = getattr(rules, check)
    assert func("demo") is None
    assert func("demo\n") is not None


def test_a_namespace_flag_with_a_trailing_line_break_is_refused(capsys):
    from manifesto.cli import main

    rc = main(["render", "manifest", "qwen/qwen3-0.6b", "-c", "example-gb200", "--user", "u", "-n", "demo\n"])
    assert rc == 1
    assert capsys.readouterr().err.startswith("error: --namespace 'demo\\n' must be a DNS label")


@pytest.mark.parametrize("obj,kind,field,problem", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_quick_pass_lets_no_broken_mapping_through(obj, kind, field, problem, monkeypatch):
    """The walk checks each mapping quickly (``_fine``) and only builds paths for one that may
    break a rule: with every mapping sent to the full check, each case fails the same way."""
    from manifesto.render.k8s import validity

    with pytest.raises(RenderCheckError) as quick:
        check_objects([copy.deepcopy(obj)])
    monkeypatch.setattr(validity, "_fine", lambda node, link: False)
    with pytest.raises(RenderCheckError) as full:
        check_objects([copy.deepcopy(obj)])
    assert str(quick.value) == str(full.value)


def test_the_quick_pass_passes_only_what_the_full_check_passes():
    """Every mapping of every committed Kubernetes artifact: ``_fine`` says True exactly when
    ``_check_mapping`` raises nothing, and for each broken case's mappings it never says True
    where the full check raises."""
    from pathlib import Path

    from manifesto.render.k8s import validity

    def mappings(node, link=None):
        if isinstance(node, dict):
            yield node, link
            for k, v in node.items():
                yield from mappings(v, (link, k))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                yield from mappings(v, (link, i))

    def full_passes(node, link) -> bool:
        try:
            validity._check_mapping(node, validity._path(validity._unwind(link)), validity._failer("K", "n"))
        except RenderCheckError:
            return False
        return True

    out = Path(__file__).resolve().parents[2] / "out"
    files = [f for f in sorted(out.rglob("*.yaml")) if ".cache" not in f.parts]
    objs = [o for f in files for o in yaml.safe_load_all(f.read_text()) if isinstance(o, dict)]
    objs += [copy.deepcopy(c[1]) for c in CASES]
    seen = 0
    for obj in objs:
        for node, link in mappings(obj):
            if validity._INTERESTING.isdisjoint(node):
                continue
            seen += 1
            assert validity._fine(node, link) == full_passes(node, link), validity._path(validity._unwind(link))
    assert seen > 1500
