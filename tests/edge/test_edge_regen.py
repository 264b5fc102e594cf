"""``manifesto regen`` never runs a shell: the header is parsed (``manifesto.edge.header``),
checked with the CLI's parser and rendered in-process from its heredocs.

Hostile headers are refused with one line, exit 2, and nothing they name happens (a canary
file is never created, a secret never printed); hostile files (FIFO, device, symlink,
binary) give one clear error; every committed artifact and golden regenerates byte for byte
from this checkout, the commit note on the Source line notwithstanding. These tests run in
this process: conftest fails any of them that starts a process, so a shell never ran.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kit import REPO_ROOT, cli_in_process
from manifesto.edge import header as edge

GOLDEN = REPO_ROOT / "tests" / "golden" / "single-gpu-deployment" / "expected.yaml"
SLURM = REPO_ROOT / "tests" / "golden" / "slurm-qwen3-0.6b-direct" / "expected.sbatch"
COMMAND_END = "#     --user golden-user --namespace golden-ns\n"
SECRET = "hf_s3cr3t_value_never_printed"
# out/gitops/ holds the Argo CD objects of BUILD.yaml's gitops targets: `manifesto build` makes
# them (and `build --check` verifies them); no render command does, so they carry no regen header.
ARTIFACTS = sorted(
    [p for p in (REPO_ROOT / "out").rglob("*") if p.is_file() and p.suffix in (".yaml", ".sbatch")
     and ".cache" not in p.parts and p.relative_to(REPO_ROOT / "out").parts[0] != "gitops"]
    + sorted((REPO_ROOT / "tests" / "golden").glob("*/expected.*"))
)


@pytest.fixture()
def sandbox(tmp_path, monkeypatch):
    """A working directory of its own, HF_TOKEN set to a value no output may show."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_TOKEN", SECRET)
    return tmp_path


def _golden() -> str:
    text = GOLDEN.read_text()
    assert COMMAND_END in text
    return text


