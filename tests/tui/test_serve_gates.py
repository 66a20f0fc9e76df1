"""A real `gpuadvisor serve` on this machine, driven over its websocket as a browser does (aiohttp's client): the
issue-31 reproductions of a page on another site driving a localhost server, unauthenticated and unbounded
sessions, and visitors seeing the operator's state, each now refused or kept apart. Everything is on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import aiohttp
import pytest

from gpuadvisor.tui.cli import main

ESCAPES = re.compile(r"\x1b(?:\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(tmp_path: Path, *options: str, env: dict[str, str] | None = None) -> Iterator[tuple[int, str, int]]:
    """(port, the line it printed, its pid) of a `gpuadvisor serve` started with these options."""
    port = _free_port()
    environment = {**os.environ, "GPUADVISOR_DATA_DIR": str(tmp_path / "operator-data"),
                   "GPUADVISOR_CONFIG_DIR": str(tmp_path / "operator-config"), **(env or {})}
    args = [sys.executable, "-m", "gpuadvisor.tui", "serve", "--port", str(port), *options]
    if "--host" not in options:
        args += ["--host", "127.0.0.1"]
    server = subprocess.Popen(args, env=environment, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              start_new_session=True)
    assert server.stdout is not None
    out = server.stdout
    lines: list[str] = []
    drain = threading.Thread(target=lambda: lines.extend(out), daemon=True)  # its access log must not fill the pipe
    try:
        line = out.readline()  # printed once it listens
        assert line.startswith("gpuadvisor serve: "), line
        drain.start()
        yield port, line, server.pid
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        if drain.is_alive():
            drain.join(timeout=10)
        out.close()


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text()
        out += [int(c) for c in text.split()]
    return out


@asynccontextmanager
async def session(port: int, *, origin: str | None = "same", host: str = "127.0.0.1",
                  cookies: dict[str, str] | None = None) -> AsyncIterator[aiohttp.ClientWebSocketResponse]:
    headers = {}
    if origin == "same":
        headers["Origin"] = f"http://{host}:{port}"
    elif origin is not None:
        headers["Origin"] = origin
    async with aiohttp.ClientSession(cookies=cookies) as client:
        async with client.ws_connect(f"http://{host}:{port}/ws?width=100&height=30", headers=headers) as ws:
            yield ws


async def screen_text(ws: aiohttp.ClientWebSocketResponse, until: str, timeout: float = 60) -> str:
    """What the app drew, escapes removed, once `until` is in it."""
    seen = ""
    deadline = time.monotonic() + timeout
    while until not in ESCAPES.sub("", seen):
        left = deadline - time.monotonic()
        if left <= 0:  # checked here too: a spinner's frames, or the server's pings, keep receive() waiting
            raise AssertionError(f"no {until!r} within {timeout:g} s: {ESCAPES.sub('', seen)[-800:]}")
        try:
            message = await asyncio.wait_for(ws.receive(), left)
        except TimeoutError:
            continue
        if message.type == aiohttp.WSMsgType.BINARY:
            seen += message.data.decode("utf-8", "replace")
        elif message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR):
            raise AssertionError(f"closed before {until!r}: {ESCAPES.sub('', seen)[-500:]}")
    return ESCAPES.sub("", seen)


async def _status(port: int, **kwargs: object) -> int:
    try:
        async with session(port, **kwargs):  # type: ignore[arg-type]
            return 101
    except aiohttp.WSServerHandshakeError as exc:
        return exc.status


def test_a_page_of_another_site_cannot_open_a_session(tmp_path: Path) -> None:
    """Issue 31, 3: a websocket with `Origin: http://evil.example` got 101 and a session. Now another origin, no
    origin, or another Host (DNS rebinding: evil.example pointed at 127.0.0.1) is refused before any process starts;
    the page's own origin gets its session."""
    async def run(port: int, pid: int) -> None:
        assert await _status(port, origin="http://evil.example") == 403
        assert await _status(port, origin=f"http://evil.example:{port}") == 403
        assert await _status(port, origin=None) == 403
        assert await _status(port, origin="null") == 403
        async with aiohttp.ClientSession() as client:
            async with client.get(f"http://127.0.0.1:{port}/", headers={"Host": f"evil.example:{port}"}) as page:
                assert page.status == 421 and "loopback address only" in await page.text()
            async with client.get(f"http://127.0.0.1:{port}/") as page:
                assert page.status == 200 and page.headers["X-Frame-Options"] == "DENY"
                assert f'data-session-websocket-url="ws://127.0.0.1:{port}/ws"' in await page.text()
        assert _children(pid) == []  # no app process was started for a refused visitor
        async with session(port) as ws:
            assert "New consultation (n)" in await screen_text(ws, "New consultation")
            assert len(_children(pid)) == 1

    with serving(tmp_path) as (port, _, pid):
        asyncio.run(run(port, pid))


