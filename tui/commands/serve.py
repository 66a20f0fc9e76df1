"""`gpuadvisor serve`: the same app as a web page, for colleagues who do not live in a terminal.

textual-serve runs a small web server; each browser session starts its own `python -m gpuadvisor.tui --served`
process behind a websocket, and the page draws its screen with xterm.js. Everything runs on this machine. A visitor
gets a browser app, not a shell on the server (tui/served.py: downloads instead of files, answers pasted or from the
one folder `--data-dir` shares), and the server checks who connects and how many (tui/serve_server.py): a token
beyond loopback, the Origin of every websocket, `--max-sessions` and `--idle-timeout`.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import re
import secrets
import shlex
import socket
import ssl
import sys
from pathlib import Path

from gpuadvisor.knowledge.errors import InputError

DEFAULT_MAX_SESSIONS = 4
"""App processes at once (each about 80 MB): a few colleagues, not the network."""
DEFAULT_IDLE_MINUTES = 30.0
MIN_TOKEN_CHARS = 16
_LABEL = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="localhost",
                        help="address to listen on (default localhost: this machine only; 0.0.0.0 serves the network "
                             "and needs a token)")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    parser.add_argument("--public-url", default=None, metavar="URL",
                        help="the URL browsers reach the server at, when a reverse proxy serves it (its Origin and "
                             "Host are then accepted)")
    parser.add_argument("--answers", dest="serve_answers", metavar="FILE", default=None,
                        help="open every session straight at the results of these answers")
    parser.add_argument("--token", default=None, metavar="TOKEN",
                        help=f"access token visitors need (at least {MIN_TOKEN_CHARS} characters); beyond loopback "
                             "one is generated and printed when none is given")
    parser.add_argument("--max-sessions", type=int, default=DEFAULT_MAX_SESSIONS, metavar="N",
                        help=f"browser sessions (app processes) at once, 1-64 (default {DEFAULT_MAX_SESSIONS})")
    parser.add_argument("--idle-timeout", type=float, default=DEFAULT_IDLE_MINUTES, metavar="MINUTES",
                        help=f"close a session without a key or click for this long (default {DEFAULT_IDLE_MINUTES:g})")
    parser.add_argument("--data-dir", default=None, metavar="DIR",
                        help="a folder whose answers files visitors may open by name (nothing else on this machine "
                             "is readable from the page)")
    parser.add_argument("--certfile", default=None, metavar="PEM",
                        help="serve HTTPS with this certificate (PEM; with --keyfile): the page, the token and the "
                             "session never cross the network in clear")
    parser.add_argument("--keyfile", default=None, metavar="PEM", help="the certificate's private key (PEM)")
    parser.add_argument("--with-overlays", action="store_true",
                        help="let visitors' consultations use your knowledge overlays and rule packs (their prices "
                             "and names are then shown to visitors)")


def app_command(answers: str | None = None, theme: str | None = None, data_dir: str | None = None) -> str:
    """The command each browser session runs: this Python, the TUI module in served mode, the same options."""
    argv = [sys.executable, "-m", "gpuadvisor.tui", "--served"]
    if data_dir is not None:
        argv += ["--served-data-dir", data_dir]
    if answers is not None:
        argv += ["--answers", os.path.realpath(Path(answers).expanduser())]  # a symlink loop: reported when read
    if theme is not None:
        argv += ["--theme", theme]
    return shlex.join(argv)


def check_host(host: str, port: int) -> bool:
    """Whether `host` is loopback only; InputError naming the host when it is empty, malformed or unknown."""
    if not host.strip():
        raise InputError("--host: empty; give the address to listen on: 127.0.0.1 (this machine) or 0.0.0.0 (the "
                         "network, with a token)")
    text = host.strip().strip("[]")
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        address = None
    if address is None:
        labels = text.rstrip(".").split(".")
        if len(text) > 253 or not all(_LABEL.match(label) for label in labels):
            raise InputError(f"--host: {host!r} is not a host name or an IP address")
        if all(label.isdigit() for label in labels):
            raise InputError(f"--host: {host!r} is not an IP address (each of the four numbers is 0-255)")
    try:
        found = socket.getaddrinfo(text, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(f"--host: cannot resolve {host!r} ({reason})") from None
    addresses = {ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in found}
    return bool(addresses) and all(a.is_loopback for a in addresses)


def _check_options(args: argparse.Namespace) -> None:
    if not 0 < args.port < 65536:
        raise InputError(f"--port: {args.port} is not a TCP port (1-65535)")
    if not 1 <= args.max_sessions <= 64:
        raise InputError(f"--max-sessions: {args.max_sessions} is not between 1 and 64")
    if not (args.idle_timeout == args.idle_timeout and 0.1 <= args.idle_timeout <= 24 * 60):
        raise InputError(f"--idle-timeout: {args.idle_timeout:g} minutes is not between 0.1 and 1440")
    token = args.token
    if token is not None and (len(token) < MIN_TOKEN_CHARS or not token.isascii() or not token.isprintable()
                              or any(c in token for c in " ;,\"\\")):
        raise InputError(f"--token: give at least {MIN_TOKEN_CHARS} printable ASCII characters, without spaces, "
                         "quotes, commas, semicolons or backslashes")
    if args.public_url is not None and not re.match(r"^https?://[^/\s?#]+/?$", args.public_url):
        raise InputError(f"--public-url: {args.public_url!r} is not an address such as https://gpu.example.com")


def _data_dir(text: str | None) -> str | None:
    if text is None:
        return None
    path = os.path.realpath(Path(text).expanduser())
    if not os.path.isdir(path):
        raise InputError(f"--data-dir: {text}: not a directory")
    return path


def _answers(text: str | None) -> None:
    """A bad file is named here, not in every browser session; a server path in it is refused as the page would."""
    if text is None:
        return
    from gpuadvisor.rules.lifecycle.answers import load_any
    from gpuadvisor.tui.served import refusal

    problem = refusal(load_any(Path(text).expanduser()))
    if problem is not None:
        raise InputError(f"--answers: {text}: {problem}")


def run(args: argparse.Namespace) -> int:
    from urllib.parse import urlsplit

    from gpuadvisor.knowledge.paths import refreshed_prices_path
    from gpuadvisor.tui.serve_server import AdvisorServer, Gates

    _check_options(args)
    loopback = check_host(args.host, args.port)
    data_dir = _data_dir(args.data_dir)
    answers = args.serve_answers or getattr(args, "answers", None)
    _answers(answers)
    token = args.token or (None if loopback else secrets.token_urlsafe(24))
    public = urlsplit(args.public_url) if args.public_url else None
    extra = {args.host.strip().strip("[]").lower()}
    if public is not None and public.hostname:
        extra.add(public.hostname.lower())
    gates = Gates(port=args.port, loopback=loopback, token=token, max_sessions=args.max_sessions,
                  idle_timeout_s=args.idle_timeout * 60, public_url=args.public_url.rstrip("/") if public else None,
                  extra_hosts=frozenset(extra))
    tls = _tls(args.certfile, args.keyfile)
    server = AdvisorServer(app_command(answers, getattr(args, "theme", None), data_dir), host=args.host.strip(),
                           gates=gates, refreshed_prices=refreshed_prices_path(), with_overlays=args.with_overlays,
                           ssl_context=tls)
    scheme = "https" if tls is not None else "http"
    host = args.host.strip()
    every = not loopback and host in ("0.0.0.0", "::")  # every address: print the one a colleague can open
    shown_host, name = (lan_address(), socket.gethostname()) if every else (host, None)
    url = args.public_url.rstrip("/") if public else f"{scheme}://{_bracketed(shown_host)}:{args.port}"
    also = f"; also {scheme}://{_bracketed(name)}:{args.port}/" if name and name != shown_host and not public else ""
    server.listening = (f"gpuadvisor serve: {url}/" + (f"?token={token}" if token else "")
                        + f"  (at most {args.max_sessions} sessions, closed after {args.idle_timeout:g} minutes idle"
                        + (f"; answers from {data_dir}" if data_dir else "") + also + "; Ctrl+C stops)")
    try:
        server.serve()
    except OSError as exc:  # the address is taken, or not this machine's
        raise InputError(f"--host {args.host} --port {args.port}: cannot listen there: "
                         f"{exc.strerror or exc}") from None
    return 0


def lan_address() -> str:
    """This machine's address on its network, which a colleague's browser can reach (the host name alone often
    does not resolve on another machine): the source address of the default route, found without sending a packet
    (a UDP socket is only connected); the host name when there is no route."""
    for family, probe in ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1")):
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as s:
                s.connect((probe, 9))
                address = str(s.getsockname()[0])
        except OSError:
            continue
        if not ipaddress.ip_address(address.split("%", 1)[0]).is_loopback:
            return address
    return socket.gethostname()


def _tls(certfile: str | None, keyfile: str | None) -> ssl.SSLContext | None:
    """The TLS context of --certfile/--keyfile (both or neither); InputError naming the file that cannot be used."""
    if certfile is None and keyfile is None:
        return None
    if certfile is None or keyfile is None:
        raise InputError("--certfile and --keyfile: give both (the certificate and its private key), or neither")
    for flag, path in (("--certfile", certfile), ("--keyfile", keyfile)):
        if not os.path.isfile(path):
            raise InputError(f"{flag}: {path}: not a regular file")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(certfile, keyfile)
    except (ssl.SSLError, OSError, ValueError) as exc:
        raise InputError(f"--certfile {certfile} --keyfile {keyfile}: cannot use them: "
                         f"{getattr(exc, 'reason', None) or exc}") from None
    return context


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host
