"""Read a local Hugging Face ``config.json`` into an `Architecture`, so any checkpoint can be sized exactly.

Each supported ``model_type`` has its own field names and implicit conventions (GPT-2's ``n_embd``/``n_inner``,
Falcon's ``multi_query``/``new_decoder_architecture``, DeepSeek's ``n_routed_experts``/``kv_lora_rank``…), and the
parameter count depends on details the config only implies (Qwen2's QKV bias, Gemma's tied embeddings, Falcon's
one shared LayerNorm, BLOOM's embedding LayerNorm, OPT's two offset position rows, GPT-J's LM-head bias). Known model
types get their exact mapping. Any other model_type is read through the common field aliases (`n_layer`/`num_layers`,
`n_head`, `n_embd`/`d_model`, `ffn_dim`/`n_inner`, `multi_query`, `n_head_kv`…) when every size is present, with a
note naming the fields read and the structure assumed; otherwise it is refused with the missing field named. Every
problem with the file becomes an `InputError` naming the file and the field.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gpuadvisor.knowledge.errors import MAX_PROBLEMS, InputError
from gpuadvisor.knowledge.files import CONFIG_MAX_BYTES, read_text_file
from gpuadvisor.knowledge.nesting import loads_json
from gpuadvisor.knowledge.sanitize import shorten
from gpuadvisor.knowledge.schema import MLA, Architecture, Indexer, MoE

# The names families use for the same quantity; the first one present (and not null) wins.
LAYERS = ("num_hidden_layers", "n_layer", "num_layers", "n_layers")
HEADS = ("num_attention_heads", "n_head", "num_heads", "n_heads")
HIDDEN = ("hidden_size", "n_embd", "n_embed", "d_model")
FFN = ("intermediate_size", "ffn_dim", "n_inner", "ffn_hidden_size")
KV_HEADS = ("num_key_value_heads", "n_head_kv", "num_kv_heads")
VOCAB = ("vocab_size", "padded_vocab_size")
POSITIONS = ("max_position_embeddings", "n_positions", "seq_length", "max_seq_len")
EXPERTS = ("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts")
EXPERTS_PER_TOKEN = ("num_experts_per_tok", "num_experts_per_token", "moe_top_k")
EXPERT_FFN = ("moe_intermediate_size", "expert_intermediate_size")
SHARED_EXPERTS = ("n_shared_experts", "num_shared_experts")


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
        self.read: dict[str, str] = {}
        """Quantity (its first-listed name) → the config field or convention it was read from."""

    def fail(self, message: str) -> InputError:
        return InputError(f"{self.source}: {message}")

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def integer(self, key: str, *aliases: str, default: int | None = None) -> int:
        found = self.optional(key, *aliases)
        if found is not None:
            return found
        if default is not None:
            return default
        names = " or ".join(repr(n) for n in (key, *aliases))
        raise self.fail(f"field {names} is missing (required for model_type {shorten(repr(self.model_type))})")

    def optional(self, key: str, *aliases: str) -> int | None:
        for name in (key, *aliases):
            if name in self.data and self.data[name] is not None:
                value = self._as_int(name, self.data[name])
                self.read[key] = name
                return value
        return None

    def number(self, key: str, default: float, limit: float = 1000.0) -> float:
        """A positive finite ratio (MPT's expansion_ratio) no larger than `limit`."""
        value = self.data.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
            raise self.fail(f"field {key!r} must be a positive number, got {_show(value)}")
        if value > limit:
            raise self.fail(f"field {key!r} is implausibly large: {_show(value)}, at most {limit:g}")
        return float(value)

    def section(self, key: str) -> _Fields:
        """A nested object (MPT's attn_config); its errors name 'key.field'."""
        value = self.data.get(key)
        if value is None:
            value = {}
        if not isinstance(value, dict):
            raise self.fail(f"field {key!r} must be an object, got {_show(value)}")
        return _Fields({f"{key}.{k}": v for k, v in value.items()}, self.source, self.model_type)

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
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return f"{shorten(text, 40)} ({kind})"


def _problem(loc: tuple[int | str, ...], msg: str, err: Mapping[str, Any] | None = None) -> str:
    msg = msg.removeprefix("Value error, ")
    if err is not None and err.get("type") == "less_than_equal":
        limit = err.get("ctx", {}).get("le")
        msg = f"{shorten(str(err.get('input')), 40)} is implausibly large: at most {limit:,} (no published model " \
              "comes close)"
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


def _phi(f: _Fields) -> dict[str, Any]:
    # PhiDecoderLayer (Phi-1/1.5/2): one input_layernorm shared by attention and MLP in parallel; q/k/v/dense and
    # fc1/fc2 all biased; final_layernorm; untied lm_head with a bias.
    if f.flag("qk_layernorm", False):
        raise f.fail("field 'qk_layernorm' = true is not supported (per-head LayerNorms on q and k)")
    return {**_common(f), "tie_word_embeddings": f.flag("tie_word_embeddings", False), "mlp": "plain",
            "norm": "layernorm", "norms_per_layer": 1, "parallel_attention": True, "attention_bias": True,
            "attention_output_bias": True, "mlp_bias": True, "lm_head_bias": True}


def _starcoder2(f: _Fields) -> dict[str, Any]:
    # Starcoder2: GQA with q/k/v/o biased when use_bias (default), c_fc/c_proj plain MLP likewise, LayerNorms with
    # bias, tied embeddings by default.
    bias = f.flag("use_bias", True)
    return {**_common(f), "tie_word_embeddings": f.flag("tie_word_embeddings", True), "mlp": "plain",
            "norm": "layernorm", "attention_bias": bias, "attention_output_bias": bias, "mlp_bias": bias}


def _gpt_bigcode(f: _Fields) -> dict[str, Any]:
    # GPT-2 layout; with multi_query (the default) c_attn projects to hidden + 2 x head_dim: one shared K/V head.
    return {**_gpt2(f), "num_key_value_heads": 1 if f.flag("multi_query", True) else None}


def _gptj(f: _Fields) -> dict[str, Any]:
    # GPTJBlock: one ln_1 shared by attention and MLP in parallel; q/k/v/out_proj without bias, fc_in/fc_out with;
    # rotary positions; an untied lm_head with a bias.
    hidden = f.integer("n_embd", "hidden_size")
    return {
        "vocab_size": f.integer("vocab_size"),
        "hidden_size": hidden,
        "intermediate_size": f.integer("n_inner", default=4 * hidden),
        "num_hidden_layers": f.integer("n_layer", "num_hidden_layers"),
        "num_attention_heads": f.integer("n_head", "num_attention_heads"),
        "max_position_embeddings": f.optional("n_positions", "max_position_embeddings"),
        "tie_word_embeddings": f.flag("tie_word_embeddings", False),
        "mlp": "plain", "norm": "layernorm", "norms_per_layer": 1, "parallel_attention": True,
        "mlp_bias": True, "lm_head_bias": True,
    }


def _gpt_neox(f: _Fields) -> dict[str, Any]:
    # GPTNeoXLayer: input and post-attention LayerNorms (both, even with the parallel residual); query_key_value and
    # dense biased unless attention_bias is false; MLP always biased; separate embed_out without bias.
    bias = f.flag("attention_bias", True)
    return {**_common(f), "tie_word_embeddings": f.flag("tie_word_embeddings", False),
            "mlp": "plain", "norm": "layernorm", "parallel_attention": f.flag("use_parallel_residual", True),
            "attention_bias": bias, "attention_output_bias": bias, "mlp_bias": True}


def _bloom(f: _Fields) -> dict[str, Any]:
    # BloomModel: word_embeddings_layernorm after the embedding, ALiBi (no position table), fused query_key_value
    # and dense with biases, dense_h_to_4h / dense_4h_to_h of 4 x hidden (n_inner is ignored), tied LM head.
    hidden = f.integer("hidden_size", "n_embed")
    return {
        "vocab_size": f.integer("vocab_size"),
        "hidden_size": hidden,
        "intermediate_size": 4 * hidden,
        "num_hidden_layers": f.integer("n_layer", "num_hidden_layers"),
        "num_attention_heads": f.integer("n_head", "num_attention_heads"),
        "max_position_embeddings": f.optional("seq_length"),
        "tie_word_embeddings": f.flag("tie_word_embeddings", True),
        "mlp": "plain", "norm": "layernorm", "alibi": True, "embedding_norm": True,
        "attention_bias": True, "attention_output_bias": True, "mlp_bias": True,
    }


def _opt(f: _Fields) -> dict[str, Any]:
    # OPTLearnedPositionalEmbedding keeps 2 extra rows (offset 2); project_in/out when word_embed_proj_dim differs
    # from hidden_size (350m); no final LayerNorm when do_layer_norm_before is false (350m, post-norm).
    hidden = f.integer("hidden_size")
    positions = f.integer("max_position_embeddings")
    bias = f.flag("enable_bias", True)
    affine = f.flag("layer_norm_elementwise_affine", True)
    proj = f.optional("word_embed_proj_dim")
    final = f.flag("do_layer_norm_before", True) and not f.flag("_remove_final_layer_norm", False)
    return {
        "vocab_size": f.integer("vocab_size"),
        "hidden_size": hidden,
        "intermediate_size": f.integer("ffn_dim"),
        "num_hidden_layers": f.integer("num_hidden_layers"),
        "num_attention_heads": f.integer("num_attention_heads"),
        "max_position_embeddings": positions,
        "learned_position_embeddings": positions + 2,
        "tie_word_embeddings": f.flag("tie_word_embeddings", True),
        "mlp": "plain", "norm": "layernorm", "norms_per_layer": 2 if affine else 0, "final_norm": final and affine,
        "attention_bias": bias, "attention_output_bias": bias, "mlp_bias": bias,
        "word_embed_proj_dim": proj if proj != hidden else None,
    }


def _mpt(f: _Fields) -> dict[str, Any]:
    # MosaicML MPT: fused Wqkv and out_proj, up/down MLP of expansion_ratio x d_model, all bias-free with no_bias
    # (LayerNorms included); ALiBi from attn_config, else a learned position table (learned_pos_emb); tied head.
    hidden = f.integer("d_model", "hidden_size")
    attn = f.section("attn_config")
    alibi = attn.flag("attn_config.alibi", False)
    no_bias = f.flag("no_bias", True)
    positions = f.integer("max_seq_len", default=2048)
    learned = not alibi and f.flag("learned_pos_emb", True)
    # kv_n_heads only matters for grouped-query attention (llm-foundry writes a default of 1 into every config)
    kind = attn.data.get("attn_config.attn_type")
    kv: int | None = None
    if kind == "multiquery_attention":
        kv = 1
    elif kind == "grouped_query_attention":
        kv = attn.integer("attn_config.kv_n_heads")
    return {
        "vocab_size": f.integer("vocab_size"),
        "hidden_size": hidden,
        "intermediate_size": round(f.number("expansion_ratio", 4) * hidden),
        "num_hidden_layers": f.integer("n_layers", "num_hidden_layers"),
        "num_attention_heads": f.integer("n_heads", "num_attention_heads"),
        "num_key_value_heads": kv,
        "max_position_embeddings": positions,
        "learned_position_embeddings": positions if learned else 0,
        "tie_word_embeddings": f.flag("tie_word_embeddings", True),
        "mlp": "plain", "norm": "layernorm", "layernorm_bias": not no_bias, "alibi": alibi,
        "attention_bias": not no_bias, "attention_output_bias": not no_bias, "mlp_bias": not no_bias,
    }


def _ffn_size(f: _Fields, hidden: int) -> int:
    """The MLP width under any of the common names; GPT-2's n_inner = null means 4 x hidden."""
    found = f.optional(*FFN)
    if found is not None:
        return found
    if f.data.get("expansion_ratio") is not None:
        f.read[FFN[0]] = "expansion_ratio x hidden"
        return round(f.number("expansion_ratio", 4) * hidden)
    if "n_inner" in f.data:
        f.read[FFN[0]] = "n_inner (null: 4 x hidden)"
        return 4 * hidden
    also = ", ".join(repr(n) for n in (*FFN[1:], "expansion_ratio"))
    raise f.fail(f"field {FFN[0]!r} is missing (also looked for {also})")


def _generic(f: _Fields) -> dict[str, Any]:
    """Sizes under any common alias; structure Llama-like unless the config's own flags say otherwise."""
    def need(names: tuple[str, ...]) -> int:
        found = f.optional(*names)
        if found is None:
            also = ", ".join(repr(n) for n in names[1:])
            raise f.fail(f"field {names[0]!r} is missing (also looked for {also})")
        return found

    vocab, layers, heads, hidden = need(VOCAB), need(LAYERS), need(HEADS), need(HIDDEN)
    ffn = _ffn_size(f, hidden)
    if f.flag("multi_query", False):
        kv: int | None = 1
        f.read[KV_HEADS[0]] = "multi_query (1 shared head)"
    else:
        kv = f.optional(*KV_HEADS)
    bias = f.flag("bias", f.flag("use_bias", False))
    attention_bias = f.flag("attention_bias", bias)
    return {
        "vocab_size": vocab, "hidden_size": hidden, "intermediate_size": ffn, "num_hidden_layers": layers,
        "num_attention_heads": heads, "num_key_value_heads": kv, "head_dim": f.optional("head_dim"),
        "max_position_embeddings": f.optional(*POSITIONS), "tie_word_embeddings": f.flag("tie_word_embeddings", False),
        "attention_bias": attention_bias, "attention_output_bias": attention_bias,
        "mlp_bias": f.flag("mlp_bias", bias), "moe": _generic_moe(f, ffn),
    }


def _generic_moe(f: _Fields, ffn: int) -> MoE | None:
    """Experts under their common names, so an unknown MoE is not silently sized as a dense model."""
    experts = f.optional(*EXPERTS)
    if experts is None or experts < 2:
        return None
    return MoE(num_experts=experts, experts_per_token=f.integer(*EXPERTS_PER_TOKEN),
               num_shared_experts=f.optional(*SHARED_EXPERTS) or 0,
               expert_intermediate_size=f.optional(*EXPERT_FFN) or ffn,
               shared_expert_intermediate_size=f.optional("shared_expert_intermediate_size"))


def _deepseek(f: _Fields, router_bias: bool) -> dict[str, Any]:
    # MoEGate creates e_score_correction_bias (one per routed expert) only for topk_method "noaux_tc" (V3's
    # auxiliary-loss-free balancing); V2's greedy / group_limited_greedy routers have none. Absent: the type's default.
    topk = f.data.get("topk_method")
    if topk is not None:
        if not isinstance(topk, str):
            raise f.fail(f"field 'topk_method' must be a string, got {_show(topk)}")
        router_bias = topk == "noaux_tc"
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
    "phi": _phi,
    "starcoder2": _starcoder2,
    "gpt2": _gpt2,
    "gpt_bigcode": _gpt_bigcode,
    "gptj": _gptj,
    "gpt_neox": _gpt_neox,
    "bloom": _bloom,
    "opt": _opt,
    "mpt": _mpt,
    "deepseek_v2": lambda f: _deepseek(f, router_bias=False),
    "deepseek_v3": lambda f: _deepseek(f, router_bias=True),
}
SUPPORTED_MODEL_TYPES: tuple[str, ...] = tuple(_READERS)


