"""The `gpuadvisor` command: launches the TUI, or runs a consultation headless for scripts and CI.

Subcommands live in `gpuadvisor.tui.commands.<name>` modules, each with `register(subparsers)` and `run(args) -> int`.
They are imported lazily so that `gpuadvisor estimate --json` never pays for importing Textual.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from collections.abc import Sequence
from contextlib import suppress
from typing import NoReturn

from gpuadvisor.knowledge.errors import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_IO,
    EXIT_OK,
    AdvisorError,
)
from gpuadvisor.knowledge.sanitize import shorten
from gpuadvisor.tui import streams

MAX_LINES = 12
"""Lines of one error message (a few problems, then a count: see `errors.bounded`)."""
MAX_LINE = 400
"""Characters of one error line: a path and a field name fit; a 1 MB value does not."""

SUBCOMMANDS = {
    "estimate": "Size one configuration: parameters, memory per GPU, speed, training time and cost.",
    "recommend": "Run a whole consultation from an answers file (or flags) and rank hardware options.",
    "report": "Re-render a saved JSON report in another format.",
    "kb": "Inspect and validate the knowledge base and your overlays.",
    "schema": "Print the JSON Schema of the --json outputs.",
    "serve": "Serve the advisor as a web page: the same app, in a browser (textual-serve).",
}


class _Version(argparse.Action):
    """`--version`: the installed version, read (importlib.metadata, ~30 ms) only when asked for."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        from gpuadvisor.tui.version import generator

        sys.stdout.write(generator() + "\n")  # where argparse's own version action prints it
        parser.exit()


def build_parser(only: str | None = "*") -> argparse.ArgumentParser:
    """The whole command line; `only` names the one subcommand whose arguments are registered ("*": all, None:
    none, for launching the TUI). Registering a subcommand imports its module — `recommend`'s flags come from the
    answers model — so the TUI's start and one command's run do not pay for the others'."""
    parser = argparse.ArgumentParser(
        prog="gpuadvisor",
        description="Decide what GPU hardware to buy or rent. Without a subcommand, opens the interactive advisor.",
        epilog="Exit codes: 0 success, 1 a rule failed, 2 bad input, 3 no feasible option, 4 an I/O failure "
               "(a report or standard output could not be written), 70 an internal error, 130 interrupted.",
    )
    parser.add_argument("--answers", metavar="FILE", help="open the TUI with these answers, straight at the results")
    parser.add_argument("--theme", default=None, help="TUI theme (textual-dark, textual-light, ...)")
    parser.add_argument("--debug", action="store_true", help="on an error, show the traceback too")
    parser.add_argument("--version", action=_Version, nargs=0,
                        help="print the version (every report also names its knowledge base's)")
    # `gpuadvisor serve` starts each browser session with these (tui/served.py); not for the terminal
    parser.add_argument("--served", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--served-data-dir", default=None, help=argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in SUBCOMMANDS.items():
        sub_parser = sub.add_parser(name, help=help_text, description=help_text)
        if only in ("*", name):
            importlib.import_module(f"gpuadvisor.tui.commands.{name}").register(sub_parser)
    return parser


LONG_RUNNING = frozenset({"serve"})
"""Subcommands that stay up (a web server): they keep the cycle collector."""


def _named_command(argv: Sequence[str]) -> str | None:
    """The subcommand the arguments name, if any (the first argument that is one)."""
    return next((a for a in argv if a in SUBCOMMANDS), None)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. The one error path: every failure ends here as one line on stderr and an exit code
    (README, "Exit codes"); a traceback only with --debug."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    args = [a for a in args if a != "--debug"]  # accepted anywhere: before or after the subcommand
    if argv is None:  # the real process, not a test calling main() in its own
        _collect_cycles_only_if_long_running(_named_command(args))
    saved = streams.install()
    try:
        return _run(args, saved)
    except SystemExit:  # argparse: --help (0) or a usage error (2, its one-line message already printed)
        raise
    except AdvisorError as exc:
        _fail(str(exc), debug)
        if isinstance(exc, streams.OutputError) and argv is None:  # the real stdout, not a test's
            streams.silence_stdout()
        return exc.exit_code
    except KeyboardInterrupt:
        streams.say("gpuadvisor: interrupted")
        if argv is None:  # the real process: end it here (see _exit_interrupted)
            _exit_interrupted()
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader left (`| head`): what it wanted was written
        if argv is None:
            streams.silence_stdout()
        return EXIT_OK
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        _fail(f"{where}{exc.strerror or exc}", debug)
        return EXIT_IO
    except Exception as exc:  # a bug: still one line, and the traceback on request
        _fail(f"internal error: {type(exc).__name__}: {shorten(str(exc), 200)} (run with --debug for the traceback, "
              "and please report it)", debug)
        return EXIT_INTERNAL
    finally:
        streams.restore(saved)


def _collect_cycles_only_if_long_running(command: str | None) -> None:
    """A one-shot command (estimate, recommend, report, kb, schema) runs for about half a second and frees almost no
    cycles: the cycle collector there only rescans what imports and the catalog built, and collects everything once
    more at exit — 7 % of `recommend`'s CPU, with the same peak memory either way (measured on the four examples;
    docs/performance.md). The TUI and `serve` stay up and keep it."""
    if command is not None and command not in LONG_RUNNING:
        gc.disable()


def _exit_interrupted() -> NoReturn:
    """Exit 130 now. An interrupt that lands while a library runs code through the C API (an import compiling
    bytecode, a `PyRun_*` call) marks the interpreter as ended by an unhandled KeyboardInterrupt even though it was
    handled here, and CPython then kills the process with SIGINT at exit (exit status -2, seen about one run in
    eight when Ctrl+C lands in the first tenth of a second). Streams are flushed first; nothing else is pending."""
    for stream in (sys.stdout, sys.stderr):
        with suppress(Exception):
            stream.flush()
    os._exit(EXIT_INTERRUPTED)


def _run(argv: Sequence[str], saved: tuple[object, object]) -> int:
    args = build_parser(only=_named_command(argv)).parse_args(argv)
    if args.command is None:
        from gpuadvisor.tui.launch import launch  # Textual is imported only here

        streams.restore(saved)  # type: ignore[arg-type]  # the TUI owns the terminal
        return launch(answers_path=args.answers, theme=args.theme, served=args.served,
                      served_data_dir=args.served_data_dir)
    module = importlib.import_module(f"gpuadvisor.tui.commands.{args.command}")
    code: int = module.run(args)
    streams.finish()
    return code


def _fail(message: str, debug: bool) -> None:
    """The error line (bounded: a message is at most a few problems of shortened values), and the traceback with
    --debug."""
    lines = message.splitlines() or [""]
    if len(lines) > MAX_LINES:
        lines = [*lines[:MAX_LINES], f"... and {len(lines) - MAX_LINES:,} more lines"]
    text = "\n".join(shorten(line, MAX_LINE) for line in lines)
    streams.say(f"gpuadvisor: error: {text}")
    if debug:
        import traceback

        streams.say(traceback.format_exc().rstrip())


if __name__ == "__main__":
    sys.exit(main())
