"""`gpuadvisor estimate`: size one configuration and print memory, speed, training time and cost.

Flags are read as text and validated here, so every bad value becomes one line `gpuadvisor: error: --flag ...`
(exit 2) instead of argparse's usage dump. Heavy imports (pydantic models, the knowledge base) happen in `run`,
never at registration: `gpuadvisor estimate --json` must stay well under half a second.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuadvisor.knowledge.errors import InputError
from gpuadvisor.knowledge.sanitize import shorten
from gpuadvisor.knowledge.schema import as_of_label
from gpuadvisor.rules.sizing.units import flops_text, usd_text

if TYPE_CHECKING:
    from gpuadvisor.rules.estimate.consult import EstimateRequest, EstimateResult

CHOICES = {
    "workload": ("inference", "training", "finetune"),
    "method": ("full", "lora", "qlora"),
    "optimizer": ("adamw", "sgd", "adam8bit"),
    "grad_precision": ("bf16", "fp32"),
    "recompute": ("auto", "none", "selective", "full"),
}
BOUNDS: dict[str, str] = {
    "context": "context_tokens", "batch": "batch", "input_tokens": "request_tokens", "output_tokens": "request_tokens",
    "gpus": "gpus", "tp": "parallel_degree", "ep": "parallel_degree", "power_limit_w": "power_limit_w",
    "pp": "pipeline_stages", "lora_rank": "lora_rank", "requests_per_minute": "requests_per_minute",
    "utilization": "utilization", "tokens": "training_tokens", "mfu": "mfu", "params": "parameters",
    "cp": "parallel_degree", "global_batch": "global_batch", "global_batch_tokens": "global_batch_tokens",
}
"""The quantity of `knowledge.bounds` each numeric flag takes: the answers file's bounds for the same quantities, so
an absurd value is refused naming the flag, not printed as if real."""
INTS = ("context", "batch", "input_tokens", "gpus", "tp", "ep", "pp", "zero", "lora_rank", "output_tokens",
        "power_limit_w", "cp", "global_batch")
FLOATS = ("requests_per_minute", "utilization", "mfu")
_NEGATIVE = re.compile(r"^-(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[KMBGTkmbgt]?|inf(?:inity)?|nan)$", re.I)


def register(parser: argparse.ArgumentParser) -> None:
    model = parser.add_argument_group("model (give one)")
    model.add_argument("--model", metavar="NAME", help="knowledge-base model, matched loosely (llama-3.1-8b)")
    model.add_argument("--params", metavar="SIZE", help="bare size, e.g. 70B, 7e9: sizes a Llama-3-like shape")
    model.add_argument("--model-config", "--config", dest="model_config", metavar="PATH",
                       help="a Hugging Face config.json (or its directory)")
    work = parser.add_argument_group("workload")
    work.add_argument("--workload", metavar="KIND", help="inference (default), training or finetune")
    work.add_argument("--method", metavar="M", help="full, lora (finetune default) or qlora")
    work.add_argument("--precision", metavar="FMT", help="weights: bf16 (default), fp16, fp8, int8, awq, gptq, nf4, "
                                                          "q4_k_m ... (any precisions.toml format)")
    work.add_argument("--kv-precision", metavar="FMT", help="KV cache: fp16 (default), bf16, fp8, int8")
    work.add_argument("--context", metavar="N", help="tokens per sequence (default 4096)")
    work.add_argument("--batch", metavar="N", help="concurrent sequences (inference) / micro-batch per GPU (training)")
    work.add_argument("--input-tokens", metavar="N", help="prompt tokens for time to first token (default: context)")
    work.add_argument("--tokens", metavar="N", help="training tokens, plain or with K/M/B/T (2T, 500M)")
    work.add_argument("--optimizer", metavar="OPT", help="adamw (default), sgd or adam8bit")
    work.add_argument("--grad-precision", metavar="FMT", help="bf16 (default, 16 B/param AdamW) or fp32 (18)")
    work.add_argument("--lora-rank", metavar="R", help="LoRA/QLoRA rank (default 16)")
    work.add_argument("--no-checkpointing", action="store_true", help="training without activation recomputation")
    work.add_argument("--recompute", metavar="R", help="training: auto (default: the least that fits), none, "
                                                       "selective or full")
    work.add_argument("--global-batch", metavar="N", help="training: sequences per optimizer step (default: 4M "
                                                          "tokens to 30B parameters, 16M at 405B; 64 fine-tuning)")
    work.add_argument("--global-batch-tokens", metavar="N", help="training: tokens per optimizer step, e.g. 4M")
    work.add_argument("--mfu", metavar="F", help="training MFU override, 0-1 (default: what the step model gives, "
                                                 "calibrated on published runs)")
    hw = parser.add_argument_group("hardware")
    hw.add_argument("--gpu", metavar="ID_OR_NAME", help="accelerator (nvidia-h100-sxm5, 'RTX 4090', ...)")
    hw.add_argument("--gpus", metavar="N", help="GPUs in total (default tp × pp)")
    hw.add_argument("--tp", metavar="N", help="tensor-parallel degree (inference default: --gpus)")
    hw.add_argument("--ep", metavar="N", help="MoE inference: expert-parallel degree, a multiple of --tp (each GPU "
                                             "holds 1/N of the routed experts; attention data-parallel in N ÷ tp "
                                             "groups; default 1: experts tensor-parallel)")
    hw.add_argument("--pp", metavar="N", help="pipeline-parallel degree (default 1)")
    hw.add_argument("--cp", metavar="N", help="training: context-parallel degree, each sequence split over N GPUs "
                                             "(default 1)")
    hw.add_argument("--power-limit", dest="power_limit_w", metavar="WATTS",
                    help="GPUs capped at this board power (MLPerf MaxQ); only limits with a published result, "
                         "e.g. 500 on an H200 SXM")
    hw.add_argument("--zero", metavar="STAGE", help="ZeRO stage 0-3 over data-parallel GPUs (3 = FSDP)")
    ops = parser.add_argument_group("serving and ownership")
    ops.add_argument("--requests-per-min", dest="requests_per_minute", metavar="N",
                     help="traffic to serve: replicas needed (S10)")
    ops.add_argument("--output-tokens", metavar="N", help="generated tokens per request (default 200)")
    ops.add_argument("--utilization", metavar="F", help="busy fraction of owned hardware (default 0.5)")
    ops.add_argument("--engine", metavar="NAME", help="serving engine: auto (default: MLX on Apple, llama.cpp on "
                                                      "desk-side cards, vLLM on servers), llama.cpp, ollama, vllm, "
                                                      "sglang, tensorrt-llm (trtllm-serve), "
                                                      "tensorrt-llm-engine (built engines), mlx")
    parser.add_argument("--json", action="store_true", help="print the EstimateResult as JSON "
                                                            "(see `gpuadvisor schema estimate`)")
    parser.add_argument("--format", metavar="FORMAT", choices=("text", "json"), default=None,
                        help="text (default) or json, as `recommend --format` (json = --json)")
    parser.set_defaults(command="estimate")
    # argparse takes "-5B" for an option and answers with a usage dump; let negative sizes reach our validation,
    # which names the flag ("--params: '-5B' must be greater than zero").
    if hasattr(parser, "_negative_number_matcher"):
        parser._negative_number_matcher = _NEGATIVE


def _flag(name: str) -> str:
    special = {"requests_per_minute": "--requests-per-min", "power_limit_w": "--power-limit"}
    return special.get(name, "--" + name.replace("_", "-"))


def _number(name: str, text: str, kind: type) -> Any:
    if sum(map(str.isdigit, text)) > 100:  # counted before any conversion: Python's own limit never speaks
        raise InputError(f"{_flag(name)} is implausibly large (got {shorten(repr(text))})")
    try:
        value = kind(text.strip())
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise InputError(f"{_flag(name)} must be {what} (got {shorten(repr(text))})") from None
    if name == "zero":
        if value not in (0, 1, 2, 3):
            raise InputError(f"--zero must be 0, 1, 2 or 3 (got {shorten(repr(text))})")
        return value
    return _bounded(name, value, text)


def _bounded(name: str, value: float, text: str) -> float:
    """`value` inside the flag's bound (`BOUNDS`), else an InputError naming the flag and the range."""
    from gpuadvisor.knowledge.bounds import bound

    limits = bound(BOUNDS[name])
    if not value > 0 or not math.isfinite(value):
        raise InputError(f"{_flag(name)} must be greater than zero (got {shorten(repr(text))})")
    if value > limits.high > 1:  # a count or a rate; a fraction says its range below
        raise InputError(f"{_flag(name)} is implausibly large (got {shorten(repr(text))}; at most {limits.high:,.0f})")
    if not limits.holds(value):
        raise InputError(f"{_flag(name)} must be {limits.describe()} (got {shorten(repr(text))})")
    return value


