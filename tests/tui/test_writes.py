"""Writes only where meant (issue 41): a report or answers file replaces a regular file and nothing else — a device,
a named pipe, a socket or a symbolic link is refused with or without --force, untouched, and the refusal never
suggests --force; `-` is standard output; everything saved passes the one sanitiser. The files gpuadvisor keeps
(quotes, recent consultations, settings) are changed under a lock, so concurrent writers all keep their change, and
a damaged one is never fatal.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuadvisor.tui.report.atomic import NotARegularFileError, save_report

CONTROLS = st.sampled_from(["\x1b", "\x9b", "\x07", "\u202e", "\u202a", "\u2066", "\u2069", "\u200e", "\u200f",
                            "\u061c", "\x00", "\x85", "\u2028"])


def _special(tmp_path: Path, kind: str) -> Path:
    path = tmp_path / f"{kind}.md"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        server.close()
    elif kind == "device":
        return Path("/dev/null")
    elif kind == "link to a device":
        path.symlink_to("/dev/null")
    elif kind == "link to a file":
        (tmp_path / "real.md").write_text("kept\n", encoding="utf-8")
        path.symlink_to(tmp_path / "real.md")
    elif kind == "dangling link":
        path.symlink_to(tmp_path / "nowhere.md")
    return path


@pytest.mark.parametrize("kind", ["fifo", "socket", "device", "link to a device", "link to a file", "dangling link"])
@pytest.mark.parametrize("force", [False, True])
def test_only_a_regular_file_is_ever_replaced(tmp_path: Path, kind: str, force: bool) -> None:
    path = _special(tmp_path, kind)
    before = os.lstat(path)
    with pytest.raises(NotARegularFileError) as caught:
        save_report("report\n", path, force=force)
    message = str(caught.value)
    assert message.startswith(f"{path}: is ") and "not a regular file" in message and "--force" not in message
    assert caught.value.exit_code == 2
    after = os.lstat(path)
    assert (after.st_mode, after.st_ino, after.st_size) == (before.st_mode, before.st_ino, before.st_size)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []


def test_the_command_line_refuses_dev_stdout_and_writes_dash_to_standard_output(tmp_path: Path) -> None:
    sample = Path(__file__).resolve().parents[1] / "data" / "sample_result.json"
    base = [sys.executable, "-m", "gpuadvisor.tui", "report", "--from", str(sample), "--format", "md"]
    refused = subprocess.run([*base, "--output", "/dev/stdout", "--force"], capture_output=True, text=True,
                             cwd=tmp_path, timeout=120, check=False)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.startswith("gpuadvisor: error: /dev/stdout: is a symbolic link, not a regular file")
    assert os.path.islink("/dev/stdout")
    dash = subprocess.run([*base, "--output", "-"], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          check=False)
    assert dash.returncode == 0 and dash.stdout.startswith("# GPU recommendation") and list(tmp_path.iterdir()) == []


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.one_of(CONTROLS, st.text(max_size=5)), min_size=1, max_size=12).map("".join))
def test_whatever_is_saved_passes_the_one_sanitiser(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    path = save_report(f"# {text}\n{json.dumps(text, ensure_ascii=False)}\n", tmp_path_factory.mktemp("s") / "r.md")
    saved = path.read_text(encoding="utf-8")
    assert all(ch.isprintable() or ch in "\n\t" for ch in saved), repr(saved)  # layout kept, controls gone


def test_ten_quote_writers_at_once_keep_ten_quotes(tmp_path: Path) -> None:
    env = {**os.environ, "GPUADVISOR_CONFIG_DIR": str(tmp_path / "config"), "GPUADVISOR_CACHE_DIR": str(tmp_path)}
    procs = [subprocess.Popen([sys.executable, "-m", "gpuadvisor.tui", "kb", "quote", "add", "--vendor", f"V{i}",
                               "--accelerator", "nvidia-l4", "--usd", "2000", "--valid-days", "30"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for i in range(10)]
    errors = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * 10, errors
    from gpuadvisor.knowledge.quotes import read_quotes

    rows = read_quotes(tmp_path / "config" / "knowledge" / "quotes.toml")
    assert sorted(r["vendor"] for r in rows) == sorted(f"V{i}" for i in range(10))


def test_concurrent_recent_lists_keep_every_consultation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuadvisor.tui import settings as state

    monkeypatch.setenv("GPUADVISOR_DATA_DIR", str(tmp_path / "data"))
    files = []
    for i in range(state.MAX_RECENT):
        files.append(tmp_path / f"a{i}.toml")
        files[-1].write_text("", encoding="utf-8")
    threads = [threading.Thread(target=state.remember, args=(f, f"consultation {i}")) for i, f in enumerate(files)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r.title for r in state.load_recent()) == sorted(f"consultation {i}" for i in range(len(files)))


@pytest.mark.parametrize("content", [b"\x00\xff garbage", b'{"recent": [{"path": 5}], "theme": ["x"]}',
                                     b'{"recent": ' + b"[" * 5000 + b"]" * 5000 + b"}", b'{"recent": 1e400}',
                                     b'{"recent": [], "recent": [1]}', b"9" * 5000])
def test_damaged_state_is_never_fatal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: bytes) -> None:
    from gpuadvisor.tui import settings as state

    monkeypatch.setenv("GPUADVISOR_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "tui.json").write_bytes(content)
    assert state.load_recent() == [] and state.load_theme() is None
    answers = tmp_path / "a.toml"
    answers.write_text("", encoding="utf-8")
    state.remember(answers, "kept")
    state.save_theme("textual-light")
    assert [r.title for r in state.load_recent()] == ["kept"] and state.load_theme() == "textual-light"
