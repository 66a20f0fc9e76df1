"""`gpuadvisor kb path|list|validate` through the real CLI entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuadvisor.tui.cli import main

NEGOTIATED = """
[[instance]]
id = "aws-p5.48xlarge"
price = [{ type = "on-demand", usd_per_hour = 41.5, as_of = "2026-10-01", sources = ["doc-002"] }]
"""


def test_path(isolated_dirs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb", "path"]) == 0
    out = capsys.readouterr().out
    assert f"overlay: {isolated_dirs / 'knowledge'} (does not exist" in out
    assert "shipped: " in out and out.splitlines()[0].endswith("data")


def test_path_lists_overlay_files(overlay_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (overlay_dir / "prices.toml").write_text(NEGOTIATED)
    assert main(["kb", "path"]) == 0
    out = capsys.readouterr().out
    assert f"overlay: {overlay_dir} (exists, 1 .toml file)" in out and "  prices.toml" in out


def test_list_accelerators(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb", "list", "accelerators"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["id", "name", "market"]
    h100 = next(line for line in lines if line.startswith("nvidia-h100-sxm5 "))
    assert "3,350" in h100 and "989.4" in h100 and "~$30,000 street, undated" in h100
    rtx = next(line for line in lines if line.startswith("nvidia-rtx-4090 "))
    assert "165.2" in rtx and "$1,599 msrp, 2022-10" in rtx and "~" not in rtx
    assert "63 accelerators" in lines[-1]


def test_list_instances_shows_newest_price_with_date(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb", "list", "instances"]) == 0
    out = capsys.readouterr().out
    p5 = next(line for line in out.splitlines() if line.startswith("aws-p5.48xlarge "))
    assert "55.04 (2026-07-28)" in p5 and "98.32" not in p5
    a2 = next(line for line in out.splitlines() if line.startswith("gcp-a2-highgpu-1g "))
    assert "3.67 (2025-03-06)" in a2 and "1.29 (2025-03-06)" in a2


def test_list_marks_overlay_entries(overlay_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (overlay_dir / "prices.toml").write_text(NEGOTIATED)
    assert main(["kb", "list", "instances"]) == 0
    out = capsys.readouterr().out
    assert any(line.startswith("*  aws-p5.48xlarge ") and "41.50 (2026-10-01)" in line for line in out.splitlines())
    assert "* overridden by your overlay" in out


def test_list_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb", "list", "precisions", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["kind"] == "precisions" and data["overlay"] == {"overridden": [], "added": []}
    q4 = next(e for e in data["entries"] if e["id"] == "q4_0")
    assert q4["bits_per_weight"] == 4.5


def test_list_models_and_precisions_tables(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb", "list", "precisions"]) == 0
    out = capsys.readouterr().out
    assert any(line.startswith("gptq ") and "4.15625" in line for line in out.splitlines())
    assert main(["kb", "list", "models"]) == 0
    assert "llama-3.1-8b" in capsys.readouterr().out


def test_validate_ok(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb", "validate"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ok: 63 accelerators, ") and " instances, " in out


def test_validate_given_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.toml"
    good.write_text(NEGOTIATED)
    assert main(["kb", "validate", str(good)]) == 0
    assert f"overlay: {good} (1 instance)" in capsys.readouterr().out
    bad = tmp_path / "bad.toml"
    bad.write_text('[[accelerator]]\nid = "nvidia-l4"\nbf16_support = "maybe"\nmax_per_node = 0\n')
    assert main(["kb", "validate", str(bad)]) == 2
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [
        f"{bad}:3: accelerator 'nvidia-l4': bf16_support: Input should be a valid boolean",  # strict: never coerced
        f"{bad}:4: accelerator 'nvidia-l4': max_per_node: Input should be greater than or equal to 1",
    ]
    assert "2 errors" in captured.err


def test_broken_overlay_is_a_clean_error(overlay_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (overlay_dir / "broken.toml").write_text("[[instance]\n")
    assert main(["kb", "list", "accelerators"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"gpuadvisor: error: {overlay_dir / 'broken.toml'}:1: TOML syntax error")
    assert "Traceback" not in err


def test_no_action_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb"]) == 2
    assert "validate" in capsys.readouterr().err


def _stale_lines(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[list[str], list[str], str]:
    assert main(["kb", "stale", "--today", "2026-11-25", *args]) == 0
    out = capsys.readouterr().out
    old, undated = out.split("Undated prices")
    return old.splitlines(), undated.splitlines(), out


def test_stale_lists_old_prices_with_their_age(capsys: pytest.CaptureFixture[str]) -> None:
    old, undated, out = _stale_lines(capsys)
    assert old[0] == "Prices 12 months old or older on 2026-11-25:"
    rtx = next(line for line in old if " nvidia-rtx-4090 " in line)
    # launch MSRP of October 2022: 4 years and 1 month before 2026-11-25
    assert rtx.split()[0] == "purchase" and "$1,599 msrp" in rtx and "2022-10" in rtx and rtx.endswith("49 months")
    a2 = next(line for line in old if line.startswith("on-demand ") and " gcp-a2-highgpu-1g " in line)
    assert "$3.67/h" in a2 and "2025-03-06" in a2 and a2.endswith("20 months")  # 2025-03-06 .. 2026-11-25
    # Only the newest price of each type is in use: p5's $98.32 (2025-03-14) was superseded by $55.04 (2026-07-28).
    assert "98.32" not in out and not any(" aws-p5.48xlarge " in line and line.startswith("on-demand") for line in old)
    # Old-first order.
    ages = [int(line.split()[-2]) for line in old if line.endswith(" months")]
    assert ages == sorted(ages, reverse=True) and ages[-1] >= 12
    # The document-quoted prices have no date: listed apart, never aged.
    h100 = next(line for line in undated if " nvidia-h100-sxm5 " in line)
    assert "$30,000 street" in h100 and "months" not in h100
    assert not any(" nvidia-h100-sxm5 " in line for line in old)
    n_old = len([line for line in old if line.endswith(" months")])
    # purchase and instance prices whose sources give no date
    n_undated = len([line for line in undated if line.split()[:1] in (["purchase"], ["on-demand"], ["spot"],
                                                                       ["capacity-block"])])
    assert f"\n{n_old} of " in out and f"; {n_undated} undated." in out


def test_stale_threshold(capsys: pytest.CaptureFixture[str]) -> None:
    old, _, _ = _stale_lines(capsys, "--months", "24")
    assert any(" nvidia-rtx-4090 " in line for line in old)  # 49 months
    assert not any(" nvidia-rtx-5090 " in line for line in old)  # January 2025: 22 months


def test_stale_sees_an_overlay_price(overlay_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (overlay_dir / "prices.toml").write_text(NEGOTIATED)  # p5 on-demand at $41.50, 2026-10-01
    assert main(["kb", "stale", "--today", "2027-11-01"]) == 0
    p5 = next(line for line in capsys.readouterr().out.splitlines()
              if line.startswith("on-demand ") and " aws-p5.48xlarge " in line)
    assert "$41.50/h" in p5 and p5.endswith("13 months")


@pytest.mark.parametrize(("args", "message"), [
    (["--months", "0"], "argument --months: 0 is not at least 1 month"),
    (["--months", "a year"], "argument --months: 'a year' is not a whole number of months"),
    (["--today", "25/11/2026"], "argument --today: '25/11/2026' is not a date YYYY-MM-DD"),
])
def test_stale_bad_arguments(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["kb", "stale", *args])
    assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_newest_price_prefers_a_dated_one_and_tolerates_undated() -> None:
    """Instance prices may become undated (`as_of = None`): the newest dated one is in use, else the undated one."""
    from gpuadvisor.knowledge.freshness import newest_price
    from gpuadvisor.knowledge.schema import InstancePrice

    def offer(usd: float, as_of: str | None) -> InstancePrice:
        return InstancePrice.model_construct(type="on-demand", usd_per_hour=usd, as_of=as_of, sources=["doc-002"])

    assert newest_price([offer(1, "2025-01"), offer(2, None), offer(3, "2026-02-01")]).usd_per_hour == 3
    assert newest_price([offer(2, None)]).usd_per_hour == 2


def test_list_free_tiers_shows_their_limits(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb", "list", "free-tiers"]) == 0
    out = capsys.readouterr().out
    kaggle = next(line for line in out.splitlines() if line.startswith("kaggle-t4x2 "))
    assert "2× nvidia-t4" in kaggle and " 12 " in kaggle and " 30 " in kaggle and "undated" in kaggle
    lab = next(line for line in out.splitlines() if line.startswith("sagemaker-studio-lab "))
    assert lab.split()[-2:] == ["no", "2023-07-06"]


def test_list_engines_shows_the_per_sequence_cost(capsys: pytest.CaptureFixture[str]) -> None:
    # engines.toml: TensorRT-LLM's PyTorch backend on Hopper pays 12.5 µs a sequence plus 0.35 µs a sequence per
    # layer (fit_engines.SEQUENCE_LAYER_ENGINES); vLLM's profiles pay a host cost per sequence only
    assert main(["kb", "list", "engines"]) == 0
    out = capsys.readouterr().out
    assert "µs/sequence" in out
    hopper = next(line for line in out.splitlines() if line.startswith("tensorrt-llm@nvidia-hopper-hbm "))
    assert "12.5 (8.2-17.6) + 0.35 (0.23-0.49)×layers" in hopper
    vllm = next(line for line in out.splitlines() if line.startswith("vllm@any "))
    assert "18.7 (16.4-30.7)" in vllm and "×layers" not in vllm