def request_from(args: argparse.Namespace) -> EstimateRequest:
    """Flags → EstimateRequest; raises InputError naming the flag."""
    from gpuadvisor.rules.estimate.consult import EstimateRequest
    from gpuadvisor.rules.sizing.units import parse_count

    values: dict[str, Any] = {}
    for name, allowed in CHOICES.items():
        raw = getattr(args, name)
        if raw is not None:
            value = raw.strip().lower()
            if value not in allowed:
                raise InputError(f"{_flag(name)} must be one of {', '.join(allowed)} (got {shorten(repr(raw))})")
            values[name] = value
    for name in INTS:
        raw = getattr(args, name)
        if raw is not None:
            values[name] = _number(name, raw, int)
    for name in FLOATS:
        raw = getattr(args, name)
        if raw is not None:
            values[name] = _number(name, raw, float)
    for name in ("params", "tokens", "global_batch_tokens"):
        raw = getattr(args, name)
        if raw is not None:
            try:
                values[name] = parse_count(raw)
            except ValueError as exc:
                raise InputError(f"{_flag(name)}: {shorten(str(exc), 200)}") from None
            values[name] = _bounded(name, values[name], raw)
    if args.engine is not None:
        from gpuadvisor.knowledge.engine_names import canonical_engine

        try:
            values["engine"] = canonical_engine(args.engine)
        except InputError as exc:
            raise InputError(f"--engine: {exc}") from None
    for name in ("model", "precision", "kv_precision", "gpu"):
        raw = getattr(args, name)
        if raw is not None:
            if not raw.strip():
                raise InputError(f"{_flag(name)} must not be empty")
            values[name] = raw
    if args.model_config is not None:
        values["model_config"] = Path(args.model_config)
    if args.no_checkpointing:
        values["checkpointing"] = False
    return EstimateRequest(**values)


