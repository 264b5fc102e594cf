"""Containers that run beside vLLM in model pods: the P/D routing proxy and exporters."""

from __future__ import annotations

from manifesto.render.k8s.common import meta, sized
from manifesto.render.pd_sidecar import pd_sidecar_args

__all__ = ["pd_proxy", "exporter_containers", "exporter_volumes", "dcgm_configmap", "DCGM_COUNTERS"]

DCGM_COUNTERS = """\
DCGM_FI_DEV_GPU_UTIL, gauge, GPU utilisation (%).
DCGM_FI_DEV_FB_USED, gauge, Framebuffer memory used (MiB).
DCGM_FI_DEV_FB_FREE, gauge, Framebuffer memory free (MiB).
DCGM_FI_PROF_NVLINK_TX_BYTES, gauge, NVLink bytes transmitted.
DCGM_FI_PROF_NVLINK_RX_BYTES, gauge, NVLink bytes received.
DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, gauge, Ratio of cycles the tensor pipe is active.
DCGM_FI_DEV_GPU_TEMP, gauge, GPU temperature (C).
DCGM_FI_DEV_POWER_USAGE, gauge, Power draw (W).
DCGM_FI_DEV_XID_ERRORS, gauge, Value of the last XID error.
DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL, counter, NVLink bandwidth counters, all lanes.
DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL, counter, NVLink flow-control CRC errors.
DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL, counter, NVLink data CRC errors.
DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL, counter, NVLink retries.
DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL, counter, NVLink recovery errors.
DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS, counter, Rows remapped for uncorrectable errors.
DCGM_FI_DEV_ROW_REMAP_FAILURE, gauge, Whether row remapping has failed.
"""
_DCGM_PATH = "/etc/dcgm-exporter/custom-counters.csv"


def pd_proxy(plan, role) -> dict:
    """The llm-d P/D sidecar as a native sidecar (init container that keeps running)."""
    return {
        "name": "routing-proxy",
        "image": plan.images["llm_d.routing_sidecar"],
        "restartPolicy": "Always",
        "args": pd_sidecar_args(plan, role),
        "ports": [{"name": f"rank{i}", "containerPort": p, "protocol": "TCP"}
                  for i, p in enumerate(role.layout.public_ports)],
        "resources": sized(plan.routing_sizing.routing_sidecar),
    }


def exporter_containers(plan) -> list[dict]:
    out = []
    if "dcgm-exporter" in plan.sidecars:
        out.append({
            "name": "dcgm-exporter",
            "image": plan.images["sidecars.dcgm_exporter"],
            "args": ["-f", _DCGM_PATH],
            "env": [
                {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"},
                {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "utility"},
                {"name": "DCGM_EXPORTER_KUBERNETES_GPU_ID_TYPE", "value": "uid"},
            ],
            "ports": [{"name": "dcgm", "containerPort": 9400, "protocol": "TCP"}],
            "resources": {"requests": {"cpu": "250m", "memory": "512Mi"}, "limits": {"memory": "512Mi"}},
            "securityContext": {"allowPrivilegeEscalation": False},
            "volumeMounts": [{"name": "dcgm-metrics", "mountPath": _DCGM_PATH, "subPath": "custom-counters.csv",
                              "readOnly": True}],
        })
    if "node-exporter" in plan.sidecars and plan.platform != "openshift":
        out.append({
            "name": "node-exporter",
            "image": plan.images["sidecars.node_exporter"],
            "args": ["--collector.disable-defaults", "--collector.infiniband", "--collector.netstat",
                     "--collector.pressure", "--collector.schedstat", "--collector.cpu",
                     "--path.sysfs=/host/sys", "--path.procfs=/host/proc"],
            "ports": [{"name": "node-metrics", "containerPort": 9100, "protocol": "TCP"}],
            "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "64Mi"}},
            "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True},
            "volumeMounts": [{"name": "host-sys", "mountPath": "/host/sys", "readOnly": True},
                             {"name": "host-proc", "mountPath": "/host/proc", "readOnly": True}],
        })
    return out


def exporter_volumes(plan) -> list[dict]:
    out = []
    if "dcgm-exporter" in plan.sidecars:
        out.append({"name": "dcgm-metrics", "configMap": {"name": f"{plan.instance}-dcgm-metrics"}})
    if "node-exporter" in plan.sidecars and plan.platform != "openshift":
        out.append({"name": "host-sys", "hostPath": {"path": "/sys", "type": "Directory"}})
        out.append({"name": "host-proc", "hostPath": {"path": "/proc", "type": "Directory"}})
    return out


def dcgm_configmap(plan) -> dict | None:
    if "dcgm-exporter" not in plan.sidecars:
        return None
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta(f"{plan.instance}-dcgm-metrics", plan.namespace, plan.labels),
        "data": {"custom-counters.csv": DCGM_COUNTERS},
    }