def _hostile(sandbox: Path) -> dict[str, str]:
    """Name -> the golden with one thing in its header that must never run."""
    canary = sandbox / "CANARY"
    text = _golden()
    end = COMMAND_END.rstrip("\n")
    model_open = "#     <(cat <<'MANIFESTO_MODEL'\n"
    return {
        "semicolon": text.replace(COMMAND_END, f"{end}; touch {canary}\n"),
        "and-and": text.replace(COMMAND_END, f"{end} && touch {canary}\n"),
        "or-or": text.replace(COMMAND_END, f"{end} || touch {canary}\n"),
        "pipe": text.replace(COMMAND_END, f"{end} | tee {canary}\n"),
        "background": text.replace(COMMAND_END, f"{end} & touch {canary}\n"),
        "dollar-paren": text.replace(COMMAND_END, f"{end} --user-root $(touch {canary})\n"),
        "dollar-paren-quoted": text.replace(COMMAND_END, f'{end} --user-root "$(touch {canary})"\n'),
        "backticks": text.replace(COMMAND_END, f"{end} --user-root `touch {canary}`\n"),
        "variable": text.replace(COMMAND_END, f"{end} --user-root $HF_TOKEN\n"),
        "redirection": text.replace(COMMAND_END, f"{end} > {canary}\n"),
        "input-redirection": text.replace(COMMAND_END, f"{end} < /etc/passwd\n"),
        "newline": text.replace(COMMAND_END, f"{COMMAND_END}#   touch {canary}\n"),
        "foreign-program": text.replace("#   ${MANIFESTO:-manifesto} render manifest \\",
                                        f"#   touch {canary} \\"),
        "bash-c": text.replace("#   ${MANIFESTO:-manifesto} render manifest \\",
                               f"#   bash -c 'touch {canary}' \\"),
        "deploy": text.replace("render manifest \\", "deploy \\"),
        "stop": text.replace("render manifest \\", "stop \\").replace(COMMAND_END, f"{end} --all\n"),
        "test-e2e": text.replace("render manifest \\", "test e2e \\"),
        "context": text.replace(COMMAND_END, f"{end} --context prod-cluster\n"),
        "context-abbreviated": text.replace(COMMAND_END, f"{end} --cont prod-cluster\n"),
        "output-elsewhere": text.replace("render manifest \\", "render file \\")
        .replace(COMMAND_END, f"{end} -o {canary}\n"),
        "output-parent": text.replace("render manifest \\", "render file \\")
        .replace(COMMAND_END, f"{end} --output ../CANARY\n"),
        "unknown-flag": text.replace(COMMAND_END, f"{end} --kubeconfig {canary}\n"),
        "spec-by-path": text.replace("#     <(cat <<'MANIFESTO_MODEL'\n", "#     /etc/passwd --dummy <(cat "
                                     "<<'MANIFESTO_MODEL'\n"),
        "help": text.replace(COMMAND_END, f"{end} --help\n"),
        "unquoted-tag": text.replace(model_open, "#     <(cat <<MANIFESTO_MODEL\n")
        .replace("# release:", "# note: $HF_TOKEN $(touch " + str(canary) + ")\n# release:", 1),
        "double-quoted-tag": text.replace(model_open, "#     <(cat <<\"MANIFESTO_MODEL\"\n"),
        "dash-tag": text.replace(model_open, "#     <(cat <<-'MANIFESTO_MODEL'\n"),
        "command-in-substitution": text.replace("# MANIFESTO_MODEL\n#     ) \\\n",
                                                f"# MANIFESTO_MODEL\n# touch {canary}\n#     ) \\\n"),
        "more-in-substitution": text.replace(model_open, f"#     <(touch {canary}; cat <<'MANIFESTO_MODEL'\n"),
        "glob": text.replace(COMMAND_END, f"{end} --user-root /etc/*\n"),
        "escape-sequence": text.replace(COMMAND_END, f"{end} --user-root '\x1b]0;pwned\x07'\n"),
        "unclosed-heredoc": text.replace("# MANIFESTO_MODEL\n", "# NOT_THE_TAG\n"),
        "dangling-continuation": text.replace(COMMAND_END, f"{end} \\\n"),
    }


HOSTILE = sorted(_hostile(Path("/nonexistent")))


@pytest.mark.parametrize("case", HOSTILE)
def test_a_hostile_header_is_refused_and_nothing_runs(case, sandbox):
    path = sandbox / "artifact.yaml"
    path.write_text(_hostile(sandbox)[case])
    before = sorted(os.listdir(sandbox))
    for argv in (["regen", str(path)], ["regen", "--print-command", str(path)]):
        rc, out, err = cli_in_process(*argv)
        assert (rc, out) == (2, ""), (case, err)
        assert err.count("\n") == 1 and err.startswith(f"error: {path}:"), (case, err)
        assert "Traceback" not in err and SECRET not in err and "\x1b" not in err, (case, err)
    assert not (sandbox / "CANARY").exists()
    assert sorted(os.listdir(sandbox)) == before


def test_the_refusals_name_what_they_found(sandbox):
    cases = _hostile(sandbox)
    expected = {
        "semicolon": "a second command after ';'",
        "and-and": "a second command after '&&'",
        "pipe": "a pipe '|'",
        "dollar-paren": "a command substitution '$(...)'",
        "dollar-paren-quoted": "'$' inside double quotes",
        "backticks": "a command substitution in backticks",
        "variable": "an expansion '$HF_TOKEN'",
        "redirection": "a redirection '>'",
        "newline": "a second command on the line after the first ends",
        "foreign-program": "runs 'touch', not manifesto",
        "deploy": "is `manifesto deploy`, not a render",
        "stop": "is `manifesto stop`, not a render",
        "context": "names the kube context 'prod-cluster' (--context)",
        "context-abbreviated": "names the kube context 'prod-cluster' (--context)",
        "output-elsewhere": "is outside regen's private temporary folder",
        "output-parent": "-o/--output '../CANARY' is outside",
        "unknown-flag": "unrecognized arguments: --kubeconfig",
        "unquoted-tag": "heredoc tag MANIFESTO_MODEL is not single-quoted: bash would expand",
        "double-quoted-tag": "heredoc tag \"MANIFESTO_MODEL\" is in double quotes",
        "dash-tag": "an input written '<<-'",
        "command-in-substitution": "'touch",
        "escape-sequence": "control character U+001B",
    }
    for case, words in expected.items():
        path = sandbox / f"{case}.yaml"
        path.write_text(cases[case])
        rc, _, err = cli_in_process("regen", str(path))
        assert rc == 2 and words in err, (case, err)


