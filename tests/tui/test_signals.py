"""SIGTERM and SIGHUP to the TUI, a real `gpuadvisor` process in a pseudo-terminal: the terminal is restored (line
mode and echo back, the normal screen, mouse reporting off) and the process then ends by the signal, as the sender
asked (issue 31: it used to die at once, leaving the terminal raw, on the alternate screen, reporting the mouse)."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

LEAVE_ALT_SCREEN = b"\x1b[?1049l"
MOUSE_OFF = (b"\x1b[?1000l", b"\x1b[?1003l", b"\x1b[?1006l")
ANSWERS = 'workload = "inference"\n[model]\nname = "llama-3.1-8b"\n'


def _read_until(master: int, out: bytearray, done: object, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not done():  # type: ignore[operator]
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                out += os.read(master, 65536)
            except OSError:  # the child closed its side
                return


class _Terminal:
    """A `gpuadvisor` process on a pseudo-terminal of 100 × 30; either side may be closed early (a lost terminal)."""

    def __init__(self, tmp_path: Path, argv: list[str]) -> None:
        self.master, self.slave = pty.openpty()
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        env = {**os.environ, "TERM": "xterm-256color", "GPUADVISOR_DATA_DIR": str(tmp_path / "data"),
               "GPUADVISOR_CONFIG_DIR": str(tmp_path / "config")}
        self.proc = subprocess.Popen([sys.executable, *argv], stdin=self.slave, stdout=self.slave,
                                     stderr=self.slave, env=env, cwd=tmp_path, start_new_session=True)

    def close_master(self) -> None:
        if self.master >= 0:
            os.close(self.master)
            self.master = -1

    def close_slave(self) -> None:
        if self.slave >= 0:
            os.close(self.slave)
            self.slave = -1


@contextmanager
def _terminal(tmp_path: Path, argv: list[str]) -> Iterator[_Terminal]:
    """The one teardown: a process still running is killed and reaped, and both sides of the terminal are closed."""
    term = _Terminal(tmp_path, argv)
    try:
        yield term
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
            term.proc.wait()
        term.close_master()
        term.close_slave()


def _run_and_signal(tmp_path: Path, signum: int, args: list[str], wait_for: bytes) -> tuple[int, bytes, list[int]]:
    out = bytearray()
    with _terminal(tmp_path, ["-m", "gpuadvisor.tui", *args]) as term:
        _read_until(term.master, out, lambda: wait_for in out, 60)
        assert wait_for in out, bytes(out[-500:])
        assert not termios.tcgetattr(term.slave)[3] & termios.ECHO  # raw while the app runs
        mark = len(out)
        term.proc.send_signal(signum)
        _read_until(term.master, out, lambda: term.proc.poll() is not None, 60)
        _read_until(term.master, out, lambda: False, 0.3)  # what is still in the pty's buffer
        code = term.proc.wait(timeout=60)
        return code, bytes(out[mark:]), termios.tcgetattr(term.slave)


@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP"])
@pytest.mark.parametrize("where", ["welcome", "consulting"])
def test_a_termination_signal_restores_the_terminal(tmp_path: Path, name: str, where: str) -> None:
    signum = getattr(signal, name)
    if where == "welcome":
        args, wait_for = [], b"New consultation"
    else:  # straight at the results: the consultation runs in a worker thread when the signal arrives
        (tmp_path / "a.toml").write_text(ANSWERS, encoding="utf-8")
        args, wait_for = ["--answers", "a.toml"], b"\x1b[?1049h"
    code, tail, attrs = _run_and_signal(tmp_path, signum, args, wait_for)
    assert code == -signum  # ended by the signal, after the clean-up: the shell sees 128 + signum
    assert attrs[3] & termios.ECHO and attrs[3] & termios.ICANON  # line mode and echo are back
    assert LEAVE_ALT_SCREEN in tail and all(seq in tail for seq in MOUSE_OFF)
    said = "terminated (SIGTERM)" if name == "SIGTERM" else "hung up (SIGHUP)"
    assert tail.rstrip().endswith(f"gpuadvisor: {said}".encode())


@pytest.mark.parametrize("moment", [0.0, 0.5, 1.5, "title"])
def test_a_lost_terminal_ends_the_app_at_any_moment_of_its_start(tmp_path: Path, moment: float | str) -> None:
    """Issue 41: the terminal goes away (its master side closed, then SIGHUP, as a closed tmux session does) at any
    moment from the interpreter's start to the first screen: the app always ends, by the signal or with its status
    (129) when the orderly exit cannot finish on a terminal that is gone. 60 s is a hang, not a speed target."""
    with _terminal(tmp_path, ["-m", "gpuadvisor.tui"]) as term:
        term.close_slave()
        if moment == "title":
            out = bytearray()
            _read_until(term.master, out, lambda: b"New consultation" in out, 60)
        else:
            time.sleep(float(moment))
        term.close_master()
        term.proc.send_signal(signal.SIGHUP)
        code = term.proc.wait(timeout=60)
    assert code in (-signal.SIGHUP, 128 + signal.SIGHUP)


HUNG_EXIT = """
import sys
from gpuadvisor.tui import app
app.SHUTDOWN_GRACE_S = 1.0
app.GpuAdvisorApp.exit = lambda self, *a, **k: None  # an exit that never finishes (a terminal that is gone)
from gpuadvisor.tui.cli import main
sys.exit(main([]))
"""


def test_an_exit_that_cannot_finish_is_ended_by_the_watchdog(tmp_path: Path) -> None:
    """The mechanism behind the test above, made certain: whatever keeps the orderly exit from finishing, the process
    ends after the grace period, its terminal's line mode and echo put back, with the status of a SIGHUP."""
    script = tmp_path / "hung.py"
    script.write_text(HUNG_EXIT, encoding="utf-8")
    out = bytearray()
    with _terminal(tmp_path, [str(script)]) as term:
        _read_until(term.master, out, lambda: b"New consultation" in out, 60)
        assert b"New consultation" in out
        term.proc.send_signal(signal.SIGHUP)
        _read_until(term.master, out, lambda: term.proc.poll() is not None, 60)
        code = term.proc.wait(timeout=60)
        lflag = termios.tcgetattr(term.slave)[3]
    assert code == 128 + signal.SIGHUP
    assert lflag & termios.ECHO and lflag & termios.ICANON


