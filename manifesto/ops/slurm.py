"""Slurm workflows: submit a rendered batch script, list Manifesto jobs, cancel one.

Each action is first described as a ``SlurmCall`` (argv and stdin) and then handed to one
runner, locally or through ``ssh`` when the profile sets ``slurm.ssh_host``. The script
travels on stdin, so nothing is installed or staged on the login host.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from dataclasses import dataclass

from manifesto.errors import OpsError, excerpt, show_value

__all__ = ["SlurmCall", "run", "submit_call", "servers_call", "stop_call", "check_cancelled", "parse_servers",
           "job_id", "script_instance", "script_log_dir", "batch_script_call", "instance_jobs", "live_jobs",
           "ENDED_STATES"]

_JOB = re.compile(r"^[0-9]+(_[0-9]+|\+[0-9]+)?\Z")  # ASCII digits: "١٢".isdigit() is true
# %r is the reason alone; %R would print the node list for a running job.
SQUEUE_FORMAT = "%i|%j|%T|%N|%r"
_ELEMENT = re.compile(r"^([0-9]+)(?:_([0-9]+|\[[^\]]*\])|\+([0-9]+))?\Z")


@dataclass(frozen=True)
class SlurmCall:
    argv: tuple[str, ...]
    stdin: str | None = None
    ssh_host: str | None = None
    mkdirs: tuple[str, ...] = ()  # directories made first (where the job log goes)

    def command(self) -> list[str]:
        """The argv actually executed: the Slurm command, or ssh carrying it (with its mkdir)."""
        if self.ssh_host is None:
            return list(self.argv)
        remote = shlex.join(self.argv)
        if self.mkdirs:
            remote = f"{shlex.join(('mkdir', '-p', '--', *self.mkdirs))} && {remote}"
        return ["ssh", "-o", "BatchMode=yes", self.ssh_host, "--", remote]


def run(call: SlurmCall, timeout: float = 120, trace: bool = False) -> subprocess.CompletedProcess:
    """Run ``call``; with ``trace``, log its argv and duration on stderr (never the script)."""
    if trace:
        import sys
        import time

        started = time.monotonic()
        try:
            return run(call, timeout)
        finally:
            print(f"trace: {shlex.join(call.command())} ({time.monotonic() - started:.2f}s)", file=sys.stderr)
    if call.ssh_host is None:
        from manifesto.edge.fs import make_dirs

        for directory in call.mkdirs:
            try:
                make_dirs(directory)
            except OSError as exc:
                raise OpsError(f"cannot create the job log directory {directory}: {exc.strerror}") from None
    try:
        proc = subprocess.run(call.command(), input=call.stdin, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        tool = "ssh" if call.ssh_host else call.argv[0]
        raise OpsError(f"{tool} not found on PATH; Slurm workflows need {tool} on this machine") from None
    except subprocess.TimeoutExpired:
        raise OpsError(f"{shlex.join(call.command())} did not answer within {timeout:g} s") from None
    if proc.returncode != 0:
        detail = excerpt(proc.stderr or proc.stdout) or f"exit status {proc.returncode}"
        raise OpsError(f"{call.argv[0]} failed: {detail}")
    return proc


def submit_call(script: str, ssh_host: str | None, test_only: bool) -> SlurmCall:
    """sbatch reading ``script``; the job log's directory is made first (Slurm does not make it)."""
    argv = ("sbatch", "--test-only") if test_only else ("sbatch", "--parsable")
    log_dir = None if test_only else script_log_dir(script)
    return SlurmCall(argv, stdin=script, ssh_host=ssh_host, mkdirs=(log_dir,) if log_dir else ())


def _directive(script: str, name: str) -> str | None:
    for line in script.splitlines():
        if line.startswith(f"#SBATCH --{name}="):
            return line.split("=", 1)[1].strip()
    return None


def script_log_dir(script: str) -> str | None:
    """The absolute directory of the script's ``--output`` (None: relative, sbatch's working directory)."""
    import posixpath

    output = _directive(script, "output")
    if not output or not output.startswith("/"):
        return None
    return posixpath.dirname(output).replace("%%", "%")


def script_instance(script: str) -> str:
    """The instance a rendered batch script runs (its job name is ``manifesto-<instance>``)."""
    name = _directive(script, "job-name") or ""
    if not name.startswith("manifesto-"):
        raise OpsError("the batch script has no `#SBATCH --job-name=manifesto-...` line; it was not rendered by "
                       "manifesto")
    return name.removeprefix("manifesto-")


