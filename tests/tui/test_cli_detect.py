"""`gpuadvisor recommend --current-gpu auto`: the machine's GPUs, from stub tools on PATH, become the answers."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from gpuadvisor.tui.cli import main


def nvidia_smi(folder: Path, output: str) -> None:
    """A stub nvidia-smi printing what the real one prints for --query-gpu=name,memory.total (csv, no units)."""
    data = folder / "nvidia-smi.out"
    data.write_text(output, encoding="utf-8")
    path = folder / "nvidia-smi"
    path.write_text(f"#!/bin/sh\nexec /bin/cat '{data}'\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def recommend(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, object], str]:
    code = main(["recommend", "--model", "llama-3.1-8b", "--format", "json", *argv])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def test_two_rtx_3090s_become_the_current_gpu(bin_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nvidia_smi(bin_dir, "NVIDIA GeForce RTX 3090, 24576\nNVIDIA GeForce RTX 3090, 24576\n")
    code, doc, err = recommend(capsys, "--current-gpu", "auto")
    assert code == 0
    current = doc["answers_effective"]["current"]  # type: ignore[index]
    assert (current["gpu"], current["gpu_count"], current["gpu_name"]) == ("nvidia-rtx-3090", 2,
                                                                           "NVIDIA GeForce RTX 3090")
    assert current["gpu_memory_gb"] is None  # a known part: the knowledge base's figures apply
    assert doc["answers"]["current"]["gpu"] == "nvidia-rtx-3090"  # type: ignore[index]
    assert "gpuadvisor: detected by nvidia-smi: 2 × NVIDIA GeForce RTX 3090, 24 GB each" in err
    assert any(line.startswith("current.gpu = nvidia-rtx-3090 × 2: detected by nvidia-smi")
               for line in doc["defaults_applied"])  # type: ignore[union-attr]


def test_a_given_count_wins_over_the_detected_one(bin_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nvidia_smi(bin_dir, "NVIDIA GeForce RTX 3090, 24576\nNVIDIA GeForce RTX 3090, 24576\n")
    _, doc, _ = recommend(capsys, "--current-gpu", "auto", "--current-gpu-count", "1")
    assert doc["answers_effective"]["current"]["gpu_count"] == 1  # type: ignore[index]


def test_an_unknown_part_is_kept_as_unknown_with_its_memory(bin_dir: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    nvidia_smi(bin_dir, "NVIDIA GeForce RTX 4090 Laptop GPU, 16376\n")
    code, doc, err = recommend(capsys, "--current-gpu", "auto")
    assert code == 0
    current = doc["answers_effective"]["current"]  # type: ignore[index]
    assert current["gpu"] is None  # never the desktop RTX 4090
    assert (current["gpu_name"], current["gpu_memory_gb"], current["gpu_count"]) == (
        "NVIDIA GeForce RTX 4090 Laptop GPU", 16.0, 1)
    assert "unknown part: not in the knowledge base" in err


def test_no_gpu_tool_says_so_and_the_consultation_runs(bin_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, doc, err = recommend(capsys, "--current-gpu", "auto")
    assert code == 0 and doc["recommendations"]
    assert err.startswith("gpuadvisor: no GPU detected (nvidia-smi, amd-smi, rocm-smi not found)")
    assert doc["answers_effective"]["current"]["gpu"] is None  # type: ignore[index]


def test_a_named_gpu_is_passed_through_without_detection(bin_dir: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    nvidia_smi(bin_dir, "NVIDIA GeForce RTX 3090, 24576\n")
    _, doc, err = recommend(capsys, "--current-gpu", "nvidia-l4", "--current-gpu-count", "4")
    current = doc["answers_effective"]["current"]  # type: ignore[index]
    assert (current["gpu"], current["gpu_count"], current["detection"]) == ("nvidia-l4", 4, None)
    assert "detected" not in err


def test_auto_in_an_answers_file_is_detected_too(bin_dir: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    nvidia_smi(bin_dir, "NVIDIA A100-SXM4-80GB, 81920\n")
    answers = tmp_path / "a.toml"
    answers.write_text('[current]\ngpu = "auto"\n', encoding="utf-8")
    _, doc, _ = recommend(capsys, "--answers", str(answers))
    assert doc["answers_effective"]["current"]["gpu"] == "nvidia-a100-sxm-80gb"  # type: ignore[index]


def test_a_bad_count_names_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["recommend", "--model", "llama-3.1-8b", "--current-gpu-count", "0"])
    _, err = capsys.readouterr()
    assert code == 2
    assert "current.gpu_count" in err and "(from --current-gpu-count)" in err
