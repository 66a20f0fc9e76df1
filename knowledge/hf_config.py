"""Read a local Hugging Face ``config.json`` into an `Architecture`, so any checkpoint can be sized exactly.

Each supported ``model_type`` has its own field names and implicit conventions (GPT-2's ``n_embd``/``n_inner``,
Falcon's ``multi_query``/``new_decoder_architecture``, DeepSeek's ``n_routed_experts``/``kv_lora_rank``…), and the
parameter count depends on details the config only implies (Qwen2's QKV bias, Gemma's tied embeddings, Falcon's
one shared LayerNorm). Every problem with the file becomes an `InputError` naming the file and the field; unknown
model types are refused with the list of supported ones, except Llama-shaped configs, which are read as Llama with
a note saying so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gpuadvisor.knowledge.errors import InputError
from gpuadvisor.knowledge.files import CONFIG_MAX_BYTES, read_text_file
from gpuadvisor.knowledge.schema import MLA, Architecture, MoE

LLAMA_LIKE_FIELDS = ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads")


@dataclass(frozen=True)
class HFConfig:
    """What was read from a config.json: the architecture, its model_type and caveats worth telling the user."""

    architecture: Architecture
    model_type: str
    notes: list[str] = field(default_factory=list)


class _Fields:
    """Typed access to one config object; every error names the file and the field."""

    def __init__(self, data: Mapping[str, Any], source: str, model_type: str) -> None:
        self.data, self.source, self.model_type = data, source, model_type

    def fail(self, message: str) -> InputError:
        return InputError(f"{self.source}: {message}")

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def integer(self, key: str, *aliases: str, default: int | None = None) -> int:
        for name in (key, *aliases):
            if name in self.data and self.data[name] is not None:
                return self._as_int(name, self.data[name])
        if default is not None:
            return default
        names = " or ".join(repr(n) for n in (key, *aliases))
        raise self.fail(f"field {names} is missing (required for model_type {self.model_type!r})")

    def optional(self, key: str, *aliases: str) -> int | None:
        for name in (key, *aliases):
            if name in self.data and self.data[name] is not None:
                return self._as_int(name, self.data[name])
        return None

    def flag(self, key: str, default: bool) -> bool:
        value = self.data.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.fail(f"field {key!r} must be true or false, got {_show(value)}")
        return value

    def _as_int(self, name: str, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(f"field {name!r} must be an integer, got {_show(value)}")
        if isinstance(value, float) and not value.is_integer():
            raise self.fail(f"field {name!r} must be an integer, got {value}")
        if value < 0:
            raise self.fail(f"field {name!r} must not be negative, got {value}")
        return int(value)


def _show(value: Any) -> str:
    kind = {str: "string", list: "list", dict: "object", bool: "boolean", float: "number"}.get(type(value), "value")
    return f"{json.dumps(value)[:40]} ({kind})"


def _problem(loc: tuple[int | str, ...], msg: str) -> str:
    msg = msg.removeprefix("Value error, ")
    return f"field {'.'.join(str(p) for p in loc)!r}: {msg}" if loc else msg


def _common(f: _Fields) -> dict[str, Any]:
    """Fields named the Llama way, shared by most decoder configs."""
    return {
        "vocab_size": f.integer("vocab_size"),
        "hidden_size": f.integer("hidden_size"),
        "intermediate_size": f.integer("intermediate_size"),
        "num_hidden_layers": f.integer("num_hidden_layers"),
        "num_attention_heads": f.integer("num_attention_heads"),
        "num_key_value_heads": f.optional("num_key_value_heads"),
        "head_dim": f.optional("head_dim"),
        "max_position_embeddings": f.optional("max_position_embeddings"),
    }


def _llama(f: _Fields) -> dict[str, Any]:
    # LlamaAttention: attention_bias applies to q, k, v and o_proj; LlamaMLP: mlp_bias to gate, up and down.
    bias = f.flag("attention_bias", False)
    return {**_common(f), "tie_word_embeddings": f.flag("tie_word_embeddings", False), "attention_bias": bias,
            "attention_output_bias": bias, "mlp_bias": f.flag("mlp_bias", False)}


def _mistral(f: _Fields) -> dict[str, Any]:
    return {**_common(f), "tie_word_embeddings": f.flag("tie_word_embeddings", False)}


def _mixtral(f: _Fields) -> dict[str, Any]:
    arch = _mistral(f)
    arch["moe"] = MoE(num_experts=f.integer("num_local_experts"), experts_per_token=f.integer("num_experts_per_tok"),
                      expert_intermediate_size=arch["intermediate_size"])
    return arch


def _qwen2(f: _Fields) -> dict[str, Any]:
    # Qwen2Attention always has biases on q/k/v (not on o_proj), whatever the config says.
    return {**_common(f), "tie_word_embeddings": f.flag("tie_word_embeddings", False), "attention_bias": True}


def _gemma(f: _Fields) -> dict[str, Any]:
    # Gemma always ties the LM head to the embedding; head_dim (256 on most sizes) is not hidden / heads.
    return {**_common(f), "tie_word_embeddings": f.flag("tie_word_embeddings", True)}


def _gemma2(f: _Fields) -> dict[str, Any]:
    # input, post_attention, pre_feedforward and post_feedforward RMSNorms in every layer.
    return {**_gemma(f), "norms_per_layer": 4}


def _phi3(f: _Fields) -> dict[str, Any]:
    bias = f.flag("attention_bias", False)
    return {**_common(f), "tie_word_embeddings": f.flag("tie_word_embeddings", False), "attention_bias": bias,
            "attention_output_bias": bias}


def _falcon(f: _Fields, new_arch_default: bool = False) -> dict[str, Any]:
    hidden = f.integer("hidden_size", "n_embd")
    heads = f.integer("num_attention_heads", "n_head")
    new_arch = f.flag("new_decoder_architecture", new_arch_default)
    parallel = f.flag("parallel_attn", True)
    if new_arch:
        kv = f.integer("num_kv_heads", "n_head_kv", default=heads)
    else:
        kv = 1 if f.flag("multi_query", True) else heads
    # FalconDecoderLayer: ln_attn + ln_mlp with the new architecture (40B/180B) or num_ln_in_parallel_attn == 2;
    # otherwise one input_layernorm, shared by attention and MLP when they run in parallel (7B).
    if new_arch or f.optional("num_ln_in_parallel_attn") == 2 or not parallel:
        norms = 2
    else:
        norms = 1
    bias = f.flag("bias", False)
    return {
        "vocab_size": f.integer("vocab_size"),
        "hidden_size": hidden,
        "intermediate_size": f.integer("ffn_hidden_size", default=4 * hidden),
        "num_hidden_layers": f.integer("num_hidden_layers", "n_layer"),
        "num_attention_heads": heads,
        "num_key_value_heads": kv,
        "max_position_embeddings": f.optional("max_position_embeddings"),
        "tie_word_embeddings": f.flag("tie_word_embeddings", True),
        "mlp": "plain", "norm": "layernorm", "norms_per_layer": norms, "parallel_attention": parallel or new_arch,
        "attention_bias": bias, "attention_output_bias": bias, "mlp_bias": bias,
    }


def _gpt2(f: _Fields) -> dict[str, Any]:
    hidden = f.integer("n_embd", "hidden_size")
    positions = f.integer("n_positions", "max_position_embeddings")
    return {
        "vocab_size": f.integer("vocab_size"),
        "hidden_size": hidden,
        "intermediate_size": f.integer("n_inner", default=4 * hidden),  # n_inner: null means 4 × n_embd
        "num_hidden_layers": f.integer("n_layer", "num_hidden_layers"),
        "num_attention_heads": f.integer("n_head", "num_attention_heads"),
        "max_position_embeddings": positions,
        "learned_position_embeddings": positions,
        "tie_word_embeddings": f.flag("tie_word_embeddings", True),
        "mlp": "plain", "norm": "layernorm",
        "attention_bias": True, "attention_output_bias": True, "mlp_bias": True,
    }


def _deepseek(f: _Fields, router_bias: bool) -> dict[str, Any]:
    arch = {**_common(f), "tie_word_embeddings": f.flag("tie_word_embeddings", False),
            "attention_bias": f.flag("attention_bias", False)}
    arch["mla"] = MLA(q_lora_rank=f.optional("q_lora_rank"), kv_lora_rank=f.integer("kv_lora_rank"),
                      qk_nope_head_dim=f.integer("qk_nope_head_dim"), qk_rope_head_dim=f.integer("qk_rope_head_dim"),
                      v_head_dim=f.integer("v_head_dim"))
    experts = f.optional("n_routed_experts")
    if experts:
        if f.integer("moe_layer_freq", default=1) != 1:
            raise f.fail("field 'moe_layer_freq' other than 1 is not supported (MoE in every layer after "
                         "first_k_dense_replace is assumed)")
        first_dense = f.integer("first_k_dense_replace", default=0)
        if first_dense >= arch["num_hidden_layers"]:
            raise f.fail(f"field 'first_k_dense_replace' ({first_dense}) must be smaller than "
                         f"num_hidden_layers ({arch['num_hidden_layers']})")
        arch["moe"] = MoE(num_experts=experts, experts_per_token=f.integer("num_experts_per_tok"),
                          num_shared_experts=f.integer("n_shared_experts", default=0),
                          expert_intermediate_size=f.integer("moe_intermediate_size"),
                          first_dense_layers=first_dense, router_bias=router_bias)
    return arch


_READERS: dict[str, Callable[[_Fields], dict[str, Any]]] = {
    "llama": _llama,
    "mistral": _mistral,
    "mixtral": _mixtral,
    "qwen2": _qwen2,
    "gemma": _gemma,
    "gemma2": _gemma2,
    "phi3": _phi3,
    "falcon": _falcon,
    "RefinedWeb": lambda f: _falcon(f, new_arch_default=True),  # Falcon-40B's original remote-code config
    "RefinedWebModel": _falcon,  # Falcon-7B's original remote-code config
    "gpt2": _gpt2,
    "deepseek_v2": lambda f: _deepseek(f, router_bias=False),
    "deepseek_v3": lambda f: _deepseek(f, router_bias=True),  # MoEGate has e_score_correction_bias
}
SUPPORTED_MODEL_TYPES: tuple[str, ...] = tuple(_READERS)


def architecture_from_config(data: Mapping[str, Any], source: str = "config.json") -> HFConfig:
    """Map an already-parsed config object; `source` names it in error messages."""
    model_type = data.get("model_type")
    notes: list[str] = []
    if model_type is not None and not isinstance(model_type, str):
        raise InputError(f"{source}: field 'model_type' must be a string, got {_show(model_type)}")
    reader = _READERS.get(model_type) if model_type else None
    if reader is None:
        if all(data.get(k) is not None for k in LLAMA_LIKE_FIELDS):
            reader = _llama
            notes.append(f"model_type {model_type!r} is not one of the known types; read as a Llama-like decoder "
                         "(gated MLP, RMSNorm, no biases unless attention_bias/mlp_bias say so). The parameter "
                         "count is only right if the architecture really is Llama-shaped.")
        elif model_type is None:
            raise InputError(f"{source}: field 'model_type' is missing and the config is not Llama-shaped "
                             f"(needs {', '.join(LLAMA_LIKE_FIELDS)}); supported model types: "
                             f"{', '.join(SUPPORTED_MODEL_TYPES)}")
        else:
            raise InputError(f"{source}: model_type {model_type!r} is not supported; supported model types: "
                             f"{', '.join(SUPPORTED_MODEL_TYPES)} (or any config with the Llama fields "
                             f"{', '.join(LLAMA_LIKE_FIELDS)})")
    fields = _Fields(data, source, str(model_type))
    try:
        arch = Architecture(**reader(fields))
    except ValidationError as exc:
        part = "" if exc.title == "Architecture" else f"{exc.title.lower()}."  # MoE/MLA built by the readers
        problems = "; ".join(_problem(tuple(f"{part}{p}" for p in e["loc"]), e["msg"]) for e in exc.errors())
        raise InputError(f"{source}: inconsistent config: {problems}") from None
    if (data.get("num_nextn_predict_layers") or 0) > 0:
        notes.append(f"{data['num_nextn_predict_layers']} multi-token-prediction layer(s) in the checkpoint are "
                     "not counted: they serve training and optional speculative decoding, not normal inference.")
    if arch.moe is not None and arch.moe.experts_per_token > arch.moe.num_experts:
        raise InputError(f"{source}: num_experts_per_tok ({arch.moe.experts_per_token}) exceeds the number of "
                         f"experts ({arch.moe.num_experts})")
    return HFConfig(architecture=arch, model_type=str(model_type), notes=notes)


def read_hf_config(path: Path) -> HFConfig:
    """Read `path` (a config.json, or a checkpoint directory holding one) with its notes."""
    if path.is_dir():
        path = path / "config.json"
    text = read_text_file(path, what="config.json file", max_bytes=CONFIG_MAX_BYTES)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: line {exc.lineno}, column {exc.colno}: not valid JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a JSON object at the top level, got {type(data).__name__}")
    return architecture_from_config(data, source=str(path))


def load_hf_config(path: Path) -> Architecture:
    """The `Architecture` described by a local Hugging Face config.json (see `read_hf_config` for the notes)."""
    return read_hf_config(path).architecture
