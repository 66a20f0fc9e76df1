"""The hostile-input sweep of issues 20 and 31: at least one case of every kind the issues list, each run as a user
would (a fresh `gpuadvisor` process, its own config, cache and data directories), and a tally.

Every case must end with a clear message or a clean exit: the expected exit code, no traceback, no control byte on
either stream, a bounded error, and nothing already saved lost. A case that runs past HANG_S is killed and fails as a
hang; below that the time is a figure printed for each case (and the slowest in the tally), never a failure: on a
loaded 2-core machine a case that usually takes 2 s can take 8, and nothing is wrong. Issue 31 added the served app
(a real `gpuadvisor serve` on 127.0.0.1 and the app in served mode), `kb refresh`, Hugging Face ids, lifecycle files
and termination signals. Run it directly (`python tests/sweep_hostile.py`) or through tests/test_sweep_hostile.py.
"""

from __future__ import annotations

import json
import os
import re
import signal
import statistics
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
HANG_S = 60.0
"""A case still running after this is hung (the slowest case takes a few seconds on an idle machine)."""
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
    hung: bool = False


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
    # an interrupt is timed from the moment the command's own code runs: before that, Python itself is starting
    # (on a loaded machine that alone takes longer than a tenth of a second) and no program can handle a signal
    startup = _startup_seconds(env, home) if case.interrupt_after is not None else 0.0
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=out_target, stderr=subprocess.PIPE, env=env, cwd=home,  # type: ignore[arg-type]
                            preexec_fn=preexec)
    if case.interrupt_after is not None:
        time.sleep(startup + case.interrupt_after)
        proc.send_signal(signal.SIGINT)
    hung = False
    try:
        out, err = proc.communicate(timeout=HANG_S)
    except subprocess.TimeoutExpired:
        hung = True
        proc.kill()
        out, err = proc.communicate()
    seconds = time.perf_counter() - started
    if full is not None:
        full.close()
    return Run(proc.returncode, (out or b"").decode("utf-8", "replace"), err.decode("utf-8", "replace"), seconds,
               hung)


def _startup_seconds(env: dict[str, str], home: Path) -> float:
    """How long this interpreter takes, here and now, to start and import the command's entry module (median of
    three): when `gpuadvisor.tui.cli.main` can first handle Ctrl+C."""
    times = []
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import gpuadvisor.tui.cli"], env=env, cwd=home, check=False,
                       capture_output=True)
        times.append(time.perf_counter() - t)
    return sorted(times)[1]


def verdict(case: Case, run: Run, home: Path) -> str | None:
    """None when the case was handled; else what went wrong."""
    if run.hung:
        return f"hung: killed after {HANG_S:g} s"
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



# --- issue 31: the served app, refresh, Hub ids, lifecycles, signals -------------------------------------------------
SERVE_PRELUDE = """
import asyncio, os, signal, socket, subprocess, sys, threading, time
from pathlib import Path
import aiohttp
def fail(message):
    print("gpuadvisor sweep: " + message, file=sys.stderr)
    sys.exit(1)
def start(*options):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "gpuadvisor.tui", "serve", "--port", str(port), *options],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    line = proc.stdout.readline()
    threading.Thread(target=lambda: proc.stdout.read(), daemon=True).start()
    if not line.startswith("gpuadvisor serve: "):
        fail("serve did not start: " + line)
    return proc, port, line
def stop(proc):
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=20)
def children(pid):
    return [c for t in Path(f"/proc/{pid}/task").iterdir() for c in (t / "children").read_text().split()]
async def status(port, origin="same", cookies=None):
    headers = {"Origin": f"http://127.0.0.1:{port}"} if origin == "same" else ({"Origin": origin} if origin else {})
    try:
        async with aiohttp.ClientSession(cookies=cookies) as client:
            async with client.ws_connect(f"http://127.0.0.1:{port}/ws", headers=headers) as ws:
                await asyncio.sleep(0.5)
                return 101
    except aiohttp.WSServerHandshakeError as exc:
        return exc.status
"""

SERVE_OTHER_ORIGIN = SERVE_PRELUDE + """
proc, port, _ = start("--host", "127.0.0.1")
try:
    evil = asyncio.run(status(port, "http://evil.example"))
    none = asyncio.run(status(port, None))
    started = len(children(proc.pid))
    own = asyncio.run(status(port))
finally:
    stop(proc)
if (evil, none, started, own) != (403, 403, 0, 101):
    fail(f"evil.example {evil}, no origin {none}, processes {started}, own page {own}")
print(f"Origin http://evil.example: {evil}; none: {none}; processes started: {started}; the page's own: {own}")
"""

