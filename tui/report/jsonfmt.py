"""The report as JSON (the whole consultation, `RecommendResult`), and reading such a file back.

The JSON report is the master copy: `gpuadvisor report --from FILE` re-renders any format from it, and its `answers`
object reruns the consultation (`gpuadvisor recommend --answers FILE`). Its why chains reference one table of facts
and rules and share repeated sub-trees (`whyjson`), which keeps a consultation's file to a few hundred KB; one line
per field and per list entry, so `grep` and a diff still read it.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from pydantic import ValidationError

from gpuadvisor.knowledge.bounds import booleans_as_numbers, bound
from gpuadvisor.knowledge.errors import InputError
from gpuadvisor.knowledge.files import REPORT_MAX_BYTES, read_text_file
from gpuadvisor.knowledge.nesting import loads_json
from gpuadvisor.knowledge.sanitize import shorten
from gpuadvisor.rules.consultation.result import SCHEMA_VERSION, RecommendResult
from gpuadvisor.tui.report.whyjson import CUT, FormatError, compact, expand

MAX_ERRORS = 10


BUDGET_BYTES = 200_000
"""A consultation's JSON report by default (a lifecycle's: this much a phase). Past it, the rule-outs' chains keep
their first RULED_OUT_DEPTH levels (the veto and what it weighed: the option, its price, the answer it broke); the
deeper steps derive the option's figures as the recommendations' chains do. Where that is still past the budget (a
lifecycle of two phases with 235 rule-outs: 402 KB of 400), each keeps its veto alone (depth 0: 340 KB); why_cut
says which. `full` keeps every step."""
RULED_OUT_DEPTH = 1


def to_json(result: RecommendResult, *, full: bool = False) -> str:
    """The whole consultation; within its budget unless `full` (see BUDGET_BYTES)."""
    text = _write(compact(result.model_dump(mode="json")))
    budget = BUDGET_BYTES * max(1, len(result.phases))
    if full or len(text.encode()) <= budget:
        return text
    for depth in range(RULED_OUT_DEPTH, -1, -1):  # the deepest cut that fits; at depth 0 each rule-out keeps its veto
        doc = compact(cut_ruled_out(result, depth).model_dump(mode="json"))
        doc[CUT] = {"ruled_out": depth}
        text = _write(doc)
        if len(text.encode()) <= budget:
            break
    return text


def cut_ruled_out(result: RecommendResult, depth: int) -> RecommendResult:
    """The result with each rule-out's chain kept to `depth` (its phases' too)."""
    ruled_out = [o.model_copy(update={"why": [s for s in o.why if s.depth <= depth]}) for o in result.ruled_out]
    return result.model_copy(update={"ruled_out": ruled_out,
                                     "phases": [cut_ruled_out(p, depth) for p in result.phases]})


def _write(doc: dict[str, object]) -> str:
    return "{\n" + ",\n".join(f"{_dumps(key)}: {_block(value)}" for key, value in doc.items()) + "\n}\n"


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _block(value: object) -> str:
    """A top-level value: a list or object one entry a line (a chain, a fact, an option each on its own line)."""
    if isinstance(value, list) and value:
        return "[\n" + ",\n".join(_dumps(v) for v in value) + "\n]"
    if isinstance(value, dict) and value:
        return "{\n" + ",\n".join(f"{_dumps(k)}:{_dumps(v)}" for k, v in value.items()) + "\n}"
    return _dumps(value)


def parse_report(text: str, where: str) -> RecommendResult:
    """Validate a JSON report; errors name `where:LINE:COL` for bad JSON or the field path for a bad field."""
    return parse_saved(text, where)[0]


def parse_saved(text: str, where: str) -> tuple[RecommendResult, int | None]:
    """`parse_report`, and the depth its rule-outs' chains were cut to when it was saved within BUDGET_BYTES (None:
    every step kept): what a `--full` re-rendering of it cannot bring back."""
    try:
        doc = loads_json(text, where, finite=True)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None
    if not isinstance(doc, dict) or "recommendations" not in doc or "profile" not in doc:
        raise InputError(f"{where}: not a gpuadvisor JSON report (save one with `gpuadvisor recommend --format json`)")
    _check_magnitudes(doc, where)
    version = doc.get("schema_version", SCHEMA_VERSION)
    if isinstance(version, int) and version > SCHEMA_VERSION:
        raise InputError(f"{where}: schema_version {version} was written by a newer gpuadvisor (this one reads "
                         f"{SCHEMA_VERSION}); upgrade gpuadvisor")
    cut = doc.get(CUT)
    depth = cut.get("ruled_out") if isinstance(cut, dict) else None
    try:
        expanded = expand(doc)
    except FormatError as exc:
        raise InputError(f"{where}: {exc}") from None
    _check_booleans(expanded, where)
    try:
        return RecommendResult.model_validate(expanded), depth if isinstance(depth, int) else None
    except ValidationError as exc:
        raise InputError(describe(exc, where)) from None


def _check_booleans(doc: object, where: str) -> None:
    """Refuse true/false where the report has a number (the report's models are lax: pydantic reads `true` as 1),
    naming each field path (the rule answers, overlays and config.json follow: `bounds.booleans_as_numbers`)."""
    paths = list(itertools.islice(booleans_as_numbers(RecommendResult, doc), MAX_ERRORS + 1))
    if paths:
        said = "true/false where this field holds no boolean (booleans are never numbers)"
        lines = [f"{where}: {shorten(p)}: {said}" for p in paths[:MAX_ERRORS]]
        if len(paths) > MAX_ERRORS:
            lines.append(f"{where}: ... and more booleans where numbers belong")
        raise InputError("\n".join(lines))


def _check_magnitudes(doc: object, where: str) -> None:
    """Refuse a number no report holds (`bounds.MAX_REPORT_NUMBER`), wherever it is: every figure is then safe to
    print and to do arithmetic on (iteratively: the walk cannot overflow the stack)."""
    limit = bound("report_number")
    stack: list[tuple[object, str]] = [(doc, "")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, dict):
            stack.extend((v, f"{path}.{k}" if path else str(k)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, f"{path}.{i}") for i, v in enumerate(value))
        elif isinstance(value, int | float) and not isinstance(value, bool) and not limit.holds(value):
            raise InputError(f"{where}: {shorten(path)}: {value:g} is implausible: a report's figures are at most "
                             f"{limit.high:g}")


def describe(exc: ValidationError, where: str) -> str:
    """One line per problem naming the field path (`recommendations.0.memory.weights: Field required`)."""
    lines = []
    for err in exc.errors()[:MAX_ERRORS]:
        loc = shorten(".".join(str(p) for p in err["loc"]))
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown field (not part of the report schema)"
        lines.append(f"{where}: {loc}: {msg}" if loc else f"{where}: {msg}")
    if exc.error_count() > MAX_ERRORS:
        lines.append(f"{where}: ... and {exc.error_count() - MAX_ERRORS} more problems")
    return "\n".join(lines)


def load_report(path: Path) -> RecommendResult:
    """Read and validate a saved JSON report."""
    return load_saved(path)[0]


def load_saved(path: Path) -> tuple[RecommendResult, int | None]:
    """Read and validate a saved JSON report, with the depth its rule-outs' chains were cut to (`parse_saved`)."""
    return parse_saved(read_text_file(path, what="report file", max_bytes=REPORT_MAX_BYTES), str(path))
