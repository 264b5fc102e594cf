"""``render monitoring``: objects valid against the kit, monitors that select what the manifests
run, dashboards that are Grafana JSON, and every dashboard and rule query answered by a real
Prometheus scraping a fake exporter of the pinned releases' metric names."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request

import pytest
import yaml

import kit
from kit import cli_in_process

SPECS = ("qwen/qwen3-0.6b", "qwen/qwen3-0.6b-pd", "qwen/aggregated", "deepseek-v4/1P-EP8-1D-EP8")
COMMON = ("--cluster", "example-gb200", "--user", "u", "--namespace", "demo")


def _render(*specs: str, cluster: str = "example-gb200") -> str:
    rc, out, err = cli_in_process("render", "monitoring", *specs, "--cluster", cluster, "--user", "u",
                                  "--namespace", "demo")
    assert (rc, err) == (0, ""), err
    return out


def _docs(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(text) if d]


def _by_kind(docs, kind):
    return [d for d in docs if d["kind"] == kind]


# --------------------------------------------------------------------------- objects


@pytest.mark.integration
def test_objects_validate_against_the_kit():
    kit.validate_manifests(_render(*SPECS))


@pytest.mark.integration
def test_gateway_frontend_monitor_validates(tmp_path):
    spec = tmp_path / "gw.yaml"
    spec.write_text(f"extends: {kit.REPO_ROOT / 'models/qwen/qwen3-0.6b-pd.yaml'}\nrouting:\n  frontend: gateway\n")
    text = _render(str(spec))
    kit.validate_manifests(text)
    gw = [m for m in _by_kind(_docs(text), "PodMonitor") if m["metadata"]["name"].endswith("-gateway")]
    assert [m["spec"]["selector"]["matchLabels"] for m in gw] == [
        {"gateway.networking.k8s.io/gateway-name": "qwen3-0-6b-pd-gateway"}]
    assert gw[0]["spec"]["podMetricsEndpoints"][0]["port"] == "http-envoy-prom"


def _pods(manifest: list[dict]) -> list[tuple[dict, list[str]]]:
    """(labels, container port names) of every pod template of a manifest."""
    out = []
    for obj in manifest:
        spec = obj.get("spec") or {}
        templates = []
        if obj["kind"] == "Deployment":
            templates.append(spec["template"])
        elif obj["kind"] == "LeaderWorkerSet":
            lwt = spec["leaderWorkerTemplate"]
            templates += [t for t in (lwt.get("leaderTemplate"), lwt["workerTemplate"]) if t]
        for t in templates:
            ports = [p["name"] for c in t["spec"]["containers"] + t["spec"].get("initContainers", [])
                     for p in c.get("ports", [])]
            out.append((t["metadata"]["labels"], ports))
    return out


@pytest.mark.parametrize("spec", SPECS)
def test_every_monitor_selects_a_pod_with_its_port(spec):
    """Each endpoint of each PodMonitor names a port that a pod its selector matches declares."""
    from manifesto.cluster import load_cluster
    from manifesto.render import render_kubernetes
    from manifesto.spec import load_spec

    cluster = load_cluster("example-gb200")
    manifest = render_kubernetes(load_spec(spec, cluster), user="u", namespace="demo")
    pods = _pods(manifest)
    monitors = _by_kind(_docs(_render(spec)), "PodMonitor")
    assert monitors
    for mon in monitors:
        sel = mon["spec"]["selector"]["matchLabels"]
        if "gateway.networking.k8s.io/gateway-name" in sel:
            continue  # Istio creates the gateway's pods
        matched = [ports for labels, ports in pods if sel.items() <= labels.items()]
        assert matched, mon["metadata"]["name"]
        for ep in mon["spec"]["podMetricsEndpoints"]:
            assert any(ep["port"] in ports for ports in matched), (mon["metadata"]["name"], ep["port"])


def test_headless_workers_are_not_scraped():
    """A two-node internal-DP rank serves HTTP on node 0 only: its monitor keeps worker index 0."""
    from manifesto.render.monitoring import pod_monitors
    from kit import plan_of

    plan, _, _ = plan_of(kit.REPO_ROOT / "tests/golden/tp2-pp2-two-nodes-lws/model.yaml",
                         kit.REPO_ROOT / "tests/golden/tp2-pp2-two-nodes-lws/cluster.yaml")
    (mon,) = [m for m in pod_monitors([plan]) if "-vllm-" in m["metadata"]["name"]]
    keep = mon["spec"]["podMetricsEndpoints"][0]["relabelings"][0]
    assert keep == {"sourceLabels": ["__meta_kubernetes_pod_label_leaderworkerset_sigs_k8s_io_worker_index"],
                    "action": "keep", "regex": "0"}


def test_slurm_cluster_is_refused():
    rc, out, err = cli_in_process("render", "monitoring", "qwen/qwen3-0.6b", "--cluster", "example-slurm",
                                  "--user", "u", "--namespace", "demo")
    assert (rc, out) == (1, "")
    assert err == "error: cluster 'example-slurm' is a Slurm cluster; monitoring objects are Kubernetes-only\n"


def test_scrape_config_mirrors_the_monitors():
    from manifesto.render.monitoring import scrape_config

    docs = _docs(_render(*SPECS))
    monitors = _by_kind(docs, "PodMonitor")
    (cm,) = [d for d in docs if d["metadata"]["name"] == "manifesto-monitoring-prometheus" and d["kind"] == "ConfigMap"]
    config = yaml.safe_load(cm["data"]["prometheus.yml"])
    assert config == scrape_config(monitors)
    assert len(config["scrape_configs"]) == sum(len(m["spec"]["podMetricsEndpoints"]) for m in monitors)
    for job in config["scrape_configs"]:
        assert job["kubernetes_sd_configs"] == [{"role": "pod", "namespaces": {"names": ["demo"]}}]


# --------------------------------------------------------------------------- metric names


def test_dashboards_and_rules_use_only_generated_metric_names():
    from manifesto.render import metric_names
    from manifesto.render.monitoring.queries import dashboards, rules

    known = set(metric_names.VLLM) | set(metric_names.EPP) | set(metric_names.DCGM)
    text = json.dumps(dashboards()) + json.dumps(rules())
    used = set(re.findall(r"\b(vllm:[a-z0-9_:]+|llm_d_epp_[a-z0-9_]+|DCGM_FI_[A-Z0-9_]+)", text))
    stripped = {re.sub(r"(_bucket|_total)$", "", n) if n not in known else n for n in used}
    assert stripped <= known, sorted(stripped - known)


def test_dashboard_dcgm_fields_are_exported_by_the_sidecar():
    """The GPU dashboard reads only fields the rendered dcgm-exporter sidecar is told to export."""
    from manifesto.render.k8s.sidecars import DCGM_COUNTERS
    from manifesto.render.monitoring.queries import used_metrics

    exported = {line.split(",")[0] for line in DCGM_COUNTERS.splitlines()}
    assert {m for m in used_metrics() if m.startswith("DCGM_")} <= exported


def test_unknown_metric_is_refused():
    from manifesto.render.monitoring.queries import metric

    with pytest.raises(KeyError):
        metric("vllm:no_such_metric")
    with pytest.raises(ValueError, match="vllm:kv_cache_usage_perc is a gauge, not a histogram"):
        metric("vllm:kv_cache_usage_perc", "_bucket")


# --------------------------------------------------------------------------- Grafana JSON

_BUILTIN_VARS = {"__rate_interval", "__interval", "__range"}


def check_grafana_dashboard(board: dict) -> None:
    """The structure Grafana's dashboard JSON model requires of a provisioned dashboard."""
    assert isinstance(board["uid"], str) and 0 < len(board["uid"]) <= 40
    assert isinstance(board["title"], str) and board["title"]
    assert isinstance(board["schemaVersion"], int)
    variables = {v["name"] for v in board["templating"]["list"]}
    ids = [p["id"] for p in board["panels"]]
    assert len(ids) == len(set(ids)) and all(isinstance(i, int) for i in ids)
    boxes = set()
    for p in board["panels"]:
        assert p["type"] in ("timeseries", "stat", "gauge", "table")
        g = p["gridPos"]
        assert all(isinstance(g[k], int) for k in "hwxy") and g["x"] + g["w"] <= 24
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                assert (x, y) not in boxes, f"panel {p['id']} overlaps another"
                boxes.add((x, y))
        refs = [t["refId"] for t in p["targets"]]
        assert refs and len(refs) == len(set(refs))
        for t in p["targets"]:
            for var in re.findall(r"\$\{?(\w+)", t["expr"] + json.dumps(t["datasource"])):
                assert var in variables | _BUILTIN_VARS, var


