"""The hostile-input corpus, third round (issue 35), I/O side: same ``Case`` and tree as ``io_cases``.

Classes (the id's prefix):

- ``g-``: GitOps values, through ``init --gitops-*`` and through BUILD.yaml's gitops target:
  one grammar (``manifesto.build_graph.gitops_rules``); credentials in a URL refused without being
  repeated (the corpus' SECRET must never be printed); values YAML would retype or cannot
  hold (``1.10``, ``~``, a trailing ``:``), ``file://``, invisible and bidi characters;
- ``n-``: numbers from files and flags: a config.json's counts bounded above and below (a
  401-digit integer, zero heads or layers), ASCII digits only in count flags, byte sizes that
  refuse a fraction's suffix (``500m``);
- ``t-``: YAML tags the loader does not know (``!!python/...``, a local ``!Tag``) in a spec, a
  cluster profile and BUILD.yaml;
- ``l-``: leftovers: the ``--user`` owner check over JSON manifests, a kubectl that cannot run.

The remote cache's hostile records (status, suffix, reason, budget, index inputs, the token
echoed) run against servers started by ``tests/edge/test_edge_remote_hostile.py``.
"""

from __future__ import annotations

import json

from io_cases import BUILD_YAML, SECRET, Case, _workspace

__all__ = ["CASES"]

INIT = ("init", "new", "--user", "u", "--context", "ctx")
REPO = "https://git.example.com/team/serving.git"
URL_USAGE = ("(https://HOST/PATH, ssh://[USER@]HOST/PATH, git://HOST/PATH or USER@HOST:PATH, without spaces, quotes "
             "or shell metacharacters)")
CREDENTIALS = ("is refused: BUILD.yaml (and out/gitops/) is committed; give Argo CD the credentials instead (a "
               "repository or cluster secret, `argocd repo add` / `argocd cluster add`)")
INVISIBLE = "holds a space, a control or an invisible character (a bidirectional override, a zero-width space)"
REF_FORMAT = ("is not a branch, tag or commit (git check-ref-format: no leading '-' or '/', no '..', '@{', '//', part "
              "starting with '.' or ending in '.lock', no trailing '/' or '.')")

#: A workspace with a deployment target and a gitops target over it; ``gitops`` is spliced in.
GITOPS_BUILD = BUILD_YAML + """\
  - {kind: deployment, name: demo, model: "//models:m", cluster: gpu, namespace: ns, user: u, context: ctx}
  - kind: gitops
    name: argocd
"""
GITOPS_LINE = BUILD_YAML.count("\n") + 4  # the line after `name: argocd`


def _gitops_ws(body: str) -> dict:
    return _workspace(**{"ws/BUILD.yaml": GITOPS_BUILD + body})


def _config(**change) -> str:
    """The bundled Qwen3-0.6B config.json with ``change`` (JSON text: 401 digits stay exact)."""
    from kit import REPO_ROOT

    config = json.loads((REPO_ROOT / "catalog/architectures/Qwen/Qwen3-0.6B.json").read_text())["config"]
    text = json.dumps({k: v for k, v in config.items() if k not in change})
    extra = ", ".join(f'"{k}": {v}' for k, v in change.items())
    return text[:-1] + (", " if extra else "") + extra + "}"


SPEC = "release: demo\nmodel:\n  id: acme/tiny\n  config_json: config.json\nroles:\n  - name: decode\n"
PLAN = ("plan", "models/m.yaml", "-c", "clusters/gpu.yaml")
CONFIG_SOURCE = "models/config.json (model.config_json): config.json"


def _config_ws(**change) -> dict:
    return _workspace(SPEC, **{"ws/models/config.json": _config(**change)})


def _build_config_error(key: str, bounds: str, found: str) -> str:
    return f"error: //models:m @ gpu: {CONFIG_SOURCE} '{key}' must be a whole number from {bounds}, found {found}"


QWEN_PLAN = ("plan", "Qwen/Qwen3-32B", "-c", "example-h200")
TAG = ("names a type manifesto does not read (only YAML's own: !!str, !!int, !!float, !!bool, !!null, !!map, !!seq, "
       "!!timestamp...); remove it")
