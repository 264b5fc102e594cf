"""test e2e: deploy a spec into a fresh namespace, send one real request, tear it down.

Pure helpers shape the objects (storage swap, the test Job, its target); :func:`run_e2e`
runs the lifecycle through the one kubectl runner: create the namespace, deploy, wait
ready, run the Job, print its logs, and delete the namespace, also on failure.
"""

from __future__ import annotations

import copy
import json
import math
import re
import sys

import msgspec

from manifesto.errors import OpsError, printable
from manifesto.ops.kubectl import Kube, conditions, run
from manifesto.ops.lifecycle import POLL_FLOOR
from manifesto.resolve.names import COMPONENT_LABEL, INSTANCE_LABEL, MANAGED_BY, MANAGED_BY_LABEL, OWNER_LABEL

__all__ = ["default_namespace", "swap_storage", "target_url", "e2e_job", "namespace_manifest", "create_namespace",
           "delete_namespace", "wait_job", "job_logs", "Waits", "run_e2e", "SCRIPT"]

COMPONENT = "e2e-test"
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")


def _say(text: str) -> None:
    from manifesto.errors import note

    note(f"manifesto: {text}")


# -- names ------------------------------------------------------------------------------

def default_namespace(release: str, suffix: str) -> str:
    """``manifesto-e2e-<release>-<suffix>``, cut to a 63-character DNS label."""
    head = "manifesto-e2e-"
    room = 63 - len(head) - len(suffix) - 1
    return f"{head}{release[:room].rstrip('-')}-{suffix}"


def check_namespace_name(name: str) -> str:
    if len(name) > 63 or not _DNS_LABEL.match(name):
        raise OpsError(f"namespace '{name}' is not a valid DNS label (lower-case letters, digits and '-', "
                       "at most 63 characters)")
    return name


def job_name(plan) -> str:
    return f"{plan.instance}-e2e"


# -- storage ----------------------------------------------------------------------------

def _pod_specs(obj: dict) -> list[dict]:
    spec = obj.get("spec") or {}
    if obj.get("kind") == "LeaderWorkerSet":
        lwt = spec.get("leaderWorkerTemplate") or {}
        return [lwt[k]["spec"] for k in ("leaderTemplate", "workerTemplate") if (lwt.get(k) or {}).get("spec")]
    tpl = spec.get("template") or {}
    return [tpl["spec"]] if tpl.get("spec") else []


def swap_storage(objs: list[dict], exporter_containers: frozenset[str] = frozenset({"dcgm-exporter", "node-exporter"})
                 ) -> list[dict]:
    """Copies of ``objs`` whose persistentVolumeClaim/hostPath volumes are emptyDir volumes.

    Kept: volumes mounted at /dev/shm and volumes mounted only by exporter sidecars (their
    host mounts of /sys and /proc). The inputs are not modified.
    """
    out = copy.deepcopy(objs)
    for obj in out:
        for pod in _pod_specs(obj):
            containers = [*(pod.get("initContainers") or []), *(pod.get("containers") or [])]
            keep = set()
            users: dict[str, set[str]] = {}
            for c in containers:
                for m in c.get("volumeMounts") or []:
                    users.setdefault(m["name"], set()).add(c["name"])
                    if m.get("mountPath") == "/dev/shm":
                        keep.add(m["name"])
            keep |= {v for v, who in users.items() if who and who <= exporter_containers}
            for i, vol in enumerate(pod.get("volumes") or []):
                if vol["name"] in keep or not ({"persistentVolumeClaim", "hostPath"} & set(vol)):
                    continue
                pod["volumes"][i] = {"name": vol["name"], "emptyDir": {}}
    return out


# -- the test Job -----------------------------------------------------------------------

SCRIPT = r'''
import json, os, sys, time, urllib.error, urllib.request

BASE = os.environ["MANIFESTO_E2E_URL"].rstrip("/")
LIMIT = float(os.environ["MANIFESTO_E2E_TIMEOUT"])
DEADLINE = time.monotonic() + LIMIT


def call(path, body=None):
    last = "no attempt"
    while True:
        left = DEADLINE - time.monotonic()
        if left <= 0:
            sys.exit(f"e2e: FAIL: {BASE}{path} gave no usable answer within {LIMIT:g}s: {last}")
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(BASE + path, data=data, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=min(left, 120)) as resp:
                return json.load(resp)
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:500].decode(errors="replace")
            if exc.code < 500 and exc.code not in (404, 408, 429):
                sys.exit(f"e2e: FAIL: {path} answered HTTP {exc.code}: {detail}")
            last = f"HTTP {exc.code}: {detail}"
        except (urllib.error.URLError, OSError, ValueError) as exc:
            last = f"{type(exc).__name__}: {exc}"
        time.sleep(min(5.0, max(0.0, DEADLINE - time.monotonic())))


print(f"e2e: target {BASE}, deadline {LIMIT:g}s", flush=True)
models = call("/v1/models").get("data") or []
if not models:
    sys.exit("e2e: FAIL: /v1/models lists no model")
model = models[0]["id"]
print(f"e2e: /v1/models: {', '.join(m['id'] for m in models)}", flush=True)
answer = call("/v1/completions", {"model": model, "prompt": "The capital of France is",
                                  "max_tokens": 8, "temperature": 0})
choices = answer.get("choices") or []
if not choices or "text" not in choices[0]:
    sys.exit(f"e2e: FAIL: /v1/completions returned no choices: {json.dumps(answer)[:500]}")
print(f"e2e: /v1/completions ({model}): {choices[0]['text']!r}", flush=True)
print("e2e: PASS", flush=True)  # PASS_LINE
'''.lstrip()


