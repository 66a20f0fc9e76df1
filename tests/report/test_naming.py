"""Default file names `gpuadvisor-<workload>-<model>-<date>.<ext>`: safe whatever the model name."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from gpuadvisor.rules.consultation.result import RecommendResult, ReportMeta
from gpuadvisor.tui.report import default_filename, save_report, slugify
from tests.report import sample

DAY = date(2026, 11, 20)


@pytest.mark.parametrize(("fmt", "ext"), [("md", "md"), ("html", "html"), ("json", "json"), ("text", "txt")])
def test_default_name_per_format(fmt: str, ext: str) -> None:
    assert default_filename(sample(), fmt, DAY) == f"gpuadvisor-inference-llama-3.1-70b-2026-11-20.{ext}"


def test_date_falls_back_to_the_report_date() -> None:
    result = sample().model_copy(update={"report": ReportMeta(title="t", date="2026-03-01", generator="g")})
    assert default_filename(result, "md") == "gpuadvisor-inference-llama-3.1-70b-2026-03-01.md"
    assert default_filename(result, "md", DAY).endswith("-2026-11-20.md")  # an explicit day wins


def test_unknown_format() -> None:
    with pytest.raises(ValueError, match="unknown report format 'pdf'"):
        default_filename(sample(), "pdf", DAY)


@pytest.mark.parametrize(("text", "slug"), [
    ("Llama 3.1 70B", "llama-3.1-70b"),
    ("meta-llama/Llama-3.1-70B-Instruct", "meta-llama-llama-3.1-70b-instruct"),
    ("../../etc/passwd", "etc-passwd"),
    ("..", "model"),
    ("/", "model"),
    ("", "model"),
    (".hidden", "hidden"),                    # never a dot-file
    ("a\x00b\nc\td\x1b[31m", "a-b-c-d-31m"),  # control characters
    ("Qwen2.5 … 72B  Ünïcode", "qwen2.5-72b-unicode"),
    ("C:\\models\\x", "c-models-x"),
    ("v1..2", "v1-2"),
    ("x" * 300, "x" * 48),
])
def test_slugify(text: str, slug: str) -> None:
    assert slugify(text) == slug


def test_path_traversal_in_the_model_name_stays_in_the_directory(tmp_path: Path) -> None:
    doc: dict[str, Any] = json.loads(sample().model_dump_json())
    doc["profile"]["model"] = "../../../../tmp/evil name"
    doc["answers_effective"]["workload"] = "../x"
    name = default_filename(RecommendResult.model_validate(doc), "md", DAY)
    assert name == "gpuadvisor-x-tmp-evil-name-2026-11-20.md"
    written = save_report("x", tmp_path / name)
    assert written.parent == tmp_path and written.resolve().parent == tmp_path.resolve()
