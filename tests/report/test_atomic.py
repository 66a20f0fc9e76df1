"""Saving is atomic, never overwrites without force, and fails with a clear message (missing or unwritable directory,
full disk) leaving neither a temporary file nor a damaged original behind.

We run as root here, so chmod cannot make a directory unwritable: permission errors are simulated by making the
system call raise them, which is also what tests the cleanup paths.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from gpuadvisor.tui.report import ReportExistsError, ReportSaveError, save_report

REAL_OPEN = os.open
REAL_LINK = os.link


def names(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def test_writes_utf8_and_returns_the_path(tmp_path: Path) -> None:
    target = tmp_path / "plan.md"
    assert save_report("# 1× H200 — $3.59/h\n", target) == target
    assert target.read_bytes() == "# 1× H200 — $3.59/h\n".encode()
    assert names(tmp_path) == ["plan.md"]  # no temporary file left


def test_new_file_mode_follows_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        save_report("x", tmp_path / "r.txt")
    finally:
        os.umask(old)
    assert (tmp_path / "r.txt").stat().st_mode & 0o777 == 0o640  # 0o666 & ~0o027, not mkstemp's 0o600


def test_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    target = tmp_path / "plan.md"
    target.write_text("original")
    with pytest.raises(ReportExistsError, match=r"plan\.md: already exists; use --force"):
        save_report("new", target)
    assert target.read_text() == "original"
    assert names(tmp_path) == ["plan.md"]


def test_force_overwrites(tmp_path: Path) -> None:
    target = tmp_path / "plan.md"
    target.write_text("original")
    save_report("new", target, force=True)
    assert target.read_text() == "new"
    assert names(tmp_path) == ["plan.md"]


def test_file_appearing_during_the_write_is_not_clobbered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "plan.md"

    def racing_link(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        Path(dst).write_text("someone else's")  # another process wins the race
        REAL_LINK(src, dst)

    monkeypatch.setattr(os, "link", racing_link)
    with pytest.raises(ReportExistsError):
        save_report("mine", target)
    assert target.read_text() == "someone else's"
    assert names(tmp_path) == ["plan.md"]


def test_filesystem_without_hard_links_falls_back_to_replace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_links(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    save_report("ok", tmp_path / "plan.md")
    assert (tmp_path / "plan.md").read_text() == "ok"
    assert names(tmp_path) == ["plan.md"]


def test_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(ReportSaveError, match=r"directory .*missing does not exist; create it or save elsewhere"):
        save_report("x", tmp_path / "missing" / "plan.md")
    assert names(tmp_path) == []


def test_parent_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(ReportSaveError, match="is not a directory"):
        save_report("x", tmp_path / "file" / "plan.md")


def test_target_is_a_directory(tmp_path: Path) -> None:
    (tmp_path / "plan.md").mkdir()
    with pytest.raises(ReportSaveError, match="is a directory; give a file name"):
        save_report("x", tmp_path / "plan.md", force=True)


def test_unwritable_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def denied(path: str | os.PathLike[str], flags: int, mode: int = 0o777) -> int:
        if flags & os.O_CREAT:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return REAL_OPEN(path, flags, mode)

    monkeypatch.setattr(os, "open", denied)
    with pytest.raises(ReportSaveError, match=r"permission denied: cannot write in .*; choose another directory"):
        save_report("x", tmp_path / "plan.md")
    assert names(tmp_path) == []


def test_read_only_filesystem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def read_only(path: str | os.PathLike[str], flags: int, mode: int = 0o777) -> int:
        raise OSError(errno.EROFS, "Read-only file system", str(path))

    monkeypatch.setattr(os, "open", read_only)
    with pytest.raises(ReportSaveError, match="read-only filesystem"):
        save_report("x", tmp_path / "plan.md")


def test_disk_full_while_writing_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "plan.md"
    target.write_text("original")

    def full(fd: int, data: bytes | memoryview) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(ReportSaveError, match=r"plan\.md: the disk is full \(or over quota\); nothing was written"):
        save_report("new", target, force=True)
    assert target.read_text() == "original"
    assert names(tmp_path) == ["plan.md"]


def test_disk_full_partway_through_a_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real_write = os.write

    def short_then_full(fd: int, data: bytes | memoryview) -> int:
        calls.append(len(data))
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, bytes(data[:10]))  # a short write, as the kernel may do near a full disk

    monkeypatch.setattr(os, "write", short_then_full)
    with pytest.raises(ReportSaveError, match="disk is full"):
        save_report("x" * 100, tmp_path / "plan.md")
    assert calls == [100, 90]  # the writer continued after the short write
    assert names(tmp_path) == []


def test_disk_full_at_replace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "plan.md"
    target.write_text("original")

    def full(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(ReportSaveError, match="disk is full"):
        save_report("new", target, force=True)
    assert target.read_text() == "original"
    assert names(tmp_path) == ["plan.md"]


def test_interrupt_during_write_removes_the_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        save_report("x", tmp_path / "plan.md")
    assert names(tmp_path) == []


def test_relative_path_in_the_current_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert save_report("x", "plan.md") == Path("plan.md")
    assert (tmp_path / "plan.md").read_text() == "x"


def test_not_a_file_name(tmp_path: Path) -> None:
    with pytest.raises(ReportSaveError, match="not a file name"):
        save_report("x", str(tmp_path) + "/..")


def test_errors_print_without_traceback_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from gpuadvisor.tui.cli import main
    from tests.report import SAMPLE

    code = main(["report", "--from", str(SAMPLE), "--format", "md", "--output", str(tmp_path / "nope" / "r.md")])
    err = capsys.readouterr().err
    assert code == 4  # an I/O failure (issue 20): no longer exit 1, which means "a rule failed"
    assert err.startswith("gpuadvisor: error: ") and "nope does not exist" in err
    assert "Traceback" not in err
