"""Issue 20 in the knowledge layer: absurd numbers are refused with the field named, nesting is limited before
parsing, a BOM is accepted, unreadable folders and bad links are reported, the parse cache rebuilds itself, and the
one sanitiser keeps control bytes out of every string it is given."""

from __future__ import annotations

import json
import marshal
import os
import time
from pathlib import Path

import pytest

from gpuadvisor.knowledge import parsecache
from gpuadvisor.knowledge.bounds import MAX_HIDDEN, MAX_LAYERS
from gpuadvisor.knowledge.budget import loads_toml
from gpuadvisor.knowledge.errors import MAX_PROBLEMS, InputError, KnowledgeError, bounded
from gpuadvisor.knowledge.files import FileReadError, list_files, read_text_file
from gpuadvisor.knowledge.hf_config import architecture_from_config, read_hf_config
from gpuadvisor.knowledge.loader import load_catalog, validate_knowledge
from gpuadvisor.knowledge.nesting import MAX_DEPTH, NestingError, loads_json
from gpuadvisor.knowledge.sanitize import clean_strings, one_line, safe_text, shorten
from gpuadvisor.knowledge.schema import Architecture

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "configs"
OSC52 = "\x1b]52;c;ZWNobyBoaQ==\x07"
GPT2 = json.loads((CONFIGS / "gpt2.json").read_text(encoding="utf-8"))


# --- the one sanitiser ------------------------------------------------------------------------------------------------
def test_safe_text_removes_escape_sequences_c1_and_bidi_controls() -> None:
    assert safe_text(f"H100{OSC52}x") == "H100 ]52;c;ZWNobyBoaQ== x"  # ESC and BEL are gone: inert text
    assert safe_text("a\x9b31mb\u202ec") == "a 31mb c"
    assert safe_text("line\nnext\ttab", keep_newlines=True) == "line\nnext\ttab"
    assert safe_text("line\nnext") == "line next"
    assert safe_text("NVIDIA H100 · 80 GB — ok") == "NVIDIA H100 · 80 GB — ok"  # printable text is left alone


def test_shorten_cuts_a_megabyte_name_and_says_how_long_it_was() -> None:
    assert shorten("x" * 1_000_000, 20) == "x" * 19 + "… (1,000,000 characters)"
    assert one_line("  a \n\x1b b ") == "a b"


def test_clean_strings_reaches_into_models_lists_and_dicts() -> None:
    arch = Architecture(vocab_size=10, hidden_size=8, intermediate_size=8, num_hidden_layers=1,
                        num_attention_heads=1, expert_weights_format=f"mx{OSC52}")
    cleaned = clean_strings({"a": [arch, f"b{OSC52}"]})
    assert cleaned["a"][0].expert_weights_format == "mx ]52;c;ZWNobyBoaQ== "
    assert cleaned["a"][1] == "b ]52;c;ZWNobyBoaQ== "
    same = {"a": ["plain"]}
    assert clean_strings(same) is same  # nothing to change: nothing copied


def test_bounded_lists_the_first_problems_and_counts_the_rest() -> None:
    text = bounded([f"p{i}" for i in range(10_000)], "f.toml")
    assert text.splitlines() == [*(f"p{i}" for i in range(MAX_PROBLEMS)), "f.toml: ... and 9,995 more problems"]


# --- nesting ----------------------------------------------------------------------------------------------------------
def test_deep_json_is_refused_before_parsing_with_the_line() -> None:
    text = "{\n" + '"a": ' + "[" * 100_000 + "]" * 100_000 + "\n}"
    with pytest.raises(NestingError, match=rf"^x\.json:2: nested more than {MAX_DEPTH} levels deep"):
        loads_json(text, "x.json")


def test_deep_toml_by_brackets_or_by_dotted_keys_is_refused() -> None:
    with pytest.raises(NestingError, match=r"^x\.toml:1: nested more than 32"):
        loads_toml("a = " + "[" * 50_000 + "]" * 50_000, "x.toml")
    with pytest.raises(NestingError, match=r"^x\.toml:2: nested more than 32 levels deep \(a dotted key of more"):
        loads_toml("b = 1\na" + ".a" * 5_000 + " = 1", "x.toml")  # refused before parsing now, with its line


def test_brackets_inside_strings_and_comments_do_not_count() -> None:
    deep = "[" * 100
    assert loads_toml(f'a = "{deep}" # {deep}\nb = \'{deep}\'\n', "x") == {"a": deep, "b": deep}
    assert loads_json(json.dumps({"a": deep + '\\"' + deep}), "x") == {"a": deep + '\\"' + deep}
    assert loads_json("[" * MAX_DEPTH + "]" * MAX_DEPTH, "x") is not None  # the limit itself is allowed


def test_unclosed_deep_json_is_a_message_not_a_recursion_error() -> None:
    with pytest.raises(NestingError, match="nested too deeply to parse"):
        loads_json("[" * 200_000, "x.json")


