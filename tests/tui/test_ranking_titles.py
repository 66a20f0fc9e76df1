"""The ranking's short option names tell every row apart: the part, the provider or "buy", machines × GPUs, and a
rental's term (three offers of one instance — on demand, 1- and 3-year reserved — read as three rows)."""

from __future__ import annotations

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.rules.consult import consult
from gpuadvisor.rules.inputs.answers import parse_answers
from gpuadvisor.tui.widgets.ranking_table import short_title


def test_a_rentals_term_is_in_its_short_name(catalog: Catalog) -> None:
    answers = parse_answers({"workload": "inference", "model": {"name": "qwen2.5-7b"},
                             "deployment": {"where": "cloud"}})
    result = consult(answers, catalog, top=20)
    rentals = [r for r in [*result.recommendations, *result.runners_up] if r.instance is not None]
    terms = {r.instance.pricing for r in rentals if r.instance is not None}
    assert {"on-demand", "reserved-1y", "reserved-3y"} <= terms  # the case shows all three kinds
    suffix = {"on-demand": "", "spot": " spot", "reserved-1y": " 1-yr", "reserved-3y": " 3-yr"}
    for r in rentals:
        assert r.instance is not None
        title = short_title(r)
        want = suffix[r.instance.pricing]
        assert title.endswith(want) if want else not title.endswith(("spot", "-yr")), title
        assert title.split(" · ")[0] in r.accelerator.name  # the part, its vendor left implied


STARTUP = {"workload": "inference", "stage": "production", "model": {"name": "llama-3.1-70b"},
           "inference": {"requests_per_minute": 1000}}
"""The startup engineer of issue 42, whose ranking read "H100 NVL 94GB · buy 2×1" twice ($57k and $78k) and
"MI300X · Tenso…" at 80 columns."""


def test_labels_are_unique_and_never_cut_mid_word(catalog: Catalog) -> None:
    from gpuadvisor.tui.widgets.ranking_table import brief_label, option_labels

    result = consult(parse_answers(STARTUP), catalog, top=20)
    recs = [*result.recommendations, *result.runners_up]
    assert len(recs) >= 15
    for width in (14, 20, 28, 40, 72):
        labels = option_labels(recs, width)
        assert len(set(labels.values())) == len(recs) or width < 20, (width, labels)
        for r in recs:
            label = labels[r.option]
            assert len(label) <= width
            words = label.replace("…", " ").split()
            whole = " ".join(brief_label(r, lv) for lv in range(3)) + " " + " ".join(
                [str(r.count), "GPUs", "GPU", r.unit.name, "buy", r.instance.name if r.instance else "",
                 r.instance.pricing.replace("-", " ") if r.instance else "", f"#{r.rank}"])
            tokens = set(whole.replace("(", " ").replace(")", " ").replace(",", " ").split())
            assert all(w.strip("(),×") in tokens for w in words), (width, label)


def test_two_purchases_of_one_part_say_what_differs(catalog: Catalog) -> None:
    from gpuadvisor.tui.widgets.ranking_table import option_labels, short_title

    result = consult(parse_answers(STARTUP), catalog, top=20)
    recs = [*result.recommendations, *result.runners_up]
    same = {}
    for r in recs:
        same.setdefault(short_title(r), []).append(r)
    twins = [g for g in same.values() if len(g) > 1]
    assert twins  # the case has options whose short names collide (a part bought in two servers, or two terms)
    labels = option_labels(recs, 72)
    for group in twins:
        shown = [labels[r.option] for r in group]
        assert len(set(shown)) == len(group), shown
        assert all(s.startswith(short_title(group[0]) + " (") for s in shown), shown


def test_the_asked_line_gives_way_by_whole_parts() -> None:
    from gpuadvisor.tui.screens.results import fit_parts

    asked = ("Asked: Llama 3.1 8B, NF4 · context 4,096 · 100M tokens (default) · deadline 30 days (default) · "
             "budget $20.00 a month · rent or buy · you have 1× laptop")
    assert fit_parts(asked, 200) == asked
    short = fit_parts(asked, 60)
    assert short.endswith(" · …") and asked.startswith(short.removesuffix(" · …"))
    assert short.removesuffix(" · …").split(" · ") == asked.split(" · ")[:len(short.split(" · ")) - 1]
    import textwrap

    assert len(textwrap.wrap(short, 60)) <= 2


def test_the_asked_line_keeps_the_training_counts_unit(catalog: Catalog) -> None:
    """The student's what-if to 500M tokens read "Asked: Llama 3.1 8B, NF4 · context 4,096 · 500M · deadline …": the
    rule dropping the context's " tokens" took the training count's too. Only the context's goes now."""
    from gpuadvisor.tui.screens.results import asked_line

    given = {"workload": "finetune", "stage": "learning", "model": {"name": "llama-3.1-8b"},
             "finetune": {"method": "qlora"}, "training": {"tokens_b": 0.5}, "budget": {"monthly_usd": 20}}
    parts = asked_line(consult(parse_answers(given), catalog)).split(" · ")
    assert parts[:3] == ["Asked: Llama 3.1 8B, NF4", "context 4,096", "500M tokens"]
