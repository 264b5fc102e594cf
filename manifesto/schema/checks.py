"""What the input schemas check, and the records their validated values are, without pydantic.

The pydantic models (``manifesto.schema.base``, ``cluster``, ``model``, ``routing``,
``workload``) say which field has which type and check; every check they run is a function
or a small callable object of this module, and every method or property a validated value
has comes from a mixin here. ``tools/gen_compiled_schema.py`` compiles the models into
``manifesto.schema.compiled``: their pydantic-core schemas with these callables and plain
:class:`Record` classes in place of the models, so loading an input needs this module and
``pydantic_core``, not pydantic's model machinery; a valid input not even ``pydantic_core``
(``manifesto.schema.validation``, ``manifesto.schema.quick``; issue 15: a cold ``render
manifest``).

Everything here must therefore be importable by name: module-level functions, or instances of
the callable classes below, which the generator writes as constructor calls (``repr``).
"""

from __future__ import annotations

import math
import re
from typing import Any

from manifesto.util import quantity, rules
from manifesto.errors import did_you_mean, printable, show_value

__all__ = ["FieldError", "Record", "Rule", "Each", "AtLeast", "make", "SIDECARS"]

#: The per-pod monitoring exporters a spec may ask for (``runtime.sidecars``).
SIDECARS = ("dcgm-exporter", "node-exporter")


class FieldError(ValueError):
    """A validator's error about a field *below* the value it validates.

    ``path`` (keys and list indices) is appended to pydantic's ``loc`` by the loader, so a
    model validator on ``Accelerators`` can point at ``accelerators.default`` itself rather
    than at the ``accelerators:`` line.
    """

    def __init__(self, path: tuple, message: str) -> None:
        super().__init__(message)
        self.path = tuple(path)


# -- validated values -----------------------------------------------------------------------

class Record:
    """A validated input object: its fields are attributes, and it cannot be changed.

    pydantic-core fills the slots below (the same ones a pydantic model has) when it builds
    one; :func:`make` builds the default of a field.
    """

    __slots__ = ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")

    def __setattr__(self, name: str, value: Any) -> None:
        raise TypeError(f"{type(self).__name__} is frozen: {name} cannot be set")

    def __delattr__(self, name: str) -> None:
        raise TypeError(f"{type(self).__name__} is frozen: {name} cannot be deleted")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash((type(self), *self.__dict__.values()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.__dict__.items())})"

    def __reduce__(self):
        return make, (type(self), dict(self.__dict__), set(self.__pydantic_fields_set__))

    @property
    def model_fields_set(self) -> set[str]:
        """The fields the input set (the others hold their defaults)."""
        return self.__pydantic_fields_set__

    def model_dump(self, exclude_none: bool = False) -> dict[str, Any]:
        """The fields as plain data, nested records included (as pydantic's ``model_dump``)."""
        return {k: _dump(v, exclude_none) for k, v in self.__dict__.items() if not (exclude_none and v is None)}


def _dump(value: Any, exclude_none: bool) -> Any:
    if isinstance(value, Record):
        return value.model_dump(exclude_none)
    if isinstance(value, (list, tuple)):
        return type(value)(_dump(v, exclude_none) for v in value)
    if isinstance(value, dict):
        return {k: _dump(v, exclude_none) for k, v in value.items()}
    return value


def make(cls: type, fields: dict[str, Any], fields_set: set | None = None):
    """A ``cls`` record holding ``fields`` (what pydantic-core does when it validates one)."""
    record = object.__new__(cls)
    setter = object.__setattr__
    setter(record, "__dict__", fields)
    setter(record, "__pydantic_fields_set__", set() if fields_set is None else fields_set)
    setter(record, "__pydantic_extra__", None)
    setter(record, "__pydantic_private__", None)
    return record


# -- callable checks (written by the generator as constructor calls) ---------------------------

class Rule:
    """An after-validator from a ``manifesto.util.rules`` checker: ``'x' <problem>``."""

    __slots__ = ("check", "what")

    def __init__(self, check, what: str = "") -> None:
        self.check, self.what = check, what

    def __call__(self, value: str) -> str:
        problem = self.check(value)
        if problem:
            raise ValueError(f"{self.what}{show_value(value)} {problem}")
        return value

    def __repr__(self) -> str:
        return f"Rule({_name(self.check)}, {self.what!r})"


