"""BUILD.yaml: target generators and render option sets.

    options:                      # named render option sets
      default:
        user: example-user        # required (directly or through extends)
        namespace: example-ns     # required
        routing_profile: null     # a routing target address or a root-relative path
        idle_shutdown: null       # true / false / null (the spec decides)
        idle_timeout_minutes: null   # whole minutes, or a duration such as 15m or 2h
        # also: accelerator, vllm_env, user_root, log_root, cache_root, pre_launch (a string
        # or a list): every render option of manifesto.resolve.options that BUILD.yaml may set, with
        # the grammar and bounds of its flag
      wide-ep:
        extends: default          # inherit, then override
        routing_profile: //routing:wide-ep-lws-config
    targets:                      # target generators
      - kind: cluster             # model | cluster | routing
        path: clusters            # a directory, relative to BUILD.yaml
        sources: ["example-*.yaml"]
      - kind: model
        path: models
        sources: ["**/*", "!**/*-base.yaml"]
        clusters: ["//clusters::"]  # optional: addresses; default every cluster target
        options: default            # optional: a set name or an inline mapping
      - kind: deployment            # one deployable artifact: out/deploy/<name>.yaml|.sbatch
        name: qwen-demo             # address //:qwen-demo
        model: //models/qwen:qwen3-0.6b   # a model target (address or root-relative path)
        cluster: example-gb200      # a cluster target (name or address)
        namespace: demo             # override the option set's namespace / user
        user: alice
        context: gb200-admin        # the kube context it belongs to (Kubernetes clusters)
        slurm_host: login1          # or: the host whose Slurm it belongs to (Slurm clusters)
        options: default
      - kind: monitoring            # namespace monitoring: out/monitoring/<name>.yaml
        name: example-gb200         # address //:example-gb200
        cluster: example-gb200      # one Kubernetes cluster target
        models: ["//models::"]      # optional: model addresses (default every model target);
                                    # models the cluster cannot run are left out
        namespace: demo             # optional, as for a deployment
        options: default
      - kind: gitops                # Argo CD delivery: out/gitops/<name>.yaml
        name: argocd                # address //:argocd
        repo_url: https://github.com/acme/serving.git   # the repository holding this workspace
        revision: main              # the branch, tag or commit Argo CD follows
        path: .                     # optional: the workspace's folder in the repository
        deployments: ["//:qwen-demo"]   # optional: default every deployment target without a
                                    # slurm_host; each gets Argo CD sync waves (argocd_sync_waves)
        namespace: argocd           # optional: where Argo CD runs (default argocd)
        project: default            # optional: the Argo CD project (default default)
        destination: {name: prod}   # optional: {name: N} or {server: URL} for every Application but
                                    # the root (Argo CD's own cluster); default: the deployment's kube
                                    # context, else its cluster's name
        automated: true             # optional: sync on every commit, prune, self-heal (default true)

    remote_cache: https://cache.example.com/manifesto   # optional: a shared cache (Bazel's HTTP
                                  # layout), or {url: ..., read_only: true}; no credentials here
                                  # (MANIFESTO_REMOTE_CACHE_TOKEN carries a bearer token)
    store_limit: 2Gi              # optional: the size out/.cache/tasks is pruned to stay within
                                  # (bytes or a quantity such as 500Mi; default 1Gi;
                                  # MANIFESTO_STORE_LIMIT overrides it)

``parse_buildfile`` validates all of it (every error with file:line:col) and
returns plain data, each target generator a typed record (``generators.py``), that the
manifest caches, keyed by the file's digest, so a later build neither imports ruamel nor
parses YAML while BUILD.yaml is unchanged.
"""

from __future__ import annotations

from manifesto.build_graph.generators import (DeploymentGenerator, GitopsGenerator, MonitoringGenerator,
                                               SourceGenerator)
from manifesto.build_graph.renderer import OPTION_FIELDS

__all__ = ["KINDS", "OPTION_FIELDS", "parse_buildfile", "origin_of"]

