"""Test-wide set-up: ``--update-golden``, the isolated environment every test runs in,
the shared kits and the Slurm fixtures.

The Slurm fixtures ``slurm_cluster`` and ``sbatch_wait`` come from the kit's own
``pytest_local_slurm.py`` in ``<shared>/slurm``, imported from there (not copied).
Without the kit they skip, or fail under ``CI=true``.
"""

from __future__ import annotations

import atexit
import multiprocessing.process
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

import kit

# Test files sit in folders that mirror manifesto/ (tests/render/, tests/ops/, ...). A few import
# helpers from a test module in another folder (test_golden reads test_slurm_render's
# check_script): every such folder is on sys.path, as tests/ is, so that works whichever file
# pytest collects first. Test module names stay unique across folders (pytest's default import mode).
_HERE = os.path.dirname(os.path.abspath(__file__))
for _name in sorted(os.listdir(_HERE)):
    _folder = os.path.join(_HERE, _name)
    if os.path.isdir(_folder) and _folder not in sys.path and not os.path.exists(os.path.join(_folder, "__init__.py")) and any(
            f.startswith("test_") and f.endswith(".py") for f in os.listdir(_folder)):
        sys.path.append(_folder)

SLURM_KIT = kit.shared_dir() / "slurm"
# The kit's node names resolve (to 127.0.0.1) only with this option, and routed batch scripts
# resolve them, as they do a site's hosts. It adds one /etc/hosts line; nothing restarts.
os.environ.setdefault("LOCAL_SLURM_ETC_HOSTS", "1")

if (SLURM_KIT / "pytest_local_slurm.py").is_file():
    if str(SLURM_KIT) not in sys.path:
        sys.path.insert(0, str(SLURM_KIT))
    from pytest_local_slurm import sbatch_wait, slurm_cluster  # noqa: F401
else:
    _NO_KIT = f"Slurm kit not found at {SLURM_KIT} (set MANIFESTO_SHARED_DIR)"

    @pytest.fixture(scope="session")
    def slurm_cluster():
        kit.unavailable(_NO_KIT)

    @pytest.fixture
    def sbatch_wait(slurm_cluster):
        kit.unavailable(_NO_KIT)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        help="rewrite golden files with the current output instead of comparing",
    )


@pytest.fixture(scope="session")
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture(scope="session")
def shared_dir():
    """The shared kits directory (skips, or fails under CI=true, when absent)."""
    return kit.require_shared()


