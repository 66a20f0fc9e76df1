"""The `gpuadvisor` command: launches the TUI, or runs a consultation headless for scripts and CI.

Subcommands live in `gpuadvisor.tui.commands.<name>` modules, each with `register(subparsers)` and `run(args) -> int`.
They are imported lazily so that `gpuadvisor estimate --json` never pays for importing Textual.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from gpuadvisor.knowledge.errors import AdvisorError

SUBCOMMANDS = {
    "estimate": "Size one configuration: parameters, memory per GPU, speed, training time and cost.",
    "recommend": "Run a whole consultation from an answers file (or flags) and rank hardware options.",
    "report": "Re-render a saved JSON report in another format.",
    "kb": "Inspect and validate the knowledge base and your overlays.",
    "schema": "Print the JSON Schema of the --json outputs.",
    "serve": "Serve the advisor as a web page: the same app, in a browser (textual-serve).",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gpuadvisor",
        description="Decide what GPU hardware to buy or rent. Without a subcommand, opens the interactive advisor.",
    )
    parser.add_argument("--answers", metavar="FILE", help="open the TUI with these answers, straight at the results")
    parser.add_argument("--theme", default=None, help="TUI theme (textual-dark, textual-light, ...)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in SUBCOMMANDS.items():
        module = importlib.import_module(f"gpuadvisor.tui.commands.{name}")
        module.register(sub.add_parser(name, help=help_text, description=help_text))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command is None:
            from gpuadvisor.tui.launch import launch  # Textual is imported only here

            return launch(answers_path=args.answers, theme=args.theme)
        module = importlib.import_module(f"gpuadvisor.tui.commands.{args.command}")
        code: int = module.run(args)
        return code
    except AdvisorError as exc:
        print(f"gpuadvisor: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