def test_a_file_at_the_size_cap_of_brackets_is_scanned_quickly() -> None:
    started = time.perf_counter()
    with pytest.raises(json.JSONDecodeError):
        loads_json("[]" * 4_000_000, "x.json")  # 8 MB, flat: passes the depth check, then fails to parse
    assert time.perf_counter() - started < 4


def test_nan_and_infinity_are_refused_where_finite_numbers_are_required() -> None:
    with pytest.raises(InputError, match=r"^r\.json: NaN is not a number JSON allows"):
        loads_json('{"a": NaN}', "r.json", finite=True)
    assert loads_json('{"a": 1e308}', "r.json", finite=True) == {"a": 1e308}


# --- bounds -----------------------------------------------------------------------------------------------------------
def test_a_billion_layers_is_refused_at_once_naming_the_field() -> None:
    started = time.perf_counter()
    with pytest.raises(InputError) as info:
        architecture_from_config({**GPT2, "n_layer": 10**9}, source="c.json")
    assert time.perf_counter() - started < 1
    assert str(info.value) == (f"c.json: inconsistent config: field 'num_hidden_layers': 1000000000 is implausibly "
                               f"large: at most {MAX_LAYERS:,} (no published model comes close)")


@pytest.mark.parametrize(("field", "value", "name"), [
    ("vocab_size", 10**15, "vocab_size"), ("n_embd", 10**12, "hidden_size"), ("n_embd", 1e308, "hidden_size"),
])
def test_absurd_dimensions_are_refused(field: str, value: float, name: str) -> None:
    with pytest.raises(InputError, match=rf"^c\.json: inconsistent config: field '{name}': .* is implausibly large"):
        architecture_from_config({**GPT2, field: value}, source="c.json")


def test_infinite_and_huge_ratios_are_refused_not_overflowed() -> None:
    mpt = {"model_type": "mpt", "d_model": 4096, "n_heads": 32, "n_layers": 32, "vocab_size": 50432}
    with pytest.raises(InputError, match=r"field 'expansion_ratio' is implausibly large"):
        architecture_from_config({**mpt, "expansion_ratio": 1e308}, source="c.json")
    with pytest.raises(InputError, match=r"field 'n_embd' must be an integer, got inf"):
        architecture_from_config({**GPT2, "n_embd": float("inf")}, source="c.json")


def test_local_layers_is_closed_form_and_agrees_with_the_per_layer_rule() -> None:
    arch = Architecture(vocab_size=10, hidden_size=8, intermediate_size=8, num_hidden_layers=MAX_LAYERS,
                        num_attention_heads=1, sliding_window=4096, sliding_window_pattern=6)
    assert arch.local_layers == sum(arch.is_local_layer(i) for i in range(MAX_LAYERS)) == 8_334
    assert Architecture.model_fields["hidden_size"].metadata[-1].le == MAX_HIDDEN


def test_an_overlay_figure_must_be_finite(overlay_dir: Path) -> None:
    (overlay_dir / "inf.toml").write_text('[[accelerator]]\nid = "nvidia-l4"\n'
                                          'memory_gb = { value = inf, sources = ["doc-002"] }\n', encoding="utf-8")
    with pytest.raises(KnowledgeError, match=r"inf\.toml:3: accelerator 'nvidia-l4': memory_gb\.value: Input should "
                                             r"be a finite number"):
        load_catalog()


# --- files and folders ------------------------------------------------------------------------------------------------
def test_a_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf[model]\nname = 'gpt2'\n")
    assert read_text_file(path, what="answers file", max_bytes=1000) == "[model]\nname = 'gpt2'\n"
    config = tmp_path / "config.json"
    config.write_bytes(b"\xef\xbb\xbf" + (CONFIGS / "gpt2.json").read_bytes())
    assert read_hf_config(config).architecture.num_hidden_layers == 12


def test_list_files_reports_an_unreadable_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def denied(path: object) -> object:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(os, "scandir", denied)
    with pytest.raises(FileReadError) as info:
        list_files(tmp_path, ".toml", what="overlay")
    assert str(info.value) == f"{tmp_path}: cannot read the overlay directory: Permission denied"


