"""Any Hugging Face model by id: read from huggingface_hub's cache (a fake one in tmp_path, laid out as the library
lays it out: models--org--name/snapshots/<commit>/config.json + refs/main), knowledge-base names first, gated and
unknown ids refused with the id named. The Hub itself is a server on 127.0.0.1 answering as the Hub does."""

from __future__ import annotations

import contextlib
import http.server
import json
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpuadvisor.knowledge.errors import InputError
from gpuadvisor.knowledge.hf_hub import find_model_or_hub, parse_hub_id, resolve_hub_model
from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.knowledge.schema import Model
from gpuadvisor.rules.sizing.params import count_parameters
from gpuadvisor.tui.cli import main
from gpuadvisor.tui.questionnaire.answers_state import model_answer

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "configs"
COMMIT = "9216db5781bf21249d130ec9da846c4624c16137"
QWEN3_32B = 32_762_123_264
"""Published count of Qwen/Qwen3-32B (models.toml qwen3-32b: the Hub, llama.cpp and Keras Hub agree)."""


def _cache(root: Path, repo: str, config: Path, commit: str = COMMIT) -> Path:
    """huggingface_hub's cache layout for one file of one repository."""
    folder = root / f"models--{repo.replace('/', '--')}"
    (folder / "snapshots" / commit).mkdir(parents=True)
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text(commit, encoding="utf-8")
    shutil.copy(config, folder / "snapshots" / commit / "config.json")
    return folder


@pytest.fixture
def hub_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "hf" / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(root))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # no token file of the developer's
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    _cache(root, "Qwen/Qwen3-32B", CONFIGS / "qwen3-32b.json")
    return root


def test_a_cached_config_sizes_the_model_exactly_offline(hub_cache: Path) -> None:
    model = resolve_hub_model("Qwen/Qwen3-32B@main")
    assert count_parameters(model.config.architecture).total == QWEN3_32B
    kb = load_catalog(user_dir=None).models["qwen3-32b"]
    assert kb.official_parameters is not None and kb.official_parameters.total == QWEN3_32B
    assert model.config.architecture == kb.architecture.model_copy(update={"max_position_embeddings": 40960})
    assert (model.repo, model.revision, model.commit, model.parameters) == ("Qwen/Qwen3-32B", "main", COMMIT, None)
    assert any("HF_HUB_OFFLINE is set" in n for n in model.notes)


def test_knowledge_base_names_are_matched_first(hub_cache: Path) -> None:
    catalog = load_catalog(user_dir=None)
    assert isinstance(find_model_or_hub(catalog, "Qwen/Qwen3-32B"), Model)  # its hf_repo: no Hub needed
    assert isinstance(find_model_or_hub(catalog, "llama-3.1-8b"), Model)
    hub = find_model_or_hub(catalog, "Qwen/Qwen3-32B@main")  # a revision pins a snapshot: the Hub's
    assert not isinstance(hub, Model) and hub.spec == "Qwen/Qwen3-32B@main"


def test_ids_are_told_from_names_and_paths() -> None:
    assert parse_hub_id("Qwen/Qwen3-32B") == ("Qwen/Qwen3-32B", None)
    assert parse_hub_id("openai/gpt-oss-20b@v1.0") == ("openai/gpt-oss-20b", "v1.0")
    assert parse_hub_id("llama 3 8b") is None and parse_hub_id("./config.json") is None
    assert parse_hub_id("a/b/c") is None and parse_hub_id("org/../x") is None
    assert model_answer("Qwen/Qwen3-32B") == {"name": "Qwen/Qwen3-32B"}  # the TUI's model field
    assert model_answer("models/config.json") == {"config": "models/config.json"}


