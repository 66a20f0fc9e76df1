"""read_text_file: regular UTF-8 files under the cap are read; everything else is refused before it is opened."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from gpuadvisor.knowledge import files
from gpuadvisor.knowledge.errors import InputError
from gpuadvisor.knowledge.files import FileReadError, read_file_bytes, read_text_file
from tests.badfiles import BAD_KINDS, make_bad_file, reason

CAP = 2 * files.MIB


def test_reads_a_regular_utf8_file_through_a_symlink(tmp_path: Path) -> None:
    target = tmp_path / "a.toml"
    target.write_text('model = "Ünïcode ✓"\n', encoding="utf-8")
    link = tmp_path / "link.toml"
    link.symlink_to(target)
    assert read_text_file(link, what="answers file", max_bytes=CAP) == 'model = "Ünïcode ✓"\n'


def test_a_file_of_exactly_the_cap_is_read_one_byte_more_is_not(tmp_path: Path) -> None:
    path = tmp_path / "a.toml"
    path.write_bytes(b"x" * 100)
    assert read_text_file(path, what="answers file", max_bytes=100) == "x" * 100
    with pytest.raises(FileReadError) as info:
        read_text_file(path, what="answers file", max_bytes=99)
    assert str(info.value) == f"{path}: cannot read answers file: it is 100 bytes, over the 99 bytes limit"


@pytest.mark.parametrize("kind", BAD_KINDS)
def test_each_bad_file_is_refused_with_its_reason(tmp_path: Path, kind: str) -> None:
    path = make_bad_file(tmp_path, kind, max_bytes=CAP)
    with pytest.raises(InputError) as info:
        read_text_file(path, what="answers file", max_bytes=CAP)
    assert str(info.value) == f"{path}: {reason(kind, what='answers file', max_bytes=CAP)}"
    assert isinstance(info.value, FileReadError) and info.value.path == path


def test_a_200_mb_file_is_refused_from_its_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "huge.toml"
    with path.open("wb") as fh:
        fh.truncate(200 * 1000 * 1000)

    def no_open(*args: object, **kwargs: object) -> int:
        raise AssertionError("an oversized file was opened")

    monkeypatch.setattr(os, "open", no_open)
    with pytest.raises(InputError, match=r"it is 200,000,000 bytes, over the 2 MiB limit$"):
        read_text_file(path, what="answers file", max_bytes=CAP)


def test_a_missing_file_and_a_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        read_text_file(tmp_path / "absent.toml", what="answers file", max_bytes=CAP)
    assert str(info.value) == f"{tmp_path / 'absent.toml'}: no such answers file"
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("", encoding="utf-8")
    with pytest.raises(InputError, match=r"file/x.toml: no such report file$"):
        read_text_file(not_a_dir / "x.toml", what="report file", max_bytes=CAP)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_a_file_without_read_permission(tmp_path: Path) -> None:
    path = tmp_path / "secret.toml"
    path.write_text("x = 1\n", encoding="utf-8")
    path.chmod(0)
    with pytest.raises(InputError, match=r"secret.toml: cannot read answers file: Permission denied$"):
        read_text_file(path, what="answers file", max_bytes=CAP)


def test_a_path_swapped_for_a_fifo_after_the_stat_is_caught_on_the_descriptor(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fifo = make_bad_file(tmp_path, "fifo", max_bytes=CAP)
    regular = tmp_path / "regular.toml"
    regular.write_text("x = 1\n", encoding="utf-8")
    real_stat = os.stat
    monkeypatch.setattr(os, "stat", lambda p, *a, **k: real_stat(regular) if Path(p) == fifo else real_stat(p, *a, **k))
    with pytest.raises(InputError) as info:  # the non-blocking open returns at once, fstat sees the FIFO
        read_text_file(fifo, what="answers file", max_bytes=CAP)
    assert str(info.value) == f"{fifo}: {reason('fifo', what='answers file', max_bytes=CAP)}"


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_a_file_larger_than_its_stat_says_is_cut_at_the_cap() -> None:
    path = Path("/proc/self/status")  # a regular file whose stat size is 0 but which holds about 1 KiB
    assert stat.S_ISREG(os.stat(path).st_mode) and os.stat(path).st_size == 0
    with pytest.raises(InputError, match=r"^/proc/self/status: cannot read status file: it is over the 100 bytes lim"):
        read_file_bytes(path, what="status file", max_bytes=100)
    assert b"Name:" in read_file_bytes(path, what="status file", max_bytes=CAP)


def test_the_readme_states_the_caps() -> None:
    text = " ".join((Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8").split())
    assert files.REPORT_MAX_BYTES == files.ANSWERS_MAX_BYTES  # an answers file may be a saved report
    assert f"{files.ANSWERS_MAX_BYTES // files.MIB} MiB for answers files and JSON reports" in text
    assert f"{files.CONFIG_MAX_BYTES // files.MIB} MiB for a `config.json`" in text
    assert files.PACK_MAX_BYTES == files.KNOWLEDGE_MAX_BYTES
    assert f"{files.KNOWLEDGE_MAX_BYTES // files.MIB} MiB for a knowledge overlay or a rule pack" in text
