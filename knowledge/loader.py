"""Load, merge and validate the knowledge base: the shipped TOML files plus the user's overlay files.

Why the care: every number the advisor prints comes from here, and users edit overlays by hand. So a bad file gives
ONE clear error naming file, line, entry and field (or, for `gpuadvisor kb validate`, every error, one per line),
never a traceback and never a silently ignored key.

Overlay rules: an entry whose id exists is shallow-merged (the overlay's top-level keys replace the shipped ones,
so `price = [...]` alone replaces the price list) and re-validated; a new id must be a complete entry.

The prices `gpuadvisor kb refresh` fetched (`paths.refreshed_prices_path`) come between the shipped files and the
user's overlays: a refreshed instance of a shipped id replaces that entry's prices of the refreshed kinds only (the
shipped prices of other kinds stay, as the fallback), a new id adds an instance; the user's own overlays still win.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, time
from difflib import get_close_matches
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from gpuadvisor.knowledge import budget
from gpuadvisor.knowledge.budget import Shape
from gpuadvisor.knowledge.catalog import Catalog, CatalogFile, RefreshInfo
from gpuadvisor.knowledge.errors import MAX_PROBLEMS, AdvisorError, KnowledgeError
from gpuadvisor.knowledge.files import KNOWLEDGE_MAX_BYTES, FileReadError, list_files, read_text_file
from gpuadvisor.knowledge.locate import find_line, split_syntax_error
from gpuadvisor.knowledge.nesting import NestingError
from gpuadvisor.knowledge.parsecache import parse_toml
from gpuadvisor.knowledge.paths import data_dir, overlay_dir, refreshed_prices_path
from gpuadvisor.knowledge.quotes import QUOTES_FILE, apply_quotes
from gpuadvisor.knowledge.quotes import today as quotes_today
from gpuadvisor.knowledge.sanitize import shorten
from gpuadvisor.knowledge.schema import (
    Accelerator,
    Assumption,
    Document,
    Engine,
    EngineProfile,
    Fabric,
    FreeTier,
    Instance,
    Model,
    Precision,
    Quote,
    ServingRecipe,
    Source,
    System,
    UsedPrice,
)
from gpuadvisor.knowledge.statefile import skipped

TABLES: dict[str, type[BaseModel]] = {
    "accelerator": Accelerator,
    "instance": Instance,
    "model": Model,
    "precision": Precision,
    "assumption": Assumption,
    "document": Document,
    "free_tier": FreeTier,
    "engine": Engine,
    "engine_profile": EngineProfile,
    "serving_recipe": ServingRecipe,
    "system": System,
    "fabric": Fabric,
    "quote": Quote,
    "used_price": UsedPrice,
}
SOURCE = "source"
META_KEYS = frozenset({"schema_version", "compiled"})
REFRESH_KEY = "refresh"
"""The metadata table of the refreshed-prices overlay (when, from where, what was read); only that file has it."""
SHIPPED_FILES = (
    "accelerators.toml",
    "cloud_instances.toml",
    "models.toml",
    "precisions.toml",
    "assumptions.toml",
    "documents.toml",
    "free_tiers.toml",
    "engines.toml",
    "systems.toml",
)
OPTIONAL_SHIPPED: frozenset[str] = frozenset()
"""Shipped files allowed to be missing (none in a release: a missing file means a broken install)."""
_SOURCE_LISTS = ("sources", "memory_sources", "config_sources", "topology_sources")


# ----------------------------------------------------------------------------------------------------------------
# Parsed files and raw entries
# ----------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _File:
    path: Path
    text: str
    sha256: str
    overlay: bool
    tables: Mapping[str, list[dict[str, Any]]]
    meta: Mapping[str, Any] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        return {kind: len(rows) for kind, rows in self.tables.items()}


@dataclass(frozen=True)
class _Raw:
    """One entry as written, with where each top-level key came from (for error lines after an overlay merge)."""

    kind: str
    data: dict[str, Any]
    origin: Mapping[str, tuple[_File, int]]
    home: tuple[_File, int]

    @property
    def entry_id(self) -> str:
        return shorten(str(self.data.get("id", "?")))

    def where(self, loc: Sequence[str | int] = ()) -> str:
        """'path:line' of field `loc` (the entry header when loc is empty or the key is absent)."""
        file, index = self.origin.get(str(loc[0]), self.home) if loc else self.home
        line = find_line(file.text, self.kind, index, loc)
        return f"{file.path}:{line}" if line else str(file.path)


class _Sink:
    """Fail fast (raise the first error) or collect every error for `kb validate`."""

    def __init__(self, collect: bool) -> None:
        self.collect = collect
        self.messages: list[str] = []

    def add(self, message: str) -> None:
        if not self.collect:
            raise KnowledgeError(message)
        self.messages.append(message)


def _fmt_loc(loc: Sequence[str | int]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _read(path: Path, overlay: bool, sink: _Sink) -> str | None:
    try:
        return read_text_file(path, what="overlay file" if overlay else "knowledge file", max_bytes=KNOWLEDGE_MAX_BYTES)
    except FileReadError as exc:
        sink.add(str(exc))
        return None


def _parse(path: Path, overlay: bool, sink: _Sink, meta_keys: frozenset[str] = META_KEYS,
           cache: bool | None = None, refresh: bool = False, text: str | None = None,
           shape: Shape | None = None) -> _File | None:
    """The file parsed (through the parse cache) into its tables; `text` and its `shape` when the caller has read
    it and checked its budget already (the overlay set)."""
    text = _read(path, overlay, sink) if text is None else text
    if text is None:
        return None
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()  # strict UTF-8 round-trips: the file's own bytes
    sha = digest[:12]
    try:
        doc = parse_toml(text, digest, use_cache=True if cache is None else cache, source=str(path),
                         refresh=refresh, checked=shape is not None)
    except NestingError as exc:
        sink.add(str(exc))
        return None
    except tomllib.TOMLDecodeError as exc:
        message, line = split_syntax_error(str(exc))
        sink.add(f"{path}:{line}: TOML syntax error: {message}" if line else f"{path}: TOML syntax error: {message}")
        return None
    if overlay and (shape is None or shape.dates):  # the walk costs ~0.15 ms an entry: only where a date may be
        doc = _dates_as_text(doc)
    tables: dict[str, list[dict[str, Any]]] = {}
    bare = _File(path, text, sha, overlay, tables, {k: v for k, v in doc.items() if k in meta_keys})
    for key, value in doc.items():
        if key in meta_keys:
            continue
        if key not in TABLES and key != SOURCE:
            expected = ", ".join(f"[[{k}]]" for k in (*TABLES, SOURCE))
            sink.add(f"{path}:{find_line(text, None, 0, (key,))}: unknown table '{key}' (expected {expected})")
            continue
        if not isinstance(value, list) or not all(isinstance(row, dict) for row in value):
            # the line is looked up only for the message: scanning every file's headers costs ~10 ms a run
            line = find_line(text, None, 0, (key,))
            sink.add(f"{path}:{line}: '{key}' must be an array of tables written [[{key}]]")
            continue
        tables[key] = value
    return bare


@dataclass
class _SetBudget:
    """The overlay files of one load, summed against `budget.OVERLAY_SET` before each is parsed."""

    total: Shape = field(default_factory=Shape)

    def add(self, text: str, source: str) -> Shape:
        """Check one file's text against a knowledge file's budget and the set's with it (BudgetError if over);
        returns the file's shape."""
        shape = budget.check_text(text, source, budget.KNOWLEDGE)
        self.total = self.total + shape
        budget.check(self.total, budget.OVERLAY_SET, f"{source} (with the overlay files before it)")
        return shape