class Each:
    """An after-validator running ``check`` on each key (``keys``), value (``values``) or list
    item (``items``) of a container; a problem points at that entry."""

    __slots__ = ("check", "what", "part")

    def __init__(self, check, what: str, part: str) -> None:
        self.check, self.what, self.part = check, what, part

    def __call__(self, container):
        if self.part == "keys":
            entries = ((k, k) for k in container)
        elif self.part == "values":
            entries = container.items()
        else:
            entries = enumerate(container)
        for key, item in entries:
            problem = self.check(item)
            if problem:
                raise FieldError((key,), f"{self.what}{show_value(item)} {problem}")
        return container

    def __repr__(self) -> str:
        return f"Each({_name(self.check)}, {self.what!r}, {self.part!r})"


class AtLeast:
    """An after-validator: a whole number of at least ``low``."""

    __slots__ = ("low",)

    def __init__(self, low: int) -> None:
        self.low = low

    def __call__(self, value: int) -> int:
        if value < self.low:
            raise ValueError(f"must be at least {self.low}, got {value}")
        return value

    def __repr__(self) -> str:
        return f"AtLeast({self.low!r})"


def _name(function) -> str:
    """How the generated module names a ``manifesto.util.rules`` checker (some are made by a factory,
    so the name is the one it is bound to)."""
    for name, value in vars(rules).items():
        if value is function and not name.startswith("_"):
            return f"rules.{name}"
    raise ValueError(f"{function!r} is not a public checker of manifesto.util.rules")


# -- field checks -----------------------------------------------------------------------------

def quantity_value(value: Any) -> str:
    if isinstance(value, bool):
        raise ValueError(f"expected a quantity such as 8, 500m or 64Gi, got {show_value(value)}")
    if isinstance(value, int) or isinstance(value, float) and math.isfinite(value):
        value = str(value)  # the loader bounds whole numbers at 4300 digits
    try:
        if not isinstance(value, str):
            raise ValueError
        if len(value) > 64:
            raise ValueError(f"a quantity of {len(value)} characters is too long (at most 64; examples: 8, 500m, "
                             "64Gi)")
        if quantity.parse(value) > quantity.MAX:
            raise ValueError(f"{show_value(value)} is too large: a Kubernetes quantity is at most {quantity.MAX} "
                             "(2**63 - 1)")
    except ValueError as exc:
        if "too l" in str(exc):  # too large, too long: said above
            raise
        raise ValueError(f"{show_value(value)} is not a Kubernetes quantity (examples: 8, 500m, 64Gi, 2G)") from None
    return value


def byte_quantity_value(value: Any) -> str:
    """A quantity that counts bytes (memory, shared memory, storage): as ``quantity_value``,
    and no fraction's suffix (``500m`` is half a byte, not 500 megabytes)."""
    value = quantity_value(value)
    problem = quantity.byte_problem(value)
    if problem:
        raise ValueError(problem)
    return value


def env_value(value: Any) -> str:
    if isinstance(value, bool) or value is None or isinstance(value, (dict, list)):
        raise ValueError("environment values must be strings; quote the value")
    return str(value)


_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")


def dns_label(value: str) -> str:
    if not _DNS_LABEL.match(value) or len(value) > 63:
        raise ValueError(
            f"'{value}' must be a DNS label: lowercase letters, digits and '-', "
            "starting and ending with a letter or digit, at most 63 characters"
        )
    return value


def positive(value: int) -> int:
    """A count of at least 1, and 32-bit: every whole number the schemas take reaches a
    Kubernetes object or a Slurm directive (a Job's completions, a deadline, a group size)."""
    if value < 1:
        raise ValueError("must be at least 1")
    return int32(value)


