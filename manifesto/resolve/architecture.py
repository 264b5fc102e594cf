"""A model's architecture as the memory-fit arithmetic needs it, read from config.json keys.

Pure: the loader hands in the parsed mapping (a bundled catalog entry, a config.json a spec
points to, or one from the Hugging Face cache) and this module turns it into a frozen
``Architecture``. Unknown or missing facts stay unknown; nothing here guesses a number.
"""

from __future__ import annotations

from typing import Any

import msgspec

from manifesto.errors import InputError

__all__ = ["Architecture", "from_config", "WEIGHT_BYTES", "MODELLED_ATTENTION"]


class Architecture(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The shape of a model as the memory-fit arithmetic (resolve/fit.py) needs it, read from a
    Hugging Face config.json (:func:`from_config`). Unnamed fields are the config.json sizes of
    the same meaning; a 0 means the model does not have that part."""

    model_type: str  # config.json's model_type
    layers: int  # transformer layers (num_hidden_layers)
    hidden_size: int
    attention_heads: int
    kv_heads: int  # key/value heads (num_key_value_heads)
    head_dim: int
    vocab_size: int
    source: str = ""  # where the config was read (catalog record, config.json path)
    attention: str = "gqa"  # mha | gqa | mla | hybrid (DeepSeek-V4 compressed attention; Kimi K3 KDA + MLA)
    intermediate_size: int = 0
    tie_word_embeddings: bool = False
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0
    experts: int = 0  # routed experts per MoE layer (n_routed_experts, num_experts...)
    expert_hidden_size: int = 0  # width the routed experts run at (latent MoE); 0: hidden_size
    shared_experts: int = 0  # experts every token goes through (n_shared_experts)
    active_experts: int = 0  # routed experts per token (num_experts_per_tok)
    moe_intermediate_size: int = 0
    dense_layers: int = 0  # leading layers of a MoE model that keep a dense MLP
    max_position_embeddings: int = 0
    dtype: str = "bfloat16"  # the checkpoint's torch_dtype
    weight_format: str = "bf16"  # linear layers outside the routed experts
    expert_format: str = "bf16"  # routed experts
    # KV-cache facts beyond one kind of attention in every layer (config.json keys in brackets):
    sliding_window: int = 0  # tokens a sliding-window layer attends to [sliding_window]
    sliding_layers: int = 0  # layers of layer_types that are sliding_attention [layer_types]
    compress_ratios: tuple[int, ...] = ()  # per main layer: tokens per compressed KV entry, 0 = window only
    index_head_dim: int = 0  # width of the indexer key kept per compressed entry of a ratio-4 layer
    linear_layers: int = 0  # linear-attention (KDA) layers [linear_attn_config.kda_layers]
    linear_heads: int = 0  # [linear_attn_config.num_heads]
    linear_head_dim: int = 0  # [linear_attn_config.head_dim]
    linear_conv_kernel: int = 0  # [linear_attn_config.short_conv_kernel_size]; 0: not published
    weight_block: tuple[int, ...] = ()  # (block_n, block_k) of block-quantized weights [quantization_config.weight_block_size]
    o_groups: int = 0  # DeepSeek-V4's grouped output projection [o_groups]
    o_lora_rank: int = 0  # [o_lora_rank]
    params: int | None = None  # published total (main model)
    active_params: int | None = None  # published activated parameters per token (MoE)

    @property
    def is_moe(self) -> bool:
        """The model routes tokens to experts."""
        return self.experts > 0


# Bytes per parameter of each stored weight format, scales included: FP8 with one fp32 scale
# per 128x128 block; NVFP4 with one FP8 scale per 16 values; MXFP4 (and DeepSeek-V4's FP4
# experts) with one 8-bit exponent scale per 32 values.
WEIGHT_BYTES = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0 + 4 / (128 * 128), "nvfp4": 0.5 + 1 / 16,
                "mxfp4": 0.5 + 1 / 32, "fp4": 0.5 + 1 / 32,
                # compressed-tensors weight-only integers: int8 with a per-channel scale (negligible),
                # int4 packed with one bf16 scale per group of 128 values.
                "int8": 1.0, "int4": 0.5 + 2 / 128}
MODELLED_ATTENTION = ("mha", "gqa", "mla")
_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32", "float": "fp32"}


#: The largest value a config.json count may hold, by key (what a model can have, with room:
#: the largest published models have some 10^5 hidden units, 10^3 heads or experts, 10^6
#: vocabulary entries and 10^7 positions); any other count is at most MAX_COUNT.
MAX_COUNT = (1 << 31) - 1
_MAX = {
    "hidden_size": 1 << 20, "num_attention_heads": 1 << 16, "num_key_value_heads": 1 << 16, "head_dim": 1 << 16,
    "num_hidden_layers": 1 << 16, "vocab_size": 1 << 26, "num_heads": 1 << 16, "intermediate_size": 1 << 24,
    "moe_intermediate_size": 1 << 24, "routed_expert_hidden_size": 1 << 24, "n_routed_experts": 1 << 16,
    "num_experts": 1 << 16, "num_local_experts": 1 << 16, "n_shared_experts": 1 << 16, "num_shared_experts": 1 << 16,
    "num_experts_per_tok": 1 << 16, "num_experts_per_token": 1 << 16, "first_k_dense_replace": 1 << 16,
    "q_lora_rank": 1 << 20, "kv_lora_rank": 1 << 20, "qk_nope_head_dim": 1 << 16, "qk_rope_head_dim": 1 << 16,
    "v_head_dim": 1 << 16, "index_head_dim": 1 << 16, "short_conv_kernel_size": 1 << 10,
}
#: Counts a model cannot have zero of: a config.json that says 0 is refused, not divided by.
_NONZERO = frozenset(("hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim", "num_hidden_layers",
                      "vocab_size", "num_heads"))
#: The most parameters a model may count (10^15; the largest published have some 2*10^12).
MAX_PARAMS = 10 ** 15


def _int(cfg: dict, key: str, where: str, default: int | None = None) -> int:
    value = cfg.get(key, default)
    if value is None:
        raise InputError(f"{where}: config.json has no '{key}', which the memory-fit check needs")
    high, low = _MAX.get(key, MAX_COUNT), 1 if key in _NONZERO else 0
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InputError(f"{where}: config.json '{key}' must be a whole number from {low} to {high}, "
                         f"found {_kind(value, high)}")
    return value


def _kind(value, high: int = MAX_COUNT) -> str:
    """What ``value`` is, never what it says: a config.json is not ours to print."""
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int):
        return "0" if value == 0 else "a negative number" if value < 0 else f"a number over {high}"
    return {float: "a decimal number", str: "text", list: "a list", dict: "a mapping"}.get(type(value), "null")


def _params(value, key: str, where: str) -> int | None:
    """A published parameter count (None when not given), bounded by MAX_PARAMS."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_PARAMS:
        raise InputError(f"{where}: '{key}' must be a whole number from 1 to {MAX_PARAMS}, found "
                         f"{_kind(value, MAX_PARAMS)}")
    return value


def _quant_format(cfg: dict, where: str) -> str | None:
    q = cfg.get("quantization_config")
    if q is None:
        return None
    if not isinstance(q, dict):
        raise InputError(f"{where}: config.json 'quantization_config' must be a mapping")
    method = str(q.get("quant_method", "")).lower()
    algo = str(q.get("quant_algo", "")).lower()
    fmt = str(q.get("format", "")).lower()
    if method == "fp8" or algo == "fp8":
        return "fp8"
    if "nvfp4" in (algo, method) or "nvfp4" in fmt:
        return "nvfp4"
    if method == "mxfp4" or algo == "mxfp4" or "mxfp4" in fmt:
        return "mxfp4"
    if method == "compressed-tensors":
        found = _compressed_tensors(q, fmt)
        if found:
            return found
    raise InputError(f"{where}: quantization_config names a format (quant_method, quant_algo or format) the "
                     "memory-fit check does not know; supported: fp8, nvfp4, mxfp4, compressed-tensors "
                     "float-quantized (FP8) and int4/int8 weight-only")


def _compressed_tensors(q: dict, fmt: str) -> str | None:
    """A compressed-tensors checkpoint's weight format (vLLM 0.33.0 quantization/compressed_tensors):
    ``float-quantized`` 8-bit float weights are FP8 (static or dynamic activations alike), and
    ``pack-quantized``/``naive-quantized`` integer weights int4 or int8; read from the format and the
    config_groups' ``weights`` (num_bits, type)."""
    weights = [g.get("weights") for g in (q.get("config_groups") or {}).values() if isinstance(g, dict)]
    weights = [w for w in weights if isinstance(w, dict)]
    bits = {w.get("num_bits") for w in weights}
    kinds = {str(w.get("type", "")).lower() for w in weights}
    if fmt == "float-quantized" or (bits == {8} and kinds == {"float"}):
        return "fp8"
    if fmt in ("pack-quantized", "naive-quantized", "int-quantized") or kinds == {"int"}:
        if bits == {4}:
            return "int4"
        if bits == {8}:
            return "int8"
    return None


# Module names a compressed-tensors ``ignore`` list is probed with: if every non-expert kind is
# left out of quantization, those layers keep the checkpoint dtype and only routed experts are
# quantized (Kimi K3's MXFP4 checkpoint).
_NON_EXPERT_PROBES = ("model.layers.1.self_attn.o_proj", "model.layers.1.block_sparse_moe.shared_experts.down_proj",
                      "model.layers.0.mlp.down_proj")
_EXPERT_PROBE = "model.layers.1.block_sparse_moe.experts.0.w1"


def _ignored(name: str, ignore: list) -> bool:
    import re

    for entry in ignore:
        entry = str(entry)
        if (entry.startswith("re:") and re.match(entry[3:], name)) or entry == name:
            return True
    return False


def _not_converted(name: str, patterns: list) -> bool:
    """MXFP4's ``modules_to_not_convert`` (gpt-oss: model.layers.*.self_attn, lm_head...): a module
    is left unquantized when a pattern (``*`` matching any part) names it or a module holding it."""
    import fnmatch

    return any(fnmatch.fnmatchcase(name, str(p)) or fnmatch.fnmatchcase(name, f"{p}.*") for p in patterns)


def _experts_only(cfg: dict) -> bool:
    """True when quantization_config leaves every non-expert layer unquantized: a compressed-
    tensors ``ignore`` list naming them, or an MXFP4 ``modules_to_not_convert`` naming the
    attention (vLLM 0.33.0 then loads those layers in the checkpoint dtype)."""
    q = cfg.get("quantization_config") or {}
    ignore = q.get("ignore")
    if isinstance(ignore, list):
        return all(_ignored(n, ignore) for n in _NON_EXPERT_PROBES) and not _ignored(_EXPERT_PROBE, ignore)
    keep = q.get("modules_to_not_convert")
    if isinstance(keep, list):
        return _not_converted("model.layers.1.self_attn.o_proj", keep) and \
            not _not_converted("model.layers.1.mlp.experts", keep)
    return False


def _int_list(cfg: dict, key: str, where: str) -> list[int]:
    value = cfg.get(key)
    if value is None:
        return []
    if (not isinstance(value, list) or len(value) > 1 << 16
            or any(isinstance(x, bool) or not isinstance(x, int) or not 0 <= x <= MAX_COUNT for x in value)):
        raise InputError(f"{where}: config.json '{key}' must be a list of at most 65536 whole numbers from 0 to "
                         f"{MAX_COUNT}")
    return value


def _layer_kinds(cfg: dict, layers: int, where: str) -> tuple[int, str]:
    """(sliding-window layers, a layer kind the fit does not model or "") of ``layer_types``
    over the ``layers`` main layers."""
    kinds = cfg.get("layer_types")
    if kinds is None:
        return 0, ""
    if not isinstance(kinds, list) or not all(isinstance(k, str) for k in kinds):
        raise InputError(f"{where}: config.json 'layer_types' must be a list of layer kinds")
    other = next((k for k in kinds[:layers] if k not in ("full_attention", "sliding_attention")), "")
    return sum(1 for k in kinds[:layers] if k == "sliding_attention"), other


def _linear(cfg: dict, where: str) -> tuple[int, int, int, int]:
    """(layers, heads, head_dim, conv kernel) of the linear-attention layers (Kimi Linear/K3's KDA)."""
    lin = cfg.get("linear_attn_config")
    if not isinstance(lin, dict):
        return 0, 0, 0, 0
    name = f"{where} linear_attn_config"
    return (len(_int_list(lin, "kda_layers", name)), _int(lin, "num_heads", name), _int(lin, "head_dim", name),
            _int(lin, "short_conv_kernel_size", name, 0))


def from_config(cfg: Any, *, source: str, params: int | None = None, active_params: int | None = None) -> Architecture:
    """The architecture described by a config.json mapping. ``source`` names where it was read
    (it prefixes every error); ``params``/``active_params`` are published counts, if any."""
    if not isinstance(cfg, dict):
        raise InputError(f"{source}: a config.json holds a mapping, found {type(cfg).__name__}")
    cfg = cfg.get("text_config", cfg) if isinstance(cfg.get("text_config"), dict) else cfg
    hidden = _int(cfg, "hidden_size", source)
    heads = _int(cfg, "num_attention_heads", source)
    kv_heads = _int(cfg, "num_key_value_heads", source, heads)
    model_type = str(cfg.get("model_type") or "unknown")
    kv_lora = _int(cfg, "kv_lora_rank", source, 0) if cfg.get("kv_lora_rank") is not None else 0
    params = _params(params, "params", source)
    active_params = _params(active_params, "active_params", source)
    if model_type.startswith("deepseek_v4") or isinstance(cfg.get("linear_attn_config"), dict):
        attention = "hybrid"  # compressed attention (DeepSeek-V4); linear-attention layers (Kimi K3)
    elif kv_lora:
        attention = "mla"
    else:
        attention = "mha" if kv_heads == heads else "gqa"
    experts = _int(cfg, "n_routed_experts", source, 0) or _int(cfg, "num_experts", source, 0) \
        or _int(cfg, "num_local_experts", source, 0)
    moe_inter = _int(cfg, "moe_intermediate_size", source, 0) or (
        _int(cfg, "intermediate_size", source) if experts else 0)
    dtype_name = str(cfg.get("torch_dtype") or cfg.get("dtype") or "bfloat16")
    dtype = _DTYPES.get(dtype_name)
    if dtype is None:
        raise InputError(f"{source}: config.json 'torch_dtype' (or 'dtype') is not one of {', '.join(_DTYPES)}")
    layers = _int(cfg, "num_hidden_layers", source)
    ratios = _int_list(cfg, "compress_ratios", source)
    if ratios and len(ratios) < layers:
        raise InputError(f"{source}: config.json compress_ratios has {len(ratios)} entries for {layers} layers")
    if any(r not in (0, 4, 128) for r in ratios[:layers]):
        raise InputError(f"{source}: config.json compress_ratios holds a ratio other than 0, 4 and 128, which the "
                         "memory-fit check does not model")
    lin_layers, lin_heads, lin_dim, lin_conv = _linear(cfg, source)
    sliding, other_kind = _layer_kinds(cfg, layers, source)
    if other_kind:  # e.g. linear_attention (Qwen3-Next): its state is not modelled, so the fit stays unknown
        attention = "hybrid"
    quant = _quant_format(cfg, source)
    weight_format = dtype if quant and _experts_only(cfg) else quant or dtype
    expert_format = quant or dtype
    if cfg.get("expert_dtype") is not None:
        expert_format = str(cfg["expert_dtype"]).lower()
        if expert_format not in WEIGHT_BYTES:
            raise InputError(f"{source}: config.json 'expert_dtype' is not one of "
                                    f"{', '.join(WEIGHT_BYTES)}")
    return Architecture(
        model_type=model_type, layers=layers, hidden_size=hidden,
        attention_heads=heads, kv_heads=kv_heads, head_dim=_int(cfg, "head_dim", source, hidden // max(heads, 1)),
        vocab_size=_int(cfg, "vocab_size", source), source=source, attention=attention,
        intermediate_size=_int(cfg, "intermediate_size", source, 0),
        tie_word_embeddings=bool(cfg.get("tie_word_embeddings", False)),
        q_lora_rank=_int(cfg, "q_lora_rank", source, 0) if cfg.get("q_lora_rank") is not None else 0,
        kv_lora_rank=kv_lora, qk_nope_head_dim=_int(cfg, "qk_nope_head_dim", source, 0),
        qk_rope_head_dim=_int(cfg, "qk_rope_head_dim", source, 0), v_head_dim=_int(cfg, "v_head_dim", source, 0),
        experts=experts, expert_hidden_size=_int(cfg, "routed_expert_hidden_size", source, 0) if experts else 0,
        shared_experts=(_int(cfg, "n_shared_experts", source, 0) or _int(cfg, "num_shared_experts", source, 0))
        if experts else 0,
        active_experts=(_int(cfg, "num_experts_per_tok", source, 0) or _int(cfg, "num_experts_per_token", source, 0))
        if experts else 0,
        moe_intermediate_size=moe_inter,
        dense_layers=_int(cfg, "first_k_dense_replace", source, 0) if experts else 0,
        max_position_embeddings=_int(cfg, "max_position_embeddings", source, 0), dtype=dtype,
        weight_format=weight_format, expert_format=expert_format, params=params, active_params=active_params,
        sliding_window=_int(cfg, "sliding_window", source, 0) if cfg.get("sliding_window") is not None else 0,
        sliding_layers=sliding, compress_ratios=tuple(ratios[:layers]),
        index_head_dim=_int(cfg, "index_head_dim", source, 0), linear_layers=lin_layers, linear_heads=lin_heads,
        linear_head_dim=lin_dim, linear_conv_kernel=lin_conv, weight_block=_weight_block(cfg, source),
        o_groups=_int(cfg, "o_groups", source, 0), o_lora_rank=_int(cfg, "o_lora_rank", source, 0),
    )


def _weight_block(cfg: dict, where: str) -> tuple[int, ...]:
    """quantization_config.weight_block_size: (block_n, block_k) of block-quantized (FP8) weights."""
    q = cfg.get("quantization_config")
    block = q.get("weight_block_size") if isinstance(q, dict) else None
    if block is None:
        return ()
    if not isinstance(block, list) or len(block) != 2 or any(isinstance(x, bool) or not isinstance(x, int) or x <= 0
                                                             for x in block):
        raise InputError(f"{where}: config.json quantization_config.weight_block_size must be two whole numbers")
    return tuple(block)
