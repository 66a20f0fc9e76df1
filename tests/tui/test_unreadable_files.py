"""Every reader refuses a FIFO, /dev/zero, a directory, an oversized file, binary bytes and a dangling symlink with a
message naming the file and the reason — from Python, from the command line (exit 2, no traceback) and in the TUI."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Static

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.errors import AdvisorError
from gpuadvisor.knowledge.files import (
    ANSWERS_MAX_BYTES,
    CONFIG_MAX_BYTES,
    KNOWLEDGE_MAX_BYTES,
    PACK_MAX_BYTES,
    REPORT_MAX_BYTES,
    STATE_MAX_BYTES,
)
from gpuadvisor.knowledge.hf_config import read_hf_config
from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.knowledge.parsecache import _path as cache_path
from gpuadvisor.knowledge.parsecache import parse_toml
from gpuadvisor.rules.engine.packs import load_packs
from gpuadvisor.rules.inputs.answers import load_answers
from gpuadvisor.tui import settings
from gpuadvisor.tui.cli import main
from gpuadvisor.tui.report.jsonfmt import load_report
from gpuadvisor.tui.screens.open_answers import OpenAnswersScreen
from tests.badfiles import BAD_KINDS, make_bad_file, reason

from .conftest import make_app, settle

# reader, what its messages call the file, its cap, the file name it is given
READERS: dict[str, tuple[Callable[[Path], object], str, int, str]] = {
    "answers": (load_answers, "answers file", ANSWERS_MAX_BYTES, "answers.toml"),
    "answers-json": (load_answers, "answers file", ANSWERS_MAX_BYTES, "report.json"),
    "config.json": (read_hf_config, "config.json file", CONFIG_MAX_BYTES, "config.json"),
    "overlay": (lambda p: load_catalog(user_dir=None, extra_files=[p]), "overlay file", KNOWLEDGE_MAX_BYTES,
                "overlay.toml"),
    "rule pack": (lambda p: load_packs([p], callbacks={}, fact_schemas={}), "rule pack", PACK_MAX_BYTES, "pack.toml"),
    "report": (load_report, "report file", REPORT_MAX_BYTES, "report.json"),
}


def _bad(tmp_path: Path, kind: str, max_bytes: int, name: str) -> tuple[Path, Path]:
    """The path to pass, and the path the message must name (a config.json in a checkpoint directory)."""
    if name == "config.json" and kind == "directory":  # a directory is a checkpoint: its config.json is read
        checkpoint = tmp_path / "checkpoint"
        checkpoint.mkdir()
        return checkpoint, make_bad_file(checkpoint, kind, max_bytes=max_bytes, name=name)
    path = make_bad_file(tmp_path, kind, max_bytes=max_bytes, name=name)
    return path, path


@pytest.mark.parametrize("kind", BAD_KINDS)
@pytest.mark.parametrize("reader", list(READERS))
def test_each_reader_refuses_each_bad_file(tmp_path: Path, reader: str, kind: str) -> None:
    read, what, cap, name = READERS[reader]
    given, named = _bad(tmp_path, kind, cap, name)
    with pytest.raises(AdvisorError) as info:
        read(given)
    assert str(info.value) == f"{named}: {reason(kind, what=what, max_bytes=cap)}"
    assert info.value.exit_code == 2


@pytest.mark.parametrize("kind", BAD_KINDS)
@pytest.mark.parametrize(("argv", "what", "cap", "name", "prefix"), [
    (["recommend", "--answers"], "answers file", ANSWERS_MAX_BYTES, "answers.toml", ""),
    (["recommend", "--answers"], "answers file", ANSWERS_MAX_BYTES, "report.json", ""),
    (["report", "--format", "md", "--from"], "report file", REPORT_MAX_BYTES, "report.json", ""),
    (["estimate", "--gpu", "RTX 4090", "--model-config"], "config.json file", CONFIG_MAX_BYTES, "config.json",
     "--model-config: "),
    (["--answers"], "answers file", ANSWERS_MAX_BYTES, "answers.toml", ""),  # the TUI refuses before it starts
])
def test_command_line_exits_2_naming_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str,
                                              argv: list[str], what: str, cap: int, name: str, prefix: str) -> None:
    given, named = _bad(tmp_path, kind, cap, name)
    code = main([*argv, str(given)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == f"gpuadvisor: error: {prefix}{named}: {reason(kind, what=what, max_bytes=cap)}\n"


@pytest.mark.parametrize("kind", BAD_KINDS)
def test_answers_naming_a_bad_config_json(tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str) -> None:
    given, named = _bad(tmp_path, kind, CONFIG_MAX_BYTES, "config.json")
    answers = tmp_path / "answers.toml"
    answers.write_text(f"[model]\nconfig = {json.dumps(str(given))}\n", encoding="utf-8")
    assert main(["recommend", "--answers", str(answers)]) == 2
    err = capsys.readouterr().err
    assert f"{named}: {reason(kind, what='config.json file', max_bytes=CONFIG_MAX_BYTES)}" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("kind", ["fifo", "char-device", "directory", "oversized", "binary"])
def test_user_overlays_and_rule_packs_in_the_config_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        kind: str) -> None:
    """A bad *.toml among the user's overlays or rule packs stops `recommend` with exit 2 (a dangling symlink is also
    refused, but only names passed explicitly can be dangling here: glob lists it, the reader says 'no such')."""
    config = Path(os.environ["GPUADVISOR_CONFIG_DIR"])
    for sub, what, cap in (("knowledge", "overlay file", KNOWLEDGE_MAX_BYTES), ("rules", "rule pack", PACK_MAX_BYTES)):
        folder = config / sub
        folder.mkdir(parents=True)
        path = make_bad_file(folder, kind, max_bytes=cap, name="mine.toml")
        if kind == "char-device":  # a device node cannot be made without root: link to /dev/zero
            path = folder / "mine.toml"
            path.symlink_to("/dev/zero")
        assert main(["recommend", "--model", "gpt2"]) == 2
        err = capsys.readouterr().err
        assert err == f"gpuadvisor: error: {path}: {reason(kind, what=what, max_bytes=cap)}\n"
        path.rmdir() if path.is_dir() and not path.is_symlink() else path.unlink()


def test_kb_validate_lists_every_bad_overlay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = [make_bad_file(tmp_path, kind, max_bytes=KNOWLEDGE_MAX_BYTES, name=f"{kind}.toml") for kind in BAD_KINDS]
    assert main(["kb", "validate", *map(str, paths)]) == 2
    out = capsys.readouterr().out.splitlines()
    for kind, path in zip(BAD_KINDS, paths, strict=True):
        assert f"{path}: {reason(kind, what='overlay file', max_bytes=KNOWLEDGE_MAX_BYTES)}" in out


def test_tui_state_and_parse_cache_shrug_off_a_fifo(tmp_path: Path) -> None:
    state = settings.data_dir() / "tui.json"
    state.parent.mkdir(parents=True, exist_ok=True)
    make_bad_file(state.parent, "fifo", max_bytes=STATE_MAX_BYTES, name=state.name)
    assert settings.load_recent() == []  # a damaged state file is ignored, as before
    cached = cache_path("0" * 64)
    cached.parent.mkdir(parents=True, exist_ok=True)
    make_bad_file(cached.parent, "fifo", max_bytes=1, name=cached.name)
    assert parse_toml("a = 1\n", "0" * 64, use_cache=True) == {"a": 1}  # a cache miss, not a hang


async def test_open_answers_dialog_names_each_bad_file(catalog: Catalog, tmp_path: Path) -> None:
    app = make_app(catalog)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await pilot.press("o")
        assert isinstance(app.screen, OpenAnswersScreen)
        field = app.screen.query_one("#open-path")
        for kind in BAD_KINDS:
            path = make_bad_file(tmp_path, kind, max_bytes=ANSWERS_MAX_BYTES, name=f"{kind}.toml")
            field.value = str(path)  # type: ignore[attr-defined]
            await pilot.press("enter")
            await settle(pilot)
            error = str(app.screen.query_one("#open-error", Static).render())
            assert error == f"✖ {path}: {reason(kind, what='answers file', max_bytes=ANSWERS_MAX_BYTES)}", kind
            assert isinstance(app.screen, OpenAnswersScreen)
