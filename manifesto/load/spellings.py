"""Reference-format keys: spellings of the reference implementation's spec and cluster
schemas that this project writes differently, mapped onto ours (with a warning naming our
spelling), dropped when they only restate what is derived (with a warning), or refused with
the reason. The loader applies it before validation; ``manifesto migrate`` applies the same
rules to a round-trip YAML tree and writes the file in our format.

Every rule works on plain mappings and lists (``dict``/``list`` subclasses included, so
ruamel's commented maps keep their comments and key order).
"""

from __future__ import annotations

import msgspec

__all__ = ["Note", "migrate_spec", "migrate_cluster", "warning"]


class Note(msgspec.Struct, frozen=True):
    """One reference key: ``action`` is "mapped", "dropped" (both say what happened, naming the
    key) or "refused" (``message`` is the reason, without the key)."""

    action: str
    path: tuple
    message: str
    new_path: tuple | None = None
    # (old path, new path) pairs of list entries that moved (a joined token list): their source
    # positions move with them, replacing what the new path had.
    moves: tuple = ()

    @property
    def key(self) -> str:
        return _fmt(self.path)


def warning(message: str) -> str:
    """The line that says ``message`` as a warning: loading returns it (``Loaded.warnings``),
    its caller says it (``errors.say_warnings``)."""
    return f"manifesto: warning: {message}"


def _fmt(path: tuple) -> str:
    out = ""
    for key in path:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else str(key))
    return out


def _move(container: dict, old: str, new_parent: dict, new: str) -> None:
    """Move ``container[old]`` to ``new_parent[new]``, in ``old``'s place when it is the same
    mapping (ruamel maps keep their order and comments through ``insert``)."""
    value = container[old]
    if new_parent is container and hasattr(container, "insert"):
        pos = list(container).index(old)
        del container[old]
        container.insert(pos, new, value)
        return
    del container[old]
    new_parent[new] = value


def _child(parent: dict, key: str, like: dict) -> dict | None:
    """``parent[key]``, created as an empty mapping of ``like``'s type when absent; None when it
    holds something else (the schema reports that value; nothing is overwritten)."""
    if key not in parent or parent[key] is None:
        parent[key] = type(like)() if isinstance(like, dict) else {}
    value = parent[key]
    return value if isinstance(value, dict) else None


class _Rules:
    def __init__(self) -> None:
        self.notes: list[Note] = []

    def mapped(self, path, new_path, extra: str = "") -> None:
        self.notes.append(Note("mapped", path, f"{_fmt(path)} is the reference's spelling; it is read as "
                                              f"{_fmt(new_path)}{extra}", new_path))

    def said(self, path, new_path, message: str, moves: tuple = ()) -> None:
        """A mapping whose warning is ``message`` (the key and what it became, in words)."""
        self.notes.append(Note("mapped", path, message, new_path, moves))

    def dropped(self, path, why: str) -> None:
        self.notes.append(Note("dropped", path, f"{_fmt(path)} is ignored: {why}"))

    def refused(self, path, why: str) -> None:
        self.notes.append(Note("refused", path, why))

    def rename(self, parent: dict, old: str, target: dict | None, new: str, path: tuple, new_path: tuple) -> None:
        if old not in parent or target is None:
            return
        if new in target:
            self.refused(path, f"the reference's spelling of {_fmt(new_path)}, which is set too; keep one")
            return
        _move(parent, old, target, new)
        self.mapped(path, new_path)


# ------------------------------------------------------------------------------------ specs


def _dp_enabled(role: dict) -> bool:
    par = role.get("parallelism")
    dp = par.get("dp", False) if isinstance(par, dict) else False
    return not (dp is False or dp is None or dp == 1 or dp == 0)


def migrate_spec(data, *, renames: bool = True, derived: bool = True) -> list[Note]:
    """Rewrite the reference keys of a spec in place; returns what was done. The loader runs
    ``renames`` on each file before ``extends`` merges them (so a child's ``vllm_args`` merges
    into its parent's ``vllm``) and ``derived`` on the merged spec, whose topology and routing
    decide what the derived keys must say."""
    r = _Rules()
    if not isinstance(data, dict):
        return r.notes
    if renames:
        _renames(data, r)
    if derived:
        _derived(data, r)
    return r.notes