def test_a_header_line_and_column_are_named(sandbox):
    path = sandbox / "a.yaml"
    path.write_text(_hostile(sandbox)["semicolon"])
    rc, _, err = cli_in_process("regen", str(path))
    line = _golden().split("\n").index(COMMAND_END.rstrip("\n")) + 1
    assert err.startswith(f"error: {path}:{line}:{len(COMMAND_END.rstrip())+1}: a second command after ';'")


def _special_files(sandbox: Path) -> dict[str, str]:
    fifo = sandbox / "fifo.yaml"
    os.mkfifo(fifo)
    link = sandbox / "link.yaml"
    link.symlink_to(GOLDEN)
    binary = sandbox / "binary.yaml"
    binary.write_bytes(b"# Generated by:\n#   ${MANIFESTO:-manifesto} render \xff\xfe manifest\n")
    folder = sandbox / "folder.yaml"
    folder.mkdir()
    return {"fifo": str(fifo), "device": "/dev/zero", "symlink": str(link), "binary": str(binary),
            "directory": str(folder), "missing": str(sandbox / "missing.yaml")}


@pytest.mark.parametrize("kind,words", [
    ("fifo", "is a FIFO"), ("device", "is a device"), ("symlink", "is a symlink"),
    ("binary", "not UTF-8 text"), ("directory", "is a directory"), ("missing", "cannot read it (No such file"),
])
def test_a_file_that_cannot_be_an_artifact_is_one_clean_error(kind, words, sandbox):
    path = _special_files(sandbox)[kind]
    started = time.monotonic()
    rc, out, err = cli_in_process("regen", path)
    assert time.monotonic() - started < 10
    assert (rc, out) == (2, "") and err.count("\n") == 1 and err.startswith(f"error: {path}"), err
    assert words in err, err


def test_a_file_past_the_size_bound_is_refused(sandbox):
    path = sandbox / "big.yaml"
    path.write_text(_golden())
    with pytest.raises(edge.HeaderError, match="larger than 0 MiB"):
        edge.read_artifact(str(path), limit=1024)
    assert edge.read_artifact(str(path))[1] == _golden()


