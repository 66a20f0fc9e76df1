"""`current.gpu = "auto"`: the GPUs of this machine, detected and written into the answers before a consultation.

After this step the answers hold what was found as plain answers (`current.gpu` = the knowledge-base id, `gpu_count`,
`gpu_name` as reported, `gpu_memory_gb` for a part the knowledge base does not know or one sold in several memory
sizes) and `current.detection` says that they were detected, so every output shows where they came from. Detection
never fails a consultation: when nothing is found `current.gpu` is left unset and `detection` says why.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.rules.inputs.answers import AUTO_GPU, Answers

if TYPE_CHECKING:  # the probe (subprocess, shutil) is imported when a detection runs, not with the consultation
    from gpuadvisor.knowledge.hardware_probe import Detection

DetectFn = Callable[[Catalog], "Detection"]


def detect_for(catalog: Catalog) -> Detection:
    """Detect this machine's accelerators, named against `catalog`."""
    from gpuadvisor.knowledge.hardware_probe import detect, part_memory_of

    return detect(part_memory_of(catalog.accelerators))


def wants_detection(answers: Answers) -> bool:
    gpu: str = answers.current.gpu or ""
    return gpu.strip().lower() == AUTO_GPU


def resolve_auto_gpu(answers: Answers, catalog: Catalog,
                     detect_fn: DetectFn = detect_for) -> tuple[Answers, Detection | None]:
    """The answers with `current.gpu = "auto"` replaced by what this machine reports (unchanged otherwise)."""
    if not wants_detection(answers):
        return answers, None
    detection = detect_fn(catalog)
    return apply_detection(answers, detection), detection


def detected_answers(detection: Detection) -> dict[str, Any]:
    """The `current.*` answers a detection stands for, by dotted key (only `current.detection` when nothing was
    found). The questionnaire offers these as the defaults of its current-GPU questions."""
    out: dict[str, Any] = {}
    primary = detection.primary
    if primary is not None:
        device, count = primary
        if device.accelerator:
            out["current.gpu"] = device.accelerator
        out["current.gpu_count"] = min(count, 256)
        out["current.gpu_name"] = device.name
        if device.memory_gb and (device.accelerator is None or detection.memory_configurable):
            out["current.gpu_memory_gb"] = device.memory_gb
    out["current.detection"] = detection.summary()
    return out


_DETECTED_ONLY = {"gpu", "gpu_name", "detection"}
"""Keys detection always sets; the others (count, memory) keep what the user gave."""


def apply_detection(answers: Answers, detection: Detection) -> Answers:
    """Write a detection into the answers. What the user gave besides `gpu` (a count, a memory size) wins."""
    given = answers.given_keys()
    found = detected_answers(detection)
    changes: dict[str, Any] = {"current.gpu": found.get("current.gpu")}  # "auto" goes, found or not
    changes.update({dotted: value for dotted, value in found.items()
                    if dotted.removeprefix("current.") in _DETECTED_ONLY or dotted not in given})
    return answers.with_changes(changes, "detection")


def detection_note(answers: Answers) -> str | None:
    """The line every output lists with the defaults: which GPUs were detected (None when not detected)."""
    c = answers.current
    if c.detection is None:
        return None
    what = c.gpu or (f"unknown part {c.gpu_name!r}" if c.gpu_name else "none")
    count = f" × {c.gpu_count}" if c.gpu and c.gpu_count else ""
    return f"current.gpu = {what}{count}: {c.detection}"
