"""`status` takes a field the artifact leaves out at the API server's default as no drift
(ops/targets.py, SERVER_DEFAULTS). For a custom resource the defaults are the CRD's own
(`default:` in its schema): every one of them, for each kind the table knows, must be in
the table with the same value, read from the CRDs the schema kit pins. The real API showed
the cost of a gap (tests/cluster/test_idle_controller_live.py): an InferencePool read as
drifted right after apply, for `spec.appProtocol: http` and `spec.endpointPickerRef.group:
""`, and a LeaderWorkerSet for `rollingUpdateConfiguration.partition: 0`."""

from __future__ import annotations

import pytest
import yaml

import kit
from manifesto.ops.targets import SERVER_DEFAULTS

#: Subtrees that hold a pod template: a pod spec has no CRD defaults (the table keeps the
#: API server's pod defaults elsewhere).
TEMPLATES = ("leaderTemplate", "workerTemplate")


def _defaults(schema: dict, path: tuple = ()) -> list[tuple[str, object]]:
    out = []
    if not isinstance(schema, dict) or any(p in TEMPLATES for p in path):
        return out
    if "default" in schema and path:
        out.append((".".join(path), schema["default"]))
    for key, sub in (schema.get("properties") or {}).items():
        out += _defaults(sub, (*path, key))
    if isinstance(schema.get("items"), dict):
        out += _defaults(schema["items"], (*path, "*"))
    return out


def _crd_defaults() -> dict[str, list[tuple[str, object]]]:
    found: dict[str, list] = {}
    for path in sorted(kit.require_shared("k8s-schemas/crds").glob("*.yaml")):
        for doc in yaml.load_all(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                continue
            kind = doc["spec"]["names"]["kind"]
            group = doc["spec"]["group"]
            if kind not in SERVER_DEFAULTS or group == "inference.networking.x-k8s.io":  # the alpha pool: not rendered
                continue
            for version in doc["spec"]["versions"]:
                if version.get("storage"):
                    schema = version["schema"]["openAPIV3Schema"]
                    found[kind] = [(p, v) for p, v in _defaults(schema) if not p.startswith("status")]
    return found


CRDS = _crd_defaults() if kit.shared_dir().joinpath("k8s-schemas/crds").is_dir() else {}


def test_the_kinds_with_crds_are_found():
    kit.require_shared("k8s-schemas/crds")
    assert {"LeaderWorkerSet", "DisaggregatedSet", "InferencePool"} <= set(CRDS)


@pytest.mark.parametrize("kind", sorted(CRDS))
def test_every_crd_default_is_a_server_default(kind):
    table = SERVER_DEFAULTS[kind]

    def covered(path: str, value) -> bool:  # a mapping: as the table has it, or field by field
        if table.get(path, object()) == value:
            return True
        return isinstance(value, dict) and bool(value) and all(covered(f"{path}.{k}", v) for k, v in value.items())

    missing = [(p, v) for p, v in CRDS[kind] if not covered(p, v)]
    assert not missing, f"{kind}: CRD defaults not in ops/targets.py SERVER_DEFAULTS: {missing}"