def test_a_header_past_its_bounds_is_refused():
    many = "# Generated by:\n#   ${MANIFESTO:-manifesto} render manifest" + " w" * (edge.MAX_WORDS + 1) + "\n"
    with pytest.raises(edge.HeaderError, match="more than 10000 words"):
        edge.parse(many, "f")
    doc = "#     <(cat <<'T'\n# T\n#     ) \\\n"
    inputs = "# Generated by:\n#   ${MANIFESTO:-manifesto} render manifest \\\n" + doc * (edge.MAX_HEREDOCS + 1)
    with pytest.raises(edge.HeaderError, match="more than 1000 inputs"):
        edge.parse(inputs + "#     --user u\n", "f")
    long = "# Generated by:\n#   ${MANIFESTO:-manifesto} render manifest \\\n#     <(cat <<'T'\n" \
        + ("# " + "y" * 1000 + "\n") * (edge.MAX_HEADER_BYTES // 1000 + 1) + "# T\n#     )\n"
    with pytest.raises(edge.HeaderError, match="longer than 4 MiB"):
        edge.parse(long, "f")


@pytest.mark.parametrize("path", ARTIFACTS, ids=[p.relative_to(REPO_ROOT).as_posix() for p in ARTIFACTS])
def test_every_committed_artifact_regenerates_from_this_checkout(path, monkeypatch, tmp_path):
    """From a checkout a render's Source line gains the commit; regen renders without it."""
    monkeypatch.delenv("MANIFESTO_SOURCE_COMMIT", raising=False)
    monkeypatch.chdir(tmp_path)
    rc, out, err = cli_in_process("regen", str(path))
    assert (rc, out) == (0, ""), err
    assert err == f"manifesto: {path} is identical to what its header's command renders\n"
    assert os.listdir(tmp_path) == []


def test_every_artifact_is_covered():
    names = {p.relative_to(REPO_ROOT).as_posix() for p in ARTIFACTS}
    assert {"out/example-gb200/qwen/qwen3-0.6b.yaml", "out/monitoring/example-gb200.yaml",
            "out/example-slurm/qwen/qwen3-0.6b.sbatch", "tests/golden/bootstrap/expected.yaml"} <= names
    assert len(names) >= 50


def _render(*args: str) -> str:
    rc, out, err = cli_in_process("render", "manifest", *args)
    assert rc == 0, err
    return out


def test_a_render_from_a_checkout_compares_equal_but_a_change_still_shows(sandbox, monkeypatch):
    from manifesto.cli.provenance import source_commit

    if source_commit() is None:
        pytest.skip("not running from a git checkout")
    monkeypatch.delenv("MANIFESTO_SOURCE_COMMIT", raising=False)
    text = _render(str(REPO_ROOT / "models/qwen/qwen3-0.6b.yaml"), "--cluster",
                   str(REPO_ROOT / "clusters/example-gb200.yaml"), "--user", "u", "--namespace", "ns")
    assert "(checkout at git commit " in text
    mine = sandbox / "mine.yaml"
    mine.write_text(text)
    assert cli_in_process("regen", str(mine))[0] == 0
    mine.write_text(text.replace("replicas: 1", "replicas: 3", 1))
    rc, out, err = cli_in_process("regen", str(mine))
    assert rc == 1 and "-  replicas: 3\n+  replicas: 1\n" in out and "Source" not in out, out
    assert err.endswith("(2 line(s) changed)\n")
    other = text.replace("# Source: llm-manifesto ", "# Source: llm-manifesto 9", 1)
    mine.write_text(other)  # another version is a difference: the version is compared
    rc, out, _ = cli_in_process("regen", str(mine))
    assert rc == 1 and "-# Source: llm-manifesto 9" in out


def test_a_header_over_128_kib_regenerates(sandbox):
    """bash -c would fail with E2BIG (one argument holds at most 128 KiB); nothing does now."""
    args = [str(REPO_ROOT / "models/qwen/qwen3-0.6b.yaml"), "--cluster", str(REPO_ROOT / "clusters/example-gb200.yaml"),
            "--user", "u", "--namespace", "ns"]
    for i in range(160):
        args += ["--pre-launch", f"echo step-{i} {'x' * 900} 'quoted; $(not run)'"]
    text = _render(*args)
    parsed = edge.parse(text, "big")
    assert len(edge.shell_command(parsed).encode()) > 140 * 1024
    path = sandbox / "big.yaml"
    path.write_text(text)
    rc, out, err = cli_in_process("regen", str(path))
    assert (rc, out) == (0, ""), err


def test_render_file_and_slurm_write_only_inside_the_private_folder(sandbox):
    text = _golden().replace("render manifest \\", "render file \\", 1)
    path = sandbox / "file.yaml"
    path.write_text(text.replace(COMMAND_END, COMMAND_END.rstrip("\n") + " -o rendered.yaml\n"))
    rc, out, _ = cli_in_process("regen", str(path))
    # render file writes the same bytes as render manifest, whose header says so: one line differs
    changed = "\n-#   ${MANIFESTO:-manifesto} render file \\\n+#   ${MANIFESTO:-manifesto} render manifest \\\n"
    assert rc == 1 and changed in out
    assert sorted(os.listdir(sandbox)) == ["file.yaml"]
    slurm = sandbox / "job.sbatch"
    slurm.write_text(SLURM.read_text().replace("render manifest \\", "render slurm \\", 1))
    rc, out, _ = cli_in_process("regen", str(slurm))
    assert rc == 1 and out.count("\n-") == 1 and "\n-#   ${MANIFESTO:-manifesto} render slurm \\\n" in out
    assert sorted(os.listdir(sandbox)) == ["file.yaml", "job.sbatch"]


def test_regen_leaves_the_process_as_it_found_it(sandbox, monkeypatch):
    monkeypatch.setenv("MANIFESTO_NAMESPACE", "elsewhere")
    monkeypatch.setenv("KUBECONFIG", "/nonexistent/kubeconfig")
    (sandbox / ".env").write_text("MANIFESTO_ROUTING_PROFILE=/nonexistent.yaml\n")
    environ, cwd = dict(os.environ), os.getcwd()
    rc, _, err = cli_in_process("regen", str(GOLDEN))
    assert rc == 0, err
    assert dict(os.environ) == environ and os.getcwd() == cwd
    failing = sandbox / "bad.yaml"
    failing.write_text(_golden().replace("--namespace golden-ns", "--namespace Bad_Label"))
    assert cli_in_process("regen", str(failing))[0] == 2
    assert dict(os.environ) == environ and os.getcwd() == cwd


def test_an_input_error_names_the_heredoc_not_a_temporary_path(sandbox):
    path = sandbox / "a.yaml"
    path.write_text(_golden().replace("# release:", "# release: [not, a, name]\n# unused:", 1))
    rc, _, err = cli_in_process("regen", str(path))
    assert rc == 2 and "<heredoc MANIFESTO_MODEL>" in err and "manifesto-regen-" not in err, err


def test_print_command_is_quoted_for_bash_and_reads_back_the_same(sandbox):
    text = _render(str(REPO_ROOT / "models/qwen/qwen3-0.6b.yaml"), "--cluster",
                   str(REPO_ROOT / "clusters/example-gb200.yaml"), "--user", "o.brien", "--namespace", "ns",
                   "--pre-launch", "echo \"$HOSTNAME\" && ls -l 'it''s'", "--user-root", "/mnt/{user}")
    path = sandbox / "a.yaml"
    path.write_text(text)
    rc, printed, err = cli_in_process("regen", "--print-command", str(path))
    assert rc == 0, err
    from manifesto.render.header import regenerate_command

    assert printed == regenerate_command(text)
    again = edge.parse("# Generated by:\n" + "".join(f"# {line}\n" for line in printed.splitlines()), "again")
    words = _shape(again)
    assert words == _shape(edge.parse(text, "a"))
    assert words[words.index("--pre-launch") + 1] == "echo \"$HOSTNAME\" && ls -l 'it''s'"
    assert words[words.index("--user-root") + 1] == "/mnt/{user}"


def _shape(header):
    return [(w.tag, w.text) if isinstance(w, edge.Heredoc) else w for w in header.words]


def test_the_parse_keeps_heredocs_as_data():
    text = ("# Generated by:\n#   ${MANIFESTO:-manifesto} render manifest \\\n#     <(cat <<'M'\n"
            "# a: $HOME $(id) `id` \\\n#\n# M2\n# M\n#     ) \\\n#     --cluster <(cat <<'C'\n# C\n#     ) \\\n"
            "#     --user 'u v' --namespace \"n\"'s'x\n# Source: llm-manifesto 0.1.0\n")
    parsed = edge.parse(text, "t")
    assert _shape(parsed) == ["render", "manifest", ("M", "a: $HOME $(id) `id` \\\n\nM2\n"), "--cluster", ("C", ""),
                              "--user", "u v", "--namespace", "nsx"]
    assert (parsed.first_line, parsed.last_line) == (2, 12)
    assert edge.parse("apiVersion: v1\n", "t") is None


HEADER_PARTS = [
    "# Generated by:\n", "#   ${MANIFESTO:-manifesto} render manifest", " \\\n", "\n", "#     ", "<(cat <<'T'\n",
    "# T\n", "#     )", " --user u", " --namespace n", " --cluster", "; ", "&&", "|", "$(", ")", "`", "'", '"',
    "\\", "<<", "<(", "# Source: llm-manifesto 0.1.0\n", "#", " ", "x", "$X", "\x1b", "\u202e", "\t", "\r\n",
    "#     <(cat <<T\n", "# Run that with bash\n", "-o", " /tmp/x", "render", "deploy", " --context c",
]


def _parse_or_refuse(text: str):
    from manifesto.cli.regen_cmds import checked_command

    started = time.monotonic()
    try:
        parsed = edge.parse(text, "fuzz")
    except edge.HeaderError as exc:
        assert exc.format().count("\n") == 0 and "\x1b" not in exc.format()
        return None
    finally:
        assert time.monotonic() - started < 2
    if parsed is None:
        return None
    printed = edge.shell_command(parsed)
    again = edge.parse("# Generated by:\n" + "".join(f"# {line}\n" for line in printed.splitlines()), "again")
    assert _shape(again) == _shape(parsed)
    try:
        checked_command(parsed, "fuzz", [f"<input {i}>" for i in range(len(parsed.heredocs))])
    except edge.HeaderError as exc:
        assert exc.format().count("\n") == 0
    return parsed


@settings(max_examples=300, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=4096))
def test_random_bytes_give_a_parse_or_a_clean_refusal(data):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return
    _parse_or_refuse(text)
    _parse_or_refuse("# Generated by:\n" + text)


