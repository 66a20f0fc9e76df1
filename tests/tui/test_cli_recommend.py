"""`gpuadvisor recommend` and `gpuadvisor schema` as scripts and CI use them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuadvisor.tui.cli import main
from gpuadvisor.tui.report.jsonfmt import parse_report

ANSWERS = """\
workload = "inference"
[model]
name = "llama-3.1-8b"
[inference]
requests_per_minute = 600
min_tokens_per_s_per_user = 20
[deployment]
where = "cloud"
"""


@pytest.fixture
def answers_file(tmp_path: Path) -> Path:
    path = tmp_path / "answers.toml"
    path.write_text(ANSWERS, encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["recommend", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_output_follows_the_schema_and_the_answers(answers_file: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--answers", str(answers_file), "--format", "json", "--top", "3")
    assert code == 0
    doc = json.loads(out)
    result = parse_report(out, "stdout")  # the chains reference why_facts (tui/report/whyjson.py)
    assert len(result.recommendations) == 3
    first = doc["recommendations"][0]
    for key in ("rank", "accelerator", "count", "nodes", "instance", "purchase", "fits", "memory_gb_per_gpu",
                "tokens_per_s", "tokens_per_s_per_user", "ttft_s", "training_days", "cost", "decision_cost", "why"):
        assert key in first
    assert set(first["cost"]) >= {"usd_per_hour", "usd_per_run", "usd_per_million_tokens", "capex_usd",
                                  "usd_per_month"}
    # where = cloud: rentals only, each price with its date, or null where the source gives none (the TPU v5e
    # slices' spot rates come from an undated catalog snapshot: never stamp a date nobody observed)
    assert all(r["instance"] is not None and "as_of" in r["instance"] for r in doc["recommendations"])
    assert any(r["instance"]["as_of"] for r in doc["recommendations"])
    assert all(r["tokens_per_s_per_user"] >= 20 for r in doc["recommendations"])
    assert {"id", "severity", "message", "why"} <= set(doc["warnings"][0])
    assert doc["answers"]["inference"]["requests_per_minute"] == 600
    assert "precision.kv_cache = fp16" in doc["defaults_applied"]


def test_flags_override_the_answers_file(answers_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--answers", str(answers_file), "--model", "gpt2", "--format", "json")
    assert code == 0
    assert json.loads(out)["profile"]["parameters_total"] == 124_439_808  # GPT-2 small, exact


def test_text_output_is_a_readable_summary(answers_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--answers", str(answers_file))
    assert code == 0
    assert "Recommended options" in out and "Findings" in out and "Ruled out" in out
    assert out.index("What you asked") < out.index("Recommended options")
    assert "Why:" not in out and "add --why" in out
    code, out, _ = run(capsys, "--answers", str(answers_file), "--why")
    assert "Why:" in out


def test_report_file_is_written_once_and_rerun_from_its_answers(answers_file: Path, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "plan.json"
    code, _, err = run(capsys, "--answers", str(answers_file), "--output", str(report))
    assert code == 0 and "wrote json report" in err
    saved = parse_report(report.read_text(encoding="utf-8"), "plan.json")
    assert saved.report is not None and saved.report.date
    code, _, err = run(capsys, "--answers", str(answers_file), "--output", str(report))
    assert code == 2 and "already exists" in err and "--force" in err
    code, out, _ = run(capsys, "--answers", str(report), "--format", "json")
    rerun = parse_report(out, "stdout")
    assert [r.option for r in rerun.recommendations] == [r.option for r in saved.recommendations]
    html = tmp_path / "plan.html"
    assert run(capsys, "--answers", str(answers_file), "-o", str(html))[0] == 0
    assert html.read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html>")


def test_infeasible_consultation_exits_3_and_says_what_to_change(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--model", "llama-3.1-405b", "--max-gpus", "1", "--format", "json")
    assert code == 3
    doc = json.loads(out)
    assert doc["feasible"] is False and doc["to_make_feasible"]


@pytest.mark.parametrize(("argv", "message"), [
    (["--context", "-5"], "precision.context_tokens"),
    (["--context", "many"], "--context: 'many' is not a number"),
    (["--params", "seventy"], "--params"),
    (["--model", "llama 70b"], "ambiguous"),
    (["--precision", "fp33"], "closest: fp32"),
    (["--format", "pdf"], "--format"),
    (["--json", "--format", "md"], "--json and --format md: give one"),
    (["--top", "0"], "--top"),
    (["--answers", "/nonexistent/answers.toml"], "no such answers file"),
])
def test_bad_input_is_one_line_and_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("gpuadvisor: error: ") and message in err
    assert "Traceback" not in err


def test_json_flag_is_format_json(capsys: pytest.CaptureFixture[str]) -> None:
    # `estimate --json` and `recommend --json` both print JSON: the same report as --format json
    args = ("--model", "llama-3.1-8b", "--workload", "inference")
    code, as_flag, _ = run(capsys, *args, "--json")
    code2, as_format, _ = run(capsys, *args, "--format", "json")
    assert code == code2 == 0
    assert json.loads(as_flag) == json.loads(as_format)


def test_schema_commands_print_json_schemas(capsys: pytest.CaptureFixture[str]) -> None:
    for which, field in (("recommend", "recommendations"), ("estimate", "parameters"), ("answers", "workload"),
                         ("recommend", "lifecycle"), ("recommend", "phases"), ("lifecycle", "phase")):
        assert main(["schema", which]) == 0
        schema = json.loads(capsys.readouterr().out)
        assert field in schema["properties"]


def test_save_writes_the_default_name_in_the_current_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "--model", "Llama 3.1 8B", "--save", "--format", "html")
    assert code == 0
    [saved] = list(tmp_path.glob("gpuadvisor-inference-llama-3.1-8b-*.html"))
    assert saved.name in err
    code, _, err = run(capsys, "--model", "Llama 3.1 8B", "--save", "--format", "html")
    assert code == 2 and "already exists" in err
    assert run(capsys, "--model", "Llama 3.1 8B", "--save", "--format", "html", "--force")[0] == 0


def test_hours_flag_sets_the_usage_the_month_is_costed_for(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["recommend", "--model", "llama-3.1-8b", "--stage", "learning", "--hours", "12", "--where", "cloud",
            "--format", "json"]
    assert main(argv) == 0
    out = parse_report(capsys.readouterr().out, "stdout")
    assert out.answers["deployment"]["hours_per_month"] == 12
    rental = next(r for r in out.recommendations + out.runners_up if r.acquisition == "rent")
    # 12 h in ceil(12 / 3) = 4 sessions of 0.25 h set-up: 13 billed hours
    assert rental.cost.usage_hours == pytest.approx(13.0)
    assert rental.cost.usd_per_month == pytest.approx((rental.cost.usd_per_hour or 0) * 13.0, rel=1e-3)


@pytest.mark.parametrize(("top", "ok"), [("0", False), ("1", True), ("100", True), ("101", False)])
def test_top_is_bounded(capsys: pytest.CaptureFixture[str], top: str, ok: bool) -> None:
    code, out, err = run(capsys, "--model", "llama-3.1-8b", "--where", "cloud", "--top", top, "--format", "json")
    if ok:
        assert code == 0 and len(json.loads(out)["recommendations"]) <= int(top)
    else:
        assert code == 2 and f"--top: must be from 1 to 100 (got {int(top):,})" in err
