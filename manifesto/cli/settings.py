"""The CLI's edge: everything read from the environment, .env files and kube config.

These values are read once here and passed down as plain arguments; nothing below the
CLI reads the environment.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["settings", "current_user", "pick_cluster", "pick_namespace", "checked_namespace", "kube_context",
           "options"]


def _dotenv(path: Path) -> dict[str, str]:
    _refuse_special(path)
    out: dict[str, str] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return out
    except UnicodeDecodeError as exc:
        from manifesto.errors import InputError

        raise InputError(f"not UTF-8 text ({exc.reason}); fix or remove this settings file",
                         path=str(path)) from None
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        key = key.removeprefix("export ").strip()
        value = value.split(" #", 1)[0].strip().strip("'\"")
        out[key] = value
    return out


def _refuse_special(path: Path) -> None:
    """A FIFO, socket or device named .env would hang or feed every command; a directory
    (a virtualenv called .env) is not a settings file and is passed over."""
    import stat

    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        from manifesto.errors import InputError
        from manifesto.fsutil import kind_of

        raise InputError(f"is {kind_of(mode)}, expected a settings file of NAME=value lines; remove it",
                         path=str(path))


def settings() -> dict[str, str]:
    """Environment over ./.env over the user catalog's .env."""
    from manifesto.catalog import config_home

    merged = _dotenv(config_home() / ".env")
    merged.update(_dotenv(Path(".env")))
    merged.update(os.environ)
    return merged


def current_user(explicit: str | None, env: dict[str, str]) -> str:
    return explicit or env.get("USER") or env.get("LOGNAME") or "user"


def _kubectl(*args: str) -> str | None:
    """A quick kubeconfig read through the one kubectl runner; None when it fails or says nothing."""
    from manifesto.ops.kubectl import config_value

    return config_value(*args)


def kube_context(explicit: str | None) -> str | None:
    return explicit or _kubectl("config", "current-context")


def pick_cluster(explicit: str | None, env: dict[str, str], context: str | None = None, need_context=True) -> str:
    """--cluster, else MANIFESTO_CLUSTER, else MANIFESTO_CLUSTER_MAP or a user cluster named for the context."""
    from manifesto.catalog import entries
    from manifesto.errors import CatalogError

    if explicit:
        return explicit
    if env.get("MANIFESTO_CLUSTER"):
        return env["MANIFESTO_CLUSTER"]
    ctx = kube_context(context) if need_context else context
    names = [ctx] if ctx else []
    if ctx:
        cluster_name = _kubectl("config", "view", "--minify", "-o", "jsonpath={.contexts[0].context.cluster}")
        if cluster_name:
            names.append(cluster_name)
    table = dict(item.split("=", 1) for item in env.get("MANIFESTO_CLUSTER_MAP", "").replace(",", " ").split() if "=" in item)
    for name in names:
        if name in table:
            return table[name]
    user_clusters = {e[0] for e in entries("clusters") if e[1] == "user"}
    for name in names:
        if name in user_clusters:
            return name
    raise CatalogError("no cluster profile selected: pass --cluster NAME|PATH, set MANIFESTO_CLUSTER, "
                       "or map your kube context in MANIFESTO_CLUSTER_MAP")


def pick_namespace(explicit: str | None, env: dict[str, str], context: str | None = None) -> str:
    if explicit:
        return explicit
    if env.get("MANIFESTO_NAMESPACE"):
        return env["MANIFESTO_NAMESPACE"]
    args = ["config", "view", "--minify", "-o", "jsonpath={.contexts[0].context.namespace}"]
    if context:
        args[2:2] = ["--context", context]
    return _kubectl(*args) or "default"


#: The longest idle timeout: a year of minutes.
MAX_IDLE_MINUTES = 365 * 24 * 60


def _minutes(text: str | None) -> int | None:
    from manifesto.errors import InputError
    from manifesto.numbers import number

    if text is None:
        return None
    units = {"m": 1, "h": 60, "s": 1 / 60}
    t = text.strip().lower()
    factor = units.get(t[-1:], None)
    value = number(t[:-1] if factor is not None else t, low=0, high=MAX_IDLE_MINUTES, low_open=True)
    if value is None or value * (factor or 1) > MAX_IDLE_MINUTES:
        raise InputError(f"--idle-timeout '{text}': expected a positive duration of at most a year, "
                         "such as 15m, 2h or 90 (minutes)")
    return max(1, round(value * (factor or 1)))


def _checked(value: str, check, sources: list[tuple[str, str | None]]) -> str:
    """``value`` if ``check`` passes, else an InputError naming where it came from: the first of
    ``sources`` ((flag or variable, its value)) that supplied it."""
    from manifesto.errors import InputError, show_value

    problem = check(value)
    if problem:
        origin = next((name for name, given in sources if given), "the default")
        raise InputError(f"{origin} {show_value(value)} {problem}")
    return value


def checked_namespace(explicit: str | None, env: dict[str, str], context: str | None = None) -> str:
    """``pick_namespace``, refusing a value that is not a DNS label (naming where it came from)."""
    from manifesto import rules

    return _checked(pick_namespace(explicit, env, context), rules.dns_label,
                    [("--namespace", explicit), ("MANIFESTO_NAMESPACE", env.get("MANIFESTO_NAMESPACE")),
                     ("the kube context's namespace", "x")])


def raw_options(args, env: dict[str, str]) -> dict:
    """Resolution options as plain data (cheap: usable as a render-cache key)."""
    from manifesto import rules

    user = getattr(args, "user", None)
    return {
        "user": _checked(current_user(user, env), rules.path_segment,
                         [("--user", user), ("$USER", env.get("USER")), ("$LOGNAME", env.get("LOGNAME"))]),
        "namespace": checked_namespace(getattr(args, "namespace", None), env, getattr(args, "context", None)),
        "accelerator": getattr(args, "accelerator", None),
        "vllm_env": getattr(args, "vllm_env", None),
        "user_root": getattr(args, "user_root", None),
        "log_root": getattr(args, "log_root", None),
        "cache_root": getattr(args, "cache_root", None),
        "pre_launch": list(getattr(args, "pre_launch", None) or ()),
        "routing_profile": getattr(args, "routing_profile", None) or env.get("MANIFESTO_ROUTING_PROFILE") or None,
        "idle_shutdown": False if getattr(args, "no_idle_shutdown", False) else (
            True if getattr(args, "idle_shutdown", False) else None),
        "idle_timeout_minutes": _minutes(getattr(args, "idle_timeout", None)),
    }


def options(args, env: dict[str, str], raw: dict | None = None):
    """Resolution options from parsed CLI arguments and settings."""
    from manifesto.resolve.plan import Options

    raw = raw_options(args, env) if raw is None else raw
    return Options(**{**raw, "pre_launch": tuple(raw["pre_launch"])})
