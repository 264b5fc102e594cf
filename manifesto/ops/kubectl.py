"""The one kubectl runner, and the values that describe a call to it.

Code that touches a cluster builds a :class:`Call` (argv, stdin, env, timeout, retries)
through a :class:`Kube` and hands it to :func:`run`. Every call is bounded
(``MANIFESTO_KUBECTL_TIMEOUT`` per attempt, and an optional overall ``deadline``); reads are
retried on transient faults, writes run once. A call that runs out of time is killed with
every process it started. ``trace`` logs each argv and its duration to stderr, never the
stdin (which may hold a secret). Output is read as UTF-8 with undecodable bytes replaced;
``CallResult.json`` and ``items`` turn output that is not what kubectl prints into an
``OpsError`` naming the command.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass, field

from manifesto.errors import OpsError

__all__ = ["Call", "CallResult", "Kube", "run", "failure", "settings_from_env", "config_value", "current_context",
           "is_not_served",
           "is_not_found", "is_transient", "dig", "conditions", "items"]

_TRANSIENT = (
    "unable to connect to the server", "connection refused", "connection reset", "i/o timeout",
    "tls handshake timeout", "timeout exceeded", "timed out", "context deadline exceeded",
    "serviceunavailable", "service unavailable", "too many requests", "toomanyrequests",
    "the server is currently unable to handle the request", "etcdserver", "unexpected eof",
    "http2: client connection lost", "internal error occurred",
)
_NOT_SERVED = (
    "the server doesn't have a resource type", "could not find the requested resource",
    "no matches for kind", "the server could not find the requested resource",
)


def is_transient(stderr: str) -> bool:
    low = stderr.lower()
    return any(t in low for t in _TRANSIENT)


def is_not_served(stderr: str) -> bool:
    low = stderr.lower()
    return any(t in low for t in _NOT_SERVED)


def is_not_found(stderr: str) -> bool:
    return "notfound" in stderr.lower().replace(" ", "") or "not found" in stderr.lower()


@dataclass(frozen=True)
class Call:
    """What to run: argv, optional stdin text, extra env, per-attempt timeout, retries.

    ``deadline`` (a ``time.monotonic`` value) caps the whole call, retries included: each
    attempt gets at most the time left, so a caller's own deadline holds.
    """

    argv: tuple[str, ...]
    stdin: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    timeout: float | None = None
    retries: int = 0
    trace: bool = False
    check: bool = True  # raise OpsError on a non-zero exit
    deadline: float | None = None
    write: bool = False  # a mutation: a timeout may leave it half done

    def show(self) -> str:
        import shlex

        return shlex.join(self.argv)


@dataclass(frozen=True)
class CallResult:
    returncode: int
    stdout: str
    stderr: str
    attempts: int = 1
    command: str = "kubectl"

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def json(self) -> dict:
        """stdout as a JSON object; anything else is an OpsError naming the command."""
        try:
            value = json.loads(self.stdout or "{}")
        except ValueError as exc:  # JSONDecodeError
            raise OpsError(f"`{self.command}` printed output that is not JSON ({exc.msg} at line {exc.lineno}, "
                           f"column {exc.colno}); is kubectl a real kubectl?") from None
        except RecursionError:
            raise OpsError(f"`{self.command}` printed JSON nested too deeply to be a Kubernetes object") from None
        if not isinstance(value, dict):
            raise OpsError(f"`{self.command}` printed JSON {_kind(value)}, expected an object")
        return value


def _kind(value) -> str:
    return {list: "a list", str: "a string", type(None): "null", bool: "a boolean"}.get(type(value), "a number")


def items(result: CallResult) -> list[dict]:
    """The ``items`` of a ``kubectl get -o json`` list: a list of objects, else an OpsError."""
    found = result.json().get("items")
    if found is None:
        return []
    if not isinstance(found, list) or not all(isinstance(i, dict) for i in found):
        what = _kind(found) if not isinstance(found, list) else "a list holding something other than objects"
        raise OpsError(f"`{result.command}` printed a list whose items are {what}, expected a list of objects")
    return found


def dig(obj, *keys, default=None):
    """``obj[k1][k2]...`` through mappings only; ``default`` when a step is missing or not a mapping.

    Fields of live objects are read through this, so an odd object reads as absent data
    instead of crashing a command.
    """
    for key in keys:
        if not isinstance(obj, dict) or key not in obj:
            return default
        obj = obj[key]
    return obj


def conditions(obj) -> list[dict]:
    """``status.conditions`` of a live object, keeping only well-formed entries."""
    found = dig(obj, "status", "conditions")
    return [c for c in found if isinstance(c, dict)] if isinstance(found, list) else []


@dataclass(frozen=True)
class Kube:
    """Builds calls for one namespace and kube context."""

    namespace: str | None = None
    context: str | None = None
    timeout: float | None = 300.0
    retries: int = 4
    trace: bool = False
    extra_env: tuple[tuple[str, str], ...] = field(default=())

    def argv(self, *args: str, namespaced: bool = True) -> tuple[str, ...]:
        head = ["kubectl"]
        if self.context:
            head += ["--context", self.context]
        if namespaced and self.namespace:
            head += ["-n", self.namespace]
        return (*head, *args)

    def read(self, *args: str, namespaced: bool = True, check: bool = True, retries: int | None = None,
             deadline: float | None = None) -> Call:
        """A bounded, retried read (get, api-versions)."""
        return Call(self.argv(*args, namespaced=namespaced), timeout=self.timeout,
                    retries=self.retries if retries is None else retries, trace=self.trace,
                    check=check, env=self.extra_env, deadline=deadline)

    def write(self, *args: str, stdin: str | None = None, namespaced: bool = True, check: bool = True) -> Call:
        """A mutation (apply, delete, diff, create): bounded like a read, run once."""
        return Call(self.argv(*args, namespaced=namespaced), stdin=stdin, timeout=self.timeout, trace=self.trace,
                    check=check, env=self.extra_env, write=True)


#: The most retries MANIFESTO_KUBECTL_RETRIES may ask for.
MAX_RETRIES = 100


def settings_from_env(env: dict[str, str]) -> dict:
    """timeout / retries / trace from MANIFESTO_KUBECTL_TIMEOUT, _RETRIES and MANIFESTO_TRACE."""
    from manifesto.util.numbers import MAX_SECONDS, number

    def setting(name: str, default: str, integer: bool, high: float, expected: str):
        text = env.get(name, "").strip() or default
        value = number(text, integer=integer, high=high)
        if value is None:
            raise OpsError(f"{name}={text[:40]!r}: expected {expected}")
        return value

    timeout = setting("MANIFESTO_KUBECTL_TIMEOUT", "300", False, MAX_SECONDS,
                      f"a number of seconds from 0 (no bound) to {MAX_SECONDS}")
    return {
        "timeout": timeout or None,
        "retries": setting("MANIFESTO_KUBECTL_RETRIES", "4", True, MAX_RETRIES,
                           f"a whole number of retries from 0 to {MAX_RETRIES}"),
        "trace": env.get("MANIFESTO_TRACE", "") not in ("", "0", "false", "no"),
    }


def _backoff(attempt: int) -> float:
    return min(0.2 * 2 ** attempt, 5.0)


class _Timeout(Exception):
    """An attempt ran out of time (its processes are gone); ``by_deadline`` when the
    call's overall deadline, not the per-attempt timeout, was the tighter bound."""

    def __init__(self, by_deadline: bool) -> None:
        super().__init__()
        self.by_deadline = by_deadline