def run(args: argparse.Namespace) -> int:
    from gpuadvisor.knowledge.loader import load_catalog
    from gpuadvisor.rules.estimate.fit_hints import estimate_with_fit_options

    if args.json and args.format == "text":
        raise InputError("--json and --format text: give one")
    request = request_from(args)
    result = estimate_with_fit_options(request, load_catalog())
    if args.json or args.format == "json":
        sys.stdout.write(result.model_dump_json(indent=2) + "\n")
    else:
        sys.stdout.write(render_text(result))
    return 0


# ----------------------------------------------------------------------------------------------------------------
# Plain-text rendering
# ----------------------------------------------------------------------------------------------------------------


def _ms(seconds: float | None) -> str:
    """A latency as a person reads it: `9.46 ms`, `1.25 s`."""
    if seconds is None:
        return "-"
    return f"{_n(seconds * 1000)} ms" if seconds < 1 else f"{_n(seconds)} s"


def _in_flight(r: EstimateResult) -> int:
    """Sequences in flight over all replicas: the batch of each, as closed-loop clients."""
    return r.setup.batch * r.setup.data_parallel


def _under_load(r: EstimateResult) -> str:
    """The load a latency is measured under."""
    clients = _in_flight(r)
    return f" at {clients:,} request{'s' if clients != 1 else ''} in flight"


def _n(value: float | None, digits: int = 3) -> str:
    """A number with sensible precision: 1,234 / 56.7 / 0.123."""
    if value is None:
        return "-"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.{digits}g}" if abs(value) < 100 else f"{value:.0f}"


def _count(n: float) -> str:
    for unit, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g}{unit}"
    return f"{n:.0f}"


