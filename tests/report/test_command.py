"""`gpuadvisor report --from report.json --format md|html|json|text [--output FILE] [--force]`."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuadvisor.tui.cli import main
from gpuadvisor.tui.report import render
from tests.report import TODAY, sample

NAME = "gpuadvisor-inference-llama-3.1-70b-2026-11-20"


@pytest.fixture
def saved(tmp_path: Path) -> Path:
    """A report saved on 2026-11-20, as `recommend --format json --output` would write it."""
    path = tmp_path / "report.json"
    path.write_text(render(sample(), "json", today=TODAY), encoding="utf-8")
    return path


@pytest.mark.parametrize("fmt", ["md", "json", "text", "markdown", "txt"])
def test_stdout_formats(saved: Path, fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--from", str(saved), "--format", fmt]) == 0
    out = capsys.readouterr().out
    canonical = {"markdown": "md", "txt": "text"}.get(fmt, fmt)
    assert out == render(sample(), canonical, today=TODAY)


def test_default_format_is_markdown(saved: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--from", str(saved)]) == 0
    assert capsys.readouterr().out.startswith("# GPU recommendation: Llama 3.1 70B, inference\n")


def test_html_without_output_goes_to_the_default_file(saved: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    assert main(["report", "--from", str(saved), "--format", "html"]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    target = work / f"{NAME}.html"
    assert captured.err == f"gpuadvisor: wrote {target.resolve()}\n"  # says where
    assert target.read_text() == render(sample(), "html", today=TODAY)
    # a second run refuses to overwrite, then --force does
    assert main(["report", "--from", str(saved), "--format", "html"]) == 2
    assert "already exists; use --force" in capsys.readouterr().err
    assert main(["report", "--from", str(saved), "--format", "html", "--force"]) == 0


def test_output_extension_picks_the_format(saved: Path, tmp_path: Path) -> None:
    assert main(["report", "--from", str(saved), "-o", str(tmp_path / "plan.html")]) == 0
    assert (tmp_path / "plan.html").read_text().startswith("<!DOCTYPE html>")
    assert main(["report", "--from", str(saved), "-o", str(tmp_path / "plan.txt")]) == 0
    assert (tmp_path / "plan.txt").read_text().startswith("GPU recommendation")
    # an explicit --format wins over the extension
    assert main(["report", "--from", str(saved), "-f", "json", "-o", str(tmp_path / "plan.out")]) == 0
    assert (tmp_path / "plan.out").read_text().startswith("{")


def test_html_to_stdout_with_dash(saved: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--from", str(saved), "-f", "html", "-o", "-"]) == 0
    assert capsys.readouterr().out.startswith("<!DOCTYPE html>")


def test_bad_report_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "report.json"
    bad.write_text('{"schema_version": 1,\n  "answers": {,\n}')
    assert main(["report", "--from", str(bad), "--format", "html"]) == 2
    assert capsys.readouterr().err == f"gpuadvisor: error: {bad}:2:15: not valid JSON: Expecting property name " \
                                      "enclosed in double quotes\n"
    assert list(tmp_path.iterdir()) == [bad]  # nothing written


def test_unknown_format_is_a_usage_error(saved: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["report", "--from", str(saved), "--format", "pdf"])
    assert info.value.code == 2
    assert "unknown report format 'pdf'; choose one of text, md, html, json" in capsys.readouterr().err


def test_from_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["report"])
    assert "--from" in capsys.readouterr().err


STUDENT = Path(__file__).resolve().parents[2] / "examples" / "student-qlora-8b.toml"
LAPTOP_STUDENT = """workload = "finetune"
stage = "learning"
model = { name = "llama-3.1-8b" }
finetune = { method = "qlora" }
budget = { monthly_usd = 20.0 }
current = { gpu = "laptop" }
"""
"""Issue 42's student with the laptop they have: 156 rule-outs, so its JSON is past 200 KB and saved cut (why_cut)."""


