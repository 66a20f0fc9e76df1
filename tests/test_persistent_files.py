"""Issue 41: every file gpuadvisor keeps for the user (the prices `kb refresh` fetched, the quotes `kb quote add`
keeps, the recent consultations and theme, the questionnaire's draft) is never fatal when it is corrupt, truncated,
duplicated or hostile, or when something that is not a regular file (a directory, a FIFO) sits in its place: it is
read or skipped, and when it is skipped one line on standard error names the file (and the line, where there is
one) and the program goes on with what it would have without it (the built-in prices, no quotes applied, no recent
list, no draft). One property over all of them, one mechanism (`statefile.read_state` / `statefile.skipped`, and
the loader's trial merge of the refreshed prices and the quotes). `kb quote add` still refuses to rewrite a quotes
file it cannot read (that would lose the quotes in it), and `kb validate` lists every problem of both.

GPUADVISOR_FUZZ_CASES sets the generated examples per file (default 25: each loads the catalog once).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuadvisor.knowledge import statefile
from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.knowledge.paths import overlay_dir, refreshed_prices_path
from gpuadvisor.knowledge.quotes import QUOTES_FILE
from gpuadvisor.tui import draft
from gpuadvisor.tui import settings as tui_settings
from gpuadvisor.tui.cli import main

CASES = int(os.environ.get("GPUADVISOR_FUZZ_CASES", "25"))
SETTINGS = settings(max_examples=CASES, deadline=None, suppress_health_check=list(HealthCheck))
CATALOGS = Path(__file__).resolve().parent / "data" / "gpuhunt"
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@dataclass(frozen=True)
class Kept:
    """A persistent file: where it is, how the program reads it, and whether what it read is the fallback."""

    name: str
    path: Callable[[], Path]
    read: Callable[[], object]
    is_fallback: Callable[[object], bool]
    syntax: str  # "toml" or "json": what a duplicated key means


def _catalog_without_refresh(catalog: object) -> bool:
    return getattr(catalog, "refresh", "?") is None and not getattr(catalog, "refreshed", {"x": 1})


FILES = [
    Kept("refreshed prices", refreshed_prices_path, lambda: load_catalog(), _catalog_without_refresh, "toml"),
    Kept("quotes", lambda: overlay_dir() / QUOTES_FILE, lambda: load_catalog(),
         lambda catalog: not getattr(catalog, "quotes", True), "toml"),
    Kept("recent and theme", lambda: tui_settings.data_dir() / "tui.json",
         lambda: (tui_settings.load_recent(), tui_settings.load_theme()), lambda got: got == ([], None), "json"),
    Kept("draft", draft.draft_path, draft.load_draft, lambda got: got is None, "json"),
]
IDS = [f.name for f in FILES]


DIRS = (("GPUADVISOR_DATA_DIR", "data"), ("GPUADVISOR_CONFIG_DIR", "config"), ("GPUADVISOR_CACHE_DIR", "cache"))


@pytest.fixture(autouse=True)
def _in_home(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every test in the one scratch home (conftest gives each test a config directory of its own), which it leaves
    with every file good again."""
    for var, sub in DIRS:
        monkeypatch.setenv(var, str(home / sub))
    yield
    for kept in FILES:
        _put(kept, _good(kept))


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One scratch home with a real file of each kind (a refresh of the recorded catalogs, a consultation listed as
    recent with a theme, a draft), kept as `*.good` beside each."""
    root = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as mp:
        for var, sub in DIRS:
            mp.setenv(var, str(root / sub))
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["kb", "refresh", "--from", str(CATALOGS)]) == 0
            assert main(["kb", "quote", "add", "--vendor", "Acme", "--accelerator", "nvidia-h100-sxm5", "--usd",
                         "20000", "--date", "2026-11-20", "--valid-until", "2099-01-01"]) == 0
        tui_settings.record_consultation('workload = "inference"\n[model]\nname = "llama-3.1-8b"\n', "8B serving")
        tui_settings.save_theme("textual-light")
        assert draft.save_draft({"workload": "inference", "model": "llama-3.1-8b"})
        for kept in FILES:
            shutil.copyfile(kept.path(), kept.path().with_name(kept.path().name + ".good"))
        yield root


def _good(kept: Kept) -> bytes:
    return kept.path().with_name(kept.path().name + ".good").read_bytes()


def _put(kept: Kept, content: bytes | str) -> None:
    """`content` in the file's place: bytes, or "directory" / "fifo"."""
    path = kept.path()
    if path.is_dir() and not path.is_symlink():
        path.rmdir()
    elif os.path.lexists(path):
        path.unlink()
    if content == "directory":
        path.mkdir()
    elif content == "fifo":
        os.mkfifo(path)
    else:
        assert isinstance(content, bytes)
        path.write_bytes(content)


def _read(kept: Kept) -> tuple[object, list[str]]:
    """What the program reads, and the warning lines it printed (each file's warning is said once a process: the
    memory of what was said is cleared so that every example is judged on its own)."""
    statefile._WARNED.clear()
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        got = kept.read()
    return got, err.getvalue().splitlines()