def test_sessions_are_bounded_in_number_and_idle_time(tmp_path: Path) -> None:
    """Issue 31, 4: 30 websockets started 30 app processes. Now the third of two allowed gets 503, a closed one
    frees its place, and a session without input closes after --idle-timeout (here 0.1 minute)."""
    async def run(port: int, pid: int) -> None:
        async with session(port) as first, session(port) as second:
            await screen_text(first, "New consultation")
            await screen_text(second, "New consultation")
            assert await _status(port) == 503
            assert len(_children(pid)) == 2
        deadline = time.monotonic() + 20
        while _children(pid) and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        assert _children(pid) == []  # both processes ended with their sessions
        async with session(port) as third:
            await screen_text(third, "New consultation")
            started = time.monotonic()
            while True:  # no key, no resize: the server closes it after 6 s
                message = await third.receive(timeout=30)
                if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
                    break
            assert 3 < time.monotonic() - started < 25

    with serving(tmp_path, "--max-sessions", "2", "--idle-timeout", "0.1") as (port, line, pid):
        assert "at most 2 sessions, closed after 0.1 minutes idle" in line
        asyncio.run(run(port, pid))


def test_beyond_loopback_a_token_is_generated_and_required(tmp_path: Path) -> None:
    """Issue 31, 4: `--host 0.0.0.0` served anyone. Now a token is generated and printed; without it every request
    and websocket is refused; `?token=` sets a cookie (and leaves the address), with which the page and its
    websocket work."""
    async def run(port: int, token: str) -> None:
        base = f"http://127.0.0.1:{port}"
        async with aiohttp.ClientSession() as client:
            for url in (f"{base}/", f"{base}/?token=wrong-{token}", f"{base}/static/js/textual.js"):
                async with client.get(url) as page:
                    assert page.status == 401 and "needs its access token" in await page.text()
            async with client.get(f"{base}/?token={token}", allow_redirects=False) as page:
                assert page.status == 303 and page.headers["Location"] == "/"
                cookie = page.cookies["gpuadvisor_token"]
                assert cookie.value == token and cookie["httponly"] and cookie["samesite"] == "Strict"
        assert await _status(port) == 401  # the right origin, no token
        assert await _status(port, origin="http://evil.example", cookies={"gpuadvisor_token": token}) == 403
        async with session(port, cookies={"gpuadvisor_token": token}) as ws:
            await screen_text(ws, "New consultation")

    with serving(tmp_path, "--host", "0.0.0.0") as (port, line, _):
        found = re.search(r"/\?token=([A-Za-z0-9_-]{32})\s", line)
        assert found is not None, line
        asyncio.run(run(port, found.group(1)))


def test_visitors_see_nothing_of_the_operators_state(tmp_path: Path) -> None:
    """Issue 31, 4: visitors saw each other's recent consultations and could reopen them. Each session now has its
    own folder (removed when it ends) and none of the operator's tokens, drafts, recent list or overlays."""
    from gpuadvisor.tui import settings

    operator = tmp_path / "operator-data"
    os.environ_backup = dict(os.environ)  # type: ignore[attr-defined]
    try:
        os.environ["GPUADVISOR_DATA_DIR"] = str(operator)
        settings.record_consultation('[model]\nname = "gpt2"\n', "OPERATOR-PLAN gpt2")
        (operator / "draft.json").write_text(json.dumps({"format": "gpuadvisor-draft", "version": 1,
                                                          "raw": {"model": "OPERATOR-DRAFT"}}), encoding="utf-8")
    finally:
        os.environ.clear()
        os.environ.update(os.environ_backup)  # type: ignore[attr-defined]

    async def run(port: int, pid: int) -> Path:
        async with session(port) as ws:
            text = await screen_text(ws, "None yet")
            assert "OPERATOR-PLAN" not in text and "OPERATOR-DRAFT" not in text and "Resume (u)" not in text
            child = _children(pid)[0]
            environ = dict(item.split("=", 1) for item in
                           Path(f"/proc/{child}/environ").read_text().split("\0") if "=" in item)
            assert "HF_TOKEN" not in environ and environ["GPUADVISOR_DATA_DIR"] != str(operator)
            assert environ["GPUADVISOR_CONFIG_DIR"] != str(tmp_path / "operator-config")
            folder = Path(environ["GPUADVISOR_DATA_DIR"]).parent
            assert folder.is_dir()
        deadline = time.monotonic() + 20
        while folder.exists() and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        return folder

    with serving(tmp_path, env={"HF_TOKEN": "hf_operators_own_token"}) as (port, _, pid):
        folder = asyncio.run(run(port, pid))
    assert not folder.exists()  # the session's folder went with it