KINDS = ("model", "cluster", "routing", "deployment", "monitoring", "gitops")
_TOP_KEYS = ("options", "targets", "remote_cache", "store_limit")
_TARGET_KEYS = ("kind", "path", "sources", "clusters", "options")
_DEPLOY_KEYS = ("kind", "name", "model", "cluster", "namespace", "user", "context", "slurm_host", "options")
_MONITORING_KEYS = ("kind", "name", "models", "cluster", "namespace", "user", "options")
_GITOPS_KEYS = ("kind", "name", "repo_url", "revision", "path", "deployments", "namespace", "project", "destination",
                "automated")
_OPTION_KEYS = ("extends",) + OPTION_FIELDS
_REQUIRED_OPTIONS = ("user", "namespace")


def origin_of(locations: dict, display: str, path: tuple):
    """The ``Origin`` of ``path`` in a cached locations table (nearest parent wins)."""
    from manifesto.errors import Origin

    path = tuple(path)
    while path:
        hit = locations.get(path)
        if hit is not None:
            return Origin(display, hit[0], hit[1])
        path = path[:-1]
    hit = locations.get(())
    return Origin(display, hit[0], hit[1]) if hit else Origin(display)


def parse_buildfile(path: str, display: str) -> tuple[dict, dict]:
    """``(config, locations)`` of the BUILD.yaml at ``path``; raises BuildError/InputError."""
    import os

    from manifesto.load.yamlio import confinement, load_yaml

    # Through the edge like every input: a regular file in the workspace itself (no link out,
    # no FIFO), bounded, nesting checked before it is parsed.
    data, locs = load_yaml(path, display, confinement([os.path.dirname(os.path.abspath(path))]))
    table = {k: (v.line, v.col) for k, v in locs.table.items()}
    checker = _Checker(table, display)
    return checker.config(data), table


