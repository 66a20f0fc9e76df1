"""Plain-text tables for the `kb` commands (kb list, kb quote list): one helper, so the commands do not import
each other."""

from __future__ import annotations

from collections.abc import Sequence


def text_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Left-aligned text columns, right-aligned numeric ones (a cell that starts with a digit, '$' or '~')."""
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    numeric = [all((not r[i]) or r[i][0] in "0123456789$~-" for r in rows) and any(r[i] for r in rows)
               for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        out = [c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric, strict=True)]
        return "  ".join(out).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)])