EXPLAIN = ("explain", "spec.yaml", "--cluster", "example-gb200", "--user", "u", "--namespace", "ns")
QWEN_SPEC = "release: demo\nmodel:\n  id: Qwen/Qwen3-0.6B\nroles:\n  - name: decode\n"


def _owned(owner: str, layout: str) -> str:
    """A manifest of one ConfigMap labelled for ``owner``, in a layout kubectl reads."""
    obj = {"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "x-config", "namespace": "ns", "labels": {"llm-d.ai/owner": owner}}}
    if layout == "json":
        return json.dumps(obj, indent=2)
    if layout == "json-list":
        return json.dumps({"apiVersion": "v1", "kind": "List", "items": [obj]})
    if layout == "yaml-flow":
        return "---\n" + json.dumps(obj) + "\n"
    raise AssertionError(layout)


LIVE_BOB = [{"apiVersion": "v1", "kind": "ConfigMap",
             "metadata": {"name": "x-config", "namespace": "ns", "labels": {"llm-d.ai/owner": "bob"}}}]
BOB = ("--user alice: bob.{ext} was rendered for user bob (its llm-d.ai/owner label); render it again with --user "
       "alice, or drop --user")


CASES: list[Case] = [
    # -- g: gitops values through init and through the build -------------------------------------
    Case("g-init-repo-password", (*INIT, "--gitops-repo", f"https://bob:{SECRET}@git.example.com/r.git"),
         f"error: --gitops-repo: a repository URL with credentials (https://***@git.example.com/...) {CREDENTIALS}"),
    Case("g-init-repo-token-as-user", (*INIT, "--gitops-repo", f"https://{SECRET}@github.com/acme/r.git"),
         f"error: --gitops-repo: a repository URL with credentials (https://***@github.com/...) {CREDENTIALS}"),
    Case("g-init-repo-ssh-password", (*INIT, "--gitops-repo", f"ssh://git:{SECRET}@git.example.com/r.git"),
         f"error: --gitops-repo: a repository URL with credentials (ssh://***@git.example.com/...) {CREDENTIALS}"),
    Case("g-init-repo-git-password", (*INIT, "--gitops-repo", f"git://u:{SECRET}@git.example.com/r.git"),
         f"error: --gitops-repo: a repository URL with credentials (git://***@git.example.com/...) {CREDENTIALS}"),
    Case("g-init-repo-file", (*INIT, "--gitops-repo", "file:///srv/serving.git"),
         "error: --gitops-repo: 'file:///srv/serving.git' names a folder on one machine; Argo CD fetches the "
         f"repository from a server: give its URL {URL_USAGE}"),
    Case("g-init-repo-trailing-colon", (*INIT, "--gitops-repo", "git@git.example.com:"),
         "error: --gitops-repo: 'git@git.example.com:' names a host but no repository (a path after ':')"),
    Case("g-init-repo-tilde", (*INIT, "--gitops-repo", "~"),
         f"error: --gitops-repo: '~' is not a repository URL {URL_USAGE}"),
    Case("g-init-repo-no-path", (*INIT, "--gitops-repo", "https://git.example.com"),
         "error: --gitops-repo: 'https://git.example.com' names a server but no repository (a path after the host)"),
    Case("g-init-repo-bidi", (*INIT, "--gitops-repo", "https://git.example.com/\u202eevil.git"),
         f"error: --gitops-repo: 'https://git.example.com/\\u202eevil.git' {INVISIBLE}; a repository URL has none"),
    Case("g-init-revision-bidi", (*INIT, "--gitops-repo", REPO, "--gitops-revision", "v1\u202e2"),
         f"error: --gitops-revision: 'v1\\u202e2' {INVISIBLE}; a branch, tag or commit has none"),
    Case("g-init-revision-zero-width", (*INIT, "--gitops-repo", REPO, "--gitops-revision", "main\u200b"),
         f"error: --gitops-revision: 'main\\u200b' {INVISIBLE}; a branch, tag or commit has none"),
    Case("g-init-revision-tilde", (*INIT, "--gitops-repo", REPO, "--gitops-revision", "~"),
         "error: --gitops-revision: '~' is not a branch, tag or commit: git refuses '~' in one"),
    Case("g-init-revision-dotdot", (*INIT, "--gitops-repo", REPO, "--gitops-revision", "main..dev"),
         f"error: --gitops-revision: 'main..dev' {REF_FORMAT}"),
    Case("g-init-revision-option", (*INIT, "--gitops-repo", REPO, "--gitops-revision=-x"),
         f"error: --gitops-revision: '-x' {REF_FORMAT}"),
    # Legitimate values YAML would read as numbers or null: written quoted, they stay strings.
    *[Case(f"g-init-revision-{name}-accepted", (*INIT, "--gitops-repo", REPO, "--gitops-revision", value), None,
           rc=0) for name, value in (("decimal", "1.10"), ("digits", "1234567"), ("true", "true"), ("hex", "0x1F"))],
    Case("g-build-repo-password", ("build",),
         f"error: BUILD.yaml:{GITOPS_LINE}:5: targets[3].repo_url: a repository URL with credentials "
         f"(https://***@git.example.com/...) {CREDENTIALS}",
         files=_gitops_ws(f"    repo_url: https://bob:{SECRET}@git.example.com/r.git\n    revision: main\n")),
    Case("g-build-server-password", ("build",),
         f"error: BUILD.yaml:{GITOPS_LINE + 2}:19: targets[3].destination.server: an API server URL with credentials "
         f"(https://***@k.example.com:6443/...) {CREDENTIALS}",
         files=_gitops_ws(f"    repo_url: {REPO}\n    revision: main\n"
                          f"    destination: {{server: 'https://admin:{SECRET}@k.example.com:6443'}}\n")),
    Case("g-build-revision-decimal", ("build",),
         f"error: BUILD.yaml:{GITOPS_LINE + 1}:5: targets[3].revision: expected a branch, tag or commit as a string, "
         "got 1.1 (YAML reads it as a number: write it in quotes)",
         files=_gitops_ws(f"    repo_url: {REPO}\n    revision: 1.10\n")),
    Case("g-build-revision-bidi", ("build",),
         f"error: BUILD.yaml:{GITOPS_LINE + 1}:5: targets[3].revision: 'v1\\u202e2' {INVISIBLE}; a branch, tag or "
         "commit has none", files=_gitops_ws(f"    repo_url: {REPO}\n    revision: \"v1\\u202e2\"\n")),
    Case("g-build-repo-file", ("build",),
         f"error: BUILD.yaml:{GITOPS_LINE}:5: targets[3].repo_url: 'file:///srv/r.git' names a folder on one "
         f"machine; Argo CD fetches the repository from a server: give its URL {URL_USAGE}",
         files=_gitops_ws("    repo_url: file:///srv/r.git\n    revision: main\n")),
    Case("g-build-destination-name-zero-width", ("build",),
         f"error: BUILD.yaml:{GITOPS_LINE + 2}:19: targets[3].destination.name: 'prod\\u200b' {INVISIBLE}; an Argo "
         "CD cluster name has none",
         files=_gitops_ws(f"    repo_url: {REPO}\n    revision: main\n    destination: {{name: \"prod\\u200b\"}}\n")),

    # -- n: numbers from files and flags -----------------------------------------------------------
    Case("n-config-json-401-digits-build", ("build",),
         _build_config_error("num_hidden_layers", "1 to 65536", "a number over 65536"),
         files=_config_ws(num_hidden_layers="9" * 401)),
    Case("n-config-json-401-digits-plan", PLAN,
         f"error: {CONFIG_SOURCE} 'hidden_size' must be a whole number from 1 to 1048576, found a number over 1048576",
         files=_config_ws(hidden_size="1" + "0" * 400)),
    Case("n-config-json-zero-heads", ("build",),
         _build_config_error("num_attention_heads", "1 to 65536", "0"), files=_config_ws(num_attention_heads=0)),
    Case("n-config-json-zero-kv-heads", PLAN,
         f"error: {CONFIG_SOURCE} 'num_key_value_heads' must be a whole number from 1 to 65536, found 0",
         files=_config_ws(num_key_value_heads=0)),
    Case("n-config-json-zero-layers", ("build",),
         _build_config_error("num_hidden_layers", "1 to 65536", "0"), files=_config_ws(num_hidden_layers=0)),
    Case("n-config-json-negative-vocab", ("build",),
         _build_config_error("vocab_size", "1 to 67108864", "a negative number"), files=_config_ws(vocab_size=-5)),
    Case("n-config-json-kv-lora-text", ("build",),
         _build_config_error("kv_lora_rank", "0 to 1048576", "text"), files=_config_ws(kv_lora_rank='"512"')),
    Case("n-config-json-huge-positions", ("build",),
         _build_config_error("max_position_embeddings", "0 to 2147483647", "a number over 2147483647"),
         files=_config_ws(max_position_embeddings="1" * 30)),
    Case("n-max-model-len-arabic-digits", (*QWEN_PLAN, "--max-model-len", "\u0661\u0662\u0663\u0664\u0665"),
         "manifesto plan: error: argument --max-model-len: '١٢٣٤٥' is not a whole number "
         "(ASCII digits)", rc=2),
    Case("n-max-model-len-fullwidth", (*QWEN_PLAN, "--max-model-len", "\uff18\uff11\uff19\uff12"),
         "manifesto plan: error: argument --max-model-len: '８１９２' is not a whole number "
         "(ASCII digits)", rc=2),
    Case("n-max-model-len-huge", (*QWEN_PLAN, "--max-model-len", "9" * 401),
         "manifesto plan: error: argument --max-model-len: '" + "9" * 40 + "' is not a whole number (ASCII digits)",
         rc=2),
    Case("n-max-model-len-over-32-bit", (*QWEN_PLAN, "--max-model-len", "4294967296"),
         "manifesto plan: error: argument --max-model-len: 4294967296 is over 2147483647, the most it can be", rc=2),
    Case("n-concurrency-superscript", (*QWEN_PLAN, "--concurrency", "\u00b2"),
         "manifesto plan: error: argument --concurrency: '²' is not a whole number (ASCII digits)", rc=2),
    Case("n-pick-zero", (*QWEN_PLAN, "--pick", "0"),
         "manifesto plan: error: argument --pick: 0 is not a positive number", rc=2),
    Case("n-jobs-arabic-digits", ("build", "--jobs", "\u0664"),
         "manifesto build: error: argument --jobs/-j: expected a number of jobs from 1 to 1024, got '٤'", rc=2),
    Case("n-jobs-huge", ("build", "--jobs", "9" * 50),
         "manifesto build: error: argument --jobs/-j: expected a number of jobs from 1 to 1024, got '"
         + "9" * 40 + "'", rc=2),
    Case("n-store-limit-env-milli", ("build",),
         "error: MANIFESTO_STORE_LIMIT: '500m' is a fraction of a byte ('m' means thousandths); write 500M "
         "(megabytes) or 500Mi (mebibytes)", env={"MANIFESTO_STORE_LIMIT": "500m"}, files=_workspace()),
    Case("n-store-limit-build-yaml-micro", ("build",),
         f"error: BUILD.yaml:{BUILD_YAML.count(chr(10)) + 1}:1: store_limit: '2u' is a fraction of a byte ('u' means "
         "millionths); write 2M (megabytes) or 2Mi (mebibytes)",
         files=_workspace(**{"ws/BUILD.yaml": BUILD_YAML + "store_limit: 2u\n"})),
    Case("n-store-limit-arabic-digits", ("build",),
         "error: MANIFESTO_STORE_LIMIT: expected a size such as 2Gi, 500M or 1000000 (bytes, at most 1Pi), got "
         "'٥Gi'", env={"MANIFESTO_STORE_LIMIT": "\u0665Gi"}, files=_workspace()),
    Case("n-store-limit-exponent-accepted", ("build",), None, rc=0, env={"MANIFESTO_STORE_LIMIT": "1e9"},
         files=_workspace()),

    # -- t: YAML tags the loader does not know -----------------------------------------------------
    Case("t-spec-python-name", EXPLAIN, f"error: spec.yaml:1:10: the tag !!python/name:os.system {TAG}",
         files={"ws/spec.yaml": QWEN_SPEC.replace("release: demo", "release: !!python/name:os.system demo")}),
    Case("t-spec-python-object", EXPLAIN,
         f"error: spec.yaml:6:11: the tag !!python/object/apply:subprocess.check_output {TAG}",
         files={"ws/spec.yaml": QWEN_SPEC + "    vllm: !!python/object/apply:subprocess.check_output [[id]]\n"}),
    Case("t-spec-local-tag", EXPLAIN, f"error: spec.yaml:5:5: the tag !Ref {TAG}",
         files={"ws/spec.yaml": QWEN_SPEC.replace("  - name: decode", "  - !Ref\n    name: decode")}),
    Case("t-spec-uri-tag", EXPLAIN, f"error: spec.yaml:2:8: the tag tag:example.com,2024:model {TAG}",
         files={"ws/spec.yaml": QWEN_SPEC.replace("model:\n", "model: !<tag:example.com,2024:model>\n")}),
    Case("t-cluster-python-tag", ("explain", "qwen/aggregated", "--cluster", "c.yaml", "-n", "ns", "--user", "u"),
         f"error: c.yaml:1:7: the tag !!python/str {TAG}", files={"ws/c.yaml": "name: !!python/str gpu\n"}),
    Case("t-build-yaml-python-tag", ("build",), f"error: BUILD.yaml:2:12: the tag !!python/object:argparse.Namespace "
         f"{TAG}", files=_workspace(**{"ws/BUILD.yaml": BUILD_YAML.replace(
             "  default:", "  default: !!python/object:argparse.Namespace", 1)})),
    Case("t-known-tags-accepted", EXPLAIN, None, rc=0,
         files={"ws/spec.yaml": "release: !!str demo\nmodel: !!map\n  id: Qwen/Qwen3-0.6B\nroles: !!seq\n"
                                "  - name: decode\n"}),

    # -- l: leftovers ------------------------------------------------------------------------------
    *[Case(f"l-file-delete-{layout}-of-another-user", ("file", "delete", f"bob.{ext}", "--user", "alice", "-n", "ns"),
           f"error: {BOB.format(ext=ext)}", files={f"ws/bob.{ext}": _owned("bob", layout)}, kube={"objects": LIVE_BOB})
      for layout, ext in (("json", "json"), ("json-list", "json"), ("yaml-flow", "yaml"))],
    Case("l-file-delete-unreadable-json-with-user", ("file", "delete", "bob.json", "--user", "alice", "-n", "ns"),
         "error: cannot read the owners of bob.json's objects: bob.json:1:2: not valid JSON: Expecting property name "
         "enclosed in double quotes", files={"ws/bob.json": "{"}, kube={"objects": LIVE_BOB}),
    # A kubectl that cannot say which context is current is an error naming why, never taken
    # for "no context is current" (then "no cluster profile selected").
    Case("l-kubectl-missing-picks-no-cluster", ("deploy", "qwen/aggregated", "-n", "ns", "--dry-run"),
         "error: kubectl not found on PATH; install kubectl to use cluster commands (it names the kube context that "
         "picks the cluster profile; or pass --cluster NAME|PATH, or set MANIFESTO_CLUSTER)",
         env={"PATH": "{tmp}/outside"}),
    Case("l-kubectl-cannot-run-picks-no-cluster", ("deploy", "qwen/aggregated", "-n", "ns", "--dry-run"),
         "error: kubectl not found on PATH; install kubectl to use cluster commands",
         files={"bin/kubectl": ("exec", "#!/nonexistent/interpreter\n")}, env={"PATH": "{tmp}/bin"}),
    Case("l-kubectl-broken-kubeconfig-picks-no-cluster", ("deploy", "qwen/aggregated", "-n", "ns", "--dry-run"),
         "error: could not read the current kube context: `kubectl config current-context` failed: error: error "
         "loading config file: yaml: line 3: mapping values are not allowed",
         files={"bin/kubectl": ("exec", "#!/bin/sh\necho 'error: error loading config file: yaml: line 3: mapping "
                                        "values are not allowed' >&2\nexit 1\n")}),
]