def _attempt_timeout(call: Call) -> float | None:
    """This attempt's bound: the per-attempt timeout, capped by what is left of the deadline."""
    if call.deadline is None:
        return call.timeout
    left = max(0.0, call.deadline - time.monotonic())
    return left if call.timeout is None else min(call.timeout, left)


#: What every cluster command says when there is no kubectl to run.
NOT_FOUND = "kubectl not found on PATH; install kubectl to use cluster commands"


def found(env: tuple[tuple[str, str], ...] = ()) -> bool:
    """Whether ``kubectl`` is an executable on the PATH it would run with (``env``'s PATH, if it sets one)."""
    import os
    import shutil

    path = dict(env).get("PATH", os.environ.get("PATH", os.defpath))
    return shutil.which("kubectl", path=path) is not None


def require(env: tuple[tuple[str, str], ...] = (), why: str = "") -> None:
    """An OpsError saying kubectl is missing, before any logic that would ask it something
    (the kube context, its namespace) takes its silence for "none is set"."""
    if not found(env):
        raise OpsError(NOT_FOUND + (f" ({why})" if why else ""))


def _once(call: Call) -> CallResult:
    import os

    env = {**os.environ, **dict(call.env)} if call.env else None
    timeout = _attempt_timeout(call)
    started = time.monotonic()
    outcome = "timeout"
    by_deadline = timeout is not None and timeout != call.timeout
    try:
        if timeout is not None and timeout <= 0:
            raise _Timeout(by_deadline)
        returncode, out, err = _spawn(call, env, timeout, by_deadline)
        outcome = f"rc={returncode}"
        return CallResult(returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"),
                      command=call.show())
    except FileNotFoundError:
        outcome = "not found"
        raise OpsError(NOT_FOUND if call.argv[0] == "kubectl" else f"{call.argv[0]} not found on PATH") from None
    except PermissionError:
        outcome = "not executable"
        raise OpsError(f"{call.argv[0]} on PATH is not executable") from None
    finally:
        if call.trace:
            # One write per line: the discovery reads run in threads, and print() writes the
            # text and its newline separately, so concurrent traces ran into one line.
            sys.stderr.write(f"trace: {call.show()} ({time.monotonic() - started:.2f}s, {outcome})\n")


