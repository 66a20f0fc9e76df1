"""Property tests (issue 20): every reader of a file gpuadvisor is given — answers, JSON reports, config.json,
knowledge overlays, rule packs, price catalogs — meets generated hostile input (deep nesting, huge and non-finite
numbers, wrong types, control characters, BOMs, mutilated text) and either reads it or raises an AdvisorError whose
message is bounded. Never another exception: that would be a traceback on the command line.

GPUADVISOR_FUZZ_CASES sets the examples per reader (default 60; CI may raise it).
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuadvisor.knowledge.errors import AdvisorError
from gpuadvisor.knowledge.hf_config import architecture_from_config, read_hf_config
from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.knowledge.price_catalog import parse_catalog
from gpuadvisor.rules.consultation.facts import FACT_SCHEMAS
from gpuadvisor.rules.engine.packs import load_packs
from gpuadvisor.rules.inputs.answers import load_answers
from gpuadvisor.tui.report.jsonfmt import parse_report

CASES = int(os.environ.get("GPUADVISOR_FUZZ_CASES", "60"))
SETTINGS = settings(max_examples=CASES, deadline=None, suppress_health_check=list(HealthCheck))
ROOT = Path(__file__).resolve().parent
SAMPLE_REPORT = json.loads((ROOT / "data" / "sample_result.json").read_text(encoding="utf-8"))
GPT2 = json.loads((ROOT / "data" / "configs" / "gpt2.json").read_text(encoding="utf-8"))
CSV = (ROOT / "data" / "gpuhunt" / "runpod.csv").read_text(encoding="utf-8")
MAX_MESSAGE = 20_000
"""An error message is a few problems of shortened values: far below this even with long paths."""

HOSTILE_TEXT = st.sampled_from(["\x1b]52;c;aGk=\x07", "\x1b[2J", "\x9b31m", "\u202e", "\x00", "[bold]x[/]", "x" * 5000,
                                "\ufeff", "é", "🙂", "\r\n", ""])
NUMBERS = st.one_of(st.integers(min_value=-(10**30), max_value=10**30),
                    st.sampled_from([0, -1, 1e308, -1e308, 1e-308, 2**63, 10**15, 10**9]),
                    st.floats(allow_nan=True, allow_infinity=True))
SCALARS = st.one_of(st.booleans(), NUMBERS, st.text(max_size=20), HOSTILE_TEXT)
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                      st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                      max_leaves=12)


def _nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def _mutate(data: Any, draw: st.DrawFn) -> Any:
    """A real document with one key replaced by a hostile value (or a deeply nested one)."""
    if isinstance(data, dict) and data:
        key = draw(st.sampled_from(sorted(data, key=str)))
        choice = draw(st.integers(0, 3))
        if choice == 0:
            return {**data, key: draw(VALUES)}
        if choice == 1:
            return {**data, key: _nested(draw(st.integers(20, 400)))}  # deeper: _text_mutation
        if choice == 2:
            return {**data, key: _mutate(data[key], draw)}
        return {**data, draw(st.text(max_size=10)): draw(VALUES)}
    if isinstance(data, list) and data:
        i = draw(st.integers(0, len(data) - 1))
        return [*data[:i], _mutate(data[i], draw), *data[i + 1:]]
    return draw(VALUES)


def _text_mutation(text: str, draw: st.DrawFn) -> str:
    """Damage the text itself: a BOM, a control byte, a cut, a deep bracket run."""
    kind = draw(st.integers(0, 4))
    at = draw(st.integers(0, len(text)))
    if kind == 0:
        return "\ufeff" + text
    if kind == 1:
        return text[:at] + draw(HOSTILE_TEXT) + text[at:]
    if kind == 2:
        return text[:at]
    if kind == 3:
        return text[:at] + "[" * draw(st.integers(50, 20_000)) + text[at:]
    return text


def _json(doc: Any) -> str:
    return json.dumps(doc, allow_nan=True, ensure_ascii=False)


def _toml(doc: Any) -> str:
    def plain(value: Any) -> Any:  # TOML has no null, and its table keys must be strings
        if isinstance(value, dict):
            return {str(k): plain(v) for k, v in value.items() if v is not None}
        if isinstance(value, list):
            return [plain(v) for v in value if v is not None]
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**63:
            return float(value)
        return value

    try:
        return tomli_w.dumps(plain(doc) if isinstance(doc, dict) else {"x": plain(doc)})
    except (TypeError, ValueError, RecursionError):
        return "x = 1\n"


@st.composite
def json_documents(draw: st.DrawFn, base: Any) -> str:
    return _text_mutation(_json(_mutate(base, draw)), draw)


@st.composite
def toml_documents(draw: st.DrawFn, base: dict[str, Any]) -> str:
    return _text_mutation(_toml(_mutate(base, draw)), draw)


def _reads_or_explains(read: Any) -> None:
    """The property: a value, or an AdvisorError with a bounded message. Anything else propagates and fails."""
    try:
        read()
    except AdvisorError as exc:
        message = str(exc)
        assert message and len(message) < MAX_MESSAGE, message[:300]


def _file(text: str, name: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="gpuadvisor-prop-"))
    path = folder / name
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return path


ANSWERS = {"workload": "inference", "model": {"name": "gpt2"}, "inference": {"requests_per_minute": 10.0},
           "deployment": {"providers": ["aws"]}, "precision": {"context_tokens": 4096}}


@SETTINGS
@given(toml_documents(ANSWERS))
def test_answers_files(text: str) -> None:
    _reads_or_explains(lambda: load_answers(_file(text, "answers.toml")))


@SETTINGS
@given(json_documents({"answers": ANSWERS, "recommendations": []}))
def test_answers_from_json_reports(text: str) -> None:
    _reads_or_explains(lambda: load_answers(_file(text, "report.json")))


@SETTINGS
@given(json_documents(SAMPLE_REPORT))
def test_json_reports(text: str) -> None:
    _reads_or_explains(lambda: parse_report(text, "report.json"))


@SETTINGS
@given(json_documents(GPT2))
def test_config_json(text: str) -> None:
    _reads_or_explains(lambda: read_hf_config(_file(text, "config.json")))


@SETTINGS
@given(st.dictionaries(st.sampled_from(["model_type", "n_layer", "n_embd", "n_head", "vocab_size", "n_positions",
                                        "sliding_window", "layer_types", "num_local_experts", "expansion_ratio",
                                        "num_key_value_heads", "head_dim", "attn_config", "text_config"]),
                       VALUES, max_size=8))
def test_config_objects_over_a_real_one(changes: dict[str, Any]) -> None:
    _reads_or_explains(lambda: architecture_from_config({**GPT2, **changes}, source="c.json"))


OVERLAY = {"accelerator": [{"id": "nvidia-l4", "name": "L4 overlay",
                            "memory_gb": {"value": 24, "sources": ["doc-002"]}}],
           "model": [{"id": "gpt2", "aliases": ["small"]}]}


@SETTINGS
@given(toml_documents(OVERLAY))
def test_knowledge_overlays(text: str) -> None:
    path = _file(text, "overlay.toml")
    _reads_or_explains(lambda: load_catalog(user_dir=None, extra_files=[path], refreshed=None))


PACK = {"pack": "p", "rule": [{"id": "R1", "title": "t", "when": {"o": {"kind": "option", "gpus": {"gt": 1}}},
                               "then": {"action": "advise", "severity": "info", "message": "{o.title:>20} x"}}]}


@SETTINGS
@given(toml_documents(PACK))
def test_rule_packs(text: str) -> None:
    path = _file(text, "pack.toml")
    _reads_or_explains(lambda: load_packs([path], callbacks={}, fact_schemas=FACT_SCHEMAS))


@st.composite
def catalogs(draw: st.DrawFn) -> bytes:
    lines = CSV.splitlines()
    i = draw(st.integers(1, len(lines) - 1))
    cells = lines[i].split(",")
    j = draw(st.integers(0, len(cells) - 1))
    cells[j] = str(draw(st.one_of(NUMBERS.map(lambda n: repr(n) if isinstance(n, float) else str(n)), HOSTILE_TEXT,
                                  st.text(max_size=30))))
    lines[i] = ",".join(cells)
    text = _text_mutation("\n".join(lines) + "\n", draw)
    return text.encode("utf-8", errors="surrogatepass")


@SETTINGS
@given(catalogs())
def test_price_catalogs(data: bytes) -> None:
    def read() -> None:
        catalog = parse_catalog(data, "runpod", "runpod.csv")
        for row in catalog.rows:
            assert math.isfinite(row.usd_per_hour) and 0 < row.usd_per_hour <= 100_000
            assert row.instance.isprintable() and row.location.isprintable()

    _reads_or_explains(read)
