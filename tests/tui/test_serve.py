"""`gpuadvisor serve`: the app as a web page, loaded in headless Chromium (the page, its terminal, the app's first
screen arriving in it). Everything stays on this machine (127.0.0.1)."""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpuadvisor.tui.cli import build_parser
from gpuadvisor.tui.commands.serve import app_command
from tests.browser import NO_BROWSER, browser, open_page

CAPTURE = """
(() => {
  window.__seen = "";
  const Native = window.WebSocket;
  function Watched(url, protocols) {
    const ws = protocols === undefined ? new Native(url) : new Native(url, protocols);
    ws.addEventListener("message", (e) => {
      const d = e.data;
      if (typeof d === "string") window.__seen += d;
      else if (d instanceof ArrayBuffer) window.__seen += new TextDecoder().decode(d);
      else if (d && d.text) d.text().then((t) => { window.__seen += t; });
    });
    return ws;
  }
  Watched.prototype = Native.prototype;
  Object.assign(Watched, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
  window.WebSocket = Watched;
})();
"""
"""Keeps what the server sends the page's terminal (xterm.js paints a canvas, so the text is not in the DOM)."""
ESCAPES = re.compile(r"\x1b(?:\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")


def test_the_command_each_session_runs() -> None:
    args = build_parser().parse_args(["serve", "--port", "8123", "--answers", "plan.toml"])
    assert (args.command, args.port, args.serve_answers, args.host) == ("serve", 8123, "plan.toml", "localhost")
    command = shlex.split(app_command("plan.toml", "textual-light", "/srv/shared"))
    assert command[:4] == [sys.executable, "-m", "gpuadvisor.tui", "--served"]  # a browser app, not a shell
    assert command[4:6] == ["--served-data-dir", "/srv/shared"]
    assert command[6] == "--answers" and Path(command[7]).is_absolute() and command[7].endswith("plan.toml")
    assert command[8:] == ["--theme", "textual-light"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"gpuadvisor serve exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError("gpuadvisor serve did not listen")


@pytest.mark.skipif(browser() is None, reason=NO_BROWSER)
def test_the_app_opens_in_a_browser(tmp_path: Path) -> None:
    port = _free_port()
    env = {**os.environ, "GPUADVISOR_DATA_DIR": str(tmp_path / "data"),
           "GPUADVISOR_CONFIG_DIR": str(tmp_path / "config")}
    server = subprocess.Popen([sys.executable, "-m", "gpuadvisor.tui", "serve", "--host", "127.0.0.1",
                               "--port", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        _wait_for_port(port, server)
        seen, page_ok, shot = asyncio.run(_load(port, tmp_path))
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # the server and the app process it started for the page
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
    assert page_ok == {"title": "gpuadvisor", "terminal": True}  # textual-serve's page names the app
    text = ESCAPES.sub("", seen)
    assert "gpuadvisor" in text and "Which GPUs should you buy or rent?" in text  # the welcome screen
    assert "New consultation (n)" in text
    assert shot.stat().st_size > 10_000  # a painted page, kept next to the test's files for a look


async def _load(port: int, tmp_path: Path) -> tuple[str, dict[str, object], Path]:
    executable = browser()
    assert executable is not None
    profile = tmp_path / "chromium"
    profile.mkdir()
    async with open_page(executable, profile) as page:
        await page.call("Page.addScriptToEvaluateOnNewDocument", source=CAPTURE)
        await page.call("Page.navigate", url=f"http://127.0.0.1:{port}/")
        await page.wait_for("document.readyState === 'complete'")
        page_ok = await page.evaluate(
            "({title: document.querySelector('.intro-dialog .intro').innerText.trim(), "
            "terminal: !!document.querySelector('.textual-terminal .xterm-screen')})")
        seen = await page.wait_for("window.__seen && window.__seen.includes('New consultation') && window.__seen",
                                   timeout=60)
        await asyncio.sleep(1)
        shot = await page.screenshot(tmp_path / "serve.png")
    return str(seen or ""), page_ok, shot