def _dates_as_text(value: Any) -> Any:
    """TOML dates written bare (`as_of = 2026-10-01`) become the 'YYYY-MM-DD' strings the schema expects."""
    if isinstance(value, dict):
        return {k: _dates_as_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_dates_as_text(v) for v in value]
    if isinstance(value, date | time):
        return value.isoformat()
    return value


# ----------------------------------------------------------------------------------------------------------------
# Validation
# ----------------------------------------------------------------------------------------------------------------


def _validate(raw: _Raw, model: type[BaseModel], sink: _Sink) -> BaseModel | None:
    try:
        return model.model_validate(raw.data)
    except ValidationError as exc:
        errors = exc.errors()
        for err in errors[:MAX_PROBLEMS]:
            loc = err["loc"]
            message = str(err["msg"]).removeprefix("Value error, ")
            if err["type"] == "extra_forbidden" and loc:
                message = f"unknown field (not in the schema){_hint(str(loc[-1]), _field_names())}"
            sink.add(f"{raw.where(loc)}: {raw.kind} '{raw.entry_id}': {_fmt_loc(loc) or 'entry'}: {message}")
        if len(errors) > MAX_PROBLEMS:
            sink.add(f"{raw.where()}: {raw.kind} '{raw.entry_id}': ... and {len(errors) - MAX_PROBLEMS:,} more "
                     "problems in this entry")
        return None