def target_url(plan) -> str:
    """The router Service (standalone), the Gateway, or the model's serving Service."""
    from manifesto.resolve import names
    from manifesto.render.k8s.model import serving_service_name

    ns = plan.namespace
    if plan.routing is not None:
        if plan.routing.frontend == "gateway":
            # Gateway controllers that provision an in-cluster proxy (Istio among them) name
            # its Service <gateway>-<class>.
            host = f"{names.gateway(plan.instance)}-{plan.gateway_class}"
        else:
            host = names.epp(plan.instance)
        return f"http://{host}.{ns}.svc:80"
    role = next((r for r in plan.roles if r.name == "decode"), plan.roles[0])
    return f"http://{serving_service_name(plan, role)}.{ns}.svc:{role.layout.public_ports[0]}"


def e2e_job(plan, image: str, timeout: float) -> dict:
    """An unprivileged, CPU-only batch/v1 Job that runs :data:`SCRIPT` against :func:`target_url`."""
    labels = {**{k: v for k, v in plan.labels.items() if not k.startswith("kueue.x-k8s.io/")},
              COMPONENT_LABEL: COMPONENT}
    pod_security: dict = {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
    if plan.platform != "openshift":  # OpenShift's restricted SCC assigns the UID itself
        pod_security.update(runAsUser=65534, runAsGroup=65534)
    pod: dict = {
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "securityContext": pod_security,
        "containers": [{
            "name": "e2e",
            "image": image,
            "command": ["python", "-B", "-u", "-c", SCRIPT],
            "env": [{"name": "MANIFESTO_E2E_URL", "value": target_url(plan)},
                    {"name": "MANIFESTO_E2E_TIMEOUT", "value": f"{timeout:g}"}],
            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"},
                          "limits": {"cpu": "500m", "memory": "256Mi"}},
            "securityContext": {"allowPrivilegeEscalation": False, "privileged": False,
                                "readOnlyRootFilesystem": True, "runAsNonRoot": True,
                                "capabilities": {"drop": ["ALL"]},
                                "seccompProfile": {"type": "RuntimeDefault"}},
        }],
    }
    if plan.placement.image_pull_secrets:
        pod["imagePullSecrets"] = [{"name": n} for n in plan.placement.image_pull_secrets]
    if plan.placement.image_pull_policy:
        pod["containers"][0]["imagePullPolicy"] = plan.placement.image_pull_policy
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": job_name(plan), "namespace": plan.namespace, "labels": labels},
        "spec": {
            "backoffLimit": 0,
            # --timeout bounds the whole Job: scheduling and the image pull count against it.
            "activeDeadlineSeconds": max(1, math.ceil(timeout)),
            "template": {"metadata": {"labels": labels}, "spec": pod},
        },
    }


# -- cluster steps ----------------------------------------------------------------------

def namespace_manifest(name: str, plan) -> str:
    labels = {MANAGED_BY_LABEL: MANAGED_BY, COMPONENT_LABEL: COMPONENT,
              INSTANCE_LABEL: plan.instance}
    owner = plan.labels.get(OWNER_LABEL)
    if owner:
        labels[OWNER_LABEL] = owner
    return json.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}})


def create_namespace(kube: Kube, plan) -> None:
    """``kubectl create`` refuses an existing namespace, so an existing one is never reused or deleted."""
    name = kube.namespace
    result = run(kube.write("create", "-f", "-", stdin=namespace_manifest(name, plan), namespaced=False, check=False))
    if not result.ok:
        low = result.stderr.lower()
        if "alreadyexists" in low.replace(" ", "") or "already exists" in low:
            raise OpsError(f"namespace {name} already exists; test e2e needs a fresh namespace "
                           "(pass another --namespace or omit it)")
        last = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else f"exit {result.returncode}"
        raise OpsError(f"could not create namespace {name}: {last}")
    _say(f"created namespace {name}")