def _step_rows(r: EstimateResult) -> list[tuple[str, str]]:
    """The optimizer step, part by part, and what a larger batch or a faster fabric would change."""
    step = r.training_step
    if step is None:
        return []
    s = r.setup
    rows = [("layout", f"TP {s.tensor_parallel} × CP {s.context_parallel} × PP {s.pipeline_parallel}"
                       + (f" (VP {s.virtual_stages})" if s.pipeline_parallel > 1 else "")
                       + f" × DP {s.data_parallel}, ZeRO {s.zero_stage}, recompute {s.recompute}"),
            ("batch", f"{s.global_batch:,} sequences a step = micro-batch {s.batch} × {s.gradient_accumulation} "
                      f"accumulation × DP {s.data_parallel}"),
            ("step", f"{step.seconds:.3g} s: compute {step.compute:.3g} s, exposed communication "
                     f"{step.exposed_communication:.3g} s, bubble {step.bubble:.3g} s"
                     + (f", optimizer {step.optimizer:.3g} s" if step.optimizer >= 0.001 * step.seconds else "")
                     + f" (scaling efficiency {step.scaling_efficiency:.0%})")]
    parts = [f"{name} {t:.3g} s" for name, t in (("tensor parallel", step.exposed_tensor_parallel),
                                                  ("context parallel", step.exposed_context_parallel),
                                                  ("pipeline", step.exposed_pipeline),
                                                  ("data parallel", step.exposed_data_parallel)) if t > 0]
    if parts:
        rows.append(("exposed", ", ".join(parts)))
    if step.what_if:
        rows.append(("what if", ", ".join(f"{k}: {v - 1:+.0%} tokens/s" for k, v in step.what_if.items())))
    return rows


def _table(rows: list[tuple[str, str]], indent: str = "  ") -> list[str]:
    width = max((len(k) for k, _ in rows), default=0)
    return [f"{indent}{k:<{width}}  {v}".rstrip() for k, v in rows]


def _grid(header: list[str], rows: list[list[str]], indent: str = "  ") -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    numeric = [i > 2 for i in range(len(header))]

    def line(cells: list[str]) -> str:
        parts = [c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric, strict=True)]
        return (indent + "  ".join(parts)).rstrip()

    return [line(header), *(line(r) for r in rows)]


def render_text(r: EstimateResult) -> str:
    """The human-readable estimate: aligned sections, GB = 10^9 bytes."""
    s = r.setup
    hw = f"{s.gpus} × {s.gpu_name}" if s.gpu_name else "no GPU given (memory only)"
    what = s.workload if s.method is None else f"{s.workload}, {s.method}"
    out = [f"gpuadvisor estimate: {r.model.name} on {hw} ({what})", ""]
    # with EP the replica's GPUs run attention data-parallel, one GPU a group (rules/planning/search.py `_split`)
    ep = f" (EP {s.expert_parallel}: experts split over {s.expert_parallel} GPUs, attention in " \
         f"{s.expert_parallel} data-parallel groups of 1 GPU)" if s.expert_parallel > 1 else ""
    layout = f"TP {s.tensor_parallel} × PP {s.pipeline_parallel} × {'replicas' if s.method is None else 'DP'} " \
             f"{s.data_parallel}" + ep + (f", ZeRO-{s.zero_stage}" if s.zero_stage else "")
    rows = [
        ("model", f"{r.model.name} ({r.model.source}): {r.model.description}"),
        ("parameters", f"{_count(r.parameters.total)} total, {_count(r.parameters.active)} multiplied per token"
         + (f", {_count(r.parameters.trainable)} trained" if r.parameters.trainable else "")),
        ("precision", f"weights {r.precision.weights} ({r.precision.weights_bits:g} bits/weight)"
         + (f", KV cache {r.precision.kv_cache}" if r.precision.kv_cache else "")
         + f", compute {r.precision.compute}"),
        ("setup", f"context {s.context:,} tokens, batch {s.batch}, {layout}"
         + (f", {s.optimizer}" if s.optimizer else "")
         + (", activation checkpointing" if s.gradient_checkpointing else "")),
    ]
    if s.engine:
        rows.append(("engine", s.engine + (f" (calibrated profile {s.engine_profile}, measured on "
                                           f"{s.engine_release}, {s.engine_released})" if s.engine_profile
                                           else " (no calibrated profile: engine-blind assumptions)")))
    if r.kv_cache_bytes_per_token is not None:
        held = (f"{r.kv_cache_tokens_per_sequence:,} tokens a sequence × {_in_flight(r):,} sequences"
                if r.kv_cache_tokens_per_sequence is not None else "every sequence in flight")
        rows.append(("KV cache", f"{r.kv_cache_bytes_per_token:,.0f} bytes/token, {_n(r.kv_cache_gb)} GB for {held}"))
    out += _table(rows, indent="") + ["", "Memory per GPU (GB = 10^9 bytes)"]
    m = r.memory_gb
    items = [("weights", m.weights), ("KV cache", m.kv_cache), ("activations", m.activations),
             ("gradients", m.gradients), ("optimizer states", m.optimizer_states),
             ("runtime overhead", m.runtime_overhead)]
    mem_rows = [(k, f"{v:9.2f} GB") for k, v in items if v or k in ("weights", "activations")]
    mem_rows.append(("total", f"{m.total:9.2f} GB   (needs a {m.required_capacity:.1f} GB card with "
                              f"{m.headroom_fraction:.0%} kept free)"))
    if m.full_context is not None and m.full_context_tokens is not None:
        mem_rows.append(("full context", f"{m.full_context:9.2f} GB   (one request of {m.full_context_tokens:,} "
                                         "tokens alone: the engine must hold it to start)"))
    if m.capacity is not None:
        sold = f"sold as {m.capacity_as_sold:g} GB in binary units; " if m.capacity_as_sold is not None else ""
        mem_rows.append(("capacity", f"{m.capacity:9.2f} GB   ({sold}{m.usable:.2f} GB usable)"))
        why = "   (one request at the full context does not fit)" if m.full_context is not None else ""
        mem_rows.append(("fits", f"{'yes' if r.fits else 'NO':>9}{why}"))
    out += _table(mem_rows)
    if r.fit_options:
        out += ["", "To make it fit (each change on its own, sized again)"]
        out += _table([(o.flags, f"{o.total_gb:.1f} of {o.usable_gb:.1f} GB usable: {o.change}")
                       for o in r.fit_options])
    elif r.fits is False:
        out += ["", "No single change makes it fit (ZeRO-3, a wider split, more GPUs, a smaller format were tried): "
                    "`gpuadvisor recommend` plans the whole setup."]
    out += _speed(r)
    out += _costs(r)
    for title, lines in (("Warnings", r.warnings), ("Defaults used", r.defaults_applied)):
        if lines:
            out += ["", title] + [f"  - {w}" for w in lines]
    out += ["", "Assumptions"]
    for a in r.assumptions:
        value = "" if a.value is None else f" = {a.value:g}{' ' + a.unit if a.unit else ''}"
        band = f" [{a.low:g}-{a.high:g}]" if a.low is not None and a.high is not None else ""
        out.append(f"  {a.id}{value}{band}: {a.text} ({a.source})")
    return "\n".join(out) + "\n"


