"""Detect the accelerators of the machine gpuadvisor runs on, and name them as knowledge-base parts, exactly.

Asks what the machine itself reports: `nvidia-smi`'s query interface, `amd-smi` / `rocm-smi` JSON, Apple silicon's
chip name and unified memory (sysctl), otherwise the CPU model and RAM. Every tool call has a short timeout and any
failure becomes "not detected" with a reason: detection never raises and never fails a consultation.

Names are matched against `data/reported_names.toml` exactly (never loosely: "NVIDIA A100-SXM4-80GB" must not become
the PCIe 40 GB part), and the reported memory must fit the part; anything else is reported as unknown with its
memory, so the advisor never silently substitutes a guess.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import subprocess
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from gpuadvisor.knowledge.budget import read_toml
from gpuadvisor.knowledge.errors import AdvisorError, KnowledgeError
from gpuadvisor.knowledge.files import KNOWLEDGE_MAX_BYTES

TIMEOUT_S = 2.0
"""Longest wait for one tool: a hung driver must not hold up the questionnaire or a consultation."""
NAMES_FILE = Path(__file__).parent / "data" / "reported_names.toml"
GPU_TOOLS = ("nvidia-smi", "amd-smi", "rocm-smi")

NVIDIA_SMI = ("nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader,nounits")
AMD_SMI = ("amd-smi", "static", "--asic", "--vram", "--json")
ROCM_SMI = ("rocm-smi", "--showproductname", "--showmeminfo", "vram", "--json")

Runner = Callable[[Sequence[str], float], "ToolRun"]


# --- what a tool said ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ToolRun:
    """One tool call: its output, or why there is none (`error` is set when it failed or was absent)."""

    tool: str
    stdout: str = ""
    error: str | None = None
    missing: bool = False


def run_tool(argv: Sequence[str], timeout: float = TIMEOUT_S) -> ToolRun:
    """Run a tool from PATH with a timeout; the whole process group is killed when it hangs (a shell-script wrapper
    that waits on a child would otherwise keep the pipe open and the call blocked)."""
    tool = argv[0]
    path = shutil.which(tool)
    if path is None:
        return ToolRun(tool, error="not found", missing=True)
    try:
        proc = subprocess.Popen([path, *argv[1:]], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, errors="replace",
                                start_new_session=os.name == "posix")
    except OSError as exc:
        return ToolRun(tool, error=f"could not start: {exc.strerror or exc}")
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        return ToolRun(tool, error=f"no answer within {timeout:g} s")
    if proc.returncode != 0:
        first = next((line.strip() for line in (err or out).splitlines() if line.strip()), "")
        return ToolRun(tool, stdout=out, error=f"exit status {proc.returncode}" + (f": {first[:160]}" if first else ""))
    return ToolRun(tool, stdout=out)


def _kill(proc: subprocess.Popen[str]) -> None:
    killpg = getattr(os, "killpg", None)
    try:
        if killpg is not None and os.name == "posix":
            killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except OSError:
        pass
    try:
        proc.communicate(timeout=0.5)
    except (subprocess.TimeoutExpired, OSError, ValueError):
        pass


# --- the name table (data) -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class NameEntry:
    """One knowledge-base part and the exact names tools report for it."""

    id: str
    reported_names: tuple[str, ...]
    memory: Literal["fixed", "configurable"] = "fixed"
    cpu_cores: int | None = None
    catalog_names: tuple[str, ...] = ()
    """Names price catalogs print for the part (gpuhunt's gpu_name), matched by `kb refresh` the same exact way."""


@dataclass(frozen=True)
class NameTable:
    entries: tuple[NameEntry, ...]
    memory_ratio: tuple[float, float]

    def candidates(self, name: str) -> list[NameEntry]:
        key = name_key(name)
        return [e for e in self.entries if key in {name_key(n) for n in e.reported_names}]

    def for_catalogs(self) -> NameTable:
        """The same parts under the names price catalogs print (`catalog_names`), for `identify`."""
        return NameTable(tuple(NameEntry(e.id, e.catalog_names, e.memory, e.cpu_cores)
                               for e in self.entries if e.catalog_names), self.memory_ratio)


def name_key(name: str) -> str:
    """The form names are compared in: letter case and runs of spaces do not count, every other character does."""
    return " ".join(name.split()).casefold()


@cache
def load_name_table(path: Path = NAMES_FILE) -> NameTable:
    """Read reported_names.toml; a malformed file raises KnowledgeError naming the file and the entry."""
    try:
        doc = read_toml(path, what="name table", max_bytes=KNOWLEDGE_MAX_BYTES)
    except AdvisorError as exc:
        raise KnowledgeError(f"cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise KnowledgeError(f"{path}: not valid TOML: {exc}") from None
    ratio = doc.get("match", {}).get("memory_ratio")
    if not (isinstance(ratio, list) and len(ratio) == 2 and all(isinstance(x, int | float) for x in ratio)
            and 0 < ratio[0] < ratio[1]):
        raise KnowledgeError(f"{path}: [match] memory_ratio must be [low, high] with 0 < low < high")
    entries = []
    for n, raw in enumerate(doc.get("accelerator", []), 1):
        where = f"{path}: [[accelerator]] #{n} ({raw.get('id', 'no id')})"
        names = raw.get("reported_names", [])
        catalog = raw.get("catalog_names", [])
        if not isinstance(raw.get("id"), str) or not _names(names) or not _names(catalog) or not (names or catalog):
            raise KnowledgeError(f"{where}: needs an id and a non-empty reported_names or catalog_names list of "
                                 "strings")
        memory = raw.get("memory", "fixed")
        if memory not in ("fixed", "configurable"):
            raise KnowledgeError(f"{where}: memory must be \"fixed\" or \"configurable\", not {memory!r}")
        cores = raw.get("cpu_cores")
        if cores is not None and (not isinstance(cores, int) or cores < 1):
            raise KnowledgeError(f"{where}: cpu_cores must be a positive integer")
        unknown = set(raw) - {"id", "reported_names", "catalog_names", "memory", "cpu_cores", "sources"}
        if unknown:
            raise KnowledgeError(f"{where}: unknown key {', '.join(sorted(unknown))}")
        entries.append(NameEntry(raw["id"], tuple(names), memory, cores, tuple(catalog)))
    return NameTable(tuple(entries), (float(ratio[0]), float(ratio[1])))


def _names(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(x, str) and x.strip() for x in value)


# --- what was found --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Device:
    """One accelerator as the machine reports it, and the knowledge-base part it is (None: unknown, see `reason`)."""

    name: str
    memory_gb: float | None
    """Memory in the vendors' GB (GiB: nvidia-smi MiB ÷ 1024), as reported; unified memory on Apple silicon."""
    vendor: str
    accelerator: str | None = None
    reason: str = ""


@dataclass(frozen=True)
class Detection:
    """What detection found on this machine, with the reason for every tool that gave nothing."""

    devices: tuple[Device, ...] = ()
    tool: str | None = None
    """The tool whose report is used ("nvidia-smi", "amd-smi", "rocm-smi", "sysctl")."""
    tried: tuple[str, ...] = ()
    """`tool: reason` for each tool that was absent or failed."""
    cpu: str | None = None
    ram_gb: float | None = None
    memory_configurable: bool = False
    """The part is sold with several memory sizes (Apple): the reported memory is the user's, not the part's."""

    @property
    def found(self) -> bool:
        return bool(self.devices)

    def groups(self) -> list[tuple[Device, int]]:
        """Identical devices counted together, the most numerous (then the largest) first."""
        counts: dict[Device, int] = {}
        for d in self.devices:
            counts[d] = counts.get(d, 0) + 1
        return sorted(counts.items(), key=lambda kv: (-kv[1], -(kv[0].memory_gb or 0), kv[0].name))

    @property
    def primary(self) -> tuple[Device, int] | None:
        groups = self.groups()
        return groups[0] if groups else None

    def summary(self) -> str:
        """One line for the user: what was found and how it maps, or why nothing was."""
        if not self.found:
            return self.nothing_found()
        parts = []
        for device, count in self.groups():
            mem = f", {_gb(device.memory_gb)} each" if device.memory_gb and count > 1 else \
                f", {_gb(device.memory_gb)}" if device.memory_gb else ""
            known = f"knowledge base: {device.accelerator}" if device.accelerator else f"unknown part: {device.reason}"
            parts.append(f"{count} × {device.name}{mem} ({known})")
        return f"detected by {self.tool}: " + "; ".join(parts)

    def nothing_found(self) -> str:
        missing = [t.split(":")[0] for t in self.tried if t.endswith(": not found")]
        failed = [t for t in self.tried if not t.endswith(": not found")]
        why = []
        if missing:
            why.append(f"{', '.join(missing)} not found")
        why += failed
        host = ", ".join(x for x in (f"CPU: {self.cpu}" if self.cpu else "",
                                      f"RAM {_gb(self.ram_gb)}" if self.ram_gb else "") if x)
        return "no GPU detected" + (f" ({'; '.join(why)})" if why else "") + (f"; {host}" if host else "")


def _gb(value: float | None) -> str:
    return "? GB" if value is None else f"{value:.3g} GB" if value < 100 else f"{value:.0f} GB"


# --- parsers (pure: tested with what the real tools print) -----------------------------------------------------------
def parse_nvidia_smi(text: str) -> list[tuple[str, float | None]]:
    """`name, memory.total` lines (MiB, no units) → (name, GiB). "[N/A]" memory (unified-memory parts) → None."""
    out: list[tuple[str, float | None]] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        name, _, mem = line.rpartition(",")
        if not name.strip():
            continue
        out.append((name.strip(), _number(mem.strip().removesuffix("MiB").strip(), 1 / 1024)))
    return out


def parse_rocm_smi(text: str) -> list[tuple[str, float | None]]:
    """`rocm-smi --showproductname --showmeminfo vram --json`: {"card0": {"Card series": …,
    "VRAM Total Memory (B)": "…"}, …} (a "system" entry is skipped) → (name, GiB), in card order."""
    doc = json.loads(text)
    if not isinstance(doc, dict):
        raise ValueError("expected a JSON object of cards")
    cards = [(k, v) for k, v in doc.items() if k.lower().startswith("card") and isinstance(v, dict)]
    out: list[tuple[str, float | None]] = []
    for _, info in sorted(cards, key=lambda kv: _card_index(kv[0])):
        fields = {str(k).strip().lower(): v for k, v in info.items()}
        name = fields.get("card series") or fields.get("card model") or ""
        out.append((str(name).strip(), _number(fields.get("vram total memory (b)"), 1 / 2**30)))
    return out


def parse_amd_smi(text: str) -> list[tuple[str, float | None]]:
    """`amd-smi static --asic --vram --json`: a list of GPUs (or {"gpu_data": [...]} in newer releases), each with
    asic.market_name and vram.size {value, unit} ("MB" meaning MiB) → (name, GiB)."""
    doc: Any = json.loads(text)
    if isinstance(doc, dict):
        doc = doc.get("gpu_data", [doc])
    if not isinstance(doc, list):
        raise ValueError("expected a JSON list of GPUs")
    out: list[tuple[str, float | None]] = []
    for gpu in doc:
        if not isinstance(gpu, dict):
            continue
        asic = gpu.get("asic")
        asic = asic if isinstance(asic, dict) else {}
        vram = gpu.get("vram")
        vram = vram if isinstance(vram, dict) else {}
        size = vram.get("size", vram.get("vram_size"))
        out.append((str(asic.get("market_name", "")).strip(), _amd_size(size)))
    return out


_UNITS = {"b": 1 / 2**30, "kb": 1 / 2**20, "mb": 1 / 1024, "mib": 1 / 1024, "gb": 1.0, "gib": 1.0}


def _amd_size(size: object) -> float | None:
    if isinstance(size, dict):
        factor = _UNITS.get(str(size.get("unit", "MB")).strip().lower())
        return None if factor is None else _number(size.get("value"), factor)
    if isinstance(size, str) and size.split()[1:]:
        value, unit = size.split()[0], size.split()[1]
        factor = _UNITS.get(unit.lower())
        return None if factor is None else _number(value, factor)
    return _number(size, 1 / 1024)


def _number(value: object, factor: float) -> float | None:
    try:
        number = float(str(value).strip())
    except (TypeError, ValueError):
        return None
    if not number > 0 or number == float("inf"):
        return None
    return round(number * factor, 1)


def _card_index(key: str) -> int:
    digits = "".join(ch for ch in key if ch.isdigit())
    return int(digits) if digits else 0


# --- naming ----------------------------------------------------------------------------------------------------------
def identify(name: str, memory_gb: float | None, table: NameTable, part_memory: Mapping[str, float],
             cpu_cores: int | None = None) -> tuple[str | None, str]:
    """The knowledge-base id of a reported name, or None and why. Only exact names count, and the memory must fit
    the part (`part_memory`: id → memory_gb of the knowledge base)."""
    if not name:
        return None, "the tool reported no name"
    candidates = [e for e in table.candidates(name) if e.id in part_memory]
    if not candidates:
        return None, "not in the knowledge base"
    fitting = [e for e in candidates if _fits(e, memory_gb, table, part_memory[e.id], cpu_cores)]
    if len(fitting) == 1:
        return fitting[0].id, ""
    if not fitting:
        sizes = ", ".join(f"{e.id} ({_gb(part_memory[e.id])})" for e in candidates)
        core_note = f"; {cpu_cores} CPU cores" if cpu_cores and any(e.cpu_cores for e in candidates) else ""
        return None, (f"reported with {_gb(memory_gb)}{core_note}, which does not fit {sizes} (a variant or "
                      f"partition the knowledge base does not hold)")
    ids = ", ".join(e.id for e in fitting)
    return None, f"the name fits several parts ({ids}) and the memory does not tell them apart"


def _fits(entry: NameEntry, memory_gb: float | None, table: NameTable, part_gb: float, cores: int | None) -> bool:
    if entry.cpu_cores is not None and cores != entry.cpu_cores:
        return False
    if memory_gb is None:
        return False
    if entry.memory == "configurable":
        return memory_gb <= part_gb * table.memory_ratio[1]
    low, high = table.memory_ratio
    return low * part_gb <= memory_gb <= high * part_gb


# --- the probes ------------------------------------------------------------------------------------------------------
def detect(part_memory: Mapping[str, float], *, timeout: float = TIMEOUT_S, runner: Runner = run_tool,
           table: NameTable | None = None, system: str | None = None) -> Detection:
    """Everything this machine reports, named against the knowledge base (`part_memory`: accelerator id →
    memory_gb). Never raises: a broken tool or name file becomes a reason in `tried`."""
    tried: list[str] = []
    try:
        names = table or load_name_table()
    except KnowledgeError as exc:
        names = NameTable((), (0.85, 1.05))
        tried.append(f"name table: {exc}")
    system = system or platform.system()
    gpu_probes: list[tuple[Sequence[str], Callable[[str], list[tuple[str, float | None]]], str]] = [
        (NVIDIA_SMI, parse_nvidia_smi, "nvidia"),
        (AMD_SMI, parse_amd_smi, "amd"),
        (ROCM_SMI, parse_rocm_smi, "amd"),
    ]
    for argv, parse, vendor in gpu_probes:
        if argv[0] == "rocm-smi" and "amd-smi: reported no GPU" in tried:
            continue  # amd-smi answered for the same driver: asking rocm-smi too would only cost time
        run = _safe(runner, argv, timeout)
        if run.error is not None:
            tried.append(f"{run.tool}: {run.error}")
            continue
        try:
            rows = parse(run.stdout)
        except (ValueError, TypeError, AttributeError) as exc:
            tried.append(f"{run.tool}: unreadable output ({exc})")
            continue
        rows = [(n, m) for n, m in rows if n]
        if not rows:
            tried.append(f"{run.tool}: reported no GPU")
            continue
        devices = tuple(_device(n, m, vendor, names, part_memory) for n, m in rows)
        return Detection(devices, run.tool, tuple(tried), *cpu_and_ram())
    if system == "Darwin":
        apple = _apple(names, part_memory, runner, timeout, tried)
        if apple is not None:
            return apple
    return Detection((), None, tuple(tried), *cpu_and_ram())


def _safe(runner: Runner, argv: Sequence[str], timeout: float) -> ToolRun:
    try:
        return runner(argv, timeout)
    except Exception as exc:  # a probe must never take the program down
        return ToolRun(argv[0], error=f"failed: {exc!r}")


def _device(name: str, memory_gb: float | None, vendor: str, table: NameTable, part_memory: Mapping[str, float],
            cpu_cores: int | None = None) -> Device:
    accelerator, reason = identify(name, memory_gb, table, part_memory, cpu_cores)
    return Device(name, memory_gb, vendor, accelerator, reason)


def _apple(table: NameTable, part_memory: Mapping[str, float], runner: Runner, timeout: float,
           tried: list[str]) -> Detection | None:
    """Apple silicon: the chip (machdep.cpu.brand_string), its unified memory (hw.memsize) and CPU cores."""
    run = _safe(runner, ("sysctl", "-n", "machdep.cpu.brand_string", "hw.memsize", "hw.physicalcpu"), timeout)
    if run.error is not None:
        tried.append(f"sysctl: {run.error}")
        return None
    lines = [line.strip() for line in run.stdout.splitlines() if line.strip()]
    if len(lines) < 2 or not lines[0].startswith("Apple "):
        tried.append("sysctl: not Apple silicon")
        return None
    memory = _number(lines[1], 1 / 2**30)
    cores = int(lines[2]) if len(lines) > 2 and lines[2].isdigit() else None
    device = _device(lines[0], memory, "apple", table, part_memory, cores)
    configurable = any(e.id == device.accelerator and e.memory == "configurable" for e in table.entries)
    return Detection((device,), "sysctl", tuple(tried), lines[0], memory, configurable)


def cpu_and_ram() -> tuple[str | None, float | None]:
    """The CPU model and the RAM in GB (GiB), from /proc/cpuinfo and sysconf; None where the system does not say."""
    cpu: str | None = None
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Hardware", "Processor") and value.strip():
                    cpu = value.strip()
                    break
    except OSError:
        pass
    if cpu is None:
        cpu = platform.processor() or None
    ram: float | None = None
    try:
        ram = _number(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"), 1 / 2**30)
    except (AttributeError, ValueError, OSError):
        pass
    return cpu, ram


def part_memory_of(accelerators: Mapping[str, Any]) -> dict[str, float]:
    """accelerator id → memory_gb from a catalog's accelerators (the figure detected memory is checked against)."""
    return {aid: float(a.memory_gb.value) for aid, a in accelerators.items()}


__all__ = ["Detection", "Device", "NameTable", "ToolRun", "cpu_and_ram", "detect", "identify", "load_name_table",
           "parse_amd_smi", "parse_nvidia_smi", "parse_rocm_smi", "part_memory_of", "run_tool"]
