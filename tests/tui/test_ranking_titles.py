"""The ranking's short option names tell every row apart: the part, the provider or "buy", machines × GPUs, and a
rental's term (three offers of one instance — on demand, 1- and 3-year reserved — read as three rows)."""

from __future__ import annotations

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.rules.answers import parse_answers
from gpuadvisor.rules.consult import consult
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
