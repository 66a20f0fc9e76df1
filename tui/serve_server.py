"""The web server of `gpuadvisor serve`: textual-serve's, with the gates a server others can reach needs.

textual-serve starts one app process per browser websocket and forwards the page's keys to it; on its own it checks
nothing, so any page a user merely opens could drive a localhost server (a websocket from `http://evil.example` got
101 and a session), and anyone on the network could start processes without limit. This server adds:

- **a token** (`--token`, or one generated and printed at start when listening beyond loopback), checked on every
  HTTP request and websocket handshake: from `?token=` (then kept in an HttpOnly, SameSite=Strict cookie and
  dropped from the address), the cookie, or `Authorization: Bearer`;
- **the Host and the Origin**: on loopback the Host must be a loopback name (or the `--public-url` one), which
  stops DNS rebinding; every websocket must come from the page's own origin (or `--public-url`'s);
- **bounds**: at most `--max-sessions` app processes at once (a refused websocket gets HTTP 503), each closed after
  `--idle-timeout` minutes without a key, a resize or a click;
- **a session of its own**: each process gets its own data directory (recent consultations, the draft, the theme),
  configuration (no overlay or rule pack of the operator's unless `--with-overlays`), Hugging Face cache and
  temporary directory, none of the operator's tokens, and the directory is removed when the session ends.

The app itself runs in served mode (tui/served.py): downloads instead of files on the server.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import os
import re
import shlex
import shutil
import signal
import ssl
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp_jinja2
import jinja2
from aiohttp import WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int
from yarl import URL

log = logging.getLogger("textual-serve")

COOKIE = "gpuadvisor_token"
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
STOP_WAIT_S = 5.0
"""How long a session's process gets to quit before it is killed."""
HF_TOKEN_VARIABLES = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH")
FONT_LINK = re.compile(r'<link\s+rel="stylesheet"\s+href="https://fonts\.googleapis\.com/[^"]*"\s*/>')
LOCAL_FONT = """<style>
      @font-face { font-family: "Roboto Mono"; font-style: normal; font-weight: 100 700;
        src: url("{{ config.static.url }}fonts/RobotoMono-VariableFont_wght.ttf") format("truetype"); }
      @font-face { font-family: "Roboto Mono"; font-style: italic; font-weight: 100 700;
        src: url("{{ config.static.url }}fonts/RobotoMono-Italic-VariableFont_wght.ttf") format("truetype"); }
    </style>"""
