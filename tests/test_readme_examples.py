"""The README's worked examples are what the program prints today: each `$ gpuadvisor recommend …` block is run and
its lines must appear in the output, in order ("..." marks lines left out; the date and knowledge-base version line
changes every day and every data edit, so it is skipped). A stale example fails here, not in a reader's terminal."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from gpuadvisor.tui.cli import main

ROOT = Path(__file__).resolve().parents[1]
DATED = re.compile(r"^\d{4}-\d{2}-\d{2} · gpuadvisor ")


def _examples() -> list[tuple[str, list[str]]]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"```text\n(.*?)\n```", readme, flags=re.S):
        first, *lines = block.split("\n")
        if first.startswith("$ gpuadvisor recommend ") and "|" not in first:
            out.append((first.removeprefix("$ gpuadvisor "), lines))
    return out


EXAMPLES = _examples()


def test_the_readme_has_worked_examples() -> None:
    assert len(EXAMPLES) >= 2


@pytest.mark.parametrize(("command", "shown"), EXAMPLES, ids=[c.split(" --")[1] for c, _ in EXAMPLES])
def test_a_readme_example_is_todays_output(command: str, shown: list[str], capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GPUADVISOR_CONFIG_DIR", str(tmp_path))  # no user overlay or quote changes the figures
    monkeypatch.delenv("COLUMNS", raising=False)
    main(shlex.split(command))
    printed = capsys.readouterr().out.splitlines()
    at = 0
    for line in shown:
        if line == "..." or DATED.match(line):
            continue
        assert line in printed[at:], f"README line not printed (in order) by `gpuadvisor {command}`:\n{line}"
        at = printed.index(line, at) + 1
