"""`gpuadvisor report --from report.json --format md|html|json|text [--output FILE] [--force]`.

Re-renders a saved JSON report (the master copy of a consultation) in any format. Without --output, text, Markdown
and JSON go to stdout and HTML is saved under its default name in the current directory (a browser needs a file).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gpuadvisor.tui import streams
from gpuadvisor.tui.report import Contents

FORMAT_NAMES = "md, html, json or text"


def _format(value: str) -> str:
    from gpuadvisor.tui.report import normalize_format

    try:
        return normalize_format(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--from", dest="source", metavar="REPORT.json", required=True,
                        help="a JSON report saved by `gpuadvisor recommend --format json` or the TUI")
    parser.add_argument("--format", "-f", dest="format", type=_format, default=None, metavar="FORMAT",
                        help=f"{FORMAT_NAMES} (default: from the --output extension, else md)")
    parser.add_argument("--output", "-o", metavar="FILE",
                        help="write here ('-' for stdout); default: stdout, or for html "
                             "gpuadvisor-<workload>-<model>-<date>.html in the current directory")
    parser.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    Contents.add_flags(parser)
    parser.set_defaults(command="report")


def run(args: argparse.Namespace) -> int:
    from gpuadvisor.tui.report import default_filename, format_for_path, render, save_report
    from gpuadvisor.tui.report.jsonfmt import load_saved

    result, cut = load_saved(Path(args.source))
    contents = Contents.of(args)
    if cut is not None and (contents.full or contents.why):  # printed 2,281 lines of recommend --full's 6,042, unsaid
        print(f"gpuadvisor: {args.source} was saved within its size budget: each rule-out keeps its chain to depth "
              f"{cut} only; `gpuadvisor recommend --full --format json` saves every step", file=sys.stderr)
    output: str | None = args.output
    fmt: str = args.format or (format_for_path(output) if output and output != "-" else None) or "md"
    to_stdout = output == "-" or (output is None and fmt != "html")
    text = render(result, fmt, contents=contents,
                  columns=streams.terminal_columns() if to_stdout else None)
    if to_stdout:
        sys.stdout.write(text)
        sys.stdout.flush()
        return 0
    path = save_report(text, output or default_filename(result, fmt), force=args.force)
    print(f"gpuadvisor: wrote {path.resolve()}", file=sys.stderr)
    return 0