CSP = ("default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
       "font-src 'self'; connect-src 'self' ws: wss:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
"""Everything the page loads comes from this server: a request elsewhere is blocked by the browser itself."""


@dataclass
class Gates:
    """What the server checks, decided by `gpuadvisor serve` from its options."""

    port: int
    loopback: bool
    """Listening on loopback only: the Host must be a loopback name."""
    token: str | None
    max_sessions: int
    idle_timeout_s: float
    public_url: str | None = None
    extra_hosts: frozenset[str] = field(default_factory=frozenset)
    """Host names a loopback server also answers to (the bound name, the public URL's)."""


class SessionService(AppService):
    """One visitor's app process, with an environment of its own and no shell between."""

    def __init__(self, command: str, environment: dict[str, str], **kwargs: Any) -> None:
        super().__init__(command, **kwargs)
        self._environment = environment

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        base = super()._build_environment(width, height)
        for name in HF_TOKEN_VARIABLES:
            base.pop(name, None)
        base.update(self._environment)
        return base

    async def _open_app_process(self, width: int = 80, height: int = 24) -> asyncio.subprocess.Process:
        self._process = process = await asyncio.create_subprocess_exec(
            *shlex.split(self.command), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=self._build_environment(width, height), start_new_session=True)
        assert process.stdin is not None
        self._stdin = process.stdin
        return process

    async def stop(self) -> None:
        """Ask the app to quit; kill it when it has not within STOP_WAIT_S."""
        try:
            await asyncio.wait_for(super().stop(), STOP_WAIT_S)
        except TimeoutError:
            self.kill()
        if self._process is not None and self._process.returncode is None:
            try:
                await asyncio.wait_for(self._process.wait(), STOP_WAIT_S)
            except TimeoutError:
                self.kill()

    def kill(self) -> None:
        process = self._process
        if process is not None and process.returncode is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except OSError:
                pass


@dataclass
class _Session:
    websocket: web.WebSocketResponse
    folder: Path
    last_input: float
    service: SessionService | None = None


class AdvisorServer(Server):
    """textual-serve's server with the gates of the module docstring."""

    def __init__(self, command: str, *, host: str, gates: Gates, refreshed_prices: Path | None,
                 with_overlays: bool, ssl_context: ssl.SSLContext | None = None) -> None:
        super().__init__(command, host=host, port=gates.port, title="gpuadvisor", public_url=gates.public_url)
        self.gates = gates
        self.refreshed_prices = refreshed_prices
        self.with_overlays = with_overlays
        self.root = Path(tempfile.mkdtemp(prefix="gpuadvisor-serve-"))
        """Every session's folder and the shared parse cache; removed when the server stops."""
        self.sessions: dict[int, _Session] = {}
        self.listening: str = ""
        self.ssl_context = ssl_context
        """TLS (`--certfile`/`--keyfile`): the page, the token and the websocket never cross the network in clear."""

    # --- the web application ---------------------------------------------------------------------------------------
    async def _make_app(self) -> web.Application:
        app = web.Application(middlewares=[self._guard])
        aiohttp_jinja2.setup(app, loader=jinja2.FunctionLoader(self._template))
        app.add_routes([
            web.get("/", self.handle_index, name="index"),
            web.get("/ws", self.handle_websocket, name="websocket"),
            web.get("/download/{key}", self.handle_download, name="download"),
            web.static("/static", self.statics_path, show_index=False, name="static"),
        ])
        app.on_shutdown.append(self.on_shutdown)
        return app

    def _template(self, name: str) -> str | None:
        """textual-serve's page with its one third-party request, the Roboto Mono stylesheet of Google Fonts,
        replaced by the same font from the copy textual-serve ships (its static/fonts, Apache-2.0): served by this
        server, so the page looks the same on a LAN without internet access and no visitor's browser calls a third
        party."""
        path = Path(self.templates_path) / name
        if not path.is_file():
            return None
        text = path.read_text(encoding="utf-8")
        return FONT_LINK.sub(LOCAL_FONT, text)

    def serve(self, debug: bool = False) -> None:
        """Serve until SIGINT or SIGTERM; the sessions' processes and folders go with the server. The address line
        is printed once the socket listens (a bind error is an OSError for the command to name)."""
        self.debug = debug
        self.initialize_logging()
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(self._serve())
        finally:
            loop.close()
            shutil.rmtree(self.root, ignore_errors=True)

    def initialize_logging(self) -> None:
        """textual-serve's coloured log on a terminal; elsewhere (a file, a journal, a pipe) plain lines, every one
        through the one sanitiser, so a log never holds a raw escape sequence."""
        if sys.stderr.isatty():
            super().initialize_logging()
            return
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(_SafeFormatter("gpuadvisor serve: %(levelname)s %(message)s"))
        logging.basicConfig(level="DEBUG" if self.debug else "INFO", handlers=[handler], force=True)

    async def _serve(self) -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for name in ("SIGINT", "SIGTERM", "SIGHUP"):  # SIGHUP: the terminal that started the server closed
            sig = getattr(signal, name, None)
            if sig is None:
                continue
            try:
                loop.add_signal_handler(sig, stop.set)
            except NotImplementedError:
                pass
        runner = web.AppRunner(await self._make_app(), handle_signals=False, shutdown_timeout=STOP_WAIT_S)
        await runner.setup()
        try:
            await web.TCPSite(runner, self.host, self.port, ssl_context=self.ssl_context).start()
            print(self.listening, flush=True)
            await stop.wait()
        finally:
            await runner.cleanup()
            self._end_sessions()

    def _end_sessions(self) -> None:
        """Whatever session outlived the shutdown (its handler cancelled mid-way): its app process group is killed
        and its folder removed, so no visitor's process or files outlive the server."""
        for session in list(self.sessions.values()):
            if session.service is not None:
                session.service.kill()
            shutil.rmtree(session.folder, ignore_errors=True)
        self.sessions.clear()

    async def on_shutdown(self, app: web.Application) -> None:
        for session in list(self.sessions.values()):
            await session.websocket.close(message=b"the server is stopping")

    # --- gates -----------------------------------------------------------------------------------------------------
    @web.middleware
    async def _guard(self, request: web.Request, handler: Any) -> web.StreamResponse:
        refusal = self._host_refusal(request)
        if refusal is not None:
            return _refuse(421, refusal)
        given = self._token_given(request)
        if self.gates.token is not None and not _same(given, self.gates.token):
            return _refuse(401, "this server needs its access token: open the address `gpuadvisor serve` printed "
                                "(…/?token=…)")
        if request.query.get("token") is not None and request.path == "/":
            # keep the token in a cookie and out of the address bar, the history and any Referer
            moved = web.Response(status=303, headers={"Location": "/", "Cache-Control": "no-store"})
            self._set_cookie(moved, str(given))
            return moved
        response: web.StreamResponse = await handler(request)
        if not response.prepared:  # a websocket's headers are sent already
            response.headers.setdefault("X-Frame-Options", "DENY")
            response.headers.setdefault("Content-Security-Policy", CSP)
            response.headers.setdefault("Referrer-Policy", "no-referrer")
            response.headers.setdefault("X-Content-Type-Options", "nosniff")
        return response

    def _token_given(self, request: web.Request) -> str | None:
        auth = request.headers.get("Authorization", "")
        if auth.lower().startswith("bearer "):
            return auth[7:].strip()
        return request.query.get("token") or request.cookies.get(COOKIE)

    def _set_cookie(self, response: web.StreamResponse, token: str) -> None:
        secure = self.ssl_context is not None or bool(self.gates.public_url
                                                      and self.gates.public_url.startswith("https:"))
        response.set_cookie(COOKIE, token, httponly=True, samesite="Strict", path="/", secure=secure)

    def _host_refusal(self, request: web.Request) -> str | None:
        """On loopback the Host must be a loopback name (or one the operator gave): a page on another site whose
        name is made to point at 127.0.0.1 (DNS rebinding) is refused."""
        if not self.gates.loopback:
            return None
        host = _hostname(request.host)
        if host is None or (host not in LOOPBACK_NAMES and host not in self.gates.extra_hosts):
            return "this server answers to its own loopback address only (give --public-url when a proxy serves it)"
        return None

    def _origin_refusal(self, request: web.Request) -> str | None:
        """A websocket must come from this server's own page: its Origin is the page's (the Host it was loaded
        from) or the public URL's."""
        origin = request.headers.get("Origin")
        if not origin:
            return "no Origin: the session is opened by gpuadvisor's own page"
        try:
            got = URL(origin)
            if got.scheme not in ("http", "https") or not got.host:
                raise ValueError(origin)
            page = URL(f"{got.scheme}://{request.host}")
        except ValueError:
            return "a malformed Origin"
        allowed = {(page.scheme, (page.host or "").lower(), page.port)}
        if self.gates.public_url:
            public = URL(self.gates.public_url)
            allowed.add((public.scheme, (public.host or "").lower(), public.port))
        if (got.scheme, got.host.lower(), got.port) not in allowed:
            return f"the page at {got.scheme}://{got.host} is not this server's"
        return None

    # --- pages -----------------------------------------------------------------------------------------------------
    async def handle_index(self, request: web.Request) -> web.StreamResponse:  # type: ignore[override]
        """textual-serve's page, its websocket address built from the address the browser used (textual-serve's
        own default, http://0.0.0.0:8000, is no address a browser elsewhere can reach)."""
        base = (self.gates.public_url or f"{request.scheme}://{request.host}").rstrip("/")
        socket_url = ("wss:" if base.startswith("https:") else "ws:") + base.split(":", 1)[1] + "/ws"
        context = {
            "font_size": to_int(request.query.get("fontsize", "16"), 16),
            "app_websocket_url": socket_url,
            "config": {"static": {"url": f"{base}/static/"}},
            "application": {"name": self.title},
        }
        response = aiohttp_jinja2.render_template("app_index.html", request, context)
        response.headers["Cache-Control"] = "no-store"
        return response

    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:  # type: ignore[override]
        refusal = self._origin_refusal(request)
        if refusal is not None:
            return _refuse(403, refusal)
        if len(self.sessions) >= self.gates.max_sessions:
            return _refuse(503, f"all {self.gates.max_sessions} sessions of this server are in use; try again later")
        websocket = web.WebSocketResponse(heartbeat=15, max_msg_size=2 * 1024 * 1024)
        folder = Path(tempfile.mkdtemp(prefix="session-", dir=self.root))
        session = _Session(websocket, folder, time.monotonic())
        self.sessions[id(session)] = session  # counted before the first await: the limit cannot be overrun
        width = to_int(request.query.get("width", "80"), 80)
        height = to_int(request.query.get("height", "24"), 24)
        service: SessionService | None = None
        watchdog: asyncio.Task[None] | None = None
        try:
            await websocket.prepare(request)
            service = SessionService(self.command, self._session_environment(folder),
                                     write_bytes=websocket.send_bytes, write_str=websocket.send_str,
                                     close=websocket.close, download_manager=self.download_manager, debug=self.debug)
            session.service = service
            await service.start(max(20, min(width, 500)), max(10, min(height, 200)))
            watchdog = asyncio.create_task(self._close_when_idle(session))
            await self._relay(session, service)
        except asyncio.CancelledError:
            await websocket.close()
        except Exception as error:  # a visitor's malformed message must not take the server down
            log.warning("session ended: %s", error)
        finally:
            if watchdog is not None:
                watchdog.cancel()
            if service is not None:
                await service.stop()
            self.sessions.pop(id(session), None)
            shutil.rmtree(folder, ignore_errors=True)
        return websocket

    async def _relay(self, session: _Session, service: AppService) -> None:
        """The page's messages to the app (textual-serve's protocol); keys, resizes and focus count as activity."""
        async for message in session.websocket:
            if message.type != WSMsgType.TEXT:
                continue
            envelope = message.json()
            if not isinstance(envelope, list) or not envelope:
                continue
            kind, data = envelope[0], envelope[1] if len(envelope) > 1 else None
            if kind == "stdin" and isinstance(data, str):
                session.last_input = time.monotonic()
                await service.send_bytes(data.encode("utf-8"))
            elif kind == "resize" and isinstance(data, dict):
                session.last_input = time.monotonic()
                await service.set_terminal_size(max(20, min(to_int(str(data.get("width")), 80), 500)),
                                                max(10, min(to_int(str(data.get("height")), 24), 200)))
            elif kind == "ping":
                await session.websocket.send_json(["pong", data])
            elif kind == "blur":
                await service.blur()
            elif kind == "focus":
                session.last_input = time.monotonic()
                await service.focus()

    async def _close_when_idle(self, session: _Session) -> None:
        limit = self.gates.idle_timeout_s
        while True:
            idle = time.monotonic() - session.last_input
            if idle >= limit:
                log.info("closing a session idle for %.0f s", idle)
                await session.websocket.close(message=b"idle")
                return
            await asyncio.sleep(min(limit - idle + 0.05, 30.0))

    def _session_environment(self, folder: Path) -> dict[str, str]:
        """The session's own directories (removed with it); the operator's refreshed prices, read-only."""
        data, hf = folder / "data", folder / "hf"
        data.mkdir()
        if self.refreshed_prices is not None and self.refreshed_prices.is_file():
            from gpuadvisor.knowledge.paths import REFRESHED_PRICES

            (data / REFRESHED_PRICES).symlink_to(self.refreshed_prices)
        env = {"GPUADVISOR_DATA_DIR": str(data), "GPUADVISOR_CACHE_DIR": str(self.root / "cache"),
               "HF_HOME": str(hf), "HF_HUB_CACHE": str(hf / "hub"), "HF_TOKEN_PATH": str(hf / "no-token"),
               "TMPDIR": str(folder)}
        if not self.with_overlays:
            (folder / "config").mkdir()
            env["GPUADVISOR_CONFIG_DIR"] = str(folder / "config")
        return env


class _SafeFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        from gpuadvisor.knowledge.sanitize import safe_text

        return safe_text(super().format(record), keep_newlines=True)


def _refuse(status: int, text: str) -> web.Response:
    body = text if text.startswith("gpuadvisor serve: ") else f"gpuadvisor serve: {text.strip()}\n"
    return web.Response(status=status, text=body, headers={"Cache-Control": "no-store"})



def _same(given: str | None, token: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode("utf-8", "replace"), token.encode("utf-8"))


def _hostname(host_header: str | None) -> str | None:
    """The host name of a Host header, lower case, without brackets or port; None when malformed."""
    if not host_header:
        return None
    try:
        return (URL(f"http://{host_header}").host or "").lower().strip("[]") or None
    except ValueError:
        return None
