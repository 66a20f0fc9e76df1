"""`gpuadvisor kb quote`: keep your own vendor quotes, which win over the knowledge base's prices while valid.

    gpuadvisor kb quote add --vendor Dell --accelerator nvidia-h100-sxm5 --usd 27500 --date 2026-11-20 --valid-days 30
    gpuadvisor kb quote add --vendor Supermicro --system hgx-h100-8gpu-server --usd 41000 --date 2026-11-20 \
        --valid-until 2027-01-31
    gpuadvisor kb quote list
    gpuadvisor kb quote remove dell-nvidia-h100-sxm5-2026-11-20

The quotes live in your overlay directory (`gpuadvisor kb path`), file quotes.toml, written atomically. A quote
for a part is per accelerator; for a system, per machine (`--whole` when the price includes the machine's
accelerators). Bad input names the field and exits 2.
"""

from __future__ import annotations

import argparse
import re
from datetime import date, timedelta
from typing import Any

from gpuadvisor.knowledge.paths import overlay_dir

QUOTE_FIELDS = ("id", "vendor", "accelerator", "system", "usd", "includes_accelerators", "quoted_on", "valid_until",
                "notes")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    quote = sub.add_parser("quote", help="add, list or remove your own vendor quotes (they win over estimates)",
                           description="Your dated vendor quotes for a part or a machine. While valid, a quote "
                                       "replaces the knowledge base's price in every plan (shown as 'your quote "
                                       "(date)'); after its last valid day it is ignored, and the consultation "
                                       "says so.")
    quote.set_defaults(quote_parser=quote, quote_action=None)
    qsub = quote.add_subparsers(dest="quote_action", metavar="ACTION")
    add = qsub.add_parser("add", help="record a quote")
    add.add_argument("--vendor", required=True, help="who quoted it (a reseller, an OEM)")
    what = add.add_mutually_exclusive_group(required=True)
    what.add_argument("--accelerator", metavar="ID", help="the part quoted (an id of `gpuadvisor kb list "
                                                          "accelerators`): the price is per accelerator")
    what.add_argument("--system", metavar="ID", help="the machine quoted (an id of `gpuadvisor kb list systems`): "
                                                     "the price is per machine")
    add.add_argument("--usd", required=True, metavar="PRICE", help="the quoted price in US dollars")
    add.add_argument("--whole", action="store_true",
                     help="a system quote that includes the machine's accelerators (an HGX server with its GPUs)")
    add.add_argument("--date", dest="quoted_on", default=None, metavar="YYYY-MM-DD",
                     help="the day it was quoted (default: today)")
    valid = add.add_mutually_exclusive_group(required=True)
    valid.add_argument("--valid-until", metavar="YYYY-MM-DD", help="its last valid day")
    valid.add_argument("--valid-days", metavar="N", help="valid for N days from the quote's date")
    add.add_argument("--id", dest="quote_id", default=None, help="a name for it (default: vendor-target-date)")
    add.add_argument("--notes", default=None, help="anything worth keeping (quote number, terms)")
    qsub.add_parser("list", help="list your quotes and whether each is valid today")
    remove = qsub.add_parser("remove", help="delete a quote")
    remove.add_argument("quote_id", metavar="ID", help="the quote's id (see `gpuadvisor kb quote list`)")


def run(args: argparse.Namespace) -> int:
    if args.quote_action == "add":
        return _add(args)
    if args.quote_action == "list":
        return _list()
    if args.quote_action == "remove":
        return _remove(args.quote_id)
    args.quote_parser.print_help()
    return 2


def _path() -> Any:
    from gpuadvisor.knowledge.quotes import QUOTES_FILE

    return overlay_dir() / QUOTES_FILE


def _fail(field: str, message: str) -> None:
    from gpuadvisor.knowledge.errors import KnowledgeError

    raise KnowledgeError(f"kb quote {field}: {message}")