# Under pytest-xdist every worker runs the session fixture `slurm_cluster`: the
# first one starts the cluster and the others reuse it. The starter's teardown
# would stop the cluster while other workers may still be submitting jobs, so
# workers always keep it, report that they started it, and the controller stops
# it once every worker is done (unless the user asked to keep it).
_STARTED_SLURM = pytest.StashKey[set]()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Processes started by a session fixture (the Slurm kit) escape the per-test guard
    below, so the tests that use it are checked here, before anything runs."""
    unmarked = [item.nodeid for item in items
                if item.get_closest_marker("integration") is None
                and (item.get_closest_marker("slurm") is not None
                     or {"slurm_cluster", "sbatch_wait"} & set(getattr(item, "fixturenames", ())))]
    if unmarked:
        raise pytest.UsageError("tests that use the Slurm kit must be marked integration: "
                                + ", ".join(unmarked))


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_STARTED_SLURM] = set()
    if hasattr(config, "workerinput"):
        os.environ["LOCAL_SLURM_KEEP"] = "1"


def pytest_runtest_teardown(item: pytest.Item) -> None:
    cluster = getattr(item, "funcargs", {}).get("slurm_cluster")  # the kit's exports
    if (
        hasattr(item.config, "workeroutput")
        and isinstance(cluster, dict)
        and cluster.get("LOCAL_SLURM_STARTED") == "1"
    ):
        item.config.workeroutput["local_slurm_started"] = cluster["LOCAL_SLURM_DIR"]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    state_dir = getattr(node, "workeroutput", {}).get("local_slurm_started")
    if state_dir:
        node.config.stash[_STARTED_SLURM].add(state_dir)


def pytest_sessionfinish(session: pytest.Session) -> None:
    if os.environ.get("LOCAL_SLURM_KEEP") == "1" or hasattr(
        session.config, "workerinput"
    ):
        return
    for state_dir in sorted(session.config.stash.get(_STARTED_SLURM, ())):
        subprocess.run(
            [str(SLURM_KIT / "stop-local-slurm")],
            env={**os.environ, "LOCAL_SLURM_DIR": state_dir},
            capture_output=True,
            timeout=120,
        )


# The folder of this test process's cache key (manifesto.edge.trust), set before collection:
# a module that seals a store entry at import (a parametrize list) and the processes its tests
# start must use one key, or each sees the other's caches as foreign.
_STATE_HOME = tempfile.mkdtemp(prefix="manifesto-test-state-")
os.environ["XDG_STATE_HOME"] = _STATE_HOME
atexit.register(shutil.rmtree, _STATE_HOME, True)

# Kept across the isolation: they locate the test kits, not the product's settings.
_KIT_SETTINGS = frozenset({"MANIFESTO_SHARED_DIR"})


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory, monkeypatch) -> kit.Isolated:
    """Every test gets its own render cache, user catalog and XDG config folder, and no
    ambient ``MANIFESTO_*`` settings, so nothing reads or writes the real user cache or
    catalog. Set on ``os.environ``, so subprocesses (``kit.run_cli`` and the like) inherit it.
    """
    root = tmp_path_factory.mktemp("env")
    env = kit.Isolated(cache=root / "cache", config_home=root / "config-home", xdg_config=root / "config")
    env.config_home.mkdir()
    (root / "home").mkdir()
    # Anything that falls back to ~ (kubectl's ~/.kube, git's ~/.gitconfig, Hugging Face's cache,
    # a tool's own cache) finds an empty home of the test's own, never the user's.
    monkeypatch.setenv("HOME", str(root / "home"))
    for name in list(os.environ):
        if name.startswith("MANIFESTO_") and name not in _KIT_SETTINGS:
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CACHE_HOME", str(env.cache))
    # One cache key per test process (manifesto.edge.trust): tests that build the same
    # workspace one after another trust each other's caches, as one user's commands do.
    monkeypatch.setenv("XDG_STATE_HOME", _STATE_HOME)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(env.xdg_config))
    monkeypatch.setenv("MANIFESTO_CONFIG_HOME", str(env.config_home))
    # The checkout's commit would enter single renders' headers and change every golden with
    # every commit; tests/test_parity.py turns it back on where it is the subject.
    monkeypatch.setenv("MANIFESTO_SOURCE_COMMIT", "off")
    return env


@pytest.fixture(autouse=True)
def _processes_need_the_integration_marker(request, monkeypatch):
    """A test that starts a process (a subprocess, a fake kubectl, sbatch, shellcheck,
    bash, a worker pool) must be marked ``integration``, so that ``-m "not integration"``
    runs only in-process tests. For an unmarked test, ``Popen`` and a multiprocessing
    ``start`` note what was started (and then start it), and the test fails at teardown
    naming it: nothing the code under test catches can hide it."""
    if request.node.get_closest_marker("integration") is not None:
        yield
        return
    started: list[str] = []
    popen_init = subprocess.Popen.__init__
    process_start = multiprocessing.process.BaseProcess.start

    def popen(self, args, *rest, **kwargs):
        started.append(repr(args)[:120])
        popen_init(self, args, *rest, **kwargs)

    def start(self):
        started.append(f"multiprocessing {type(self).__name__}")
        process_start(self)

    monkeypatch.setattr(subprocess.Popen, "__init__", popen)
    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", start)
    yield
    if started:
        pytest.fail(f"{request.node.nodeid} starts processes but is not marked integration "
                    "(add @pytest.mark.integration or a module pytestmark): " + "; ".join(started),
                    pytrace=False)


# The places outside a test's own folders that the product writes when nothing redirects it
# (render file's default outputs, which a user edits by hand) or that hold the user's own
# settings. Every test is checked against them (a stat each, before and after), so a test that
# writes there fails and is named. (The user's store and catalog under ~ are out of reach: every
# test runs with a home and XDG folders of its own, above; they are not watched, as the user's
# own commands may write them while the suite runs.)
_REAL_HOME = os.path.expanduser("~")
_GUARDED = (
    "/tmp/manifesto.yaml", "/tmp/manifesto.sbatch",
    *(os.path.join(_REAL_HOME, sub) for sub in (
        ".kube/config", ".config/llm-manifesto", ".local/share/bash-completion/completions/manifesto",
        ".config/fish/completions/manifesto.fish")),
)


def guarded_state(paths: tuple[str, ...] | None = None) -> dict[str, tuple | None]:
    """What each guarded path is now: (inode, size, mtime) or None when it does not exist."""
    state: dict[str, tuple | None] = {}
    for path in _GUARDED if paths is None else paths:
        try:
            st = os.lstat(path)
        except OSError:
            state[path] = None
        else:
            state[path] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return state


@pytest.fixture(autouse=True)
def _writes_stay_in_the_tests_folders(request):
    paths = _GUARDED
    before = guarded_state(paths)
    yield
    after = guarded_state(paths)
    touched = sorted(path for path in paths if before[path] != after[path])
    if touched:
        pytest.fail(f"{request.node.nodeid} changed {', '.join(touched)}, outside its temporary folders "
                    "(give the command an --output or a folder under tmp_path)", pytrace=False)



@pytest.fixture
def bundled_workspace(tmp_path):
    """A copy of the checkout's own workspace (``kit.copy_bundled_workspace``), for a test that
    runs build-graph commands on the bundled examples: run at the checkout, they would write
    its out/.cache under the test's cache key (a foreign manifest to the developer's next build
    and completion)."""
    return kit.copy_bundled_workspace(tmp_path / "bundled")


_REPO_STATE = kit.REPO_ROOT / "out" / ".cache" / "state"


@pytest.fixture(autouse=True)
def _leaves_the_checkouts_manifest_alone(request):
    """No test writes the checkout's own build manifest (run build-graph commands in
    ``bundled_workspace``): a test that does fails here, with its name."""
    before = _signature(_REPO_STATE)
    yield
    after = _signature(_REPO_STATE)
    if after != before:
        pytest.fail(f"{request.node.nodeid} wrote {_REPO_STATE}: run build-graph commands in the bundled_workspace "
                    "fixture, not at the checkout")


def _signature(path):
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)