@functools.cache
def _field_names() -> list[str]:
    """Every field name of every schema model, for 'did you mean' hints on misspelt keys."""
    names: set[str] = set()
    todo: list[type[BaseModel]] = [Source, *TABLES.values()]
    while todo:
        model = todo.pop()
        for name, info in model.model_fields.items():
            names.add(name)
            for arg in (info.annotation, *getattr(info.annotation, "__args__", ())):
                if isinstance(arg, type) and issubclass(arg, BaseModel) and arg not in todo:
                    todo.append(arg)
                for inner in getattr(arg, "__args__", ()):
                    if isinstance(inner, type) and issubclass(inner, BaseModel):
                        todo.append(inner)
    return sorted(names)


def _source_refs(data: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    if isinstance(data, dict):
        for key, value in data.items():
            if key in _SOURCE_LISTS and isinstance(value, list):
                for i, ref in enumerate(value):
                    yield (*path, key, i), ref
            else:
                yield from _source_refs(value, (*path, key))
    elif isinstance(data, list):
        for i, item in enumerate(data):
            yield from _source_refs(item, (*path, i))


def _hint(name: str, known: Sequence[str]) -> str:
    close = get_close_matches(name, list(known), n=3, cutoff=0.6)
    return f" (closest: {', '.join(close)})" if close else ""


def _check_refs(raw: _Raw, sources: Mapping[str, Any], accelerators: Mapping[str, Any], sink: _Sink,
                systems: Mapping[str, Any] | None = None) -> None:
    for loc, ref in _source_refs(raw.data):
        if isinstance(ref, str) and ref not in sources:
            sink.add(f"{raw.where(loc)}: {raw.kind} '{raw.entry_id}': {_fmt_loc(loc)}: unknown source id "
                     f"'{shorten(str(ref))}'"
                     f"{_hint(str(ref)[:200], list(sources))}; define it in a [[source]] table")
    if raw.kind in ("instance", "free_tier", "used_price", "serving_recipe") or (raw.kind == "system"
                                                                                 and "accelerator" in raw.data):
        acc = raw.data.get("accelerator")
        if acc not in accelerators:
            sink.add(f"{raw.where(('accelerator',))}: {raw.kind} '{raw.entry_id}': accelerator: unknown accelerator "
                     f"'{shorten(str(acc))}'{_hint(str(acc)[:200], list(accelerators))}")
    if raw.kind == "quote":  # a quote names a known part or machine (the schema checks it names exactly one)
        for key, known in (("accelerator", accelerators), ("system", systems or {})):
            ref = raw.data.get(key)
            if ref is not None and ref not in known:
                sink.add(f"{raw.where((key,))}: quote '{raw.entry_id}': {key}: unknown {key} "
                         f"'{shorten(str(ref))}'{_hint(str(ref)[:200], list(known))}")


@dataclass
class _State:
    """Raw and validated entries per kind, plus the source registry."""

    files: list[_File] = field(default_factory=list)
    raw: dict[str, dict[str, _Raw]] = field(default_factory=lambda: {k: {} for k in (*TABLES, SOURCE)})
    valid: dict[str, dict[str, BaseModel]] = field(default_factory=lambda: {k: {} for k in (*TABLES, SOURCE)})
    overridden: dict[str, set[str]] = field(default_factory=dict)
    added: dict[str, set[str]] = field(default_factory=dict)
    refreshed: dict[str, set[str]] = field(default_factory=dict)
    refresh: RefreshInfo | None = None

    def copy(self) -> _State:
        return _State(
            files=list(self.files),
            raw={k: dict(v) for k, v in self.raw.items()},
            valid={k: dict(v) for k, v in self.valid.items()},
            overridden={k: set(v) for k, v in self.overridden.items()},
            added={k: set(v) for k, v in self.added.items()},
            refreshed={k: set(v) for k, v in self.refreshed.items()},
            refresh=self.refresh,
        )


def _rows(file: _File, sink: _Sink) -> Iterator[_Raw]:
    """Every table row of a file as a _Raw, rows without a string id reported and skipped."""
    for kind in (SOURCE, *TABLES):
        for index, row in enumerate(file.tables.get(kind, [])):
            raw = _Raw(kind, row, {key: (file, index) for key in row}, (file, index))
            if not isinstance(row.get("id"), str) or not row["id"]:
                sink.add(f"{raw.where(('id',))}: {kind} #{index + 1}: id: Field required (a non-empty string)")
                continue
            yield raw


def _add_shipped(state: _State, file: _File, sink: _Sink) -> None:
    for raw in _rows(file, sink):
        table = state.raw[raw.kind]
        first = table.get(raw.entry_id)
        if first is not None:
            if raw.kind == SOURCE and first.data == raw.data:
                continue  # the same source defined identically in two files is harmless
            sink.add(f"{raw.where()}: {raw.kind} '{raw.entry_id}': duplicate id (first defined at {first.where()})")
            continue
        table[raw.entry_id] = raw


def _add_overlay(state: _State, file: _File, seen: dict[tuple[str, str], _Raw], sink: _Sink) -> list[_Raw]:
    """Merge one overlay file into `state.raw`; returns the merged entries that need (re)validation."""
    touched = []
    for raw in _rows(file, sink):
        key = (raw.kind, raw.entry_id)
        if key in seen:
            sink.add(f"{raw.where()}: {raw.kind} '{raw.entry_id}': duplicate id in overlays "
                     f"(first at {seen[key].where()})")
            continue
        seen[key] = raw
        base = state.raw[raw.kind].get(raw.entry_id)
        if base is None:
            merged = raw
            state.added.setdefault(raw.kind, set()).add(raw.entry_id)
        else:
            merged = _Raw(raw.kind, {**base.data, **raw.data}, {**base.origin, **raw.origin}, raw.home)
            state.overridden.setdefault(raw.kind, set()).add(raw.entry_id)
        state.raw[raw.kind][raw.entry_id] = merged
        touched.append(merged)
    return touched


def _add_refreshed(state: _State, file: _File, sink: _Sink) -> list[_Raw]:
    """Merge the refreshed-prices overlay: a shipped instance gets the refreshed prices of the kinds refreshed (its
    other prices stay); a new id is added whole. Nothing else of the shipped knowledge base may be redefined."""
    touched = []
    for raw in _rows(file, sink):
        table = state.raw[raw.kind]
        base = table.get(raw.entry_id)
        if base is None:
            merged = raw
        elif raw.kind == "instance":
            fresh = [p for p in raw.data.get("price", []) if isinstance(p, dict)]
            kinds = {p.get("type") for p in fresh}
            kept = [p for p in base.data.get("price", []) if isinstance(p, dict) and p.get("type") not in kinds]
            data = {**base.data, **raw.data, "price": kept + fresh}
            merged = _Raw(raw.kind, data, {**base.origin, **raw.origin}, raw.home)
        else:
            sink.add(f"{raw.where()}: {raw.kind} '{raw.entry_id}': a price refresh may not redefine a shipped "
                     f"{raw.kind}")
            continue
        table[raw.entry_id] = merged
        state.refreshed.setdefault(raw.kind, set()).add(raw.entry_id)
        touched.append(merged)
    return touched


class _HintSink(_Sink):
    """Adds a hint to every message (errors in the refreshed-prices file say how to get rid of them)."""

    def __init__(self, inner: _Sink, hint: str) -> None:
        super().__init__(inner.collect)
        self.inner, self.hint = inner, hint

    def add(self, message: str) -> None:
        self.inner.add(f"{message} ({self.hint})")


REFRESH_HINT = "written by `gpuadvisor kb refresh`: run it again, or delete it"


class _Strict(_Sink):
    """A sink whose errors stop the load even for a file that is otherwise skipped (`kb refresh` checking the overlay
    it is about to write, a file named by the caller)."""

    def __init__(self, inner: _Sink) -> None:
        super().__init__(inner.collect)
        self.inner = inner

    def add(self, message: str) -> None:
        self.inner.add(message)


def _load_refreshed(state: _State, path: Path, sink: _Sink, refresh: bool = False) -> _State:
    """The state with the refreshed prices in. `kb validate` (a collecting sink) lists the file's problems, as does a
    load of a file named by the caller (a `_Strict` sink); the load of the file gpuadvisor keeps skips one with a
    problem with a one-line warning and goes on with the built-in prices: it is a cache gpuadvisor wrote, not the
    user's data, so a corrupt, truncated or hostile one is never fatal."""
    if sink.collect or isinstance(sink, _Strict):
        hint = f"written by `gpuadvisor kb refresh`: run it again, or delete {path}"
        _merge_refreshed(state, path, _HintSink(sink, hint), refresh)
        return state
    trial, problems = state.copy(), _Sink(collect=True)
    if not path.is_file():  # a directory, a FIFO, a socket in its place (is_file never opens it)
        problems.add(f"{path}: not a regular file")
    else:
        try:
            _merge_refreshed(trial, path, problems, refresh)
        except (AdvisorError, ValueError, TypeError) as exc:  # a hostile file past every check: still not fatal
            problems.add(f"{path}: {exc}")
    if problems.messages:
        skipped(problems.messages[0], f"the built-in prices are used ({REFRESH_HINT})")
        return state
    return trial


def _merge_refreshed(state: _State, path: Path, sink: _Sink, refresh: bool) -> None:
    file = _parse(path, True, sink, META_KEYS | {REFRESH_KEY}, cache=True, refresh=refresh)
    if file is None:
        return
    state.files.append(file)
    _validate_all(state, _add_refreshed(state, file, sink), sink)
    state.refresh = RefreshInfo.from_meta(path, file.meta.get(REFRESH_KEY))


def _validate_all(state: _State, entries: Sequence[_Raw], sink: _Sink) -> None:
    """Schema-validate `entries` (sources first), then check their source and accelerator references."""
    for raw in sorted(entries, key=lambda r: r.kind != SOURCE):
        model = Source if raw.kind == SOURCE else TABLES[raw.kind]
        valid = _validate(raw, model, sink)
        if valid is not None:
            state.valid[raw.kind][raw.entry_id] = valid
    for raw in entries:
        if raw.kind != SOURCE:
            _check_refs(raw, state.raw[SOURCE], state.raw["accelerator"], sink, state.raw["system"])


# ----------------------------------------------------------------------------------------------------------------
# Shipped files (cached) and the public entry points
# ----------------------------------------------------------------------------------------------------------------


def _shipped_key(directory: Path) -> tuple[tuple[str, int, int], ...]:
    key = []
    for name in SHIPPED_FILES:
        try:
            st = (directory / name).stat()
            key.append((name, st.st_mtime_ns, st.st_size))
        except OSError:
            key.append((name, -1, -1))
    return tuple(key)


def _build_shipped(directory: Path, sink: _Sink, refresh: bool = False) -> _State:
    state = _State()
    for name in SHIPPED_FILES:
        path = directory / name
        if not path.exists():
            if name not in OPTIONAL_SHIPPED:
                sink.add(f"{path}: shipped knowledge file is missing (reinstall gpuadvisor)")
            continue
        file = _parse(path, False, sink, refresh=refresh)
        if file is not None:
            state.files.append(file)
            _add_shipped(state, file, sink)
    _validate_all(state, [r for table in state.raw.values() for r in table.values()], sink)
    return state


@functools.lru_cache(maxsize=4)
def _cached_shipped(directory: Path, key: tuple[tuple[str, int, int], ...]) -> _State:
    del key  # part of the cache key only: a changed file (mtime/size) gets a fresh parse
    try:
        return _build_shipped(directory, _Sink(collect=False))
    except KnowledgeError:
        # a parse cache that is wrong in a way its checks missed must not fail every run: parse the text itself
        # (and rewrite the cache); if the shipped text is really broken, this raises the same error
        return _build_shipped(directory, _Sink(collect=False), refresh=True)


def _overlay_paths(user_dir: Path | None, extra_files: Sequence[Path], shipped_dir: Path) -> list[Path]:
    paths = list_files(user_dir, ".toml", what="overlay") if user_dir is not None else []
    shipped = {os.path.realpath(shipped_dir / n) for n in SHIPPED_FILES}
    # os.path.realpath, not Path.resolve: a symlink loop is then read (and reported by name), not a RuntimeError
    return paths + [Path(p) for p in extra_files if os.path.realpath(p) not in shipped]


@functools.cache
def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gpuadvisor")
    except PackageNotFoundError:
        return "0+unknown"


def _catalog(state: _State) -> Catalog:
    v = state.valid

    def table(kind: str) -> dict[str, Any]:
        return dict(v[kind])

    quotes = apply_quotes(table("accelerator"), table("system"), table("quote"), quotes_today())
    # the version names the prices in force: the files, and (with quotes) which have expired by today, so a
    # consultation cached on an earlier day's catalog is not reused once a quote lapses
    lapsed = [f"expired:{q.id}" for q in sorted(quotes.expired, key=lambda q: q.id)]
    digest = hashlib.sha256("|".join([*(f.sha256 for f in state.files), *lapsed]).encode()).hexdigest()[:8]
    return Catalog(
        accelerators=quotes.accelerators,
        instances=table("instance"),
        models=table("model"),
        precisions=table("precision"),
        assumptions=table("assumption"),
        documents=table("document"),
        engines=table("engine"),
        engine_profiles=table("engine_profile"),
        serving_recipes=table("serving_recipe"),
        sources={**table(SOURCE), **quotes.sources},
        files=[CatalogFile(f.path, f.sha256, f.counts(), f.overlay) for f in state.files],
        version=f"{_package_version()}+kb.{digest}",
        overridden={k: frozenset(ids) for k, ids in state.overridden.items()},
        added={k: frozenset(ids) for k, ids in state.added.items()},
        free_tiers=table("free_tier"),
        systems=quotes.systems,
        quotes=table("quote"),
        expired_quotes=quotes.expired,
        fabrics=table("fabric"),
        refreshed={k: frozenset(ids) for k, ids in state.refreshed.items()},
        refresh=state.refresh,
        used_prices=table("used_price"),
    )


UserDir = Path | None | Literal["default"]
Refreshed = Path | None | Literal["default"]


def _load(user_dir: UserDir, extra_files: Sequence[Path], sink: _Sink,
          shipped: Callable[[Path], _State], refreshed: Refreshed = "default", refresh: bool = False) -> Catalog:
    directory = data_dir()
    state = shipped(directory).copy()
    kept = refreshed == "default"  # the file gpuadvisor keeps (never fatal), not one named to be checked
    if refreshed == "default":
        refreshed = refreshed_prices_path() if user_dir == "default" else None
    if refreshed is not None and os.path.lexists(refreshed):  # never raises (an unreadable directory is reported below)
        state = _load_refreshed(state, refreshed, sink if kept else _Strict(sink), refresh)
    udir = overlay_dir() if user_dir == "default" else user_dir
    # the quotes `kb quote add` keeps in the user's overlay directory: never fatal (skipped with a warning), and
    # merged after the other overlays, so a quote may name a part any of them adds
    quotes = udir / QUOTES_FILE if user_dir == "default" and udir is not None and not sink.collect else None
    seen: dict[tuple[str, str], _Raw] = {}
    touched: list[_Raw] = []
    overlay_set = _SetBudget()
    texts: list[tuple[Path, str, Shape]] = []
    for path in _overlay_paths(udir, extra_files, directory):  # every file read and measured before any is parsed
        if quotes is not None and path == quotes:
            continue
        text = _read(path, True, sink)
        try:
            if text is not None:
                texts.append((path, text, overlay_set.add(text, str(path))))
        except NestingError as exc:
            sink.add(str(exc))
    for path, text, shape in texts:
        touched += _merge_overlay(state, path, text, shape, seen, sink, refresh)
    if quotes is not None and os.path.lexists(quotes):
        state = _merge_quotes(state, quotes, overlay_set, seen, refresh)
    _validate_all(state, touched, sink)
    return _catalog(state)


def _merge_overlay(state: _State, path: Path, text: str, shape: Shape, seen: dict[tuple[str, str], _Raw],
                   sink: _Sink, refresh: bool) -> list[_Raw]:
    """One overlay file's entries merged into `state`; those that need validating."""
    file = _parse(path, True, sink, refresh=refresh, text=text, shape=shape)
    if file is None:
        return []
    state.files.append(file)
    return _add_overlay(state, file, seen, sink)


def _merge_quotes(state: _State, path: Path, overlay_set: _SetBudget, seen: dict[tuple[str, str], _Raw],
                  refresh: bool) -> _State:
    """The state with the user's quotes in, merged and validated on a trial copy: a quotes file that cannot be read,
    is over the budget, or holds a bad entry is skipped with a one-line warning (the knowledge base's prices are
    used), as the refreshed prices are; `kb validate` and `kb quote list` still name every problem."""
    trial, trial_seen, problems = state.copy(), dict(seen), _Sink(collect=True)
    try:
        text = _read(path, True, problems)
        if text is not None:
            shape = overlay_set.add(text, str(path))
            _validate_all(trial, _merge_overlay(trial, path, text, shape, trial_seen, problems, refresh), problems)
    except (AdvisorError, ValueError, TypeError) as exc:  # over the budget, or a hostile file past every check
        problems.add(str(exc) if str(path) in str(exc) else f"{path}: {exc}")
    if problems.messages:
        skipped(problems.messages[0], "your quotes are not applied, the knowledge base's prices are (`gpuadvisor kb "
                                      "validate` lists every problem)")
        return state
    seen.update(trial_seen)
    return trial


def load_catalog(*, user_dir: UserDir = "default", extra_files: Sequence[Path] = (),
                 refreshed: Refreshed = "default") -> Catalog:
    """The shipped knowledge base plus overlays; raises KnowledgeError (file:line, entry, field) on the first error.

    user_dir: "default" = `<config dir>/knowledge` (see `paths.config_dir`), None = no user overlay, or a directory.
    extra_files: further overlay files, applied after the directory's files (sorted by name).
    refreshed: the prices `kb refresh` wrote; "default" = `paths.refreshed_prices_path()` when user_dir is
    "default" (none otherwise), None = none, or a file.
    """
    def shipped(d: Path) -> _State:
        return _cached_shipped(d, _shipped_key(d))

    try:
        return _load(user_dir, extra_files, _Sink(collect=False), shipped, refreshed)
    except KnowledgeError:
        # overlays are parsed through the content-addressed cache too (tomllib costs ~0.6 ms an entry): a cached
        # copy wrong in a way its checks missed must not be blamed on the file, so parse the texts themselves
        # before reporting (a really broken file raises the same error again)
        return _load(user_dir, extra_files, _Sink(collect=False), shipped, refreshed, refresh=True)


@dataclass(frozen=True)
class ValidationReport:
    """Every problem found (one message per line, `file:line: ...`) and the catalog when there were none."""

    errors: list[str]
    catalog: Catalog | None


def validate_knowledge(*, user_dir: UserDir = "default", extra_files: Sequence[Path] = (),
                       refreshed: Refreshed = "default") -> ValidationReport:
    """Like `load_catalog`, but collects every error instead of stopping at the first (for `gpuadvisor kb validate`)."""
    sink = _Sink(collect=True)
    catalog = _load(user_dir, extra_files, sink, lambda d: _build_shipped(d, sink), refreshed, refresh=True)
    return ValidationReport(sink.messages, None if sink.messages else catalog)