def test_list_files_lists_bad_links_so_reading_them_names_them(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text("", encoding="utf-8")
    (tmp_path / "dangling.toml").symlink_to(tmp_path / "nowhere.toml")
    (tmp_path / "loop.toml").symlink_to(tmp_path / "loop.toml")
    (tmp_path / ".hidden.toml").write_text("", encoding="utf-8")
    assert [p.name for p in list_files(tmp_path, ".toml", what="overlay")] == ["a.toml", "dangling.toml", "loop.toml"]
    assert list_files(tmp_path / "absent", ".toml", what="overlay") == []
    with pytest.raises(FileReadError, match=r"loop\.toml: cannot read overlay file: Too many levels of symbolic"):
        read_text_file(tmp_path / "loop.toml", what="overlay file", max_bytes=100)


def test_dangling_and_looping_overlays_are_reported_not_skipped(overlay_dir: Path) -> None:
    (overlay_dir / "dangling.toml").symlink_to(overlay_dir / "gone.toml")
    (overlay_dir / "loop.toml").symlink_to(overlay_dir / "loop.toml")
    report = validate_knowledge()
    assert report.errors == [f"{overlay_dir / 'dangling.toml'}: no such overlay file (a symbolic link to nothing)",
                             f"{overlay_dir / 'loop.toml'}: cannot read overlay file: Too many levels of symbolic "
                             "links"]


def test_an_overlay_folder_that_is_a_file_is_reported(isolated_dirs: Path) -> None:
    isolated_dirs.mkdir(parents=True)
    (isolated_dirs / "knowledge").write_text("", encoding="utf-8")
    with pytest.raises(FileReadError, match=r"knowledge: cannot read the overlay directory: it is not a directory"):
        load_catalog()


def test_ten_thousand_wrong_elements_give_a_bounded_report(overlay_dir: Path) -> None:
    values = ", ".join('"x"' for _ in range(10_000))
    (overlay_dir / "many.toml").write_text(f'[[model]]\nid = "gpt2"\naliases = [{values}]\n', encoding="utf-8")
    errors = validate_knowledge().errors
    # the schema may see one problem per element; the report lists a few and counts the rest
    assert len(errors) <= MAX_PROBLEMS + 1
    assert all(len(e) < 400 for e in errors)


def test_a_megabyte_id_is_shortened_in_messages(overlay_dir: Path) -> None:
    long_id = "a" * 1_000_000
    (overlay_dir / "long.toml").write_text(f'[[accelerator]]\nid = "{long_id}"\nname = 3\n', encoding="utf-8")
    errors = validate_knowledge().errors
    assert errors and all(len(e) < 600 for e in errors)
    assert "(1,000,000 characters)" in errors[0]


# --- the parse cache --------------------------------------------------------------------------------------------------
def _shipped_cache_files() -> list[Path]:
    return sorted((parsecache.cache_dir() / "knowledge").glob("*"))


def test_a_cache_entry_of_the_wrong_shape_or_version_is_rebuilt() -> None:
    from gpuadvisor.knowledge import loader

    loader._cached_shipped.cache_clear()
    load_catalog(user_dir=None)  # fills this test's cache directory
    entries = _shipped_cache_files()
    assert entries, "the shipped files are cached"
    entries[0].write_bytes(marshal.dumps({"accelerator": "not a list of tables"}))  # the old format, wrong shape
    entries[1].write_bytes(marshal.dumps(("toml0-old", "x", {})))  # another version
    entries[2].write_bytes(b"\x00garbage")
    loader._cached_shipped.cache_clear()
    catalog = load_catalog(user_dir=None)
    assert "gpt2" in catalog.models
    for entry in entries[:3]:
        doc = marshal.loads(entry.read_bytes())
        assert doc[0] == parsecache._FORMAT and isinstance(doc[2], dict)  # rewritten


def test_a_sound_looking_but_wrong_cache_entry_does_not_fail_every_run(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuadvisor.knowledge import loader

    real_read = parsecache._read
    monkeypatch.setattr(parsecache, "_read", lambda path, sha: {"accelerator": [{"id": "broken"}]})
    loader._cached_shipped.cache_clear()
    catalog = load_catalog(user_dir=None)  # the cached copy fails validation: the text is parsed again
    assert "nvidia-h100-sxm5" in catalog.accelerators
    monkeypatch.setattr(parsecache, "_read", real_read)
    loader._cached_shipped.cache_clear()


@pytest.mark.parametrize(("field", "value", "message"), [
    ("memory_gb", -80, "value -80 is implausible: it must be over 0 and at most 100,000"),
    ("memory_bandwidth_gbs", 1e12, "value 1,000,000,000,000 is implausible: it must be over 0 and at most "
                                   "1,000,000"),
    ("bf16_tflops", -1, "value -1 is implausible: it must be at least 0 and at most 10,000,000"),
])
def test_absurd_hardware_figures_in_an_overlay_are_refused(overlay_dir: Path, field: str, value: float,
                                                            message: str) -> None:
    (overlay_dir / "hw.toml").write_text(f'[[accelerator]]\nid = "nvidia-l4"\n'
                                         f'{field} = {{ value = {value}, sources = ["doc-002"] }}\n', encoding="utf-8")
    with pytest.raises(KnowledgeError) as info:
        load_catalog()
    assert str(info.value) == f"{overlay_dir / 'hw.toml'}:3: accelerator 'nvidia-l4': {field}: {message}"
