"""H9: a weight format's kernels run where its stack and (on CUDA parts) its compute-capability floor allow, and the
reason names whichever of the two fails — never "compute capability ≥ 0" for a part that has none to compare."""

from __future__ import annotations

from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.consultation.derivations import library_support

CATALOG = load_catalog(user_dir=None)


def _support(acc: str, precision: str) -> dict[str, object]:
    return library_support(CATALOG, CATALOG.accelerators[acc], precision)


def test_a_stack_the_format_does_not_run_on_is_named() -> None:
    got = _support("apple-m4-max", "fp8")
    assert got["library_ok"] is False
    software = ", ".join(CATALOG.precisions["fp8"].software)
    assert got["library_why"] == f"the fp8 format runs on {software}; this part runs metal"


def test_the_compute_capability_floor_binds_cuda_parts_only() -> None:
    # AWQ's kernels need CC 7.5 on NVIDIA; on ROCm (listed in its software) there is no CUDA CC to compare
    assert _support("amd-mi300x", "awq")["library_ok"] is True
    v100 = _support("nvidia-v100-sxm2", "awq")  # Volta, CC 7.0 < 7.5
    assert v100["library_ok"] is False
    assert v100["library_why"] == ("the awq kernels (AutoAWQ, vLLM, TGI) need CUDA compute capability ≥ 7.5; "
                                   "this part has 7")
    assert _support("nvidia-t4", "awq")["library_ok"] is True  # Turing, CC 7.5
