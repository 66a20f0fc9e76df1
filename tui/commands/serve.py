"""`gpuadvisor serve`: the same app as a web page, for colleagues who do not live in a terminal.

textual-serve runs a small web server; each browser session starts its own `python -m gpuadvisor.tui` process
(with the same arguments as the terminal app) behind a websocket, and the page draws its screen with xterm.js.
Everything runs on this machine: the server listens on localhost unless `--host` says otherwise.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from gpuadvisor.knowledge.errors import InputError


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="localhost",
                        help="address to listen on (default localhost; 0.0.0.0 serves the whole network)")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    parser.add_argument("--public-url", default=None, metavar="URL",
                        help="the URL browsers reach the server at, when behind a proxy")
    parser.add_argument("--answers", dest="serve_answers", metavar="FILE", default=None,
                        help="open every session straight at the results of these answers")


def app_command(answers: str | None = None, theme: str | None = None) -> str:
    """The command each browser session runs: this Python, the TUI module, the same options."""
    argv = [sys.executable, "-m", "gpuadvisor.tui"]
    if answers is not None:
        argv += ["--answers", os.path.realpath(Path(answers).expanduser())]  # a symlink loop: reported when read
    if theme is not None:
        argv += ["--theme", theme]
    return shlex.join(argv)


def run(args: argparse.Namespace) -> int:
    from textual_serve.server import Server

    if not 0 < args.port < 65536:
        raise InputError(f"--port: {args.port} is not a TCP port (1-65535)")
    answers = args.serve_answers or getattr(args, "answers", None)
    if answers is not None:
        from gpuadvisor.rules.lifecycle_answers import load_any

        load_any(Path(answers).expanduser())  # a bad file is named here, not in every browser session
    server = Server(app_command(answers, getattr(args, "theme", None)), host=args.host, port=args.port,
                    title="gpuadvisor", public_url=args.public_url)
    server.serve()
    return 0
