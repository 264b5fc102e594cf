"""Idle-shutdown controller of one Manifesto instance.

Shipped as text in a ConfigMap and run as ``python /opt/manifesto/idle_controller.py``
in a plain Python image, so it uses the standard library only. Importing it has no
side effects; ``main()`` runs only when it is executed as a script.

Every POLL_SECONDS it lists the instance's model pods, keeps the Ready ones that host
a vLLM API server, and scrapes ``/metrics`` on each API server's backend port. Once
exactly EXPECTED_TARGETS API servers answer, it watches the request counters
(``vllm:request_success_total`` plus ``vllm:request_failure_total``) and the
running and waiting requests. A counter change or any running/waiting request resets
the idle timer. So does every metric or Kubernetes API failure and every mismatch in
the number of API servers: the controller fails open and never shuts an instance down
when it cannot establish that the instance is idle.

After TIMEOUT_SECONDS without activity it merge-patches ``spec.replicas`` to 0 on
every workload in WORKLOADS (model Deployments and LeaderWorkerSets, then the endpoint
picker), deletes the GATEWAY when one is configured, stamps the time on the POOL's
annotation (its Argo CD health check and ``manifesto status`` read the pool as
Suspended: no replica count of its own says so), and finally scales its own Deployment
(CONTROLLER) to 0. When a step fails it patches the workloads it already touched back to
their previous replica counts, empties the annotation again, and keeps watching.

Environment:
  NAMESPACE            namespace of the instance (fieldRef metadata.namespace)
  POD_SELECTOR         label selector of the model pods
  TIMEOUT_SECONDS      idle time before shutting down
  POLL_SECONDS         seconds between checks (default 60)
  TARGETS              JSON {role: {"ports": [backend ports],
                                    "serving_worker_indices": null | ["0", ...]}}
  EXPECTED_TARGETS     number of vLLM API servers that must answer
  WORKLOADS            JSON [{"name", "path", "replicas"}] scaled to 0 in this order
  GATEWAY              JSON null | {"name", "path"} deleted after the workloads
  POOL                 JSON null | {"name", "path", "annotation"}: the InferencePool whose
                       annotation gets the shutdown time (RFC 3339 UTC)
  CONTROLLER           JSON {"name", "path"}: this controller's Deployment
  KUBERNETES_API       API server URL (default https://kubernetes.default.svc)
  KUBERNETES_TOKEN_FILE, KUBERNETES_CA_FILE
                       service-account credentials (default: the mounted service account)
  HTTP_TIMEOUT_SECONDS timeout of one HTTP request (default 10)
"""

from __future__ import annotations

import http.client
import json
import math
import os
import signal
import ssl
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

DEFAULT_API = "https://kubernetes.default.svc"
SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
ROLE_LABEL = "manifesto.llm-d.ai/role"
WORKER_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/worker-index"
SUCCESS = "vllm:request_success_total"
FAILURE = "vllm:request_failure_total"
RUNNING = "vllm:num_requests_running"
WAITING = "vllm:num_requests_waiting"
WANTED = (SUCCESS, FAILURE, RUNNING, WAITING)
REQUIRED = (SUCCESS, RUNNING, WAITING)
MERGE_PATCH = "application/merge-patch+json"
MAX_SCRAPERS = 8


class ConfigError(Exception):
    """The environment does not describe a usable configuration."""


