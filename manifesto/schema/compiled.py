"""The input schemas compiled by tools/gen_compiled_schema.py (pydantic 2.14.4, pydantic-core
2.50.5) from the models of manifesto.schema. Generated: do not edit; run
``uv run python tools/gen_compiled_schema.py`` after changing a model.

Loading an input uses this module and pydantic-core only (``manifesto.schema.validation.validate``).
"""

# ruff: noqa: E501
from manifesto.util import rules
from manifesto.schema import checks
from manifesto.schema.checks import AtLeast, Each, Rule, make

__all__ = ['AcceleratorProfile', 'Accelerators', 'Allocation', 'ClusterCache', 'ClusterProfile', 'ComponentSize', 'ComputeDomain', 'Computed', 'ConnectionPool', 'DeploymentPolicy', 'Dra', 'EndpointPickerConfig', 'EnvoySize', 'ExtendedResource', 'ExtraVolumeMount', 'Fabric', 'FabricProfile', 'Fit', 'Gateway', 'IdleShutdown', 'ImageCatalog', 'JobPolicy', 'Kueue', 'LeaderWorkerSetInstall', 'LeaderWorkerSetPolicy', 'LlmD', 'LlmDImages', 'Logging', 'Lws', 'ModelRef', 'ModelSpec', 'Naming', 'OpenShift', 'Parallelism', 'Paths', 'PluginRef', 'PluginSpec', 'PodDefaults', 'Profiling', 'Rdma', 'Resources', 'Role', 'Routing', 'RoutingSizing', 'Runtime', 'SchedulingProfile', 'ServicePort', 'ServiceSpec', 'SharedClaim', 'Slurm', 'SlurmBind', 'SlurmGres', 'SpecCache', 'Storage', 'Workload', 'WorkloadMetadata']

#: The schemas a whole file is validated with.
TOP = ('ClusterProfile', 'ModelSpec', 'EndpointPickerConfig', 'ImageCatalog', 'Workload')


class ComponentSize(checks.Record):
    __slots__ = ()


class ExtendedResource(checks.Record):
    __slots__ = ()


class Dra(checks.Record):
    __slots__ = ()


class SlurmGres(checks.Record):
    __slots__ = ()


class Allocation(checks.Record, checks.AllocationMixin):
    __slots__ = ()


class ComputeDomain(checks.Record):
    __slots__ = ()


class AcceleratorProfile(checks.Record):
    __slots__ = ()


class Accelerators(checks.Record):
    __slots__ = ()


class SharedClaim(checks.Record):
    __slots__ = ()


class Storage(checks.Record):
    __slots__ = ()


class Logging(checks.Record):
    __slots__ = ()


class Paths(checks.Record):
    __slots__ = ()


class ClusterCache(checks.Record):
    __slots__ = ()


class Rdma(checks.Record):
    __slots__ = ()


class ExtraVolumeMount(checks.Record):
    __slots__ = ()


class PodDefaults(checks.Record):
    __slots__ = ()


class FabricProfile(checks.Record):
    __slots__ = ()


class Fabric(checks.Record):
    __slots__ = ()


class Naming(checks.Record):
    __slots__ = ()


class Kueue(checks.Record):
    __slots__ = ()


class Gateway(checks.Record):
    __slots__ = ()


class OpenShift(checks.Record):
    __slots__ = ()


class LlmDImages(checks.Record):
    __slots__ = ()


class EnvoySize(ComponentSize):
    __slots__ = ()


class ConnectionPool(checks.Record):
    __slots__ = ()


class RoutingSizing(checks.Record):
    __slots__ = ()


class LlmD(checks.Record):
    __slots__ = ()


class LeaderWorkerSetInstall(checks.Record):
    __slots__ = ()


class SlurmBind(checks.Record):
    __slots__ = ()


class Slurm(checks.Record):
    __slots__ = ()


class ClusterProfile(checks.Record):
    __slots__ = ()


class ModelRef(checks.Record):
    __slots__ = ()


class Lws(checks.Record):
    __slots__ = ()


class Parallelism(checks.Record, checks.ParallelismMixin):
    __slots__ = ()


class Computed(checks.Record):
    __slots__ = ()


class Resources(checks.Record):
    __slots__ = ()


class Profiling(checks.Record):
    __slots__ = ()


class Role(checks.Record):
    __slots__ = ()


class Routing(checks.Record):
    __slots__ = ()


class IdleShutdown(checks.Record):
    __slots__ = ()


class Runtime(checks.Record):
    __slots__ = ()


class SpecCache(checks.Record):
    __slots__ = ()


class Fit(checks.Record):
    __slots__ = ()


class ModelSpec(checks.Record):
    __slots__ = ()


class PluginSpec(checks.Record, checks.PluginSpecMixin):
    __slots__ = ()


class PluginRef(checks.Record):
    __slots__ = ()


class SchedulingProfile(checks.Record):
    __slots__ = ()


class EndpointPickerConfig(checks.Record):
    __slots__ = ()


class ImageCatalog(checks.Record):
    __slots__ = ()


class WorkloadMetadata(checks.Record):
    __slots__ = ()


class JobPolicy(checks.Record):
    __slots__ = ()


class DeploymentPolicy(checks.Record):
    __slots__ = ()


class LeaderWorkerSetPolicy(checks.Record):
    __slots__ = ()


class ServicePort(checks.Record):
    __slots__ = ()


class ServiceSpec(checks.Record):
    __slots__ = ()


class Workload(checks.Record, checks.WorkloadMixin):
    __slots__ = ()

ClusterProfile.MULTILINE = frozenset({'affinity', 'computed_env', 'container_security_context', 'default_env', 'dns_config', 'env', 'extra_volumes', 'security_context', 'setup', 'shared_volume', 'tolerations'})
ModelSpec.EMBEDDED = ((('routing', 'plugin_config'), EndpointPickerConfig), (('routing', 'plugin_configs', '*'), EndpointPickerConfig))
ModelSpec.MULTILINE = frozenset({'env', 'kv_transfer_config', 'plugin_config', 'plugin_configs', 'pre_launch', 'vllm'})


def _default_ClusterCache():
    return make(ClusterCache, {'hf_host_path': None, 'jit_host_path': None, 'hf_home': None})


def _default_ComponentSize():
    return make(ComponentSize, {'cpu': None, 'memory': None})


def _default_Computed():
    return make(Computed, {'env': {}, 'vllm': {}})


def _default_ConnectionPool():
    return make(ConnectionPool, {
        'max_connections': None,
        'http1_max_pending_requests': None,
        'http2_max_requests': None,
        'max_requests_per_connection': None,
        'idle_timeout': None,
    })


def _default_EnvoySize():
    return make(EnvoySize, {'cpu': None, 'memory': None, 'concurrency': None, 'buffer_limit': None, 'circuit_breaker_limit': None})


def _default_Fabric():
    return make(Fabric, {
        'ucx_net_devices': None,
        'default_profile': None,
        'expert_parallel_profiles': {},
        'default_env': {},
        'profiles': {},
    })


def _default_Fit():
    return make(Fit, {'check': True, 'short_kv_cache': 'refuse'})


def _default_Gateway():
    return make(Gateway, {'class_name': 'istio', 'service_type': 'ClusterIP'})


def _default_LlmD():
    return make(LlmD, {
        'release': None,
        'images': make(LlmDImages, {'epp': None, 'envoy': None, 'routing_sidecar': None}),
        'sizing': make(RoutingSizing, {
            'endpoint_picker': make(ComponentSize, {'cpu': None, 'memory': None}),
            'envoy': make(EnvoySize, {'cpu': None, 'memory': None, 'concurrency': None, 'buffer_limit': None, 'circuit_breaker_limit': None}),
            'routing_sidecar': make(ComponentSize, {'cpu': None, 'memory': None}),
            'gateway_proxy': make(ComponentSize, {'cpu': None, 'memory': None}),
            'gateway_connection_pool': make(ConnectionPool, {
                'max_connections': None,
                'http1_max_pending_requests': None,
                'http2_max_requests': None,
                'max_requests_per_connection': None,
                'idle_timeout': None,
            }),
        }),
    })


