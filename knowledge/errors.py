"""Errors a user can cause and fix: each carries a message naming the file, entry or field at fault.

The command line prints `gpuadvisor: error: <message>` and exits with `exit_code`; it never shows a traceback for these.
The exit codes are named here (the lowest layer) so every command and the README agree.
"""

from __future__ import annotations

from gpuadvisor.knowledge.sanitize import shorten


class AdvisorError(Exception):
    """Base of every expected, user-facing error."""

    exit_code = 2  # EXIT_BAD_INPUT


class KnowledgeError(AdvisorError):
    """A knowledge-base or overlay file is malformed (message names file, line, entry id and field)."""


def _shown(query: str) -> str:
    """The name as typed, quoted and cut (a 1 MB name is not echoed whole; see `sanitize.shorten`)."""
    from gpuadvisor.knowledge.sanitize import shorten

    return shorten(repr(query))


class UnknownNameError(AdvisorError):
    """A model, accelerator or precision name matched nothing; `suggestions` holds the closest names."""

    def __init__(self, what: str, query: str, suggestions: list[str]) -> None:
        self.what, self.query, self.suggestions = what, query, suggestions
        hint = f"; closest: {', '.join(suggestions)}" if suggestions else ""
        super().__init__(f"unknown {what} {_shown(query)}{hint}")


class AmbiguousNameError(AdvisorError):
    """A loose name matched several entries; `candidates` lists them so the user can pick one."""

    def __init__(self, what: str, query: str, candidates: list[tuple[str, str]]) -> None:
        self.what, self.query, self.candidates = what, query, candidates
        listing = "; ".join(f"{cid} ({name})" for cid, name in candidates)
        super().__init__(f"{what} {_shown(query)} is ambiguous, which one? {listing}")


class InputError(AdvisorError):
    """A command-line value or answers-file field is invalid or contradicts another (message names the fields)."""


# Exit codes of every command (the README's table lists the same; tests/test_exit_codes.py checks both agree).
EXIT_OK = 0
EXIT_RULE_FAILED = 1
"""A rule failed while a consultation ran (RuleError)."""
EXIT_BAD_INPUT = 2
"""A file, flag or answer is invalid: the message names the file, line and field."""
EXIT_INFEASIBLE = 3
"""`recommend` found no option that meets every requirement."""
EXIT_IO = 4
"""Reading or writing failed for a reason outside the input's content: a full disk, a closed or full standard
output, a permission denied on a file gpuadvisor must write, an unreadable directory."""
EXIT_INTERNAL = 70
"""A bug in gpuadvisor (an unexpected exception): one line, and the traceback with --debug (EX_SOFTWARE)."""
EXIT_INTERRUPTED = 130
"""Ctrl+C (128 + SIGINT), as shells report it."""

MAX_PROBLEMS = 5
"""Problems listed in one error before the rest are only counted (10,000 bad array elements give 6 lines)."""


class IOFailure(AdvisorError):
    """Reading or writing failed for a reason that is not the input's content (exit 4, not 2)."""

    exit_code = EXIT_IO


MAX_PROBLEM_CHARS = 1_000
"""Longest line of a problem shown: a message that echoes a hostile value whole (a 100,000-bracket severity in a
rule pack) is cut, with its length, wherever the value was echoed."""


def bounded(problems: list[str], where: str = "", limit: int = MAX_PROBLEMS) -> str:
    """The first `limit` problems, one per line (each at most MAX_PROBLEM_CHARS), and how many more there are."""
    shown = [shorten(p, MAX_PROBLEM_CHARS) for p in problems[:limit]]
    if len(problems) > limit:
        more = len(problems) - limit
        shown.append(f"{where + ': ' if where else ''}... and {more:,} more problem{'s' if more != 1 else ''}")
    return "\n".join(shown)
