"""Headless Chromium driven over the DevTools protocol (aiohttp's websocket client; aiohttp comes with
textual-serve): load a page, run JavaScript in it, take a screenshot. For the tests of `gpuadvisor serve` and of the
HTML report; no network beyond this machine.

Chromium is Debian's `chromium` package (CI installs it, .ci/run); `browser()` returns None without it, so the tests
that need it are skipped with that reason.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import shutil
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

OFFLINE = ("--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--disable-default-apps", "--no-default-browser-check",
           "--disable-domain-reliability", "--disable-client-side-phishing-detection")
"""No name resolves but 127.0.0.1 and no background traffic: a page's web fonts or anything else from outside
fail at once, so the tests never reach the network."""
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
NO_BROWSER = "no headless Chromium on this machine (Debian: apt-get install chromium; CI installs it)"


def browser() -> str | None:
    """The Chromium executable, or None."""
    return next((path for name in CHROMIUM_NAMES if (path := shutil.which(name))), None)


class Page:
    """One browser tab: `call` sends a DevTools command and returns its result."""

    def __init__(self, ws: Any) -> None:
        self._ws = ws
        self._next = 0

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._next += 1
        ident = self._next
        await self._ws.send_str(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            msg = json.loads((await self._ws.receive(timeout=30)).data)
            if msg.get("id") == ident:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return dict(msg.get("result", {}))

    async def evaluate(self, expression: str) -> Any:
        result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        return result.get("result", {}).get("value")

    async def wait_for(self, expression: str, timeout: float = 30.0) -> Any:
        """Poll a JavaScript expression until it is truthy; its last value either way."""
        deadline = time.monotonic() + timeout
        value = None
        while time.monotonic() < deadline:
            value = await self.evaluate(expression)
            if value:
                return value
            await asyncio.sleep(0.25)
        return value

    async def screenshot(self, path: Path) -> Path:
        data = await self.call("Page.captureScreenshot", format="png")
        path.write_bytes(base64.b64decode(data["data"]))
        return path


@contextlib.asynccontextmanager
async def open_page(executable: str, profile: Path, width: int = 1280, height: int = 900,
                    also_reach: tuple[str, ...] = ()) -> AsyncIterator[Page]:
    """A headless Chromium with one blank tab, closed afterwards. `also_reach`: addresses of this machine beyond
    127.0.0.1 it may open (the resolver rules map IP literals too)."""
    import aiohttp

    offline = tuple(f"{arg}, {', '.join(f'EXCLUDE {a}' for a in also_reach)}" if arg.startswith("--host-resolver")
                    and also_reach else arg for arg in OFFLINE)
    proc = subprocess.Popen([executable, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                             "--disable-extensions", "--remote-debugging-port=0", f"--user-data-dir={profile}",
                             f"--window-size={width},{height}", *offline, "about:blank"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not port_file.exists() or not port_file.read_text().strip():
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("Chromium did not start its DevTools endpoint")
            await asyncio.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://127.0.0.1:{port}/json/list") as response:
                targets = await response.json()
            url = next(t["webSocketDebuggerUrl"] for t in targets if t.get("type") == "page")
            async with session.ws_connect(url, max_msg_size=64 * 1024 * 1024) as ws:
                page = Page(ws)
                await page.call("Page.enable")
                await page.call("Runtime.enable")
                yield page
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