SERVE_FLOOD = SERVE_PRELUDE + """
proc, port, _ = start("--host", "127.0.0.1", "--max-sessions", "2")
async def flood():
    return await asyncio.gather(*(status(port) for _ in range(30)))
try:
    got = asyncio.run(flood())
    most = len(children(proc.pid))
finally:
    stop(proc)
if sorted(got).count(101) > 2 or set(got) - {101, 503}:
    fail(f"30 websockets: {sorted(got)}")
print(f"30 websockets at once with --max-sessions 2: {got.count(101)} sessions, {got.count(503)} refused (503)")
"""

SERVE_NETWORK = SERVE_PRELUDE + """
proc, port, line = start("--host", "0.0.0.0")
async def probe():
    async with aiohttp.ClientSession() as client:
        async with client.get(f"http://127.0.0.1:{port}/") as page:
            return page.status, await status(port)
try:
    page, ws = asyncio.run(probe())
finally:
    stop(proc)
if "?token=" not in line or (page, ws) != (401, 401):
    fail(f"--host 0.0.0.0: printed {line!r}; page {page}, websocket {ws}")
print(f"--host 0.0.0.0: a token printed; without it the page {page}, the websocket {ws}")
"""

SERVED_APP = """
import asyncio, sys
from pathlib import Path
from textual.widgets import Input
from gpuadvisor.knowledge.hardware_probe import Detection
from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.rules.inputs.answers import parse_answers
from gpuadvisor.tui import served
from gpuadvisor.tui.app import GpuAdvisorApp
served.enable(served.Served(Path("shared").resolve()))
got = []
GpuAdvisorApp.is_web = property(lambda self: True)
GpuAdvisorApp.deliver_text = lambda self, f, **k: got.append(k["save_filename"]) or "key"
catalog = load_catalog(user_dir=None)
app = GpuAdvisorApp(parse_answers({"model": {"name": "gpt2"}}), catalog_fn=lambda: catalog,
                    detect_fn=lambda c: Detection())
async def main():
    async with app.run_test(size=(100, 30)) as pilot:
        for _ in range(400):
            if app.result is not None:
                break
            await pilot.pause(0.05)
        await pilot.press("s")
        await pilot.pause()
        app.screen.query_one("#save-path", Input).value = sys.argv[1]
        await pilot.press("ctrl+s")
        await pilot.pause()
        return [app.open_shared(name) for name in sys.argv[2:]]
problems = asyncio.run(main())
print("downloads:", got)
for p in problems:
    print("open:", p)
"""


def served_disk(home: Path) -> None:
    write(home / "shared" / "ok.toml", '[model]\nname = "gpt2"\n')
    write(home / "outside" / "private.toml", '[model]\nname = "S3CRET-7f3a9"\n')
    write(home / "outside" / "victim.conf", "keep me\n")
    (home / "outside" / "sub").mkdir()
    (home / "shared" / "link.toml").symlink_to(home / "outside" / "private.toml")


def served_nothing_written(run: Run, home: Path) -> str | None:
    if (home / "outside" / "evil.md").exists() or (home / "evil.md").exists():
        return "a file was written on the server"
    if (home / "outside" / "victim.conf").read_text(encoding="utf-8") != "keep me\n":
        return "victim.conf was changed"
    if "downloads: ['evil.md']" not in run.out:
        return f"no download: {run.out[-300:]}"
    if "S3CRET" in run.out or run.out.count("open: ") != 3 or "open: None" in run.out:
        return f"the opens: {run.out[-500:]}"
    return None


REFRESH_UNDER_SIGTERM = """
import os, signal, sys
from pathlib import Path
from gpuadvisor.knowledge import loader
from gpuadvisor.knowledge.price_catalog import read_path
from gpuadvisor.tui.commands.kb_refresh import refresh
real = loader.load_catalog
def load(*args, **kwargs):
    if kwargs.get("refreshed") is not None:
        os.kill(os.getpid(), signal.SIGTERM)
    return real(*args, **kwargs)
loader.load_catalog = load
refresh(read_path(Path(sys.argv[1]), ["runpod"]), "x", Path(sys.argv[2]), out=print)
"""
CATALOGS = ROOT / "tests" / "data" / "gpuhunt"


def catalog_copy(old: str = "", new: str = "", rows: int = 0) -> Callable[[Path], None]:
    def setup(home: Path) -> None:
        text = (CATALOGS / "runpod.csv").read_text(encoding="utf-8").replace(old, new) if old else \
            (CATALOGS / "runpod.csv").read_text(encoding="utf-8")
        if rows:
            header, first = text.splitlines()[:2]
            text = header + "\n" + "\n".join([first] * rows) + "\n"
        write(home / "cat" / "runpod.csv", text)
    return setup


