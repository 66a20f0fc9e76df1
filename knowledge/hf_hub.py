"""Size any Hugging Face model by its id (`org/name`, `org/name@revision`) through huggingface_hub's standard cache.

Only `config.json` is fetched (or read from the cache: `HF_HUB_OFFLINE=1` and a cached snapshot are enough), then read
exactly like a local `--config` file (hf_config). Online, the safetensors metadata adds the exact parameter count
and the dtypes the checkpoint is stored in (an FP8 or MXFP4 checkpoint says so) from the files' headers, without
downloading a weight. Gated repositories use the user's token (`HF_TOKEN`, or `hf auth login`); every failure is an
`InputError` naming the id and what to do, never a traceback.

The environment is read at each call (huggingface_hub reads it once, at import): `HF_HUB_OFFLINE`, `HF_HUB_CACHE` /
`HF_HOME` and `HF_ENDPOINT` can change between consultations, and tests point them at a temporary cache.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.knowledge.errors import AmbiguousNameError, InputError, UnknownNameError
from gpuadvisor.knowledge.files import CONFIG_MAX_BYTES, read_text_file
from gpuadvisor.knowledge.hf_config import HFConfig, architecture_from_config
from gpuadvisor.knowledge.nesting import loads_json
from gpuadvisor.knowledge.sanitize import shorten
from gpuadvisor.knowledge.schema import Model

HUB_ID = re.compile(r"^(?P<repo>[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95})"
                    r"(?:@(?P<revision>[A-Za-z0-9][A-Za-z0-9._/-]{0,127}))?$")
"""A Hub model id as huggingface_hub accepts it (org/name), with an optional @revision (its shape checked by
`revision_problem`)."""
COMMIT = re.compile(r"^[0-9a-f]{40}$")
PR_REF = re.compile(r"^refs/pr/[1-9][0-9]{0,8}$")
_REF_PART = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")
_TRUE = {"1", "on", "yes", "true"}
ETAG_TIMEOUT_S = 10.0
STORED_FORMATS = {"F8_E4M3": "fp8", "F8_E5M2": "fp8", "F8_E8M0": "mxfp4"}
"""Safetensors dtypes that mark a checkpoint stored in a low-precision format (E8M0 = MXFP4/MXFP8 block scales)."""


@dataclass(frozen=True)
class HubModel:
    """A model read from the Hub (or its cache)."""

    repo: str
    revision: str | None
    commit: str | None
    """The snapshot the config was read from (the cache folder's commit hash)."""
    config: HFConfig
    config_path: Path
    parameters: int | None = None
    """Exact stored parameter count from the safetensors headers (online only), None when unavailable."""
    dtypes: dict[str, int] = field(default_factory=dict)
    """Stored dtype -> parameters (e.g. {'BF16': 1.2e9, 'U8': 6e10} for gpt-oss's MXFP4 experts)."""
    quantization: str | None = None
    """config.json's quantization_config.quant_method (fp8, mxfp4, awq, gptq, bitsandbytes ...), if any."""
    notes: list[str] = field(default_factory=list)

    @property
    def spec(self) -> str:
        return f"{self.repo}@{self.revision}" if self.revision else self.repo


def parse_hub_id(text: str) -> tuple[str, str | None] | None:
    """(repo, revision) when `text` is a Hub model id ('Qwen/Qwen3-32B', 'org/name@v1.0'), else None. The revision
    is returned as typed: `resolve_hub_model` refuses one that `revision_problem` finds wrong before any path is
    built from it."""
    m = HUB_ID.match(text.strip())
    if m is None or ".." in m["repo"] or m["repo"].endswith((".", "-")):
        return None
    return m["repo"], m["revision"]


def revision_problem(revision: str) -> str | None:
    """Why `revision` is not a branch, tag, commit hash or `refs/pr/N`, or None when it is one.

    huggingface_hub joins a revision onto its cache folder (`refs/<revision>` holds the commit a branch points to),
    so a revision with `..` or an empty, hidden or `refs/...` part would read a file outside the model's folder.
    Branch and tag names follow git's rules (`git check-ref-format`) within the characters a Hub id allows: parts
    separated by single slashes, none empty, none starting with a dot, none ending in `.lock` or a dot."""
    if COMMIT.match(revision) or PR_REF.match(revision):
        return None
    if revision.startswith("refs/"):
        return "the only refs/ revision the Hub has is a pull request, refs/pr/N"
    if ".." in revision:
        return "it holds '..'"
    for part in revision.split("/"):
        if not part:
            return "it has an empty part (a leading, trailing or double slash)"
        if not _REF_PART.match(part):
            return "a part starts with a dot or holds a character a branch or tag name cannot have"
        if part.endswith((".lock", ".")):
            return "a part ends in '.lock' or a dot"
    return None


def offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", os.environ.get("TRANSFORMERS_OFFLINE", "")).strip().lower() in _TRUE


def cache_dir() -> Path | None:
    """huggingface_hub's cache as the environment says now (None: its own default)."""
    if hub := os.environ.get("HF_HUB_CACHE"):
        return Path(hub).expanduser()
    if home := os.environ.get("HF_HOME"):
        return Path(home).expanduser() / "hub"
    return None


def _endpoint() -> str | None:
    return os.environ.get("HF_ENDPOINT") or None


def _token_hint() -> str:
    from huggingface_hub import get_token

    try:
        has = get_token() is not None
    except Exception:  # an OIDC exchange that fails: treat as no token  # noqa: BLE001
        has = False
    return ("your token (HF_TOKEN or `hf auth login`) has no access: accept the model's licence on its Hub page"
            if has else "no Hugging Face token is set: accept the model's licence on its Hub page, then log in with "
                        "`hf auth login` or set HF_TOKEN")


class NotCachedError(InputError):
    """The model's config.json is not in the local cache (raised only when asked not to go online)."""


def find_model_or_hub(catalog: Catalog, name: str, *, local_only: bool = False) -> Model | HubModel:
    """A knowledge-base model first (id, name, alias or its `hf_repo`, as `lookup.find_model` matches them), else,
    for a Hub id, the model read from the Hub. An id with a @revision always goes to the Hub (knowledge-base
    entries pin no revision); a Hub id that the loose match finds ambiguous also does (the id itself is exact)."""
    from gpuadvisor.knowledge.lookup import find_model

    hub = parse_hub_id(name)
    if hub is None or hub[1] is None:
        try:
            return find_model(catalog, name)
        except (UnknownNameError, AmbiguousNameError):
            if hub is None:
                raise
    return resolve_hub_model(name, local_only=local_only)


def resolve_hub_model(spec: str, *, local_only: bool = False) -> HubModel:
    """Read `org/name[@revision]` from the Hub or its cache; InputError (naming the id) when it cannot be sized.
    `local_only`: the cache alone, no network (NotCachedError when it is not there), for a screen that must not wait."""
    parsed = parse_hub_id(spec)
    if parsed is None:
        raise InputError(f"model {shorten(repr(spec))}: not a Hugging Face model id (org/name, optionally @revision)")
    repo, revision = parsed
    if revision is not None and (why := revision_problem(revision)) is not None:
        raise InputError(f"model {shorten(repr(spec))}: the revision after @ must be a branch, a tag, a commit hash "
                         f"(40 hex digits) or refs/pr/N; {why}")
    path = _download_config(spec, repo, revision, local_only)
    _check_inside_cache(spec, path)
    try:
        text = read_text_file(path, what="config.json file", max_bytes=CONFIG_MAX_BYTES)
        data = loads_json(text, f"model {shorten(repr(spec))}: its config.json ({path})")
    except json.JSONDecodeError as exc:
        raise InputError(f"model {spec!r}: its config.json ({path}) is not valid JSON: line {exc.lineno}: "
                         f"{exc.msg}") from None
    if not isinstance(data, dict):
        raise InputError(f"model {spec!r}: its config.json ({path}) is not a JSON object")
    config = architecture_from_config(data, source=f"{spec} config.json")
    quant = _quant_method(data)
    notes = list(config.notes)
    parameters: int | None = None
    dtypes: dict[str, int] = {}
    if offline():
        notes.append("HF_HUB_OFFLINE is set: sized from the cached config.json alone (the exact stored parameter "
                     "count and dtypes come from the Hub's safetensors headers when online)")
    elif not local_only:
        parameters, dtypes, note = _safetensors(repo, revision)
        if note:
            notes.append(note)
    if quant:
        notes.append(f"the checkpoint is published quantized (quantization_config.quant_method = {quant})")
    return HubModel(repo, revision, _commit_of(path), config, path, parameters, dtypes, quant, notes)


def _download_config(spec: str, repo: str, revision: str | None, local_only: bool) -> Path:
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import (
        EntryNotFoundError,
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    _sync_offline_mode()
    where = cache_dir()
    try:
        return Path(hf_hub_download(repo, "config.json", revision=revision, cache_dir=where,
                                    local_files_only=offline() or local_only, endpoint=_endpoint(),
                                    etag_timeout=ETAG_TIMEOUT_S))
    except GatedRepoError:
        raise InputError(f"model {spec!r}: {repo} is a gated repository; {_token_hint()}") from None
    except RepositoryNotFoundError:
        raise InputError(f"model {spec!r}: no such model on the Hugging Face Hub (a private one needs your token: "
                         "`hf auth login` or HF_TOKEN)") from None
    except RevisionNotFoundError:
        raise InputError(f"model {spec!r}: {repo} has no revision {revision!r}") from None
    except (LocalEntryNotFoundError, OfflineModeIsEnabled):
        shown = where or "the default Hugging Face cache"
        if local_only and not offline():
            raise NotCachedError(f"model {spec!r}: not in the Hugging Face cache yet ({shown})") from None
        why = "HF_HUB_OFFLINE is set" if offline() else "the Hub cannot be reached"
        raise InputError(f"model {spec!r}: not in the Hugging Face cache ({shown}) and {why}; fetch its config "
                         f"once while online (`hf download {repo} config.json`) or give --model-config PATH") \
            from None
    except EntryNotFoundError:
        raise InputError(f"model {spec!r}: the repository has no config.json (not a transformers model?)") from None
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else "error"
        raise InputError(f"model {spec!r}: the Hugging Face Hub answered HTTP {status}") from None
    except (OSError, ValueError) as exc:  # the text may quote a crafted ref file's content: never echoed
        raise InputError(f"model {spec!r}: cannot read its config.json from the Hugging Face cache "
                         f"({type(exc).__name__}); the cache entry of this revision is damaged: fetch it again "
                         f"(`hf download {repo} config.json`)") from None


def _cache_root() -> Path:
    from huggingface_hub import constants

    return cache_dir() or Path(constants.HF_HUB_CACHE)


def _check_inside_cache(spec: str, path: Path) -> None:
    """The file huggingface_hub named must be in the cache, also once its symbolic links are followed (a snapshot's
    file is a link to the model's blobs): a ref file whose content is a path would otherwise lead anywhere."""
    root = _cache_root()
    lexical = os.path.normpath(os.path.abspath(root)), os.path.normpath(os.path.abspath(path))
    resolved = os.path.realpath(root), os.path.realpath(path)
    for top, candidate in (lexical, resolved):
        if os.path.commonpath([top, candidate]) != top:
            raise InputError(f"model {shorten(repr(spec))}: the Hugging Face cache ({_cache_root()}) points this "
                             "revision outside itself; its refs are damaged or crafted: delete the model's folder "
                             "there and fetch it again")


def _sync_offline_mode() -> None:
    """huggingface_hub reads HF_HUB_OFFLINE once, at import; a long-running process (the TUI, the tests) must see the
    environment as it is now, so its constant follows ours."""
    from huggingface_hub import constants

    constants.HF_HUB_OFFLINE = offline()


def _commit_of(path: Path) -> str | None:
    """The snapshot folder (a commit hash) of a cached file: .../snapshots/<commit>/config.json."""
    commit = path.parent.name
    return commit if path.parent.parent.name == "snapshots" and COMMIT.match(commit) else None


def _quant_method(data: dict[str, Any]) -> str | None:
    text = data.get("text_config")
    for cfg in (data, text if isinstance(text, dict) else {}):
        quant = cfg.get("quantization_config")
        if isinstance(quant, dict) and isinstance(quant.get("quant_method"), str):
            return str(quant["quant_method"])
    return None


def _safetensors(repo: str, revision: str | None) -> tuple[int | None, dict[str, int], str | None]:
    """Exact stored parameters per dtype from the safetensors headers (a few kB each), or why not."""
    from huggingface_hub import HfApi

    try:
        meta = HfApi(endpoint=_endpoint()).get_safetensors_metadata(repo, revision=revision)
    except Exception as exc:  # any failure only loses the extra precision; the config still sizes it  # noqa: BLE001
        return None, {}, f"no safetensors metadata ({type(exc).__name__}): the parameter count is computed from " \
                         "config.json"
    dtypes = {str(k): int(v) for k, v in meta.parameter_count.items()}
    return sum(dtypes.values()), dtypes, None


def stored_format(model: HubModel) -> str | None:
    """The precision id the checkpoint's weights are stored in when it is a low-precision one (fp8, mxfp4)."""
    if model.quantization in ("fp8", "mxfp4"):
        return model.quantization
    for dtype, fmt in STORED_FORMATS.items():
        if model.dtypes.get(dtype):
            return fmt
    return None


def describe_hub(model: HubModel) -> str:
    """Where the sizing came from, for reports: the id, the snapshot and, when known, the stored count and dtypes."""
    snapshot = f", snapshot {model.commit[:12]}" if model.commit else ""
    stored = ""
    if model.parameters is not None:
        kinds = ", ".join(f"{k} {v:,}" for k, v in sorted(model.dtypes.items(), key=lambda kv: -kv[1]))
        stored = f"; safetensors: {model.parameters:,} parameters stored ({kinds})"
    return f"Hugging Face {model.spec} (config.json{snapshot}{stored})"
