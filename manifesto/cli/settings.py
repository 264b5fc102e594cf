"""The CLI's edge: everything read from the environment, .env files and kube config.

These values are read once here and passed down as plain arguments; nothing below the
CLI reads the environment.
"""

from __future__ import annotations

import os

__all__ = ["settings", "current_user", "pick_cluster", "pick_namespace", "checked_namespace", "kube_context",
           "kube_env", "current_context", "options"]


class Settings(dict):
    """Variables by name (the environment over ./.env over the user catalog's .env), and where
    each came from, so an error can name a settings file line instead of a variable nobody set.
    ``ignored``: warnings for workspace lines that may not set what they name (``USER_ONLY``),
    which the CLI prints once per run."""

    def __init__(self, values=(), origins: dict | None = None) -> None:
        super().__init__(values)
        self.origins = dict(origins or {})
        self.ignored: list[str] = []

    def where(self, key: str) -> str | None:
        """``FILE:LINE`` of the settings file that supplied ``key``; None for the environment."""
        return self.origins.get(key)


#: The largest settings file read.
MAX_DOTENV = 1024 * 1024


def _dotenv(path: str, display: str) -> Settings:
    _refuse_special(path)
    from manifesto.edge.raw import TooLarge, read_regular
    from manifesto.errors import InputError

    out = Settings()
    try:
        raw = read_regular(path, follow=True, limit=MAX_DOTENV)
    except TooLarge:
        raise InputError(f"larger than {MAX_DOTENV // 1024} KiB; a settings file is a few NAME=value lines",
                         path=path) from None
    except OSError:  # missing, or a directory (a virtualenv called .env): passed over
        return out
    try:
        # utf-8-sig: a byte-order mark some editors write must not glue itself to the first key.
        lines = raw.decode("utf-8-sig").splitlines()
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason}); fix or remove this settings file",
                         path=path) from None
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        key = key.removeprefix("export ").strip()
        value = value.split(" #", 1)[0].strip().strip("'\"")
        out[key] = value
        out.origins[key] = f"{display}:{number}"
    return out


def _refuse_special(path: str) -> None:
    """A FIFO, socket or device named .env would hang or feed every command; a directory
    (a virtualenv called .env) is not a settings file and is passed over."""
    import stat

    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        from manifesto.errors import InputError
        from manifesto.edge.fs import kind_of

        raise InputError(f"is {kind_of(mode)}, expected a settings file of NAME=value lines; remove it",
                         path=path)


#: Settings a workspace's ./.env may not make: each picks a program or where a file is
#: written, and a .env can arrive with a clone or a pull request. The environment and the
#: user catalog's .env (the user's own) still set them.
USER_ONLY = {
    "KUBECONFIG": "a kubeconfig can run programs through exec credential plugins",
    "MANIFESTO_RENDER_OUT": "it picks where `render file` writes",
}


def settings() -> Settings:
    """Environment over ./.env over the user catalog's .env (``USER_ONLY`` keys not from ./.env)."""
    from manifesto.load.catalog import config_dir, path_text

    user = path_text(os.path.join(config_dir(), ".env"))
    merged = _dotenv(user, user)
    local = _dotenv(".env", ".env")
    for key in sorted(USER_ONLY.keys() & local.keys()):
        where = local.origins.pop(key)
        del local[key]
        if key not in os.environ:
            from manifesto.errors import printable

            merged.ignored.append(f"{printable(where)}: {key} is ignored: a workspace's .env may not set it "
                                  f"({USER_ONLY[key]}); set it in the environment or in {printable(user)}")
    merged.update(local)
    merged.origins.update(local.origins)
    merged.update(os.environ)
    for key in os.environ:
        merged.origins.pop(key, None)
    return merged


def current_user(explicit: str | None, env: dict[str, str]) -> str:
    return explicit or env.get("USER") or env.get("LOGNAME") or "user"


def kube_env(env: dict[str, str] | None) -> tuple[tuple[str, str], ...]:
    """What kubectl must see of the settings beyond the process environment: KUBECONFIG
    (set in a .env file, it would otherwise never reach kubectl)."""
    value = (env or {}).get("KUBECONFIG")
    if not value:
        return ()
    return (("KUBECONFIG", os.pathsep.join(os.path.expanduser(p) for p in value.split(os.pathsep))),)


def _kubectl(*args: str, env: dict[str, str] | None = None) -> str | None:
    """A quick kubeconfig read through the one kubectl runner; None when it fails or says nothing."""
    from manifesto.ops.kubectl import config_value

    return config_value(*args, env=kube_env(env))


def kube_context(explicit: str | None, env: dict[str, str] | None = None) -> str | None:
    return explicit or _kubectl("config", "current-context", env=env)


def current_context(env: dict[str, str]) -> str | None:
    """The current kube context; None when none is set; an OpsError naming why kubectl could not
    say (missing, killed by a signal, a broken kubeconfig)."""
    from manifesto.ops.kubectl import current_context as read

    return read(kube_env(env))