def nothing_left(run: Run, home: Path) -> str | None:
    left = [p.name for p in (home / "tmp").iterdir()] + [p.name for p in (home / "data").glob("*")]
    return f"left behind: {left}" if left else None


def killed_refresh_leftover(home: Path) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    write(home / "data" / f".refreshed-prices.toml.{gone.pid}.0badf00d.tmp", "half a file")


def leftover_removed(run: Run, home: Path) -> str | None:
    stale = [p.name for p in (home / "data").glob(".refreshed-prices.toml.*")]
    return f"still there: {stale}" if stale else None


HUB_COMMIT = "9216db5781bf21249d130ec9da846c4624c16137"


def hub_cache(ref: str | None = None) -> Callable[[Path], None]:
    def setup(home: Path) -> None:
        folder = home / "hf" / "hub" / "models--acme--tiny"
        write(folder / "snapshots" / HUB_COMMIT / "config.json", json.dumps(GPT2))
        write(folder / "refs" / "main", ref or HUB_COMMIT)
        (folder / "refs" / "pr").mkdir()
        write(home / "hf" / "outside-ref", HUB_COMMIT)  # what refs/pr/../../../../outside-ref reaches
        write(home / "SECRET-dir" / "config.json", json.dumps(GPT2))
    return setup


HUB_ENV = {"HF_HUB_CACHE": "{home}/hf/hub", "HF_HOME": "{home}/hf", "HF_HUB_OFFLINE": "1"}


def lifecycle_file(phases: int) -> Callable[[Path], None]:
    def setup(home: Path) -> None:
        body = ['stage = "prototyping"', "[lifecycle]", "horizon_months = 24",
                '[[phase]]', 'workload = "training"', "model = { params_b = 1 }", "training = { tokens_b = 20 }"]
        for i in range(1, phases):
            body += ["[[phase]]", 'workload = "inference"', 'model = "phase:1"', f"start_month = {i}", "months = 1",
                     f"inference = {{ requests_per_minute = {10 * i} }}"]
        write(home / "life.toml", "\n".join(body) + "\n")
    return setup