@settings(max_examples=400, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(HEADER_PARTS) | st.text(max_size=8), max_size=40))
def test_header_like_texts_give_a_parse_or_a_clean_refusal(parts):
    _parse_or_refuse("".join(parts))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(HEADER_PARTS), min_size=1, max_size=25))
def test_regen_of_header_like_files_writes_nothing_outside_its_folder(tmp_path_factory, parts):
    """The whole command on hypothesis's files: exit 0, 1 or 2, one error line at most, no
    traceback, no file left anywhere in the sandbox or the system's temporary folder."""
    import tempfile

    box = tmp_path_factory.mktemp("regen-fuzz")
    scratch = tmp_path_factory.mktemp("regen-tmp")  # this test's own temporary folder: other workers
    path = box / "a.yaml"                            # regenerate in the system's at the same time
    path.write_text("".join(parts) + "#     --cluster <(cat <<'C'\n# C\n#     )\n")
    cwd, saved = os.getcwd(), tempfile.tempdir
    os.chdir(box)
    tempfile.tempdir = str(scratch)
    try:
        rc, out, err = cli_in_process("regen", str(path))
    finally:
        os.chdir(cwd)
        tempfile.tempdir = saved
    assert rc in (0, 1, 2) and "Traceback" not in err, err
    assert rc != 2 or err.count("\n") == 1, err
    assert os.listdir(box) == ["a.yaml"]
    assert os.listdir(scratch) == []