@pytest.mark.parametrize("flags", [[], ["--format", "md"], ["--why"], ["--full", "--format", "md"]])
def test_report_from_a_saved_result_prints_what_recommend_prints(flags: list[str], tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """One renderer decides what a report holds (tui/report `Contents`): before, `report --from` printed every WHY
    chain by default (636 lines for the student, issue 42) where `recommend` printed 362 for the same answers."""
    saved = tmp_path / "student.json"
    # everything from a saved file needs a file saved with everything: past its 200 KB the default JSON keeps each
    # rule-out's chain to the veto (the student's is past it since issue 38's training-step chains: 207 KB)
    full = ["--full"] if "--full" in flags else []
    assert main(["recommend", "--answers", str(STUDENT), "--format", "json", *full, "-o", str(saved)]) == 0
    capsys.readouterr()
    assert main(["recommend", "--answers", str(STUDENT), *flags]) == 0
    recommended = capsys.readouterr().out
    fmt = [] if "--format" in flags else ["--format", "text"]
    assert main(["report", "--from", str(saved), *fmt, *flags]) == 0
    assert capsys.readouterr().out == recommended
    chains = "Why this option?" if "md" in flags else "Why:"
    assert (chains in recommended) == ("--why" in flags or "--full" in flags)


@pytest.mark.parametrize(("answers", "saved_with"), [("example", ["--full"]), ("laptop", [])])
def test_report_from_a_saved_result_writes_the_html_recommend_writes(answers: str, saved_with: list[str],
                                                                     tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """The HTML folds each rule-out's chain to the veto and its premises, as a JSON past its budget keeps it: the
    laptop student's HTML from `recommend` was 557 KB with every rule-out's whole chain, from its saved (cut) JSON
    239 KB; both now hold the same, from a JSON saved cut (the laptop student's, by default) or whole (`--full`)."""
    path = STUDENT
    if answers == "laptop":
        path = tmp_path / "laptop.toml"
        path.write_text(LAPTOP_STUDENT, encoding="utf-8")
    saved = tmp_path / "student.json"
    assert main(["recommend", "--answers", str(path), "--format", "json", *saved_with, "-o", str(saved)]) == 0
    assert ('"why_cut"' in saved.read_text(encoding="utf-8")) == (not saved_with)
    capsys.readouterr()
    assert main(["recommend", "--answers", str(path), "--format", "html", "-o", "-"]) == 0
    recommended = capsys.readouterr().out
    assert main(["report", "--from", str(saved), "--format", "html", "-o", "-"]) == 0
    assert capsys.readouterr().out == recommended
    assert "Every option ruled out, and why" in recommended
    assert main(["recommend", "--answers", str(path), "--format", "html", "--full", "-o", "-"]) == 0
    assert len(capsys.readouterr().out) > len(recommended)  # --full: every step of every rule-out's chain


def test_a_full_rerender_of_a_cut_report_says_what_it_lacks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 42's student: `report --from` a default JSON (cut to its 200 KB budget: each rule-out's chain to depth 1)
    with --full printed 2,281 text lines where `recommend --full` prints 6,042, and said nothing. It says so now; a
    report saved with --full re-renders whole and quietly, and the default rendering of a cut one is unchanged."""
    from gpuadvisor.rules.consult import consult
    from gpuadvisor.rules.inputs.answers import load_answers

    student = consult(load_answers(Path(__file__).resolve().parents[2] / "examples" / "student-qlora-8b.toml"))
    cut, whole = tmp_path / "cut.json", tmp_path / "whole.json"
    cut.write_text(render(student, "json", today=TODAY), encoding="utf-8")
    whole.write_text(render(student, "json", today=TODAY, full=True), encoding="utf-8")
    assert main(["report", "--from", str(cut), "--format", "text", "--full"]) == 0
    err = capsys.readouterr().err
    assert f"{cut} was saved within its size budget: each rule-out keeps its chain to depth 1 only" in err
    assert main(["report", "--from", str(whole), "--format", "text", "--full"]) == 0
    out = capsys.readouterr()
    assert out.err == "" and out.out == render(student, "text", today=TODAY, full=True)
    assert main(["report", "--from", str(cut), "--format", "text"]) == 0
    out = capsys.readouterr()
    assert out.err == "" and out.out == render(student, "text", today=TODAY)
