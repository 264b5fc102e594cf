"""tools/gen_router_table.py on a small router-shaped git repository: stability from the
registration, a decoder handed to a helper, a local copied from a package variable, nested
structs, and the raw-bytes-then-two-strict-structs factory (disagg-profile-handler's shape)."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration  # runs git

ROOT = Path(__file__).resolve().parent.parent
M = "github.com/llm-d/llm-d-router"

FILES = {
    "apix/config/v1alpha1/zz_generated.register.go": 'package v1alpha1\n\nconst GroupName = "llm-d.ai"\n',
    "pkg/plugin/stability.go": (
        "package plugin\n\ntype StabilityLevel string\n\nconst (\n"
        '\tStabilityAlpha StabilityLevel = "Alpha"\n\tStabilityBeta  StabilityLevel = "Beta"\n)\n'),
    "cmd/epp/runner/runner.go": f"""package runner

import (
\tfwkplugin "{M}/pkg/plugin"
\t"{M}/pkg/disc"
\t"{M}/pkg/handler"
\t"{M}/pkg/prefix"
)

func register() {{
\tfwkplugin.Register(disc.PluginType, fwkplugin.StabilityBeta, disc.Factory)
\tfwkplugin.RegisterWithPluginDependencies(handler.HandlerType, fwkplugin.StabilityBeta, handler.Factory, handler.Parse)
\tfwkplugin.Register(prefix.PluginType, fwkplugin.StabilityAlpha, prefix.Factory)
}}
""",
    "pkg/disc/plugin.go": """package disc

import "encoding/json"

const PluginType = "file-discovery"

type params struct {
\tPath      string `json:"path"`
\tWatchFile bool   `json:"watchFile"`
}

func Factory(name string, parameters *json.Decoder, _ any) (any, error) {
\treturn build(PluginType, name, parameters, nil)
}

func build(kind, name string, parameters *json.Decoder, check func(string) error) (any, error) {
\tp := &params{}
\tif err := parameters.Decode(p); err != nil {
\t\treturn nil, err
\t}
\treturn p, nil
}
""",
    "pkg/handler/handler.go": """package handler

import "encoding/json"

const HandlerType = "disagg-profile-handler"

type StageOrder string

type deciders struct {
\tPrefill string `json:"prefill,omitempty"`
}

type Params struct {
\tStageOrder StageOrder `json:"stageOrder,omitempty"`
\tDeciders   deciders   `json:"deciders"`
}

type legacy struct {
\tPrefillProfile string `json:"prefillProfile"`
}

func Factory(name string, rawParameters *json.Decoder, handle any) (any, error) {
\treturn Parse(rawParameters, handle)
}

func Parse(rawParameters *json.Decoder, handle any) (any, error) {
\tparameters := Params{}
\tvar raw json.RawMessage
\tif err := rawParameters.Decode(&raw); err != nil {
\t\treturn nil, err
\t}
\tif err := plugin.StrictDecoder(raw).Decode(&parameters); err != nil {
\t\told := legacy{}
\t\tif err := plugin.StrictDecoder(raw).Decode(&old); err != nil {
\t\t\treturn nil, err
\t\t}
\t}
\treturn parameters, nil
}
""",
    "pkg/prefix/prefix.go": """package prefix

import "encoding/json"

const PluginType = "burst-prefix-cache-producer"

type config struct {
\tBlockSizeTokens int `json:"blockSizeTokens"`
}

var defaultConfig = config{
\tBlockSizeTokens: 64,
}

func Factory(name string, rawParameters *json.Decoder, handle any) (any, error) {
\tparameters := defaultConfig
\tif err := rawParameters.Decode(&parameters); err != nil {
\t\treturn nil, err
\t}
\treturn parameters, nil
}
""",
}


def _gen():
    spec = importlib.util.spec_from_file_location("gen_router_table", ROOT / "tools" / "gen_router_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _repo(tmp_path) -> str:
    repo = tmp_path / "router"
    for path, text in FILES.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "x"], ["tag", "v9.9.9"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)
    return str(repo)


def test_generator_reads_parameters_and_stability(tmp_path):
    data = _gen().table(_repo(tmp_path), "v9.9.9")
    plugins = {p["type"]: p for p in data["plugins"]}
    assert plugins["file-discovery"] == {
        "type": "file-discovery", "stability": "Beta", "strict": True, "deprecated": None,
        "parameters": [{"name": "path", "type": "string"}, {"name": "watchFile", "type": "boolean"}]}
    assert plugins["burst-prefix-cache-producer"]["stability"] == "Alpha"
    assert plugins["burst-prefix-cache-producer"]["parameters"] == [{"name": "blockSizeTokens", "type": "integer"}]
    handler = plugins["disagg-profile-handler"]
    assert (handler["stability"], handler["strict"]) == ("Beta", True)
    assert handler["parameters"] == [
        {"name": "deciders", "type": "object", "fields": [{"name": "prefill", "type": "string"}]},
        {"name": "stageOrder", "type": "string"}]
    assert handler["alternatives"] == [[{"name": "prefillProfile", "type": "string"}]]
    assert data["api_versions"] == ["llm-d.ai/v1alpha1"]
