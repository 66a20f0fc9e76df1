"""`gpuadvisor serve` on a LAN (issue 41), tried as a colleague would: the server listens on every address with a
certificate, prints an address another machine can open (this host's LAN address, https, the token), and a headless
Chromium with no way out of this machine opens it: the page and everything it loads come from the server (the web
font too: no third-party request), the welcome screen shows, and no offer is made that a visitor would then be
refused. And when the server is hung up (SIGHUP) or terminated with a session open, the session's app process and
folder go with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpuadvisor.tui.commands.serve import lan_address
from tests.browser import NO_BROWSER, browser, open_page
from tests.tui.test_serve import CAPTURE, ESCAPES, _free_port

TOKEN = "lan-test-token-0123456789"
RECORD = """
(() => {
  window.__requests = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__requests.push(e.name);
  }).observe({type: "resource", buffered: true});
})();
"""


def _certificate(folder: Path, address: str) -> tuple[Path, Path]:
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "2", "-subj", f"/CN={address}",
                    "-addext", f"subjectAltName=IP:{address},DNS:localhost"], check=True, capture_output=True,
                   timeout=60)
    return cert, key


def _start(tmp_path: Path, *options: str) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "GPUADVISOR_DATA_DIR": str(tmp_path / "data"),
           "GPUADVISOR_CONFIG_DIR": str(tmp_path / "config"), "TMPDIR": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "gpuadvisor.tui", "serve", *options], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("gpuadvisor serve: "), line + (proc.stderr.read() if proc.poll() is not None else "")
    return proc, line


def _stop(proc: subprocess.Popen[str], signum: int = signal.SIGTERM) -> str:
    """Stop the server (if it still runs); what it logged on stderr."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signum)
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
    return err or ""


@pytest.mark.skipif(browser() is None or shutil.which("openssl") is None, reason=NO_BROWSER + " (or no openssl)")
def test_served_on_the_lan_with_a_certificate_looks_and_works_as_on_localhost(tmp_path: Path) -> None:
    address = lan_address()
    cert, key = _certificate(tmp_path, address)
    port = _free_port()
    proc, line = _start(tmp_path, "--host", "0.0.0.0", "--port", str(port), "--token", TOKEN,
                        "--certfile", str(cert), "--keyfile", str(key))
    try:
        assert line.startswith(f"gpuadvisor serve: https://{address}:{port}/?token={TOKEN}  "), line
        seen, requests, fonts = asyncio.run(_visit(f"https://{address}:{port}/?token={TOKEN}", tmp_path, address))
    finally:
        log = _stop(proc)
    origin = f"https://{address}:{port}/"
    assert requests and all(url.startswith(origin) for url in requests), requests  # nothing from elsewhere
    assert any(url.endswith("RobotoMono-VariableFont_wght.ttf") for url in requests) and fonts
    text = ESCAPES.sub("", seen)
    assert "New consultation (n)" in text and "Knowledge base ready" in text
    assert "Press r" not in text and "Refresh prices" not in text  # a visitor may not refresh: not offered
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", log), log[-500:]  # the log off a terminal: plain


async def _visit(url: str, tmp_path: Path, address: str) -> tuple[str, list[str], bool]:
    executable = browser()
    assert executable is not None
    profile = tmp_path / "chromium"
    profile.mkdir()
    async with open_page(executable, profile, also_reach=(address,)) as page:
        await page.call("Security.setIgnoreCertificateErrors", ignore=True)  # the self-signed certificate
        await page.call("Page.addScriptToEvaluateOnNewDocument", source=CAPTURE + RECORD)
        await page.call("Page.navigate", url=url)
        seen = await page.wait_for("window.__seen && window.__seen.includes('Knowledge base ready') && window.__seen",
                                   timeout=90)
        fonts = await page.evaluate("document.fonts.ready.then(() => document.fonts.check('16px \"Roboto Mono\"') "
                                    "&& [...document.fonts].some(f => f.status === 'loaded'))")
        requests = await page.evaluate("window.__requests")
        current = await page.evaluate("location.href")
    assert current == url.split("?")[0]  # the token moved into the cookie, out of the address bar
    return str(seen or ""), list(requests or []), bool(fonts)


@pytest.mark.parametrize("name", ["SIGHUP", "SIGTERM"])
def test_a_hung_up_server_ends_its_sessions_and_removes_their_folders(tmp_path: Path, name: str) -> None:
    import aiohttp

    port = _free_port()
    proc, _ = _start(tmp_path, "--host", "127.0.0.1", "--port", str(port))

    async def open_session() -> None:
        async with aiohttp.ClientSession() as client:
            ws = await client.ws_connect(f"http://127.0.0.1:{port}/ws",
                                         headers={"Origin": f"http://127.0.0.1:{port}"})
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not _children(proc.pid):
                await asyncio.sleep(0.2)
            children = _children(proc.pid)
            assert children, "no session process started"
            roots = [p for p in tmp_path.iterdir() if p.name.startswith("gpuadvisor-serve-")]
            assert roots and any(p.name.startswith("session-") for p in roots[0].iterdir())
            os.kill(proc.pid, getattr(signal, name))  # the server alone, as a closed terminal would
            proc.wait(timeout=60)
            for child in children:
                assert not _alive(child), f"session process {child} outlived the server"
            await ws.close()

    try:
        asyncio.run(open_session())
    finally:
        _stop(proc, signal.SIGKILL)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("gpuadvisor-serve-")] == []


def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        out += [int(c) for c in (task / "children").read_text().split()]
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"