def _generic_reader(f: _Fields) -> dict[str, Any]:
    """The generic reader, its missing-field errors saying why a known-type mapping was not used."""
    model_type = f.data.get("model_type")
    try:
        return _generic(f)
    except InputError as exc:
        shown = shorten(repr(model_type))
        what = "field 'model_type' is missing" if model_type is None else f"model_type {shown} is not supported"
        detail = str(exc).removeprefix(f"{f.source}: ")
        raise InputError(f"{f.source}: {what} and the config cannot be read through the common field aliases: "
                         f"{detail}; known model types: {', '.join(SUPPORTED_MODEL_TYPES)}") from None


def _generic_note(model_type: str | None, f: _Fields) -> str:
    read = ", ".join(f"{key} <- {name}" for key, name in f.read.items())
    shown = shorten(repr(model_type))
    kind = "no model_type" if model_type is None else f"model_type {shown} is not one of the known types"
    moe = " Experts are read as gated MLPs with a bias-free router in every layer." if f.optional(*EXPERTS) else ""
    return (f"{kind}; read through the common field aliases ({read}) as a Llama-like decoder (gated MLP, "
            "RMSNorm, rotary positions, no biases unless attention_bias/mlp_bias/bias say so, head untied unless "
            f"tie_word_embeddings).{moe} The parameter count is only right if the architecture really is built that "
            "way (per-head q/k norms, for one, are not counted).")


