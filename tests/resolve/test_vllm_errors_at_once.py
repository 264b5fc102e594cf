"""Every vLLM argument and variable error of a spec is reported in one run, each at its own
file:line:col, in file order (issue 27: three misspellings took three runs to fix)."""

from __future__ import annotations

from kit import cli_in_process

from manifesto.load.catalog import vllm_table
from manifesto.resolve.vllm_check import check_flag_words, flag_word_problems

SPEC = """release: demo
model: {id: org/model}
vllm: {enforce_eagre: true}
env: {VLLM_LOGGING_LEVL: DEBUG}
routing: {kind: load_aware}
roles:
  - name: decode
    vllm: {max_model_lenn: 8192, tensor_parallel_size: 2}
    vllm_raw_args: ['--max-num-seqz 4 --gpu-memory-utilization=1.5']
  - name: other
    computed: {vllm: {max_num_batched_tokenz: 8192}}
"""


def test_every_argument_error_in_one_run(tmp_path, monkeypatch):
    (tmp_path / "m.yaml").write_text(SPEC)
    monkeypatch.chdir(tmp_path)
    r = cli_in_process("render", "manifest", "m.yaml", "--cluster", "example-stateless-b200", "--user", "u",
                       "--namespace", "ns")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr.splitlines() == [
        "error: m.yaml:3:8: vllm.enforce_eagre: vLLM 0.33.0 has no argument --enforce-eagre "
        "(did you mean 'enforce_eager'?)",
        "error: m.yaml:4:7: env.VLLM_LOGGING_LEVL: vLLM 0.33.0 reads no variable VLLM_LOGGING_LEVL "
        "(did you mean 'VLLM_LOGGING_LEVEL'?); it would log 'Unknown vLLM environment variable' and ignore it",
        "error: m.yaml:8:12: roles[0].vllm.max_model_lenn: vLLM 0.33.0 has no argument --max-model-lenn "
        "(did you mean 'max_model_len'?)",
        "error: m.yaml:8:34: roles[0].vllm.tensor_parallel_size: --tensor-parallel-size is set by Manifesto; "
        "configure it through parallelism.tp",
        "error: m.yaml:9:21: roles[0].vllm_raw_args[0]: vLLM 0.33.0 has no argument --max-num-seqz "
        "(did you mean 'max_num_seqs'?)",
        "error: m.yaml:9:21: roles[0].vllm_raw_args[0]: --gpu-memory-utilization takes a value in (0, 1] in "
        "vLLM 0.33.0, found '1.5'",
        "error: m.yaml:11:23: roles[1].computed.vllm.max_num_batched_tokenz: vLLM 0.33.0 has no argument "
        "--max-num-batched-tokenz (did you mean 'max_num_batched_tokens'?)",
    ]


def test_config_validate_reports_them_all_too(tmp_path, monkeypatch):
    (tmp_path / "m.yaml").write_text(SPEC)
    monkeypatch.chdir(tmp_path)
    r = cli_in_process("config", "validate", "m.yaml", "--cluster", "example-stateless-b200", "--user", "u",
                       "--namespace", "ns")
    assert r.returncode == 1
    assert sum(line.startswith("error: m.yaml:") for line in r.stderr.splitlines()) == 7, r.stderr


def test_flag_word_problems_lists_each_bad_word():
    table = vllm_table("0.33.0")
    words = ["--max-modle-len", "4096", "--enforce-eager=1", "--dtype", "bfloat16", "--gpu-memory-utilization", "2"]
    assert flag_word_problems(table, words) == [
        "vLLM 0.33.0 has no argument --max-modle-len (did you mean 'max_model_len'?)",
        "--enforce-eager is a switch and takes no value, found '1'",
        "--gpu-memory-utilization takes a value in (0, 1] in vLLM 0.33.0, found '2'",
    ]
    assert check_flag_words(table, words) == flag_word_problems(table, words)[0]
    assert flag_word_problems(table, ["--dtype", "bfloat16"]) == [] and check_flag_words(table, []) is None