def test_the_private_folder_is_private_and_removed(sandbox, monkeypatch):
    from manifesto.cli import regen_cmds

    seen = []
    real = regen_cmds._private_folder

    def spy():
        folder = real()
        seen.append(folder.name)
        return folder

    monkeypatch.setattr(regen_cmds, "_private_folder", spy)

    class Probe:
        def __init__(self, *a):
            mode = stat.S_IMODE(os.stat(seen[0]).st_mode)
            inputs = sorted(os.listdir(os.path.join(seen[0], "inputs")))
            seen.append((mode, inputs))

    original = regen_cmds._render

    def render(*a):
        Probe()
        return original(*a)

    monkeypatch.setattr(regen_cmds, "_render", render)
    assert cli_in_process("regen", str(GOLDEN))[0] == 0
    assert seen[1] == (0o700, ["MANIFESTO_CLUSTER.yaml", "MANIFESTO_MODEL.yaml"])
    assert not os.path.exists(seen[0])


def test_a_workload_header_naming_files_by_path_is_refused(sandbox):
    """`render workload` writes a header that names its files by path: regen would read the
    reader's files, so it refuses (its inputs are not inlined)."""
    path = sandbox / "job.yaml"
    path.write_text("# Generated by:\n#   manifesto render workload /etc/w.yaml --cluster /etc/c.yaml --accelerator "
                    "gb200 --namespace team\n# Cluster: c\n# Source: llm-manifesto 0.1.0\n"
                    "# Safe to edit before applying.\napiVersion: batch/v1\n")
    rc, out, err = cli_in_process("regen", str(path))
    assert (rc, out) == (2, "")
    assert err == (f"error: {path}:2:1: FILE '/etc/w.yaml' names a file by path or a catalog name; regen reads inputs "
                   "only from the header's heredocs; regen runs only a manifesto render whose inputs the header "
                   "holds, so nothing was run\n")