def _speed(r: EstimateResult) -> list[str]:
    rows: list[tuple[str, str]] = []
    if r.decode_tokens_per_s is not None:
        rng = r.decode_tokens_per_s_range
        rows.append(("decode", f"{_n(r.decode_tokens_per_s)} tokens/s"
                     + (f" (range {_n(rng.low)}-{_n(rng.high)})" if rng else "")
                     + f", {_n(r.decode_tokens_per_s_per_sequence)} per sequence, ceiling "
                       f"{_n(r.bandwidth_bound_tokens_per_s)} at full bandwidth"))
        lat = r.latency
        if lat is not None:
            rows.append(("time per token", f"{_ms(lat.tpot_p50_s)} median, {_ms(lat.tpot_p99_s)} p99"
                         f"{_under_load(r)} ({lat.arrival})"
                         + (f"; {_ms(r.tpot_idle_s)} alone on the replica" if r.tpot_idle_s is not None else "")))
        else:
            rows.append(("time per token", f"{_ms(r.tpot_s)}{_under_load(r)}"
                         + (f" ({_ms(r.tpot_idle_s)} alone on the replica)" if r.tpot_idle_s is not None else "")))
        if r.throughput_tokens_per_s is not None:
            rows.append(("throughput with prompts", f"{_n(r.throughput_tokens_per_s)} tokens/s (every prompt "
                         f"processed, {r.throughput_output_tokens} output tokens per request)"))
        if r.bound:
            ridge = f", ridge {_n(r.ridge_point)}" if r.ridge_point else ""
            rows.append(("bound", f"{r.bound} (intensity {_n(r.arithmetic_intensity)} FLOP/byte{ridge})"))
    if r.ttft_s is not None:
        rng2 = r.ttft_s_range
        rows.append(("prefill", f"{_n(r.prefill_tokens_per_s)} tokens/s"))
        lat = r.latency
        if lat is not None:
            rows.append(("time to first token", f"{_ms(lat.ttft_p50_s)} median, {_ms(lat.ttft_p99_s)} p99"
                         f"{_under_load(r)} ({lat.arrival})"
                         + (f"; {_ms(r.ttft_idle_s)} alone" if r.ttft_idle_s is not None else "")))
            rows.append(("", f"{_ms(r.ttft_s)} p95 for independent users, what a plan's first-token target is "
                         "checked against" + (f" (range {_ms(rng2.low)}-{_ms(rng2.high)})" if rng2 else "")))
        else:
            rows.append(("time to first token", f"{_ms(r.ttft_s)} p95{_under_load(r)}"
                         + (f" (range {_ms(rng2.low)}-{_ms(rng2.high)})" if rng2 else "")
                         + (f"; {_ms(r.ttft_idle_s)} alone" if r.ttft_idle_s is not None else "")))
    if r.training_gpu_hours is not None:
        rng3 = r.training_gpu_hours_range
        if r.training_flops is not None:
            rows.append(("training compute", flops_text(r.training_flops)))
        rows.append(("GPU-hours", f"{_n(r.training_gpu_hours)}" + (f" (range {_n(rng3.low)}-{_n(rng3.high)})"
                                                                  if rng3 else "")))
        rows.append(("wall time", f"{_n(r.training_days)} days on {r.setup.gpus} GPUs "
                                  f"({_n(r.training_tokens_per_s)} tokens/s)"))
        if r.setup.training_mfu is not None:
            rows.append(("MFU", f"{r.setup.training_mfu:.1%}"))
        rows += _step_rows(r)
    elif r.training_flops is not None:
        rows.append(("training compute", flops_text(r.training_flops)))
    if r.serving is not None:
        sv = r.serving
        rows.append(("serving", f"{_n(sv.tokens_per_s_needed)} tokens/s needed, {_n(sv.tokens_per_s_planned)} "
                                f"with burst headroom → {sv.replicas} replica(s), {sv.gpus} GPU(s)"))
    return ["", "Speed and time"] + _table(rows) if rows else []