def _default_LlmDImages():
    return make(LlmDImages, {'epp': None, 'envoy': None, 'routing_sidecar': None})


def _default_Lws():
    return make(Lws, {'size': 1, 'replicas': 1, 'same_topology_key': None})


def _default_Naming():
    return make(Naming, {'user_prefix': False})


def _default_Parallelism():
    return make(Parallelism, {'tp': 1, 'pp': 1, 'dp': False, 'ep': False})


def _default_Paths():
    return make(Paths, {'user_root': None, 'cache_root': None, 'log_root': None})


def _default_PodDefaults():
    return make(PodDefaults, {
        'shm_size': None,
        'ephemeral_storage': None,
        'image_pull_secrets': [],
        'image_pull_policy': None,
        'termination_grace_period_seconds': None,
        'working_dir': None,
        'container_security_context': None,
        'security_context': None,
        'annotations': {},
        'node_selector': {},
        'affinity': None,
        'tolerations': [],
        'dns_policy': None,
        'dns_config': None,
        'extra_devices': [],
        'extra_volumes': [],
        'extra_volume_mounts': [],
    })


def _default_Resources():
    return make(Resources, {'cpu': None, 'memory': None, 'gpus': None, 'ephemeral_storage': None, 'shm_size': None})


def _default_RoutingSizing():
    return make(RoutingSizing, {
        'endpoint_picker': make(ComponentSize, {'cpu': None, 'memory': None}),
        'envoy': make(EnvoySize, {'cpu': None, 'memory': None, 'concurrency': None, 'buffer_limit': None, 'circuit_breaker_limit': None}),
        'routing_sidecar': make(ComponentSize, {'cpu': None, 'memory': None}),
        'gateway_proxy': make(ComponentSize, {'cpu': None, 'memory': None}),
        'gateway_connection_pool': make(ConnectionPool, {
            'max_connections': None,
            'http1_max_pending_requests': None,
            'http2_max_requests': None,
            'max_requests_per_connection': None,
            'idle_timeout': None,
        }),
    })


def _default_Runtime():
    return make(Runtime, {'sidecars': None, 'idle_shutdown': None, 'vllm_env': None, 'pre_launch': []})


def _default_SpecCache():
    return make(SpecCache, {'key': None, 'cleanup_on_crash': True, 'gpu_arch': None})


def _default_Storage():
    return make(Storage, {'shared_volume': None, 'shared_mount_path': None, 'local_nvme_path': None, 'shared_claim': None})


def _default_WorkloadMetadata():
    return make(WorkloadMetadata, {'labels': {}, 'annotations': {}})


# Parts that several schemas hold (a field type used in many places), written once.
_P1 = {
    'type': 'function-before',
    'function': {'type': 'no-info', 'function': checks.quantity_value},
    'schema': {'type': 'str'},
}
_P2 = {
    'type': 'nullable',
    'schema': _P1,
}
_P3 = {
    'type': 'default',
    'schema': _P2,
    'default': None,
}
_P4 = {
    'type': 'model-field',
    'schema': _P3,
}
_P5 = {
    'type': 'function-before',
    'function': {'type': 'no-info', 'function': checks.byte_quantity_value},
    'schema': {'type': 'str'},
}
_P6 = {
    'type': 'nullable',
    'schema': _P5,
}
_P7 = {
    'type': 'default',
    'schema': _P6,
    'default': None,
}
_P8 = {
    'type': 'model-field',
    'schema': _P7,
}
_P9 = {'type': 'no-info', 'function': Rule(rules.resource_name, '')}
_P10 = {
    'type': 'function-after',
    'function': _P9,
    'schema': {'type': 'str'},
}
_P11 = {
    'type': 'model-field',
    'schema': _P10,
}
_P12 = {'type': 'no-info', 'function': Rule(rules.dns_subdomain, '')}
_P13 = {
    'type': 'function-after',
    'function': _P12,
    'schema': {'type': 'str'},
}
_P14 = {
    'type': 'model-field',
    'schema': _P13,
}
_P15 = {'type': 'function-after', 'function': {'type': 'no-info', 'function': checks.positive}, 'schema': {'type': 'int'}}
_P16 = {
    'type': 'function-after',
    'function': {'type': 'no-info', 'function': checks.int32},
    'schema': _P15,
}
_P17 = {
    'type': 'nullable',
    'schema': _P16,
}
_P18 = {
    'type': 'default',
    'schema': _P17,
    'default': None,
}
_P19 = {
    'type': 'model-field',
    'schema': _P18,
}
_P20 = {'type': 'no-info', 'function': Rule(rules.qualified_name, '')}
_P21 = {
    'type': 'function-after',
    'function': _P20,
    'schema': {'type': 'str'},
}
_P22 = {
    'type': 'nullable',
    'schema': _P21,
}
_P23 = {
    'type': 'default',
    'schema': _P22,
    'default': None,
}
_P24 = {
    'type': 'model-field',
    'schema': _P23,
}
_P25 = {'type': 'no-info', 'function': Rule(rules.path_segment, '')}
_P26 = {
    'type': 'function-after',
    'function': _P25,
    'schema': {'type': 'str'},
}
_P27 = {
    'type': 'nullable',
    'schema': _P26,
}
_P28 = {
    'type': 'default',
    'schema': _P27,
    'default': None,
}
_P29 = {
    'type': 'model-field',
    'schema': _P28,
}
_P30 = {
    'type': 'function-after',
    'function': {'type': 'no-info', 'function': Rule(rules.one_word, '')},
    'schema': {'type': 'str'},
}
_P31 = {
    'type': 'nullable',
    'schema': _P30,
}
_P32 = {
    'type': 'default',
    'schema': _P31,
    'default': None,
}
_P33 = {
    'type': 'model-field',
    'schema': _P32,
}
_P34 = {'type': 'no-info', 'function': Each(rules.label_value, 'label value ', 'values')}
_P35 = {'type': 'no-info', 'function': Each(rules.qualified_name, 'label key ', 'keys')}
_P36 = {'type': 'dict', 'keys_schema': {'type': 'str'}, 'values_schema': {'type': 'str'}}
_P37 = {
    'type': 'function-after',
    'function': _P35,
    'schema': _P36,
}
_P38 = {
    'type': 'function-after',
    'function': _P34,
    'schema': _P37,
}
_P39 = {
    'type': 'default',
    'schema': _P38,
    'default_factory': dict,
    'default_factory_takes_data': False,
}
_P40 = {
    'type': 'model-field',
    'schema': _P39,
}
_P41 = {
    'type': 'nullable',
    'schema': _P13,
}
_P42 = {
    'type': 'default',
    'schema': _P41,
    'default': None,
}
_P43 = {
    'type': 'model-field',
    'schema': _P42,
}
_P44 = {'type': 'dict', 'keys_schema': {'type': 'str'}, 'values_schema': {'type': 'any'}}
_P45 = {
    'type': 'nullable',
    'schema': _P44,
}
_P46 = {'type': 'no-info', 'function': Rule(rules.absolute_path, '')}
_P47 = {
    'type': 'function-after',
    'function': _P46,
    'schema': {'type': 'str'},
}
_P48 = {
    'type': 'nullable',
    'schema': _P47,
}
_P49 = {
    'type': 'default',
    'schema': _P48,
    'default': None,
}
_P50 = {
    'type': 'model-field',
    'schema': _P49,
}
_P51 = {'type': 'default', 'schema': {'type': 'nullable', 'schema': {'type': 'str'}}, 'default': None}
_P52 = {
    'type': 'model-field',
    'schema': _P51,
}
_P53 = {'type': 'function-after', 'function': {'type': 'no-info', 'function': checks.dns_label}, 'schema': {'type': 'str'}}
_P54 = {
    'type': 'model-field',
    'schema': _P53,
}
_P55 = {'type': 'default', 'schema': {'type': 'bool'}, 'default': False}
_P56 = {
    'type': 'model-field',
    'schema': _P55,
}
_P57 = {
    'type': 'default',
    'schema': _P45,
    'default': None,
}
_P58 = {
    'type': 'model-field',
    'schema': _P57,
}
_P59 = {'type': 'no-info', 'function': Each(rules.env_name, 'variable name ', 'keys')}
_P60 = {
    'type': 'function-before',
    'function': {'type': 'no-info', 'function': checks.env_value},
    'schema': {'type': 'str'},
}
_P61 = {
    'type': 'dict',
    'keys_schema': {'type': 'str'},
    'values_schema': _P60,
}
_P62 = {
    'type': 'function-after',
    'function': _P59,
    'schema': _P61,
}
_P63 = {
    'type': 'default',
    'schema': _P62,
    'default_factory': dict,
    'default_factory_takes_data': False,
}
_P64 = {
    'type': 'model-field',
    'schema': _P63,
}
_P65 = {
    'type': 'default',
    'schema': _P36,
    'default_factory': dict,
    'default_factory_takes_data': False,
}
_P66 = {
    'type': 'model-field',
    'schema': _P65,
}
_P67 = {'type': 'no-info', 'function': Rule(rules.label_value, '')}
_P68 = {
    'type': 'function-after',
    'function': _P67,
    'schema': _P13,
}
_P69 = {
    'type': 'function-before',
    'function': {'type': 'no-info', 'function': checks.istio_limit},
    'schema': {'type': 'nullable', 'schema': {'type': 'int'}},
}
_P70 = {
    'type': 'default',
    'schema': _P69,
    'default': None,
}
_P71 = {
    'type': 'model-field',
    'schema': _P70,
}
_P72 = {
    'type': 'default',
    'schema': {'type': 'definition-ref', 'schema_ref': 'ComponentSize'},
    'default_factory': _default_ComponentSize,
    'default_factory_takes_data': False,
}
_P73 = {
    'type': 'model-field',
    'schema': _P72,
}
_P74 = {
    'type': 'function-after',
    'function': {'type': 'no-info', 'function': Rule(rules.slurm_word, '')},
    'schema': {'type': 'str'},
}
_P75 = {
    'type': 'nullable',
    'schema': _P74,
}
_P76 = {
    'type': 'default',
    'schema': _P75,
    'default': None,
}
_P77 = {
    'type': 'model-field',
    'schema': _P76,
}
_P78 = {'type': 'default', 'schema': {'type': 'bool'}, 'default': True}
_P79 = {
    'type': 'model-field',
    'schema': _P78,
}
_P80 = {
    'type': 'default',
    'schema': _P16,
    'default': 1,
}
_P81 = {
    'type': 'model-field',
    'schema': _P80,
}
_P82 = {'type': 'no-info', 'function': Each(rules.vllm_flag_key, 'flag ', 'keys')}
_P83 = {
    'type': 'function-after',
    'function': _P82,
    'schema': _P44,
}
_P84 = {
    'type': 'default',
    'schema': _P83,
    'default_factory': dict,
    'default_factory_takes_data': False,
}
_P85 = {
    'type': 'model-field',
    'schema': _P84,
}
_P86 = {'type': 'default', 'schema': {'type': 'nullable', 'schema': {'type': 'bool'}}, 'default': None}
_P87 = {
    'type': 'model-field',
    'schema': _P86,
}
_P88 = {'type': 'default', 'schema': {'type': 'nullable', 'schema': {'type': 'int'}}, 'default': None}
_P89 = {
    'type': 'model-field',
    'schema': _P88,
}
_P90 = {'type': 'function-after', 'function': {'type': 'no-info', 'function': AtLeast(0)}, 'schema': {'type': 'int'}}
_P91 = {
    'type': 'nullable',
    'schema': _P90,
}
_P92 = {
    'type': 'default',
    'schema': _P91,
    'default': None,
}
_P93 = {
    'type': 'model-field',
    'schema': _P92,
}
_P94 = {
    'type': 'function-after',
    'function': {'type': 'no-info', 'function': checks.starts_with_letter},
    'schema': _P53,
}
_P95 = {
    'type': 'function-before',
    'function': {'type': 'no-info', 'function': checks.one_or_many},
    'schema': {'type': 'list', 'items_schema': {'type': 'str'}},
}
_P96 = {
    'type': 'default',
    'schema': _P95,
    'default_factory': list,
    'default_factory_takes_data': False,
}
_P97 = {
    'type': 'model-field',
    'schema': _P96,
}
_P98 = {
    'type': 'function-after',
    'function': {'type': 'no-info', 'function': checks.zero_or_more},
    'schema': {'type': 'int'},
}
_P99 = {
    'type': 'nullable',
    'schema': _P98,
}
_P100 = {
    'type': 'default',
    'schema': _P99,
    'default': None,
}
_P101 = {
    'type': 'model-field',
    'schema': _P100,
}
_P102 = {
    'type': 'nullable',
    'schema': _P15,
}
_P103 = {
    'type': 'default',
    'schema': _P102,
    'default': None,
}
_P104 = {
    'type': 'model-field',
    'schema': _P103,
}
_P105 = {
    'type': 'default',
    'schema': _P98,
    'default': 1,
}
_P106 = {
    'type': 'model-field',
    'schema': _P105,
}
_P107 = {
    'type': 'function-after',
    'function': {'type': 'no-info', 'function': checks.port_number},
    'schema': {'type': 'int'},
}