def pick_cluster(explicit: str | None, env: dict[str, str], context: str | None = None, need_context=True) -> str:
    """--cluster, else MANIFESTO_CLUSTER, else MANIFESTO_CLUSTER_MAP or a user cluster named for the context."""
    from manifesto.load.catalog import entries
    from manifesto.errors import CatalogError

    table = cluster_map(env)  # checked even when unused: a malformed setting is not silently skipped
    if explicit:
        return explicit
    if env.get("MANIFESTO_CLUSTER"):
        return env["MANIFESTO_CLUSTER"]
    if need_context or context:  # what follows asks kubectl: a missing one is said as such, not as "no context"
        from manifesto.ops.kubectl import require

        require(kube_env(env), "it names the kube context that picks the cluster profile; or pass "
                "--cluster NAME|PATH, or set MANIFESTO_CLUSTER")
    # The current context read strictly: a kubectl that cannot answer (it does not run, a broken
    # kubeconfig) is an error naming why, never taken for "no context is current".
    ctx = (context or current_context(env)) if need_context else context
    names = [ctx] if ctx else []
    if ctx:
        # The cluster of that context (--context when given), not of the current one.
        cluster_name = _kubectl("config", "view", "--minify", "--context", ctx, "-o",
                                "jsonpath={.contexts[0].context.cluster}", env=env)
        if cluster_name:
            names.append(cluster_name)
    for name in names:
        if name in table:
            return table[name]
    user_clusters = {e[0] for e in entries("clusters") if e[1] == "user"}
    for name in names:
        if name in user_clusters:
            return name
    raise CatalogError("no cluster profile selected: pass --cluster NAME|PATH, set MANIFESTO_CLUSTER, "
                       "or map your kube context in MANIFESTO_CLUSTER_MAP")


def cluster_map(env: dict[str, str]) -> dict[str, str]:
    """MANIFESTO_CLUSTER_MAP (``context=cluster`` pairs separated by commas or spaces) as a
    table; a malformed entry is an error naming the variable (and its .env line)."""
    from manifesto.errors import InputError, show_value
    from manifesto.resolve.options import env_origin

    table: dict[str, str] = {}
    for item in env.get("MANIFESTO_CLUSTER_MAP", "").replace(",", " ").split():
        context, eq, cluster = item.partition("=")
        if not eq or not context or not cluster or "=" in cluster:
            raise InputError(f"{env_origin(env, 'MANIFESTO_CLUSTER_MAP')} {show_value(item)} is not "
                             "CONTEXT=CLUSTER; write the map as ctx1=cluster1,ctx2=cluster2")
        table[context] = cluster
    return table


def pick_namespace(explicit: str | None, env: dict[str, str], context: str | None = None) -> str:
    if explicit:
        return explicit
    if env.get("MANIFESTO_NAMESPACE"):
        return env["MANIFESTO_NAMESPACE"]
    args = ["config", "view", "--minify", "-o", "jsonpath={.contexts[0].context.namespace}"]
    if context:
        args[2:2] = ["--context", context]
    return _kubectl(*args, env=env) or "default"


def checked_namespace(explicit: str | None, env: dict[str, str], context: str | None = None) -> str:
    """``pick_namespace``, refusing a value that is not a DNS label (naming where it came from)."""
    from manifesto.resolve import options as opts

    return opts.value_of(opts.by_name("namespace"), explicit, env, _kube_namespace(context))


def _kube_namespace(context: str | None):
    """(how to name it, reader) of the kube context's namespace, or "default"."""
    def read() -> str:
        args = ["config", "view", "--minify", "-o", "jsonpath={.contexts[0].context.namespace}"]
        if context:
            args[2:2] = ["--context", context]
        return _kubectl(*args) or "default"

    return ("the kube context's namespace", read)


def raw_options(args, env: dict[str, str], kube: bool = True) -> dict:
    """Resolution options as plain data (cheap: usable as a render-cache key), every value
    checked against its option's grammar, an error naming its flag, variable or .env line.
    ``kube``: a namespace not given falls back to the kube context's (False for a Slurm cluster,
    whose renders read no kube context: the namespace is then "default")."""
    from manifesto.resolve import options as opts

    fallbacks = {"user": ("the default", lambda: "user")}
    if kube:
        fallbacks["namespace"] = _kube_namespace(getattr(args, "context", None))
    return opts.from_sources(args, env, fallbacks)


def options(args, env: dict[str, str], raw: dict | None = None, kube: bool = True):
    """Resolution options from parsed CLI arguments and settings (``kube``: as ``raw_options``)."""
    from manifesto.resolve.options import Options

    raw = raw_options(args, env, kube) if raw is None else raw
    return Options(**{**raw, "pre_launch": tuple(raw["pre_launch"])})