def _check_skipped(kept: Kept, got: object, lines: list[str]) -> None:
    assert kept.is_fallback(got), got
    assert len(lines) == 1, lines
    line = lines[0]
    assert line.startswith(f"gpuadvisor: warning: {kept.path()}") and "skipped:" in line
    assert not CONTROL.search(line) and len(line) < 2_000


def _check_read_or_skipped(kept: Kept, got: object, lines: list[str]) -> None:
    """Either the file was read (no word said) or it was skipped as above: never an exception, never a half-read."""
    if lines:
        _check_skipped(kept, got, lines)


@pytest.mark.parametrize("kept", FILES, ids=IDS)
def test_a_good_file_is_read_without_a_word(home: Path, kept: Kept) -> None:
    _put(kept, _good(kept))
    got, lines = _read(kept)
    assert lines == [] and not kept.is_fallback(got)


@pytest.mark.parametrize("kept", FILES, ids=IDS)
@pytest.mark.parametrize("what", ["directory", "fifo"])
def test_something_not_a_file_in_its_place_is_skipped(home: Path, kept: Kept, what: str) -> None:
    """A FIFO is never opened (that would wait for a writer for ever)."""
    _put(kept, what)
    try:
        got, lines = _read(kept)
        _check_skipped(kept, got, lines)
        assert "not a regular file" in lines[0]
    finally:
        _put(kept, _good(kept))


@pytest.mark.parametrize("kept", FILES, ids=IDS)
def test_a_duplicated_key_is_skipped_or_read_as_its_syntax_says(home: Path, kept: Kept) -> None:
    """TOML forbids a key twice (the file is skipped, its line named); JSON takes the last (the file is read)."""
    text = _good(kept).decode()
    if kept.syntax == "toml":
        lines_of = text.splitlines(keepends=True)
        at = next(i for i, line in enumerate(lines_of) if line.startswith("id = "))
        _put(kept, "".join([*lines_of[:at + 1], lines_of[at], *lines_of[at + 1:]]).encode())
        got, lines = _read(kept)
        _check_skipped(kept, got, lines)
        assert f"{kept.path()}:{at + 2}:" in lines[0]  # the second of the two, by its line
    else:
        _put(kept, text.replace("{", '{"x": 1, "x": 2, ', 1).encode())
        got, lines = _read(kept)
        assert lines == [] and not kept.is_fallback(got)


@pytest.mark.parametrize("kept", [f for f in FILES if f.syntax == "json"], ids=lambda f: f.name)
def test_a_cut_json_file_is_named_by_line_and_column(home: Path, kept: Kept) -> None:
    good = _good(kept)
    _put(kept, good[:len(good) // 2])
    got, lines = _read(kept)
    _check_skipped(kept, got, lines)
    assert re.match(rf"gpuadvisor: warning: {re.escape(str(kept.path()))}:\d+:\d+: not valid JSON: ", lines[0])


@pytest.mark.parametrize("kept", FILES, ids=IDS)
@SETTINGS
@given(data=st.data())
def test_a_corrupt_file_is_never_fatal(home: Path, kept: Kept, data: st.DataObject) -> None:
    """Random bytes, the real file cut anywhere, or the real file with bytes flipped: read or skipped, never more."""
    good = _good(kept)
    how = data.draw(st.sampled_from(["random", "truncated", "flipped"]))
    if how == "random":
        content = data.draw(st.binary(max_size=400))
    elif how == "truncated":
        content = good[:data.draw(st.integers(0, len(good) - 1))]
    else:
        content = bytearray(good)
        for _ in range(data.draw(st.integers(1, 4))):
            content[data.draw(st.integers(0, len(good) - 1))] = data.draw(st.integers(0, 255))
        content = bytes(content)
    _put(kept, content)
    try:
        got, lines = _read(kept)
        _check_read_or_skipped(kept, got, lines)
        if b"\xff" in content:
            _check_skipped(kept, got, lines)  # never UTF-8: never a file it can read
    finally:
        _put(kept, good)


HOSTILE = {
    "a 100,000-part dotted key": "a" + ".a" * 100_000 + " = 1\n",
    "a 5,000-digit integer": "[refresh]\norigin = " + "9" * 5_000 + "\n",
    "10,000 nested arrays": "x = " + "[" * 10_000 + "]" * 10_000 + "\n",
    "a price of true": "[[instance]]\nid = \"aws-p5.48xlarge\"\n[[instance.price]]\ntype = \"on-demand\"\n"
                       "usd_per_hour = true\n",
    "catalogs that are not a list": "[refresh]\ncatalogs = 5\n",
}


@pytest.mark.parametrize("text", list(HOSTILE.values()), ids=list(HOSTILE))
def test_a_hostile_refreshed_prices_file_is_skipped_before_it_costs_anything(home: Path, text: str) -> None:
    """Past the parse budget, past Python's integer limit, past the nesting limit, a wrong type: the built-in prices,
    with one line (a file holding only metadata is read: it names no price)."""
    kept = FILES[0]
    _put(kept, text.encode())
    try:
        got, lines = _read(kept)
        if "catalogs" in text:
            assert lines == [] and got.refresh is not None and got.refresh.catalogs == ()  # type: ignore[attr-defined]
        else:
            _check_skipped(kept, got, lines)
    finally:
        _put(kept, _good(kept))