def definitions() -> list:
    """Every model's pydantic-core schema, as a definition named after it: a new list each
    call, whose parts may be shared between calls (read them, never change them)."""
    return [
        {
            'type': 'model',
            'cls': ComponentSize,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'cpu': _P4,
                    'memory': _P8,
                },
                'model_name': 'ComponentSize',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'ComponentSize'},
            'ref': 'ComponentSize',
        },
        {
            'type': 'model',
            'cls': ExtendedResource,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'resource_name': _P11,
                },
                'model_name': 'ExtendedResource',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'ExtendedResource'},
            'ref': 'ExtendedResource',
        },
        {
            'type': 'model',
            'cls': Dra,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'device_class_name': _P14,
                },
                'model_name': 'Dra',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'Dra'},
            'ref': 'Dra',
        },
        {
            'type': 'model',
            'cls': SlurmGres,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'gres': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {
                                'type': 'function-after',
                                'function': {'type': 'no-info', 'function': Rule(rules.slurm_gres, '')},
                                'schema': {'type': 'str'},
                            },
                            'default': 'gpu',
                        },
                    },
                },
                'model_name': 'SlurmGres',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'SlurmGres'},
            'ref': 'SlurmGres',
        },
        {
            'type': 'function-after',
            'function': {'type': 'no-info', 'function': checks.allocation_exactly_one},
            'schema': {
                'type': 'model',
                'cls': Allocation,
                'schema': {
                    'type': 'model-fields',
                    'fields': {
                        'extended_resource': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {
                                    'type': 'nullable',
                                    'schema': {'type': 'definition-ref', 'schema_ref': 'ExtendedResource'},
                                },
                                'default': None,
                            },
                        },
                        'dra': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {'type': 'nullable', 'schema': {'type': 'definition-ref', 'schema_ref': 'Dra'}},
                                'default': None,
                            },
                        },
                        'slurm': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {
                                    'type': 'nullable',
                                    'schema': {'type': 'definition-ref', 'schema_ref': 'SlurmGres'},
                                },
                                'default': None,
                            },
                        },
                    },
                    'model_name': 'Allocation',
                    'computed_fields': [],
                },
                'custom_init': False,
                'root_model': False,
                'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'Allocation'},
            },
            'ref': 'Allocation',
        },
        {
            'type': 'model',
            'cls': ComputeDomain,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'resource_claim_template_name': _P14,
                },
                'model_name': 'ComputeDomain',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'ComputeDomain'},
            'ref': 'ComputeDomain',
        },
        {
            'type': 'function-after',
            'function': {'type': 'no-info', 'function': checks.accelerator_shape},
            'schema': {
                'type': 'model',
                'cls': AcceleratorProfile,
                'schema': {
                    'type': 'model-fields',
                    'fields': {
                        'gpus_per_node': _P19,
                        'allocation': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {
                                    'type': 'nullable',
                                    'schema': {'type': 'definition-ref', 'schema_ref': 'Allocation'},
                                },
                                'default': None,
                            },
                        },
                        'resource_name': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {
                                    'type': 'nullable',
                                    'schema': _P10,
                                },
                                'default': None,
                            },
                        },
                        'presence_label': _P24,
                        'gpu_arch': _P29,
                        'torch_cuda_arch_list': _P33,
                        'node_selector': _P40,
                        'compute_domain': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {
                                    'type': 'nullable',
                                    'schema': {'type': 'definition-ref', 'schema_ref': 'ComputeDomain'},
                                },
                                'default': None,
                            },
                        },
                        'part': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {
                                    'type': 'function-after',
                                    'function': {'type': 'no-info', 'function': checks.gpu_part},
                                    'schema': {'type': 'nullable', 'schema': {'type': 'str'}},
                                },
                                'default': None,
                            },
                        },
                        'memory': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {
                                    'type': 'function-after',
                                    'function': {'type': 'no-info', 'function': checks.gpu_memory},
                                    'schema': _P2,
                                },
                                'default': None,
                            },
                        },
                        'hourly_price': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {
                                    'type': 'function-before',
                                    'function': {'type': 'no-info', 'function': checks.gpu_price},
                                    'schema': {'type': 'nullable', 'schema': {'type': 'float'}},
                                },
                                'default': None,
                            },
                        },
                    },
                    'model_name': 'AcceleratorProfile',
                    'computed_fields': [],
                },
                'custom_init': False,
                'root_model': False,
                'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'AcceleratorProfile'},
            },
            'ref': 'AcceleratorProfile',
        },
        {
            'type': 'function-after',
            'function': {'type': 'no-info', 'function': checks.default_accelerator_known},
            'schema': {
                'type': 'model',
                'cls': Accelerators,
                'schema': {
                    'type': 'model-fields',
                    'fields': {
                        'default': {'type': 'model-field', 'schema': {'type': 'str'}},
                        'profiles': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'function-after',
                                'function': {
                                    'type': 'no-info',
                                    'function': Each(rules.path_segment, 'accelerator name ', 'keys'),
                                },
                                'schema': {
                                    'type': 'dict',
                                    'keys_schema': {'type': 'str'},
                                    'values_schema': {'type': 'definition-ref', 'schema_ref': 'AcceleratorProfile'},
                                    'min_length': 1,
                                },
                            },
                        },
                    },
                    'model_name': 'Accelerators',
                    'computed_fields': [],
                },
                'custom_init': False,
                'root_model': False,
                'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'Accelerators'},
            },
            'ref': 'Accelerators',
        },
        {
            'type': 'model',
            'cls': SharedClaim,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'storage_class': _P43,
                    'access_modes': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {
                                'type': 'list',
                                'items_schema': {
                                    'type': 'literal',
                                    'expected': ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'],
                                },
                            },
                            'default_factory': checks.read_write_many,
                            'default_factory_takes_data': False,
                        },
                    },
                    'size': {
                        'type': 'model-field',
                        'schema': _P5,
                    },
                },
                'model_name': 'SharedClaim',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'SharedClaim'},
            'ref': 'SharedClaim',
        },
        {
            'type': 'model',
            'cls': Storage,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'shared_volume': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {
                                'type': 'function-after',
                                'function': {'type': 'no-info', 'function': checks.one_volume_source},
                                'schema': _P45,
                            },
                            'default': None,
                        },
                    },
                    'shared_mount_path': _P50,
                    'local_nvme_path': _P50,
                    'shared_claim': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {'type': 'nullable', 'schema': {'type': 'definition-ref', 'schema_ref': 'SharedClaim'}},
                            'default': None,
                        },
                    },
                },
                'model_name': 'Storage',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'Storage'},
            'ref': 'Storage',
        },
        {
            'type': 'model',
            'cls': Logging,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'pvc': _P43,
                    'mount_path': _P50,
                    'root': {'type': 'model-field', 'schema': {'type': 'str'}},
                },
                'model_name': 'Logging',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'Logging'},
            'ref': 'Logging',
        },
        {
            'type': 'model',
            'cls': Paths,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'user_root': _P52,
                    'cache_root': _P52,
                    'log_root': _P52,
                },
                'model_name': 'Paths',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'Paths'},
            'ref': 'Paths',
        },
        {
            'type': 'model',
            'cls': ClusterCache,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'hf_host_path': _P50,
                    'jit_host_path': _P50,
                    'hf_home': _P50,
                },
                'model_name': 'ClusterCache',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'ClusterCache'},
            'ref': 'ClusterCache',
        },
        {
            'type': 'model',
            'cls': Rdma,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'resource_name': _P11,
                    'value': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': _P1,
                            'default': '1',
                        },
                    },
                },
                'model_name': 'Rdma',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'Rdma'},
            'ref': 'Rdma',
        },
        {
            'type': 'model',
            'cls': ExtraVolumeMount,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'name': _P54,
                    'mountPath': {
                        'type': 'model-field',
                        'schema': _P47,
                    },
                    'readOnly': _P56,
                    'subPath': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {
                                'type': 'nullable',
                                'schema': {
                                    'type': 'function-after',
                                    'function': {'type': 'no-info', 'function': checks.sub_path},
                                    'schema': {'type': 'str'},
                                },
                            },
                            'default': None,
                        },
                    },
                },
                'model_name': 'ExtraVolumeMount',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'ExtraVolumeMount'},
            'ref': 'ExtraVolumeMount',
        },
        {
            'type': 'function-after',
            'function': {'type': 'no-info', 'function': checks.mounts_name_volumes},
            'schema': {
                'type': 'model',
                'cls': PodDefaults,
                'schema': {
                    'type': 'model-fields',
                    'fields': {
                        'shm_size': _P8,
                        'ephemeral_storage': _P8,
                        'image_pull_secrets': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {
                                    'type': 'function-after',
                                    'function': {'type': 'no-info', 'function': Each(rules.dns_subdomain, '', 'items')},
                                    'schema': {'type': 'list', 'items_schema': {'type': 'str'}},
                                },
                                'default_factory': list,
                                'default_factory_takes_data': False,
                            },
                        },
                        'image_pull_policy': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {
                                    'type': 'nullable',
                                    'schema': {'type': 'literal', 'expected': ['Always', 'IfNotPresent', 'Never']},
                                },
                                'default': None,
                            },
                        },
                        'termination_grace_period_seconds': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {
                                    'type': 'nullable',
                                    'schema': {
                                        'type': 'function-after',
                                        'function': {'type': 'no-info', 'function': checks.int32},
                                        'schema': {
                                            'type': 'function-after',
                                            'function': {'type': 'no-info', 'function': checks.non_negative},
                                            'schema': {'type': 'int'},
                                        },
                                    },
                                },
                                'default': None,
                            },
                        },
                        'working_dir': _P50,
                        'container_security_context': _P58,
                        'security_context': _P58,
                        'annotations': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {
                                    'type': 'function-after',
                                    'function': {
                                        'type': 'no-info',
                                        'function': Each(rules.qualified_name, 'annotation key ', 'keys'),
                                    },
                                    'schema': _P36,
                                },
                                'default_factory': dict,
                                'default_factory_takes_data': False,
                            },
                        },
                        'node_selector': _P40,
                        'affinity': _P58,
                        'tolerations': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {
                                    'type': 'list',
                                    'items_schema': _P44,
                                },
                                'default_factory': list,
                                'default_factory_takes_data': False,
                            },
                        },
                        'dns_policy': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {
                                    'type': 'nullable',
                                    'schema': {
                                        'type': 'literal',
                                        'expected': ['ClusterFirst', 'ClusterFirstWithHostNet', 'Default', 'None'],
                                    },
                                },
                                'default': None,
                            },
                        },
                        'dns_config': _P58,
                        'extra_devices': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {
                                    'type': 'list',
                                    'items_schema': _P47,
                                },
                                'default_factory': list,
                                'default_factory_takes_data': False,
                            },
                        },
                        'extra_volumes': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {
                                    'type': 'list',
                                    'items_schema': {
                                        'type': 'function-after',
                                        'function': {'type': 'no-info', 'function': checks.extra_volume},
                                        'schema': _P44,
                                    },
                                },
                                'default_factory': list,
                                'default_factory_takes_data': False,
                            },
                        },
                        'extra_volume_mounts': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {
                                    'type': 'list',
                                    'items_schema': {'type': 'definition-ref', 'schema_ref': 'ExtraVolumeMount'},
                                },
                                'default_factory': list,
                                'default_factory_takes_data': False,
                            },
                        },
                    },
                    'model_name': 'PodDefaults',
                    'computed_fields': [],
                },
                'custom_init': False,
                'root_model': False,
                'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'PodDefaults'},
            },
            'ref': 'PodDefaults',
        },
        {
            'type': 'model',
            'cls': FabricProfile,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'env': _P64,
                    'computed_env': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {
                                'type': 'function-after',
                                'function': _P59,
                                'schema': _P44,
                            },
                            'default_factory': dict,
                            'default_factory_takes_data': False,
                        },
                    },
                },
                'model_name': 'FabricProfile',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'FabricProfile'},
            'ref': 'FabricProfile',
        },
        {
            'type': 'function-after',
            'function': {'type': 'no-info', 'function': checks.known_fabric_profiles},
            'schema': {
                'type': 'model',
                'cls': Fabric,
                'schema': {
                    'type': 'model-fields',
                    'fields': {
                        'ucx_net_devices': _P52,
                        'default_profile': _P52,
                        'expert_parallel_profiles': _P66,
                        'default_env': _P64,
                        'profiles': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {
                                    'type': 'dict',
                                    'keys_schema': {'type': 'str'},
                                    'values_schema': {'type': 'definition-ref', 'schema_ref': 'FabricProfile'},
                                },
                                'default_factory': dict,
                                'default_factory_takes_data': False,
                            },
                        },
                    },
                    'model_name': 'Fabric',
                    'computed_fields': [],
                },
                'custom_init': False,
                'root_model': False,
                'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'Fabric'},
            },
            'ref': 'Fabric',
        },
        {
            'type': 'model',
            'cls': Naming,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'user_prefix': _P56,
                },
                'model_name': 'Naming',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'Naming'},
            'ref': 'Naming',
        },
        {
            'type': 'model',
            'cls': Kueue,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'local_queue': {
                        'type': 'model-field',
                        'schema': _P68,
                    },
                    'priority_class': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {
                                'type': 'nullable',
                                'schema': _P68,
                            },
                            'default': None,
                        },
                    },
                },
                'model_name': 'Kueue',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'Kueue'},
            'ref': 'Kueue',
        },
        {
            'type': 'model',
            'cls': Gateway,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'class_name': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': _P13,
                            'default': 'istio',
                        },
                    },
                    'service_type': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {'type': 'literal', 'expected': ['ClusterIP', 'LoadBalancer', 'NodePort']},
                            'default': 'ClusterIP',
                        },
                    },
                },
                'model_name': 'Gateway',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'Gateway'},
            'ref': 'Gateway',
        },
        {
            'type': 'model',
            'cls': OpenShift,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'scc': _P43,
                },
                'model_name': 'OpenShift',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'OpenShift'},
            'ref': 'OpenShift',
        },
        {
            'type': 'model',
            'cls': LlmDImages,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'epp': _P52,
                    'envoy': _P52,
                    'routing_sidecar': _P52,
                },
                'model_name': 'LlmDImages',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'LlmDImages'},
            'ref': 'LlmDImages',
        },
        {
            'type': 'model',
            'cls': EnvoySize,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'cpu': _P4,
                    'memory': _P8,
                    'concurrency': _P19,
                    'buffer_limit': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {
                                'type': 'function-after',
                                'function': {'type': 'no-info', 'function': checks.envoy_buffer},
                                'schema': _P2,
                            },
                            'default': None,
                        },
                    },
                    'circuit_breaker_limit': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {
                                'type': 'function-before',
                                'function': {'type': 'no-info', 'function': checks.envoy_limit},
                                'schema': {'type': 'nullable', 'schema': {'type': 'int'}},
                            },
                            'default': None,
                        },
                    },
                },
                'model_name': 'EnvoySize',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'EnvoySize'},
            'ref': 'EnvoySize',
        },
        {
            'type': 'model',
            'cls': ConnectionPool,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'max_connections': _P71,
                    'http1_max_pending_requests': _P71,
                    'http2_max_requests': _P71,
                    'max_requests_per_connection': _P71,
                    'idle_timeout': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {
                                'type': 'function-before',
                                'function': {'type': 'no-info', 'function': checks.istio_duration},
                                'schema': {'type': 'nullable', 'schema': {'type': 'str'}},
                            },
                            'default': None,
                        },
                    },
                },
                'model_name': 'ConnectionPool',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'ConnectionPool'},
            'ref': 'ConnectionPool',
        },
        {
            'type': 'model',
            'cls': RoutingSizing,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'endpoint_picker': _P73,
                    'envoy': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {'type': 'definition-ref', 'schema_ref': 'EnvoySize'},
                            'default_factory': _default_EnvoySize,
                            'default_factory_takes_data': False,
                        },
                    },
                    'routing_sidecar': _P73,
                    'gateway_proxy': _P73,
                    'gateway_connection_pool': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {'type': 'definition-ref', 'schema_ref': 'ConnectionPool'},
                            'default_factory': _default_ConnectionPool,
                            'default_factory_takes_data': False,
                        },
                    },
                },
                'model_name': 'RoutingSizing',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'RoutingSizing'},
            'ref': 'RoutingSizing',
        },
        {
            'type': 'model',
            'cls': LlmD,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'release': _P52,
                    'images': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {'type': 'definition-ref', 'schema_ref': 'LlmDImages'},
                            'default_factory': _default_LlmDImages,
                            'default_factory_takes_data': False,
                        },
                    },
                    'sizing': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {'type': 'definition-ref', 'schema_ref': 'RoutingSizing'},
                            'default_factory': _default_RoutingSizing,
                            'default_factory_takes_data': False,
                        },
                    },
                },
                'model_name': 'LlmD',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'LlmD'},
            'ref': 'LlmD',
        },
        {
            'type': 'model',
            'cls': LeaderWorkerSetInstall,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'version': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'function-after',
                            'function': {'type': 'no-info', 'function': Rule(rules.release_version, '')},
                            'schema': {
                                'type': 'function-before',
                                'function': {'type': 'no-info', 'function': checks.release_text},
                                'schema': {'type': 'str'},
                            },
                        },
                    },
                },
                'model_name': 'LeaderWorkerSetInstall',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'LeaderWorkerSetInstall'},
            'ref': 'LeaderWorkerSetInstall',
        },
        {
            'type': 'model',
            'cls': SlurmBind,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'source': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'function-after',
                            'function': {'type': 'no-info', 'function': Rule(rules.bind_path, '')},
                            'schema': {'type': 'str'},
                        },
                    },
                    'target': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'function-after',
                            'function': {'type': 'no-info', 'function': Rule(rules.bind_path, '')},
                            'schema': _P47,
                        },
                    },
                    'read_only': _P56,
                },
                'model_name': 'SlurmBind',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'SlurmBind'},
            'ref': 'SlurmBind',
        },
        {
            'type': 'model',
            'cls': Slurm,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'partition': _P77,
                    'account': _P77,
                    'qos': _P77,
                    'constraint': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {
                                'type': 'nullable',
                                'schema': {
                                    'type': 'function-after',
                                    'function': {'type': 'no-info', 'function': Rule(rules.slurm_constraint, '')},
                                    'schema': {'type': 'str'},
                                },
                            },
                            'default': None,
                        },
                    },
                    'time': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {
                                'type': 'function-after',
                                'function': {'type': 'no-info', 'function': Rule(rules.slurm_time, '')},
                                'schema': {'type': 'str'},
                            },
                            'default': '01:00:00',
                        },
                    },
                    'runtime': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {'type': 'literal', 'expected': ['apptainer', 'singularity', 'pyxis', 'native']},
                            'default': 'apptainer',
                        },
                    },
                    'exclusive': _P79,
                    'binds': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {'type': 'list', 'items_schema': {'type': 'definition-ref', 'schema_ref': 'SlurmBind'}},
                            'default_factory': list,
                            'default_factory_takes_data': False,
                        },
                    },
                    'setup': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {'type': 'list', 'items_schema': {'type': 'str'}},
                            'default_factory': list,
                            'default_factory_takes_data': False,
                        },
                    },
                    'ssh_host': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {
                                'type': 'nullable',
                                'schema': {
                                    'type': 'function-after',
                                    'function': {'type': 'no-info', 'function': Rule(rules.host_name, '')},
                                    'schema': {'type': 'str'},
                                },
                            },
                            'default': None,
                        },
                    },
                    'port': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {
                                'type': 'function-after',
                                'function': {'type': 'no-info', 'function': checks.port},
                                'schema': {'type': 'int'},
                            },
                            'default': 8081,
                        },
                    },
                    'router_cpus': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': _P16,
                            'default': 8,
                        },
                    },
                    'router_memory': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': _P5,
                            'default': '16Gi',
                        },
                    },
                    'proxy_cpus': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': _P16,
                            'default': 2,
                        },
                    },
                    'proxy_memory': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': _P5,
                            'default': '4Gi',
                        },
                    },
                },
                'model_name': 'Slurm',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'Slurm'},
            'ref': 'Slurm',
        },
        {
            'type': 'function-after',
            'function': {'type': 'no-info', 'function': checks.consistent_cluster},
            'schema': {
                'type': 'model',
                'cls': ClusterProfile,
                'schema': {
                    'type': 'model-fields',
                    'fields': {
                        'name': {
                            'type': 'model-field',
                            'schema': _P26,
                        },
                        'platform': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {'type': 'literal', 'expected': ['kubernetes', 'openshift', 'slurm']},
                                'default': 'kubernetes',
                            },
                        },
                        'gpus_per_node': _P19,
                        'accelerators': {'type': 'model-field', 'schema': {'type': 'definition-ref', 'schema_ref': 'Accelerators'}},
                        'storage': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {'type': 'definition-ref', 'schema_ref': 'Storage'},
                                'default_factory': _default_Storage,
                                'default_factory_takes_data': False,
                            },
                        },
                        'logging': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {'type': 'nullable', 'schema': {'type': 'definition-ref', 'schema_ref': 'Logging'}},
                                'default': None,
                            },
                        },
                        'paths': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {'type': 'definition-ref', 'schema_ref': 'Paths'},
                                'default_factory': _default_Paths,
                                'default_factory_takes_data': False,
                            },
                        },
                        'cache': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {'type': 'definition-ref', 'schema_ref': 'ClusterCache'},
                                'default_factory': _default_ClusterCache,
                                'default_factory_takes_data': False,
                            },
                        },
                        'rdma': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {'type': 'nullable', 'schema': {'type': 'definition-ref', 'schema_ref': 'Rdma'}},
                                'default': None,
                            },
                        },
                        'pod_defaults': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {'type': 'definition-ref', 'schema_ref': 'PodDefaults'},
                                'default_factory': _default_PodDefaults,
                                'default_factory_takes_data': False,
                            },
                        },
                        'fabric': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {'type': 'definition-ref', 'schema_ref': 'Fabric'},
                                'default_factory': _default_Fabric,
                                'default_factory_takes_data': False,
                            },
                        },
                        'naming': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {'type': 'definition-ref', 'schema_ref': 'Naming'},
                                'default_factory': _default_Naming,
                                'default_factory_takes_data': False,
                            },
                        },
                        'kueue': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {'type': 'nullable', 'schema': {'type': 'definition-ref', 'schema_ref': 'Kueue'}},
                                'default': None,
                            },
                        },
                        'gateway': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {'type': 'definition-ref', 'schema_ref': 'Gateway'},
                                'default_factory': _default_Gateway,
                                'default_factory_takes_data': False,
                            },
                        },
                        'openshift': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {
                                    'type': 'nullable',
                                    'schema': {'type': 'definition-ref', 'schema_ref': 'OpenShift'},
                                },
                                'default': None,
                            },
                        },
                        'llm_d': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {'type': 'definition-ref', 'schema_ref': 'LlmD'},
                                'default_factory': _default_LlmD,
                                'default_factory_takes_data': False,
                            },
                        },
                        'leaderworkerset': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {
                                    'type': 'nullable',
                                    'schema': {'type': 'definition-ref', 'schema_ref': 'LeaderWorkerSetInstall'},
                                },
                                'default': None,
                            },
                        },
                        'slurm': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {'type': 'nullable', 'schema': {'type': 'definition-ref', 'schema_ref': 'Slurm'}},
                                'default': None,
                            },
                        },
                    },
                    'model_name': 'ClusterProfile',
                    'computed_fields': [],
                },
                'custom_init': False,
                'root_model': False,
                'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'ClusterProfile'},
            },
            'ref': 'ClusterProfile',
        },
        {
            'type': 'function-after',
            'function': {'type': 'no-info', 'function': checks.one_image},
            'schema': {
                'type': 'model',
                'cls': ModelRef,
                'schema': {
                    'type': 'model-fields',
                    'fields': {
                        'id': {
                            'type': 'model-field',
                            'schema': _P30,
                        },
                        'label': _P52,
                        'image_ref': _P52,
                        'image': _P52,
                        'revision': _P33,
                        'config_json': _P33,
                    },
                    'model_name': 'ModelRef',
                    'computed_fields': [],
                },
                'custom_init': False,
                'root_model': False,
                'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'ModelRef'},
            },
            'ref': 'ModelRef',
        },
        {
            'type': 'model',
            'cls': Lws,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'size': _P81,
                    'replicas': _P81,
                    'same_topology_key': _P24,
                },
                'model_name': 'Lws',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'Lws'},
            'ref': 'Lws',
        },
        {
            'type': 'model',
            'cls': Parallelism,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'tp': _P81,
                    'pp': _P81,
                    'dp': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {
                                'type': 'function-after',
                                'function': {'type': 'no-info', 'function': checks.data_parallel},
                                'schema': {'type': 'any'},
                            },
                            'default': False,
                        },
                    },
                    'ep': _P56,
                },
                'model_name': 'Parallelism',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'Parallelism'},
            'ref': 'Parallelism',
        },
        {
            'type': 'model',
            'cls': Computed,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'env': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {
                                'type': 'function-after',
                                'function': _P59,
                                'schema': {
                                    'type': 'dict',
                                    'keys_schema': {'type': 'str'},
                                    'values_schema': {
                                        'type': 'function-after',
                                        'function': {'type': 'no-info', 'function': checks.scalar},
                                        'schema': {'type': 'any'},
                                    },
                                },
                            },
                            'default_factory': dict,
                            'default_factory_takes_data': False,
                        },
                    },
                    'vllm': _P85,
                },
                'model_name': 'Computed',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'Computed'},
            'ref': 'Computed',
        },
        {
            'type': 'model',
            'cls': Resources,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'cpu': _P4,
                    'memory': _P8,
                    'gpus': _P19,
                    'ephemeral_storage': _P8,
                    'shm_size': _P8,
                },
                'model_name': 'Resources',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'Resources'},
            'ref': 'Resources',
        },
        {
            'type': 'model',
            'cls': Profiling,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'profiler': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {'type': 'literal', 'expected': ['torch', 'cuda']},
                            'default': 'torch',
                        },
                    },
                    'torch_profiler_dir': _P52,
                    'torch_profiler_with_stack': _P87,
                    'torch_profiler_record_shapes': _P87,
                    'torch_profiler_with_memory': _P87,
                    'torch_profiler_with_flops': _P87,
                    'capture_torch_profiler': _P87,
                    'detailed_trace_annotation': _P87,
                    'ignore_frontend': _P87,
                    'delay_iterations': _P89,
                    'max_iterations': _P89,
                    'warmup_iterations': _P93,
                    'active_iterations': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {
                                'type': 'nullable',
                                'schema': {
                                    'type': 'function-after',
                                    'function': {'type': 'no-info', 'function': AtLeast(1)},
                                    'schema': {'type': 'int'},
                                },
                            },
                            'default': None,
                        },
                    },
                    'wait_iterations': _P93,
                },
                'model_name': 'Profiling',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'Profiling'},
            'ref': 'Profiling',
        },
        {
            'type': 'model',
            'cls': Role,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'name': _P54,
                    'workload_name': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {
                                'type': 'nullable',
                                'schema': _P94,
                            },
                            'default': None,
                        },
                    },
                    'workload': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {
                                'type': 'nullable',
                                'schema': {'type': 'literal', 'expected': ['deployment', 'leaderworkerset']},
                            },
                            'default': None,
                        },
                    },
                    'lws': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {'type': 'definition-ref', 'schema_ref': 'Lws'},
                            'default_factory': _default_Lws,
                            'default_factory_takes_data': False,
                        },
                    },
                    'parallelism': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {'type': 'definition-ref', 'schema_ref': 'Parallelism'},
                            'default_factory': _default_Parallelism,
                            'default_factory_takes_data': False,
                        },
                    },
                    'computed': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {'type': 'definition-ref', 'schema_ref': 'Computed'},
                            'default_factory': _default_Computed,
                            'default_factory_takes_data': False,
                        },
                    },
                    'env': _P64,
                    'vllm': _P85,
                    'vllm_raw_args': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {
                                'type': 'function-after',
                                'function': {'type': 'no-info', 'function': Each(rules.shell_fragment, '', 'items')},
                                'schema': {'type': 'list', 'items_schema': {'type': 'str'}},
                            },
                            'default_factory': list,
                            'default_factory_takes_data': False,
                        },
                    },
                    'resources': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {'type': 'definition-ref', 'schema_ref': 'Resources'},
                            'default_factory': _default_Resources,
                            'default_factory_takes_data': False,
                        },
                    },
                    'kv_transfer_config': _P58,
                    'fabric_profile': _P52,
                    'pre_launch': _P97,
                    'profiling': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {'type': 'nullable', 'schema': {'type': 'definition-ref', 'schema_ref': 'Profiling'}},
                            'default': None,
                        },
                    },
                },
                'model_name': 'Role',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'Role'},
            'ref': 'Role',
        },
        {
            'type': 'function-after',
            'function': {'type': 'no-info', 'function': checks.routing_configs},
            'schema': {
                'type': 'model',
                'cls': Routing,
                'schema': {
                    'type': 'model-fields',
                    'fields': {
                        'kind': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {'type': 'literal', 'expected': ['disabled', 'load_aware', 'pd']},
                                'default': 'disabled',
                            },
                        },
                        'target_role': _P52,
                        'frontend': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {'type': 'literal', 'expected': ['standalone', 'gateway']},
                                'default': 'standalone',
                            },
                        },
                        'plugin_config': _P58,
                        'plugin_configs': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {
                                    'type': 'nullable',
                                    'schema': {
                                        'type': 'dict',
                                        'keys_schema': {'type': 'str'},
                                        'values_schema': _P44,
                                    },
                                },
                                'default': None,
                            },
                        },
                        'plugins_config_file': _P52,
                    },
                    'model_name': 'Routing',
                    'computed_fields': [],
                },
                'custom_init': False,
                'root_model': False,
                'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'Routing'},
            },
            'ref': 'Routing',
        },
        {
            'type': 'model',
            'cls': IdleShutdown,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'enabled': _P79,
                    'timeout_minutes': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': _P16,
                            'default': 45,
                        },
                    },
                },
                'model_name': 'IdleShutdown',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'IdleShutdown'},
            'ref': 'IdleShutdown',
        },
        {
            'type': 'model',
            'cls': Runtime,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'sidecars': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {
                                'type': 'nullable',
                                'schema': {
                                    'type': 'list',
                                    'items_schema': {'type': 'literal', 'expected': ['dcgm-exporter', 'node-exporter']},
                                },
                            },
                            'default': None,
                        },
                    },
                    'idle_shutdown': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {'type': 'nullable', 'schema': {'type': 'definition-ref', 'schema_ref': 'IdleShutdown'}},
                            'default': None,
                        },
                    },
                    'vllm_env': _P52,
                    'pre_launch': _P97,
                },
                'model_name': 'Runtime',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'Runtime'},
            'ref': 'Runtime',
        },
        {
            'type': 'model',
            'cls': SpecCache,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'key': _P29,
                    'cleanup_on_crash': _P79,
                    'gpu_arch': _P29,
                },
                'model_name': 'SpecCache',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'SpecCache'},
            'ref': 'SpecCache',
        },
        {
            'type': 'model',
            'cls': Fit,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'check': _P79,
                    'short_kv_cache': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {'type': 'literal', 'expected': ['warn', 'refuse']},
                            'default': 'refuse',
                        },
                    },
                },
                'model_name': 'Fit',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'Fit'},
            'ref': 'Fit',
        },
        {
            'type': 'model',
            'cls': ModelSpec,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'release': {
                        'type': 'model-field',
                        'schema': _P94,
                    },
                    'topology': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {'type': 'literal', 'expected': ['aggregated', 'pd']},
                            'default': 'aggregated',
                        },
                    },
                    'pd_workload': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {'type': 'literal', 'expected': ['auto', 'lws-pair', 'disaggregatedset']},
                            'default': 'auto',
                        },
                    },
                    'accelerator': _P52,
                    'model': {'type': 'model-field', 'schema': {'type': 'definition-ref', 'schema_ref': 'ModelRef'}},
                    'vars': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {
                                'type': 'dict',
                                'keys_schema': {'type': 'str'},
                                'values_schema': {
                                    'type': 'function-after',
                                    'function': {'type': 'no-info', 'function': checks.number},
                                    'schema': {'type': 'any'},
                                },
                            },
                            'default_factory': dict,
                            'default_factory_takes_data': False,
                        },
                    },
                    'env': _P64,
                    'vllm': _P85,
                    'roles': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'function-after',
                            'function': {'type': 'no-info', 'function': checks.unique_roles},
                            'schema': {
                                'type': 'list',
                                'items_schema': {'type': 'definition-ref', 'schema_ref': 'Role'},
                                'min_length': 1,
                            },
                        },
                    },
                    'routing': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {'type': 'nullable', 'schema': {'type': 'definition-ref', 'schema_ref': 'Routing'}},
                            'default': None,
                        },
                    },
                    'runtime': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {'type': 'definition-ref', 'schema_ref': 'Runtime'},
                            'default_factory': _default_Runtime,
                            'default_factory_takes_data': False,
                        },
                    },
                    'cache': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {'type': 'definition-ref', 'schema_ref': 'SpecCache'},
                            'default_factory': _default_SpecCache,
                            'default_factory_takes_data': False,
                        },
                    },
                    'fit': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {'type': 'definition-ref', 'schema_ref': 'Fit'},
                            'default_factory': _default_Fit,
                            'default_factory_takes_data': False,
                        },
                    },
                },
                'model_name': 'ModelSpec',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'ModelSpec'},
            'ref': 'ModelSpec',
        },
        {
            'type': 'model',
            'cls': PluginSpec,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'type': {'type': 'model-field', 'schema': {'type': 'str'}},
                    'name': _P52,
                    'parameters': _P58,
                },
                'model_name': 'PluginSpec',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'PluginSpec'},
            'ref': 'PluginSpec',
        },
        {
            'type': 'model',
            'cls': PluginRef,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'pluginRef': {'type': 'model-field', 'schema': {'type': 'str'}},
                    'weight': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {
                                'type': 'nullable',
                                'schema': {'type': 'union', 'choices': [{'type': 'int'}, {'type': 'float'}]},
                            },
                            'default': None,
                        },
                    },
                },
                'model_name': 'PluginRef',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'PluginRef'},
            'ref': 'PluginRef',
        },
        {
            'type': 'model',
            'cls': SchedulingProfile,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'name': {'type': 'model-field', 'schema': {'type': 'str'}},
                    'plugins': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {'type': 'list', 'items_schema': {'type': 'definition-ref', 'schema_ref': 'PluginRef'}},
                            'default_factory': list,
                            'default_factory_takes_data': False,
                        },
                    },
                },
                'model_name': 'SchedulingProfile',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'SchedulingProfile'},
            'ref': 'SchedulingProfile',
        },
        {
            'type': 'function-after',
            'function': {'type': 'no-info', 'function': checks.plugin_refs},
            'schema': {
                'type': 'model',
                'cls': EndpointPickerConfig,
                'schema': {
                    'type': 'model-fields',
                    'fields': {
                        'apiVersion': {'type': 'model-field', 'schema': {'type': 'str'}},
                        'kind': {'type': 'model-field', 'schema': {'type': 'str'}},
                        'plugins': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'list',
                                'items_schema': {'type': 'definition-ref', 'schema_ref': 'PluginSpec'},
                                'min_length': 1,
                            },
                        },
                        'schedulingProfiles': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {
                                    'type': 'list',
                                    'items_schema': {'type': 'definition-ref', 'schema_ref': 'SchedulingProfile'},
                                },
                                'default_factory': list,
                                'default_factory_takes_data': False,
                            },
                        },
                        'featureGates': {
                            'type': 'model-field',
                            'schema': {'type': 'default', 'schema': {'type': 'any'}, 'default': None},
                        },
                        'saturationDetector': _P58,
                        'dataLayer': _P58,
                        'flowControl': _P58,
                        'parser': _P58,
                        'requestHandler': _P58,
                    },
                    'model_name': 'EndpointPickerConfig',
                    'computed_fields': [],
                },
                'custom_init': False,
                'root_model': False,
                'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'EndpointPickerConfig'},
            },
            'ref': 'EndpointPickerConfig',
        },
        {
            'type': 'model',
            'cls': ImageCatalog,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'vllm': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'dict',
                            'keys_schema': {'type': 'str'},
                            'values_schema': {'type': 'str'},
                            'min_length': 1,
                        },
                    },
                    'llm_d': _P66,
                    'sidecars': _P66,
                    'test': _P66,
                },
                'model_name': 'ImageCatalog',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'ImageCatalog'},
            'ref': 'ImageCatalog',
        },
        {
            'type': 'model',
            'cls': WorkloadMetadata,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'labels': _P66,
                    'annotations': _P66,
                },
                'model_name': 'WorkloadMetadata',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'WorkloadMetadata'},
            'ref': 'WorkloadMetadata',
        },
        {
            'type': 'function-after',
            'function': {'type': 'no-info', 'function': checks.indexed_job},
            'schema': {
                'type': 'model',
                'cls': JobPolicy,
                'schema': {
                    'type': 'model-fields',
                    'fields': {
                        'suspend': _P87,
                        'backoff_limit': _P101,
                        'active_deadline_seconds': _P104,
                        'ttl_seconds_after_finished': _P101,
                        'completion_mode': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {'type': 'literal', 'expected': ['NonIndexed', 'Indexed']},
                                'default': 'NonIndexed',
                            },
                        },
                        'completions': _P104,
                        'parallelism': _P101,
                    },
                    'model_name': 'JobPolicy',
                    'computed_fields': [],
                },
                'custom_init': False,
                'root_model': False,
                'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'JobPolicy'},
            },
            'ref': 'JobPolicy',
        },
        {
            'type': 'model',
            'cls': DeploymentPolicy,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'replicas': _P106,
                },
                'model_name': 'DeploymentPolicy',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'DeploymentPolicy'},
            'ref': 'DeploymentPolicy',
        },
        {
            'type': 'model',
            'cls': LeaderWorkerSetPolicy,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'size': {
                        'type': 'model-field',
                        'schema': _P15,
                    },
                    'replicas': _P106,
                },
                'model_name': 'LeaderWorkerSetPolicy',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'LeaderWorkerSetPolicy'},
            'ref': 'LeaderWorkerSetPolicy',
        },
        {
            'type': 'model',
            'cls': ServicePort,
            'schema': {
                'type': 'model-fields',
                'fields': {
                    'name': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {
                                'type': 'nullable',
                                'schema': _P53,
                            },
                            'default': None,
                        },
                    },
                    'port': {
                        'type': 'model-field',
                        'schema': _P107,
                    },
                    'target_port': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {
                                'type': 'nullable',
                                'schema': {
                                    'type': 'union',
                                    'choices': [
                                        _P107,
                                        {'type': 'str'},
                                    ],
                                },
                            },
                            'default': None,
                        },
                    },
                    'protocol': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {'type': 'literal', 'expected': ['TCP', 'UDP', 'SCTP']},
                            'default': 'TCP',
                        },
                    },
                },
                'model_name': 'ServicePort',
                'computed_fields': [],
            },
            'custom_init': False,
            'root_model': False,
            'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'ServicePort'},
            'ref': 'ServicePort',
        },
        {
            'type': 'function-after',
            'function': {'type': 'no-info', 'function': checks.service_ports},
            'schema': {
                'type': 'model',
                'cls': ServiceSpec,
                'schema': {
                    'type': 'model-fields',
                    'fields': {
                        'type': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {'type': 'literal', 'expected': ['normal', 'headless']},
                                'default': 'normal',
                            },
                        },
                        'ports': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {
                                    'type': 'list',
                                    'items_schema': {'type': 'definition-ref', 'schema_ref': 'ServicePort'},
                                },
                                'default_factory': list,
                                'default_factory_takes_data': False,
                            },
                        },
                    },
                    'model_name': 'ServiceSpec',
                    'computed_fields': [],
                },
                'custom_init': False,
                'root_model': False,
                'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'ServiceSpec'},
            },
            'ref': 'ServiceSpec',
        },
        {
            'type': 'function-after',
            'function': {'type': 'no-info', 'function': checks.consistent_workload},
            'schema': {
                'type': 'model',
                'cls': Workload,
                'schema': {
                    'type': 'model-fields',
                    'fields': {
                        'name': _P54,
                        'backend': {
                            'type': 'model-field',
                            'schema': {'type': 'literal', 'expected': ['job', 'deployment', 'leaderworkerset', 'grove']},
                        },
                        'metadata': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {'type': 'definition-ref', 'schema_ref': 'WorkloadMetadata'},
                                'default_factory': _default_WorkloadMetadata,
                                'default_factory_takes_data': False,
                            },
                        },
                        'pod_template': {
                            'type': 'model-field',
                            'schema': _P44,
                        },
                        'leader_template': _P58,
                        'accelerator_count': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': _P98,
                                'default': 0,
                            },
                        },
                        'accelerator_container': _P52,
                        'queue_name': _P52,
                        'job': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {
                                    'type': 'nullable',
                                    'schema': {'type': 'definition-ref', 'schema_ref': 'JobPolicy'},
                                },
                                'default': None,
                            },
                        },
                        'deployment': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {
                                    'type': 'nullable',
                                    'schema': {'type': 'definition-ref', 'schema_ref': 'DeploymentPolicy'},
                                },
                                'default': None,
                            },
                        },
                        'leaderworkerset': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {
                                    'type': 'nullable',
                                    'schema': {'type': 'definition-ref', 'schema_ref': 'LeaderWorkerSetPolicy'},
                                },
                                'default': None,
                            },
                        },
                        'service': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {
                                    'type': 'nullable',
                                    'schema': {'type': 'definition-ref', 'schema_ref': 'ServiceSpec'},
                                },
                                'default': None,
                            },
                        },
                    },
                    'model_name': 'Workload',
                    'computed_fields': [],
                },
                'custom_init': False,
                'root_model': False,
                'config': {'extra_fields_behavior': 'forbid', 'strict': True, 'title': 'Workload'},
            },
            'ref': 'Workload',
        },
    ]
