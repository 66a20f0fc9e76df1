"""`gpuadvisor kb refresh`: fetch current on-demand and spot prices from gpuhunt's public catalogs.

    gpuadvisor kb refresh                       # download the newest catalogs (progress on stderr)
    gpuadvisor kb refresh --from DIR|ZIP|CSV    # the same catalogs from disk (offline, air-gapped)
    gpuadvisor kb refresh --providers aws,runpod --timeout 60

The prices are written to one overlay in the user's data directory, replaced whole by the next refresh and written
atomically (a failed refresh leaves the previous one in use). The shipped, sourced prices stay the fallback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from contextlib import suppress
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuadvisor.knowledge.price_catalog import Progress, ReadResult
    from gpuadvisor.knowledge.price_refresh import RefreshPlan, Summary

MOVES_SHOWN = 5


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    refresh = sub.add_parser(
        "refresh", help="fetch current cloud prices (gpuhunt's public catalogs) into your data directory",
        description="Fetch current on-demand and spot prices from gpuhunt's public, credential-free catalogs (AWS, "
                    "Azure, GCP, OCI, Lambda, Nebius, RunPod) and write them as a dated overlay in your data "
                    "directory. Each refresh replaces the previous one; the shipped prices stay the fallback.")
    refresh.add_argument("--from", dest="source", type=Path, default=None, metavar="PATH",
                         help="read the catalogs from disk instead: a directory of gpuhunt <provider>.csv files, a "
                              "catalog.zip archive, or one CSV file (a `version` file beside them dates them)")
    refresh.add_argument("--providers", default=None, metavar="LIST",
                         help="comma-separated providers to refresh (default: all mapped ones: "
                              "aws, azure, gcp, oci, lambdalabs, nebius, runpod)")
    refresh.add_argument("--timeout", type=_seconds, default=None, metavar="SECONDS",
                         help="longest wait for each download (default 30)")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(f"{value:g} s is not between 0 and 3600 seconds")
    return value


def run(args: argparse.Namespace) -> int:
    names = [p for p in (args.providers or "").split(",") if p.strip()] or None
    if args.source is not None:
        return fetch_and_refresh(args.source, names, args.timeout, None, out=print)
    with _progress() as progress:
        return fetch_and_refresh(None, names, args.timeout, progress, out=print)


def fetch_and_refresh(source: Path | None, providers: list[str] | None, timeout: float | None,
                      progress: Progress | None, *, out: Callable[[str], None]) -> int:
    """Read the catalogs (from `source`, else downloaded) and refresh the overlay in the user's data directory; the
    CLI's and the TUI's (a worker's) one entry point."""
    from gpuadvisor.knowledge.paths import refreshed_prices_path
    from gpuadvisor.knowledge.price_catalog import DEFAULT_TIMEOUT_S, catalog_url, download, read_path
    from gpuadvisor.knowledge.price_refresh import providers_of

    wanted = providers_of(providers)
    if source is not None:
        path = source.expanduser().absolute()
        result, origin = read_path(path, wanted), str(path)
    else:
        result = download(wanted, timeout=timeout or DEFAULT_TIMEOUT_S, progress=progress)
        origin = catalog_url()
    return refresh(result, origin, refreshed_prices_path(), out=out)


def refresh(result: ReadResult, origin: str, target: Path, *, out: Callable[[str], None],
            today: date | None = None) -> int:
    """Map the catalogs read, write the overlay atomically (after checking it loads) and print the summary. Also the
    TUI's entry point (run in a worker)."""
    from gpuadvisor.knowledge.errors import KnowledgeError
    from gpuadvisor.knowledge.loader import load_catalog
    from gpuadvisor.knowledge.price_refresh import (
        clean_stale_temp_files,
        overlay_text,
        plan_refresh,
        previous_prices,
        shipped_prices,
        summarize,
        write_overlay,
    )
    from gpuadvisor.rules.pricing.price_age import today as price_today

    clean_stale_temp_files(target.parent, target.name)  # what a killed refresh left behind
    shipped = load_catalog(user_dir=None, refreshed=None)
    plan = plan_refresh(result.catalogs, shipped, refreshed_on=today or price_today(), origin=origin,
                        ignored_files=result.ignored)
    if not plan.offers:
        raise KnowledgeError(f"{origin}: none of the {plan.gpu_rows} GPU offers could be mapped to a knowledge-base "
                             f"accelerator; nothing written (the previous prices stay in use)")
    text = overlay_text(plan, _gpuhunt_version())
    summary = summarize(plan, previous_prices(target), shipped_prices(shipped))
    write_overlay(text, target, lambda candidate: load_catalog(user_dir=None, refreshed=candidate))
    for line in summary_lines(plan, summary, target):
        out(line)
    return 0


def _gpuhunt_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gpuhunt")
    except PackageNotFoundError:
        return "unknown"


def summary_lines(plan: RefreshPlan, summary: Summary, target: Path) -> list[str]:
    """What the refresh read, mapped, changed and refused, in a few lines."""
    # TODO(issue 20): pass the catalog strings (instance and accelerator names, regions) through the output
    # sanitiser once it lands; price_catalog only replaces control characters for now.
    dates = sorted({c.as_of.isoformat() for c in plan.catalogs if c.as_of})
    dated = f"dated {dates[0]}" if len(dates) == 1 else (f"dated {dates[0]} to {dates[-1]}" if dates else
                                                         f"undated (prices dated {plan.refreshed_on.isoformat()})")
    skipped = f", {plan.rows_skipped} rows skipped (first: {_first_problem(plan)})" if plan.rows_skipped else ""
    n_cat = len(plan.catalogs)
    lines = [
        f"Read {n_cat} gpuhunt catalog{'s' if n_cat != 1 else ''} ({', '.join(c.provider for c in plan.catalogs)}; "
        f"{dated}) from {plan.origin}: {plan.rows_read} rows, {plan.gpu_rows} GPU offers{skipped}.",
        f"Mapped {plan.rows_mapped} of {plan.gpu_rows} GPU offers to {len(plan.offers)} prices of "
        f"{len({o.id for o in plan.offers})} instances: {len(summary.new)} new, {len(summary.changed)} changed, "
        f"{summary.unchanged} unchanged" + (f"; {summary.dropped} no longer listed (the shipped price is used again)"
                                            if summary.dropped else "") + ".",
    ]
    if summary.changed:
        lines.append("Biggest moves:")
        for m in summary.changed[:MOVES_SHOWN]:
            lines.append(f"  {m.name} {m.key[1]}: ${m.before:,.2f}/h -> ${m.after:,.2f}/h ({m.ratio:+.1%})")
    if plan.refused:
        total = sum(r.offers for r in plan.refused)
        lines.append(f"Not mapped ({total} offer{'s' if total != 1 else ''}; never guessed):")
        for r in plan.refused:
            kind = "ambiguous: " if r.ambiguous else ""
            shown = ", ".join(r.instances[:3]) + (f" and {len(r.instances) - 3} more" if len(r.instances) > 3 else "")
            lines.append(f"  {r.provider} {r.label} ({shown}): {kind}{r.reason}")
    from gpuadvisor.knowledge.price_refresh import zero_price_lines

    lines += zero_price_lines(plan)
    if plan.ignored_files:
        lines.append(f"Skipped files of providers not mapped in price_catalogs.toml: {', '.join(plan.ignored_files)}")
    lines.append(f"Wrote {target}. Refreshed prices are used from now on; the shipped prices stay the fallback.")
    return lines


def _first_problem(plan: RefreshPlan) -> str:
    return next((f"{c.origin} {c.first_problem}" for c in plan.catalogs if c.first_problem), "")


class _progress:
    """A progress display on stderr while downloading: a bar on a terminal, one line per catalog otherwise."""

    def __enter__(self) -> Progress:
        self._bar = None
        self._seen: set[str] = set()
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

            self._bar = Progress(TextColumn("downloading {task.description}"), BarColumn(), DownloadColumn(),
                                 TransferSpeedColumn(), console=Console(stderr=True), transient=True)
            self._bar.start()
            self._tasks: dict[str, int] = {}
        return self._report

    def _report(self, label: str, done: int, total: int | None) -> None:
        if self._bar is not None:
            if label not in self._tasks:
                self._tasks[label] = int(self._bar.add_task(label, total=total))
            self._bar.update(self._tasks[label], completed=done, total=total)  # type: ignore[arg-type]
        elif label not in self._seen:
            self._seen.add(label)
            print(f"downloading {label} ...", file=sys.stderr, flush=True)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            with suppress(Exception):
                self._bar.stop()