class _Checker:
    """Validates the parsed document; every error carries its origin."""

    def __init__(self, table: dict, display: str) -> None:
        self.table = table
        self.display = display

    def fail(self, path: tuple, message: str):
        from manifesto.errors import BuildError
        from manifesto.errors import format_path

        raise BuildError(message, origin_of(self.table, self.display, path), format_path(path))

    def mapping(self, value, path: tuple, keys) -> dict:
        from manifesto.errors import did_you_mean

        if not isinstance(value, dict):
            self.fail(path, f"expected a mapping, got {_kind(value)}")
        for key in value:
            if key not in keys:
                self.fail(path + (key,), f"unknown key '{key}'{did_you_mean(key, keys)}")
        return value

    def config(self, data) -> dict:
        if data is None:
            data = {}
        self.mapping(data, (), _TOP_KEYS)
        options = self.option_sets(data.get("options") or {})
        targets = data.get("targets")
        if not isinstance(targets, list):
            self.fail(("targets",), f"expected a list of target generators, got {_kind(targets)}")
        generators = [self.generator(t, i, options) for i, t in enumerate(targets)]
        return {"options": options, "generators": generators, "remote_cache": self.remote_cache(data),
                "store_limit": self.store_limit(data)}

    def store_limit(self, data) -> int | None:
        """``store_limit: SIZE`` in bytes (see ``manifesto.store.parse_limit``), None when absent."""
        from manifesto.store import parse_limit

        raw = data.get("store_limit")
        if raw is None:
            return None
        if isinstance(raw, bool) or not isinstance(raw, (int, str)):
            self.fail(("store_limit",), f"expected a size such as 2Gi, 500M or 1000000 (bytes), got {_kind(raw)}")
        try:
            return parse_limit(raw)
        except ValueError as exc:
            self.fail(("store_limit",), str(exc))

    def remote_cache(self, data) -> dict | None:
        """``remote_cache: URL`` or ``{url: URL, read_only: bool}`` as ``{url, read_only}``."""
        from manifesto.build_graph.remote import url_problem

        raw = data.get("remote_cache")
        if raw is None:
            return None
        path = ("remote_cache",)
        if isinstance(raw, dict):
            self.mapping(raw, path, ("url", "read_only"))
            if not isinstance(raw.get("read_only", False), bool):
                self.fail(path + ("read_only",), f"expected true or false, got {_kind(raw['read_only'])}")
            url, read_only, path = raw.get("url"), raw.get("read_only", False), path + ("url",)
        else:
            url, read_only = raw, False
        problem = url_problem(url)
        if problem:
            self.fail(path, problem)
        return {"url": url, "read_only": read_only}

    def option_sets(self, raw) -> dict:
        if not isinstance(raw, dict):
            self.fail(("options",), f"expected a mapping of option sets, got {_kind(raw)}")
        bodies = {name: self.option_body(body, ("options", name)) for name, body in raw.items()}
        return {name: self.flatten(bodies, name, ()) for name in bodies}

    def option_body(self, body, path: tuple) -> dict:
        """``body`` checked, each value normalised by its option's definition (the same grammar
        and bounds as its flag), an error at the value's position naming its key."""
        from manifesto.resolve import options

        self.mapping(body, path, _OPTION_KEYS)
        if "extends" in body and not isinstance(body["extends"], str):
            self.fail(path + ("extends",), f"expected the name of an option set, got {_kind(body['extends'])}")
        out = {"extends": body["extends"]} if "extends" in body else {}
        for field in OPTION_FIELDS:
            value = body.get(field)
            if value is None:
                continue
            try:
                out[field] = options.build_value(options.by_name(field), value)
            except ValueError as exc:
                self.fail(path + (field,), str(exc))
        return out

    def flatten(self, raw: dict, name: str, chain: tuple, where: dict | None = None) -> tuple:
        """The fields of option set ``name`` with its ``extends`` chain applied.

        ``where`` maps set names that do not live under ``options:`` to their
        location (inline sets of a target generator).
        """
        from manifesto.errors import did_you_mean

        body = raw[name]
        parent = body.get("extends")
        merged = dict(zip(OPTION_FIELDS, _unset()))
        if parent is not None:
            at = (where or {}).get(name, ("options", name)) + ("extends",)
            if parent not in raw or (where and parent in where):
                self.fail(at, f"unknown option set '{parent}'{did_you_mean(parent, raw)}")
            if parent == name or parent in chain:
                loop = chain[chain.index(parent):] if parent in chain else ()
                cycle = " -> ".join(loop + (name, parent))
                self.fail(at, f"cycle in option sets: {cycle}. To fix this, remove one `extends` of the chain.")
            merged.update(zip(OPTION_FIELDS, self.flatten(raw, parent, chain + (name,), where)))
        merged.update({k: body[k] for k in OPTION_FIELDS if body.get(k) is not None})
        return tuple(merged[k] for k in OPTION_FIELDS)

    def generator(self, raw, i: int, options: dict):
        """The record (``manifesto.build_graph.generators``) of target generator ``i``."""
        path = ("targets", i)
        kind = raw.get("kind") if isinstance(raw, dict) else None
        if kind == "deployment":
            return self.deployment(raw, i, options)
        if kind == "monitoring":
            return self.monitoring(raw, i, options)
        if kind == "gitops":
            return self.gitops(raw, i)
        if isinstance(raw, dict) and kind not in KINDS:  # before the keys, which depend on the kind
            self.fail(path + ("kind",), f"expected one of {', '.join(KINDS)}, got {kind!r}")
        self.mapping(raw, path, _TARGET_KEYS)
        base = self.base_path(raw.get("path"), path + ("path",))
        includes, excludes = self.sources(raw.get("sources"), path + ("sources",))
        if kind != "model":
            for key in ("clusters", "options"):
                if key in raw:
                    self.fail(path + (key,), f"only model targets take '{key}'")
            return SourceGenerator(kind, base, includes, excludes)
        clusters = self.cluster_refs(raw.get("clusters"), path + ("clusters",))
        return SourceGenerator(kind, base, includes, excludes, clusters, self.generator_options(raw, i, options))

    def deployment(self, raw: dict, i: int, options: dict) -> DeploymentGenerator:
        import re

        path = ("targets", i)
        self.mapping(raw, path, _DEPLOY_KEYS)
        for key in ("name", "model", "cluster"):
            if key not in raw:
                self.fail(path, f"a deployment target needs '{key}'")
        name = self.named_target(raw, path, _DEPLOY_KEYS[1:-1])
        for key, pattern, what in (("context", r"[^\s'\"`$\\;&|<>]+", "a kube context name without spaces or "
                                    "shell metacharacters"),
                                   ("slurm_host", r"[A-Za-z0-9]([-A-Za-z0-9_.@]*[A-Za-z0-9])?", "a host name")):
            if key in raw and not re.fullmatch(pattern, raw[key]):
                self.fail(path + (key,), f"'{raw[key]}' is not {what}")
        if "context" in raw and "slurm_host" in raw:
            self.fail(path + ("slurm_host",), "a deployment target names a kube context or a Slurm host, not both")
        resolved = dict(zip(OPTION_FIELDS, self.generator_options(raw, i, options, required=False)))
        resolved.update({k: raw[k] for k in ("user", "namespace") if k in raw})
        missing = [f for f in _REQUIRED_OPTIONS if resolved[f] is None]
        if missing:
            self.fail(path, f"the deployment has no {' and no '.join(missing)}: set it here or in its options")
        return DeploymentGenerator(name, raw["model"], raw["cluster"], raw.get("context"), raw.get("slurm_host"),
                                   tuple(resolved[k] for k in OPTION_FIELDS))

    def named_target(self, raw: dict, path: tuple, texts) -> str:
        """Check a declared target's plain-text keys ``texts``, its user and namespace (with the
        options' own grammar, reported here, not as a flag) and its name; returns the name."""
        import re

        for key in texts:
            if key in raw:
                self.text(raw[key], path + (key,))
        for key in ("user", "namespace"):
            if key in raw:
                self.option(key, raw[key], path + (key,))
        name = raw["name"]
        if not re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", name) or name == "all":
            self.fail(path + ("name",), f"'{name}' is not a target name: use lowercase letters, digits and '-' "
                      "(at most 63), not 'all'")
        return name

    def text(self, value, path: tuple) -> None:
        if not isinstance(value, str) or not value.strip() or value != value.strip():
            self.fail(path, f"expected a non-empty string without surrounding spaces, got {value!r}")

    def option(self, field: str, value, path: tuple):
        from manifesto.resolve import options

        try:
            return options.build_value(options.by_name(field), value)
        except ValueError as exc:
            self.fail(path, str(exc))

    def monitoring(self, raw: dict, i: int, options: dict) -> MonitoringGenerator:
        path = ("targets", i)
        self.mapping(raw, path, _MONITORING_KEYS)
        for key in ("name", "cluster"):
            if key not in raw:
                self.fail(path, f"a monitoring target needs '{key}'")
        name = self.named_target(raw, path, ("name", "cluster"))
        models = raw.get("models", ["//models::"])
        if not isinstance(models, list) or not models or not all(isinstance(m, str) and m for m in models):
            self.fail(path + ("models",), f"expected a non-empty list of model addresses, got {_kind(models)}")
        resolved = dict(zip(OPTION_FIELDS, self.generator_options(raw, i, options, required=False)))
        resolved.update({k: raw[k] for k in ("user", "namespace") if k in raw})
        missing = [f for f in _REQUIRED_OPTIONS if resolved[f] is None]
        if missing:
            self.fail(path, f"the monitoring target has no {' and no '.join(missing)}: set it here or in its options")
        return MonitoringGenerator(name, tuple(models), raw["cluster"], tuple(resolved[k] for k in OPTION_FIELDS))

    def gitops(self, raw: dict, i: int) -> GitopsGenerator:
        import manifesto.build_graph.gitops_rules as rules

        path = ("targets", i)
        self.mapping(raw, path, _GITOPS_KEYS)
        for key in ("name", "repo_url", "revision"):
            if key not in raw:
                self.fail(path, f"a gitops target needs '{key}'")
        # The grammar `manifesto init --gitops-*` checks too (manifesto.build_graph.gitops_rules).
        for key, problem in (("repo_url", rules.repo_url_problem), ("revision", rules.revision_problem),
                             ("project", rules.project_problem), ("path", rules.path_problem)):
            if key in raw and problem(raw[key]):
                self.fail(path + (key,), problem(raw[key]))
        name = self.named_target(raw, path, ("name", "repo_url", "revision", "project"))
        folder = self.base_path(raw.get("path", "."), path + ("path",))
        namespace = self.option("namespace", raw.get("namespace", "argocd"), path + ("namespace",))
        project = raw.get("project", "default")
        refs = raw.get("deployments")
        if refs is not None and (not isinstance(refs, list) or not refs
                                 or not all(isinstance(r, str) and r for r in refs)):
            self.fail(path + ("deployments",), f"expected a non-empty list of deployment addresses, got {_kind(refs)}")
        destination = raw.get("destination")
        if destination is not None:
            self.mapping(destination, path + ("destination",), ("name", "server"))
            if len(destination) != 1:
                self.fail(path + ("destination",), "give the Argo CD cluster by 'name' or by 'server', one of them")
            (key, value), = destination.items()
            problem = (rules.server_problem if key == "server" else rules.cluster_name_problem)(value)
            if problem:
                self.fail(path + ("destination", key), problem)
            destination = {key: value}
        automated = raw.get("automated", True)
        if not isinstance(automated, bool):
            self.fail(path + ("automated",), f"expected true or false, got {_kind(automated)}")
        from manifesto.render.gitops import GitopsSettings

        settings = GitopsSettings(raw["repo_url"], raw["revision"], folder, namespace, project, destination, automated)
        return GitopsGenerator(name, None if refs is None else tuple(refs), settings)

    def base_path(self, value, path: tuple) -> str:
        import posixpath

        if not isinstance(value, str) or not value:
            self.fail(path, f"expected a directory relative to BUILD.yaml, got {value!r}")
        norm = posixpath.normpath(value.rstrip("/"))
        if value.startswith("/") or norm == ".." or norm.startswith("../"):
            self.fail(path, f"'{value}' is outside the build root; use a path relative to BUILD.yaml")
        return norm

    def sources(self, value, path: tuple) -> tuple[tuple, tuple]:
        from manifesto.build_graph.globs import GlobError, compile_glob

        if not isinstance(value, list) or not value:
            self.fail(path, f"expected a non-empty list of glob patterns, got {_kind(value)}")
        includes, excludes = [], []
        for j, pattern in enumerate(value):
            if not isinstance(pattern, str):
                self.fail(path + (j,), f"expected a glob pattern string, got {_kind(pattern)}")
            body = pattern[1:] if pattern.startswith("!") else pattern
            try:
                compile_glob(body)
            except GlobError as exc:
                self.fail(path + (j,), f"bad glob '{pattern}': {exc}")
            (excludes if pattern.startswith("!") else includes).append(body)
        if not includes:
            self.fail(path, "every pattern is an exclusion ('!'); add at least one pattern to include")
        return tuple(includes), tuple(excludes)

    def cluster_refs(self, value, path: tuple):
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            self.fail(path, f"expected a list of cluster addresses, got {_kind(value)}")
        return tuple(value)

    def generator_options(self, raw: dict, i: int, options: dict, required: bool = True) -> tuple:
        from manifesto.errors import did_you_mean

        path = ("targets", i, "options")
        value = raw.get("options", "default")
        if isinstance(value, dict):
            name = f"targets[{i}].options"
            body = self.option_body(value, path)
            resolved = self.flatten({**_raw_sets(options), name: body}, name, (), {name: path})
        elif value in options:
            resolved = options[value]
        elif "options" not in raw and not required:
            return _unset()
        elif "options" not in raw:
            self.fail(("targets", i),
                      "model targets need render options: add `options:` or an option set named 'default'")
        else:
            self.fail(path, f"unknown option set '{value}'{did_you_mean(value, options)}")
        if not required:
            return resolved
        missing = [f for f, v in zip(OPTION_FIELDS, resolved) if f in _REQUIRED_OPTIONS and v is None]
        if missing:
            self.fail(path if "options" in raw else ("targets", i), f"render options lack {' and '.join(missing)}")
        return resolved


def _unset() -> tuple:
    """The value of every build option no set gives: None, or () for a repeatable option."""
    from manifesto.resolve.options import by_name

    return tuple(() if by_name(f).kind == "list" else None for f in OPTION_FIELDS)


def _raw_sets(flat: dict) -> dict:
    """Flattened option sets, back in the raw form ``flatten`` reads."""
    return {name: {k: v for k, v in zip(OPTION_FIELDS, values) if v is not None} for name, values in flat.items()}


def _kind(value) -> str:
    if value is None:
        return "nothing"
    names = {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean"}
    return names.get(type(value), type(value).__name__)