def test_dashboards_are_grafana_json():
    docs = _docs(_render(*SPECS))
    (cm,) = [d for d in docs if d["metadata"]["name"] == "manifesto-monitoring-grafana-dashboards"]
    assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert sorted(cm["data"]) == ["manifesto-gpu.json", "manifesto-routing.json", "manifesto-serving.json"]
    for name, text in cm["data"].items():
        board = json.loads(text)
        assert f"{board['uid']}.json" == name
        check_grafana_dashboard(board)


def test_grafana_check_catches_an_undefined_variable():
    from manifesto.render.monitoring.queries import dashboards

    board = dashboards()["manifesto-serving"]
    board["panels"][0]["targets"][0]["expr"] += ' * on() group_left vector($missing)'
    with pytest.raises(AssertionError, match="missing"):
        check_grafana_dashboard(board)


# --------------------------------------------------------------------------- a real Prometheus


def _promtool() -> str:
    tool = shutil.which("promtool")
    if tool is None:
        kit.unavailable("promtool not installed (Debian package prometheus)")
    return tool


def _config_files(tmp_path) -> tuple:
    from manifesto.render.monitoring.queries import rules

    docs = _docs(_render(*SPECS))
    (cm,) = [d for d in docs if d["metadata"]["name"] == "manifesto-monitoring-prometheus" and d["kind"] == "ConfigMap"]
    rules_file = tmp_path / "manifesto.rules.yml"
    rules_file.write_text(cm["data"]["manifesto.rules.yml"])
    assert yaml.safe_load(rules_file.read_text()) == rules()
    config = yaml.safe_load(cm["data"]["prometheus.yml"])
    config["rule_files"] = [str(rules_file)]
    config_file = tmp_path / "prometheus.yml"
    config_file.write_text(yaml.safe_dump(config))
    return config_file, rules_file