@pytest.mark.parametrize(("host", "message"), [
    ("", "--host: empty; give the address to listen on"),
    ("not..a..host", "--host: 'not..a..host' is not a host name or an IP address"),
    ("999.1.1.1", "--host: '999.1.1.1' is not an IP address (each of the four numbers is 0-255)"),
    ("a" * 300, "is not a host name or an IP address"),
])
def test_an_empty_or_invalid_host_is_bad_input_naming_it(host: str, message: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 31, 5: `--host not..a..host` exited 70 (an internal UnicodeError) and `--host 999.1.1.1` 4 without
    naming the host; `--host ''` listened on every interface."""
    assert main(["serve", "--host", host]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(("options", "message"), [
    (["--token", "short"], "--token: give at least 16 printable ASCII characters"),
    (["--max-sessions", "0"], "--max-sessions: 0 is not between 1 and 64"),
    (["--idle-timeout", "0"], "--idle-timeout: 0 minutes is not between 0.1 and 1440"),
    (["--data-dir", "/nonexistent/shared"], "--data-dir: /nonexistent/shared: not a directory"),
    (["--public-url", "javascript:alert(1)"], "--public-url: 'javascript:alert(1)' is not an address"),
])
def test_bad_serve_options_are_named(options: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--host", "127.0.0.1", *options]) == 2
    assert message in capsys.readouterr().err


def test_operator_answers_with_a_server_path_are_refused_at_start(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    answers = tmp_path / "a.toml"
    answers.write_text('[model]\nconfig = "/srv/private/config.json"\n', encoding="utf-8")
    assert main(["serve", "--host", "127.0.0.1", "--answers", str(answers)]) == 2
    assert "model.config: the shared app reads no file on the server" in capsys.readouterr().err


def test_a_saved_report_is_downloaded_by_the_browser_not_written_on_the_server(tmp_path: Path) -> None:
    """The whole way of a report: `s`, Ctrl+S in the page → the app delivers it → textual-serve announces a download
    → the browser fetches /download/<key> (with its cookie) → the Markdown report. The server's disk is unchanged."""
    answers = tmp_path / "plan.toml"
    answers.write_text('workload = "inference"\n[model]\nname = "llama-3.1-8b"\n[budget]\nhourly_usd = 20\n',
                       encoding="utf-8")
    token = "a-test-token-of-32-characters-xx"

    def disk() -> list[str]:
        return sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if "cache" not in p.parts)

    async def run(port: int) -> str:
        cookies = {"gpuadvisor_token": token}
        async with session(port, cookies=cookies) as ws:
            await screen_text(ws, "the cheapest plan")  # the headline: the result is in
            await ws.send_json(["stdin", "s"])
            await screen_text(ws, "sent to your browser")
            await ws.send_json(["stdin", "\x13"])  # Ctrl+S
            key = None
            deadline = time.monotonic() + 60
            while key is None and time.monotonic() < deadline:  # server pings keep receive() from timing out
                message = await asyncio.wait_for(ws.receive(), 60)
                if message.type == aiohttp.WSMsgType.TEXT and json.loads(message.data)[0] == "deliver_file_start":
                    key = json.loads(message.data)[1]
            assert key is not None, "no download announced"
            async with aiohttp.ClientSession(cookies=cookies) as client:
                async with client.get(f"http://127.0.0.1:{port}/download/{key}") as got:
                    assert got.status == 200
                    assert got.headers["Content-Disposition"].startswith("attachment; filename=gpuadvisor-inference-")
                    return await got.text()

    with serving(tmp_path, "--answers", str(answers), "--token", token) as (port, _, _):
        before = disk()
        report = asyncio.run(run(port))
        after = disk()
    assert report.startswith("# GPU recommendation: Llama 3.1 8B, inference")
    assert after == before  # nothing written on the server (the sessions' folders are elsewhere, and gone)


def test_behind_a_proxy_the_public_address_is_accepted(tmp_path: Path) -> None:
    """`--public-url https://gpu.example.com` on loopback, as the README's nginx forwards it: that Host and Origin are
    accepted, the page's websocket goes back through the proxy (wss), other names still are not."""
    async def run(port: int) -> None:
        base = f"http://127.0.0.1:{port}"
        proxied = {"Host": "gpu.example.com"}
        async with aiohttp.ClientSession() as client:
            async with client.get(f"{base}/", headers=proxied) as page:
                assert page.status == 200
                assert 'data-session-websocket-url="wss://gpu.example.com/ws"' in await page.text()
            async with client.get(f"{base}/", headers={"Host": "other.example.com"}) as page:
                assert page.status == 421
            async with client.ws_connect(f"{base}/ws", headers={**proxied, "Origin": "https://gpu.example.com"}) as ws:
                await screen_text(ws, "New consultation")

    with serving(tmp_path, "--public-url", "https://gpu.example.com") as (port, line, _):
        assert line.startswith("gpuadvisor serve: https://gpu.example.com/ ")
        asyncio.run(run(port))
