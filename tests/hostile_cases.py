"""The hostile-input corpus for rendering (issue 10, classes 1, 2 and 4), in one table.

Each ``Case`` writes ``spec.yaml`` and ``cluster.yaml`` (or names a bundled one) into a
scratch directory and runs the CLI there, so messages carry stable relative origins.
``REFUSED`` cases must fail with exactly ``expected`` (the whole stderr); ``ACCEPTED``
cases hold hostile-looking values that are legal and must render to an artifact that
passes the Kubernetes schemas or ``bash -n`` and shellcheck, with the value quoted.

Builders keep the YAML short: ``spec()`` is a one-role direct-serving spec, ``k8s()`` and
``slurm()`` minimal cluster profiles; each takes text spliced in at a fixed place.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Case", "REFUSED", "ACCEPTED", "spec", "k8s", "slurm"]

K8S_CLUSTER = "cluster.yaml"


@dataclass(frozen=True)
class Case:
    id: str
    spec: str  # YAML text for spec.yaml, or a bundled spec name
    cluster: str  # YAML text for cluster.yaml, or a bundled cluster name
    expected: str = ""  # the whole stderr without its trailing newline (REFUSED only)
    flags: tuple[str, ...] = ("--user", "u", "--namespace", "ns")
    env: dict = field(default_factory=dict)


def spec(role: str = "", top: str = "", release: str = "demo", model: str = "") -> str:
    """One role ``decode``; ``role`` lines are indented 4 spaces, ``top`` lines are top-level."""
    return (f"release: {release}\nmodel:\n  id: Qwen/Qwen3-0.6B\n{model}{top}roles:\n"
            f"  - name: decode\n{role}")


def routed(role: str = "", routing: str = "", roles: str = "") -> str:
    return (f"release: demo\nmodel:\n  id: Qwen/Qwen3-0.6B\nrouting:\n  kind: load_aware\n"
            f"  target_role: decode\n{routing}roles:\n  - name: decode\n{role}{roles}")


def k8s(accel: str = "", pod: str = "", top: str = "", alloc: str = "extended_resource:\n"
        "          resource_name: nvidia.com/gpu\n") -> str:
    return (f"name: hostile\naccelerators:\n  default: b200\n  profiles:\n    b200:\n      gpus_per_node: 8\n"
            f"      allocation:\n        {alloc}{accel}pod_defaults:\n  shm_size: 2Gi\n{pod}{top}")


def slurm(opts: str = "", top: str = "", gres: str = "gpu") -> str:
    return (f"name: hostile-slurm\nplatform: slurm\nslurm:\n  binds:\n    - {{source: /shared, target: /shared}}\n"
            f"{opts}accelerators:\n  default: b200\n  profiles:\n    b200:\n      gpus_per_node: 8\n"
            f"      allocation:\n        slurm: {{gres: '{gres}'}}\n{top}")


LONG = "a" + "b" * 55  # a valid release or role name that makes derived names too long
DNS = "must be a DNS label: lowercase letters, digits and '-', starting and ending with a letter or digit"
SUBDOMAIN = "must be a DNS subdomain: dot-separated parts of lowercase letters, digits and '-', starting and " \
            "ending with a letter or digit"
QUALIFIED = ("must be a qualified name: an optional DNS-subdomain prefix and '/', then letters, digits, '-', "
             "'_' or '.', starting and ending with a letter or digit")
ENV = ("is not a valid environment variable name: use letters, digits and '_', not starting with a digit (the "
       "name is also exported by shell scripts)")
ABS = "must be an absolute path (starting with '/')"
SEGMENT = ("must be a single path segment: letters, digits, '.', '_' or '-', starting with a letter or digit "
           "(no '/' or '..')")
ONE_LINE = "must be one line (no line breaks or tabs)"
SLURM_WORD = "may only hold letters, digits, '_', '.', '-' and ',' (it reaches an #SBATCH line)"
RECURSIVE = "this alias points back at the anchor '&{}' of a node that contains it; a value cannot contain itself"
INT32 = "is too large: Kubernetes counts are 32-bit (at most 2147483647)"
RAW = "roles[0].vllm_raw_args[0]: "

REFUSED: list[Case] = []
ACCEPTED: list[Case] = []


def refused(id: str, spec_text: str, cluster_text: str, expected: str, **kw) -> None:
    REFUSED.append(Case(id, spec_text, cluster_text, expected, **kw))


def accepted(id: str, spec_text: str, cluster_text: str, **kw) -> None:
    ACCEPTED.append(Case(id, spec_text, cluster_text, **kw))


# ---- class 1: Kubernetes validity -----------------------------------------------------------------

refused("release-makes-names-too-long", spec(release=LONG), k8s(),
        "error: spec.yaml:1:1: release: makes a Deployment name too long by 7 characters: 'abbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb-idle-shutdown' has 70 characters (at most 63); shorten release")
refused("role-name-makes-service-name-too-long", spec().replace("name: decode", f"name: {LONG}"), k8s(),
        "error: spec.yaml:5:5: roles[0].name: makes a Service name too long by 3 characters: 'demo-abbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb-http' has 66 characters (at most 63); shorten release or roles[0].name")
refused("workload-name-makes-lws-pod-names-too-long",
        spec(f"    workload_name: {LONG}xx\n    lws: {{size: 2, replicas: 1000}}\n    parallelism: {{tp: 16}}\n"),
        k8s(),
        "error: spec.yaml:6:5: roles[0].workload_name: workload_name 'abbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbxx' makes LeaderWorkerSet abbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbxx (58 characters); the StatefulSet controller labels each pod controller-revision-hash=<StatefulSet>-<hash of up to 10 characters> in 63, so with 1000 groups of 2 pods a LeaderWorkerSet name may have at most 48 characters (LeaderWorkerSet v0.10.0). roles[0].workload_name may have at most 48 characters (it has 58)")
refused("release-starts-with-digit", spec(release="1demo"), k8s(),
        "error: spec.yaml:1:1: release: '1demo' must start with a letter: it begins the names of Services, which are DNS-1035 labels")
refused("workload-name-starts-with-digit", spec("    workload_name: 9lives\n"), k8s(),
        "error: spec.yaml:6:5: roles[0].workload_name: '9lives' must start with a letter: it begins the names of Services, which are DNS-1035 labels")
refused("release-uppercase", spec(release="Demo"), k8s(),
        "error: spec.yaml:1:1: release: 'Demo' must be a DNS label: lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters")
refused("two-roles-one-workload-name",
        spec("    workload_name: shared\n  - name: other\n    workload_name: shared\n"), k8s(),
        "error: spec.yaml:8:5: roles[1].workload_name: gives a second Service named 'shared-http' (another object of the instance has that name); choose a different roles[1].workload_name")
refused("role-named-like-idle-controller", spec("  - name: idle-shutdown\n"), k8s(),
        "error: spec.yaml:6:5: roles[1].name: gives a second Deployment named 'demo-idle-shutdown' (another object of the instance has that name); choose a different roles[1].name")
refused("role-named-like-endpoint-picker", routed(roles="  - name: infpool-epp\n"), k8s(),
        "error: spec.yaml:9:5: roles[1].name: gives a second Deployment named 'demo-infpool-epp' (another object of the instance has that name); choose a different roles[1].name")
refused("replicas-over-int32", spec("    lws: {replicas: 3000000000}\n"), k8s(),
        'error: spec.yaml:6:11: roles[0].lws.replicas: 3000000000 is too large: Kubernetes counts are 32-bit (at most 2147483647)')
refused("tp-over-int32", spec("    parallelism: {tp: 4294967296}\n"), k8s(),
        'error: spec.yaml:6:19: roles[0].parallelism.tp: 4294967296 is too large: Kubernetes counts are 32-bit (at most 2147483647)')
refused("dp-over-int32", spec("    parallelism: {dp: 4294967296}\n"), k8s(),
        'error: spec.yaml:6:19: roles[0].parallelism.dp: 4294967296 is too large: Kubernetes counts are 32-bit (at most 2147483647)')
refused("gpus-per-node-over-int32", spec(), k8s().replace("gpus_per_node: 8", "gpus_per_node: 9999999999"),
        'error: cluster.yaml:6:7: accelerators.profiles.b200.gpus_per_node: 9999999999 is too large: Kubernetes counts are 32-bit (at most 2147483647)')
refused("idle-timeout-over-int32", spec(top="runtime:\n  idle_shutdown: {timeout_minutes: 99999999999}\n"),
        k8s(),
        'error: spec.yaml:5:19: runtime.idle_shutdown.timeout_minutes: 99999999999 is too large: Kubernetes counts are 32-bit (at most 2147483647)')
refused("namespace-flag-invalid", spec(), k8s(),
        "error: --namespace 'Bad_NS' must be a DNS label: lowercase letters, digits and '-', starting and ending with a letter or digit", flags=("--user", "u", "--namespace", "Bad_NS"))
refused("namespace-flag-too-long", spec(), k8s(),
        "error: --namespace 'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn' must be at most 63 characters (it has 64)", flags=("--user", "u", "--namespace", "n" * 64))
refused("namespace-env-invalid", spec(), k8s(),
        "error: MANIFESTO_NAMESPACE 'a.b' must be a DNS label: lowercase letters, digits and '-', starting and ending with a letter or digit", flags=("--user", "u"), env={"MANIFESTO_NAMESPACE": "a.b"})
refused("env-name-with-equals", spec("    env: {'A=B': x}\n"), k8s(),
        "error: spec.yaml:6:11: roles[0].env.A=B: variable name 'A=B' is not a valid environment variable name: use letters, digits and '_', not starting with a digit (the name is also exported by shell scripts)")
refused("env-name-non-ascii", spec("    env: {'NAMÉ': x}\n"), k8s(),
        "error: spec.yaml:6:11: roles[0].env.NAMÉ: variable name 'NAMÉ' is not a valid environment variable name: use letters, digits and '_', not starting with a digit (the name is also exported by shell scripts)")
refused("env-name-empty", spec("    env: {'': x}\n"), k8s(),
        "error: spec.yaml:6:11: roles[0].env.: variable name '' is not a valid environment variable name: use letters, digits and '_', not starting with a digit (the name is also exported by shell scripts)")
refused("env-name-starts-with-digit-in-cluster", spec(), k8s(top="fabric:\n  default_env: {1X: y}\n"),
        "error: cluster.yaml:13:17: fabric.default_env.1X: variable name '1X' is not a valid environment variable name: use letters, digits and '_', not starting with a digit (the name is also exported by shell scripts)")
refused("computed-env-name-invalid", spec("    computed:\n      env: {'MY-VAR': '2'}\n"), k8s(),
        "error: spec.yaml:7:13: roles[0].computed.env.MY-VAR: variable name 'MY-VAR' is not a valid environment variable name: use letters, digits and '_', not starting with a digit (the name is also exported by shell scripts)")
refused("fabric-computed-env-name-invalid", spec(),
        k8s(top="fabric:\n  default_profile: p\n  profiles:\n    p:\n      computed_env: {'A B': '1'}\n"),
        "error: cluster.yaml:16:22: fabric.profiles.p.computed_env.A B: variable name 'A B' is not a valid environment variable name: use letters, digits and '_', not starting with a digit (the name is also exported by shell scripts)")
refused("nul-in-model-id", spec().replace("Qwen/Qwen3-0.6B", '"Qwen/Qwen3\\0-0.6B"'), k8s(),
        "error: spec.yaml:3:3: model.id: 'Qwen/Qwen3\\x00-0.6B' contains the control character U+0000")
refused("escape-char-in-env-value", spec("    env: {TERM_TITLE: \"\\e]0;pwned\\a\"}\n"), k8s(),
        "error: spec.yaml:6:11: roles[0].env.TERM_TITLE: '\\x1b]0;pwned\\x07' contains the control character U+001B")
refused("line-separator-in-model-label", spec(model='  label: "qwen\\Lsmall"\n'), k8s(),
        "error: spec.yaml:4:3: model.label: 'qwen\\u2028small' contains the control character U+2028")
refused("bom-in-revision", spec(model='  revision: "main\\uFEFF"\n'), k8s(),
        "error: spec.yaml:4:3: model.revision: 'main\\ufeff' contains the control character U+FEFF")
refused("del-in-image", spec(model='  image: "vllm/vllm-openai:v1\\x7f"\n'), k8s(),
        "error: spec.yaml:4:3: model.image: 'vllm/vllm-openai:v1\\x7f' contains the control character U+007F")
refused("newline-in-model-id", spec().replace("Qwen/Qwen3-0.6B", '"Qwen/Qwen3-0.6B\\nkind: Secret"'), k8s(),
        "error: spec.yaml:3:3: model.id: 'Qwen/Qwen3-0.6B\\nkind: Secret' must be one line (no line breaks or tabs)")
refused("nul-in-env-key", spec("    env: {\"A\\0\": x}\n"), k8s(),
        "error: spec.yaml:6:11: roles[0].env.A\\x00: key 'A\\x00' contains the control character U+0000")
refused("node-selector-key-invalid", spec(), k8s(pod="  node_selector: {'bad key!': x}\n"),
        "error: cluster.yaml:12:19: pod_defaults.node_selector.bad key!: label key 'bad key!' must be a qualified name: an optional DNS-subdomain prefix and '/', then letters, digits, '-', '_' or '.', starting and ending with a letter or digit")
refused("node-selector-value-invalid", spec(), k8s(pod="  node_selector: {kubernetes.io/arch: 'amd 64'}\n"),
        "error: cluster.yaml:12:19: pod_defaults.node_selector.kubernetes.io/arch: label value 'amd 64' must be a label value: empty, or letters, digits, '-', '_' or '.', starting and ending with a letter or digit")
refused("node-selector-prefix-invalid", spec(), k8s(pod="  node_selector: {'Example.COM/x': y}\n"),
        "error: cluster.yaml:12:19: pod_defaults.node_selector.Example.COM/x: label key 'Example.COM/x' has an invalid prefix 'Example.COM': it must be a DNS subdomain such as example.com")
refused("accelerator-node-selector-value-too-long", spec(),
        k8s(accel=f"      node_selector: {{pool: {'x' * 64}}}\n"),
        "error: cluster.yaml:10:23: accelerators.profiles.b200.node_selector.pool: label value 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' must be at most 63 characters (it has 64)")
refused("annotation-key-invalid", spec(), k8s(pod="  annotations: {'a b': x}\n"),
        "error: cluster.yaml:12:17: pod_defaults.annotations.a b: annotation key 'a b' must be a qualified name: an optional DNS-subdomain prefix and '/', then letters, digits, '-', '_' or '.', starting and ending with a letter or digit")
refused("presence-label-invalid", spec(), k8s(accel="      presence_label: 'nvidia.com/gpu present'\n"),
        "error: cluster.yaml:10:7: accelerators.profiles.b200.presence_label: 'nvidia.com/gpu present' must be a qualified name: an optional DNS-subdomain prefix and '/', then letters, digits, '-', '_' or '.', starting and ending with a letter or digit")
refused("kueue-queue-invalid", spec(), k8s(top="kueue: {local_queue: 'Team Queue'}\n"),
        "error: cluster.yaml:12:9: kueue.local_queue: 'Team Queue' must be a DNS subdomain: dot-separated parts of lowercase letters, digits and '-', starting and ending with a letter or digit")
refused("kueue-priority-class-too-long", spec(), k8s(top=f"kueue: {{local_queue: q, priority_class: {'p' * 70}}}\n"),
        "error: cluster.yaml:12:25: kueue.priority_class: 'pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp' must be at most 63 characters (it has 70)")
refused("pull-secret-name-invalid", spec(), k8s(pod="  image_pull_secrets: [My_Secret]\n"),
        "error: cluster.yaml:12:24: pod_defaults.image_pull_secrets[0]: 'My_Secret' must be a DNS subdomain: dot-separated parts of lowercase letters, digits and '-', starting and ending with a letter or digit")
refused("dns-policy-unknown", spec(), k8s(pod="  dns_policy: Cluster\n"),
        "error: cluster.yaml:12:3: pod_defaults.dns_policy: 'Cluster' is not allowed; expected 'ClusterFirst', 'ClusterFirstWithHostNet', 'Default' or 'None'")
refused("grace-period-negative", spec(), k8s(pod="  termination_grace_period_seconds: -5\n"),
        'error: cluster.yaml:12:3: pod_defaults.termination_grace_period_seconds: must not be negative, got -5')
refused("grace-period-over-int32", spec(), k8s(pod="  termination_grace_period_seconds: 9999999999\n"),
        'error: cluster.yaml:12:3: pod_defaults.termination_grace_period_seconds: 9999999999 is too large: Kubernetes counts are 32-bit (at most 2147483647)')
refused("extended-resource-without-domain", spec(), k8s(alloc="extended_resource:\n          resource_name: gpu\n"),
        "error: cluster.yaml:9:11: accelerators.profiles.b200.allocation.extended_resource.resource_name: 'gpu' must be an extended resource name with a domain prefix, such as nvidia.com/gpu")
refused("extended-resource-with-space", spec(),
        k8s(alloc="extended_resource:\n          resource_name: 'nvidia.com/g pu'\n"),
        "error: cluster.yaml:9:11: accelerators.profiles.b200.allocation.extended_resource.resource_name: 'nvidia.com/g pu' must be a qualified name: an optional DNS-subdomain prefix and '/', then letters, digits, '-', '_' or '.', starting and ending with a letter or digit")
refused("rdma-resource-invalid", spec(), k8s(top="rdma: {resource_name: 'rdma/ib;x'}\n"),
        "error: cluster.yaml:12:8: rdma.resource_name: 'rdma/ib;x' must be a qualified name: an optional DNS-subdomain prefix and '/', then letters, digits, '-', '_' or '.', starting and ending with a letter or digit")
refused("dra-device-class-invalid", spec(), k8s(alloc="dra:\n          device_class_name: GPU_Class\n"),
        "error: cluster.yaml:9:11: accelerators.profiles.b200.allocation.dra.device_class_name: 'GPU_Class' must be a DNS subdomain: dot-separated parts of lowercase letters, digits and '-', starting and ending with a letter or digit")
refused("compute-domain-claim-invalid", spec(),
        k8s(accel="      compute_domain: {resource_claim_template_name: 'imex channel'}\n"),
        "error: cluster.yaml:10:24: accelerators.profiles.b200.compute_domain.resource_claim_template_name: 'imex channel' must be a DNS subdomain: dot-separated parts of lowercase letters, digits and '-', starting and ending with a letter or digit")
refused("shared-claim-name-invalid", spec(),
        k8s(top="storage:\n  shared_volume: {persistentVolumeClaim: {claimName: Model_Cache}}\n"
            "  shared_mount_path: /mnt/shared\n"),
        "error: cluster.yaml:13:43: storage.shared_volume.persistentVolumeClaim.claimName: 'Model_Cache' must be a DNS subdomain: dot-separated parts of lowercase letters, digits and '-', starting and ending with a letter or digit")
refused("logging-pvc-invalid", spec(), k8s(top="logging: {pvc: 'logs!', mount_path: /logs, root: /logs}\n"),
        "error: cluster.yaml:12:11: logging.pvc: 'logs!' must be a DNS subdomain: dot-separated parts of lowercase letters, digits and '-', starting and ending with a letter or digit")
refused("shared-mount-path-relative", spec(),
        k8s(top="storage:\n  shared_volume: {persistentVolumeClaim: {claimName: cache}}\n"
            "  shared_mount_path: mnt/shared\n"),
        "error: cluster.yaml:14:3: storage.shared_mount_path: 'mnt/shared' must be an absolute path (starting with '/')")
refused("local-nvme-path-relative", spec(), k8s(top="storage: {local_nvme_path: nvme}\n"),
        "error: cluster.yaml:12:11: storage.local_nvme_path: 'nvme' must be an absolute path (starting with '/')")
refused("logging-mount-path-relative", spec(), k8s(top="logging: {pvc: logs, mount_path: logs, root: /logs}\n"),
        "error: cluster.yaml:12:22: logging.mount_path: 'logs' must be an absolute path (starting with '/')")
refused("extra-device-relative", spec(), k8s(pod="  extra_devices: [dev/infiniband]\n"),
        "error: cluster.yaml:12:19: pod_defaults.extra_devices[0]: 'dev/infiniband' must be an absolute path (starting with '/')")
refused("working-dir-relative", spec(), k8s(pod="  working_dir: workspace\n"),
        "error: cluster.yaml:12:3: pod_defaults.working_dir: 'workspace' must be an absolute path (starting with '/')")
refused("hf-host-path-relative", spec(), k8s(top="cache: {hf_host_path: hf}\n"),
        "error: cluster.yaml:12:9: cache.hf_host_path: 'hf' must be an absolute path (starting with '/')")
refused("topology-key-invalid", spec("    lws: {size: 2, same_topology_key: 'nvidia.com/gpu clique'}\n"
                                     "    parallelism: {tp: 16}\n"), k8s(),
        "error: spec.yaml:6:20: roles[0].lws.same_topology_key: 'nvidia.com/gpu clique' must be a qualified name: an optional DNS-subdomain prefix and '/', then letters, digits, '-', '_' or '.', starting and ending with a letter or digit")
refused("gateway-class-invalid", spec(), k8s(top="gateway: {class_name: Istio_GW}\n"),
        "error: cluster.yaml:12:11: gateway.class_name: 'Istio_GW' must be a DNS subdomain: dot-separated parts of lowercase letters, digits and '-', starting and ending with a letter or digit")
refused("access-mode-unknown", spec(),
        k8s(top="storage:\n  shared_claim: {size: 1Ti, access_modes: [ReadWriteAll]}\n"),
        "error: cluster.yaml:13:44: storage.shared_claim.access_modes[0]: 'ReadWriteAll' is not allowed; expected 'ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany' or 'ReadWriteOncePod'")
refused("accelerator-name-with-slash", spec(),
        k8s().replace("default: b200", "default: b/200").replace("    b200:", "    b/200:"),
        "error: cluster.yaml:5:5: accelerators.profiles.b/200: accelerator name 'b/200' must be a single path segment: letters, digits, '.', '_' or '-', starting with a letter or digit (no '/' or '..')")
refused("cluster-name-path", spec(), k8s().replace("name: hostile", "name: ../hostile"),
        "error: cluster.yaml:1:1: name: '../hostile' must be a single path segment: letters, digits, '.', '_' or '-', starting with a letter or digit (no '/' or '..')")
refused("openshift-scc-invalid", spec(), k8s(top="platform: openshift\nopenshift: {scc: 'any uid'}\n"),
        "error: cluster.yaml:13:13: openshift.scc: 'any uid' must be a DNS subdomain: dot-separated parts of lowercase letters, digits and '-', starting and ending with a letter or digit")
refused("gateway-name-too-long-for-class",
        routed(routing="  frontend: gateway\n").replace("release: demo", f"release: a{'b' * 40}"),
        k8s(top=f"gateway: {{class_name: {'c' * 20}}}\n"),
        "error: spec.yaml:1:1: release: makes a Gateway name too long by 7 characters: gateway class 'cccccccccccccccccccc' names generated objects '<gateway>-<class>', so the name may have at most 42 characters (it has 49); shorten release")

# ---- class 2: values that reach a shell script ------------------------------------------------------

refused("partition-newline-injects-sbatch-option", spec(),
        slurm('  partition: "gpu\\n#SBATCH --wrap=touch /tmp/pwned"\n'),
        "error: cluster.yaml:6:3: slurm.partition: 'gpu\\n#SBATCH --wrap=touch /tmp/pwned' must be one line (no line breaks or tabs)")
refused("partition-command-separator", spec(), slurm("  partition: 'gpu;touch /tmp/pwned'\n"),
        "error: cluster.yaml:6:3: slurm.partition: 'gpu;touch /tmp/pwned' may only hold letters, digits, '_', '.', '-' and ',' (it reaches an #SBATCH line)")
refused("account-command-substitution", spec(), slurm("  account: '$(touch /tmp/pwned)'\n"),
        "error: cluster.yaml:6:3: slurm.account: '$(touch /tmp/pwned)' may only hold letters, digits, '_', '.', '-' and ',' (it reaches an #SBATCH line)")
refused("qos-backtick", spec(), slurm("  qos: '`id`'\n"),
        "error: cluster.yaml:6:3: slurm.qos: '`id`' may only hold letters, digits, '_', '.', '-' and ',' (it reaches an #SBATCH line)")
refused("qos-space-splits-option", spec(), slurm("  qos: 'normal --wrap=id'\n"),
        "error: cluster.yaml:6:3: slurm.qos: 'normal --wrap=id' may only hold letters, digits, '_', '.', '-' and ',' (it reaches an #SBATCH line)")
refused("constraint-space", spec(), slurm("  constraint: 'a100 --wrap=id'\n"),
        "error: cluster.yaml:6:3: slurm.constraint: 'a100 --wrap=id' may only hold feature names and the operators & | , * [ ] ( ) ! : (no spaces; it reaches an #SBATCH line)")
refused("time-newline", spec(), slurm('  time: "01:00:00\\n#SBATCH --wrap=id"\n'),
        "error: cluster.yaml:6:3: slurm.time: '01:00:00\\n#SBATCH --wrap=id' must be one line (no line breaks or tabs)")
refused("time-not-a-duration", spec(), slurm("  time: '1 day'\n"),
        "error: cluster.yaml:6:3: slurm.time: '1 day' is not a Slurm time limit: use minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or UNLIMITED")
refused("gres-newline", spec(), slurm(gres="gpu\\n#SBATCH --wrap=id").replace("'gpu\\n", '"gpu\\n')
        .replace("--wrap=id'", '--wrap=id"'),
        "error: cluster.yaml:12:17: accelerators.profiles.b200.allocation.slurm.gres: 'gpu\\n#SBATCH --wrap=id' must be one line (no line breaks or tabs)")
refused("gres-space", spec(), slurm(gres="gpu h100"),
        "error: cluster.yaml:12:17: accelerators.profiles.b200.allocation.slurm.gres: 'gpu h100' must be a GRES name, optionally typed (gpu or gpu:h100); the count is derived")
refused("gres-two-types", spec(), slurm(gres="gpu:h100:8"),
        "error: cluster.yaml:12:17: accelerators.profiles.b200.allocation.slurm.gres: 'gpu:h100:8' must be a GRES name, optionally typed (gpu or gpu:h100); the count is derived")
refused("ssh-host-option-injection", spec(), slurm("  ssh_host: '-oProxyCommand=touch /tmp/pwned'\n"),
        "error: cluster.yaml:6:3: slurm.ssh_host: '-oProxyCommand=touch /tmp/pwned' must be a host name or user@host (no spaces, not starting with '-')")
refused("bind-target-with-comma", spec(),
        slurm().replace("{source: /shared, target: /shared}", "{source: /shared, target: '/a,/etc'}"),
        "error: cluster.yaml:5:25: slurm.binds[0].target: '/a,/etc' must be a path without ',', ':' or spaces (they separate container bind entries)")
refused("bind-target-relative", spec(), slurm().replace("target: /shared}", "target: shared}"),
        "error: cluster.yaml:5:25: slurm.binds[0].target: 'shared' must be an absolute path (starting with '/')")
refused("bind-source-with-colon", spec(), slurm().replace("{source: /shared,", "{source: '/a:/etc',"),
        "error: cluster.yaml:5:8: slurm.binds[0].source: '/a:/etc' must be a path without ',', ':' or spaces (they separate container bind entries)")
refused("slurm-port-out-of-range", spec(), slurm("  port: 70000\n"),
        'error: cluster.yaml:6:3: slurm.port: 70000 is not a TCP port (1-65535)')
refused("env-key-command-substitution-on-slurm", spec("    env: {'X$(touch /tmp/pwned)': y}\n"), slurm(),
        "error: spec.yaml:6:11: roles[0].env.X$(touch /tmp/pwned): variable name 'X$(touch /tmp/pwned)' is not a valid environment variable name: use letters, digits and '_', not starting with a digit (the name is also exported by shell scripts)")
refused("env-key-semicolon", spec("    env: {'A;touch /tmp/pwned;B': y}\n"), k8s(),
        "error: spec.yaml:6:11: roles[0].env.A;touch /tmp/pwned;B: variable name 'A;touch /tmp/pwned;B' is not a valid environment variable name: use letters, digits and '_', not starting with a digit (the name is also exported by shell scripts)")
refused("topology-key-newline-on-slurm", spec('    lws: {same_topology_key: "a\\nb"}\n'), slurm(),
        "error: spec.yaml:6:11: roles[0].lws.same_topology_key: 'a\\nb' must be one line (no line breaks or tabs)")
refused("vllm-key-with-command", spec("    vllm: {'max-num-seqs 1; touch /tmp/pwned': 1}\n"), k8s(),
        "error: spec.yaml:6:12: roles[0].vllm.max-num-seqs 1; touch /tmp/pwned: flag 'max-num-seqs 1; touch /tmp/pwned' is not a vLLM flag name: letters, digits, '_' and '-', with '.' only between parts of a JSON config key")
refused("computed-vllm-key-invalid", spec("    computed:\n      vllm: {'a b': '1'}\n"), k8s(),
        "error: spec.yaml:7:14: roles[0].computed.vllm.a b: flag 'a b' is not a vLLM flag name: letters, digits, '_' and '-', with '.' only between parts of a JSON config key")
refused("revision-with-space", spec(model="  revision: 'main --trust-remote-code'\n"), k8s(),
        "error: spec.yaml:4:3: model.revision: 'main --trust-remote-code' must be one word, without spaces or line breaks")
refused("raw-arg-semicolon", spec("    vllm_raw_args: ['--x 1; touch /tmp/pwned']\n"), slurm(),
        "error: spec.yaml:6:21: roles[0].vllm_raw_args[0]: '--x 1; touch /tmp/pwned' contains the shell operator ';' outside quotes; quote it or pass it through vllm:")
refused("raw-arg-unbalanced-single-quote", spec("    vllm_raw_args: [\"--x='a\"]\n"), slurm(),
        "error: spec.yaml:6:21: roles[0].vllm_raw_args[0]: '--x='a' has an unbalanced single quote")
refused("raw-arg-unbalanced-double-quote", spec("    vllm_raw_args: ['--x=\"a']\n"), k8s(),
        'error: spec.yaml:6:21: roles[0].vllm_raw_args[0]: \'--x="a\' has an unbalanced double quote')
refused("raw-arg-command-substitution", spec("    vllm_raw_args: ['--x=$(touch /tmp/pwned)']\n"), slurm(),
        "error: spec.yaml:6:21: roles[0].vllm_raw_args[0]: '--x=$(touch /tmp/pwned)' runs a command substitution ('$('); compute the value in vllm: instead")
refused("raw-arg-command-substitution-in-double-quotes",
        spec("    vllm_raw_args: ['--x=\"$(touch /tmp/pwned)\"']\n"), k8s(),
        'error: spec.yaml:6:21: roles[0].vllm_raw_args[0]: \'--x="$(touch /tmp/pwned)"\' runs a command substitution (\'$(\'); compute the value in vllm: instead')
refused("raw-arg-backtick", spec("    vllm_raw_args: ['--x=`id`']\n"), k8s(),
        "error: spec.yaml:6:21: roles[0].vllm_raw_args[0]: '--x=`id`' runs a command substitution ('`'); compute the value in vllm: instead")
refused("raw-arg-pipe", spec("    vllm_raw_args: ['--x | tee /tmp/pwned']\n"), k8s(),
        "error: spec.yaml:6:21: roles[0].vllm_raw_args[0]: '--x | tee /tmp/pwned' contains the shell operator '|' outside quotes; quote it or pass it through vllm:")
refused("raw-arg-background", spec("    vllm_raw_args: ['--x & touch /tmp/pwned']\n"), k8s(),
        "error: spec.yaml:6:21: roles[0].vllm_raw_args[0]: '--x & touch /tmp/pwned' contains the shell operator '&' outside quotes; quote it or pass it through vllm:")
refused("raw-arg-redirect", spec("    vllm_raw_args: ['--x >/tmp/pwned']\n"), k8s(),
        "error: spec.yaml:6:21: roles[0].vllm_raw_args[0]: '--x >/tmp/pwned' contains the shell operator '>' outside quotes; quote it or pass it through vllm:")
refused("raw-arg-closes-array", spec("    vllm_raw_args: [')']\n"), slurm(),
        "error: spec.yaml:6:21: roles[0].vllm_raw_args[0]: ')' contains the shell operator ')' outside quotes; quote it or pass it through vllm:")
refused("raw-arg-comment", spec("    vllm_raw_args: ['# )']\n"), k8s(),
        "error: spec.yaml:6:21: roles[0].vllm_raw_args[0]: '# )' starts a shell comment ('#') outside quotes; quote it")
refused("raw-arg-trailing-backslash", spec("    vllm_raw_args: ['--x \\']\n"), k8s(),
        "error: spec.yaml:6:21: roles[0].vllm_raw_args[0]: '--x \\' ends with a backslash")
refused("raw-arg-newline", spec('    vllm_raw_args: ["--x\\ntouch /tmp/pwned"]\n'), slurm(),
        "error: spec.yaml:6:21: roles[0].vllm_raw_args[0]: '--x\\ntouch /tmp/pwned' must be one line (no line breaks or tabs)")

# ---- class 4: semantically wrong values ------------------------------------------------------------

refused("nan-in-vllm", spec("    vllm: {gpu_memory_utilization: .nan}\n"), k8s(),
        'error: spec.yaml:6:12: roles[0].vllm.gpu_memory_utilization: expected a finite number, got .nan')
refused("infinity-in-vllm-json", spec(top="vllm:\n  speculative_config: {num_speculative_tokens: .inf}\n"),
        k8s(),
        'error: spec.yaml:5:24: vllm.speculative_config.num_speculative_tokens: expected a finite number, got .inf')
refused("negative-infinity-in-kv-transfer-config",
        spec("    kv_transfer_config: {kv_connector: NixlConnector, kv_buffer_size: -.inf}\n"), k8s(),
        'error: spec.yaml:6:55: roles[0].kv_transfer_config.kv_buffer_size: expected a finite number, got -.inf')
refused("nan-in-cluster-affinity", spec(), k8s(pod="  affinity: {weight: .NaN}\n"),
        'error: cluster.yaml:12:14: pod_defaults.affinity.weight: expected a finite number, got .nan')
refused("computed-fraction-for-integer-flag",
        spec("    computed:\n      vllm: {max_num_seqs: max_concurrency / 3}\n",
             top="vars: {max_concurrency: 256}\n"), k8s(),
        "error: spec.yaml:8:14: roles[0].computed.vllm.max_num_seqs: the expression 'max_concurrency / 3' gives 85.33333333333333, but --max-num-seqs takes a whole number; use // for whole-number division")
refused("computed-negative-flag",
        spec("    computed:\n      vllm: {max_model_len: 0 - max_len}\n", top="vars: {max_len: 256}\n"), k8s(),
        "error: spec.yaml:8:14: roles[0].computed.vllm.max_model_len: the expression '0 - max_len' gives -256, but --max-model-len cannot be negative")
refused("computed-literal-fraction", spec("    computed:\n      vllm: {max_num_seqs: 1.5}\n"), k8s(),
        'error: spec.yaml:7:14: roles[0].computed.vllm.max_num_seqs: the value is 1.5, but --max-num-seqs takes a whole number')
refused("cache-key-parent-dirs", spec(top="cache: {key: ../../etc}\n"), "example-gb200",
        "error: spec.yaml:4:9: cache.key: '../../etc' must be a single path segment: letters, digits, '.', '_' or '-', starting with a letter or digit (no '/' or '..')")
refused("cache-key-slash", spec(top="cache: {key: a/b}\n"), "example-gb200",
        "error: spec.yaml:4:9: cache.key: 'a/b' must be a single path segment: letters, digits, '.', '_' or '-', starting with a letter or digit (no '/' or '..')")
refused("cache-gpu-arch-dotdot", spec(top="cache: {gpu_arch: ..}\n"), "example-gb200",
        "error: spec.yaml:4:9: cache.gpu_arch: '..' must be a single path segment: letters, digits, '.', '_' or '-', starting with a letter or digit (no '/' or '..')")
refused("gpu-arch-with-slash-in-cluster", spec(), k8s(accel="      gpu_arch: ../b200\n"),
        "error: cluster.yaml:10:7: accelerators.profiles.b200.gpu_arch: '../b200' must be a single path segment: letters, digits, '.', '_' or '-', starting with a letter or digit (no '/' or '..')")
refused("user-flag-parent-dirs", spec(), k8s(),
        "error: --user '../..' must be a single path segment: letters, digits, '.', '_' or '-', starting with a letter or digit (no '/' or '..')", flags=("--user", "../..", "--namespace", "ns"))
refused("user-flag-slash", spec(), "example-gb200",
        "error: --user 'a/b' must be a single path segment: letters, digits, '.', '_' or '-', starting with a letter or digit (no '/' or '..')", flags=("--user", "a/b", "--namespace", "ns"))
refused("user-env-slash", spec(), k8s(),
        "error: $USER 'x/../y' must be a single path segment: letters, digits, '.', '_' or '-', starting with a letter or digit (no '/' or '..')", flags=("--namespace", "ns"), env={"USER": "x/../y"})
refused("recursive-alias-mapping", spec(top="vllm: &a\n  x: *a\n"), k8s(),
        "error: spec.yaml:5:3: this alias points back at the anchor '&a' of a node that contains it; a value cannot contain itself")
refused("recursive-alias-in-list", "release: demo\nmodel:\n  id: m\nroles: &r\n  - name: decode\n    pre_launch: [*r]\n",
        k8s(),
        "error: spec.yaml:6:17: this alias points back at the anchor '&r' of a node that contains it; a value cannot contain itself")
refused("recursive-alias-model", "release: demo\nmodel: &m\n  id: *m\nroles:\n  - name: decode\n", k8s(),
        "error: spec.yaml:3:3: this alias points back at the anchor '&m' of a node that contains it; a value cannot contain itself")
refused("plugin-config-missing-plugins",
        routed(routing="  plugin_config:\n    apiVersion: inference.networking.x-k8s.io/v1alpha1\n"
               "    kind: EndpointPickerConfig\n"), k8s(),
        'error: spec.yaml:7:3: routing.plugin_config.plugins: required field is missing')
refused("plugin-config-undeclared-ref",
        routed(routing="  plugin_config:\n    apiVersion: inference.networking.x-k8s.io/v1alpha1\n"
               "    kind: EndpointPickerConfig\n    plugins:\n    - type: queue-scorer\n"
               "    schedulingProfiles:\n    - name: default\n      plugins:\n      - pluginRef: max-score-picker\n"),
        k8s(),
        "error: spec.yaml:15:9: routing.plugin_config.schedulingProfiles[0].plugins[0].pluginRef: 'max-score-picker' is not a declared plugin; declared: queue-scorer")
refused("plugin-config-wrong-kind",
        routed(routing="  plugin_config:\n    apiVersion: v1\n    kind: ConfigMap\n    plugins:\n"
               "    - type: queue-scorer\n"), k8s(),
        "error: spec.yaml:9:5: routing.plugin_config.kind: expected EndpointPickerConfig, got 'ConfigMap'")
refused("plugin-configs-entry-unknown-key",
        routed(routing="  plugins_config_file: a.yaml\n  plugin_configs:\n    a.yaml:\n"
               "      apiVersion: inference.networking.x-k8s.io/v1alpha1\n      kind: EndpointPickerConfig\n"
               "      plugins:\n      - type: queue-scorer\n        weigth: 2\n"), k8s(),
        "error: spec.yaml:14:9: routing.plugin_configs.a.yaml.plugins[0].weigth: unknown key 'weigth'")
refused("vars-infinity", spec(top="vars: {x: .inf}\n"), k8s(),
        'error: spec.yaml:4:8: vars.x: expected a finite number, got .inf')

# ---- hostile-looking but legal: must render, quoted --------------------------------------------------

PAYLOAD = "$(touch /tmp/manifesto-pwned); `touch /tmp/manifesto-pwned`"
accepted("env-value-with-command-substitution-k8s", spec(f"    env: {{X: '{PAYLOAD}'}}\n"), k8s())
accepted("env-value-with-command-substitution-slurm", spec(f"    env: {{X: '{PAYLOAD}'}}\n"), slurm())
accepted("env-value-multiline-with-quotes", spec("    env: {X: \"it's \\\"quoted\\\"\\nsecond line\\n\"}\n"), slurm())
# Real flags of the pinned vLLM (the table refuses made-up ones), each taking a free string.
accepted("raw-arg-quoted-metacharacters", spec("    vllm_raw_args: [\"--served-model-name='a;b|c&d>e'\", "
                                               "'--download-dir=\"$HOME\"', \"--chat-template='$(id)'\", "
                                               "'--tokenizer=a\\;b']\n"), slurm())
accepted("vllm-value-with-payload", spec(f"    vllm: {{served_model_name: '{PAYLOAD}'}}\n"), slurm())
accepted("model-label-with-payload", spec(model=f"  label: '{PAYLOAD}'\n"), k8s())
accepted("model-id-with-shell-characters", spec().replace("Qwen/Qwen3-0.6B", "'Qwen/x;$(id)'"), slurm())
accepted("computed-fraction-for-float-flag",
         spec("    computed:\n      vllm: {gpu_memory_utilization: share / 4}\n", top="vars: {share: 3}\n"), k8s())
accepted("long-names-at-the-limit", spec(release="a" + "b" * 40).replace("name: decode", "name: " + "d" * 10),
         k8s())
accepted("slurm-strict-values", spec(), slurm("  partition: gpu,debug\n  account: proj_1\n  qos: high\n"
                                            "  constraint: '[a100|h100]&ib'\n  time: 1-12:00:00\n",
                                            gres="gpu:h100"))
accepted("pre-launch-trusted-shell", spec(top="runtime:\n  pre_launch: ['echo \"start; $(date)\" >&2']\n"), slurm())

# ---- issue 19, class 4: Unicode where ASCII is meant; invisible characters in names ------------------

ZW = "\u200b"  # zero-width space
RLO = "\u202e"  # right-to-left override
refused("u19-model-id-zero-width", spec().replace("Qwen/Qwen3-0.6B", f'"Qwen/Qwen3-0.6B{ZW}"'), k8s(),
        "error: spec.yaml:3:3: model.id: 'Qwen/Qwen3-0.6B\\u200b' contains the invisible format character U+200B (ZERO WIDTH SPACE)")
refused("u19-model-label-rtl-override", spec(model=f'  label: "qwen {RLO}llams"\n'), k8s(),
        "error: spec.yaml:4:3: model.label: 'qwen \\u202ellams' contains the invisible format character U+202E (RIGHT-TO-LEFT OVERRIDE)")
refused("u19-model-id-bidi-isolate", spec().replace("Qwen/Qwen3-0.6B", '"Qwen/\\u2066Qwen3\\u2069"'), k8s(),
        "error: spec.yaml:3:3: model.id: 'Qwen/\\u2066Qwen3\\u2069' contains the invisible format character U+2066 (LEFT-TO-RIGHT ISOLATE)")
refused("u19-env-value-rtl-mark", spec('    env: {NOTE: "a\\u200fb"}\n'), k8s(),
        "error: spec.yaml:6:11: roles[0].env.NOTE: 'a\\u200fb' contains the invisible format character U+200F (RIGHT-TO-LEFT MARK)")
refused("u19-vllm-key-zero-width", spec(f'    vllm: {{"max-model-len{ZW}": 1024}}\n'), k8s(),
        "error: spec.yaml:6:12: roles[0].vllm.max-model-len\\u200b: key 'max-model-len\\u200b' contains the invisible format character U+200B (ZERO WIDTH SPACE)")
refused("u19-annotation-soft-hyphen", spec(), k8s(pod='  annotations: {example.com/team: "in\\u00adfra"}\n'),
        "error: cluster.yaml:12:17: pod_defaults.annotations.example.com/team: 'in\\xadfra' contains the invisible format character U+00AD (SOFT HYPHEN)")
refused("u19-served-name-word-joiner", spec('    vllm: {served_model_name: "qwen\\u2060small"}\n'), slurm(),
        "error: spec.yaml:6:12: roles[0].vllm.served_model_name: 'qwen\\u2060small' contains the invisible format character U+2060 (WORD JOINER)")
refused("u19-cluster-name-zero-width-joiner", spec(), k8s().replace("name: hostile", 'name: "hostile\\u200d"'),
        "error: cluster.yaml:1:1: name: 'hostile\\u200d' contains the invisible format character U+200D (ZERO WIDTH JOINER)")
refused("u19-release-bom-inside", spec(release='"demo\\uFEFFx"'), k8s(),
        "error: spec.yaml:1:1: release: 'demo\\ufeffx' contains the control character U+FEFF")
refused("u19-label-lone-surrogate", spec(model='  label: "qwen\\uD800"\n'), k8s(),
        "error: spec.yaml:4:3: model.label: 'qwen\\ud800' contains the lone surrogate U+D800")
refused("u19-slurm-time-arabic-digits", spec(), slurm('  time: "٠٤:00:00"\n'),
        "error: cluster.yaml:6:3: slurm.time: '٠٤:00:00' is not a Slurm time limit: use minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or UNLIMITED")
refused("u19-slurm-time-superscript", spec(), slurm('  time: "²:00"\n'),
        "error: cluster.yaml:6:3: slurm.time: '²:00' is not a Slurm time limit: use minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or UNLIMITED")
refused("u19-slurm-time-fullwidth", spec(), slurm('  time: "１-00:00"\n'),
        "error: cluster.yaml:6:3: slurm.time: '１-00:00' is not a Slurm time limit: use minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or UNLIMITED")
refused("u19-computed-arabic-digits", spec("    computed:\n      vllm: {max_num_seqs: 'max_len // ٢'}\n",
                                           top="vars: {max_len: 256}\n"), k8s(),
        "error: spec.yaml:8:14: roles[0].computed.vllm.max_num_seqs: in expression 'max_len // ٢': unexpected character '٢' at position 11")
refused("u19-quantity-arabic-digits", spec("    resources: {memory: ٦٤Gi}\n"), k8s(),
        "error: spec.yaml:6:17: roles[0].resources.memory: '٦٤Gi' is not a Kubernetes quantity (examples: 8, 500m, 64Gi, 2G)")
refused("u19-idle-timeout-arabic-digits", spec(),
        k8s(top="llm_d:\n  sizing:\n    gateway_connection_pool: {idle_timeout: ١٥m}\n"),
        "error: cluster.yaml:14:31: llm_d.sizing.gateway_connection_pool.idle_timeout: '١٥m' is not a duration of at least 1ms; write whole numbers with units h, m, s, ms, largest first (examples: 900s, 15m, 1h30m)")

# ---- issue 19, class 6: Kubernetes size limits -----------------------------------------------------

BIG = "x" * 100_000
refused("k19-annotations-total-over-256k", spec(),
        k8s(pod="  annotations:\n" + "".join(f"    example.com/a{i}: {BIG}\n" for i in range(3))),
        "error: cluster.yaml:12:3: pod_defaults.annotations: the rendered Deployment 'demo-decode' is over a Kubernetes limit at spec.template.metadata.annotations: annotation keys and values total 300042 bytes (at most 262144)")
refused("k19-one-annotation-over-256k", spec(), k8s(pod=f"  annotations: {{example.com/a: {'y' * 270_000}}}\n"),
        "error: cluster.yaml:12:3: pod_defaults.annotations: the rendered Deployment 'demo-decode' is over a Kubernetes limit at spec.template.metadata.annotations: annotation keys and values total 270013 bytes (at most 262144)")
refused("k19-object-over-1-5-mib-env", spec("    env:\n" + "".join(f"      V{i}: {BIG}\n" for i in range(17))),
        k8s(),
        "error: spec.yaml:1:1: the rendered Deployment 'demo-decode' is over a Kubernetes limit at spec.template.spec.containers[0].env: the object is 1703911 bytes, 1700789 of them here; the API server stores objects of at most 1572864 bytes")
refused("k19-object-over-1-5-mib-vllm", spec(f"    vllm: {{served_model_name: {'z' * 1_700_000}}}\n"), k8s(),
        "error: spec.yaml:1:1: the rendered Deployment 'demo-decode' is over a Kubernetes limit at spec.template.spec.containers[0].command[2]: the object is 1703503 bytes, 1700224 of them here; the API server stores objects of at most 1572864 bytes")
refused("k19-object-over-1-5-mib-pre-launch", spec(top=f"runtime:\n  pre_launch: ['echo {'p' * 1_700_000}']\n"),
        k8s(),
        "error: spec.yaml:1:1: the rendered Deployment 'demo-decode' is over a Kubernetes limit at spec.template.spec.containers[0].command[2]: the object is 1703486 bytes, 1700207 of them here; the API server stores objects of at most 1572864 bytes")
refused("k19-configmap-over-1-mib", routed(routing="  plugin_config:\n    apiVersion: "
        "inference.networking.x-k8s.io/v1alpha1\n    kind: EndpointPickerConfig\n    plugins:\n"
        "    - type: queue-scorer\n      parameters: {note: " + "n" * 1_100_000 + "}\n"), k8s(),
        "error: spec.yaml:1:1: the rendered ConfigMap 'demo-epp-config' is over a Kubernetes limit at data: keys and values total 1100145 bytes (at most 1048576)")
refused("k19-label-key-name-over-63", spec(), k8s(pod=f"  node_selector: {{example.com/{'k' * 64}: v}}\n"),
        "error: cluster.yaml:12:19: pod_defaults.node_selector.example.com/kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk: label key 'example.com/kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk' name part 'kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk' must be at most 63 characters (it has 64)")
refused("k19-label-key-prefix-over-253", spec(),
        k8s(pod=f"  node_selector: {{{'.'.join(['a' * 60] * 5)}/k: v}}\n"),
        "error: cluster.yaml:12:19: pod_defaults.node_selector.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/k: label key 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.aaaaaaaaaaaaaaaa...' has an invalid prefix 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa': it must be a DNS subdomain such as example.com")
refused("k19-annotation-key-name-over-63", spec(), k8s(pod=f"  annotations: {{example.com/{'a' * 64}: v}}\n"),
        "error: cluster.yaml:12:17: pod_defaults.annotations.example.com/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa: annotation key 'example.com/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' name part 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' must be at most 63 characters (it has 64)")
refused("k19-label-value-over-63", spec(), k8s(pod=f"  node_selector: {{example.com/k: {'v' * 64}}}\n"),
        "error: cluster.yaml:12:19: pod_defaults.node_selector.example.com/k: label value 'vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv' must be at most 63 characters (it has 64)")
refused("k19-pull-secret-over-253", spec(), k8s(pod=f"  image_pull_secrets: [{'.'.join(['s' * 60] * 5)}]\n"),
        "error: cluster.yaml:12:24: pod_defaults.image_pull_secrets[0]: 'ssssssssssssssssssssssssssssssssssssssssssssssssssssssssssss.ssssssssssssssss...' must be at most 253 characters (it has 304)")
refused("k19-priority-class-over-253", spec(),
        k8s(top=f"kueue: {{local_queue: q, priority_class: {'.'.join(['p' * 60] * 5)}}}\n"),
        "error: cluster.yaml:12:25: kueue.priority_class: 'pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp.pppppppppppppppp...' must be at most 253 characters (it has 304)")

# ---- issue 19, class 7: numbers too large for their type -------------------------------------------

refused("b19-quantity-400-digits", spec(f"    resources: {{memory: {'9' * 400}}}\n"), k8s(),
        'error: spec.yaml:6:17: roles[0].resources.memory: a quantity of 400 characters is too long (at most 64; examples: 8, 500m, 64Gi)')
refused("b19-quantity-huge-suffix", spec("    resources: {memory: 99999999999Ei}\n"), k8s(),
        "error: spec.yaml:6:17: roles[0].resources.memory: '99999999999Ei' is too large: a Kubernetes quantity is at most 9223372036854775807 (2**63 - 1)")
refused("b19-cpu-over-int64", spec(f"    resources: {{cpu: {2 ** 64}}}\n"), k8s(),
        "error: spec.yaml:6:17: roles[0].resources.cpu: '18446744073709551616' is too large: a Kubernetes quantity is at most 9223372036854775807 (2**63 - 1)")
refused("b19-shm-size-400-digits", spec(), k8s().replace("shm_size: 2Gi", f"shm_size: {'8' * 400}"),
        'error: cluster.yaml:11:3: pod_defaults.shm_size: a quantity of 400 characters is too long (at most 64; examples: 8, 500m, 64Gi)')
refused("b19-quantity-float-exponent", spec("    resources: {ephemeral_storage: 1.0e+300}\n"), k8s(),
        "error: spec.yaml:6:17: roles[0].resources.ephemeral_storage: '1e+300' is too large: a Kubernetes quantity is at most 9223372036854775807 (2**63 - 1)")
refused("b19-quantity-long-fraction", spec(f"    resources: {{memory: 1.{'5' * 100}Gi}}\n"), k8s(),
        'error: spec.yaml:6:17: roles[0].resources.memory: a quantity of 104 characters is too long (at most 64; examples: 8, 500m, 64Gi)')
refused("b19-quantity-on-slurm", spec(f"    resources: {{memory: {'7' * 300}Mi}}\n"), slurm(),
        'error: spec.yaml:6:17: roles[0].resources.memory: a quantity of 302 characters is too long (at most 64; examples: 8, 500m, 64Gi)')
# Issue 35: a byte count refuses a fraction's suffix (500m is half a byte); Kubernetes' exponents
# and n/u suffixes are quantities; a count the schemas take is 32-bit.
refused("r35-gpu-memory-milli", routed(), k8s(accel="      memory: 186000000000000m\n"),
        "error: cluster.yaml:10:7: accelerators.profiles.b200.memory: '186000000000000m' is a fraction of a byte ('m' "
        "means thousandths); write 186000000000000M (megabytes) or 186000000000000Mi (mebibytes)")
refused("r35-envoy-buffer-milli", routed(), k8s(top="llm_d:\n  sizing:\n    envoy: {buffer_limit: 500m}\n"),
        "error: cluster.yaml:14:13: llm_d.sizing.envoy.buffer_limit: '500m' is a fraction of a byte ('m' means "
        "thousandths); write 500M (megabytes) or 500Mi (mebibytes)")
refused("r35-gpu-memory-micro", routed(), k8s(accel="      memory: 186000000000000000u\n"),
        "error: cluster.yaml:10:7: accelerators.profiles.b200.memory: '186000000000000000u' is a fraction of a byte "
        "('u' means millionths); write 186000000000000000M (megabytes) or 186000000000000000Mi (mebibytes)")
# Every byte count of a spec or profile: memory, shared memory, storage, a PVC's size.
refused("r35-pod-memory-milli", spec("    resources: {memory: 500m}\n"), k8s(),
        "error: spec.yaml:6:17: roles[0].resources.memory: '500m' is a fraction of a byte ('m' means thousandths); "
        "write 500M (megabytes) or 500Mi (mebibytes)")
refused("r35-shm-milli", spec("    resources: {shm_size: 2m}\n"), k8s(),
        "error: spec.yaml:6:17: roles[0].resources.shm_size: '2m' is a fraction of a byte ('m' means thousandths); "
        "write 2M (megabytes) or 2Mi (mebibytes)")
refused("r35-pod-defaults-storage-nano", spec(), k8s(pod="  ephemeral_storage: 9n\n"),
        "error: cluster.yaml:12:3: pod_defaults.ephemeral_storage: '9n' is a fraction of a byte ('n' means "
        "billionths); write 9M (megabytes) or 9Mi (mebibytes)")
accepted("r35-cpu-exponent", spec("    resources: {cpu: 2e0, memory: 64e9}\n"), k8s())
accepted("r35-cpu-nano", spec("    resources: {cpu: 500000000n}\n"), k8s())
refused("b19-int32-400-digits", spec(f"    parallelism: {{tp: {'9' * 400}}}\n"), k8s(),
        'error: spec.yaml:6:19: roles[0].parallelism.tp: a whole number of 400 digits is too large: Kubernetes counts are 32-bit (at most 2147483647)')
refused("b19-expression-huge-literal", spec(f"    computed:\n      vllm: {{max_num_seqs: '{'9' * 400} // 2'}}\n"),
        k8s(),
        "error: spec.yaml:7:14: roles[0].computed.vllm.max_num_seqs: in expression '99999999999999999999999999999999999999999999999999999999999999999999999999999...': the number 99999999999999999999... is too large")
refused("b19-expression-float-overflow", spec(f"    computed:\n      vllm: {{gpu_memory_utilization: "
                                              f"'{'9' * 400}.0 / 2'}}\n"), k8s(),
        "error: spec.yaml:7:14: roles[0].computed.vllm.gpu_memory_utilization: in expression '99999999999999999999999999999999999999999999999999999999999999999999999999999...': the number 99999999999999999999... is too large")
