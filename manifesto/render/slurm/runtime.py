"""How a command runs on an allocated node: Apptainer/Singularity, Pyxis (Enroot) or natively.

Each runtime contributes two things: srun options (Pyxis only) and a command prefix that
runs the image's program (Apptainer/Singularity: ``<runtime> exec --no-eval ...``). The
commands themselves are decided by the callers.
"""

from __future__ import annotations

import re
import shlex

__all__ = [
    "CONTAINER_RUNTIMES", "apptainer_image", "enroot_image", "binds_of", "srun_options", "exec_prefix",
    "env_prefix", "program",
]

CONTAINER_RUNTIMES = ("apptainer", "singularity", "pyxis")

# Programs of the llm-d images (ENTRYPOINT binaries) and their names on a native PATH.
_PROGRAMS = {
    "epp": ("/app/epp", "epp"),
    "envoy": ("/usr/local/bin/envoy", "envoy"),
    "pd-sidecar": ("/app/pd-sidecar", "pd-sidecar"),
}


_PLAIN = re.compile(r"^[A-Za-z0-9_@%+=:,./-][A-Za-z0-9_@%+=:,./#-]*\Z")


def word(text: str) -> str:
    """Shell-quote, leaving Enroot's ``REGISTRY#IMAGE`` readable (``#`` mid-word is literal)."""
    return text if _PLAIN.match(text) else shlex.quote(text)


def program(runtime: str, name: str) -> str:
    image_path, native = _PROGRAMS[name]
    return native if runtime == "native" else image_path


def apptainer_image(image: str) -> str:
    """Bare OCI names get ``docker://``; URIs with a scheme, paths and ``.sif`` files stay."""
    if "://" in image or image.startswith(("/", "./", "../")) or image.endswith(".sif"):
        return image
    return "docker://" + image


def enroot_image(image: str) -> str:
    """Enroot's ``[REGISTRY#]IMAGE[:TAG]`` form: ``ghcr.io/llm-d/x:v1`` -> ``ghcr.io#llm-d/x:v1``.

    ``docker://`` is dropped; squashfs paths and Docker Hub names (``vllm/vllm-openai:v1``)
    pass unchanged; an already converted name (with ``#``) is kept.
    """
    if image.startswith("docker://"):
        image = image[len("docker://"):]
    if image.startswith(("/", "./", "../")) or "#" in image:
        return image
    first, sep, rest = image.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        return f"{first}#{rest}"
    return image


def binds_of(plan, extra: tuple[tuple[str, str, bool], ...] = ()) -> tuple[tuple[str, str, bool], ...]:
    """(source, target, read_only) of every bind: extra ones first, then ``slurm.binds``."""
    return tuple(extra) + tuple(plan.slurm.binds)


def _bind_text(source: str, target: str, read_only: bool) -> str:
    return f"{source}:{target}:{'ro' if read_only else 'rw'}"


def _shell_word(text: str) -> str:
    """Quote for bash, but keep ``$NAME`` references (our own variables) expandable."""
    if "$" not in text:
        return word(text)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("`", "\\`") + '"'


def srun_options(plan, image: str, *, binds: tuple[tuple[str, str, bool], ...], env_names: str | None) -> list[str]:
    """Pyxis' srun options (empty for the other runtimes). ``env_names`` is a shell word."""
    if plan.slurm.runtime != "pyxis":
        return []
    out = [f"--container-image={word(enroot_image(image))}", "--no-container-entrypoint"]
    if env_names:
        out.append(f"--container-env={env_names}")
    if binds:
        out.append("--container-mounts=" + _shell_word(",".join(_bind_text(*b) for b in binds)))
    return out


def exec_prefix(plan, image: str, *, gpu: bool, binds: tuple[tuple[str, str, bool], ...]) -> list[str]:
    """Words before the in-image command: ``apptainer exec --no-eval [--nv] [--bind ...] IMAGE``."""
    runtime = plan.slurm.runtime
    if runtime not in ("apptainer", "singularity"):
        return []
    words = [runtime, "exec", "--no-eval"]
    if gpu:
        words.append("--nv")
    for b in binds:
        words += ["--bind", _shell_word(_bind_text(*b))]
    words.append(word(apptainer_image(image)))
    return words


def env_prefix(runtime: str) -> str | None:
    """Apptainer/Singularity read ``<PREFIX>NAME`` on the host as NAME in the container, and
    that value wins over one the image defines."""
    return {"apptainer": "APPTAINERENV_", "singularity": "SINGULARITYENV_"}.get(runtime)
