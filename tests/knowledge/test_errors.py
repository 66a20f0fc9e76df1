"""Bad knowledge files give one clear error naming file, line, entry id and field (never a traceback);
`validate_knowledge` collects every error."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gpuadvisor.knowledge import loader, paths
from gpuadvisor.knowledge.errors import KnowledgeError
from gpuadvisor.knowledge.loader import load_catalog, validate_knowledge


def _error(overlay_dir: Path, name: str, text: str) -> str:
    (overlay_dir / name).write_text(text)
    with pytest.raises(KnowledgeError) as info:
        load_catalog()
    return str(info.value)


def test_toml_syntax_error_names_file_and_line(overlay_dir: Path) -> None:
    message = _error(overlay_dir, "bad.toml", '[[accelerator]]\nid = "x"\nname = "unterminated\n')
    assert message.startswith(f"{overlay_dir / 'bad.toml'}:3: TOML syntax error")


def test_unknown_field(overlay_dir: Path) -> None:
    text = '[[accelerator]]\nid = "nvidia-h100-sxm5"\nmemroy_gb = { value = 80, sources = ["doc-002"] }\n'
    message = _error(overlay_dir, "typo.toml", text)
    assert message == (f"{overlay_dir / 'typo.toml'}:3: accelerator 'nvidia-h100-sxm5': memroy_gb: "
                       "unknown field (not in the schema) (closest: memory_gb, memory_type)")


def test_wrong_type(overlay_dir: Path) -> None:
    text = '# my changes\n\n[[accelerator]]\nid = "nvidia-l4"\nname = "L4"\necc = "yes please"\n'
    message = _error(overlay_dir, "types.toml", text)
    expected = f"{overlay_dir / 'types.toml'}:6: accelerator 'nvidia-l4': ecc: Input should be a valid boolean"
    assert message.startswith(expected)


def test_nested_field_in_sub_table(overlay_dir: Path) -> None:
    text = ('[[instance]]\nid = "aws-p5.48xlarge"\n\n[[instance.price]]\ntype = "on-demand"\n'
            'usd_per_hour = 0\nas_of = "2026-10-01"\nsources = ["doc-002"]\n')
    message = _error(overlay_dir, "prices.toml", text)
    assert message == (f"{overlay_dir / 'prices.toml'}:6: instance 'aws-p5.48xlarge': price[0].usd_per_hour: "
                       "Input should be greater than 0")


def test_bad_date(overlay_dir: Path) -> None:
    text = ('[[instance]]\nid = "aws-p5.48xlarge"\nprice = [\n'
            '  { type = "on-demand", usd_per_hour = 40, as_of = "last week", sources = ["doc-002"] },\n]\n')
    message = _error(overlay_dir, "p.toml", text)
    assert message.startswith(f"{overlay_dir / 'p.toml'}:3: instance 'aws-p5.48xlarge': price[0].as_of: ")
    assert "YYYY-MM" in message


def test_new_entry_must_be_complete(overlay_dir: Path) -> None:
    message = _error(overlay_dir, "new.toml", '[[precision]]\nid = "q3_k_s"\nname = "GGUF Q3_K_S"\n')
    assert message.startswith(f"{overlay_dir / 'new.toml'}:1: precision 'q3_k_s': ")
    assert "Field required" in message


def test_missing_id(overlay_dir: Path) -> None:
    message = _error(overlay_dir, "noid.toml", '[[document]]\nfile = "x.txt"\ntitle = "X"\n')
    assert message == f"{overlay_dir / 'noid.toml'}:1: document #1: id: Field required (a non-empty string)"


def test_unknown_table(overlay_dir: Path) -> None:
    message = _error(overlay_dir, "t.toml", 'schema_version = 1\n\n[[acelerator]]\nid = "x"\n')
    assert message.startswith(f"{overlay_dir / 't.toml'}:3: unknown table 'acelerator'")


def test_dangling_accelerator_reference(overlay_dir: Path) -> None:
    text = ('[[instance]]\nid = "my-box"\nprovider = "onprem"\nprovider_name = "Us"\nprovider_kind = "user"\n'
            'instance = "box"\naccelerator = "nvidia-h100-sxm"\naccelerator_count = 8\n'
            'price = [{ type = "on-demand-equivalent", usd_per_hour = 20, as_of = "2026-11-01",'
            ' sources = ["doc-002"] }]\n')
    message = _error(overlay_dir, "box.toml", text)
    assert message.startswith(f"{overlay_dir / 'box.toml'}:7: instance 'my-box': accelerator: "
                              "unknown accelerator 'nvidia-h100-sxm' (closest: nvidia-h100-sxm5")


def test_unknown_source_id(overlay_dir: Path) -> None:
    text = '[[accelerator]]\nid = "nvidia-l4"\n\nmemory_gb = { value = 24, sources = ["my-notes"] }\n'
    message = _error(overlay_dir, "src.toml", text)
    assert message == (f"{overlay_dir / 'src.toml'}:4: accelerator 'nvidia-l4': memory_gb.sources[0]: "
                       "unknown source id 'my-notes'; define it in a [[source]] table")


def test_duplicate_id_across_overlays(overlay_dir: Path) -> None:
    entry = '[[document]]\nid = "policy"\nfile = "policy.md"\ntitle = "Our buying policy"\n'
    (overlay_dir / "a.toml").write_text(entry)
    message = _error(overlay_dir, "b.toml", "\n" + entry)
    assert message == (f"{overlay_dir / 'b.toml'}:2: document 'policy': duplicate id in overlays "
                       f"(first at {overlay_dir / 'a.toml'}:1)")


def _copy_shipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    data = tmp_path / "data"
    shutil.copytree(paths.data_dir(), data)
    monkeypatch.setattr(loader, "data_dir", lambda: data)  # the loader's reference to paths.data_dir
    return data


def test_duplicate_id_in_shipped_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _copy_shipped(tmp_path, monkeypatch)
    precisions = data / "precisions.toml"
    first_line = precisions.read_text().splitlines().index('id = "int4"')  # 0-based line of the id = the header + 1
    n = len(precisions.read_text().splitlines())
    with precisions.open("a") as f:
        f.write('\n[[precision]]\nid = "int4"\nname = "again"\nbits_per_weight = 4\ncompute = "fp16"\n'
                'uses = ["weights"]\nsources = ["doc-002"]\n')
    with pytest.raises(KnowledgeError) as info:
        load_catalog(user_dir=None)
    assert str(info.value) == (f"{precisions}:{n + 2}: precision 'int4': duplicate id "
                               f"(first defined at {precisions}:{first_line})")


def test_broken_shipped_file_is_reported_not_raised_as_traceback(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    data = _copy_shipped(tmp_path, monkeypatch)
    (data / "documents.toml").write_text("[[document]\n")
    with pytest.raises(KnowledgeError, match=r"documents.toml:1: TOML syntax error"):
        load_catalog(user_dir=None)
    (data / "documents.toml").unlink()
    with pytest.raises(KnowledgeError, match="shipped knowledge file is missing"):
        load_catalog(user_dir=None)


def test_validate_collects_every_error(overlay_dir: Path) -> None:
    (overlay_dir / "a.toml").write_text('[[accelerator]]\nid = "nvidia-l4"\necc = 3\n')
    (overlay_dir / "b.toml").write_text('[[instance]]\nid = "aws-g5.xlarge"\naccelerator = "nope"\n'
                                        'memory_sources = ["missing-source"]\n')
    report = validate_knowledge()
    assert report.catalog is None
    assert [m.split(": ")[0].rsplit("/", 1)[1] for m in report.errors] == ["a.toml:3", "b.toml:4", "b.toml:3"]
    assert "memory_sources[0]: unknown source id 'missing-source'" in report.errors[1]
    assert "accelerator: unknown accelerator 'nope'" in report.errors[2]
    with pytest.raises(KnowledgeError, match=r"a.toml:3: accelerator 'nvidia-l4': ecc"):
        load_catalog()  # fail-fast: only the first


def test_validate_ok(overlay_dir: Path) -> None:
    report = validate_knowledge()
    assert report.errors == [] and report.catalog is not None and len(report.catalog.accelerators) == 63


def test_missing_extra_file(tmp_path: Path) -> None:
    with pytest.raises(KnowledgeError, match="no such overlay file"):
        load_catalog(user_dir=None, extra_files=[tmp_path / "nope.toml"])


def test_a_problem_that_echoes_a_hostile_value_is_cut_to_a_line() -> None:
    """Issue 41: a rule pack's `severity = "[[[…"` (100,000 brackets) was echoed whole in its PackError; every
    multi-problem message is cut per line, saying how long the line was."""
    from gpuadvisor.knowledge.errors import MAX_PROBLEM_CHARS, bounded

    message = bounded(["p.toml:21: severity: got '" + "[" * 100_000 + "'", "p.toml:22: short"])
    first, second = message.splitlines()
    assert len(first) <= MAX_PROBLEM_CHARS + 30 and first.endswith("… (100,027 characters)")  # 26 + 100,000 + 1
    assert first.startswith("p.toml:21: severity: got '[[[") and second == "p.toml:22: short"
