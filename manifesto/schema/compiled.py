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
_P5 = {'type': 'no-info', 'function': Rule(rules.resource_name, '')}
_P6 = {
    'type': 'function-after',
    'function': _P5,
    'schema': {'type': 'str'},
}
_P7 = {
    'type': 'model-field',
    'schema': _P6,
}
_P8 = {'type': 'no-info', 'function': Rule(rules.dns_subdomain, '')}
_P9 = {
    'type': 'function-after',
    'function': _P8,
    'schema': {'type': 'str'},
}
_P10 = {
    'type': 'model-field',
    'schema': _P9,
}
_P11 = {'type': 'function-after', 'function': {'type': 'no-info', 'function': checks.positive}, 'schema': {'type': 'int'}}
_P12 = {
    'type': 'function-after',
    'function': {'type': 'no-info', 'function': checks.int32},
    'schema': _P11,
}
_P13 = {
    'type': 'nullable',
    'schema': _P12,
}
_P14 = {
    'type': 'default',
    'schema': _P13,
    'default': None,
}
_P15 = {
    'type': 'model-field',
    'schema': _P14,
}
_P16 = {'type': 'no-info', 'function': Rule(rules.qualified_name, '')}
_P17 = {
    'type': 'function-after',
    'function': _P16,
    'schema': {'type': 'str'},
}
_P18 = {
    'type': 'nullable',
    'schema': _P17,
}
_P19 = {
    'type': 'default',
    'schema': _P18,
    'default': None,
}
_P20 = {
    'type': 'model-field',
    'schema': _P19,
}
_P21 = {'type': 'no-info', 'function': Rule(rules.path_segment, '')}
_P22 = {
    'type': 'function-after',
    'function': _P21,
    'schema': {'type': 'str'},
}
_P23 = {
    'type': 'nullable',
    'schema': _P22,
}
_P24 = {
    'type': 'default',
    'schema': _P23,
    'default': None,
}
_P25 = {
    'type': 'model-field',
    'schema': _P24,
}
_P26 = {
    'type': 'function-after',
    'function': {'type': 'no-info', 'function': Rule(rules.one_word, '')},
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
_P30 = {'type': 'no-info', 'function': Each(rules.label_value, 'label value ', 'values')}
_P31 = {'type': 'no-info', 'function': Each(rules.qualified_name, 'label key ', 'keys')}
_P32 = {'type': 'dict', 'keys_schema': {'type': 'str'}, 'values_schema': {'type': 'str'}}
_P33 = {
    'type': 'function-after',
    'function': _P31,
    'schema': _P32,
}
_P34 = {
    'type': 'function-after',
    'function': _P30,
    'schema': _P33,
}
_P35 = {
    'type': 'default',
    'schema': _P34,
    'default_factory': dict,
    'default_factory_takes_data': False,
}
_P36 = {
    'type': 'model-field',
    'schema': _P35,
}
_P37 = {
    'type': 'nullable',
    'schema': _P9,
}
_P38 = {
    'type': 'default',
    'schema': _P37,
    'default': None,
}
_P39 = {
    'type': 'model-field',
    'schema': _P38,
}
_P40 = {'type': 'dict', 'keys_schema': {'type': 'str'}, 'values_schema': {'type': 'any'}}
_P41 = {
    'type': 'nullable',
    'schema': _P40,
}
_P42 = {'type': 'no-info', 'function': Rule(rules.absolute_path, '')}
_P43 = {
    'type': 'function-after',
    'function': _P42,
    'schema': {'type': 'str'},
}
_P44 = {
    'type': 'nullable',
    'schema': _P43,
}
_P45 = {
    'type': 'default',
    'schema': _P44,
    'default': None,
}
_P46 = {
    'type': 'model-field',
    'schema': _P45,
}
_P47 = {'type': 'default', 'schema': {'type': 'nullable', 'schema': {'type': 'str'}}, 'default': None}
_P48 = {
    'type': 'model-field',
    'schema': _P47,
}
_P49 = {'type': 'function-after', 'function': {'type': 'no-info', 'function': checks.dns_label}, 'schema': {'type': 'str'}}
_P50 = {
    'type': 'model-field',
    'schema': _P49,
}
_P51 = {'type': 'default', 'schema': {'type': 'bool'}, 'default': False}
_P52 = {
    'type': 'model-field',
    'schema': _P51,
}
_P53 = {
    'type': 'default',
    'schema': _P41,
    'default': None,
}
_P54 = {
    'type': 'model-field',
    'schema': _P53,
}
_P55 = {'type': 'no-info', 'function': Each(rules.env_name, 'variable name ', 'keys')}
_P56 = {
    'type': 'function-before',
    'function': {'type': 'no-info', 'function': checks.env_value},
    'schema': {'type': 'str'},
}
_P57 = {
    'type': 'dict',
    'keys_schema': {'type': 'str'},
    'values_schema': _P56,
}
_P58 = {
    'type': 'function-after',
    'function': _P55,
    'schema': _P57,
}
_P59 = {
    'type': 'default',
    'schema': _P58,
    'default_factory': dict,
    'default_factory_takes_data': False,
}
_P60 = {
    'type': 'model-field',
    'schema': _P59,
}
_P61 = {
    'type': 'default',
    'schema': _P32,
    'default_factory': dict,
    'default_factory_takes_data': False,
}
_P62 = {
    'type': 'model-field',
    'schema': _P61,
}
_P63 = {'type': 'no-info', 'function': Rule(rules.label_value, '')}
_P64 = {
    'type': 'function-after',
    'function': _P63,
    'schema': _P9,
}
_P65 = {
    'type': 'function-before',
    'function': {'type': 'no-info', 'function': checks.istio_limit},
    'schema': {'type': 'nullable', 'schema': {'type': 'int'}},
}
_P66 = {
    'type': 'default',
    'schema': _P65,
    'default': None,
}
_P67 = {
    'type': 'model-field',
    'schema': _P66,
}
_P68 = {
    'type': 'default',
    'schema': {'type': 'definition-ref', 'schema_ref': 'ComponentSize'},
    'default_factory': _default_ComponentSize,
    'default_factory_takes_data': False,
}
_P69 = {
    'type': 'model-field',
    'schema': _P68,
}
_P70 = {
    'type': 'function-after',
    'function': {'type': 'no-info', 'function': Rule(rules.slurm_word, '')},
    'schema': {'type': 'str'},
}
_P71 = {
    'type': 'nullable',
    'schema': _P70,
}
_P72 = {
    'type': 'default',
    'schema': _P71,
    'default': None,
}
_P73 = {
    'type': 'model-field',
    'schema': _P72,
}
_P74 = {'type': 'default', 'schema': {'type': 'bool'}, 'default': True}
_P75 = {
    'type': 'model-field',
    'schema': _P74,
}
_P76 = {
    'type': 'default',
    'schema': _P12,
    'default': 1,
}
_P77 = {
    'type': 'model-field',
    'schema': _P76,
}
_P78 = {'type': 'no-info', 'function': Each(rules.vllm_flag_key, 'flag ', 'keys')}
_P79 = {
    'type': 'function-after',
    'function': _P78,
    'schema': _P40,
}
_P80 = {
    'type': 'default',
    'schema': _P79,
    'default_factory': dict,
    'default_factory_takes_data': False,
}
_P81 = {
    'type': 'model-field',
    'schema': _P80,
}
_P82 = {'type': 'default', 'schema': {'type': 'nullable', 'schema': {'type': 'bool'}}, 'default': None}
_P83 = {
    'type': 'model-field',
    'schema': _P82,
}
_P84 = {'type': 'default', 'schema': {'type': 'nullable', 'schema': {'type': 'int'}}, 'default': None}
_P85 = {
    'type': 'model-field',
    'schema': _P84,
}
_P86 = {'type': 'function-after', 'function': {'type': 'no-info', 'function': AtLeast(0)}, 'schema': {'type': 'int'}}
_P87 = {
    'type': 'nullable',
    'schema': _P86,
}
_P88 = {
    'type': 'default',
    'schema': _P87,
    'default': None,
}
_P89 = {
    'type': 'model-field',
    'schema': _P88,
}
_P90 = {
    'type': 'function-after',
    'function': {'type': 'no-info', 'function': checks.starts_with_letter},
    'schema': _P49,
}
_P91 = {
    'type': 'function-before',
    'function': {'type': 'no-info', 'function': checks.one_or_many},
    'schema': {'type': 'list', 'items_schema': {'type': 'str'}},
}
_P92 = {
    'type': 'default',
    'schema': _P91,
    'default_factory': list,
    'default_factory_takes_data': False,
}
_P93 = {
    'type': 'model-field',
    'schema': _P92,
}
_P94 = {
    'type': 'function-after',
    'function': {'type': 'no-info', 'function': checks.zero_or_more},
    'schema': {'type': 'int'},
}
_P95 = {
    'type': 'nullable',
    'schema': _P94,
}
_P96 = {
    'type': 'default',
    'schema': _P95,
    'default': None,
}
_P97 = {
    'type': 'model-field',
    'schema': _P96,
}
_P98 = {
    'type': 'nullable',
    'schema': _P11,
}
_P99 = {
    'type': 'default',
    'schema': _P98,
    'default': None,
}
_P100 = {
    'type': 'model-field',
    'schema': _P99,
}
_P101 = {
    'type': 'default',
    'schema': _P94,
    'default': 1,
}
_P102 = {
    'type': 'model-field',
    'schema': _P101,
}
_P103 = {
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
                    'memory': _P4,
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
                    'resource_name': _P7,
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
                    'device_class_name': _P10,
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
                    'resource_claim_template_name': _P10,
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
                        'gpus_per_node': _P15,
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
                                    'schema': _P6,
                                },
                                'default': None,
                            },
                        },
                        'presence_label': _P20,
                        'gpu_arch': _P25,
                        'torch_cuda_arch_list': _P29,
                        'node_selector': _P36,
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
                    'storage_class': _P39,
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
                        'schema': _P1,
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
                                'schema': _P41,
                            },
                            'default': None,
                        },
                    },
                    'shared_mount_path': _P46,
                    'local_nvme_path': _P46,
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
                    'pvc': _P39,
                    'mount_path': _P46,
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
                    'user_root': _P48,
                    'cache_root': _P48,
                    'log_root': _P48,
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
                    'hf_host_path': _P46,
                    'jit_host_path': _P46,
                    'hf_home': _P46,
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
                    'resource_name': _P7,
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
                    'name': _P50,
                    'mountPath': {
                        'type': 'model-field',
                        'schema': _P43,
                    },
                    'readOnly': _P52,
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
                        'shm_size': _P4,
                        'ephemeral_storage': _P4,
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
                        'working_dir': _P46,
                        'container_security_context': _P54,
                        'security_context': _P54,
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
                                    'schema': _P32,
                                },
                                'default_factory': dict,
                                'default_factory_takes_data': False,
                            },
                        },
                        'node_selector': _P36,
                        'affinity': _P54,
                        'tolerations': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {
                                    'type': 'list',
                                    'items_schema': _P40,
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
                        'dns_config': _P54,
                        'extra_devices': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {
                                    'type': 'list',
                                    'items_schema': _P43,
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
                                        'schema': _P40,
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
                    'env': _P60,
                    'computed_env': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {
                                'type': 'function-after',
                                'function': _P55,
                                'schema': _P40,
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
                        'ucx_net_devices': _P48,
                        'default_profile': _P48,
                        'expert_parallel_profiles': _P62,
                        'default_env': _P60,
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
                    'user_prefix': _P52,
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
                        'schema': _P64,
                    },
                    'priority_class': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {
                                'type': 'nullable',
                                'schema': _P64,
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
                            'schema': _P9,
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
                    'scc': _P39,
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
                    'epp': _P48,
                    'envoy': _P48,
                    'routing_sidecar': _P48,
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
                    'memory': _P4,
                    'concurrency': _P15,
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
                    'max_connections': _P67,
                    'http1_max_pending_requests': _P67,
                    'http2_max_requests': _P67,
                    'max_requests_per_connection': _P67,
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
                    'endpoint_picker': _P69,
                    'envoy': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {'type': 'definition-ref', 'schema_ref': 'EnvoySize'},
                            'default_factory': _default_EnvoySize,
                            'default_factory_takes_data': False,
                        },
                    },
                    'routing_sidecar': _P69,
                    'gateway_proxy': _P69,
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
                    'release': _P48,
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
                            'schema': _P43,
                        },
                    },
                    'read_only': _P52,
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
                    'partition': _P73,
                    'account': _P73,
                    'qos': _P73,
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
                    'exclusive': _P75,
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
                            'schema': _P12,
                            'default': 8,
                        },
                    },
                    'router_memory': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': _P1,
                            'default': '16Gi',
                        },
                    },
                    'proxy_cpus': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': _P12,
                            'default': 2,
                        },
                    },
                    'proxy_memory': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': _P1,
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
                            'schema': _P22,
                        },
                        'platform': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {'type': 'literal', 'expected': ['kubernetes', 'openshift', 'slurm']},
                                'default': 'kubernetes',
                            },
                        },
                        'gpus_per_node': _P15,
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
                            'schema': _P26,
                        },
                        'label': _P48,
                        'image_ref': _P48,
                        'image': _P48,
                        'revision': _P29,
                        'config_json': _P29,
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
                    'size': _P77,
                    'replicas': _P77,
                    'same_topology_key': _P20,
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
                    'tp': _P77,
                    'pp': _P77,
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
                    'ep': _P52,
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
                                'function': _P55,
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
                    'vllm': _P81,
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
                    'memory': _P4,
                    'gpus': _P15,
                    'ephemeral_storage': _P4,
                    'shm_size': _P4,
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
                    'torch_profiler_dir': _P48,
                    'torch_profiler_with_stack': _P83,
                    'torch_profiler_record_shapes': _P83,
                    'torch_profiler_with_memory': _P83,
                    'torch_profiler_with_flops': _P83,
                    'capture_torch_profiler': _P83,
                    'detailed_trace_annotation': _P83,
                    'ignore_frontend': _P83,
                    'delay_iterations': _P85,
                    'max_iterations': _P85,
                    'warmup_iterations': _P89,
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
                    'wait_iterations': _P89,
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
                    'name': _P50,
                    'workload_name': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': {
                                'type': 'nullable',
                                'schema': _P90,
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
                    'env': _P60,
                    'vllm': _P81,
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
                    'kv_transfer_config': _P54,
                    'fabric_profile': _P48,
                    'pre_launch': _P93,
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
                        'target_role': _P48,
                        'frontend': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {'type': 'literal', 'expected': ['standalone', 'gateway']},
                                'default': 'standalone',
                            },
                        },
                        'plugin_config': _P54,
                        'plugin_configs': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {
                                    'type': 'nullable',
                                    'schema': {
                                        'type': 'dict',
                                        'keys_schema': {'type': 'str'},
                                        'values_schema': _P40,
                                    },
                                },
                                'default': None,
                            },
                        },
                        'plugins_config_file': _P48,
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
                    'enabled': _P75,
                    'timeout_minutes': {
                        'type': 'model-field',
                        'schema': {
                            'type': 'default',
                            'schema': _P12,
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
                    'vllm_env': _P48,
                    'pre_launch': _P93,
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
                    'key': _P25,
                    'cleanup_on_crash': _P75,
                    'gpu_arch': _P25,
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
                    'check': _P75,
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
                        'schema': _P90,
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
                    'accelerator': _P48,
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
                    'env': _P60,
                    'vllm': _P81,
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
                    'name': _P48,
                    'parameters': _P54,
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
                        'saturationDetector': _P54,
                        'dataLayer': _P54,
                        'flowControl': _P54,
                        'parser': _P54,
                        'requestHandler': _P54,
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
                    'llm_d': _P62,
                    'sidecars': _P62,
                    'test': _P62,
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
                    'labels': _P62,
                    'annotations': _P62,
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
                        'suspend': _P83,
                        'backoff_limit': _P97,
                        'active_deadline_seconds': _P100,
                        'ttl_seconds_after_finished': _P97,
                        'completion_mode': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': {'type': 'literal', 'expected': ['NonIndexed', 'Indexed']},
                                'default': 'NonIndexed',
                            },
                        },
                        'completions': _P100,
                        'parallelism': _P97,
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
                    'replicas': _P102,
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
                        'schema': _P11,
                    },
                    'replicas': _P102,
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
                                'schema': _P49,
                            },
                            'default': None,
                        },
                    },
                    'port': {
                        'type': 'model-field',
                        'schema': _P103,
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
                                        _P103,
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
                        'name': _P50,
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
                            'schema': _P40,
                        },
                        'leader_template': _P54,
                        'accelerator_count': {
                            'type': 'model-field',
                            'schema': {
                                'type': 'default',
                                'schema': _P94,
                                'default': 0,
                            },
                        },
                        'accelerator_container': _P48,
                        'queue_name': _P48,
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
