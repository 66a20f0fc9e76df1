"""The hostile-input sweep of issue 20: at least one case of every kind the issue lists, each run as a user would (a
fresh `gpuadvisor` process, its own config, cache and data directories), and a tally.

Every case must end with a clear message or a clean exit: the expected exit code, no traceback, no control byte on
either stream, a bounded error, under 5 s, and nothing already saved lost. Run it directly
(`python tests/sweep_hostile.py`) or through tests/test_sweep_hostile.py.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "tests" / "data" / "configs"
SAMPLE = ROOT / "tests" / "data" / "sample_result.json"
LIMIT_S = 5.0
OSC52 = "\x1b]52;c;ZWNobyBoaQ==\x07"
OSC52_TOML = "\\u001b]52;c;ZWNobyBoaQ==\\u0007"
"""The same sequence as a TOML string escape (a raw ESC is a TOML syntax error, which is not this case)."""
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
GPT2 = json.loads((CONFIGS / "gpt2.json").read_text(encoding="utf-8"))


@dataclass
class Run:
    code: int
    out: str
    err: str
    seconds: float


@dataclass
class Case:
    kind: str
    name: str
    args: list[str]
    expect: set[int]
    setup: Callable[[Path], None] = lambda home: None
    check: Callable[[Run, Path], str | None] = lambda run, home: None
    stdout: str = "pipe"  # pipe | closed | full
    env: dict[str, str] = field(default_factory=dict)
    interrupt_after: float | None = None
    script: str | None = None  # a Python program to run instead of the command (signals during a save, the TUI)


def _env(home: Path, extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUADVISOR_")}
    env.update(GPUADVISOR_CONFIG_DIR=str(home / "config"), GPUADVISOR_CACHE_DIR=str(home / "cache"),
               GPUADVISOR_DATA_DIR=str(home / "data"), GPUADVISOR_TODAY="2026-11-25", **extra)
    return env


def run_case(case: Case, home: Path) -> Run:
    case.setup(home)
    env = _env(home, {k: v.replace("{home}", str(home)) for k, v in case.env.items()})
    args = [a.replace("{home}", str(home)) for a in case.args]
    argv = [sys.executable, "-c", case.script, *args] if case.script else [sys.executable, "-m", "gpuadvisor.tui",
                                                                            *args]
    out_target: int | object = subprocess.PIPE
    full = None
    preexec = None
    if case.stdout == "full":
        full = open("/dev/full", "wb")  # noqa: SIM115
        out_target = full
    elif case.stdout == "closed":
        out_target = None
        preexec = lambda: os.close(1)  # noqa: E731
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=out_target, stderr=subprocess.PIPE, env=env, cwd=home,  # type: ignore[arg-type]
                            preexec_fn=preexec)
    if case.interrupt_after is not None:
        time.sleep(case.interrupt_after)
        proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=LIMIT_S * 3)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    seconds = time.perf_counter() - started
    if full is not None:
        full.close()
    return Run(proc.returncode, (out or b"").decode("utf-8", "replace"), err.decode("utf-8", "replace"), seconds)


def verdict(case: Case, run: Run, home: Path) -> str | None:
    """None when the case was handled; else what went wrong."""
    if run.seconds > LIMIT_S:
        return f"took {run.seconds:.1f} s"
    if "Traceback" in run.err:
        return "traceback: " + run.err.strip().splitlines()[-1][:200]
    if run.code not in case.expect:
        return f"exit {run.code}, expected {sorted(case.expect)}: {run.err.strip()[:200]}"
    for name, text in (("stdout", run.out), ("stderr", run.err)):
        if CONTROL.search(text.replace("\n", "").replace("\t", "")):
            return f"a control character reached {name}"
    if len(run.err) > 6000 or run.err.count("\n") > 14:
        return f"unbounded error output ({len(run.err):,} characters, {run.err.count(chr(10))} lines)"
    if run.code in (1, 2, 4, 70) and not run.err.startswith("gpuadvisor"):
        return f"no one-line message: {run.err[:200]!r}"
    return case.check(run, home)


# --- file makers ------------------------------------------------------------------------------------------------------
def write(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")


def config(**changes: object) -> Callable[[Path], None]:
    return lambda home: write(home / "config.json", json.dumps({**GPT2, **changes}))


def overlay(text: str, name: str = "o.toml") -> Callable[[Path], None]:
    return lambda home: write(home / "config" / "knowledge" / name, text)


def pack(text: str, name: str = "p.toml") -> Callable[[Path], None]:
    return lambda home: write(home / "config" / "rules" / name, text)


def answers(text: str | bytes, name: str = "a.toml") -> Callable[[Path], None]:
    return lambda home: write(home / name, text)


def both(*setups: Callable[[Path], None]) -> Callable[[Path], None]:
    def setup(home: Path) -> None:
        for s in setups:
            s(home)
    return setup


def says(*parts: str) -> Callable[[Run, Path], str | None]:
    def check(run: Run, home: Path) -> str | None:
        missing = [p for p in parts if p not in run.err + run.out]
        return f"message lacks {missing}: {run.err.strip()[:200]}" if missing else None
    return check


def symlink(link: str, target: str) -> Callable[[Path], None]:
    def setup(home: Path) -> None:
        (home / link).parent.mkdir(parents=True, exist_ok=True)
        (home / link).symlink_to(home / target)
    return setup


def corrupt_cache(home: Path) -> None:
    """Fill the parse cache with a normal run, then replace every entry with a dict of the wrong shape."""
    subprocess.run([sys.executable, "-m", "gpuadvisor.tui", *E, "--model", "gpt2"], env=_env(home, {}),
                   capture_output=True, check=True, timeout=30)
    import marshal

    for entry in (home / "cache" / "knowledge").iterdir():
        entry.write_bytes(marshal.dumps({"accelerator": "wrong shape"}))


SAVE_UNDER_SIGTERM = """
import os, signal, sys
from gpuadvisor.tui.report import atomic
real = os.write
def write(fd, data):
    n = real(fd, data[:4096])
    os.kill(os.getpid(), signal.SIGTERM)
    return n
