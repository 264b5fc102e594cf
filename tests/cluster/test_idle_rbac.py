"""The idle-shutdown controller's Role, asked of the real RBAC authorizer: its ServiceAccount
may make every request the controller's shipped script makes with the configuration the
artifact gives it (list pods; get and patch each workload and itself; patch the pool; delete
the gateway), and may not do more than that on the same objects.

The script's requests: ``manifesto/render/k8s/idle_controller.py`` (``Kube``); its
configuration is read with its own ``load_config``.
"""

from __future__ import annotations

import json
import re

import pytest

import kit
from manifesto.render.k8s.idle_controller import load_config
from manifesto.render.k8s.idle_owned import _controller_env
from realkube import MARKS, documents
from test_server_dry_run import ARTIFACTS

pytestmark = MARKS

_PATH = re.compile(r"^/apis?/(?:(?P<group>[^/]+)/)?(?P<version>v[^/]+)/namespaces/(?P<ns>[^/]+)/"
                   r"(?P<resource>[^/]+)/(?P<name>[^/]+)$")
WITH_CONTROLLER = [p for p in ARTIFACTS if _controller_env(documents(p)) is not None]


def _target(path: str) -> tuple[tuple[str, str, str], str]:
    """((group, resource, name), namespace) of an API path."""
    m = _PATH.match(path)
    assert m, path
    group = m["group"] if path.startswith("/apis/") else ""
    return (group, m["resource"], m["name"]), m["ns"]


def _requests(docs: list[dict]) -> tuple[str, list[tuple[str, str]], list[tuple[str, str]]]:
    """(namespace, requests the script makes, requests it must not be allowed)."""
    deployment, env = _controller_env(docs)
    config = load_config(env)
    ns = config.namespace
    pods, secrets = ("", "pods", ""), ("", "secrets", "")
    needed = [("list", pods)]
    denied = [("create", pods), ("delete", pods), ("list", secrets), ("get", secrets)]
    for workload in (*config.workloads, config.controller):
        target, _ = _target(workload.path)
        needed += [("get", target), ("patch", target)]
        denied += [("delete", target), ("update", target)]
    if config.pool is not None:
        target, _ = _target(config.pool.path)
        needed.append(("patch", target))
        denied.append(("delete", target))
    if config.gateway is not None:
        target, _ = _target(config.gateway.path)
        needed.append(("delete", target))
        denied.append(("patch", target))
    return ns, needed, denied


def _objects(text: str) -> list[dict]:
    """The JSON objects kubectl prints one after another for the items of a created List."""
    decoder, out, at = json.JSONDecoder(), [], 0
    while text[at:].strip():
        obj, end = decoder.raw_decode(text, at + len(text[at:]) - len(text[at:].lstrip()))
        out.append(obj)
        at = end
    return out


def test_some_artifacts_run_the_controller():
    assert len(WITH_CONTROLLER) >= 20


@pytest.mark.parametrize("path", WITH_CONTROLLER, ids=lambda p: str(p.relative_to(kit.REPO_ROOT)))
def test_the_idle_controllers_role_allows_its_requests_and_no_more(real_cluster, path):
    docs = documents(path)
    ns, needed, denied = _requests(docs)
    deployment, _ = _controller_env(docs)
    account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
    rbac = [d for d in docs if d["kind"] in ("ServiceAccount", "Role", "RoleBinding")
            and account in (d["metadata"]["name"], d.get("roleRef", {}).get("name"))]
    assert {d["kind"] for d in rbac} == {"ServiceAccount", "Role", "RoleBinding"}
    real_cluster.ensure_namespace(ns)
    listing = json.dumps({"apiVersion": "v1", "kind": "List", "items": rbac})
    # Applied over what an earlier artifact of the same names left (Role rules are one
    # atomic list, so none of its rules survive).
    real_cluster.kubectl("apply", "--server-side", "--force-conflicts", "-f", "-", input=listing)
    # One SubjectAccessReview per request, all in one call: the authorizer's own answers.
    user = f"system:serviceaccount:{ns}:{account}"
    groups = ["system:serviceaccounts", f"system:serviceaccounts:{ns}", "system:authenticated"]
    reviews = [{"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                "spec": {"user": user, "groups": groups, "resourceAttributes": {
                    "namespace": ns, "verb": verb, "group": group, "resource": resource, "name": name}}}
               for verb, (group, resource, name) in needed + denied]
    out = real_cluster.kubectl("create", "-o", "json", "-f", "-",
                               input=json.dumps({"apiVersion": "v1", "kind": "List", "items": reviews}))
    allowed = [bool(r["status"].get("allowed")) for r in _objects(out.stdout)]
    answers = dict(zip(needed + denied, allowed, strict=True))
    missing = [r for r in needed if not answers[r]]
    extra = [r for r in denied if answers[r]]
    assert not missing, f"the Role lacks what the script does: {missing}"
    assert not extra, f"the Role allows more than the script does: {extra}"
