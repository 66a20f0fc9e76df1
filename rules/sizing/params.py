"""Exact parameter count of a transformer from its config shape (no I/O).

Weights memory, training memory and FLOP estimates all start from the parameter count, so it must match what the
publisher's checkpoint holds, not a rule of thumb like 12·layers·hidden². Every matrix and vector of the Hugging Face
implementation is counted: attention projections (MHA/GQA/MQA or DeepSeek's multi-head latent attention), the MLP
(gated: gate/up/down; plain: up/down), mixture-of-experts layers (routed experts, shared experts, router), biases,
norms (RMSNorm: weight; LayerNorm: weight + bias unless bias-free), token and learned position embeddings (OPT's
table has 2 offset rows; ALiBi has none), BLOOM's embedding LayerNorm, OPT-350m's embedding projections, and an
untied LM head with its bias if any (GPT-J).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuadvisor.knowledge.schema import MLA, Architecture, MoE
from gpuadvisor.rules.sizing.kvcache import attention_kind


@dataclass(frozen=True)
class ParameterCount:
    """Parameter count of a model, broken down the way sizing rules need it.

    `total` is what must be resident in memory (all experts, every table): memory counts every byte.

    `active` is what one token multiplies through, the model-card convention (OpenAI's gpt-oss card: 120b 5.13B,
    20b 3.61B): the attention and MLP matrices of every layer (MoE: the shared experts plus `experts_per_token`
    routed experts and the router), norms and biases, and the output projection (the tied table when the head is
    tied), but not the input-embedding and position tables, whose rows are looked up, not multiplied. It is the
    'N' of the 6·N·D training FLOPs and of the 2·N decode FLOPs. `active_with_lookups` adds the looked-up tables
    back (what some publishers print as 'active', Mixtral's 12.9B).
    """

    total: int
    active: int
    embedding: int
    """Token embedding table (vocab × hidden)."""
    position_embedding: int
    """Learned absolute position table (GPT-2); 0 for RoPE models."""
    lm_head: int
    """Output projection (with its bias, if any); 0 when tied to the token embedding (a bias still counts)."""
    attention_per_layer: int
    """One layer's attention block, including its biases and (MLA) its latent norms."""
    mlp_per_layer_dense: int
    """One dense MLP of `intermediate_size` (on MoE models: the first dense layers' MLP; 0 if there are none)."""
    expert: int
    """One routed expert (0 for dense models)."""
    shared_experts_per_layer: int
    """All shared experts of one MoE layer (0 if none)."""
    router_per_layer: int
    """The router (gate) of one MoE layer, with its bias if any."""
    norms: int
    """All norm parameters: per-layer norms times layers, plus the final norm and any embedding norm."""
    dense_layers: int
    moe_layers: int
    embedding_projections: int = 0
    """project_in + project_out between a narrower token embedding and the hidden size (OPT-350m); else 0."""
    input_lookup: int = 0
    """Parameters a token only looks up: the position table, and the token table unless it is also the (tied) LM
    head. `active + input_lookup` is every parameter a token touches."""

    @property
    def active_per_token(self) -> int:
        """The same figure as `active` (the model card's): kept for callers that name the per-token reading."""
        return self.active

    @property
    def active_with_lookups(self) -> int:
        """`active` plus the looked-up input tables: every parameter one token touches (the convention of
        publishers that count the embedding in 'active', e.g. Mixtral's 12.9B; = `total` for dense models)."""
        return self.active + self.input_lookup

    @property
    def non_embedding(self) -> int:
        """Parameters outside the token/position tables and the LM head (the 'N' of scaling-law papers)."""
        return self.total - self.embedding - self.position_embedding - self.lm_head - self.embedding_projections

    @property
    def total_b(self) -> float:
        """Total in billions (10^9), for display."""
        return self.total / 1e9


def attention_params(arch: Architecture) -> int:
    """Parameters of one attention block (standard or MLA)."""
    if arch.mla is not None:
        return _mla_params(arch, arch.mla) + _indexer_params(arch)
    hidden, hd = arch.hidden_size, arch.head_size
    q_out = arch.num_attention_heads * hd
    kv_out = arch.kv_heads * hd
    weights = hidden * q_out + 2 * hidden * kv_out + q_out * hidden
    biases = (q_out + 2 * kv_out if arch.attention_bias else 0) + (hidden if arch.attention_output_bias else 0)
    return weights + biases + _attention_extras(arch)


def _attention_extras(arch: Architecture) -> int:
    """Per-layer attention vectors beyond projections: q/k RMSNorm weights (Qwen3, Gemma 3), one sink logit per
    head (gpt-oss)."""
    qk_norm = 2 * arch.head_size if arch.qk_norm else 0
    sinks = arch.num_attention_heads if arch.attention_sinks else 0
    return qk_norm + sinks


def _mla_params(arch: Architecture, mla: MLA) -> int:
    """DeepSeek-V2/V3 multi-head latent attention, as in modeling_deepseek.py.

    q: hidden → q_lora_rank (+ RMSNorm) → heads·(nope+rope), or hidden → heads·(nope+rope) without a q LoRA;
    kv: hidden → kv_lora_rank + rope (the decoupled RoPE key is shared by all heads), RMSNorm on the latent,
    latent → heads·(nope + v); output heads·v → hidden.
    """
    hidden, heads = arch.hidden_size, arch.num_attention_heads
    q_head = mla.qk_nope_head_dim + mla.qk_rope_head_dim
    if mla.q_lora_rank:
        q = hidden * mla.q_lora_rank + mla.q_lora_rank + mla.q_lora_rank * heads * q_head
    else:
        q = hidden * heads * q_head
    kv_a = hidden * (mla.kv_lora_rank + mla.qk_rope_head_dim) + mla.kv_lora_rank
    kv_b = mla.kv_lora_rank * heads * (mla.qk_nope_head_dim + mla.v_head_dim)
    o = heads * mla.v_head_dim * hidden
    bias = 0
    if arch.attention_bias:  # modeling_deepseek.py: attention_bias applies to q_a_proj, kv_a_proj_with_mqa, o_proj
        bias = (mla.q_lora_rank or 0) + mla.kv_lora_rank + mla.qk_rope_head_dim + hidden
    return q + kv_a + kv_b + o + bias


def _indexer_params(arch: Architecture) -> int:
    """DeepSeek-V3.2's lightning indexer, as in its inference/model.py: wq_b (q_lora_rank → heads·dim), wk (hidden →
    dim), k_norm (LayerNorm: weight and bias), weights_proj (hidden → heads); no biases on the projections."""
    ix, mla = arch.indexer, arch.mla
    if ix is None or mla is None or not mla.q_lora_rank:
        return 0
    d, n = ix.index_head_dim, ix.index_n_heads
    return mla.q_lora_rank * n * d + arch.hidden_size * d + 2 * d + arch.hidden_size * n


def mlp_params(arch: Architecture, intermediate: int) -> int:
    """One feed-forward block: gated = gate, up, down (SwiGLU/GeGLU); plain = up, down (GPT-2, Falcon)."""
    hidden = arch.hidden_size
    if arch.mlp == "gated":
        return 3 * hidden * intermediate + (2 * intermediate + hidden if arch.mlp_bias else 0)
    return 2 * hidden * intermediate + (intermediate + hidden if arch.mlp_bias else 0)


def _norm_size(arch: Architecture) -> int:
    return arch.hidden_size * (2 if arch.norm == "layernorm" and arch.layernorm_bias else 1)


def _embedding_parts(arch: Architecture) -> tuple[int, int, int]:
    """(token embedding, LM head with its bias, embedding projections) for one model."""
    width = arch.word_embed_proj_dim or arch.hidden_size
    embedding = arch.vocab_size * width
    lm_head = (0 if arch.tie_word_embeddings else embedding) + (arch.vocab_size if arch.lm_head_bias else 0)
    projections = 2 * width * arch.hidden_size if width != arch.hidden_size else 0
    return embedding, lm_head, projections


def _moe_parts(arch: Architecture, moe: MoE) -> tuple[int, int, int]:
    """(one routed expert, all shared experts of a layer, router) for one MoE layer."""
    expert = mlp_params(arch, moe.expert_intermediate_size)
    shared_size = moe.shared_expert_intermediate_size or moe.expert_intermediate_size
    shared = moe.num_shared_experts * mlp_params(arch, shared_size)
    router = arch.hidden_size * moe.num_experts + (moe.num_experts if moe.router_bias else 0)
    return expert, shared, router


def moe_layer_split(layers: int, moe: MoE) -> tuple[int, int]:
    """(dense layers, MoE layers): the leading `first_dense_layers` are dense, then every
    `interleave_moe_layer_step`-th layer is MoE (Llama 4 Maverick alternates dense and MoE layers)."""
    rest = layers - moe.first_dense_layers
    moe_layers = rest // moe.interleave_moe_layer_step
    return layers - moe_layers, moe_layers


def count_parameters(arch: Architecture) -> ParameterCount:
    """Count every parameter of `arch`; total and per-token active (they differ only for MoE)."""
    layers = arch.num_hidden_layers
    embedding, lm_head, projections = _embedding_parts(arch)
    position = arch.learned_position_embeddings * arch.hidden_size
    attention = attention_params(arch)
    norm = _norm_size(arch)
    norms = (layers * arch.norms_per_layer + int(arch.final_norm) + int(arch.embedding_norm)) * norm
    dense_mlp = mlp_params(arch, arch.intermediate_size)

    lookup = position + (0 if arch.tie_word_embeddings else embedding)  # a tied table is multiplied as the head

    moe = arch.moe
    if moe is None:
        total = embedding + projections + position + lm_head + norms + layers * (attention + dense_mlp)
        return ParameterCount(
            total=total, active=total - lookup, embedding=embedding, position_embedding=position, lm_head=lm_head,
            attention_per_layer=attention, mlp_per_layer_dense=dense_mlp, expert=0, shared_experts_per_layer=0,
            router_per_layer=0, norms=norms, dense_layers=layers, moe_layers=0, embedding_projections=projections,
            input_lookup=lookup,
        )

    if moe.first_dense_layers >= layers:
        raise ValueError(f"first_dense_layers {moe.first_dense_layers} leaves no MoE layer of {layers}")
    if moe.experts_per_token > moe.num_experts:
        raise ValueError(f"experts_per_token {moe.experts_per_token} exceeds num_experts {moe.num_experts}")
    dense_layers, moe_layers = moe_layer_split(layers, moe)
    expert, shared, router = _moe_parts(arch, moe)
    common = embedding + projections + position + lm_head + norms + layers * attention + dense_layers * dense_mlp
    total = common + moe_layers * (moe.num_experts * expert + shared + router)
    active = common + moe_layers * (moe.experts_per_token * expert + shared + router)
    return ParameterCount(
        total=total, active=active - lookup, embedding=embedding, position_embedding=position, lm_head=lm_head,
        attention_per_layer=attention, mlp_per_layer_dense=dense_mlp if dense_layers else 0, expert=expert,
        shared_experts_per_layer=shared, router_per_layer=router, norms=norms, dense_layers=dense_layers,
        moe_layers=moe_layers, embedding_projections=projections, input_lookup=lookup,
    )


def describe(arch: Architecture) -> str:
    """One line for reports: '80 layers, hidden 8192, 64 heads / 8 KV heads (GQA), head dim 128'."""
    kind = attention_kind(arch)
    if arch.mla is not None:
        mla = arch.mla
        heads = (f"{arch.num_attention_heads} heads (MLA, KV latent {mla.kv_lora_rank} + {mla.qk_rope_head_dim} "
                 f"rope dims), q/k head dim {mla.qk_nope_head_dim + mla.qk_rope_head_dim}, "
                 f"v head dim {mla.v_head_dim}")
    else:
        kv = f"{arch.kv_heads} KV head{'s' if arch.kv_heads > 1 else ''}"
        heads = f"{arch.num_attention_heads} heads / {kv} ({kind}), head dim {arch.head_size}"
    text = f"{arch.num_hidden_layers} layers, hidden {arch.hidden_size}, {heads}"
    if arch.sliding_window is not None and arch.local_layers:
        text += f", {arch.local_layers} local layers (window {arch.sliding_window:,})"
    if arch.moe is not None:
        moe = arch.moe
        shared = f" + {moe.num_shared_experts} shared" if moe.num_shared_experts else ""
        dense = f", first {moe.first_dense_layers} layers dense" if moe.first_dense_layers else ""
        if moe.interleave_moe_layer_step > 1:
            dense += f", every {moe.interleave_moe_layer_step}th layer MoE"
        text += f", MoE {moe.experts_per_token} of {moe.num_experts} experts{shared}{dense}"
    if arch.alibi:
        text += ", ALiBi positions"
    return text
