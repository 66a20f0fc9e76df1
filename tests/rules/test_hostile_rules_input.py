"""Issue 20 in the rules layer: answers never read a boolean as a number, unknown providers are refused by name,
rule-pack templates are bounded at load, a deep or broken pack and a bad pack folder are reported."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from gpuadvisor.knowledge.errors import MAX_PROBLEMS, InputError
from gpuadvisor.knowledge.files import FileReadError
from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.consult import user_packs
from gpuadvisor.rules.engine import PackError
from gpuadvisor.rules.engine.errors import PackProblem
from gpuadvisor.rules.engine.templates import MAX_PRECISION, MAX_WIDTH, TemplateError, parse_template
from gpuadvisor.rules.inputs.answers import load_answers, parse_answers
from gpuadvisor.rules.inputs.resolve import check_providers
from tests.rules.engine.test_packs import load, write


def test_requests_per_minute_true_is_refused_with_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "a.toml"
    path.write_text('[model]\nname = "gpt2"\n\n[inference]\nrequests_per_minute = true\n', encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_answers(path)
    assert str(info.value) == f"{path}:4: inference: requests_per_minute: must be a number, not true"


@pytest.mark.parametrize(("data", "message"), [
    ({"training": {"zero_stage": False}},
     "answers: training: zero_stage: must be one of the allowed values, not false"),
    ({"constraints": {"max_gpus": True}}, "answers: constraints: max_gpus: must be a number, not true"),
    ({"budget": {"capex_usd": float("inf")}}, "answers: budget.capex_usd: Input should be a finite number"),
    ({"budget": {"monthly_usd": 1e308}},
     "answers: budget.monthly_usd: Input should be less than or equal to 1000000000000"),
])
def test_booleans_and_non_finite_numbers_are_not_numbers(data: dict[str, object], message: str) -> None:
    with pytest.raises(InputError) as info:
        parse_answers(data)
    assert str(info.value) == message


def test_booleans_still_work_where_a_boolean_is_asked() -> None:
    assert parse_answers({"deployment": {"spot": True}}).deployment.spot is True


def test_ten_thousand_wrong_elements_give_six_lines() -> None:
    with pytest.raises(InputError) as info:
        parse_answers({"deployment": {"providers": list(range(10_000))}})
    lines = str(info.value).splitlines()
    assert len(lines) == MAX_PROBLEMS + 1
    assert lines[-1] == "answers: ... and 9,995 more problems"


def test_an_unknown_provider_is_refused_by_name() -> None:
    catalog = load_catalog(user_dir=None)
    with pytest.raises(InputError) as info:
        check_providers(parse_answers({"deployment": {"providers": ["aws", "lamda", "x" * 5000]}}), catalog)
    message = str(info.value)
    assert message.startswith("deployment.providers: unknown provider 'lamda' (and 1 more); known: aws, azure,")
    assert "lambda" in message and len(message) < 400
    check_providers(parse_answers({"deployment": {"providers": ["aws", "kaggle"]}}), catalog)  # no error


def test_deep_answers_are_refused_before_parsing(tmp_path: Path) -> None:
    path = tmp_path / "deep.toml"
    path.write_text("[model]\nname = " + "[" * 20_000 + "]" * 20_000 + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"^{path}:2: nested more than 32 levels deep"):
        load_answers(path)
    report = tmp_path / "deep.json"
    report.write_text('{"answers": ' + "[" * 20_000, encoding="utf-8")
    with pytest.raises(InputError, match="nested too deeply to parse"):  # unclosed: the parser's recursion, caught
        load_answers(report)


@pytest.mark.parametrize(("template", "problem"), [
    ("{o.gpu:>999999999}", f"width over {MAX_WIDTH}"),
    ("{o.gpu:.500f}", f"precision over {MAX_PRECISION}"),
    ("{o.gpu:%Y-%m}", "not a format spec"),
    ("{o.gpu:{o.tp}}", "nested fields in a format spec are not allowed"),
])
def test_template_specs_are_bounded_at_load(template: str, problem: str) -> None:
    started = time.perf_counter()
    with pytest.raises(TemplateError, match=problem):
        parse_template(template)
    assert time.perf_counter() - started < 0.1


def test_ordinary_specs_still_parse() -> None:
    for spec in (",.0f", ".1f", ".0%", "g", ",", ">8", "x<10,.2f", f">{MAX_WIDTH}"):
        assert parse_template(f"{{o.gpu:{spec}}}").parts[0].spec == spec  # type: ignore[union-attr]


def test_a_pack_with_a_huge_width_is_a_pack_error_naming_the_rule(tmp_path: Path) -> None:
    body = ('[[rule]]\nid = "r1"\ntitle = "Wide"\n[rule.when]\no = { kind = "option" }\n[rule.then]\n'
            'action = "advise"\nseverity = "info"\nmessage = "{o.gpu:>999999999}"\n')
    with pytest.raises(PackError) as info:
        load(write(tmp_path, body))
    assert "rule 'r1'" in str(info.value) and f"width over {MAX_WIDTH}" in str(info.value)


def test_a_deep_pack_is_a_pack_error_not_a_recursion_error(tmp_path: Path) -> None:
    path = write(tmp_path, "x = " + "[" * 50_000 + "]" * 50_000 + "\n")
    with pytest.raises(PackError) as info:
        load(path)
    assert str(info.value) == f"{path}:2: nested more than 32 levels deep (lists or tables inside one another); a " \
                              "real file is far shallower"


def test_pack_errors_are_bounded() -> None:
    error = PackError([PackProblem("p.toml", i, "r" * 10_000, None, "bad") for i in range(100)])
    lines = str(error).splitlines()
    assert len(lines) == MAX_PROBLEMS + 1 and lines[-1] == "... and 95 more problems"
    assert all(len(line) < 200 for line in lines)


def test_user_pack_folder_problems_are_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rules = tmp_path / "config" / "rules"
    rules.mkdir(parents=True)
    (rules / "gone.toml").symlink_to(rules / "nowhere.toml")
    assert user_packs() == [rules / "gone.toml"]  # listed, so that loading it names it
    with pytest.raises(PackError, match=r"gone\.toml: no such rule pack \(a symbolic link to nothing\)"):
        load(*user_packs())

    def denied(path: object) -> object:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(os, "scandir", denied)
    with pytest.raises(FileReadError, match=r"rules: cannot read the rule pack directory: Permission denied"):
        user_packs()
