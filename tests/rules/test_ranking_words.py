"""The WHY root says what the README says about the ranking (issue 42): the rule `RANK` heads every option's chain,
and it still read "cheapest feasible option first, adjusted by the heuristics' points" long after scores were
removed and the README said "no rule scores". This test reads both and fails when they drift apart."""

from __future__ import annotations

import re
from pathlib import Path

from gpuadvisor.rules.consultation.explain import PYTHON_RULES, RULE_KINDS
from gpuadvisor.rules.consultation.result import WhyStep

README = Path(__file__).resolve().parents[2] / "README.md"
SCORING = re.compile(r"\b(scor\w*|points?|penalt\w*|bonus\w*|weighted)\b", re.I)
"""Words for a ranking by points, which the README says there is none of."""


def ranking_section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("### How options are ranked")
    return text[start:text.index("\n## ", start)]


def test_the_readme_ranks_by_one_figure_in_dollars_and_no_rule_scores() -> None:
    readme = README.read_text(encoding="utf-8")
    section = ranking_section()
    assert "Every option is ranked by one figure, its **Total**" in section
    assert "Cheapest first" in section
    assert "no rule scores" in readme


def test_the_why_root_describes_the_ranking_in_the_readmes_words() -> None:
    title, _source = PYTHON_RULES["RANK"]
    section = ranking_section()
    assert not SCORING.search(title), title
    # what the root claims, the README says: one figure, the Total, over the horizon, cheapest first
    for claim in ("Total", "horizon", "cheapest first", "dollars"):
        assert claim in title, claim
        assert claim.lower() in section.lower(), claim


def test_no_kind_of_rule_is_described_as_scoring() -> None:
    assert "adjust_score" not in RULE_KINDS
    described = WhyStep.model_fields["rule_kind"].description or ""
    assert not SCORING.search(described), described