def delete_namespace(kube: Kube) -> None:
    result = run(kube.write("delete", "namespace", kube.namespace, "--ignore-not-found", "--wait=false",
                            namespaced=False, check=False))
    if result.ok:
        _say(f"deleting namespace {kube.namespace}")
    else:
        last = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else f"exit {result.returncode}"
        _say(f"could not delete namespace {kube.namespace} ({last}); delete it with "
             f"`kubectl delete namespace {kube.namespace}`")


def _job_state(job: dict) -> tuple[str | None, str]:
    for cond in conditions(job):
        if cond.get("status") != "True":
            continue
        if cond.get("type") in ("Complete", "SuccessCriteriaMet"):
            return "complete", ""
        if cond.get("type") in ("Failed", "FailureTarget"):
            return "failed", str(cond.get("reason") or cond.get("message") or "Failed")
    return None, ""


def wait_job(kube: Kube, name: str, timeout: float, interval: float = 5.0, clock=None, sleep=None) -> tuple[bool, str]:
    """(succeeded, why) once the Job completes or fails, or ``timeout`` passes."""
    import time

    clock = clock or time.monotonic
    sleep = sleep or time.sleep
    deadline = clock() + timeout
    while True:
        try:
            result = run(kube.read("get", "jobs.batch", name, "-o", "json", check=False,
                                   deadline=time.monotonic() + max(POLL_FLOOR, deadline - clock())))
            state, why = _job_state(result.json()) if result.ok else (None, "")
        except OpsError as exc:
            if clock() < deadline:
                raise
            return False, f"not finished after {timeout:g}s (the last poll did not finish: {exc.message})"
        if state == "complete":
            return True, ""
        if state == "failed":
            return False, why
        if clock() >= deadline:
            return False, f"not finished after {timeout:g}s"
        sleep(min(interval, max(0.0, deadline - clock())))


#: The last line SCRIPT prints, once a completion came back.
PASS_LINE = "e2e: PASS"


def job_logs(kube: Kube, name: str) -> str:
    """Show the Job's log (not under -q) and return it ("" when it cannot be read)."""
    from manifesto.errors import quiet

    result = run(kube.read("logs", f"job/{name}", "--all-containers", check=False, retries=1))
    if not quiet():  # the probe's account of what it asked and got: -q leaves it to the exit code
        sys.stdout.write(printable(result.stdout, keep="\n\t"))  # the cluster's text, escaped
        sys.stdout.flush()
    if not result.ok:
        _say(f"could not read the logs of Job {name}")
        return ""
    return result.stdout


class Waits(msgspec.Struct, frozen=True, kw_only=True):
    """How long the lifecycle waits for each step, in seconds."""

    job: float  # for the test Job to finish
    ready: float  # for the instance to become ready
    interval: float = 5.0  # between two polls
    gateway: float | None = None  # for the Gateway frontend (None: wait_ready's default)


def run_e2e(kube: Kube, plan, objs: list[dict], env: dict[str, str], *, image: str, waits: Waits,
            keep_namespace: bool = False) -> int:
    """The whole lifecycle in ``kube.namespace``; the namespace is deleted at the end unless kept."""
    from manifesto.ops.deploy import deploy
    from manifesto.ops.lifecycle import wait_ready

    if not env.get("HF_TOKEN", "").strip():
        raise OpsError("HF_TOKEN is not set; set it in the environment or .env (test e2e creates hf-secret "
                       "in its namespace)")
    create_namespace(kube, plan)
    try:
        deploy(kube, plan, objs, env)
        wait_ready(kube, plan, waits.ready, waits.interval, objects=objs, frontend_timeout=waits.gateway)
        job = e2e_job(plan, image, waits.job)
        name = job["metadata"]["name"]
        run(kube.write("create", "-f", "-", stdin=json.dumps(job)))
        _say(f"Job {name} sends /v1/models and /v1/completions to {target_url(plan)}")
        ok, why = wait_job(kube, name, waits.job, waits.interval)
        log = job_logs(kube, name)
        if not ok:
            raise OpsError(f"e2e Job {name} in namespace {kube.namespace} failed: {why}")
        if PASS_LINE in log.splitlines():
            _say(f"e2e passed: {plan.instance} served a completion in namespace {kube.namespace}")
        else:  # the Job succeeded, but nothing says its probe ran (a stand-in cluster runs no container)
            _say(f"e2e Job {name} completed in namespace {kube.namespace}, but its log has no `{PASS_LINE}` line: "
                 "no completion is known to have been served")
        return 0
    finally:
        if keep_namespace:
            _say(f"keeping namespace {kube.namespace}; delete it with `kubectl delete namespace {kube.namespace}`")
        else:
            delete_namespace(kube)
