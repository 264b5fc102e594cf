"""The one kubectl runner, and the values that describe a call to it.

Code that touches a cluster builds a :class:`Call` (argv, stdin, env, timeout, retries)
through a :class:`Kube` and hands it to :func:`run`. Reads are bounded per attempt and
retried on transient faults; writes run once, unbounded. ``trace`` logs each argv and
its duration to stderr, never the stdin (which may hold a secret).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass, field

from manifesto.errors import OpsError

__all__ = ["Call", "Result", "Kube", "run", "failure", "settings_from_env", "config_value", "is_not_served",
           "is_not_found", "is_transient"]

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
    """What to run: argv, optional stdin text, extra env, per-attempt timeout, retries."""

    argv: tuple[str, ...]
    stdin: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    timeout: float | None = None
    retries: int = 0
    trace: bool = False
    check: bool = True  # raise OpsError on a non-zero exit

    def show(self) -> str:
        import shlex

        return shlex.join(self.argv)


@dataclass(frozen=True)
class Result:
    returncode: int
    stdout: str
    stderr: str
    attempts: int = 1

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def json(self):
        return json.loads(self.stdout or "{}")


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

    def read(self, *args: str, namespaced: bool = True, check: bool = True, retries: int | None = None) -> Call:
        """A bounded, retried read (get, api-versions)."""
        return Call(self.argv(*args, namespaced=namespaced), timeout=self.timeout,
                    retries=self.retries if retries is None else retries, trace=self.trace,
                    check=check, env=self.extra_env)

    def write(self, *args: str, stdin: str | None = None, namespaced: bool = True, check: bool = True) -> Call:
        """A mutation (apply, delete, diff): run once, unbounded."""
        return Call(self.argv(*args, namespaced=namespaced), stdin=stdin, trace=self.trace, check=check,
                    env=self.extra_env)


def settings_from_env(env: dict[str, str]) -> dict:
    """timeout / retries / trace from MANIFESTO_KUBECTL_TIMEOUT, _RETRIES and MANIFESTO_TRACE."""

    def number(name: str, default: str, kind):
        text = env.get(name, "").strip() or default
        try:
            value = kind(text)
        except ValueError:
            raise OpsError(f"{name}={text!r}: expected a non-negative number") from None
        if value < 0:
            raise OpsError(f"{name}={text!r}: expected a non-negative number")
        return value

    timeout = number("MANIFESTO_KUBECTL_TIMEOUT", "300", float)
    return {
        "timeout": timeout or None,
        "retries": number("MANIFESTO_KUBECTL_RETRIES", "4", int),
        "trace": env.get("MANIFESTO_TRACE", "") not in ("", "0", "false", "no"),
    }


def _backoff(attempt: int) -> float:
    return min(0.2 * 2 ** attempt, 5.0)


def _once(call: Call) -> Result:
    import os

    env = {**os.environ, **dict(call.env)} if call.env else None
    started = time.monotonic()
    outcome = "timeout"
    try:
        stdin = {} if call.stdin is not None else {"stdin": subprocess.DEVNULL}
        proc = subprocess.run(list(call.argv), input=call.stdin, capture_output=True, text=True,
                              timeout=call.timeout, env=env, **stdin)
        outcome = f"rc={proc.returncode}"
        return Result(proc.returncode, proc.stdout, proc.stderr)
    except FileNotFoundError:
        outcome = "not found"
        raise OpsError(f"{call.argv[0]} not found on PATH; install kubectl to use cluster commands") from None
    finally:
        if call.trace:
            # One write per line: the discovery reads run in threads, and print() writes the
            # text and its newline separately, so concurrent traces ran into one line.
            sys.stderr.write(f"trace: {call.show()} ({time.monotonic() - started:.2f}s, {outcome})\n")


def run(call: Call) -> Result:
    """Run ``call``; retry timeouts and transient faults up to ``call.retries`` extra times."""
    attempt = 0
    while True:
        try:
            result = _once(call)
            fault = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else f"exit {result.returncode}"
            transient = not result.ok and is_transient(result.stderr)
        except subprocess.TimeoutExpired:
            result = None
            fault = f"no answer within {call.timeout:g}s (MANIFESTO_KUBECTL_TIMEOUT)"
            transient = True
        if (result is not None and (result.ok or not transient)) or attempt >= call.retries or not transient:
            break
        attempt += 1
        if call.trace:
            sys.stderr.write(f"trace: retry {attempt}/{call.retries} after: {fault}\n")
        time.sleep(_backoff(attempt - 1))
    if result is None:
        raise OpsError(f"`{call.show()}` timed out after {attempt + 1} attempt(s): {fault}")
    result = Result(result.returncode, result.stdout, result.stderr, attempt + 1)
    if call.check and not result.ok:
        raise OpsError(failure(call, result))
    return result


def failure(call: Call, result: Result) -> str:
    """One line describing a failed call: the argv, the attempts, kubectl's last stderr line."""
    last = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else f"exit {result.returncode}"
    tried = f" after {result.attempts} attempts" if result.attempts > 1 else ""
    return f"`{call.show()}` failed{tried}: {last}"


def config_value(*args: str, timeout: float = 10.0) -> str | None:
    """Stdout of one bounded, unretried ``kubectl ARGS`` kubeconfig read (``config current-context``,
    ``config view --minify -o jsonpath=...``); None when kubectl is missing, fails, times out or
    prints nothing, so callers fall back to their defaults."""
    try:
        result = run(Call(("kubectl", *args), timeout=timeout, check=False))
    except OpsError:
        return None
    out = result.stdout.strip()
    return out if result.ok and out else None
