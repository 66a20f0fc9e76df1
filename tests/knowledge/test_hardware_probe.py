"""Hardware detection: stub tools on PATH print what the real nvidia-smi / amd-smi / rocm-smi print."""

from __future__ import annotations

import json
import stat
from collections.abc import Sequence
from pathlib import Path

import pytest

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.errors import KnowledgeError
from gpuadvisor.knowledge.hardware_probe import (
    NameTable,
    ToolRun,
    detect,
    identify,
    load_name_table,
    name_key,
    parse_amd_smi,
    parse_nvidia_smi,
    parse_rocm_smi,
    part_memory_of,
    run_tool,
)

# shapes as quoted from real machines (see the sources of knowledge/data/reported_names.toml)
ROCM_SMI_MI300X = json.dumps({f"card{i}": {"Card series": "AMD Instinct MI300X", "Card model": "0x74a1",
                                           "VRAM Total Memory (B)": "206141652992",
                                           "VRAM Total Used Memory (B)": "295043072"} for i in range(8)}
                             | {"system": {"Driver version": "6.7.0"}})
AMD_SMI_MI300X = json.dumps([{"gpu": i, "asic": {"market_name": "AMD Instinct MI300X", "device_id": "0x74a1"},
                              "vram": {"type": "HBM3", "size": {"value": 196592, "unit": "MB"}}} for i in range(4)])
AMD_SMI_NEW = json.dumps({"gpu_data": [{"gpu": 0, "asic": {"market_name": "AMD Instinct MI250X"},
                                        "vram": {"size": {"value": 65520, "unit": "MB"}}}]})