def architecture_from_config(data: Mapping[str, Any], source: str = "config.json") -> HFConfig:
    """Map an already-parsed config object; `source` names it in error messages."""
    model_type = data.get("model_type")
    notes: list[str] = []
    if model_type is not None and not isinstance(model_type, str):
        raise InputError(f"{source}: field 'model_type' must be a string, got {_show(model_type)}")
    reader = _READERS.get(model_type) if model_type else None
    known = reader is not None
    reader = reader or _generic_reader
    fields = _Fields(data, source, str(model_type))
    try:
        arch = Architecture(**{**reader(fields), **attention_layout(data, str(model_type), source)})
    except ValidationError as exc:
        part = "" if exc.title == "Architecture" else f"{exc.title.lower()}."  # MoE/MLA built by the readers
        errors = exc.errors()
        problems = "; ".join(_problem(tuple(f"{part}{p}" for p in e["loc"]), e["msg"], e)
                             for e in errors[:MAX_PROBLEMS])
        if len(errors) > MAX_PROBLEMS:
            problems += f"; and {len(errors) - MAX_PROBLEMS:,} more"
        raise InputError(f"{source}: inconsistent config: {problems}") from None
    if not known:
        notes.append(_generic_note(model_type, fields))
    mtp = fields.optional("num_nextn_predict_layers")
    if mtp:
        notes.append(f"{mtp} multi-token-prediction layer(s) in the checkpoint are "
                     "not counted: they serve training and optional speculative decoding, not normal inference.")
    if arch.moe is not None and arch.moe.experts_per_token > arch.moe.num_experts:
        raise InputError(f"{source}: num_experts_per_tok ({arch.moe.experts_per_token}) exceeds the number of "
                         f"experts ({arch.moe.num_experts})")
    return HFConfig(architecture=arch, model_type=shorten(str(model_type)), notes=notes)