class KubeError(Exception):
    """A Kubernetes API request failed."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class MetricsError(Exception):
    """A metrics endpoint could not be read or lacks the vLLM metrics."""


# --------------------------------------------------------------------------- config


@dataclass(frozen=True)
class Workload:
    name: str
    path: str
    replicas: int = 1


@dataclass(frozen=True)
class RoleTargets:
    ports: tuple[int, ...]
    serving_worker_indices: frozenset[str] | None


@dataclass(frozen=True)
class Config:
    namespace: str
    pod_selector: str
    timeout_seconds: float
    poll_seconds: float
    targets: dict[str, RoleTargets]
    expected_targets: int
    workloads: tuple[Workload, ...]
    gateway: Workload | None
    controller: Workload
    pool: Workload | None = None
    pool_annotation: str = ""
    api: str = DEFAULT_API
    token_file: str = f"{SA_DIR}/token"
    ca_file: str = f"{SA_DIR}/ca.crt"
    http_timeout: float = 10.0


def _need(env: dict[str, str], name: str) -> str:
    value = env.get(name, "").strip()
    if not value:
        raise ConfigError(f"{name} is not set")
    return value


def _number(env: dict[str, str], name: str, default: str | None = None, *, minimum: float = 0.0,
            integer: bool = False) -> float:
    raw = env.get(name, "").strip() or default
    if raw is None:
        raise ConfigError(f"{name} is not set")
    try:
        value = int(raw) if integer else float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a {'whole ' if integer else ''}number, got {raw!r}") from None
    if not math.isfinite(value) or value < minimum:
        raise ConfigError(f"{name} must be at least {minimum:g}, got {raw!r}")
    return value


def _json(env: dict[str, str], name: str) -> Any:
    raw = _need(env, name)
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise ConfigError(f"{name} is not valid JSON: {exc}") from None


def _object(value: Any, what: str, *, replicas: bool) -> Workload:
    if not isinstance(value, dict):
        raise ConfigError(f"{what} must be an object with name and path")
    name, path = value.get("name"), value.get("path")
    if not isinstance(name, str) or not name or not isinstance(path, str) or not path.startswith("/"):
        raise ConfigError(f"{what} needs a name and an absolute API path, got {value!r}")
    count = value.get("replicas", 1) if replicas else 0
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise ConfigError(f"{what}: replicas must be a whole number >= 0, got {count!r}")
    return Workload(name, path, count)


def _targets(value: Any) -> dict[str, RoleTargets]:
    if not isinstance(value, dict) or not value:
        raise ConfigError("TARGETS must be a non-empty object keyed by role")
    out = {}
    for role, entry in value.items():
        if not isinstance(entry, dict):
            raise ConfigError(f"TARGETS[{role!r}] must be an object")
        ports = entry.get("ports")
        if (not isinstance(ports, list) or not ports
                or not all(isinstance(p, int) and not isinstance(p, bool) and 0 < p < 65536 for p in ports)):
            raise ConfigError(f"TARGETS[{role!r}].ports must be a non-empty list of ports, got {ports!r}")
        indices = entry.get("serving_worker_indices")
        if indices is not None:
            if not isinstance(indices, list) or not all(isinstance(i, (int, str)) for i in indices):
                raise ConfigError(f"TARGETS[{role!r}].serving_worker_indices must be null or a list")
            indices = frozenset(str(i) for i in indices)
        out[role] = RoleTargets(tuple(ports), indices)
    return out


def load_config(environ: dict[str, str] | None = None) -> Config:
    """Read the configuration from ``environ`` (default: the process environment)."""
    env = dict(os.environ if environ is None else environ)
    workloads = _json(env, "WORKLOADS")
    if not isinstance(workloads, list):
        raise ConfigError("WORKLOADS must be a JSON list")
    gateway = _json(env, "GATEWAY") if env.get("GATEWAY", "").strip() else None
    pool = _json(env, "POOL") if env.get("POOL", "").strip() else None
    annotation = pool.get("annotation") if isinstance(pool, dict) else ""
    if pool is not None and (not isinstance(annotation, str) or not annotation):
        raise ConfigError(f"POOL needs the annotation to stamp, got {pool!r}")
    return Config(
        namespace=_need(env, "NAMESPACE"),
        pod_selector=_need(env, "POD_SELECTOR"),
        timeout_seconds=_number(env, "TIMEOUT_SECONDS"),
        poll_seconds=_number(env, "POLL_SECONDS", "60", minimum=0.01),
        targets=_targets(_json(env, "TARGETS")),
        expected_targets=int(_number(env, "EXPECTED_TARGETS", minimum=1, integer=True)),
        workloads=tuple(_object(w, f"WORKLOADS[{i}]", replicas=True) for i, w in enumerate(workloads)),
        gateway=None if gateway is None else _object(gateway, "GATEWAY", replicas=False),
        controller=_object(_json(env, "CONTROLLER"), "CONTROLLER", replicas=False),
        pool=None if pool is None else _object(pool, "POOL", replicas=False),
        pool_annotation=annotation or "",
        api=(env.get("KUBERNETES_API", "").strip() or DEFAULT_API).rstrip("/"),
        token_file=env.get("KUBERNETES_TOKEN_FILE", "").strip() or f"{SA_DIR}/token",
        ca_file=env.get("KUBERNETES_CA_FILE", "").strip() or f"{SA_DIR}/ca.crt",
        http_timeout=_number(env, "HTTP_TIMEOUT_SECONDS", "10", minimum=0.01),
    )


# --------------------------------------------------------------------------- HTTP


def default_opener(ca_file: str | None = None) -> urllib.request.OpenerDirector:
    """An opener that ignores proxy variables and trusts the cluster CA for HTTPS."""
    context = ssl.create_default_context(cafile=ca_file if ca_file and os.path.isfile(ca_file) else None)
    return urllib.request.build_opener(urllib.request.ProxyHandler({}),
                                       urllib.request.HTTPSHandler(context=context))


def _reason(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code}"
    if isinstance(exc, urllib.error.URLError):
        return f"{exc.reason}"
    return f"{type(exc).__name__}: {exc}"


class Kube:
    """The few Kubernetes API calls the controller makes."""

    def __init__(self, config: Config, opener):
        self.config = config
        self.opener = opener

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        try:  # read every time: projected service-account tokens rotate
            with open(self.config.token_file, encoding="utf-8") as fh:
                token = fh.read().strip()
        except FileNotFoundError:
            token = ""
        except OSError as exc:
            raise KubeError(f"cannot read the service-account token: {exc}") from None
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return headers

    def request(self, method: str, path: str, body: Any = None, content_type: str | None = None) -> Any:
        headers = self._headers()
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = content_type or "application/json"
        req = urllib.request.Request(self.config.api + path, data=data, method=method, headers=headers)
        try:
            with self.opener.open(req, timeout=self.config.http_timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            detail = ""
            try:
                detail = json.loads(exc.read() or b"{}").get("message", "")
            except (ValueError, AttributeError, OSError):
                pass
            raise KubeError(f"{method} {path}: HTTP {exc.code}{': ' + detail if detail else ''}", exc.code) from None
        except (OSError, http.client.HTTPException) as exc:
            raise KubeError(f"{method} {path}: {_reason(exc)}") from None
        if not raw:
            return {}
        try:
            return json.loads(raw)
        except ValueError:
            raise KubeError(f"{method} {path}: the response is not JSON") from None

    def list_pods(self) -> list[dict]:
        base = (f"/api/v1/namespaces/{urllib.parse.quote(self.config.namespace, safe='')}/pods"
                f"?labelSelector={urllib.parse.quote(self.config.pod_selector, safe='')}&limit=500")
        pods: list[dict] = []
        token = ""
        for _ in range(1000):
            page = self.request("GET", base + (f"&continue={urllib.parse.quote(token, safe='')}" if token else ""))
            items = page.get("items") if isinstance(page, dict) else None
            if not isinstance(items, list):
                raise KubeError("GET pods: the response has no item list")
            pods.extend(p for p in items if isinstance(p, dict))
            token = (page.get("metadata") or {}).get("continue") or ""
            if not token:
                return pods
        raise KubeError("GET pods: too many pages")

    def replicas(self, workload: Workload) -> int:
        obj = self.request("GET", workload.path)
        value = ((obj or {}).get("spec") or {}).get("replicas") if isinstance(obj, dict) else None
        if value is None:
            return workload.replicas
        if not isinstance(value, int) or isinstance(value, bool):
            raise KubeError(f"GET {workload.path}: spec.replicas is not a number")
        return value

    def scale(self, workload: Workload, replicas: int) -> None:
        self.request("PATCH", workload.path, {"spec": {"replicas": replicas}}, MERGE_PATCH)

    def annotate(self, obj: Workload, key: str, value: str) -> None:
        self.request("PATCH", obj.path, {"metadata": {"annotations": {key: value}}}, MERGE_PATCH)

    def delete(self, obj: Workload) -> bool:
        """Delete ``obj``; False when it was already gone."""
        try:
            self.request("DELETE", obj.path)
        except KubeError as exc:
            if exc.status == 404:
                return False
            raise
        return True


# --------------------------------------------------------------------------- targets and metrics


@dataclass(frozen=True)
class Target:
    pod: str
    uid: str
    role: str
    ip: str
    port: int

    @property
    def key(self) -> str:
        return f"{self.pod}/{self.uid}:{self.port}"

    @property
    def url(self) -> str:
        host = f"[{self.ip}]" if ":" in self.ip else self.ip
        return f"http://{host}:{self.port}/metrics"


def pod_ready(pod: dict) -> bool:
    meta = pod.get("metadata") or {}
    status = pod.get("status") or {}
    if meta.get("deletionTimestamp") or status.get("phase") != "Running" or not status.get("podIP"):
        return False
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in status.get("conditions") or [] if isinstance(c, dict))


def select_targets(pods: list[dict], targets: dict[str, RoleTargets]) -> list[Target]:
    """API-server endpoints on Ready pods, in a stable order."""
    out = []
    for pod in pods:
        if not pod_ready(pod):
            continue
        meta = pod.get("metadata") or {}
        labels = meta.get("labels") or {}
        role = labels.get(ROLE_LABEL)
        spec = targets.get(role) if isinstance(role, str) else None
        if spec is None:
            continue
        serving = spec.serving_worker_indices
        if serving is not None and labels.get(WORKER_INDEX_LABEL) not in serving:
            continue
        name, uid, ip = str(meta.get("name", "")), str(meta.get("uid", "")), str(pod["status"]["podIP"])
        out.extend(Target(name, uid, role, ip, port) for port in spec.ports)
    return sorted(out, key=lambda t: (t.role, t.pod, t.port))


def _sample_name_and_value(line: str) -> tuple[str, str] | None:
    """Split one exposition-format sample line into (metric name, value text)."""
    brace = line.find("{")
    space = line.find(" ")
    if brace != -1 and (space == -1 or brace < space):
        name, i, quoted = line[:brace], brace + 1, False
        while i < len(line):  # find the closing brace outside quoted label values
            ch = line[i]
            if quoted and ch == "\\":
                i += 2
                continue
            if ch == '"':
                quoted = not quoted
            elif ch == "}" and not quoted:
                break
            i += 1
        else:
            return None
        rest = line[i + 1:].split()
    else:
        parts = line.split()
        if len(parts) < 2:
            return None
        name, rest = parts[0], parts[1:]
    return (name, rest[0]) if rest else None


def parse_metrics(lines) -> dict[str, float]:
    """Sum the samples of the vLLM metrics the controller watches, by metric name."""
    sums: dict[str, float] = {}
    for raw in lines:
        line = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
        line = line.strip()
        if not line.startswith("vllm:"):
            continue
        parsed = _sample_name_and_value(line)
        if parsed is None or parsed[0] not in WANTED:
            continue
        name, text = parsed
        try:
            value = float(text)
        except ValueError:
            raise MetricsError(f"{name} has a non-numeric value {text!r}") from None
        if not math.isfinite(value):
            raise MetricsError(f"{name} is {text}")
        sums[name] = sums.get(name, 0.0) + value
    return sums


@dataclass(frozen=True)
class Sample:
    completed: float  # success + failure counters
    in_flight: float  # running + waiting


def scrape(target: Target, opener, timeout: float) -> Sample:
    req = urllib.request.Request(target.url, headers={"Accept": "text/plain"})
    try:
        with opener.open(req, timeout=timeout) as resp:
            sums = parse_metrics(resp)
    except MetricsError as exc:
        raise MetricsError(f"{target.pod}:{target.port}: {exc}") from None
    except (OSError, http.client.HTTPException, ValueError) as exc:
        raise MetricsError(f"{target.pod}:{target.port}: {_reason(exc)}") from None
    missing = [m for m in REQUIRED if m not in sums]
    if missing:
        raise MetricsError(f"{target.pod}:{target.port}: no {', '.join(missing)} in /metrics")
    return Sample(sums[SUCCESS] + sums.get(FAILURE, 0.0), sums[RUNNING] + sums[WAITING])


# --------------------------------------------------------------------------- the controller


@dataclass
class State:
    idle_since: float | None = None  # when the idle timer last restarted
    counters: dict[str, float] | None = None  # completed requests per target at the last check
    ready_seen: bool = False  # every expected API server has answered at least once
    done: bool = False  # shut down; nothing left to do


def _stamp_log(message: str) -> None:
    print(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {message}", flush=True)


class Controller:
    """One decision per ``run_once(state, now)``; ``now`` is any monotonic clock in seconds."""

    def __init__(self, config: Config, opener=None, log: Callable[[str], None] = _stamp_log):
        self.config = config
        self.opener = opener if opener is not None else default_opener(config.ca_file)
        self.kube = Kube(config, self.opener)
        self.log = log

    def _say(self, action: str, message: str) -> str:
        self.log(f"{action}: {message}")
        return action

    def _reset(self, state: State, now: float, action: str, message: str,
               counters: dict[str, float] | None = None) -> str:
        state.idle_since = now
        state.counters = counters
        return self._say(action, f"{message}; idle timer reset")

    def _scrape_all(self, targets: list[Target]) -> dict[str, Sample]:
        timeout = self.config.http_timeout
        with ThreadPoolExecutor(max_workers=min(MAX_SCRAPERS, len(targets))) as pool:
            futures = [(t, pool.submit(scrape, t, self.opener, timeout)) for t in targets]
            results, errors = {}, []
            for target, future in futures:
                try:
                    results[target.key] = future.result()
                except MetricsError as exc:
                    errors.append(str(exc))
                except Exception as exc:  # noqa: BLE001 - any failure must fail open
                    errors.append(f"{target.pod}:{target.port}: {type(exc).__name__}: {exc}")
        if errors:
            more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
            raise MetricsError(errors[0] + more)
        return results

    def run_once(self, state: State, now: float) -> str:
        """Check the instance once and act; returns the decision taken."""
        if state.done:
            return "done"
        cfg = self.config
        try:
            pods = self.kube.list_pods()
        except Exception as exc:  # noqa: BLE001
            return self._reset(state, now, "api-error", f"cannot list model pods: {exc}")
        targets = select_targets(pods, cfg.targets)
        if len(targets) != cfg.expected_targets:
            what = f"{len(targets)} of {cfg.expected_targets} vLLM API servers ready"
            if not state.ready_seen:
                return self._reset(state, now, "waiting", what)
            return self._reset(state, now, "not-ready", what)
        try:
            samples = self._scrape_all(targets)
        except MetricsError as exc:
            return self._reset(state, now, "metrics-error", str(exc))
        counters = {key: s.completed for key, s in samples.items()}
        completed = sum(counters.values())
        in_flight = sum(s.in_flight for s in samples.values())
        if not state.ready_seen:
            state.ready_seen = True
            return self._reset(state, now, "ready", f"all {len(targets)} vLLM API servers ready, "
                               f"{completed:g} requests completed so far", counters)
        if state.counters is None or state.idle_since is None:
            return self._reset(state, now, "baseline", f"{completed:g} requests completed so far", counters)
        if counters != state.counters:
            return self._reset(state, now, "active", f"request counters changed ({completed:g} completed)", counters)
        if in_flight > 0:
            return self._reset(state, now, "active", f"{in_flight:g} requests running or waiting", counters)
        idle_for = now - state.idle_since
        if idle_for < cfg.timeout_seconds:
            return self._say("idle", f"no requests for {idle_for:.0f}s of {cfg.timeout_seconds:g}s")
        self._say("shutdown", f"no requests for {idle_for:.0f}s (timeout {cfg.timeout_seconds:g}s); "
                              "scaling the instance to zero")
        return self.shutdown(state, now)

    def shutdown(self, state: State, now: float) -> str:
        cfg = self.config
        touched: list[tuple[Workload, int]] = []
        gateway_deleted = pool_marked = False
        try:
            for workload in cfg.workloads:
                previous = self.kube.replicas(workload)
                touched.append((workload, previous))  # before the patch: it may apply and still time out
                self.kube.scale(workload, 0)
                self._say("scaled", f"{workload.name} from {previous} to 0 replicas")
            if cfg.gateway is not None:
                gateway_deleted = self.kube.delete(cfg.gateway)
                self._say("deleted" if gateway_deleted else "absent",
                          f"Gateway {cfg.gateway.name}" + ("" if gateway_deleted else " was already gone"))
            if cfg.pool is not None:
                pool_marked = True  # before the patch: it may apply and still time out
                stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
                self.kube.annotate(cfg.pool, cfg.pool_annotation, stamp)
                self._say("marked", f"InferencePool {cfg.pool.name}: {cfg.pool_annotation}={stamp}")
            self.kube.scale(cfg.controller, 0)
        except Exception as exc:  # noqa: BLE001
            self._say("shutdown-failed", f"{exc}; restoring {len(touched)} workload(s)")
            self._restore(touched)
            if pool_marked:
                try:
                    self.kube.annotate(cfg.pool, cfg.pool_annotation, "")
                    self._say("restored", f"InferencePool {cfg.pool.name}: {cfg.pool_annotation} emptied")
                except Exception as undo:  # noqa: BLE001
                    self._say("restore-failed", f"InferencePool {cfg.pool.name}: {undo}")
            if gateway_deleted:
                self._say("warning", f"Gateway {cfg.gateway.name} was deleted; apply the instance "
                                     "again to recreate it")
            return self._reset(state, now, "restored", "shutdown aborted")
        state.done = True
        return self._say("stopped", f"scaled {cfg.controller.name} to 0; the instance is shut down "
                                    "(apply it again to restore)")

    def _restore(self, touched: list[tuple[Workload, int]]) -> None:
        for workload, previous in touched:
            try:
                self.kube.scale(workload, previous)
                self._say("restored", f"{workload.name} to {previous} replicas")
            except Exception as exc:  # noqa: BLE001
                self._say("restore-failed", f"{workload.name}: {exc}")


def run(controller: Controller, state: State, clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep, ticks: int | None = None) -> State:
    """Check, then sleep POLL_SECONDS, forever (or ``ticks`` times)."""
    n = 0
    while ticks is None or n < ticks:
        try:
            controller.run_once(state, clock())
        except Exception as exc:  # noqa: BLE001 - never crash-loop on an unexpected failure
            state.idle_since, state.counters = clock(), None
            controller.log(f"error: {type(exc).__name__}: {exc}; idle timer reset")
        n += 1
        sleep(controller.config.poll_seconds)
    return state


def _terminate(signum, frame):
    raise SystemExit(0)


def main() -> None:
    # As PID 1 in a container, Python would otherwise ignore SIGTERM until the grace period ends.
    signal.signal(signal.SIGTERM, _terminate)
    try:
        config = load_config()
    except ConfigError as exc:
        print(f"idle-shutdown: configuration error: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(2) from None
    controller = Controller(config)
    gateway = f", then delete Gateway {config.gateway.name}" if config.gateway else ""
    controller.log(
        f"start: watching {config.expected_targets} vLLM API servers ({config.pod_selector}) in "
        f"{config.namespace}; after {config.timeout_seconds:g}s idle scale "
        f"{', '.join(w.name for w in config.workloads) or 'nothing'} to 0{gateway}, then {config.controller.name}"
    )
    run(controller, State())


if __name__ == "__main__":
    main()