def _roles(data: dict):
    """(path key, role) of every role: a list, or (in an override file) a map keyed by name."""
    roles = data.get("roles")
    entries = roles.items() if isinstance(roles, dict) else enumerate(roles if isinstance(roles, list) else [])
    return [(key, role) for key, role in entries if isinstance(role, dict)]


def _renames(data: dict, r: _Rules) -> None:
    model = data.get("model")
    if isinstance(model, dict):
        if "served_name" in model:
            vllm = _child(data, "vllm", data)
            r.rename(model, "served_name", vllm, "served_model_name", ("model", "served_name"),
                     ("vllm", "served_model_name"))
        if "hf_home" in model:
            _hf_home(data, model, r)
    if "namespace" in data:
        # The reference's commands overwrote it with the runtime namespace before rendering.
        del data["namespace"]
        r.dropped(("namespace",), "the namespace is a render option here, as it was for the reference's commands "
                  "(they replaced this key with it): pass --namespace, or set MANIFESTO_NAMESPACE or `namespace:` "
                  "in a BUILD.yaml option set; without either it is the kube context's namespace")
    runtime = data.get("runtime")
    env = _child(data, "env", data) if isinstance(runtime, dict) and isinstance(runtime.get("env"), dict) else None
    if env is not None:
        clash = sorted(set(runtime["env"]) & set(env))
        if clash:
            r.refused(("runtime", "env"), f"the reference's spelling of env, which also sets {clash[0]}; keep one")
        else:
            env.update(runtime["env"])
            del runtime["env"]
            if not runtime:
                del data["runtime"]
            r.mapped(("runtime", "env"), ("env",))
    cache = data.get("cache")
    if isinstance(cache, dict) and "cuda" in cache:
        del cache["cuda"]
        if not cache:
            del data["cache"]
        r.dropped(("cache", "cuda"), "the {cuda} piece of compiled-cache paths is derived from the accelerator's "
                  "torch_cuda_arch_list here, and the image tag (or cache.key) already keeps caches of different "
                  "builds apart; set cache.key to force a fresh cache")
    _migrate_routing(data, r)
    for key, role in _roles(data):
        _role_renames(role, ("roles", key), r)


def _hf_home(data: dict, model: dict, r: _Rules) -> None:
    """``model.hf_home``: the reference exported it as the pods' HF_HOME, which the spec's ``env``
    does here (above the cluster's cache placement, as there)."""
    value = model["hf_home"]
    env = _child(data, "env", data)
    if env is None:
        return  # the schema reports the env value
    if "HF_HOME" in env:
        r.refused(("model", "hf_home"), "the reference's spelling of env.HF_HOME, which is set too; keep one")
        return
    del model["hf_home"]
    env["HF_HOME"] = value
    r.said(("model", "hf_home"), ("env", "HF_HOME"),
           "model.hf_home is the reference's spelling; it is read as env.HF_HOME (the pods' Hugging Face cache, "
           "in place of the cluster's cache.hf_home; the path must be on a volume the cluster mounts)")


def _derived(data: dict, r: _Rules) -> None:
    routing = data.get("routing")
    if isinstance(routing, dict):
        kind = routing.get("kind", "disabled")
    else:  # no routing: key: a pd topology routes P/D, anything else is served directly
        kind, routing = ("pd" if data.get("topology") == "pd" else "disabled"), {}
    routed = kind not in ("disabled", None)
    target = routing.get("target_role") or "decode"
    for key, role in _roles(data):
        name = role.get("name", key if isinstance(key, str) else None)
        _role_derived(role, ("roles", key), r, routed=routed, pd=data.get("topology") == "pd" and routed,
                      proxy_role=target, name=name)
    _role_vars(data, r)


