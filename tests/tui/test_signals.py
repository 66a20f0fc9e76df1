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


def _run_and_signal(tmp_path: Path, signum: int, args: list[str], wait_for: bytes) -> tuple[int, bytes, list[int]]:
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    env = {**os.environ, "TERM": "xterm-256color", "GPUADVISOR_DATA_DIR": str(tmp_path / "data"),
           "GPUADVISOR_CONFIG_DIR": str(tmp_path / "config")}
    proc = subprocess.Popen([sys.executable, "-m", "gpuadvisor.tui", *args], stdin=slave, stdout=slave,
                            stderr=slave, env=env, cwd=tmp_path, start_new_session=True)
    out = bytearray()
    try:
        _read_until(master, out, lambda: wait_for in out, 60)
        assert wait_for in out, bytes(out[-500:])
        assert not termios.tcgetattr(slave)[3] & termios.ECHO  # raw while the app runs
        mark = len(out)
        proc.send_signal(signum)
        _read_until(master, out, lambda: proc.poll() is not None, 60)
        _read_until(master, out, lambda: False, 0.3)  # what is still in the pty's buffer
        code = proc.wait(timeout=60)
        return code, bytes(out[mark:]), termios.tcgetattr(slave)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
        os.close(slave)


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
