"""Start the TUI: `gpuadvisor` opens the welcome screen, `gpuadvisor --answers FILE` opens straight at the results.

A bad answers file or theme name raises `InputError` before the terminal is taken over, so the command line prints
one clear line (naming the file and field) instead of starting a broken session.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any


def launch(answers_path: str | None, theme: str | None, *, served: bool = False,
           served_data_dir: str | None = None) -> int:
    """Run the app until the user quits; the exit code for the shell. `served`: a browser session of `gpuadvisor
    serve` (tui/served.py), `served_data_dir` the folder its visitor may open answers from."""
    from gpuadvisor.knowledge.errors import InputError

    if served:
        from gpuadvisor.tui import served as served_mode

        served_mode.enable(served_mode.Served(Path(served_data_dir) if served_data_dir else None))
    from gpuadvisor.tui.app import GpuAdvisorApp

    answers = None
    if answers_path is not None:
        from gpuadvisor.rules.lifecycle.answers import load_any

        answers = load_any(Path(answers_path).expanduser())  # one workload or a lifecycle
    app = GpuAdvisorApp(answers, theme=theme)
    if theme is not None and theme not in app.available_themes:
        names = ", ".join(sorted(app.available_themes))
        raise InputError(f"--theme: unknown theme {theme!r}; choose one of {names}")
    if not served:
        _need_a_terminal()  # after the answers and the theme are checked: each mistake is named first
    previous = _on_termination(app.request_termination)
    try:
        app.run()
    finally:
        _restore(previous)
    if app.terminated_by is not None:
        _end_by(app.terminated_by)
    return app.return_code or 0


_SIGNALS = ("SIGTERM", "SIGHUP")


def _need_a_terminal() -> None:
    """Refuse to start without a terminal on standard input and output (`gpuadvisor </dev/null >out` used to run for
    ever writing escape sequences into `out`; `gpuadvisor <&-` ended in a traceback): one line, exit 2."""
    import sys

    from gpuadvisor.knowledge.errors import InputError

    def tty(stream: object) -> bool:
        try:
            return stream is not None and bool(stream.isatty())  # type: ignore[attr-defined]
        except (OSError, ValueError):
            return False

    missing = [name for name, stream in (("input", sys.stdin), ("output", sys.stdout)) if not tty(stream)]
    if missing:
        raise InputError(f"the advisor needs a terminal, and standard {' and '.join(missing)} "
                         f"{'is' if len(missing) == 1 else 'are'} not one; without a terminal use `gpuadvisor "
                         "recommend --answers FILE` (or `gpuadvisor serve` for a browser)")


def _on_termination(handler: Callable[[int], None]) -> dict[int, Any]:
    """Route SIGTERM and SIGHUP to `handler` while the app runs (set before it takes the terminal, so no signal
    finds the terminal raw with nobody to restore it); the previous handlers, to put back."""
    import signal

    previous: dict[int, Any] = {}
    for name in _SIGNALS:
        signum = getattr(signal, name, None)
        if signum is not None:
            previous[signum] = signal.signal(signum, lambda n, _frame: handler(n))
    return previous


def _restore(previous: dict[int, Any]) -> None:
    import signal

    for signum, old in previous.items():
        signal.signal(signum, old)


def _end_by(signum: int) -> None:
    """The terminal is restored: now end as the signal's sender asked (its default action, so the shell and a
    supervisor see "terminated by SIGTERM", exit status 143), after one line saying so."""
    import os
    import signal
    import sys

    name = signal.Signals(signum).name
    try:
        print(f"gpuadvisor: {'terminated' if name == 'SIGTERM' else 'hung up'} ({name})", file=sys.stderr, flush=True)
    except (OSError, ValueError):  # a hung-up terminal cannot be written to
        pass
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