def _spawn(call: Call, env, timeout: float | None, by_deadline: bool) -> tuple[int, bytes, bytes]:
    """Run the argv in a session of its own, so a timeout (or Ctrl-C) ends every process it
    started: a child that keeps the pipes open would otherwise keep us waiting."""
    proc = subprocess.Popen(list(call.argv), stdin=subprocess.PIPE if call.stdin is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
    data = call.stdin.encode("utf-8") if call.stdin is not None else None
    try:
        out, err = proc.communicate(data, timeout=timeout)
    except subprocess.TimeoutExpired:
        _end(proc)
        raise _Timeout(by_deadline) from None
    except BaseException:
        _end(proc)
        raise
    return proc.returncode, out, err


def _end(proc) -> None:
    import os
    import signal

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for pipe in (proc.stdout, proc.stderr, proc.stdin):
        if pipe is not None:
            pipe.close()
    proc.wait()


def run(call: Call) -> CallResult:
    """Run ``call``; retry timeouts and transient faults up to ``call.retries`` extra times
    (never past ``call.deadline``)."""
    attempt = 0
    while True:
        try:
            result = _once(call)
            fault = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else f"exit {result.returncode}"
            transient = not result.ok and is_transient(result.stderr)
        except _Timeout as exc:
            result = None
            fault = ("no answer before the deadline" if exc.by_deadline
                     else f"no answer within {call.timeout:g}s (MANIFESTO_KUBECTL_TIMEOUT)")
            transient = True
        out_of_time = call.deadline is not None and time.monotonic() + _backoff(attempt) >= call.deadline
        if (result is not None and (result.ok or not transient)) or attempt >= call.retries or not transient \
                or out_of_time:
            break
        attempt += 1
        if call.trace:
            sys.stderr.write(f"trace: retry {attempt}/{call.retries} after: {fault}\n")
        time.sleep(_backoff(attempt - 1))
    if result is None:
        if call.write:
            raise OpsError(f"`{call.show()}` timed out: {fault}; the change may have been made in part, "
                           "check the cluster before running it again")
        raise OpsError(f"`{call.show()}` timed out after {attempt + 1} attempt(s): {fault}")
    result = CallResult(result.returncode, result.stdout, result.stderr, attempt + 1, result.command)
    if call.check and not result.ok:
        raise OpsError(failure(call, result))
    return result


def _ended(returncode: int) -> str:
    """``exit N``, or ``killed by signal SIGNAME`` for a process a signal ended."""
    if returncode >= 0:
        return f"exit {returncode}"
    import signal

    try:
        return f"killed by signal {signal.Signals(-returncode).name}"
    except ValueError:
        return f"killed by signal {-returncode}"


def failure(call: Call, result: CallResult) -> str:
    """One line describing a failed call: the argv, the attempts, kubectl's last stderr line
    (or how it ended: an exit status or the signal that killed it)."""
    from manifesto.errors import excerpt

    last = excerpt(result.stderr.strip().splitlines()[-1]) if result.stderr.strip() else _ended(result.returncode)
    if result.returncode < 0 and result.stderr.strip():
        last += f" ({_ended(result.returncode)})"
    tried = f" after {result.attempts} attempts" if result.attempts > 1 else ""
    return f"`{call.show()}` failed{tried}: {last}"


def config_value(*args: str, timeout: float = 10.0, env: tuple[tuple[str, str], ...] = ()) -> str | None:
    """Stdout of one bounded, unretried ``kubectl ARGS`` kubeconfig read (``config current-context``,
    ``config view --minify -o jsonpath=...``); None when kubectl is missing, fails, times out or
    prints nothing, so callers fall back to their defaults. ``env``: extra environment
    (KUBECONFIG from a .env file)."""
    try:
        result = run(Call(("kubectl", *args), timeout=timeout, check=False, env=env))
    except OpsError:
        return None
    out = result.stdout.strip()
    return out if result.ok and out else None


def current_context(env: tuple[tuple[str, str], ...] = (), timeout: float = 10.0) -> str | None:
    """The kubeconfig's current context; None only when kubectl says none is set. Anything
    else that keeps kubectl from answering (not on PATH, killed by a signal, a broken
    kubeconfig, no answer) is an OpsError naming that cause."""
    call = Call(("kubectl", "config", "current-context"), timeout=timeout, check=False, env=env)
    result = run(call)
    if result.ok:
        return result.stdout.strip() or None
    if result.returncode > 0 and "current-context is not set" in result.stderr:
        return None
    raise OpsError(f"could not read the current kube context: {failure(call, result)}")