def scalar(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        raise ValueError("expected a single value, not a mapping or list")
    return value


def number(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"expected a number, got {show_value(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"expected a finite number, got {show_value(value)}")
    return value


def starts_with_letter(value: str) -> str:
    if rules.ascii_digits(value[:1]):
        raise ValueError(f"{show_value(value)} must start with a letter: it begins the names of Services, "
                         "which are DNS-1035 labels")
    return value


def int32(value: int) -> int:
    if value > rules.INT32_MAX:
        shown = value if value < 10**20 else f"a whole number of {len(str(value))} digits"
        raise ValueError(f"{shown} is too large: Kubernetes counts are 32-bit (at most {rules.INT32_MAX})")
    return value


def non_negative(value: int) -> int:
    if value < 0:
        raise ValueError(f"must not be negative, got {value}")
    return value


def zero_or_more(value: int) -> int:
    if value < 0:
        raise ValueError("must be 0 or more")
    return value


def port(value: int) -> int:
    if not 1 <= value <= 65535:
        raise ValueError(f"{value} is not a TCP port (1-65535)")
    return value


def port_number(value: int) -> int:
    if not 1 <= value <= 65535:
        raise ValueError(f"{value} is not a port number (1-65535)")
    return value


def one_or_many(value: Any) -> Any:
    """A single string stands for a list of one."""
    return [value] if isinstance(value, str) else value


# -- cluster profile --------------------------------------------------------------------------

_ALLOCATIONS = ("extended_resource", "dra", "slurm")


class AllocationMixin:
    __slots__ = ()

    @property
    def backend(self) -> str:
        return next(n for n in _ALLOCATIONS if getattr(self, n) is not None)


def allocation_exactly_one(self):
    chosen = [n for n in _ALLOCATIONS if getattr(self, n) is not None]
    if len(chosen) != 1:
        raise ValueError(
            "allocation must contain exactly one of extended_resource, dra or slurm"
            + (f" (found {', '.join(chosen)})" if chosen else "")
        )
    return self


def gpu_memory(value: str | None) -> str | None:
    if value is not None and quantity.byte_problem(value):
        raise ValueError(quantity.byte_problem(value))
    if value is not None and not 1024**3 <= quantity.parse(value) <= 2**50:
        raise ValueError(f"{value} is not a GPU's memory; write it as a quantity from 1Gi to 1Pi, e.g. 141G")
    return value


def gpu_part(value: str | None) -> str | None:
    if value is None:
        return value
    from manifesto.schema.parts import PARTS, part_named

    if part_named(value) is None:
        raise ValueError(f"'{value}' is not a part of the accelerator table (manifesto/schema/parts.py)"
                         f"{did_you_mean(value, list(PARTS))}; its parts: {', '.join(PARTS)}. Or leave part out "
                         "and state memory (what CUDA sees, e.g. 79Gi)")
    return value


def gpu_price(value: Any) -> Any:
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                              or not math.isfinite(value) or value < 0 or value > 1e6):
        raise ValueError(f"{show_value(value)} must be a number from 0 to 1000000 (the price of one GPU-hour)")
    return value


def release_text(value: Any) -> Any:
    """A release version must be written as text: YAML reads 0.10 as the number 0.1."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise ValueError(f"{show_value(value)} is a number; quote the release, e.g. \"0.10.0\" (YAML reads 0.10 "
                         "as 0.1)")
    return value


def accelerator_shape(self):
    if self.allocation is not None and self.resource_name is not None:
        raise FieldError(("resource_name",), "set allocation or the older resource_name, not both")
    return self


def default_accelerator_known(self):
    if self.default not in self.profiles:
        # No did-you-mean: a near name is a different GPU (b200 vs h200), not a typo to fix.
        raise FieldError(("default",), f"'{self.default}' is not one of accelerators.profiles: "
                         + ", ".join(sorted(self.profiles)))
    return self


def read_write_many() -> list[str]:
    return ["ReadWriteMany"]


def one_volume_source(value: dict[str, Any] | None) -> dict[str, Any] | None:
    if value is None:
        return value
    if not value:
        raise ValueError("expected one volume source, such as persistentVolumeClaim: {claimName: NAME}")
    kinds = list(value)
    if len(kinds) > 1:
        raise FieldError((kinds[1],), f"a volume has exactly one source; found {', '.join(kinds)}")
    kind, source = kinds[0], value[kinds[0]]
    if not isinstance(source, dict):
        hint = (f"; write persistentVolumeClaim: {{claimName: {source}}}"
                if kind == "persistentVolumeClaim" and isinstance(source, str) else
                f" (the fields of the {kind} volume source)")
        raise FieldError((kind,), f"expected a mapping, got {show_value(source)}{hint}")
    if kind == "persistentVolumeClaim" and not isinstance(source.get("claimName"), str):
        raise FieldError((kind,), "persistentVolumeClaim needs claimName: the name of the claim")
    if kind == "persistentVolumeClaim" and rules.dns_subdomain(source["claimName"]):
        raise FieldError((kind, "claimName"), f"{show_value(source['claimName'])} "
                         f"{rules.dns_subdomain(source['claimName'])}")
    return value


#: Kubernetes volume source kinds (core/v1 Volume) an extra volume may use.
VOLUME_SOURCES = frozenset({
    "awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "configMap", "csi", "downwardAPI",
    "emptyDir", "ephemeral", "fc", "flexVolume", "flocker", "gcePersistentDisk", "gitRepo", "glusterfs",
    "hostPath", "image", "iscsi", "nfs", "persistentVolumeClaim", "photonPersistentDisk", "portworxVolume",
    "projected", "quobyte", "rbd", "scaleIO", "secret", "storageos", "vsphereVolume",
})


def extra_volume(value: dict) -> dict:
    """A Kubernetes Volume: ``name`` (a DNS label) and exactly one source, itself a mapping."""
    name = value.get("name")
    if not isinstance(name, str):
        raise FieldError(("name",), "an extra volume needs a name")
    problem = rules.dns_label(name)
    if problem:
        raise FieldError(("name",), f"{show_value(name)} {problem}")
    sources = [k for k in value if k != "name"]
    for key in sources:
        if key not in VOLUME_SOURCES:
            raise FieldError((key,), f"unknown volume source '{key}'{did_you_mean(key, VOLUME_SOURCES)}")
        if not isinstance(value[key], dict):
            raise FieldError((key,), f"expected a mapping (the {key} volume source), got {show_value(value[key])}")
    if len(sources) != 1:
        raise FieldError((), f"volume '{name}' needs exactly one source (hostPath, persistentVolumeClaim, nfs, ...), "
                             f"got {len(sources)}")
    return value


def sub_path(value: str) -> str:
    if value.startswith("/") or ".." in value.split("/"):
        raise ValueError(f"{show_value(value)} must be a relative path inside the volume (no leading '/' or '..')")
    return value


def mounts_name_volumes(self):
    names = [v["name"] for v in self.extra_volumes]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise FieldError(("extra_volumes", i, "name"), f"volume '{name}' is declared twice")
    paths: list[str] = []
    for i, mount in enumerate(self.extra_volume_mounts):
        if mount.name not in names:
            raise FieldError(("extra_volume_mounts", i, "name"), f"no extra volume is named '{mount.name}'"
                             f"{did_you_mean(mount.name, names)}; declare it in pod_defaults.extra_volumes")
        if mount.mountPath in paths:
            raise FieldError(("extra_volume_mounts", i, "mountPath"), f"{mount.mountPath} is mounted twice")
        paths.append(mount.mountPath)
    return self


def known_fabric_profiles(self):
    uses = [(("default_profile",), self.default_profile)] if self.default_profile else []
    uses += [(("expert_parallel_profiles", role), name) for role, name in self.expert_parallel_profiles.items()]
    known = sorted(self.profiles)
    for path, name in uses:
        if name not in self.profiles:
            raise FieldError(path, printable(f"'{name}' is not defined under fabric.profiles"  # names may hold a tab
                                             f"{did_you_mean(name, known)}; defined: {', '.join(known) or '(none)'}"))
    return self


def _limit(value: Any, whose: str) -> Any:
    """A whole number from 1 to 2**31 - 1, or None; ``whose`` says why it is bounded."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                              or not 1 <= value <= rules.INT32_MAX):
        raise ValueError(f"{show_value(value)} must be a whole number from 1 to {rules.INT32_MAX} ({whose})")
    return value


def envoy_limit(value: Any) -> Any:
    return _limit(value, "Envoy's 32-bit circuit-breaker thresholds")


def envoy_buffer(value: str | None) -> str | None:
    if value is not None and quantity.byte_problem(value):
        raise ValueError(quantity.byte_problem(value))
    if value is not None and not 1 <= quantity.parse(value) < 2**32:
        raise ValueError(f"{value} is outside Envoy's buffer limit range (1 byte to just under 4Gi)")
    return value


# A duration in the form Istio accepts for DestinationRule fields: whole numbers with units,
# largest first (900s, 15m, 1h30m, 250ms).
_DURATION = re.compile(r"^(?:([0-9]+)h)?(?:([0-9]+)m(?!s))?(?:([0-9]+)s)?(?:([0-9]+)ms)?\Z")


def duration_ms(text: str) -> int | None:
    match = _DURATION.match(text)
    if not text or match is None:  # every part is optional, so "" matches
        return None
    h, m, s, ms = (int(g or 0) for g in match.groups())
    return ((h * 60 + m) * 60 + s) * 1000 + ms


def istio_limit(value: Any) -> Any:
    return _limit(value, "Istio's 32-bit connection-pool limits")


def istio_duration(value: Any) -> Any:
    if value is not None and (not isinstance(value, str) or not duration_ms(value)):
        raise ValueError(f"{show_value(value)} is not a duration of at least 1ms; write whole numbers with "
                         "units h, m, s, ms, largest first (examples: 900s, 15m, 1h30m)")
    return value


def consistent_cluster(self):
    for name, prof in self.accelerators.profiles.items():
        at = ("accelerators", "profiles", name)
        if prof.gpus_per_node is None and self.gpus_per_node is None:
            raise FieldError(at, "gpus_per_node is missing here and at the top level of the cluster profile")
        slurm_alloc = prof.allocation is not None and prof.allocation.slurm is not None
        if self.platform == "slurm" and prof.allocation is not None and not slurm_alloc:
            raise FieldError(at + ("allocation",), f"platform: slurm needs allocation.slurm (found "
                             f"{prof.allocation.backend})")
        if self.platform != "slurm" and slurm_alloc:
            raise FieldError(at + ("allocation",), f"allocation.slurm needs platform: slurm (this cluster is "
                             f"{self.platform}); use extended_resource or dra")
        if self.platform != "slurm" and prof.allocation is None and prof.resource_name is None:
            raise FieldError(at, "needs an allocation (extended_resource or dra)")
    if self.openshift is not None and self.platform != "openshift":
        raise FieldError(("openshift",), "the openshift section needs platform: openshift")
    return self


# -- model spec -------------------------------------------------------------------------------

def one_image(self):
    if self.image_ref is not None and self.image is not None:
        raise FieldError(("image",), "set either image_ref or image, not both")
    return self


def data_parallel(value: Any) -> int | bool:
    if value is False:
        return False
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError("dp must be a whole number of at least 1, or false")
    if value > rules.INT32_MAX:
        raise ValueError(f"{value} is too large: Kubernetes counts are 32-bit (at most {rules.INT32_MAX})")
    return value


class ParallelismMixin:
    __slots__ = ()

    @property
    def dp_size(self) -> int:
        return self.dp or 1


def routing_configs(self):
    if self.plugins_config_file is not None and self.plugin_configs is None:
        raise FieldError(("plugins_config_file",), "plugins_config_file needs plugin_configs")
    if self.plugin_configs is not None:
        if self.plugin_config is not None:
            raise FieldError(("plugin_configs",), "set plugin_config or plugin_configs, not both")
        if self.plugins_config_file is None:
            raise FieldError(("plugin_configs",), "plugin_configs needs plugins_config_file to select one")
        if self.plugins_config_file not in self.plugin_configs:
            known = list(self.plugin_configs)
            raise FieldError(("plugins_config_file",), f"'{self.plugins_config_file}' is not a key of "
                             f"plugin_configs{did_you_mean(self.plugins_config_file, known)}; keys: "
                             f"{', '.join(known) or '(none)'}")
    return self


def unique_roles(roles: list) -> list:
    names = [role.name for role in roles]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise FieldError((i, "name"), f"role '{name}' is defined twice (first as roles[{names.index(name)}])")
    return roles


# -- routing profile --------------------------------------------------------------------------

class PluginSpecMixin:
    __slots__ = ()

    @property
    def ref(self) -> str:
        return self.name or self.type


def plugin_refs(self):
    if self.kind != "EndpointPickerConfig":
        raise FieldError(("kind",), f"expected EndpointPickerConfig, got '{self.kind}'")
    declared = [p.ref for p in self.plugins]
    for i, name in enumerate(declared):
        if name in declared[:i]:
            field = "name" if self.plugins[i].name is not None else "type"
            raise FieldError(("plugins", i, field), f"plugin '{name}' is declared twice (first as "
                             f"plugins[{declared.index(name)}]); give one of them a distinct name")
    for i, prof in enumerate(self.schedulingProfiles):
        for j, ref in enumerate(prof.plugins):
            if ref.pluginRef not in declared:
                raise FieldError(
                    ("schedulingProfiles", i, "plugins", j, "pluginRef"),
                    f"'{ref.pluginRef}' is not a declared plugin{did_you_mean(ref.pluginRef, declared)}; "
                    f"declared: {', '.join(declared)}",
                )
    return self


# -- workload ---------------------------------------------------------------------------------

def indexed_job(self):
    if self.completion_mode == "Indexed" and self.completions is None:
        raise FieldError(("completion_mode",), "an Indexed Job needs completions: the number of indexes")
    return self


def service_ports(self):
    if self.type == "normal" and not self.ports:
        raise FieldError(("ports",), "a normal (ClusterIP) Service needs at least one port; "
                         "use type: headless for a DNS-only Service")
    names = [p.name for p in self.ports]
    if len(self.ports) > 1 and None in names:
        raise FieldError(("ports", names.index(None)), "with several ports every port needs a name")
    for i, name in enumerate(names):
        if name is not None and name in names[:i]:
            raise FieldError(("ports", i, "name"), f"port name '{name}' is used twice")
    return self


def check_pod_template(value: dict[str, Any], where: tuple) -> None:
    """A loose check of an embedded PodTemplateSpec: the shape Manifesto edits, nothing more."""
    for key in value:
        if key not in ("metadata", "spec"):
            raise FieldError(where + (key,), f"unknown key {show_value(key)}; a pod template has metadata and spec")
    metadata = value.get("metadata", {})
    if not isinstance(metadata, dict):
        raise FieldError(where + ("metadata",), f"expected a mapping, got {show_value(metadata)}")
    for part in ("labels", "annotations"):
        entries = metadata.get(part, {})
        if not isinstance(entries, dict):
            raise FieldError(where + ("metadata", part), f"expected a mapping, got {show_value(entries)}")
        for k, v in entries.items():
            if not isinstance(v, str):
                raise FieldError(where + ("metadata", part, k), f"values must be strings; quote {show_value(v)}")
    spec = value.get("spec")
    if not isinstance(spec, dict):
        raise FieldError(where + ("spec",), "a pod template needs spec: a PodSpec with containers"
                         if spec is None else f"expected a mapping, got {show_value(spec)}")
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        raise FieldError(where + ("spec", "containers"), "a pod spec needs a non-empty list of containers")
    seen: set[str] = set()
    for i, c in enumerate(containers):
        if not isinstance(c, dict) or not isinstance(c.get("name"), str) or not c.get("name"):
            raise FieldError(where + ("spec", "containers", i), "each container needs a name")
        if c["name"] in seen:
            raise FieldError(where + ("spec", "containers", i, "name"), f"container name '{c['name']}' is used twice")
        seen.add(c["name"])


def container_names(template: dict[str, Any]) -> list[str]:
    return [c["name"] for c in template["spec"]["containers"]]


def consistent_workload(self):
    check_pod_template(self.pod_template, ("pod_template",))
    if self.leader_template is not None:
        if self.backend != "leaderworkerset":
            raise FieldError(("leader_template",), f"leader_template is for backend: leaderworkerset "
                             f"(this workload is {self.backend})")
        check_pod_template(self.leader_template, ("leader_template",))
    for section in ("job", "deployment", "leaderworkerset"):
        if getattr(self, section) is not None and self.backend != section:
            raise FieldError((section,), f"the {section} section needs backend: {section} "
                             f"(this workload is {self.backend})")
    if self.backend == "leaderworkerset" and self.leaderworkerset is None:
        raise FieldError(("backend",), "backend: leaderworkerset needs a leaderworkerset: {size: N} section")
    if self.accelerator_count or self.accelerator_container is not None:
        _check_accelerator_container(self)
    return self


def _check_accelerator_container(self) -> None:
    templates = [("pod_template", self.pod_template)]
    if self.leader_template is not None:
        templates.append(("leader_template", self.leader_template))
    for key, template in templates:
        names = container_names(template)
        if self.accelerator_container is None:
            if len(names) != 1:
                raise FieldError(("accelerator_count",) if key == "pod_template" else (key,),
                                 f"{key} has {len(names)} containers ({', '.join(names)}); "
                                 "name the one that gets the accelerators in accelerator_container")
        elif self.accelerator_container not in names:
            raise FieldError(("accelerator_container",), f"'{self.accelerator_container}' is not a container "
                             f"of {key}; its containers: {', '.join(names)}")


class WorkloadMixin:
    __slots__ = ()

    def gpu_container(self) -> str | None:
        """The container that gets the accelerators, or None when the workload needs none."""
        if not self.accelerator_count:
            return None
        return self.accelerator_container or container_names(self.pod_template)[0]