@pytest.mark.integration
def test_promtool_checks_config_and_rules(tmp_path):
    tool = _promtool()
    config_file, rules_file = _config_files(tmp_path)
    out = subprocess.run([tool, "check", "rules", str(rules_file)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "SUCCESS: 12 rules found" in out.stdout + out.stderr
    # Debian builds Prometheus without Kubernetes service discovery, so the jobs are checked
    # with a static target in its place: every relabelling rule, regex and path is still parsed.
    config = yaml.safe_load(config_file.read_text())
    for job in config["scrape_configs"]:
        assert job.pop("kubernetes_sd_configs") == [{"role": "pod", "namespaces": {"names": ["demo"]}}]
        job["static_configs"] = [{"targets": ["127.0.0.1:9"]}]
    config_file.write_text(yaml.safe_dump(config))
    out = subprocess.run([tool, "check", "config", str(config_file)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"SUCCESS: {config_file} is valid prometheus config file syntax" in out.stdout + out.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _query(port: int, expr: str) -> list:
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=10) as resp:
        body = json.load(resp)
    assert body["status"] == "success", body
    return body["data"]["result"]


def _queries() -> list[tuple[str, str]]:
    from manifesto.render.monitoring.queries import dashboards, rules

    out = []
    for uid, board in dashboards().items():
        for p in board["panels"]:
            for t in p["targets"]:
                out.append((f"{uid}: {p['title']} {t['refId']}", t["expr"]))
        for v in board["templating"]["list"]:
            if v["type"] == "query":
                # label_values(m, l) is Grafana's; the series query behind it is m.
                out.append((f"{uid}: ${v['name']}", re.fullmatch(r"label_values\((.+), \w+\)", v["definition"])[1]))
    for group in rules()["groups"]:
        for r in group["rules"]:
            out.append((f"{group['name']}: {r.get('record') or r.get('alert')}", r["expr"]))
    return out


@pytest.mark.integration
def test_every_query_returns_data_from_a_real_prometheus(tmp_path):
    from fake_exporter import serve

    prometheus = shutil.which("prometheus")
    if prometheus is None:
        kit.unavailable("prometheus not installed (Debian package prometheus)")
    _, rules_file = _config_files(tmp_path)
    server, exporter_port = serve()
    dead = _free_port()  # nothing listens here: its target is down, so the TargetDown alert has data
    labels = {"manifesto_instance": "qwen", "manifesto_role": "decode", "manifesto_component": "vllm",
              "namespace": "demo", "pod": "qwen-0"}
    config = {"global": {"scrape_interval": "1s", "evaluation_interval": "1s"}, "rule_files": [str(rules_file)],
              "scrape_configs": [{"job_name": "fake", "static_configs": [
                  {"targets": [f"127.0.0.1:{exporter_port}"], "labels": labels},
                  {"targets": [f"127.0.0.1:{dead}"], "labels": {**labels, "pod": "qwen-1"}}]}]}
    (tmp_path / "prom.yml").write_text(yaml.safe_dump(config))
    port = _free_port()
    proc = subprocess.Popen([prometheus, f"--config.file={tmp_path / 'prom.yml'}",
                             f"--storage.tsdb.path={tmp_path / 'data'}", f"--web.listen-address=127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        pending = {name: expr.replace("$instance", ".+").replace("$__rate_interval", "10s")
                   for name, expr in _queries()}
        deadline = time.monotonic() + 90
        while pending and time.monotonic() < deadline:
            time.sleep(1)
            if proc.poll() is not None:
                pytest.fail("prometheus exited: " + proc.stderr.read()[-2000:])
            try:
                for name in [n for n, e in pending.items() if _query(port, e)]:
                    del pending[name]
            except OSError:
                continue  # not listening yet
        assert not pending, "queries without data: " + "\n".join(f"{n}: {e}" for n, e in pending.items())
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        server.shutdown()


def test_helm_values_use_the_stack_rbac_and_the_same_jobs():
    from manifesto.render.monitoring import scrape_config
    from manifesto.render.monitoring.queries import rules

    docs = _docs(_render(*SPECS))
    (cm,) = [d for d in docs if d["metadata"]["name"] == "manifesto-monitoring-helm-values"]
    prom = yaml.safe_load(cm["data"]["prometheus-values.yaml"])
    graf = yaml.safe_load(cm["data"]["grafana-values.yaml"])
    assert cm["data"]["prometheus-values.yaml"].startswith("# Values for prometheus-community/prometheus 29.27.0")
    assert prom["rbac"] == {"create": False} and graf["rbac"] == {"create": False}
    accounts = {d["metadata"]["name"] for d in _by_kind(docs, "ServiceAccount")}
    assert prom["serviceAccounts"]["server"]["name"] in accounts and graf["serviceAccount"]["name"] in accounts
    jobs = scrape_config(_by_kind(docs, "PodMonitor"), rule_file="/etc/config/manifesto.rules.yml")
    assert prom["serverFiles"]["prometheus.yml"] == {"rule_files": jobs["rule_files"],
                                                    "scrape_configs": jobs["scrape_configs"]}
    assert prom["serverFiles"]["manifesto.rules.yml"] == rules()
    assert prom["scrapeConfigs"] is None  # the chart's cluster-wide default jobs are removed
    # Grafana's datasource reaches the Service the chart creates under that override.
    (ds,) = [d for d in docs if d["metadata"]["name"] == "manifesto-monitoring-grafana-datasources"]
    url = yaml.safe_load(ds["data"]["manifesto.yaml"])["datasources"][0]["url"]
    assert url == f"http://{prom['server']['fullnameOverride']}.demo.svc:{prom['server']['service']['servicePort']}"
    (boards,) = [d for d in docs if d["metadata"]["name"] == "manifesto-monitoring-grafana-dashboards"]
    assert boards["metadata"]["labels"]["grafana_dashboard"] == graf["sidecar"]["dashboards"]["labelValue"]
    assert ds["metadata"]["labels"]["grafana_datasource"] == graf["sidecar"]["datasources"]["labelValue"]
