"""Start the TUI: `gpuadvisor` opens the welcome screen, `gpuadvisor --answers FILE` opens straight at the results.

A bad answers file or theme name raises `InputError` before the terminal is taken over, so the command line prints
one clear line (naming the file and field) instead of starting a broken session.
"""

from __future__ import annotations

from pathlib import Path


def launch(answers_path: str | None, theme: str | None) -> int:
    """Run the app until the user quits; the exit code for the shell."""
    from gpuadvisor.knowledge.errors import InputError
    from gpuadvisor.tui.app import GpuAdvisorApp

    answers = None
    if answers_path is not None:
        from gpuadvisor.rules.lifecycle_answers import load_any

        answers = load_any(Path(answers_path).expanduser())  # one workload or a lifecycle
    app = GpuAdvisorApp(answers, theme=theme)
    if theme is not None and theme not in app.available_themes:
        names = ", ".join(sorted(app.available_themes))
        raise InputError(f"--theme: unknown theme {theme!r}; choose one of {names}")
    app.run()
    return app.return_code or 0