def _role_vars(data: dict, r: _Rules) -> None:
    """``roles[].vars``: the reference let each role add (or override) variables for its own
    computed expressions. Here vars are spec-wide, so a role's vars move to the top-level ``vars``
    when that changes nothing: no other role and no top-level var gives the name another value."""
    roles = [(key, role) for key, role in _roles(data) if isinstance(role.get("vars"), dict)]
    if not roles:
        return
    top = data.get("vars")
    if top is not None and not isinstance(top, dict):
        return  # the schema reports the top-level vars
    values: dict = {}  # name -> [(role path, value)]
    for key, role in roles:
        for name, value in role["vars"].items():
            values.setdefault(name, []).append((("roles", key), value))
    if "extends" in data:  # migrate on one file: its parent's vars are not known here
        for key, _role in roles:
            r.refused(("roles", key, "vars"), "vars are spec-wide here; move them to the top-level vars, with names "
                      "no other role uses for another value (this file extends another, whose vars cannot be "
                      "checked from here)")
        return
    clashes = {}
    for name, seen in values.items():
        others = {repr(v) for _, v in seen}
        if top is not None and name in top:
            others.add(repr(top[name]))
        if len(others) > 1:
            clashes[name] = seen
    for key, role in roles:
        at = ("roles", key, "vars")
        bad = sorted(str(n) for n in role["vars"] if n in clashes)
        if bad:
            r.refused(at, f"vars are spec-wide here, and {bad[0]} has another value in "
                      f"{'the top-level vars' if top is not None and bad[0] in top else 'another role'}; give this "
                      f"role's {bad[0]} its own name in the top-level vars and use that name in this role's "
                      f"computed expressions")
            continue
        if top is None and role["vars"]:
            data["vars"] = top = type(role["vars"])() if isinstance(role["vars"], dict) else {}
        for name, value in role["vars"].items():
            top.setdefault(name, value)
        del role["vars"]
        r.said(at, ("vars",), f"{_fmt(at)} is the reference's spelling; its names are read as top-level vars (vars "
                              f"are spec-wide here, and no other role gives them another value)")


def _migrate_routing(data: dict, r: _Rules) -> None:
    routing = data.get("routing")
    if not isinstance(routing, dict):
        return
    epp = routing.get("epp")
    if isinstance(epp, dict):
        for key in ("plugins_config_file", "plugin_configs"):
            r.rename(epp, key, routing, key, ("routing", "epp", key), ("routing", key))
        for key in ("image", "replicas"):
            if key in epp:
                _picker_field(epp, key, ("routing", "epp", key), r)
        if not epp:
            del routing["epp"]
    for key in ("epp_image", "replicas"):
        if key in routing:
            _picker_field(routing, key, ("routing", key), r)


def _picker_field(parent: dict, key: str, path: tuple, r: _Rules) -> None:
    value = parent[key]
    if key == "replicas":
        if value == 1:
            del parent[key]
            r.dropped(path, "one endpoint picker per instance is what is rendered")
        else:
            r.refused(path, "one endpoint picker per instance is rendered; several replicas would each keep "
                      "their own view of endpoint load, so it is not offered")
        return
    r.refused(path, "the picker image is set per cluster here: llm_d.images.epp in the cluster profile (or "
              "llm_d.release, which picks the picker and the P/D sidecar of one router release from the image "
              "catalog); remove it from the spec. What changes: every spec rendered for that cluster runs that "
              "picker, and the sidecar stays on its release")


def _role_renames(role: dict, at: tuple, r: _Rules) -> None:
    r.rename(role, "vllm_args", role, "vllm", at + ("vllm_args",), at + ("vllm",))
    if "shm_size" in role:
        r.rename(role, "shm_size", _child(role, "resources", role), "shm_size", at + ("shm_size",),
                 at + ("resources", "shm_size"))
    par = role.get("parallelism")
    if isinstance(par, dict) and "gpus" in par:
        r.rename(par, "gpus", _child(role, "resources", role), "gpus", at + ("parallelism", "gpus"),
                 at + ("resources", "gpus"))
        if not par and "parallelism" in role:
            del role["parallelism"]
    if isinstance(par, dict) and "gpus_per_node" in par:  # the reference's alias of parallelism.gpus
        r.rename(par, "gpus_per_node", _child(role, "resources", role), "gpus", at + ("parallelism", "gpus_per_node"),
                 at + ("resources", "gpus"))
        if not par and "parallelism" in role:
            del role["parallelism"]
    _token_list(role, at, r)
    prof = role.get("profiling")
    if isinstance(prof, dict):
        r.rename(prof, "trace_dir", prof, "torch_profiler_dir", at + ("profiling", "trace_dir"),
                 at + ("profiling", "torch_profiler_dir"))


def _is_value(word) -> bool:
    """A token list's value entry: not an option (a negative number is a value)."""
    text = word.strip() if isinstance(word, str) else ""
    return bool(text) and (not text.startswith("-") or text[1:2].isdigit())


