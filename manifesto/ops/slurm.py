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
           "job_id"]

_JOB = re.compile(r"^[0-9]+(_[0-9]+|\+[0-9]+)?\Z")  # ASCII digits: "١٢".isdigit() is true
SQUEUE_FORMAT = "%i|%j|%T|%N|%R"


@dataclass(frozen=True)
class SlurmCall:
    argv: tuple[str, ...]
    stdin: str | None = None
    ssh_host: str | None = None

    def command(self) -> list[str]:
        """The argv actually executed: the Slurm command, or ssh carrying it."""
        if self.ssh_host is None:
            return list(self.argv)
        return ["ssh", "-o", "BatchMode=yes", self.ssh_host, "--", shlex.join(self.argv)]


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
    argv = ("sbatch", "--test-only") if test_only else ("sbatch", "--parsable")
    return SlurmCall(argv, stdin=script, ssh_host=ssh_host)


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
    """Rows of squeue output that belong to Manifesto jobs (``manifesto-<instance>``)."""
    rows = []
    for line in text.splitlines():
        parts = line.strip().split("|")
        if len(parts) != 5 or not parts[1].startswith("manifesto-"):
            continue
        jid, name, state, nodes, reason = parts
        if not _JOB.match(jid):  # not a job squeue would print: a forged or garbled line
            continue
        rows.append({"job": jid, "instance": name.removeprefix("manifesto-"), "state": state,
                     "nodes": nodes, "reason": reason})
    return rows


def stop_call(job: str, ssh_host: str | None) -> SlurmCall:
    if not _JOB.match(job):
        raise OpsError(f"'{job}' is not a Slurm job ID (expected N, N_I for one array element, or N+C)")
    # --verbose: without it scancel exits 0 and prints nothing for a job that does not exist.
    return SlurmCall(("scancel", "--verbose", job), ssh_host=ssh_host)


def check_cancelled(job: str, proc: subprocess.CompletedProcess) -> None:
    """Raise when ``scancel --verbose`` reported an error for ``job`` (unknown or finished job)."""
    errors = [line.split("error:", 1)[1].strip() for line in (proc.stderr or "").splitlines() if "error:" in line]
    if errors:
        reason = excerpt(errors[-1].rsplit(": ", 1)[-1], 300)
        raise OpsError(f"could not cancel Slurm job {job}: {reason} (it may have finished already; "
                       "`manifesto slurm servers` lists your jobs)")