def _day(field: str, text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        _fail(field, f"{text!r} is not a date YYYY-MM-DD")
        raise AssertionError from None  # unreachable: _fail raises


_SLUG = re.compile(r"[^a-z0-9]+")


def _add(args: argparse.Namespace) -> int:
    from gpuadvisor.knowledge.bounds import bound
    from gpuadvisor.knowledge.loader import load_catalog
    from gpuadvisor.knowledge.quotes import read_quotes, today, write_quotes
    from gpuadvisor.knowledge.sanitize import shorten
    from gpuadvisor.knowledge.schema import Quote
    from gpuadvisor.knowledge.statefile import locked

    try:
        usd = bound("purchase_usd").check(float(args.usd.replace(",", "").lstrip("$")), "the price in dollars")
    except ValueError as exc:
        _fail("--usd", f"{shorten(repr(args.usd), 40)}: {exc}" if "must be" in str(exc) else
              f"{shorten(repr(args.usd), 40)} is not a price in dollars")
    quoted = _day("--date", args.quoted_on) if args.quoted_on else today()
    if args.valid_until is not None:
        until = _day("--valid-until", args.valid_until)
    else:
        try:
            days = int(args.valid_days)
        except ValueError:
            _fail("--valid-days", f"{args.valid_days!r} is not a whole number of days")
        if not 1 <= days <= 3650:
            _fail("--valid-days", f"{days} is not between 1 and 3650 days")
        until = quoted + timedelta(days=days)
    if until < quoted:
        _fail("--valid-until", f"{until} is before the quote's date {quoted}")
    catalog = load_catalog()
    target = args.accelerator or args.system
    known = catalog.accelerators if args.accelerator else catalog.systems
    if target not in known:
        from difflib import get_close_matches

        close = get_close_matches(target, list(known), n=3, cutoff=0.5)
        hint = f" (closest: {', '.join(close)})" if close else ""
        flag = "--accelerator" if args.accelerator else "--system"
        _fail(flag, f"unknown {flag[2:]} {target!r}{hint}; see `gpuadvisor kb list {flag[2:]}s`")
    if args.whole and (args.system is None or catalog.systems[args.system].accelerator is None):
        _fail("--whole", "applies to a system built around one part (an HGX/OAM server, a rack), not to a "
                         "chassis that takes cards or to a part")
    if args.system is not None and not args.whole:
        system = catalog.systems[args.system]
        if system.accelerator is not None and catalog.accelerators[system.accelerator].purchase_price_usd is None:
            _fail("--whole", f"{args.system} is sold whole with its {system.accelerator} (the part has no price of "
                             "its own): quote the whole machine and add --whole")
    qid = args.quote_id or _SLUG.sub("-", f"{args.vendor}-{target}-{quoted.isoformat()}".casefold()).strip("-")
    row: dict[str, Any] = {"id": qid, "vendor": args.vendor, "usd": usd, "quoted_on": quoted.isoformat(),
                           "valid_until": until.isoformat()}
    row["accelerator" if args.accelerator else "system"] = target
    if args.whole:
        row["includes_accelerators"] = True
    if args.notes:
        row["notes"] = args.notes
    try:
        Quote(**row)
    except ValueError as exc:  # pydantic names the field
        _fail("add", str(exc).splitlines()[-1] if str(exc) else "invalid quote")
    with locked(_path()):  # read, add, rewrite: concurrent `kb quote add`s each keep their quote
        rows = read_quotes(_path())
        if any(r.get("id") == qid for r in rows):
            _fail("--id", f"a quote {qid!r} exists already: remove it first or give another --id")
        write_quotes(_path(), [*rows, row])
    state = "valid" if until >= today() else "already expired (kept, but ignored)"
    per = "per accelerator" if args.accelerator else ("per machine with its accelerators" if args.whole
                                                      else "per machine")
    print(f"Added quote {qid}: {args.vendor}, {target}, ${usd:,.2f} {per}, quoted {quoted}, valid until {until} "
          f"({state}).\nIt wins over the knowledge base's price in every plan while valid; file: {_path()}")
    return 0


def _list() -> int:
    from gpuadvisor.knowledge.quotes import read_quotes, today

    rows = read_quotes(_path())
    if not rows:
        print(f"No quotes yet ({_path()}). Add one: gpuadvisor kb quote add --vendor V --accelerator ID --usd N "
              "--valid-days 30")
        return 0
    now = today()
    from gpuadvisor.tui.commands.text_table import text_table as _table

    table = []
    for r in sorted(rows, key=lambda r: (str(r.get("quoted_on")), str(r.get("id")))):
        until = str(r.get("valid_until", ""))
        try:
            state = "valid" if date.fromisoformat(until) >= now else f"expired on {until}: ignored"
        except ValueError:
            state = "invalid date"
        target = r.get("accelerator") or r.get("system") or ""
        per = "/accelerator" if r.get("accelerator") else ("/machine, whole" if r.get("includes_accelerators")
                                                          else "/machine")
        usd = r.get("usd")
        price = f"${usd:,.2f}{per}" if isinstance(usd, (int, float)) else str(usd)
        table.append([str(r.get("id")), str(r.get("vendor")), str(target), price, str(r.get("quoted_on")), until,
                      state])
    print(_table(["id", "vendor", "part or system", "price", "quoted", "valid until", f"on {now}"], table))
    print(f"\n{len(rows)} quote{'s' if len(rows) != 1 else ''} in {_path()}")
    return 0


def _remove(qid: str) -> int:
    from gpuadvisor.knowledge.quotes import read_quotes, write_quotes
    from gpuadvisor.knowledge.statefile import locked

    with locked(_path()):
        rows = read_quotes(_path())
        kept = [r for r in rows if r.get("id") != qid]
        if len(kept) == len(rows):
            known = ", ".join(str(r.get("id")) for r in rows) or "none"
            _fail("remove", f"no quote {qid!r} (yours: {known})")
        write_quotes(_path(), kept)
    print(f"Removed quote {qid}; {len(kept)} left.")
    return 0
