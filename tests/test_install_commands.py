"""The README's install commands are the ones CI runs, they carry the durable-rules define that Python 3.13 needs, and
requires-python and the classifiers name the versions CI tests."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFINE = "CPPFLAGS=-DPyEval_CallObject=PyObject_CallObject"


def _readme_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Install and run", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)\n```", section, flags=re.S)


def test_both_readme_commands_build_durable_rules_with_the_define() -> None:
    install, tests = _readme_commands()
    for command in (install, tests):
        assert f"&& {DEFINE} .venv/bin/pip install -q -e " in command  # on pip itself: `VAR=x a && b` sets it for a
    assert install.endswith("&& .venv/bin/gpuadvisor") and tests.endswith("&& .venv/bin/python -m pytest")


def test_ci_runs_the_readme_test_command_on_each_tested_python() -> None:
    _, tests = _readme_commands()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert f"    {tests} || exit\n" in ci
    versions = re.search(r"^for PYENV_VERSION in ([\d. ]+); do$", ci, flags=re.M)
    assert versions is not None
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    classified = {c.rsplit(" :: ", 1)[1] for c in project["classifiers"] if re.search(r":: 3\.\d+$", c)}
    assert set(versions[1].split()) <= classified == {"3.11", "3.12", "3.13"}
    assert project["requires-python"] == ">=3.11,<3.14"
