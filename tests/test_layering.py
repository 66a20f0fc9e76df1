"""The layers import one way only: knowledge → rules → tui. The headless layers never load Textual or Rich."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {"knowledge": 0, "rules": 1, "tui": 2}


def test_knowledge_and_rules_do_not_import_textual_or_rich() -> None:
    code = (
        "import sys\n"
        "import gpuadvisor.knowledge.loader, gpuadvisor.knowledge.lookup, gpuadvisor.knowledge.hf_config\n"
        "import gpuadvisor.rules.consult, gpuadvisor.rules.estimate.consult, gpuadvisor.rules.inputs.answers\n"
        "from gpuadvisor.knowledge.loader import load_catalog\n"
        "from gpuadvisor.rules.consult import consult\n"
        "from gpuadvisor.rules.inputs.answers import parse_answers\n"
        "consult(parse_answers({'model': {'name': 'gpt2'}}), load_catalog(user_dir=None))\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in {'textual', 'rich'})\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"headless layers imported: {out.stdout.strip()}"


def test_estimate_and_recommend_json_paths_do_not_import_textual() -> None:
    code = (
        "import sys, io, contextlib\n"
        "from gpuadvisor.tui.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['estimate', '--model', 'gpt2', '--json'])\n"
        "    main(['recommend', '--model', 'gpt2', '--format', 'json'])\n"
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] == 'textual')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


@pytest.mark.parametrize("layer", ["knowledge", "rules"])
def test_lower_layers_never_import_higher_ones(layer: str) -> None:
    offenders = []
    for path in sorted((ROOT / layer).rglob("*.py")):
        for name in _imports(path):
            parts = name.split(".")
            if parts[0] in LAYERS and parts[0] != layer:
                offenders.append(f"{path.relative_to(ROOT)} imports {name} (not installed under that name)")
            if parts[0] == "gpuadvisor" and len(parts) > 1 and LAYERS.get(parts[1], -1) > LAYERS[layer]:
                offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not offenders, "\n".join(offenders)


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join(["gpuadvisor", *parts])


def _named_imports(path: Path, known: set[str]) -> set[str]:
    """The gpuadvisor modules a file names in an import: those inside functions (a late import hides a circle, it
    does not remove it) and those under `if TYPE_CHECKING:` (a type-only import still ties the two modules: each
    must change with the other) included."""
    out: set[str] = set()
    stack: list[ast.AST] = [ast.parse(path.read_text(encoding="utf-8"), filename=str(path))]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("gpuadvisor"):
            for alias in node.names:
                name = f"{node.module}.{alias.name}"
                out.add(name if name in known else node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("gpuadvisor"))
        stack.extend(ast.iter_child_nodes(node))
    return out & known


def test_no_module_imports_itself_round_a_circle() -> None:
    files = {_module_name(p): p for layer in LAYERS for p in (ROOT / layer).rglob("*.py")}
    known = set(files)
    graph = {m: _named_imports(p, known) - {m} for m, p in files.items()}
    circles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                circles.append(path[path.index(d):] + [d])
            elif d not in state:
                visit(d, [*path, d])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert not circles, "import circles:\n" + "\n".join(" → ".join(c) for c in circles)


FLOORS = ("sizing", "engine", "inputs", "planning", "pricing", "consultation", "owned", "lifecycle", "consult",
          "estimate")
"""rules/ by concept, lowest first (docs/architecture.md, "The floors of rules/"): a module imports its own floor
and the floors below, never one above. sizing and engine share the ground floor (pure math; the engine wrapper), and
rules/consult.py is the dispatcher above the consultation's floors, below estimate, which runs one consultation."""


def _floor(module: str) -> int:
    part = module.split(".")[2]  # gpuadvisor.rules.<floor or module>
    return max(FLOORS.index(part), 1) if part in FLOORS else -1


def test_rules_floors_import_only_downwards() -> None:
    files = {_module_name(p): p for p in (ROOT / "rules").rglob("*.py") if p.name != "__init__.py"}
    assert all(_floor(m) >= 0 for m in files), sorted(m for m in files if _floor(m) < 0)  # every module on a floor
    known = set(files)
    upward = sorted(f"{m} imports {d}" for m, p in files.items() for d in _named_imports(p, known)
                    if _floor(d) > _floor(m))
    assert not upward, "\n".join(upward)