def _costs(r: EstimateResult) -> list[str]:
    out: list[str] = []
    if r.costs:
        training = r.setup.method is not None
        header = ["provider", "instance", "pricing", "instances", "$/hour", "$/GPU-hour",
                  "$/run" if training else "$/1M tokens", "as of"]
        rows = [[c.provider, c.name, c.pricing, str(c.instances), f"{c.usd_per_hour:,.2f}",
                 f"{c.usd_per_gpu_hour:,.2f}", _money(c.usd_per_run if training else c.usd_per_million_tokens),
                 as_of_label(c.as_of)] for c in r.costs]
        out += ["", "Cloud cost"] + _grid(header, rows)
        # a date the source qualifies keeps its note, under the table rather than stretching a column
        out += [f"  {c.provider} {c.name}: as of {c.as_of}" for c in r.costs if c.as_of != as_of_label(c.as_of)]
    if r.owned is not None:
        o = r.owned
        each = f"${o.price_usd_each:,.0f} per GPU, " if o.price_usd_each is not None else ""
        beyond = (f" (${o.capex_beyond_accelerators_usd:,.0f} of it host and fabric)"
                  if o.capex_beyond_accelerators_usd else "")
        rows2 = [("bought as", f"{o.machines} × {o.system} ({o.accelerators_paid} GPUs, {o.power_kw:,.1f} kW)"),
                 ("price", f"{each}${o.capex_usd:,.0f} in total{beyond} ({_dated(o.price_as_of)})"),
                 ("per busy hour", f"{usd_text(o.usd_per_busy_hour)} at {o.utilization:.0%} utilization")]
        if o.usd_per_million_tokens is not None:
            rows2.append(("per 1M tokens", _money(o.usd_per_million_tokens)))
        if o.usd_per_run is not None:
            rows2.append(("per run", _money(o.usd_per_run)))
        if o.break_even_utilization is not None:
            rows2.append(("break-even", f"buying beats the cheapest on-demand rental above "
                                        f"{o.break_even_utilization:.0%} utilization"))
        out += ["", "Owned hardware"] + _table(rows2)
    return out


def _money(v: float | None) -> str:
    return "-" if v is None else usd_text(v)


def _dated(as_of: str) -> str:
    return "price undated" if as_of == "undated" else f"as of {as_of}"
