"""`gpuadvisor recommend`: a whole consultation without the TUI, for scripts and CI.

Answers come from `--answers FILE` (TOML, or a saved JSON report), and/or flags for the common ones; flags win.
The result is printed (text by default) or written to `--output` atomically, never overwriting without `--force`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from gpuadvisor.knowledge.errors import InputError

# flag -> (answers path, type); type "count" accepts 70B-style suffixes
ANSWER_FLAGS: dict[str, tuple[tuple[str, ...], Any, str]] = {
    "workload": (("workload",), str, "training | finetune | inference"),
    "stage": (("stage",), str, "learning | prototyping | production"),
    "model": (("model", "name"), str, "knowledge-base model (matched loosely), e.g. llama-3.1-70b"),
    "params": (("model", "params_b"), "billions", "bare model size, e.g. 70B or 7e9"),
    "model_config": (("model", "config"), str, "path to a Hugging Face config.json"),
    "method": (("finetune", "method"), str, "full | lora | qlora (fine-tuning)"),
    "precision": (("precision", "weights"), str, "weight format: bf16, fp8, int4, awq, nf4, q4_k_m, ..."),
    "kv_precision": (("precision", "kv_cache"), str, "KV-cache format: fp16, bf16, fp8, int8"),
    "context": (("precision", "context_tokens"), int, "context length in tokens"),
    "batch": (("precision", "batch_size"), int, "batch size (sequences per step)"),
    "rpm": (("inference", "requests_per_minute"), float, "requests per minute to serve"),
    "input_tokens": (("inference", "input_tokens"), int, "prompt tokens per request"),
    "output_tokens": (("inference", "output_tokens"), int, "generated tokens per request"),
    "concurrency": (("inference", "concurrent_requests"), int, "requests in flight at peak"),
    "min_user_tps": (("inference", "min_tokens_per_s_per_user"), float, "minimum tokens/s each user sees"),
    "ttft": (("inference", "ttft_max_s"), float, "maximum time to first token, seconds"),
    "latency": (("inference", "latency_p95_s"), float, "p95 request latency target, seconds"),
    "engine": (("inference", "engine"), str, "serving engine: auto | llama.cpp | ollama | vllm | sglang | "
                                            "tensorrt-llm | mlx"),
    "tokens": (("training", "tokens_b"), "billions", "training tokens, e.g. 2T or 500B"),
    "deadline_days": (("training", "deadline_days"), float, "days the run may take"),
    "capex": (("budget", "capex_usd"), float, "hardware budget, USD"),
    "hourly": (("budget", "hourly_usd"), float, "cloud budget per hour, USD"),
    "monthly": (("budget", "monthly_usd"), float, "budget per month, USD"),
    "where": (("deployment", "where"), str, "cloud | on_prem | either"),
    "hours": (("deployment", "hours_per_month"), float, "hours a month the hardware is in use"),
    "utilization": (("deployment", "utilization"), float, "expected busy fraction 0-1 (rent vs buy)"),
    "framework": (("framework", "name"), str, "pytorch | jax | tensorflow | other"),
    "max_gpus": (("constraints", "max_gpus"), int, "most accelerators you would deploy"),
    "current_gpu": (("current", "gpu"), str, "the GPU you already have: a knowledge-base name, or auto to detect "
                                             "this machine's"),
    "current_gpu_count": (("current", "gpu_count"), int, "how many of the GPU you already have"),
}


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--answers", metavar="FILE", help="answers TOML file (or a saved JSON report)")
    parser.add_argument("--format", default=None, help="text (default), json, md or html")
    parser.add_argument("--output", "-o", metavar="FILE", help="write the report here (atomically)")
    parser.add_argument("--save", action="store_true",
                        help="write the report to gpuadvisor-<workload>-<model>-<date>.<ext> in this directory")
    parser.add_argument("--force", action="store_true", help="overwrite --output if it exists")
    parser.add_argument("--top", type=int, default=5, metavar="N", help="recommendations to list (default 5)")
    parser.add_argument("--why", action="store_true", help="text format: print the explanation chain of every line")
    parser.add_argument("--all-findings", action="store_true",
                        help="list every finding, not only the few that matter most (JSON always holds them all)")
    group = parser.add_argument_group("answers as flags (override the answers file)")
    for name, (path, _kind, help_text) in ANSWER_FLAGS.items():
        group.add_argument(f"--{name.replace('_', '-')}", dest=f"a_{name}", default=None, metavar="VALUE",
                           help=f"{help_text} [{'.'.join(path)}]")
    group.add_argument("--datacenter-only", dest="a_datacenter_only", action="store_const", const=True,
                       default=None, help="only data-centre parts [constraints.datacenter_only]")
    group.add_argument("--no-spot", dest="a_spot", action="store_const", const=False, default=None,
                       help="do not consider spot prices [deployment.spot]")


def answers_from(args: argparse.Namespace) -> Any:
    """The answers file merged with the flags, validated (errors name the flag or the table.key)."""
    from gpuadvisor.rules.answers import load_answers, parse_answers

    data: dict[str, Any] = {}
    if args.answers:
        data = load_answers(Path(args.answers)).given()
    for name, (path, kind, _) in ANSWER_FLAGS.items():
        raw = getattr(args, f"a_{name}")
        if raw is None:
            continue
        value = _convert(name, raw, kind)
        section = data
        for key in path[:-1]:
            section = section.setdefault(key, {})
        if path[0] == "model":  # one way of naming the model replaces another
            section.clear()
        section[path[-1]] = value
    if args.a_datacenter_only is not None:
        data.setdefault("constraints", {})["datacenter_only"] = True
    if args.a_spot is not None:
        data.setdefault("deployment", {})["spot"] = False
    try:
        return parse_answers(data, args.answers or "answers")
    except InputError as exc:
        raise InputError(_name_flags(str(exc), args)) from None


def _name_flags(message: str, args: argparse.Namespace) -> str:
    """Point each problem at the flag that set the field, when a flag did."""
    lines = []
    for line in message.splitlines():
        for name, (path, _, _) in ANSWER_FLAGS.items():
            if getattr(args, f"a_{name}") is not None and f"{'.'.join(path)}:" in line:
                line += f" (from --{name.replace('_', '-')})"
                break
        lines.append(line)
    return "\n".join(lines)


def _convert(name: str, raw: str, kind: Any) -> Any:
    flag = f"--{name.replace('_', '-')}"
    if kind is str:
        return raw
    try:
        if kind == "billions":
            from gpuadvisor.rules.sizing.units import parse_count

            value = parse_count(raw)
            return value / 1e9 if value >= 1e6 else value  # "70B" → 70; a plain "70" already means billions
        return kind(raw)
    except ValueError as exc:
        raise InputError(f"{flag}: {exc if kind == 'billions' else f'{raw!r} is not a number'}") from None


def run(args: argparse.Namespace) -> int:
    from gpuadvisor.rules.consult import consult
    from gpuadvisor.rules.current_gpu import resolve_auto_gpu, wants_detection
    from gpuadvisor.tui.report import default_filename, format_for_path, normalize_format, render, save_report

    if args.top < 1:
        raise InputError("--top: must be at least 1")
    fmt_name = args.format or (format_for_path(args.output) if args.output else None) or "text"
    try:
        fmt = normalize_format(fmt_name)
    except ValueError as exc:
        raise InputError(f"--format: {exc}") from None
    if args.save and args.output:
        raise InputError("--save and --output: give one (--save picks the default name in this directory)")
    if args.save and not args.format:
        fmt = "md"
    answers = answers_from(args)
    if wants_detection(answers):  # detected before the consultation, and said on stderr (never an error)
        from gpuadvisor.rules.consult import get_advisor

        answers, detection = resolve_auto_gpu(answers, get_advisor().catalog)
        if detection is not None:
            print(f"gpuadvisor: {detection.summary()}", file=sys.stderr)
    result = consult(answers, top=args.top)
    saving = bool(args.output or args.save)
    text = render(result, fmt, why=args.why or fmt != "text" or saving, all_findings=args.all_findings)
    if saving:
        target = args.output or default_filename(result, fmt)
        path = save_report(text, target, force=args.force)
        print(f"gpuadvisor: wrote {fmt} report to {path}", file=sys.stderr)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0 if result.feasible else 3