def test_without_source_takes_off_only_the_checkout_note():
    from manifesto.cli.provenance import without_source

    sha = "0123456789abcdef0123456789abcdef01234567"
    note = f" (checkout at git commit {sha}; any uncommitted changes are not recorded here)"
    text = "# Generated by:\n#   x\n# Source: llm-manifesto 0.1.0{}\nbody: 1\n# Source: llm-manifesto 0.1.0{}\n"
    assert without_source(text.format(note, note)) == text.format("", note)
    old = f" (checkout at git commit {sha}; uncommitted changes not shown)"  # the earlier wording
    assert without_source(text.format(old, "")) == text.format("", "")
    for kept in (text.format(note + " ", ""), text.format(note.replace(sha, sha.upper()), ""),
                 text.format(" (checkout at git commit abc; uncommitted changes not shown)", ""), "plain\n"):
        assert without_source(kept) == kept


@pytest.mark.parametrize("cluster", ["example-gb200", "example-slurm"])
def test_a_render_with_every_option_regenerates(cluster, sandbox):
    """A routing profile inlined as a heredoc, idle settings, root overrides and pre-launch
    commands full of shell metacharacters: all data, all reproduced."""
    routing = sorted((REPO_ROOT / "routing").glob("*.yaml"))[0]
    args = [str(REPO_ROOT / "models/qwen/qwen3-0.6b-pd.yaml"), "--cluster", cluster, "--user", "o.brien",
            "--namespace", "team-a", "--routing-profile", str(routing), "--user-root", "/mnt/{user} x",
            "--pre-launch", "echo \"$HOSTNAME\" && ls -l; `id` $(id) > /tmp/never"]
    if cluster == "example-gb200":
        args += ["--idle-timeout", "2h", "--no-idle-shutdown"]
    text = _render(*args)
    assert "--routing-profile <(cat <<'MANIFESTO_ROUTING'" in text
    path = sandbox / "a.yaml"
    path.write_text(text)
    rc, out, err = cli_in_process("regen", str(path))
    assert (rc, out) == (0, ""), err


def test_the_diff_escapes_control_characters_from_the_file(sandbox):
    path = sandbox / "a.yaml"
    path.write_text(_golden().replace("replicas: 1", "replicas: 1 # \x1b]0;title\x07\x1b[2J\u202e", 1))
    rc, out, err = cli_in_process("regen", str(path))
    assert rc == 1 and "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "-  replicas: 1 # \\x1b]0;title\\x07\\x1b[2J\\u202e\n+  replicas: 1\n" in out


