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
from gpuadvisor.tui import streams
from gpuadvisor.tui.report import Contents

MAX_TOP = 100
"""Most recommendations `--top` lists: a ranking longer than this is not read (and a huge value would print every
option of the catalog)."""


def answer_flags() -> list[Any]:
    """The answer fields that have a flag (rules/inputs/answers.py `ask`: the flag, the question and the schema share
    one declaration)."""
    from gpuadvisor.rules.inputs.answers import answer_fields

    return [f for f in answer_fields() if f.flag]


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--answers", metavar="FILE", help="answers TOML file (or a saved JSON report)")
    parser.add_argument("--format", default=None, help="text (default), json, md or html")
    parser.add_argument("--json", action="store_true", help="the same as --format json (as `estimate --json`)")
    parser.add_argument("--output", "-o", metavar="FILE", help="write the report to this regular file (atomically; "
                                                               "- for standard output)")
    parser.add_argument("--save", action="store_true",
                        help="write the report to gpuadvisor-<workload>-<model>-<date>.<ext> in this directory")
    parser.add_argument("--force", action="store_true", help="overwrite --output if it exists")
    parser.add_argument("--top", type=int, default=5, metavar="N", help="recommendations to list (default 5)")
    Contents.add_flags(parser)
    group = parser.add_argument_group("answers as flags (override the answers file)")
    for f in answer_flags():
        help_text = f"{f.description} [{f.key}]".replace("%", "%%")
        if f.kind == "bool":
            group.add_argument(f.option, dest=f"a_{f.flag}", action=argparse.BooleanOptionalAction, default=None,
                               help=help_text)
        else:
            metavar = "A,B,..." if f.kind == "list" else "|".join(map(str, f.values)) if f.values else "VALUE"
            group.add_argument(f.option, dest=f"a_{f.flag}", default=None, metavar=metavar, help=help_text)


def answers_from(args: argparse.Namespace) -> Any:
    """The answers file merged with the flags, validated (errors name the flag or the table.key)."""
    from gpuadvisor.rules.inputs.answers import parse_answers
    from gpuadvisor.rules.lifecycle.answers import LifecycleAnswers, load_any, parse_lifecycle

    data: dict[str, Any] = {}
    if args.answers:
        loaded = load_any(Path(args.answers))
        if isinstance(loaded, LifecycleAnswers):
            flags = [f.option for f in answer_flags() if getattr(args, f"a_{f.flag}", None) is not None]
            if flags:
                raise InputError(f"{flags[0]}: a lifecycle file ([[phase]] tables) takes no answer flags; edit the "
                                 "phase in the file")
            return parse_lifecycle(loaded.given(), args.answers)
        data = loaded.given()
    for f in answer_flags():
        raw = getattr(args, f"a_{f.flag}", None)
        if raw is None:
            continue
        value = _convert(f, raw)
        *parents, leaf = f.key.split(".")
        section = data
        for key in parents:
            section = section.setdefault(key, {})
        if parents == ["model"]:  # one way of naming the model replaces another
            section.clear()
        section[leaf] = value
    try:
        return parse_answers(data, args.answers or "answers")
    except InputError as exc:
        raise InputError(_name_flags(str(exc), args)) from None


def _name_flags(message: str, args: argparse.Namespace) -> str:
    """Point each problem at the flag that set the field, when a flag did."""
    lines = []
    for line in message.splitlines():
        for f in answer_flags():
            if getattr(args, f"a_{f.flag}", None) is not None and f"{f.key}:" in line:
                line += f" (from {f.option})"
                break
        lines.append(line)
    return "\n".join(lines)


def _convert(field: Any, raw: Any) -> Any:
    """A flag's text as its answer: counts in billions with suffixes (`--tokens 1T`), comma-separated lists,
    numbers with the same suffixes (`--capex 2M`, `--dau 50k`: rules/sizing/units reads both); the model validates
    the rest and names the flag when it fails."""
    if field.kind == "bool" or not isinstance(raw, str):
        return raw
    if field.kind == "list":
        return [part.strip() for part in raw.split(",") if part.strip()]
    try:
        if field.count:
            from gpuadvisor.rules.sizing.units import parse_billions

            return parse_billions(raw)  # "70B" → 70, "500M" → 0.5; a plain "70" already means billions
        if field.kind == "choice" and raw.isdigit() and int(raw) in field.values:
            return int(raw)  # training.zero_stage: 0-3 or "auto"
        if field.kind in ("int", "float"):
            from gpuadvisor.rules.sizing.units import parse_amount

            value = parse_amount(raw)
            if field.kind == "int":
                if not value.is_integer():
                    raise ValueError(f"{raw!r} is not a whole number")
                return int(value)
            return value
        return raw
    except ValueError as exc:
        raise InputError(f"{field.option}: {exc}") from None


def run(args: argparse.Namespace) -> int:
    from gpuadvisor.rules.consult import consult
    from gpuadvisor.rules.inputs.current_gpu import resolve_auto_gpu, wants_detection
    from gpuadvisor.rules.lifecycle.answers import LifecycleAnswers
    from gpuadvisor.tui.report import default_filename, format_for_path, normalize_format, render, save_report

    if not 1 <= args.top <= MAX_TOP:
        raise InputError(f"--top: must be from 1 to {MAX_TOP} (got {args.top:,})")
    if args.json and args.format not in (None, "json"):
        raise InputError(f"--json and --format {args.format}: give one")
    to_stdout = args.output == "-"  # `-` is standard output, as for `report --output -`
    fmt_name = ("json" if args.json else args.format) or \
        (format_for_path(args.output) if args.output and not to_stdout else None) or "text"
    try:
        fmt = normalize_format(fmt_name)
    except ValueError as exc:
        raise InputError(f"--format: {exc}") from None
    if args.save and args.output:
        raise InputError("--save and --output: give one (--save picks the default name in this directory)")
    if args.save and not args.format and not args.json:
        fmt = "md"
    answers = answers_from(args)
    if not isinstance(answers, LifecycleAnswers) and wants_detection(answers):
        # detected before the consultation, and said on stderr (never an error)
        from gpuadvisor.rules.consult import get_advisor

        answers, detection = resolve_auto_gpu(answers, get_advisor().catalog)
        if detection is not None:
            print(f"gpuadvisor: {detection.summary()}", file=sys.stderr)
    result = consult(answers, top=args.top)
    saving = bool(args.output or args.save) and not to_stdout
    text = render(result, fmt, contents=Contents.of(args), columns=None if saving else streams.terminal_columns())
    if saving:
        target = args.output or default_filename(result, fmt)
        path = save_report(text, target, force=args.force)
        print(f"gpuadvisor: wrote {fmt} report to {path}", file=sys.stderr)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0 if result.feasible else 3