_GLOBAL_EVERY = {"gemma2": 2, "gemma3": 6, "gemma3_text": 6, "llama4": 4, "llama4_text": 4}
"""Every n-th layer is global when a config names a window but no layer_types (HF's defaults per model type)."""
_QK_NORM = ("qwen3", "qwen3_moe", "gemma3", "gemma3_text")
_WINDOWED = ("mistral", "mixtral", "gemma2", "gemma3", "gemma3_text", "gpt_oss", "llama4", "llama4_text", "qwen2",
             "qwen2_moe", "qwen3", "qwen3_moe")
"""Types whose sliding_window the reference implementation applies; others (e.g. phi3) only via layer_types."""


def attention_layout(data: Mapping[str, Any], model_type: str, source: str = "config.json") -> dict[str, Any]:
    """The fields added for late-2025 models, read from any config whatever its reader: local attention
    (sliding_window with layer_types or a per-type pattern; Llama 4's attention_chunk_size), gpt-oss's attention
    sinks and MXFP4 experts, the q/k norms of Qwen3 and Gemma 3, DeepSeek-V3.2's indexer. Multimodal configs are
    read from text_config. Qwen2/Qwen3 windows only count with use_sliding_window = true; they are then taken to
    apply to every layer."""
    text = data.get("text_config")
    cfg: Mapping[str, Any] = text if isinstance(text, Mapping) else data
    kind = str(cfg.get("model_type") or model_type)
    f = _Fields(cfg, source, kind)
    out: dict[str, Any] = {}
    window = f.optional("sliding_window")
    if kind.startswith("llama4"):
        window = f.optional("attention_chunk_size")
    if kind.startswith("qwen") and not f.flag("use_sliding_window", False):
        window = None
    if kind not in _WINDOWED and cfg.get("layer_types") is None:
        window = None
    if window:
        out["sliding_window"] = window
        layer_types = cfg.get("layer_types")
        if layer_types is not None:
            allowed = ("full_attention", "sliding_attention", "chunked_attention")
            if not isinstance(layer_types, list) or any(t not in allowed for t in layer_types):
                raise f.fail(f"field 'layer_types' must be a list of {', '.join(allowed)}")
            out["layer_types"] = list(layer_types)
        else:
            every = f.optional("sliding_window_pattern", "_sliding_window_pattern", "no_rope_layer_interval")
            every = every or _GLOBAL_EVERY.get(kind)
            if every:
                out["sliding_window_pattern"] = every
    if kind == "gpt_oss":
        out["attention_sinks"] = True
    if kind in _QK_NORM:
        out["qk_norm"] = True
    if f.has("index_n_heads"):  # DeepSeek-V3.2 sparse attention
        out["indexer"] = Indexer(index_n_heads=f.integer("index_n_heads"), index_head_dim=f.integer("index_head_dim"),
                                 index_topk=f.integer("index_topk"))
    quant = cfg.get("quantization_config") or data.get("quantization_config")
    if isinstance(quant, Mapping) and quant.get("quant_method") == "mxfp4":
        out["expert_weights_format"] = "mxfp4"  # gpt-oss: experts MXFP4, modules_to_not_convert stay bf16
    return out


def read_hf_config(path: Path) -> HFConfig:
    """Read `path` (a config.json, or a checkpoint directory holding one) with its notes."""
    if os.path.isdir(path):  # never raises: an over-long or NUL-bearing path is refused by the read, in words
        path = path / "config.json"
    text = read_text_file(path, what="config.json file", max_bytes=CONFIG_MAX_BYTES)
    try:
        data = loads_json(text, str(path))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: line {exc.lineno}, column {exc.colno}: not valid JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a JSON object at the top level, got {type(data).__name__}")
    return architecture_from_config(data, source=str(path))


def load_hf_config(path: Path) -> Architecture:
    """The `Architecture` described by a local Hugging Face config.json (see `read_hf_config` for the notes)."""
    return read_hf_config(path).architecture