TUI_SIGNALLED = """
import os, pty, select, signal, subprocess, sys, termios, time
master, slave = pty.openpty()
proc = subprocess.Popen([sys.executable, "-m", "gpuadvisor.tui"], stdin=slave, stdout=slave, stderr=slave,
                        env={**os.environ, "TERM": "xterm-256color"}, start_new_session=True)
out = b""
def pump(until, limit):
    global out
    end = time.monotonic() + limit
    while time.monotonic() < end and not until():
        if select.select([master], [], [], 0.1)[0]:
            try:
                out += os.read(master, 65536)
            except OSError:
                return
pump(lambda: b"New consultation" in out, 40)
mark = len(out)
proc.send_signal(getattr(signal, sys.argv[1]))
pump(lambda: proc.poll() is not None, 40)
pump(lambda: False, 0.3)
code = proc.wait(timeout=10)
lflag = termios.tcgetattr(slave)[3]
tail = out[mark:]
checks = {"echo": bool(lflag & termios.ECHO), "line mode": bool(lflag & termios.ICANON),
          "normal screen": b"\\x1b[?1049l" in tail, "mouse off": b"\\x1b[?1000l" in tail}
if code != -getattr(signal, sys.argv[1]) or not all(checks.values()):
    print(f"gpuadvisor sweep: exit {code}; {checks}", file=sys.stderr)
    sys.exit(1)
print(f"{sys.argv[1]}: ended by it after the clean-up; terminal: " + ", ".join(k for k, v in checks.items() if v))
"""

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
    Case("tracebacks", "Ctrl+C a tenth of a second into the run", ["recommend", "--model", "gpt2"], INT,
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
    # 6. the served app (issue 31)
    Case("the served app", "a websocket from another site", [], OK, script=SERVE_OTHER_ORIGIN,
         check=says("Origin http://evil.example: 403; none: 403; processes started: 0; the page's own: 101")),
    Case("the served app", "30 websockets at once", [], OK, script=SERVE_FLOOD, check=says("28 refused (503)")),
    Case("the served app", "--host 0.0.0.0 without a token", [], OK, script=SERVE_NETWORK,
         check=says("without it the page 401, the websocket 401")),
    Case("the served app", "a visitor saves to ../outside and opens files outside the shared folder",
         ["outside/sub/../evil.md", "../outside/private.toml", "link.toml", "/etc/passwd.toml"], OK, served_disk,
         script=SERVED_APP, check=served_nothing_written),
    Case("the served app", "--host ''", ["serve", "--host", ""], BAD, check=says("--host: empty")),
    Case("the served app", "--host not..a..host", ["serve", "--host", "not..a..host"], BAD,
         check=says("'not..a..host' is not a host name")),
    Case("the served app", "--host 999.1.1.1", ["serve", "--host", "999.1.1.1"], BAD,
         check=says("'999.1.1.1' is not an IP address")),
    # 7. kb refresh (issue 31)
    Case("refresh", "a row priced $0.0000001 beside good rows", ["kb", "refresh", "--from", "cat"], OK,
         catalog_copy("RTX 4090,CZ,0.59,", "RTX 4090,CZ,0.0000001,"), says("Dropped 1 row", "line 3")),
    Case("refresh", "200,000 rows of one offer", ["kb", "refresh", "--from", "cat"], OK, catalog_copy(rows=200_000),
         says("200000 rows")),
    Case("refresh", "a symlink loop as the catalog folder", ["kb", "refresh", "--from", "cat"], BAD,
         symlink("cat", "cat"), says("a loop of symbolic links")),
    Case("refresh", "SIGTERM while the new overlay is checked", [str(CATALOGS / "runpod.csv"),
                                                                 "{home}/data/refreshed-prices.toml"],
         {-signal.SIGTERM}, lambda home: ((home / "tmp").mkdir(), (home / "data").mkdir()) and None,
         env={"TMPDIR": "{home}/tmp"}, script=REFRESH_UNDER_SIGTERM, check=nothing_left),
    Case("refresh", "a temporary file a killed refresh left", ["kb", "refresh", "--from", str(CATALOGS)], OK,
         killed_refresh_leftover, check=leftover_removed),
    # 8. Hugging Face ids (issue 31)
    Case("Hub ids", "a revision climbing out of the cache", [*E, "--model", "acme/tiny@pr/../../../../outside-ref"],
         BAD, hub_cache(), says("the revision after @ must be a branch, a tag, a commit hash"), env=HUB_ENV),
    Case("Hub ids", "a crafted ref file", [*E, "--model", "acme/tiny@main"], BAD,
         hub_cache("../../../../SECRET-dir"), env=HUB_ENV,
         check=lambda run, home: "echoed the ref" if "SECRET" in run.err else says("damaged")(run, home)),
    # 9. lifecycle files (issue 31)
    Case("lifecycle files", "1,000 phases", ["recommend", "--answers", "life.toml"], BAD, lifecycle_file(1000),
         says("1,000 [[phase]] tables; a lifecycle holds at most 12")),
    Case("lifecycle files", "12 phases, planned", ["recommend", "--answers", "life.toml", "--format", "json"], {0, 3},
         lifecycle_file(12), check=lambda run, home: None if '"fleet_choice"' in run.out else "no fleet"),
    # 10. signals (issue 31)
    Case("signals", "SIGTERM to the TUI", ["SIGTERM"], OK, script=TUI_SIGNALLED,
         check=says("ended by it after the clean-up; terminal: echo, line mode, normal screen, mouse off")),
    Case("signals", "SIGHUP to the TUI", ["SIGHUP"], OK, script=TUI_SIGNALLED,
         check=says("ended by it after the clean-up; terminal: echo, line mode, normal screen, mouse off")),
]


def main() -> int:
    tally: Counter[str] = Counter()
    failures: list[str] = []
    times: list[tuple[float, str]] = []
    for case in CASES:
        with tempfile.TemporaryDirectory(prefix="gpuadvisor-sweep-") as tmp:
            home = Path(tmp)
            run = run_case(case, home)
            problem = verdict(case, run, home)
        times.append((run.seconds, case.name))
        status = "ok" if problem is None else "FAIL"
        tally[status] += 1
        print(f"{status:4} {run.seconds:4.1f}s exit {run.code:>4}  [{case.kind}] {case.name}"
              + (f": {problem}" if problem else ""), flush=True)
        if problem:
            failures.append(f"[{case.kind}] {case.name}: {problem}")
    kinds = Counter(c.kind for c in CASES)
    ordered = sorted(times, key=lambda t: -t[0])
    print(f"\ntimes: {sum(t for t, _ in times):.1f} s in all, median {statistics.median(t for t, _ in times):.1f} s, "
          f"slowest {ordered[0][0]:.1f} s ({ordered[0][1]}); a case is a hang past {HANG_S:g} s")
    print(f"sweep: {len(CASES)} cases in {len(kinds)} kinds "
          f"({', '.join(f'{k} {n}' for k, n in kinds.items())}); {tally['ok']} handled, {tally['FAIL']} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
