"""The parse budget (issue 41): every TOML text is measured in linear time before tomllib sees it, and what no real
file holds — a dotted key deeper than the nesting limit, a number of more than 100 digits, more tables, keys or values
than its kind of file may hold, more than an overlay set may hold together — is refused with the file named, the
parser never called. The inputs are small (the budgets are scaled down where a test needs many tables); the figures
at full size are printed by tests/benchmarks/bench_parse_budget.py.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuadvisor.knowledge import budget
from gpuadvisor.knowledge.budget import MAX_DEPTH, MAX_DIGITS, Budget, BudgetError, loads_toml, scan, skeleton
from gpuadvisor.knowledge.errors import AdvisorError
from gpuadvisor.knowledge.loader import load_catalog, validate_knowledge
from gpuadvisor.knowledge.nesting import NestingError, loads_json

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
DOTTED = "a" + ".a" * 100_000 + " = 1\n"
"""The issue's repro: 200 KB, minutes in tomllib; refused here before parsing."""
HUGE_INT = "x = " + "9" * 5_000 + "\n"


@pytest.fixture
def no_parser(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """tomllib.loads made to fail the test if it is reached (every reader calls it through the module)."""
    called: list[str] = []

    def loads(text: str, **kwargs: Any) -> Any:
        called.append(text[:40])
        raise AssertionError("tomllib.loads was called on a text over its budget")

    monkeypatch.setattr(tomllib, "loads", loads)
    return called


# --- the scan never under-counts what the parser builds -------------------------------------------------------------
KEYS = st.text(st.sampled_from('ab.1-_ "=[]{}#\'\\\n'), min_size=1, max_size=6)
STRINGS = st.text(st.sampled_from('ab.=,[]{}#"\'\\\n\t'), max_size=12)
LEAVES = st.one_of(st.integers(-(10**18), 10**18), st.floats(allow_nan=False, allow_infinity=False), st.booleans(),
                   STRINGS)
DOCS = st.recursive(st.dictionaries(KEYS, LEAVES, max_size=4),
                    lambda inner: st.dictionaries(KEYS, st.one_of(inner, st.lists(inner, max_size=3),
                                                                  st.lists(LEAVES, max_size=4)), max_size=4),
                    max_leaves=30)


def _containers_and_leaves(value: Any) -> tuple[int, int]:
    if isinstance(value, dict | list):
        items = value.values() if isinstance(value, dict) else value
        counts = [_containers_and_leaves(v) for v in items]
        return 1 + sum(c for c, _ in counts), sum(n for _, n in counts)
    return 0, 1


def _multiline_strings(doc: dict[str, Any]) -> str:
    """The document again with its strings in TOML's other three kinds (tomli_w writes basic strings only)."""
    lines = []
    for i, (key, value) in enumerate(doc.items()):
        if isinstance(value, str) and "'" not in value and '"""' not in value and "\\" not in value:
            quote = ("'''", '"""', "'")[i % 3] if "\n" not in value or i % 3 != 2 else "'''"
            lines.append(f"{json.dumps(key)} = {quote}{value}{quote}")
    return "\n".join(lines) + "\n"


@SETTINGS
@given(DOCS)
def test_the_scan_counts_at_least_what_the_parser_builds(doc: dict[str, Any]) -> None:
    for text in (tomli_w.dumps(doc), tomli_w.dumps(doc, multiline_strings=True), _multiline_strings(doc)):
        try:
            parsed = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            continue  # tomli_w writes some texts tomllib then refuses (a key like "\n" in a multi-line string)
        shape = scan(text, "x.toml")
        containers, leaves = _containers_and_leaves(parsed)
        assert containers - 1 <= MAX_DEPTH * (shape.tables + shape.keys)  # no root; a dotted key or header: 32 parts
        assert leaves <= shape.values + shape.tables  # an array of n values has n - 1 commas


@SETTINGS
@given(st.sampled_from(['"', "'", '"""', "'''"]), STRINGS, st.integers(MAX_DEPTH + 1, 300))
def test_syntax_inside_strings_and_comments_does_not_count_but_outside_it_does(quote: str, filler: str,
                                                                             parts: int) -> None:
    key = "k" + ".k" * (parts - 1)
    inside = filler.replace("\\", "").replace(quote[0], "").replace("\n", "" if len(quote) == 1 else "\n")
    hidden = f"x = {quote}{inside} {key} = [1, 2] {{a = 1}} {quote} # {key} = 1\n"
    assert tomllib.loads(hidden)["x"].endswith(" = [1, 2] {a = 1} ")
    assert scan(hidden, "x.toml").keys == 1
    line = hidden.count("\n") + 1  # the line after the string, however many lines it spans
    with pytest.raises(BudgetError, match=rf"^x\.toml:{line}: nested more than {MAX_DEPTH} levels deep \(a dotted"):
        scan(hidden + f"{key} = 1\n", "x.toml")


def test_a_string_ended_as_toml_ends_it_cannot_hide_a_key() -> None:
    """Four quotes end a multi-line basic string with one quote inside: a scanner that stopped at the first three
    would take the fourth for a string's start and hide the dotted key after it on the same line."""
    text = 'x = ["""a"""", {' + "a." * 50 + 'a = "v"}]\n'
    assert skeleton('x = """a""""\n') == 'x = ""\n'
    with pytest.raises(BudgetError, match="dotted key"):
        scan(text, "x.toml")


@SETTINGS
@given(st.integers(1, 400), st.sampled_from(["", "-", "+"]), st.booleans())
def test_numbers_are_refused_by_their_digits_before_any_conversion(digits: int, sign: str, underscores: bool) -> None:
    number = sign + "9" * digits
    if underscores and digits > 2:
        number = sign + "9_" * (digits // 2) + "9"
    toml_text, json_text = f"x = {number}\n", f'{{"x": {sign.lstrip("+")}{"9" * digits}}}'
    count = sum(c.isdigit() for c in number)  # underscores between digits do not count
    if count > MAX_DIGITS:
        with pytest.raises(NestingError, match="digits"):
            loads_toml(toml_text, "x.toml")
    else:
        assert loads_toml(toml_text, "x.toml")["x"] == int(number.replace("_", ""))
    if digits > MAX_DIGITS:
        with pytest.raises(NestingError, match=rf"^x\.json:1: a number of {digits:,} digits"):
            loads_json(json_text, "x.json")
    else:
        assert loads_json(json_text, "x.json")["x"] == int(sign.lstrip("+") + "9" * digits)


def test_json_numbers_beyond_a_float_are_refused_where_finite_numbers_are_required() -> None:
    with pytest.raises(NestingError, match=r"^r\.json:2: 1e400 is too large for a number"):
        loads_json('{\n"a": 1e400}', "r.json", finite=True)
    assert loads_json('{"a": 1.5e300}', "r.json", finite=True) == {"a": 1.5e300}


# --- every reader refuses before parsing -----------------------------------------------------------------------------
@pytest.mark.parametrize("text", [DOTTED, HUGE_INT, "[a]\n" * (budget.ANSWERS.tables + 1)],
                         ids=["dotted key", "5,000 digits", "tables"])
def test_answers_files_and_pasted_answers_are_refused_before_parsing(tmp_path: Path, no_parser: list[str],
                                                                    text: str) -> None:
    from gpuadvisor.rules.inputs.answers import load_answers
    from gpuadvisor.tui import served

    path = tmp_path / "a.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(AdvisorError, match=rf"^{path}"):
        load_answers(path)
    with pytest.raises(AdvisorError, match="^pasted answers"):
        served.parse_pasted(text, tmp_path / "scratch")
    assert no_parser == []


@pytest.mark.parametrize("text", [DOTTED, HUGE_INT], ids=["dotted key", "5,000 digits"])
def test_overlays_packs_quotes_and_refreshed_prices_are_refused_before_parsing(
        tmp_path: Path, overlay_dir: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    from gpuadvisor.knowledge.quotes import read_quotes
    from gpuadvisor.rules.consultation.facts import FACT_SCHEMAS
    from gpuadvisor.rules.engine.packs import load_packs

    real, parsed = tomllib.loads, []
    monkeypatch.setattr(tomllib, "loads", lambda t, **k: parsed.append(t) or real(t, **k))  # the shipped files parse
    overlay = overlay_dir / "o.toml"
    overlay.write_text(text, encoding="utf-8")
    with pytest.raises(AdvisorError, match=rf"^{overlay}:1: "):
        load_catalog()
    report = validate_knowledge()
    assert len(report.errors) == 1 and report.errors[0].startswith(f"{overlay}:1: ")
    overlay.unlink()
    refreshed = tmp_path / "refreshed.toml"
    refreshed.write_text(text, encoding="utf-8")
    with pytest.raises(AdvisorError, match=rf"^{refreshed}:1: .*\(written by `gpuadvisor kb refresh`"):
        load_catalog(refreshed=refreshed)
    with pytest.raises(AdvisorError, match=rf"^{refreshed}:1: "):
        read_quotes(refreshed)
    pack = tmp_path / "p.toml"
    pack.write_text(text, encoding="utf-8")
    with pytest.raises(AdvisorError) as caught:
        load_packs([pack], callbacks={}, fact_schemas=FACT_SCHEMAS)
    assert str(pack) in str(caught.value)
    assert text not in parsed


def test_the_overlay_files_together_are_held_to_one_budget(overlay_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Four files, each within a knowledge file's budget, summed over the set's: the file that takes the set over
    it is refused, named, before it is parsed (the budget is scaled down: 50 tables rather than 200,000; each file
    holds 15: a header of two brackets, an array of 12 arrays)."""
    load_catalog(user_dir=None)
    real, parsed = tomllib.loads, []
    monkeypatch.setattr(tomllib, "loads", lambda t, **k: parsed.append(t) or real(t, **k))
    monkeypatch.setattr(budget, "OVERLAY_SET", Budget("the overlay files together", tables=50, keys=10**6,
                                                      values=10**6))
    texts = [f"# file {i}\n[[source]]\nid = 's{i}'\ntitle = 't'\nkind = 'k'\nx = [" + "[], " * 12 + "]\n"
             for i in range(4)]
    for i, text in enumerate(texts):
        (overlay_dir / f"o{i}.toml").write_text(text, encoding="utf-8")
    with pytest.raises(AdvisorError, match=r"o3\.toml \(with the overlay files before it\): 60 tables and arrays, "
                                           r"over the 50 the overlay files together may hold"):
        load_catalog(user_dir=overlay_dir, refreshed=None)
    assert texts[3] not in parsed


def test_budgets_leave_every_shipped_file_and_example_far_inside() -> None:
    root = Path(__file__).resolve().parents[2]
    for folder, limit in ((root / "knowledge" / "data", budget.KNOWLEDGE), (root / "rules" / "packs", budget.PACK),
                          (root / "examples", budget.ANSWERS)):
        for path in sorted(folder.glob("*.toml")):
            shape = scan(path.read_text(encoding="utf-8"), str(path))
            assert shape.tables * 10 < limit.tables and shape.keys * 10 < limit.keys, (path, shape)