def test_recommend_with_a_cached_snapshot_and_the_network_off(hub_cache: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["recommend", "--model", "Qwen/Qwen3-32B@main", "--where", "cloud", "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["profile"]["parameters_total"] == QWEN3_32B
    assert result["profile"]["model"] == "Qwen/Qwen3-32B@main"
    source = f"Hugging Face Qwen/Qwen3-32B@main (config.json, snapshot {COMMIT[:12]})"
    assert result["profile"]["model_source"] == source
    assert result["recommendations"]
    assert main(["estimate", "--model", "Qwen/Qwen3-32B@main", "--gpu", "nvidia-h100-sxm5", "--json"]) == 0
    estimate = json.loads(capsys.readouterr().out)
    assert estimate["model"]["source"] == "hugging-face" and estimate["parameters"]["total"] == QWEN3_32B


def test_an_id_not_cached_while_offline_is_refused_naming_it(hub_cache: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["recommend", "--model", "mistralai/Devstral-Small-2505"]) == 2
    err = capsys.readouterr().err
    assert err == ("gpuadvisor: error: model.name: model 'mistralai/Devstral-Small-2505': not in the Hugging Face "
                   f"cache ({hub_cache}) and HF_HUB_OFFLINE is set; fetch its config once while online (`hf download "
                   "mistralai/Devstral-Small-2505 config.json`) or give --model-config PATH\n")


@contextlib.contextmanager
def _fake_hub(answers: dict[str, tuple[int, dict[str, str], bytes]]) -> Iterator[str]:
    """Answers HEAD/GET of `/<repo>/resolve/<revision>/<file>` as the Hub does (status, X-Error-Code, body)."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def _answer(self, body: bool) -> None:
            repo = "/".join(self.path.split("/")[1:3])
            status, headers, content = answers.get(repo, (404, {"X-Error-Code": "RepoNotFound"}, b""))
            self.send_response(status)
            for key, value in {**headers, "Content-Length": str(len(content))}.items():
                self.send_header(key, value)
            self.end_headers()
            if body:
                self.wfile.write(content)

        def do_HEAD(self) -> None:  # noqa: N802
            self._answer(False)

        def do_GET(self) -> None:  # noqa: N802
            self._answer(True)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_gated_and_unknown_ids_say_what_to_do(hub_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE")
    gated = (401, {"X-Error-Code": "GatedRepo", "X-Error-Message": "Access to model is restricted."}, b"")
    with _fake_hub({"meta-llama/Llama-4-Behemoth": gated}) as url:
        monkeypatch.setenv("HF_ENDPOINT", url)
        with pytest.raises(InputError) as info:
            resolve_hub_model("meta-llama/Llama-4-Behemoth")
        assert str(info.value) == (
            "model 'meta-llama/Llama-4-Behemoth': meta-llama/Llama-4-Behemoth is a gated repository; no Hugging "
            "Face token is set: accept the model's licence on its Hub page, then log in with `hf auth login` or "
            "set HF_TOKEN")
        monkeypatch.setenv("HF_TOKEN", "hf_test_token_without_access")
        with pytest.raises(InputError, match="your token \\(HF_TOKEN or `hf auth login`\\) has no access"):
            resolve_hub_model("meta-llama/Llama-4-Behemoth")
        with pytest.raises(InputError) as info:
            resolve_hub_model("nobody/no-such-model")
        assert str(info.value) == ("model 'nobody/no-such-model': no such model on the Hugging Face Hub (a private "
                                   "one needs your token: `hf auth login` or HF_TOKEN)")


def test_an_fp8_checkpoint_is_served_in_fp8_by_default(hub_cache: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Qwen/Qwen3-32B-FP8 is the same shape with `quantization_config.quant_method = "fp8"` (block-wise FP8)."""
    config = json.loads((CONFIGS / "qwen3-32b.json").read_text(encoding="utf-8"))
    config["quantization_config"] = {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                                     "weight_block_size": [128, 128]}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    _cache(hub_cache, "Qwen/Qwen3-32B-FP8", path)
    assert main(["recommend", "--model", "Qwen/Qwen3-32B-FP8", "--where", "cloud", "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["profile"]["parameters_total"] == QWEN3_32B
    assert ("precision.weights = fp8 (Qwen/Qwen3-32B-FP8 is published with its weights in fp8)"
            in result["defaults_applied"])
    assert result["profile"]["weights_gb"] < 0.6 * 65.5  # 32.8 GB of FP8 weights (plus scales), not 65.5 GB of BF16


# --- revisions: validated before any path is built, resolved paths kept inside the cache (issue 31) ----------------

@pytest.mark.parametrize("revision", ["main", "v1.0", "release/2024-01", "feature_x+", COMMIT, "refs/pr/12"])
def test_branches_tags_commits_and_pull_requests_are_revisions(revision: str) -> None:
    from gpuadvisor.knowledge.hf_hub import revision_problem

    expected = "a part starts with a dot or holds a character" if revision == "feature_x+" else None
    if expected is None:
        assert revision_problem(revision) is None
    else:  # '+' is outside the characters a Hub id allows (parse_hub_id never passes it on)
        assert expected in str(revision_problem(revision))


@pytest.mark.parametrize(("revision", "why"), [
    ("pr/../../../../outside-ref", "it holds '..'"),
    ("a//b", "an empty part"),
    ("main/", "an empty part"),
    (".hidden", "starts with a dot"),
    ("x/.git", "starts with a dot"),
    ("main.lock", "ends in '.lock'"),
    ("v1.", "ends in '.lock' or a dot"),
    ("refs/heads/main", "refs/pr/N"),
    ("refs/pr/0", "refs/pr/N"),
    ("refs/pr/1/x", "refs/pr/N"),
])
def test_a_revision_that_could_leave_the_model_folder_is_refused(revision: str, why: str) -> None:
    from gpuadvisor.knowledge.hf_hub import revision_problem

    assert why in str(revision_problem(revision))


def test_a_traversing_revision_is_refused_before_any_path_is_built(hub_cache: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's reproduction: with refs/pr/ in the cache, `@pr/../../../../outside-ref` read a ref file outside
    the cache (here a valid commit, so without the check the model would be sized from it and exit 0)."""
    folder = hub_cache / "models--Qwen--Qwen3-32B"
    (folder / "refs" / "pr").mkdir()
    (hub_cache.parent / "outside-ref").write_text(COMMIT, encoding="utf-8")  # refs/pr/../../../../ = hf/
    import huggingface_hub

    def no_download(*args: object, **kwargs: object) -> str:
        raise AssertionError("a path was built from the revision")

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", no_download)
    spec = "Qwen/Qwen3-32B@pr/../../../../outside-ref"
    with pytest.raises(InputError, match=r"the revision after @ must be a branch, a tag, a commit hash \(40 hex "
                                         r"digits\) or refs/pr/N; it holds '\.\.'"):
        resolve_hub_model(spec)
    monkeypatch.undo()
    monkeypatch.setenv("HF_HUB_CACHE", str(hub_cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["estimate", "--gpu", "nvidia-h100-sxm5", "--model", spec]) == 2
    assert "the revision after @ must be" in capsys.readouterr().err


def test_a_crafted_ref_is_neither_followed_out_of_the_cache_nor_echoed(hub_cache: Path, tmp_path: Path) -> None:
    folder = hub_cache / "models--Qwen--Qwen3-32B"
    secret = "S3CRET-7f3a9"
    outside = tmp_path / "outside" / secret
    outside.mkdir(parents=True)
    shutil.copy(CONFIGS / "qwen3-32b.json", outside / "config.json")
    (folder / "refs" / "main").write_text(f"../../../../outside/{secret}", encoding="utf-8")
    with pytest.raises(InputError) as info:
        resolve_hub_model("Qwen/Qwen3-32B@main")
    assert secret not in str(info.value) and "the cache entry of this revision is damaged" in str(info.value)
    # a snapshot folder that is a symbolic link out of the cache: huggingface_hub returns a path inside it
    (folder / "refs" / "main").write_text("f" * 40, encoding="utf-8")
    (folder / "snapshots" / ("f" * 40)).symlink_to(outside)
    with pytest.raises(InputError) as info:
        resolve_hub_model("Qwen/Qwen3-32B@main")
    assert str(info.value).startswith("model 'Qwen/Qwen3-32B@main': the Hugging Face cache")
    assert "points this revision outside itself" in str(info.value) and secret not in str(info.value)


def test_a_pull_request_revision_reads_its_own_ref(hub_cache: Path) -> None:
    refs = hub_cache / "models--Qwen--Qwen3-32B" / "refs" / "refs" / "pr"  # huggingface_hub's layout: refs/<revision>
    refs.mkdir(parents=True)
    (refs / "7").write_text(COMMIT, encoding="utf-8")
    model = resolve_hub_model("Qwen/Qwen3-32B@refs/pr/7")
    assert (model.revision, model.commit) == ("refs/pr/7", COMMIT)