@pytest.mark.parametrize("stdin", ["devnull", "closed", "terminal"])
def test_without_a_terminal_the_advisor_says_so_in_one_line(tmp_path: Path, stdin: str) -> None:
    """Issue 41: `gpuadvisor </dev/null >out` ran for ever writing escape sequences into `out`; `gpuadvisor <&-` ended
    in an 89-line traceback. Without a terminal on standard input and output: one line, exit 2, nothing written."""
    out = tmp_path / "out"
    master, slave = pty.openpty()
    source: object = {"devnull": subprocess.DEVNULL, "terminal": slave}.get(stdin)
    with out.open("wb") as sink:
        done = subprocess.run([sys.executable, "-m", "gpuadvisor.tui"], stdin=source,  # type: ignore[arg-type]
                              stdout=sink, stderr=subprocess.PIPE, text=True, timeout=120, cwd=tmp_path,
                              env={**os.environ, "GPUADVISOR_DATA_DIR": str(tmp_path / "data")},
                              preexec_fn=(lambda: os.close(0)) if stdin == "closed" else None, check=False)
    os.close(master)
    os.close(slave)
    assert done.returncode == 2 and out.read_bytes() == b""
    missing = "output" if stdin == "terminal" else "input and output"
    assert done.stderr.startswith(f"gpuadvisor: error: the advisor needs a terminal, and standard {missing} ")
    assert done.stderr.count("\n") == 1