def _token_list(role: dict, at: tuple, r: _Rules) -> None:
    """``vllm_raw_args`` as a token list (``[--max-num-seqs, "64"]``): the reference put every
    entry on its own line of one shell command, so a flag's value could be the next entry. Here
    each entry is one flag with its value(s), so a value entry is joined to its flag's entry:
    the shell words are the same."""
    raw = role.get("vllm_raw_args")
    if not isinstance(raw, list) or not all(isinstance(w, str) for w in raw):
        return
    joined: list[str] = []
    moves = []
    opened = False  # the last entry is a bare option that value entries may follow
    for i, word in enumerate(raw):
        if opened and _is_value(word):
            joined[-1] += " " + word.strip()
            continue
        if len(joined) != i:
            moves.append((at + ("vllm_raw_args", i), at + ("vllm_raw_args", len(joined))))
        joined.append(word)
        text = word.strip()
        opened = text.startswith("-") and not _is_value(text) and " " not in text and "=" not in text
    if len(joined) == len(raw):
        return
    kept = [w for w in joined if " " in w and w not in raw]
    raw[:] = joined
    r.said(at + ("vllm_raw_args",), at + ("vllm_raw_args",),
           f"{_fmt(at + ('vllm_raw_args',))} is the reference's token list (a flag and its value in separate "
           f"entries); it is read with each value joined to its flag: {', '.join(repr(w) for w in kept)}",
           tuple(moves))


def _role_derived(role: dict, at: tuple, r: _Rules, *, routed: bool, pd: bool, proxy_role: str, name) -> None:
    proxy = pd and name == proxy_role
    derived = {
        "dp_load_balancing": ("external" if routed and _dp_enabled(role) else "internal",
                              "it follows from routing.kind (llm-d routing balances DP ranks externally, direct "
                              "serving internally)"),
        "routing_proxy": (proxy, "the P/D sidecar fronts the target role of a pd topology"),
        "serving_port_base": (8000, "serving ports start at 8000"),
        "backend_port_base": (8200 if proxy else 8000, "vLLM listens from 8200 behind the P/D sidecar, else "
                              "from 8000"),
    }
    for key, (value, why) in derived.items():
        if key not in role:
            continue
        if role[key] == value or (key == "backend_port_base" and role[key] is None):
            del role[key]
            r.dropped(at + (key,), f"it restates what is derived: {why}")
        else:
            r.refused(at + (key,), f"derived as {value!r} here ({why}), not {role[key]!r}; remove it")


# ---------------------------------------------------------------------------------- clusters


def migrate_cluster(data) -> list[Note]:
    """Rewrite the reference keys of a cluster profile in place; returns what was done."""
    r = _Rules()
    if not isinstance(data, dict):
        return r.notes
    fabric = data.get("fabric")
    if isinstance(fabric, dict) and "imex_resource_claim_template" in fabric:
        template = fabric["imex_resource_claim_template"]
        accelerators = data.get("accelerators")
        profiles = accelerators.get("profiles") if isinstance(accelerators, dict) else None
        profiles = profiles if isinstance(profiles, dict) else {}
        own = [name for name, p in profiles.items() if isinstance(p, dict) and p.get("compute_domain")]
        if own:
            r.refused(("fabric", "imex_resource_claim_template"),
                      f"accelerator '{own[0]}' sets compute_domain too; write "
                      "accelerators.profiles.<name>.compute_domain.resource_claim_template_name on each profile "
                      "instead")
        else:
            del fabric["imex_resource_claim_template"]
            for name, prof in profiles.items():
                cd = _child(prof, "compute_domain", prof) if isinstance(prof, dict) else None
                if cd is not None:
                    cd["resource_claim_template_name"] = template
            r.mapped(("fabric", "imex_resource_claim_template"),
                     ("accelerators", "profiles", "<each>", "compute_domain", "resource_claim_template_name"))
    claim = (data.get("storage") or {}).get("shared_claim") if isinstance(data.get("storage"), dict) else None
    if isinstance(claim, dict):
        r.rename(claim, "storage_class_name", claim, "storage_class",
                 ("storage", "shared_claim", "storage_class_name"), ("storage", "shared_claim", "storage_class"))
    return r.notes
