"""One-shot commands run without the cycle collector; the TUI and `serve` keep it (tui/cli.py, docs/performance.md)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from gpuadvisor.tui import cli


@pytest.fixture
def collector() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


@pytest.mark.parametrize("command", ["estimate", "recommend", "report", "kb", "schema"])
def test_one_shot_commands_turn_the_collector_off(collector: None, command: str) -> None:
    cli._collect_cycles_only_if_long_running(command)
    assert not gc.isenabled()


@pytest.mark.parametrize("command", [None, "serve"])
def test_the_tui_and_serve_keep_it(collector: None, command: str | None) -> None:
    cli._collect_cycles_only_if_long_running(command)
    assert gc.isenabled()


def test_every_subcommand_is_either_one_shot_or_long_running() -> None:
    """A new subcommand must be placed: LONG_RUNNING names only real subcommands."""
    assert cli.LONG_RUNNING <= set(cli.SUBCOMMANDS)


def test_main_called_in_process_leaves_the_collector_alone(collector: None, capsys: pytest.CaptureFixture[str]) -> None:
    """Tests (and embedders) call main(argv): only the real process (argv None) turns it off."""
    assert cli.main(["schema", "answers"]) == 0
    assert gc.isenabled()