def batch_script_call(job: str, ssh_host: str | None) -> SlurmCall:
    """The script a job was submitted with, on stdout."""
    return SlurmCall(("scontrol", "write", "batch_script", job, "-"), ssh_host=ssh_host)


def job_id(sbatch_stdout: str) -> str:
    """``--parsable`` prints ``ID`` or ``ID;cluster``."""
    first = sbatch_stdout.strip().splitlines()[-1] if sbatch_stdout.strip() else ""
    jid = first.split(";", 1)[0]
    if not (jid.isascii() and jid.isdigit()):  # "²³".isdigit() is true
        raise OpsError(f"sbatch printed no job ID: {show_value(excerpt(sbatch_stdout, 200))}")
    return jid


def servers_call(ssh_host: str | None, user: str | None = None) -> SlurmCall:
    who = ("--me",) if user is None else (f"--user={user}",)
    return SlurmCall(("squeue", "--noheader", "--array", *who, f"--format={SQUEUE_FORMAT}"), ssh_host=ssh_host)


def parse_servers(text: str) -> list[dict]:
    """One row per Manifesto job (``manifesto-<instance>``), under the ID sbatch printed and
    ``slurm stop`` takes; its array elements (``N_I``) or heterogeneous components (``N+C``)
    are listed in ``elements``."""
    jobs: dict[str, dict] = {}
    for line in text.splitlines():
        parts = line.strip().split("|")
        if len(parts) != 5 or not parts[1].startswith("manifesto-"):
            continue
        jid, name, state, nodes, reason = parts
        m = _ELEMENT.match(jid)
        if m is None:  # not a job squeue would print: a forged or garbled line
            continue
        base = m.group(1)
        row = jobs.setdefault(base, {"job": base, "instance": name.removeprefix("manifesto-"), "elements": []})
        row["elements"].append({"id": jid, "state": state, "nodes": nodes,
                                "reason": "" if reason == "None" else reason})
    for row in jobs.values():
        els = row["elements"]
        states = list(dict.fromkeys(e["state"] for e in els))
        row["state"] = states[0] if len(states) == 1 else ",".join(states)
        row["nodes"] = ",".join(e["nodes"] for e in els if e["nodes"])
        row["reason"] = ",".join(dict.fromkeys(e["reason"] for e in els if e["reason"]))
    return [{k: row[k] for k in ("job", "instance", "state", "nodes", "reason", "elements")} for row in jobs.values()]


def instance_jobs(rows: list[dict], instance: str) -> list[dict]:
    return [row for row in rows if row["instance"] == instance]


#: squeue states of a job that has stopped running (COMPLETING: Slurm is still cleaning up).
ENDED_STATES = frozenset({"COMPLETING", "COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED",
                          "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "SPECIAL_EXIT"})


def live_jobs(rows: list[dict]) -> list[dict]:
    """The jobs still queued or running: some element is in a state other than an ended one."""
    return [row for row in rows if any(state not in ENDED_STATES for state in row["state"].split(","))]


def stop_call(job: str, ssh_host: str | None) -> SlurmCall:
    if not _JOB.match(job):
        raise OpsError(f"'{job}' is not a Slurm job ID (expected N, N_I for one array element, or N+C)")
    # --verbose: without it scancel exits 0 and prints nothing for a job that does not exist.
    return SlurmCall(("scancel", "--verbose", job), ssh_host=ssh_host)


#: What scancel says of a job that ended before it could cancel it (Slurm's ESLURM_ALREADY_DONE).
ALREADY_DONE = "already completing or completed"


def check_cancelled(job: str, proc: subprocess.CompletedProcess) -> bool:
    """True when ``scancel --verbose`` cancelled ``job``, False when the job had already ended
    (Slurm still knows it: it says so); raise for any other error (an unknown job above all)."""
    errors = [line.split("error:", 1)[1].strip() for line in (proc.stderr or "").splitlines() if "error:" in line]
    if errors and all(ALREADY_DONE in e for e in errors):
        return False
    if errors:
        reason = excerpt(errors[-1].rsplit(": ", 1)[-1], 300)
        raise OpsError(f"could not cancel Slurm job {job}: {reason} (it may have finished already; "
                       "`manifesto slurm servers` lists your jobs)")
    return True