def stub(folder: Path, name: str, body: str) -> Path:
    """An executable shell script standing in for a tool."""
    path = folder / name
    path.write_text("#!/bin/sh\nPATH=/usr/bin:/bin\n" + body + "\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def printing(folder: Path, name: str, text: str) -> Path:
    data = folder / f"{name}.out"
    data.write_text(text, encoding="utf-8")
    return stub(folder, name, f"cat '{data}'")


@pytest.fixture
def memory(shipped: Catalog) -> dict[str, float]:
    """accelerator id → memory_gb of the shipped knowledge base."""
    return part_memory_of(shipped.accelerators)


# --- the name table --------------------------------------------------------------------------------------------------
def test_every_name_maps_to_a_knowledge_base_part_and_no_name_to_two(memory: dict[str, float]) -> None:
    table = load_name_table()
    assert {e.id for e in table.entries} <= set(memory)
    seen: dict[str, str] = {}
    for entry in table.entries:
        for name in entry.reported_names:
            assert name_key(name) not in seen, f"{name} listed for {seen.get(name_key(name))} and {entry.id}"
            seen[name_key(name)] = entry.id


@pytest.mark.parametrize(("name", "mib", "expected"), [
    ("NVIDIA A100-SXM4-80GB", 81920, "nvidia-a100-sxm-80gb"),
    ("NVIDIA A100-PCIE-40GB", 40960, "nvidia-a100-pcie-40gb"),
    ("NVIDIA A100 80GB PCIe", 81920, "nvidia-a100-pcie-80gb"),
    ("NVIDIA H100 80GB HBM3", 81559, "nvidia-h100-sxm5"),
    ("NVIDIA H100 PCIe", 81559, "nvidia-h100-pcie"),
    ("NVIDIA H100 NVL", 95830, "nvidia-h100-nvl"),
    ("NVIDIA H200", 143771, "nvidia-h200-sxm"),
    ("NVIDIA H200 NVL", 143771, "nvidia-h200-nvl"),
    ("NVIDIA GeForce RTX 3090", 24576, "nvidia-rtx-3090"),
    ("NVIDIA GeForce RTX 4090", 24564, "nvidia-rtx-4090"),
    ("NVIDIA L4", 23034, "nvidia-l4"),
    ("Tesla T4", 15360, "nvidia-t4"),
    ("NVIDIA A10G", 23028, "nvidia-a10g"),
    ("NVIDIA L40S", 46068, "nvidia-l40s"),
    ("NVIDIA RTX 6000 Ada Generation", 49140, "nvidia-rtx-6000-ada"),
    ("NVIDIA RTX A6000", 49140, "nvidia-rtx-a6000"),
    ("NVIDIA B200", 183359, "nvidia-b200"),
])
def test_nvidia_smi_names_map_exactly(name: str, mib: int, expected: str, memory: dict[str, float]) -> None:
    rows = parse_nvidia_smi(f"{name}, {mib}\n")
    assert rows == [(name, round(mib / 1024, 1))]
    assert identify(name, rows[0][1], load_name_table(), memory) == (expected, "")


@pytest.mark.parametrize(("name", "gib", "why"), [
    ("NVIDIA GeForce RTX 4090 Laptop GPU", 16.0, "not in the knowledge base"),  # not the desktop 4090
    ("NVIDIA A100", 80.0, "not in the knowledge base"),  # a loose name is no tool's output: no guess
    ("Tesla V100-SXM2-16GB", 15.8, "not in the knowledge base"),  # the entry holds the 32 GB figure
    ("AMD Instinct MI250X", 64.0, "64 GB, which does not fit amd-mi250x (128 GB)"),  # one GCD of two
    ("NVIDIA A100-SXM4-80GB", 40.0, "40 GB, which does not fit nvidia-a100-sxm-80gb (80 GB)"),
])
def test_unknown_or_misfitting_parts_are_not_guessed(name: str, gib: float, why: str,
                                                     memory: dict[str, float]) -> None:
    accelerator, reason = identify(name, gib, load_name_table(), memory)
    assert accelerator is None
    assert why in reason


def test_a_malformed_name_table_names_the_file_and_entry(tmp_path: Path) -> None:
    path = tmp_path / "names.toml"
    path.write_text('[match]\nmemory_ratio = [0.85, 1.05]\n[[accelerator]]\nid = "x"\nreported_names = []\n',
                    encoding="utf-8")
    with pytest.raises(KnowledgeError, match=r"names\.toml: \[\[accelerator\]\] #1 \(x\): needs an id"):
        load_name_table(path)


# --- parsers ---------------------------------------------------------------------------------------------------------
def test_rocm_smi_json_gives_each_card_in_order_with_its_vram() -> None:
    rows = parse_rocm_smi(ROCM_SMI_MI300X)
    assert len(rows) == 8  # the "system" entry is not a card
    assert rows[0] == ("AMD Instinct MI300X", round(206141652992 / 2**30, 1))  # 192.0 GiB


def test_amd_smi_json_old_list_and_new_gpu_data_forms() -> None:
    assert parse_amd_smi(AMD_SMI_MI300X) == [("AMD Instinct MI300X", 192.0)] * 4  # 196592 MB(iB) / 1024
    assert parse_amd_smi(AMD_SMI_NEW) == [("AMD Instinct MI250X", 64.0)]


def test_unreadable_memory_is_none_not_an_error() -> None:
    assert parse_nvidia_smi("NVIDIA GB10, [N/A]\n\n") == [("NVIDIA GB10", None)]


# --- the tools on PATH -----------------------------------------------------------------------------------------------
def test_two_rtx_3090s_from_a_stub_nvidia_smi(bin_dir: Path, memory: dict[str, float]) -> None:
    printing(bin_dir, "nvidia-smi", "NVIDIA GeForce RTX 3090, 24576\nNVIDIA GeForce RTX 3090, 24576\n")
    found = detect(memory)
    assert found.tool == "nvidia-smi"
    assert found.primary is not None
    device, count = found.primary
    assert (device.accelerator, count, device.memory_gb) == ("nvidia-rtx-3090", 2, 24.0)
    assert found.summary() == ("detected by nvidia-smi: 2 × NVIDIA GeForce RTX 3090, 24 GB each "
                               "(knowledge base: nvidia-rtx-3090)")


def test_unknown_name_is_kept_with_its_memory(bin_dir: Path, memory: dict[str, float]) -> None:
    printing(bin_dir, "nvidia-smi", "NVIDIA GeForce RTX 4090 Laptop GPU, 16376\n")
    device, count = detect(memory).primary or (None, 0)
    assert device is not None and count == 1
    assert (device.name, device.accelerator, device.memory_gb) == ("NVIDIA GeForce RTX 4090 Laptop GPU", None, 16.0)


def test_rocm_smi_is_asked_when_amd_smi_is_absent(bin_dir: Path, memory: dict[str, float]) -> None:
    printing(bin_dir, "rocm-smi", ROCM_SMI_MI300X)
    found = detect(memory)
    assert (found.tool, found.groups()[0][0].accelerator, found.groups()[0][1]) == ("rocm-smi", "amd-mi300x", 8)
    assert found.tried == ("nvidia-smi: not found", "amd-smi: not found")


def test_amd_smi_is_preferred(bin_dir: Path, memory: dict[str, float]) -> None:
    printing(bin_dir, "amd-smi", AMD_SMI_MI300X)
    printing(bin_dir, "rocm-smi", "{}")
    found = detect(memory)
    assert (found.tool, found.groups()[0][1]) == ("amd-smi", 4)


def test_a_hanging_tool_is_cut_off_and_the_next_one_asked(bin_dir: Path, memory: dict[str, float]) -> None:
    stub(bin_dir, "nvidia-smi", "sleep 30")  # a child of the script: the whole group must go, not just sh
    printing(bin_dir, "rocm-smi", ROCM_SMI_MI300X)
    found = detect(memory, timeout=0.3)
    assert found.tried[0] == "nvidia-smi: no answer within 0.3 s"
    assert found.tool == "rocm-smi"


def test_failing_and_garbled_tools_become_reasons(bin_dir: Path, memory: dict[str, float]) -> None:
    stub(bin_dir, "nvidia-smi", "echo 'NVIDIA-SMI has failed because it could not communicate with the driver' >&2"
                                "; exit 9")
    printing(bin_dir, "amd-smi", "not json at all")
    found = detect(memory, system="Linux")
    assert not found.found
    assert found.tried[0] == ("nvidia-smi: exit status 9: NVIDIA-SMI has failed because it could not communicate "
                              "with the driver")
    assert found.tried[1].startswith("amd-smi: unreadable output")
    assert found.summary().startswith("no GPU detected (rocm-smi not found; nvidia-smi: exit status 9")


def test_no_tool_at_all_says_so_with_the_cpu(bin_dir: Path, memory: dict[str, float]) -> None:
    found = detect(memory, system="Linux")
    assert not found.found and found.primary is None
    assert found.summary().startswith("no GPU detected (nvidia-smi, amd-smi, rocm-smi not found)")


def test_run_tool_reports_a_missing_tool(bin_dir: Path) -> None:
    assert run_tool(["nvidia-smi"]) == ToolRun("nvidia-smi", error="not found", missing=True)


# --- Apple silicon ---------------------------------------------------------------------------------------------------
def sysctl(text: str) -> object:
    def runner(argv: Sequence[str], timeout: float) -> ToolRun:
        return ToolRun(argv[0], stdout=text) if argv[0] == "sysctl" else ToolRun(argv[0], "", "not found", True)
    return runner


@pytest.mark.parametrize(("out", "expected"), [
    ("Apple M3 Max\n68719476736\n16\n", "apple-m3-max"),  # 64 GB, 16 cores: the entry's chip
    ("Apple M3 Max\n38654705664\n14\n", None),  # the 14-core binned chip: not the 16-core entry
    ("Apple M2 Ultra\n206158430208\n24\n", "apple-m2-ultra"),
    ("Apple M1\n17179869184\n8\n", None),
])
def test_apple_silicon_chip_and_unified_memory(out: str, expected: str | None, memory: dict[str, float]) -> None:
    found = detect(memory, runner=sysctl(out), system="Darwin")  # type: ignore[arg-type]
    assert found.tool == "sysctl" and found.memory_configurable == (expected is not None)
    device = found.devices[0]
    assert device.accelerator == expected
    assert device.memory_gb == int(out.split()[-2]) / 2**30


def test_a_table_without_entries_maps_nothing(memory: dict[str, float]) -> None:
    assert identify("NVIDIA L4", 22.5, NameTable((), (0.85, 1.05)), memory)[0] is None
