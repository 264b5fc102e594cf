"""Hypothesis over CLI flags and settings that take numbers, durations, templates and paths.

Every command must exit 0, or fail with one ``error:`` line per problem (argparse's own
usage error, exit 2, counts too), never a traceback and never a hang: each example runs
in-process under an alarm, so a hang fails the example instead of stalling the suite.
Output paths are drawn below the example's own directory only.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import traceback

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kubefake

#: Seconds one example may take before it counts as a hang.
ALARM = 60

NUMBERS = st.one_of(
    st.sampled_from(["nan", "NaN", "inf", "-inf", "+inf", "1e400", "-1e400", "1e-400", "-1", "0", "-0", "0.0", "1",
                     "9" * 5000, "", " ", "0x10", "1_000", "½", "١٢", "--", "1e9", "3.5", "2.", ".5", "1e2"]),
    st.floats().map(repr),
    st.integers(-(10 ** 30), 10 ** 30).map(str),
    st.text(max_size=12),
)
DURATIONS = st.one_of(NUMBERS, st.tuples(NUMBERS, st.sampled_from(["m", "h", "s", "M", "H", "d", ""])).map("".join))
TEMPLATES = st.one_of(
    st.sampled_from(["/c/{user", "/c/}", "/c/{user:>999999999}", "/c/{user!r}", "{0}", "{}", "/c/{user.__class__}",
                     "/c/{user[0]}", "/c/{user}/{release}", "rel/{user}", "/c/{{lit}}", "/c/{nope}", "{", "}}{{"]),
    st.text(alphabet="/{}abcuser:!.[]0>", max_size=24),
)
PATHS = st.one_of(st.sampled_from(["/dev/zero", "/", ".", "..", "", "/nonexistent/x", "a\x00b", "\n", "spec.yaml",
                                   "dir", "link", "fifo"]), st.text(max_size=24))
OUTPUTS = st.one_of(st.sampled_from(["dir", "link", "fifo", "f/x", "out.yaml", "new/sub/out.yaml", "", "."]),
                    st.text(alphabet="abc-_./", min_size=1, max_size=12).filter(lambda p: not p.startswith("/")))


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    """A working directory with a directory, a symlink, a FIFO and a file below a file,
    a fake kubectl on PATH, and no user settings."""
    root = tmp_path_factory.mktemp("flags")
    (root / "dir").mkdir()
    (root / "link").symlink_to(root / "outside-target")
    os.mkfifo(root / "fifo")
    (root / "f").write_text("a file\n")
    kubefake.fake_kubectl(root)
    with pytest.MonkeyPatch.context() as mp:
        for name in list(os.environ):
            if name.startswith(("MANIFESTO_", "KUBE")):
                mp.delenv(name)
        mp.setenv("MANIFESTO_CONFIG_HOME", str(root / "config"))
        mp.setenv("MANIFESTO_NO_CACHE", "1")
        mp.setenv("PATH", f"{root / 'bin'}{os.pathsep}{os.environ['PATH']}")
        mp.setenv("FAKE_KUBE_DIR", str(root / "kube"))
        mp.setenv("KUBECONFIG", str(root / "no-kubeconfig"))
        mp.setenv("EDITOR", "true")
        mp.chdir(root)
        yield root


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang()


def run(*argv: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    from manifesto.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(ALARM)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(list(argv))
            except SystemExit as exc:
                rc = exc.code
            except _Hang:
                pytest.fail(f"no answer within {ALARM}s: {argv!r} {env!r}")
            except BaseException:  # noqa: BLE001 - what a user would see as a traceback
                err.write(traceback.format_exc())
                rc = -1
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return rc, out.getvalue(), err.getvalue()


def check(rc: int, err: str, what) -> None:
    assert "Traceback" not in err, (what, err)
    assert rc in (0, 1, 2), (what, rc, err)
    lines = [line for line in err.splitlines() if not line.startswith("manifesto: ")]  # progress notes
    if rc == 1:
        assert lines and all(line.startswith("error: ") for line in lines), (what, err)
    elif rc == 2:  # argparse: usage, then `manifesto CMD: error: argument --flag: ...`
        assert lines and ": error: " in lines[-1], (what, err)


RENDER = ("render", "manifest", "qwen/aggregated", "--cluster", "example-gb200", "--user", "u", "--namespace", "ns")
FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                       HealthCheck.function_scoped_fixture])


@FUZZ
@given(idle=st.one_of(st.none(), DURATIONS), cache=st.one_of(st.none(), TEMPLATES),
       log=st.one_of(st.none(), TEMPLATES), user_root=st.one_of(st.none(), TEMPLATES),
       vllm_env=st.one_of(st.none(), PATHS), routing=st.one_of(st.none(), PATHS))
def test_render_flags(sandbox, idle, cache, log, user_root, vllm_env, routing):
    argv = list(RENDER)
    for flag, value in (("--idle-timeout", idle), ("--cache-root", cache), ("--log-root", log),
                        ("--user-root", user_root), ("--vllm-env", vllm_env), ("--routing-profile", routing)):
        if value is not None:
            argv.append(f"{flag}={value}")
    rc, out, err = run(*argv)
    check(rc, err, argv)


@pytest.mark.integration
@FUZZ
@given(spec=PATHS, cluster=PATHS)
def test_spec_and_cluster_paths(sandbox, spec, cluster):
    argv = ["explain", spec, "--cluster", cluster, "--user", "u", "--namespace", "ns"]
    rc, out, err = run(*argv)
    check(rc, err, argv)


@FUZZ
@given(output=OUTPUTS, force=st.booleans(), kind=st.sampled_from(["render", "export"]))
def test_output_paths_stay_put(sandbox, output, force, kind):
    if kind == "render":
        argv = ["render", "file", *RENDER[2:], f"--output={output}"]
    else:
        argv = ["config", "export", "models", "qwen/aggregated", f"--output={output}", *(["--force"] if force else [])]
    rc, out, err = run(*argv)
    check(rc, err, argv)
    assert not (sandbox / "outside-target").exists(), argv  # a symlink is never written through
    assert (sandbox / "f").read_text() == "a file\n" and (sandbox / "dir").is_dir()


@pytest.mark.integration
@FUZZ
@given(timeout=NUMBERS, retries=NUMBERS)
def test_kubectl_settings(sandbox, timeout, retries):
    env = {"MANIFESTO_KUBECTL_TIMEOUT": timeout, "MANIFESTO_KUBECTL_RETRIES": retries}
    if "\x00" in timeout + retries:
        return  # the environment cannot hold a NUL
    rc, out, err = run("servers", "-n", "ns", env=env)
    check(rc, err, env)


@pytest.mark.integration
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(timeout=st.one_of(NUMBERS, st.floats(0, 1.5).map(repr)), interval=st.one_of(NUMBERS, st.just("0.2")))
def test_ready_waits(sandbox, timeout, interval):
    from manifesto.util.numbers import number

    value = number(timeout)
    if value is not None and value > 1.5:
        return  # a valid, long wait is not hostile; it would just wait
    argv = ["ready", *RENDER[2:], f"--timeout={timeout}", f"--interval={interval}"]
    rc, out, err = run(*argv)
    check(rc, err, argv)
