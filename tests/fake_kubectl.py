#!/usr/bin/env python3
"""A scripted stand-in for kubectl, for tests of the Kubernetes workflow commands.

State lives in ``$FAKE_KUBE_DIR/state.json`` ({"objects": [...], "config": {...}});
every call appends {"argv", "stdin"} to ``$FAKE_KUBE_DIR/calls.jsonl``.

config:
  missing_apis: API groups the "cluster" does not serve, e.g. ["leaderworkerset.x-k8s.io"]
  fail: {"get pods": {"times": 2, "stderr": "...", "rc": 1}}  keyed by "verb resource" or "verb"
  sleep: {"get pods": 2.0}                                      seconds before answering; the most
                                                                calls asleep at once is kept in
                                                                $FAKE_KUBE_DIR/overlap.json
  hang: ["apply", "get pods"]      never answer; a child process holds stdout open too
  stdout: {"get pods": "not json"}  print this instead of answering (exit 0)
  stdout_hex: {"get pods": "ff00"}  print these raw bytes instead of answering (exit 0)
  current_context: "name"          what `config current-context` prints
Supports: api-versions, config current-context, get, apply -f FILE|-, delete REF.../-l, diff -f FILE|-.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time

DIR = os.environ["FAKE_KUBE_DIR"]
STATE = os.path.join(DIR, "state.json")

# resource or kind (lower case) -> (Kind, API group, namespaced)
KINDS = {
    "pods": ("Pod", "", True), "services": ("Service", "", True), "configmaps": ("ConfigMap", "", True),
    "serviceaccounts": ("ServiceAccount", "", True), "secrets": ("Secret", "", True),
    "persistentvolumeclaims": ("PersistentVolumeClaim", "", True),
    "deployments.apps": ("Deployment", "apps", True), "jobs.batch": ("Job", "batch", True),
    "roles.rbac.authorization.k8s.io": ("Role", "rbac.authorization.k8s.io", True),
    "rolebindings.rbac.authorization.k8s.io": ("RoleBinding", "rbac.authorization.k8s.io", True),
    "leaderworkersets.leaderworkerset.x-k8s.io": ("LeaderWorkerSet", "leaderworkerset.x-k8s.io", True),
    "inferencepools.inference.networking.k8s.io": ("InferencePool", "inference.networking.k8s.io", True),
    "gateways.gateway.networking.k8s.io": ("Gateway", "gateway.networking.k8s.io", True),
    "httproutes.gateway.networking.k8s.io": ("HTTPRoute", "gateway.networking.k8s.io", True),
    "destinationrules.networking.istio.io": ("DestinationRule", "networking.istio.io", True),
    "resourceclaimtemplates.resource.k8s.io": ("ResourceClaimTemplate", "resource.k8s.io", True),
    "deviceclasses.resource.k8s.io": ("DeviceClass", "resource.k8s.io", False),
    "localqueues.kueue.x-k8s.io": ("LocalQueue", "kueue.x-k8s.io", True),
    "clusterqueues.kueue.x-k8s.io": ("ClusterQueue", "kueue.x-k8s.io", False),
}
BY_KIND = {k: (r, g, n) for r, (k, g, n) in KINDS.items()}
VERSIONS = ["v1", "apps/v1", "batch/v1", "rbac.authorization.k8s.io/v1", "leaderworkerset.x-k8s.io/v1",
            "inference.networking.k8s.io/v1", "gateway.networking.k8s.io/v1", "resource.k8s.io/v1",
            "kueue.x-k8s.io/v1beta1", "networking.istio.io/v1"]


def load() -> dict:
    try:
        with open(STATE) as f:
            return json.load(f)
    except FileNotFoundError:
        return {"objects": [], "config": {}}


def save(state: dict) -> None:
    tmp = STATE + f".{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(state, f)
    os.replace(tmp, STATE)


def die(msg: str, rc: int = 1):
    print(msg, file=sys.stderr)
    sys.exit(rc)


def parse(argv):
    flags, pos = {}, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-n", "--namespace", "--context", "-l", "-o", "-f", "--for", "--timeout"):
            flags[a.lstrip("-")] = argv[i + 1]
            i += 2
            continue
        if a.startswith("--"):
            k, _, v = a[2:].partition("=")
            flags[k] = v or True
        else:
            pos.append(a)
        i += 1
    flags.setdefault("namespace", flags.get("n"))
    return flags, pos


def resolve(res: str, missing):
    info = KINDS.get(res.lower())
    if info is None or info[1] in missing:
        die(f'error: the server doesn\'t have a resource type "{res.split(".")[0]}"')
    return info


def matches(obj, sel):
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for part in filter(None, (sel or "").split(",")):
        k, _, v = part.partition("=")
        if labels.get(k) != v:
            return False
    return True


def ns_of(obj):
    return (obj.get("metadata") or {}).get("namespace") or ""


def same(a, kind, ns, name, namespaced):
    return a["kind"] == kind and a["metadata"]["name"] == name and (not namespaced or ns_of(a) == ns)


def docs(flags, stdin):
    import yaml

    text = stdin if flags.get("f") == "-" else open(flags["f"]).read()
    out = []
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for d in yaml.load_all(text, Loader=loader):
        if d:
            out.extend(d.get("items") if d.get("kind") == "List" else [d])
    return out


def hang():
    """A hung kubectl: a grandchild keeps our stdout open, and we never return."""
    import subprocess

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    with open(os.path.join(DIR, "hung.pids"), "a") as f:
        f.write(f"{os.getpid()} {child.pid}\n")
    time.sleep(3600)


def _track_overlap(step: int) -> None:
    """Count the calls asleep right now and remember the most there ever were."""
    path = os.path.join(DIR, "overlap.json")
    with open(os.path.join(DIR, "overlap.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(path) as f:
                now, most = json.load(f)
        except FileNotFoundError:
            now, most = 0, 0
        now += step
        with open(path, "w") as f:
            json.dump([now, max(most, now)], f)


def main():
    argv = sys.argv[1:]
    stdin = None if sys.stdin.isatty() else sys.stdin.read()
    with open(os.path.join(DIR, "calls.jsonl"), "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.write(json.dumps({"argv": argv, "stdin": stdin or None}) + "\n")
    flags, pos = parse(argv)
    verb = pos[0] if pos else ""
    key = f"{verb} {pos[1]}" if len(pos) > 1 else verb
    config = load().get("config", {})
    for k in (key, verb):
        if k in (config.get("hang") or ()):
            hang()
        if k in (config.get("stdout") or {}):
            sys.stdout.write(config["stdout"][k])
            sys.exit(0)
        if k in (config.get("stdout_hex") or {}):
            sys.stdout.buffer.write(bytes.fromhex(config["stdout_hex"][k]))
            sys.exit(0)
    for k in (key, verb):
        if k in (config.get("sleep") or {}):
            _track_overlap(+1)
            time.sleep(config["sleep"][k])
            _track_overlap(-1)
            break
    with open(os.path.join(DIR, "state.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        state = load()
        config = state.get("config", {})
        for k in (key, verb):
            fault = (config.get("fail") or {}).get(k)
            if fault and fault.get("times", 0) != 0:
                fault["times"] -= 1
                save(state)
                die(fault.get("stderr", "Unable to connect to the server: dial tcp 10.0.0.1:6443: i/o timeout"),
                    fault.get("rc", 1))
        rc = run(verb, pos, flags, stdin, state, set(config.get("missing_apis") or ()))
        save(state)
    sys.exit(rc)


def run(verb, pos, flags, stdin, state, missing) -> int:
    ns = flags.get("namespace") or "default"
    objs = state["objects"]
    if verb == "config" and pos[1:2] == ["current-context"]:
        current = state.get("config", {}).get("current_context")
        if not current:
            die("error: current-context is not set")
        print(current)
        return 0
    if verb == "api-versions":
        print("\n".join(v for v in VERSIONS if v.split("/")[0] not in missing))
        return 0
    if verb == "get":
        kind, group, namespaced = resolve(pos[1], missing)
        found = [o for o in objs if o["kind"] == kind and (not namespaced or ns_of(o) == ns)
                 and matches(o, flags.get("l"))]
        if len(pos) > 2:
            found = [o for o in found if o["metadata"]["name"] == pos[2]]
            if not found:
                die(f'Error from server (NotFound): {pos[1]} "{pos[2]}" not found')
            print(json.dumps(found[0]))
            return 0
        print(json.dumps({"apiVersion": "v1", "kind": "List", "items": found}))
        return 0
    if verb == "apply":
        for d in docs(flags, stdin):
            group = d["apiVersion"].rpartition("/")[0]
            if group in missing:
                die(f'error: resource mapping not found for name: "{d["metadata"]["name"]}": '
                    f'no matches for kind "{d["kind"]}" in version "{d["apiVersion"]}"')
            namespaced = BY_KIND.get(d["kind"], ("", "", True))[2]
            d.setdefault("metadata", {})
            if namespaced:
                d["metadata"]["namespace"] = d["metadata"].get("namespace") or ns
            old = [o for o in objs if same(o, d["kind"], ns_of(d), d["metadata"]["name"], namespaced)]
            for o in old:
                objs.remove(o)
            objs.append(d)
            print(f"{d['kind'].lower()}/{d['metadata']['name']} {'configured' if old else 'created'}")
        return 0
    if verb == "delete":
        targets = []
        if "l" in flags:
            kind, _, namespaced = resolve(pos[1], missing)
            targets = [o for o in objs if o["kind"] == kind and (not namespaced or ns_of(o) == ns)
                       and matches(o, flags["l"])]
        else:
            for ref in pos[1:]:
                res, _, name = ref.partition("/")
                kind, _, namespaced = resolve(res, missing)
                hit = [o for o in objs if same(o, kind, ns, name, namespaced)]
                if not hit and "ignore-not-found" not in flags:
                    die(f'Error from server (NotFound): {res} "{name}" not found')
                targets += hit
        for o in targets:
            objs.remove(o)
            print(f"{o['kind'].lower()} \"{o['metadata']['name']}\" deleted")
        return 0
    if verb == "diff":
        rc = 0
        for d in docs(flags, stdin):
            namespaced = BY_KIND.get(d["kind"], ("", "", True))[2]
            old = [o for o in objs if same(o, d["kind"], d["metadata"].get("namespace") or ns,
                                           d["metadata"]["name"], namespaced)]
            if not old or {k: v for k, v in old[0].items() if k != "status"} != d:
                print(f"diff -u -N live/{d['kind']}.{d['metadata']['name']} merged/{d['kind']}.{d['metadata']['name']}")
                rc = 1
        return rc
    die(f"fake kubectl: unsupported command {' '.join(pos)}", 2)


if __name__ == "__main__":
    main()