atomic.os.write = write
atomic.save_report('new ' * 100_000, sys.argv[1], force=True)
"""


def kept_and_clean(run: Run, home: Path) -> str | None:
    names = sorted(p.name for p in home.iterdir() if p.name not in ("config", "cache", "data"))
    if names != ["saved.md"]:
        return f"left behind: {names}"
    if (home / "saved.md").read_text(encoding="utf-8") != "already saved\n":
        return "the file already saved was changed"
    return None


TUI_KILLED = """
import asyncio, os, signal
from gpuadvisor.knowledge.hardware_probe import Detection
from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.tui.app import GpuAdvisorApp
from textual import events
catalog = load_catalog(user_dir=None)
app = GpuAdvisorApp(catalog_fn=lambda: catalog, detect_fn=lambda c: Detection(tried=()))
async def main():
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("n")
        await pilot.pause()
        await pilot.press("ctrl+n")
        await pilot.pause()
        app.focused.post_message(events.Paste("/x/" + "m" * 300 + "\\x1b]52;c;aGk=\\x07"))
        await pilot.pause()
        await pilot.pause()
        os.kill(os.getpid(), signal.SIGKILL)  # a kill: nothing runs after this
asyncio.run(main())
"""


def draft_kept(run: Run, home: Path) -> str | None:
    path = home / "data" / "draft.json"
    if not path.is_file():
        return "no draft after the kill"
    raw = json.loads(path.read_text(encoding="utf-8"))["raw"]
    return None if str(raw.get("model", "")).startswith("/x/mmm") else f"draft lacks the model entry: {raw}"


# --- the cases --------------------------------------------------------------------------------------------------------
E = ["estimate", "--gpu", "nvidia-l4"]
BAD, IO, OK, INT = {2}, {4}, {0}, {130}
CASES: list[Case] = [
    # 1. unbounded work
    Case("unbounded work", "config.json with 10^9 layers", [*E, "--model-config", "config.json"], BAD,
         config(n_layer=10**9), says("num_hidden_layers", "implausibly large")),
    Case("unbounded work", "rule pack format width 999999999", ["recommend", "--model", "gpt2"], BAD,
         pack('pack = "p"\n[[rule]]\nid = "W"\ntitle = "w"\n[rule.when]\no = { kind = "option" }\n[rule.then]\n'
              'action = "advise"\nseverity = "info"\nmessage = "{o.title:>999999999}"\n'), says("width over 200")),
    Case("unbounded work", "vocab_size 10^15", [*E, "--model-config", "config.json"], BAD, config(vocab_size=10**15),
         says("vocab_size")),
    Case("unbounded work", "hidden_size 10^12", [*E, "--model-config", "config.json"], BAD, config(n_embd=10**12),
         says("hidden_size")),
    Case("unbounded work", "--context 10^13", [*E, "--model", "gpt2", "--context", "9999999999999"], BAD,
         check=says("--context is implausibly large")),
    # 2. tracebacks
    Case("tracebacks", "deeply nested TOML answers", ["recommend", "--answers", "a.toml"], BAD,
         answers("[model]\nname = " + "[" * 50_000 + "]" * 50_000 + "\n"), says("nested more than 32")),
    Case("tracebacks", "deeply nested JSON report", ["report", "--from", "r.json", "--format", "md"], BAD,
         answers('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "r.json"), says("nested more than 32")),
    Case("tracebacks", "deeply nested JSON answers", ["recommend", "--answers", "r.json"], BAD,
         answers("[" * 100_000, "r.json"), says("nested too deeply")),
    Case("tracebacks", "deeply nested config.json", [*E, "--model-config", "config.json"], BAD,
         answers('{"model_type": "gpt2", "x": ' + "[" * 100_000 + "]" * 100_000 + "}", "config.json"),
         says("nested more than 32")),
    Case("tracebacks", "deeply nested rule pack", ["recommend", "--model", "gpt2"], BAD,
         pack('pack = "p"\nx = ' + "[" * 50_000 + "]" * 50_000 + "\n"), says("nested more than 32")),
    Case("tracebacks", "deeply nested overlay by dotted keys", [*E, "--model", "gpt2"], BAD,
         overlay("a" + ".a" * 5000 + " = 1\n"), says("nested more than 32")),
    Case("tracebacks", "hidden_size 1e308", [*E, "--model-config", "config.json"], BAD, config(n_embd=1e308),
         says("hidden_size")),
    Case("tracebacks", "unreadable config directory (a loop)", [*E, "--model", "gpt2"], BAD,
         symlink("config/knowledge", "config/knowledge"), says("cannot read the overlay directory")),
    Case("tracebacks", "dangling symlink among rule packs", ["recommend", "--model", "gpt2"], BAD,
         symlink("config/rules/gone.toml", "nowhere.toml"), says("gone.toml", "symbolic link to nothing")),
    Case("tracebacks", "looping symlink among rule packs", ["recommend", "--model", "gpt2"], BAD,
         symlink("config/rules/loop.toml", "config/rules/loop.toml"), says("loop.toml", "symbolic links")),
    Case("tracebacks", "stdout closed", [*E, "--model", "gpt2"], IO, stdout="closed",
         check=says("cannot write to standard output: it is closed")),
    Case("tracebacks", "stdout > /dev/full", [*E, "--model", "gpt2"], IO, stdout="full",
         check=says("No space left on device")),
    Case("tracebacks", "ASCII stdout", [*E, "--model", "gpt2"], OK, env={"PYTHONIOENCODING": "ascii"},
         check=lambda run, home: None if "1 ? NVIDIA L4" in run.out else "no replacement character"),
    Case("tracebacks", "latin-1 stdout", ["recommend", "--model", "gpt2", "--top", "1"], {0, 3},
         env={"PYTHONIOENCODING": "latin-1"}),
    Case("tracebacks", "Ctrl+C in the first tenth of a second", ["recommend", "--model", "gpt2"], INT,
         interrupt_after=0.1),
    # 3. the TUI
    Case("the TUI", "model field over 255 bytes, then killed", [], {-signal.SIGKILL}, script=TUI_KILLED,
         check=draft_kept),
    # 4. control bytes
    Case("control bytes", "OSC 52 in an overlay's accelerator name", [*E, "--model", "gpt2"], OK,
         overlay(f'[[accelerator]]\nid = "nvidia-l4"\nname = "L4{OSC52_TOML}"\n'),
         check=lambda run, home: None if "]52;c;" in run.out else "the name did not arrive"),
    Case("control bytes", "OSC 52 in a config's model_type", [*E, "--model-config", "config.json"], OK,
         config(model_type=f"gpt2{OSC52}"), check=lambda run, home: None if "]52;c;" in run.out else "not shown"),
    Case("control bytes", "OSC 52 in an HTML report's title and meta", ["recommend", "--model", "gpt2", "--format",
                                                                        "html", "--top", "1"], {0, 3},
         overlay(f'[[model]]\nid = "gpt2"\nname = "GPT{OSC52_TOML}"\n'),
         check=lambda run, home: None if "<title>GPU recommendation: GPT ]52;c;" in run.out else "no title"),
    # 5. silent wrong results and unclear messages
    Case("unclear messages", "unreadable overlay directory (a file)", [*E, "--model", "gpt2"], BAD,
         lambda home: write(home / "config" / "knowledge", "x"), says("not a directory")),
    Case("unclear messages", "requests_per_minute = true", ["recommend", "--answers", "a.toml"], BAD,
         answers('[model]\nname = "gpt2"\n[inference]\nrequests_per_minute = true\n'),
         says("a.toml:3: inference: requests_per_minute: must be a number, not true")),
    Case("unclear messages", "unknown provider", ["recommend", "--model", "gpt2", "--providers", "aws,lamda"], BAD,
         check=says("unknown provider 'lamda'")),
    Case("unclear messages", "10,000 wrong-typed array elements", ["recommend", "--answers", "a.toml"], BAD,
         answers("[deployment]\nproviders = [" + ", ".join(["1"] * 10_000) + "]\n"),
         says("... and 9,995 more problems")),
    Case("unclear messages", "a 1 MB model name", [*E, "--model", "x" * 100_000], BAD,
         check=lambda run, home: None if len(run.err) < 1000 else "echoed whole"),
    Case("unclear messages", "a 1 MB accelerator id in an overlay", ["kb", "validate"], BAD,
         overlay('[[accelerator]]\nid = "' + "a" * 1_000_000 + '"\nname = 3\n'), says("(1,000,000 characters)")),
    Case("unclear messages", "UTF-8 BOM in answers", ["recommend", "--answers", "a.toml", "--top", "1"], {0, 3},
         answers(b'\xef\xbb\xbf[model]\nname = "gpt2"\n')),
    Case("unclear messages", "parse cache of the wrong shape", [*E, "--model", "gpt2"], OK, corrupt_cache),
    Case("unclear messages", "save error is not exit 1", ["report", "--from", str(SAMPLE), "--format", "md",
                                                          "--output", "nope/r.md"], IO, check=says("does not exist")),
    Case("unclear messages", "SIGTERM during a save", ["{home}/saved.md"], {-signal.SIGTERM},
         answers("already saved\n", "saved.md"), script=SAVE_UNDER_SIGTERM, check=kept_and_clean),
]


def main() -> int:
    tally: Counter[str] = Counter()
    failures: list[str] = []
    for case in CASES:
        with tempfile.TemporaryDirectory(prefix="gpuadvisor-sweep-") as tmp:
            home = Path(tmp)
            run = run_case(case, home)
            problem = verdict(case, run, home)
        status = "ok" if problem is None else "FAIL"
        tally[status] += 1
        print(f"{status:4} {run.seconds:4.1f}s exit {run.code:>4}  [{case.kind}] {case.name}"
              + (f": {problem}" if problem else ""), flush=True)
        if problem:
            failures.append(f"[{case.kind}] {case.name}: {problem}")
    kinds = Counter(c.kind for c in CASES)
    print(f"\nsweep: {len(CASES)} cases in {len(kinds)} kinds "
          f"({', '.join(f'{k} {n}' for k, n in kinds.items())}); {tally['ok']} handled, {tally['FAIL']} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
