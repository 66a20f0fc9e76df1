"""Your own quotes (`gpuadvisor kb quote add|list|remove`, knowledge/quotes.py): written atomically into the overlay,
they replace the knowledge base's price while valid (price kind `quote`, "your quote (date)") and are ignored,
visibly, once expired."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from gpuadvisor.knowledge import quotes as quotes_module
from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.errors import KnowledgeError
from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.knowledge.quotes import QUOTES_FILE, apply_quotes, read_quotes, write_quotes
from gpuadvisor.knowledge.schema import Quote
from gpuadvisor.rules.pricing.purchases import purchase_bill
from gpuadvisor.tui.cli import main
from gpuadvisor.tui.widgets.format import price_label

TODAY = "2026-11-28"

ANSWERS = """
workload = "inference"
[model]
name = "llama-3.1-8b"
[deployment]
where = "on_prem"
[constraints]
vendors = ["nvidia"]
"""


@pytest.fixture(autouse=True)
def fixed_day(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(quotes_module.TODAY_ENV, TODAY)


@pytest.fixture
def answers_file(tmp_path: Path) -> Path:
    path = tmp_path / "answers.toml"
    path.write_text(ANSWERS, encoding="utf-8")
    return path


def recommend(answers_file: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["recommend", "--answers", str(answers_file), "--format", "json", "--top", "30"]) == 0
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    return doc


def desktop_4090(doc: dict[str, Any]) -> dict[str, Any]:
    return next(r for r in doc["recommendations"]
                if r["accelerator"]["id"] == "nvidia-rtx-4090" and r["unit"]["name"] == "desktop PC")


def test_round_trip_add_consult_list_remove(isolated_dirs: Path, answers_file: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    shipped = load_catalog(user_dir=None)
    host = shipped.systems["desktop-single-consumer-gpu"].price
    card = shipped.accelerators["nvidia-rtx-4090"].purchase_price_usd
    assert host is not None and card is not None and card.kind == "msrp"
    before = desktop_4090(recommend(answers_file, capsys))
    assert before["cost"]["price_kind"] == "msrp"
    assert before["cost"]["capex_usd"] == pytest.approx(card.value + host.value)  # $1,599 + $1,380

    assert main(["kb", "quote", "add", "--vendor", "Micro Center", "--accelerator", "nvidia-rtx-4090",
                 "--usd", "1,500", "--date", "2026-11-20", "--valid-days", "30", "--notes", "Q-1234"]) == 0
    out = capsys.readouterr().out
    assert "Added quote micro-center-nvidia-rtx-4090-2026-11-20" in out and "valid until 2026-12-20 (valid)" in out
    path = isolated_dirs / "knowledge" / QUOTES_FILE
    assert read_quotes(path) == [{"id": "micro-center-nvidia-rtx-4090-2026-11-20", "vendor": "Micro Center",
                                  "usd": 1500.0, "quoted_on": "2026-11-20", "valid_until": "2026-12-20",
                                  "accelerator": "nvidia-rtx-4090", "notes": "Q-1234"}]

    quoted = desktop_4090(recommend(answers_file, capsys))
    cost = quoted["cost"]
    assert cost["price_kind"] == "quote" and cost["price_as_of"] == "2026-11-20"
    assert cost["capex_usd"] == pytest.approx(1500 + host.value)  # the quote, plus the host as before
    assert "quote-micro-center-nvidia-rtx-4090-2026-11-20" in cost["price_source"]
    assert price_label(cost["price_kind"], cost["price_as_of"], cost["price_age_months"]) == \
        "your quote (2026-11-20)"

    assert main(["kb", "quote", "list"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("micro-center-"))
    assert "$1,500.00/accelerator" in row and row.rstrip().endswith("valid")

    assert main(["kb", "quote", "remove", "micro-center-nvidia-rtx-4090-2026-11-20"]) == 0
    assert "Removed quote micro-center-nvidia-rtx-4090-2026-11-20; 0 left." in capsys.readouterr().out
    assert read_quotes(path) == []
    after = desktop_4090(recommend(answers_file, capsys))
    assert after["cost"]["price_kind"] == "msrp" and after["cost"]["capex_usd"] == before["cost"]["capex_usd"]


def test_expired_quote_is_ignored_with_a_note(answers_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb", "quote", "add", "--vendor", "eBay", "--accelerator", "nvidia-rtx-4090", "--usd", "500",
                 "--date", "2026-09-01", "--valid-until", "2026-10-01"]) == 0
    assert "already expired (kept, but ignored)" in capsys.readouterr().out
    catalog = load_catalog()
    assert [q.id for q in catalog.expired_quotes] == ["ebay-nvidia-rtx-4090-2026-09-01"]
    card = catalog.accelerators["nvidia-rtx-4090"].purchase_price_usd
    assert card is not None and card.kind == "msrp" and card.value == 1599

    doc = recommend(answers_file, capsys)
    assert desktop_4090(doc)["cost"]["price_kind"] == "msrp"
    note = next(w for w in doc["warnings"] if w["rule"] == "Q.expired")
    assert "ebay-nvidia-rtx-4090-2026-09-01 from eBay for NVIDIA GeForce RTX 4090" in note["message"]
    assert "expired on 2026-10-01: it is ignored" in note["message"]

    assert main(["kb", "quote", "list"]) == 0
    assert "expired on 2026-10-01: ignored" in capsys.readouterr().out


def test_the_same_quote_lapses_the_day_after_its_last_valid_day(monkeypatch: pytest.MonkeyPatch,
                                                                tmp_path: Path) -> None:
    path = tmp_path / QUOTES_FILE
    write_quotes(path, [{"id": "q1", "vendor": "Dell", "accelerator": "nvidia-h100-sxm5", "usd": 27500.0,
                         "quoted_on": "2026-11-20", "valid_until": "2026-12-20"}])
    monkeypatch.setenv(quotes_module.TODAY_ENV, "2026-12-20")
    valid = load_catalog(user_dir=None, extra_files=[path])
    price = valid.accelerators["nvidia-h100-sxm5"].purchase_price_usd
    assert price is not None and (price.kind, price.value, price.as_of) == ("quote", 27500, "2026-11-20")
    monkeypatch.setenv(quotes_module.TODAY_ENV, "2026-12-21")
    lapsed = load_catalog(user_dir=None, extra_files=[path])
    price = lapsed.accelerators["nvidia-h100-sxm5"].purchase_price_usd
    assert price is not None and price.kind != "quote" and [q.id for q in lapsed.expired_quotes] == ["q1"]
    assert lapsed.version != valid.version  # a cached consultation of yesterday's prices is not reused


def quote(**kw: Any) -> Quote:
    base: dict[str, Any] = {"id": "q", "vendor": "V", "usd": 1.0, "quoted_on": "2026-11-01",
                            "valid_until": "2026-12-01"}
    return Quote(**{**base, **kw})


def test_whole_machine_quote_prices_the_purchase_by_hand(shipped: Catalog) -> None:
    """An 8 x H100 server quoted whole at $250,000: two machines joined for training = 2 x 250,000 plus the
    InfiniBand fabric of two machines; the knowledge base's $45,000 host-only price becomes the host's share."""
    q = quote(id="smc", vendor="Supermicro", system="hgx-h100-8gpu-server", usd=250_000.0,
              includes_accelerators=True)
    applied = apply_quotes(shipped.accelerators, shipped.systems, {"smc": q}, date_of(TODAY))
    system = applied.systems["hgx-h100-8gpu-server"]
    assert system.price is not None and system.price.kind == "quote" and system.price.includes_accelerators
    assert system.host_share is not None and system.host_share.value == 45_000
    catalog = Catalog(**{**shipped.__dict__, "accelerators": applied.accelerators, "systems": applied.systems,
                         "sources": {**shipped.sources, **applied.sources}})
    acc = catalog.accelerators["nvidia-h100-sxm5"]
    one = purchase_bill(catalog, system, acc, 1, 8, joined=False)
    assert (one.capex_usd, one.host_usd, one.accelerators_usd, one.fabric_usd) == (250_000, 45_000, 205_000, 0)
    assert one.kind == "quote" and one.as_of == "2026-11-01"
    assert "your quote (2026-11-01) from Supermicro, valid until 2026-12-01" in one.words
    two = purchase_bill(catalog, system, acc, 2, 16, joined=True)
    assert two.fabric_usd > 0 and two.capex_usd == pytest.approx(500_000 + two.fabric_usd)


def test_newest_valid_quote_wins(shipped: Catalog) -> None:
    old = quote(id="a", accelerator="nvidia-l4", usd=2000.0, quoted_on="2026-10-01", valid_until="2026-12-31")
    new = quote(id="b", accelerator="nvidia-l4", usd=1800.0, quoted_on="2026-11-15", valid_until="2026-12-31")
    gone = quote(id="c", accelerator="nvidia-l4", usd=100.0, quoted_on="2026-11-20", valid_until="2026-11-21")
    applied = apply_quotes(shipped.accelerators, shipped.systems, {"a": old, "b": new, "c": gone},
                           date_of(TODAY))
    price = applied.accelerators["nvidia-l4"].purchase_price_usd
    assert price is not None and price.value == 1800 and price.as_of == "2026-11-15"
    assert [q.id for q in applied.expired] == ["c"] and {q.id for q in applied.applied} == {"a", "b"}


def date_of(text: str) -> Any:
    from datetime import date

    return date.fromisoformat(text)


@pytest.mark.parametrize(("argv", "field"), [
    (["--accelerator", "nvidia-h100-sxmm", "--usd", "1", "--valid-days", "3"], "--accelerator"),
    (["--system", "no-such-server", "--usd", "1", "--valid-days", "3"], "--system"),
    (["--accelerator", "nvidia-l4", "--usd", "cheap", "--valid-days", "3"], "--usd"),
    (["--accelerator", "nvidia-l4", "--usd", "0", "--valid-days", "3"], "--usd"),
    (["--accelerator", "nvidia-l4", "--usd", "1", "--valid-days", "soon"], "--valid-days"),
    (["--accelerator", "nvidia-l4", "--usd", "1", "--valid-until", "2026-13-01"], "--valid-until"),
    (["--accelerator", "nvidia-l4", "--usd", "1", "--date", "2026-11-20", "--valid-until", "2026-11-01"],
     "--valid-until"),
    (["--accelerator", "nvidia-l4", "--usd", "1", "--date", "yesterday", "--valid-days", "3"], "--date"),
    (["--accelerator", "nvidia-l4", "--usd", "1", "--valid-days", "3", "--whole"], "--whole"),
    (["--system", "hgx-b300-8gpu-server", "--usd", "40000", "--valid-days", "3"], "--whole"),
])
def test_bad_input_names_the_field(argv: list[str], field: str, isolated_dirs: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb", "quote", "add", "--vendor", "V", *argv]) == 2
    err = capsys.readouterr().err
    assert f"kb quote {field}: " in err, err
    assert not (isolated_dirs / "knowledge" / QUOTES_FILE).exists()  # nothing written


def test_duplicate_and_unknown_ids(capsys: pytest.CaptureFixture[str]) -> None:
    add = ["kb", "quote", "add", "--vendor", "V", "--accelerator", "nvidia-l4", "--usd", "1900", "--date",
           "2026-11-20", "--valid-days", "30"]
    assert main(add) == 0
    assert main(add) == 2
    assert "kb quote --id: a quote 'v-nvidia-l4-2026-11-20' exists already" in capsys.readouterr().err
    assert main(["kb", "quote", "remove", "nope"]) == 2
    assert "kb quote remove: no quote 'nope' (yours: v-nvidia-l4-2026-11-20)" in capsys.readouterr().err


def test_write_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that fails half-way leaves the old file whole and no temporary file behind."""
    path = tmp_path / QUOTES_FILE
    first = [{"id": "q1", "vendor": "Dell", "accelerator": "nvidia-l4", "usd": 1900.0, "quoted_on": "2026-11-20",
              "valid_until": "2026-12-20"}]
    write_quotes(path, first)
    before = path.read_text(encoding="utf-8")

    def broken_replace(src: str, dst: Path) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        write_quotes(path, [*first, {**first[0], "id": "q2"}])
    assert path.read_text(encoding="utf-8") == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [QUOTES_FILE]


def test_hand_edited_quote_for_an_unknown_part_is_an_overlay_error(tmp_path: Path) -> None:
    path = tmp_path / QUOTES_FILE
    write_quotes(path, [{"id": "q1", "vendor": "Dell", "accelerator": "nvidia-h100-sxm6", "usd": 1.0,
                         "quoted_on": "2026-11-20", "valid_until": "2026-12-20"}])
    with pytest.raises(KnowledgeError, match=r"quote 'q1': accelerator: unknown accelerator 'nvidia-h100-sxm6'"):
        load_catalog(user_dir=None, extra_files=[path])
    write_quotes(path, [{"id": "q1", "vendor": "Dell", "system": "hgx-b300-8gpu-server", "usd": 40000.0,
                         "quoted_on": "2026-11-20", "valid_until": "2026-12-20"}])
    with pytest.raises(KnowledgeError, match="must be too: set includes_accelerators = true"):
        load_catalog(user_dir=None, extra_files=[path])
