"""Issue 20 on the command line: one error path with the documented exit codes, a stdout that is closed, full or not
UTF-8, Ctrl+C, escape sequences from data, and saves that leave no temporary file when terminated."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpuadvisor.knowledge import errors
from gpuadvisor.tui.cli import main

ROOT = Path(__file__).resolve().parents[2]
OSC52 = "\x1b]52;c;ZWNobyBoaQ==\x07"
ESCAPES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def run(*args: str, env: dict[str, str] | None = None, **kwargs: object) -> subprocess.CompletedProcess[bytes]:
    """`gpuadvisor ARGS` in a fresh interpreter (what a shell sees: exit status, both streams as bytes)."""
    full = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "gpuadvisor.tui", *args], capture_output="stdout" not in kwargs,
                          env=full, timeout=60, check=False, **kwargs)  # type: ignore[call-overload]


def test_readme_exit_code_table_matches_the_codes() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = dict(re.findall(r"^\| (\d+) \| (.+?) \|$", readme, flags=re.M))
    assert {int(k) for k in table} == {errors.EXIT_OK, errors.EXIT_RULE_FAILED, errors.EXIT_BAD_INPUT,
                                       errors.EXIT_INFEASIBLE, errors.EXIT_IO, errors.EXIT_INTERNAL,
                                       errors.EXIT_INTERRUPTED}
    assert table[str(errors.EXIT_IO)].startswith("an I/O failure")
    assert table[str(errors.EXIT_BAD_INPUT)].startswith("bad input")
    from gpuadvisor.tui.report.atomic import ReportExistsError, ReportSaveError

    assert ReportSaveError.exit_code == errors.EXIT_IO and ReportExistsError.exit_code == errors.EXIT_BAD_INPUT
    from gpuadvisor.tui.cli import build_parser

    epilog = build_parser().epilog or ""  # `gpuadvisor --help` lists the same codes
    assert all(f"{code} " in epilog for code in table)


def test_an_internal_error_is_one_line_exit_70_and_debug_shows_the_traceback(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from gpuadvisor.tui.commands import estimate

    def broken(args: object) -> int:
        raise ZeroDivisionError("x" * 10_000)

    monkeypatch.setattr(estimate, "run", broken)
    assert main(["estimate", "--model", "gpt2"]) == errors.EXIT_INTERNAL
    err = capsys.readouterr().err
    assert err.startswith("gpuadvisor: error: internal error: ZeroDivisionError: xxx")
    assert "Traceback" not in err and len(err) < 600 and err.count("\n") == 1
    assert main(["estimate", "--model", "gpt2", "--debug"]) == errors.EXIT_INTERNAL
    assert "Traceback (most recent call last)" in capsys.readouterr().err


def test_recursion_and_overflow_never_escape_as_tracebacks(monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    from gpuadvisor.tui.commands import estimate

    for exc in (RecursionError("maximum recursion depth exceeded"), OverflowError("int too large")):
        monkeypatch.setattr(estimate, "run", lambda args, exc=exc: (_ for _ in ()).throw(exc))
        assert main(["estimate", "--model", "gpt2"]) == errors.EXIT_INTERNAL
        assert type(exc).__name__ in capsys.readouterr().err


def test_a_long_error_is_bounded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    answers = tmp_path / "a.toml"
    answers.write_text("[deployment]\nproviders = [" + ", ".join(["1"] * 10_000) + "]\n", encoding="utf-8")
    assert main(["recommend", "--answers", str(answers)]) == errors.EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert err.count("\n") == errors.MAX_PROBLEMS + 1 and "... and 9,995 more problems" in err


def test_closed_stdout_is_exit_4_with_one_line() -> None:
    done = run("estimate", "--model", "gpt2", stdout=None, stderr=subprocess.PIPE, preexec_fn=lambda: os.close(1))
    assert done.returncode == errors.EXIT_IO
    assert done.stderr.decode() == "gpuadvisor: error: cannot write to standard output: it is closed\n"


def test_full_stdout_is_exit_4_with_one_line() -> None:
    with open("/dev/full", "wb") as full:
        done = run("estimate", "--model", "gpt2", stdout=full, stderr=subprocess.PIPE)
    assert done.returncode == errors.EXIT_IO
    assert done.stderr.decode() == "gpuadvisor: error: cannot write to standard output: No space left on device\n"


def test_an_ascii_stdout_gets_replacement_characters() -> None:
    done = run("estimate", "--model", "gpt2", "--gpu", "nvidia-l4", env={"PYTHONIOENCODING": "ascii"})
    assert done.returncode == 0 and done.stderr == b""
    out = done.stdout.decode("ascii")  # it is ASCII: nothing unencodable reached the pipe
    assert "1 ? NVIDIA L4" in out  # the shipped "×" became "?"


def test_a_closed_pipe_is_quiet() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "gpuadvisor.tui", "kb", "list", "accelerators"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    proc.stdout.readline()
    proc.stdout.close()  # `| head -1`
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and b"Traceback" not in err


def test_ctrl_c_is_exit_130_without_a_traceback() -> None:
    # The interrupt must land while the command runs, not while the interpreter starts or after it has finished
    # (a fast consultation can end before a timed signal arrives). So the command is held inside `main`: its
    # JSON (~0.5 MB) goes to a pipe nobody reads, and once the write blocks on the full pipe (the kernel's wait
    # channel names a pipe write: `pipe_write`, `anon_pipe_write`, or `pipe_wait` on kernels before 5.x) the
    # command is certainly running.
    proc = subprocess.Popen([sys.executable, "-m", "gpuadvisor.tui", "recommend", "--model", "llama-3.1-70b",
                             "--format", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wchan = Path(f"/proc/{proc.pid}/wchan")
    deadline = time.monotonic() + 60
    def blocked_writing() -> bool:
        return any(name in wchan.read_text(errors="replace") for name in ("pipe_write", "pipe_wait"))

    while not blocked_writing() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert blocked_writing(), "the command never blocked writing its output"
    proc.send_signal(signal.SIGINT)
    assert proc.stderr is not None and proc.stdout is not None
    err = proc.stderr.read()
    proc.stderr.close()
    proc.stdout.close()
    assert proc.wait(timeout=60) == errors.EXIT_INTERRUPTED
    assert err.decode() == "gpuadvisor: interrupted\n"


def test_escape_sequences_from_an_overlay_and_a_config_never_reach_the_terminal(tmp_path: Path) -> None:
    overlays = tmp_path / "config" / "knowledge"
    overlays.mkdir(parents=True)
    (overlays / "evil.toml").write_text('[[accelerator]]\nid = "nvidia-l4"\nname = "L4\\u001b]52;c;aGk=\\u0007"\n',
                                        encoding="utf-8")  # the TOML escape: a raw ESC is a syntax error
    config = tmp_path / "config.json"
    gpt2 = (ROOT / "tests" / "data" / "configs" / "gpt2.json").read_text(encoding="utf-8")
    config.write_text(gpt2.replace('"model_type": "gpt2"', '"model_type": "gpt2\\u001b]52;c;aGk=\\u0007"'),
                      encoding="utf-8")
    env = {"GPUADVISOR_CONFIG_DIR": str(tmp_path / "config")}
    for args in (["estimate", "--model", "gpt2", "--gpu", "nvidia-l4"],
                 ["estimate", "--model-config", str(config), "--gpu", "nvidia-l4"],
                 ["kb", "list", "accelerators"],
                 ["recommend", "--model", "gpt2", "--top", "3"]):
        done = run(*args, env=env)
        text = done.stdout.decode() + done.stderr.decode()
        assert done.returncode in (0, 3), (args, done.stderr[-300:])
        assert "]52;c;" in text or args[0] == "recommend", args  # the data did arrive (text output)
        assert not ESCAPES.search(text.replace("\n", "").replace("\t", "")), (args, text[:300])


def test_sigterm_during_a_save_leaves_no_temporary_file(tmp_path: Path) -> None:
    script = (
        "import os, signal, sys\n"
        "from gpuadvisor.tui.report import atomic\n"
        "real = os.write\n"
        "def write(fd, data):\n"
        "    n = real(fd, data[:1024])\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    return n\n"
        "atomic.os.write = write\n"
        "atomic.save_report('x' * 100_000, sys.argv[1])\n"
        "print('not reached')\n"
    )
    target = tmp_path / "report.md"
    done = subprocess.run([sys.executable, "-c", script, str(target)], capture_output=True, timeout=60, check=False)
    assert done.returncode == -signal.SIGTERM  # it still ends as the sender asked
    assert b"not reached" not in done.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no report, no .report.md.*.tmp


def test_html_title_meta_and_svg_titles_are_sanitised() -> None:
    from gpuadvisor.tui.report.common import with_meta
    from gpuadvisor.tui.report.html import to_html
    from gpuadvisor.tui.report.jsonfmt import load_report
    from gpuadvisor.tui.report.svg import memory_chart

    result = with_meta(load_report(ROOT / "tests" / "data" / "sample_result.json"), title=f"T{OSC52}")
    assert result.report is not None
    evil = result.model_copy(update={"report": result.report.model_copy(update={"generator": f"g{OSC52}"})})
    html = to_html(evil)
    assert "<title>T ]52;c;ZWNobyBoaQ==</title>" in html
    assert 'content="g ]52;c;ZWNobyBoaQ=="' in html and not ESCAPES.search(html.replace("\n", ""))
    recs = [r.model_copy(update={"title": f"R{OSC52}"}) for r in result.recommendations]
    svg = memory_chart(recs)
    assert "R ]52;c;ZWNobyBoaQ==" in svg and not ESCAPES.search(svg.replace("\n", ""))


def test_an_unexpected_os_error_is_an_io_failure(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from gpuadvisor.tui.commands import estimate

    def denied(args: object) -> int:
        raise PermissionError(13, "Permission denied", "/srv/models")

    monkeypatch.setattr(estimate, "run", denied)
    assert main(["estimate", "--model", "gpt2"]) == errors.EXIT_IO
    assert capsys.readouterr().err == "gpuadvisor: error: /srv/models: Permission denied\n"


def test_a_megabyte_name_is_not_echoed_whole(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "--model", "x" * 1_000_000]) == errors.EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert err.startswith("gpuadvisor: error: --model: unknown model 'xxx") and "(1,000,002 characters)" in err
    assert len(err) < 500