def _outside_files(sandbox: Path) -> tuple[Path, Path]:
    """A spec fragment and a config.json outside regen's private folder, each holding a canary."""
    outside = sandbox / "outside"
    outside.mkdir()
    spec = outside / "evil.yaml"
    spec.write_text("model:\n  label: CANARY-EXTENDS\n")
    config = outside / "config.json"
    config.write_text('{"architectures": ["Qwen3ForCausalLM"], "hidden_size": 1024, "canary": "CANARY-CONFIG"}')
    return spec, config


@pytest.mark.parametrize("how", ["extends-absolute", "extends-climbing", "extends-home", "config-absolute",
                                 "config-climbing"])
def test_regen_reads_no_file_its_header_does_not_hold(sandbox, how):
    """An ``extends:`` or ``model.config_json`` in a header's spec resolves inside regen's private
    folder or is refused by name: nothing else on the machine is read, merged or printed."""
    spec, config = _outside_files(sandbox)
    climb = "../" * 12
    line = {"extends-absolute": f"# extends: {spec}\n",
            "extends-climbing": f"# extends: {climb}{str(spec).lstrip('/')}\n",
            "extends-home": "# extends: ~/.bashrc\n"}.get(how)
    text = _golden()
    if line is not None:
        text = text.replace("#     <(cat <<'MANIFESTO_MODEL'\n", "#     <(cat <<'MANIFESTO_MODEL'\n" + line, 1)
    else:
        target = str(config) if how == "config-absolute" else climb + str(config).lstrip("/")
        text = text.replace("# model:\n", f"# model:\n#   config_json: {target}\n", 1)
    assert text != _golden()
    path = sandbox / "a.yaml"
    path.write_text(text)
    rc, out, err = cli_in_process("regen", str(path))
    assert rc == 2, (out, err)
    assert "CANARY" not in out + err and "Traceback" not in err
    assert ("extends" in err) if line is not None else ("config_json" in err)
    assert "manifesto-regen-" not in err  # the private folder is named as such, not by its path


def test_two_regens_at_once_in_threads_both_come_out_right():
    """regen asks for the product its header's request names and touches no process-wide state
    (environment, working directory, standard streams): renders of different kinds made at
    the same moment in two threads each get their own bytes, and the process is as it was."""
    import threading

    from manifesto.cli.provenance import without_source
    from manifesto.cli.regen_cmds import regenerate

    paths = [GOLDEN, SLURM, REPO_ROOT / "out" / "monitoring" / "example-gb200.yaml"]
    wanted = {p: without_source(edge.read_artifact(str(p))[1]) for p in paths}
    assert len(set(wanted.values())) == len(paths)
    environ, cwd = dict(os.environ), os.getcwd()
    for _ in range(2):
        start, got, failed = threading.Barrier(len(paths)), {}, []

        def one(path):
            parsed = edge.parse(edge.read_artifact(str(path))[1], str(path))
            start.wait()
            try:
                got[path] = regenerate(parsed, str(path))
            except Exception as exc:  # noqa: BLE001: reported below, with the path
                failed.append((path, exc))

        threads = [threading.Thread(target=one, args=(p,)) for p in paths]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not failed and got == wanted
    assert dict(os.environ) == environ and os.getcwd() == cwd


def test_regen_asks_for_products_and_calls_no_handler():
    """No environment editing, directory change, stream capture or command handler in regen."""
    import ast

    source = (REPO_ROOT / "manifesto" / "cli" / "regen_cmds.py").read_text()
    tree = ast.parse(source)
    names = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)} | {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert not names & {"environ", "putenv", "chdir", "redirect_stdout", "func", "StringIO"}, names & {
        "environ", "putenv", "chdir", "redirect_stdout", "func", "StringIO"}
