"""`gpuadvisor kb refresh`: gpuhunt catalogs mapped exactly, reduced to the cheapest offer, written as an overlay the
loader merges, replaced by the next refresh; malformed files and network failures refused with the file and line,
the previous overlay left as it was. The catalogs are small recorded ones in gpuhunt's format (tests/data/gpuhunt);
no test touches the network (downloads go to a server on 127.0.0.1)."""

from __future__ import annotations

import contextlib
import http.server
import io
import json
import shutil
import socket
import threading
import zipfile
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from gpuadvisor.knowledge.loader import load_catalog
from gpuadvisor.knowledge.price_catalog import CatalogError, download, parse_catalog, read_path
from gpuadvisor.knowledge.price_refresh import catalog_settings, plan_refresh
from gpuadvisor.tui.cli import main

CATALOGS = Path(__file__).resolve().parents[1] / "data" / "gpuhunt"
HEADER = (CATALOGS / "aws.csv").read_text(encoding="utf-8").splitlines()[0]


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "data"
    monkeypatch.setenv("GPUADVISOR_DATA_DIR", str(folder))
    return folder


@pytest.fixture(scope="module")
def plan():  # type: ignore[no-untyped-def]
    read = read_path(CATALOGS, catalog_settings().providers)
    return plan_refresh(read.catalogs, load_catalog(user_dir=None), refreshed_on=date(2026, 11, 25),
                        origin=str(CATALOGS), ignored_files=read.ignored)


def _offer(plan, offer_id: str, kind: str = "on-demand"):  # type: ignore[no-untyped-def]
    return next(o for o in plan.offers if o.id == offer_id and o.pricing == kind)


def _copy(tmp_path: Path, **edits: list[tuple[str, str]]) -> Path:
    """The recorded catalogs with text replaced in some files (`runpod=[("0.59", "0.89")]`)."""
    folder = tmp_path / "catalog"
    shutil.copytree(CATALOGS, folder)
    for name, pairs in edits.items():
        path = folder / f"{name}.csv"
        text = path.read_text(encoding="utf-8")
        for old, new in pairs:
            assert old in text
            text = text.replace(old, new)
        path.write_text(text, encoding="utf-8")
    return folder


# --- mapping ------------------------------------------------------------------------------------------------------


def test_offers_are_named_exactly_and_the_cheapest_keeps_its_regions(plan) -> None:  # type: ignore[no-untyped-def]
    p5 = _offer(plan, "aws-p5.48xlarge")
    assert (p5.accelerator, p5.count, p5.usd_per_hour) == ("nvidia-h100-sxm5", 8, 55.04)
    assert p5.regions == ("us-east-1", "us-east-2")  # eu-north-1 lists it at $61.09
    assert p5.named_by == "shipped instance aws-p5.48xlarge"  # "H100" alone fits SXM5 and PCIe
    assert _offer(plan, "aws-p5.48xlarge", "spot").usd_per_hour == 22.87  # cheapest spot: us-west-2
    assert _offer(plan, "aws-p4d.24xlarge").accelerator == "nvidia-a100-sxm-40gb"
    # RunPod names its pods as the driver reports the GPU: "A100" 80 GB is then the PCIe or the SXM part, exactly.
    pcie = next(o for o in plan.offers if o.catalog_instance == "NVIDIA A100 80GB PCIe")
    sxm = next(o for o in plan.offers if o.catalog_instance == "NVIDIA A100-SXM4-80GB")
    assert (pcie.accelerator, sxm.accelerator) == ("nvidia-a100-pcie-80gb", "nvidia-a100-sxm-80gb")
    # ... and refreshes the one shipped per-GPU listing of that part (match = "accelerator").
    assert pcie.id == "runpod-a100-pcie-80gb" and pcie.usd_per_hour == 1.64
    # A name that fits one part only is mapped through catalog_names; a new instance gets its own id.
    assert _offer(plan, "aws-g6.12xlarge").accelerator == "nvidia-l4"
    assert _offer(plan, "lambda-1x-a10").regions == ("us-east-1", "us-west-1")
    # The same pod name with 1 and 2 GPUs: two offers, their ids and names carry the count.
    assert {o.id for o in plan.offers if o.catalog_instance == "NVIDIA GeForce RTX 4090"} == {
        "runpod-rtx-4090", "runpod-nvidia-geforce-rtx-4090-2x"}


def test_unmapped_and_ambiguous_names_are_listed_never_guessed(plan) -> None:  # type: ignore[no-untyped-def]
    refused = {(r.provider, r.label): r for r in plan.refused}
    assert set(refused) == {("aws", "V100 16 GB"), ("lambdalabs", "H100 80 GB")}
    h100 = refused[("lambdalabs", "H100 80 GB")]
    assert h100.ambiguous and "nvidia-h100-sxm5, nvidia-h100-pcie" in h100.reason
    assert h100.instances == ("gpu_1x_h100_pcie",)
    v100 = refused[("aws", "V100 16 GB")]
    assert not v100.ambiguous and "does not fit nvidia-v100-sxm2 (32 GB)" in v100.reason
    assert plan.ignored_files == ["verda.csv"]  # a provider price_catalogs.toml does not map
    # 43 rows: 2 CPU-only, 2 GPU offers refused, 39 mapped (the TPU slice v5litepod-1 is a shape of its own).
    assert (plan.rows_read, plan.gpu_rows, plan.rows_mapped) == (43, 41, 39)
    assert not any(o.accelerator is None for o in plan.offers)


# --- the overlay and the loader --------------------------------------------------------------------------------


def test_refresh_writes_an_overlay_the_loader_merges(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb", "refresh", "--from", str(CATALOGS)]) == 0
    out = capsys.readouterr().out
    assert "Mapped 39 of 41 GPU offers" in out and "lambdalabs H100 80 GB (gpu_1x_h100_pcie): ambiguous" in out
    assert "RunPod RTX 4090 (per GPU) on-demand: $0.34/h -> $0.59/h (+73.5%)" in out  # against the shipped price
    catalog = load_catalog()
    p5 = catalog.instances["aws-p5.48xlarge"]
    on_demand, spot = p5.current_price("on-demand"), p5.current_price("spot")
    assert on_demand is not None and spot is not None
    assert (on_demand.usd_per_hour, spot.usd_per_hour) == (55.04, 22.87)
    assert on_demand.as_of == "2026-11-20 (kb refresh: gpuhunt aws catalog 20261120-7)"  # the catalog's own date
    assert on_demand.sources == ["refresh-gpuhunt-aws"] and "20261120-7" in catalog.sources["refresh-gpuhunt-aws"].title
    assert [p.type for p in p5.price if p.type == "on-demand"] == ["on-demand"]  # the shipped on-demand is replaced
    assert p5.current_price("capacity-block") is not None  # a kind the catalog has not: the shipped one stays
    assert (p5.fast_domain, p5.cluster) == (8, True)  # a shipped instance keeps its topology
    new = catalog.instances["aws-g4dn.xlarge"]
    assert (new.accelerator_count, new.fast_domain, new.cluster) == (1, 1, False)  # the conservative default
    assert catalog.refresh is not None and catalog.refresh.refreshed_on == date(2026, 11, 25)
    assert "aws-g6.12xlarge" in catalog.refreshed["instance"]  # a shipped shape, refreshed
    g6 = catalog.instances["aws-g6.12xlarge"]
    assert g6.current_price("reserved-1y") is not None  # a kind the catalogs do not carry: the shipped one stays
    shipped = load_catalog(user_dir=None)  # the shipped prices are untouched
    assert shipped.instances["aws-p5.48xlarge"].current_price("spot") is None


def test_a_second_refresh_replaces_the_first(data_dir: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb", "refresh", "--from", str(CATALOGS)]) == 0
    capsys.readouterr()
    moved = _copy(tmp_path, runpod=[("NVIDIA GeForce RTX 4090,CZ,0.59", "NVIDIA GeForce RTX 4090,CZ,0.89")],
                  aws=[("g4dn.xlarge,us-east-1,0.526", "g4dn.xlarge,us-east-1,-1")])
    assert main(["kb", "refresh", "--from", str(moved)]) == 0
    out = capsys.readouterr().out
    assert "0 new, 1 changed" in out and "$0.59/h -> $0.69/h (+16.9%)" in out  # EU-RO-1's $0.69 is now cheapest
    assert "1 no longer listed (the shipped price is used again)" in out  # g4dn on-demand: its row does not parse
    assert "1 rows skipped (first: " in out and "aws.csv line 13: price must be a positive number" in out
    catalog = load_catalog()
    assert catalog.instances["runpod-rtx-4090"].current_price("on-demand").usd_per_hour == 0.69  # type: ignore[union-attr]
    assert catalog.instances["aws-g4dn.xlarge"].current_price("on-demand") is None  # only the spot offer is left
    assert len(list(data_dir.iterdir())) == 1  # one file, replaced (no temporary left behind)


def test_a_moved_price_changes_the_ranking_and_the_report_names_its_date_and_source(
        data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 400 h a month: beyond the free notebooks' quotas, so the cheapest paid rental is first
    args = ["recommend", "--model", "llama-3.1-8b", "--where", "cloud", "--stage", "prototyping", "--no-spot",
            "--hours", "400", "--format", "json"]

    def top() -> dict:  # type: ignore[type-arg]
        assert main(args) == 0
        return json.loads(capsys.readouterr().out)["recommendations"][0]  # type: ignore[no-any-return]

    def lambda_a10() -> dict:  # type: ignore[type-arg]
        assert main([*args, "--top", "10"]) == 0
        recs = json.loads(capsys.readouterr().out)["recommendations"]
        return next(r for r in recs if r["instance"] and r["instance"]["id"] == "lambda-1x-a10")  # type: ignore[no-any-return]

    before = top()
    assert (before["accelerator"]["id"], before["instance"]["id"]) == ("nvidia-rtx-4090", "runpod-rtx-4090")
    assert before["cost"]["usd_per_hour"] == 0.34
    moved = _copy(tmp_path, runpod=[("NVIDIA GeForce RTX 4090,CZ,0.59", "NVIDIA GeForce RTX 4090,CZ,0.99"),
                                    ("NVIDIA GeForce RTX 4090,EU-RO-1,0.69", "NVIDIA GeForce RTX 4090,EU-RO-1,0.99")])
    assert main(["kb", "refresh", "--from", str(moved)]) == 0
    capsys.readouterr()
    after = top()
    assert (after["accelerator"]["id"], after["instance"]["id"]) != ("nvidia-rtx-4090", "runpod-rtx-4090")
    after = lambda_a10()  # refreshed at $0.75 (was $1.29)
    assert after["cost"]["usd_per_hour"] == 0.75
    assert after["cost"]["price_as_of"] == "2026-11-20 (kb refresh: gpuhunt lambdalabs catalog 20261120-7)"
    assert after["cost"]["price_source"] == "refresh-gpuhunt-lambdalabs" and after["cost"]["price_kind"] == "on-demand"
    assert main([*args[:-2], "--format", "md"]) == 0
    report = capsys.readouterr().out
    assert "2026-11-20 (kb refresh: gpuhunt lambdalabs catalog 20261120-7)" in report


# --- malformed files ----------------------------------------------------------------------------------------------


def _refresh_fails(path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["kb", "refresh", "--from", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err  # one line
    return err


def test_malformed_files_are_refused_with_file_and_line_and_the_previous_overlay_stays(
        data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb", "refresh", "--from", str(CATALOGS)]) == 0
    capsys.readouterr()
    written = (data_dir / "refreshed-prices.toml").read_bytes()
    folder = tmp_path / "bad"
    folder.mkdir()
    bad = folder / "aws.csv"
    bad.write_text("instance_name,location,cost\np5.48xlarge,us-east-1,55.04\n", encoding="utf-8")
    assert _refresh_fails(folder, capsys) == (f"gpuadvisor: error: {bad}:1: not a gpuhunt catalog: missing columns "
                                              "price, cpu, memory, gpu_count, spot")
    bad.write_text(f"{HEADER}\np5.48xlarge,us-east-1,abc,192,2048.0,8,H100,80.0,False,,nvidia,,x86,{{}}\n"
                   f"p4d.24xlarge,us-east-1,21.9,96,1152.0,8,A100,40.0,maybe,,nvidia,,x86,{{}}\n", encoding="utf-8")
    err = _refresh_fails(folder, capsys)
    assert err.startswith(f"gpuadvisor: error: {bad}: no row could be read (2 rows; first problem at line 2: ")
    assert "Cannot parse field 'price'" in err
    bad.write_bytes(HEADER.encode() + b"\np5.48xlarge,us-\xff-1,55.04,192,2048.0,8,H100,80.0,False,,nvidia,,x86,{}\n")
    assert _refresh_fails(folder, capsys).startswith(f"gpuadvisor: error: {bad}:2: not UTF-8 text")
    bad.write_text(HEADER + "\n", encoding="utf-8")
    assert _refresh_fails(folder, capsys) == f"gpuadvisor: error: {bad}: no offers in the file (a header only)"
    (folder / "aws.csv").unlink()
    (folder / "catalog.zip").write_bytes(b"PK\x03\x04 not really")
    assert "catalog.zip: not a zip archive" in _refresh_fails(folder, capsys)
    assert "no such file or directory" in _refresh_fails(tmp_path / "missing", capsys)
    assert (data_dir / "refreshed-prices.toml").read_bytes() == written


def test_a_row_that_does_not_parse_is_skipped_and_counted() -> None:
    text = (f"{HEADER}\ng5.xlarge,us-east-1,1.006,4,16.0,1,A10G,24.0,False,,nvidia,,x86,{{}}\n"
            f"g5.xlarge,us-east-1,,4,16.0,1,A10G,24.0,True,,nvidia,,x86,{{}}\n")
    cat = parse_catalog(text.encode(), "aws", "aws.csv", version="20261120-7")
    assert (cat.read, cat.skipped, len(cat.rows), cat.as_of) == (2, 1, 1, date(2026, 11, 20))
    assert cat.first_problem == "line 3: Required field 'price' is empty"


def test_an_archive_is_read_like_the_directory(tmp_path: Path) -> None:
    """gpuhunt's published layout: <provider>/<version>/catalog.zip holding <provider>.csv."""
    archive = tmp_path / "runpod" / "20261120-7" / "catalog.zip"
    archive.parent.mkdir(parents=True)
    with zipfile.ZipFile(archive, "w") as z:
        z.write(CATALOGS / "runpod.csv", "runpod.csv")
    read = read_path(archive, ["runpod"])
    assert [(c.provider, c.version, c.as_of, len(c.rows)) for c in read.catalogs] == [
        ("runpod", "20261120-7", date(2026, 11, 20), 8)]


# --- the network --------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _server(files: dict[str, bytes], *, hang: bool = False) -> Iterator[str]:
    """A catalog server on 127.0.0.1 (or one that never answers, for the timeout)."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            if hang:
                stop.wait(5)
                return
            body = files.get(self.path)
            self.send_response(200 if body is not None else 404)
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *args: object) -> None:
            pass

    stop = threading.Event()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        stop.set()
        server.shutdown()
        server.server_close()


def _zip(name: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.write(CATALOGS / name, name)
    return buffer.getvalue()


def test_download_reads_the_published_catalog_with_progress() -> None:
    seen: list[tuple[str, int, int | None]] = []
    with _server({"/runpod/version": b"20261124-3\n", "/runpod/20261124-3/catalog.zip": _zip("runpod.csv")}) as url:
        read = download(["runpod"], base_url=url, timeout=5, progress=lambda *a: seen.append(a))
    (cat,) = read.catalogs
    assert (cat.provider, cat.version, cat.as_of, len(cat.rows)) == ("runpod", "20261124-3", date(2026, 11, 24), 8)
    assert cat.origin.endswith("/runpod/20261124-3/catalog.zip:runpod.csv")
    assert seen and seen[-1][0] == "runpod 20261124-3" and seen[-1][1] == seen[-1][2] == len(_zip("runpod.csv"))


def test_offline_and_timeouts_are_one_line_errors_and_leave_the_previous_overlay(
        data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb", "refresh", "--from", str(CATALOGS)]) == 0
    capsys.readouterr()
    written = (data_dir / "refreshed-prices.toml").read_bytes()
    with socket.socket() as s:  # a port nothing listens on: the connection is refused, as when offline
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", f"http://127.0.0.1:{closed}")
    assert main(["kb", "refresh", "--providers", "aws"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"http://127.0.0.1:{closed}/aws/version: cannot connect" in err
    assert "offline? Read a saved catalog with --from PATH" in err
    with _server({}, hang=True) as url:
        monkeypatch.setenv("GPUHUNT_CATALOG_URL", url)
        assert main(["kb", "refresh", "--providers", "runpod", "--timeout", "0.3"]) == 2
    err = capsys.readouterr().err
    assert err == (f"gpuadvisor: error: {url}/runpod/version: no answer within 0.3 s (timed out); try again, or read "
                   "a saved catalog with --from PATH\n")
    with _server({"/aws/version": b"20261124-3"}) as url:
        monkeypatch.setenv("GPUHUNT_CATALOG_URL", url)
        assert main(["kb", "refresh", "--providers", "aws"]) == 2
    assert "/aws/20261124-3/catalog.zip: the server answered HTTP 404" in capsys.readouterr().err
    assert (data_dir / "refreshed-prices.toml").read_bytes() == written


def test_unknown_provider_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb", "refresh", "--providers", "azur", "--from", str(CATALOGS)]) == 2
    assert "--providers: unknown provider 'azur' (known: " in capsys.readouterr().err
    with pytest.raises(CatalogError, match="no catalog of a known provider"):
        read_path(CATALOGS / "verda.csv", catalog_settings().providers)


def test_tpu_slices_map_onto_their_shapes_with_the_chips_they_hold(tmp_path: Path) -> None:
    # gpuhunt lists a TPU slice as one 'GPU' named after it, priced whole: v6e-4 at $10.80 is 4 chips at $2.70,
    # the knowledge base's gcp-tpu-v6e-4 (not a new 1-chip instance at $10.80 a chip); v5p-8 counts TensorCores.
    rows = ["v6e-4,us-east5-a,10.8,180,720.0,1,v6e-4,128.0,False,,google,,x86,{}",
            "v6e-4,us-east5-a,4.32,180,720.0,1,v6e-4,128.0,True,,google,,x86,{}",
            "v5p-8,us-central1-a,16.8,208,448.0,1,v5p-8,95.0,False,,google,,x86,{}"]
    folder = _copy(tmp_path)
    gcp = folder / "gcp.csv"
    gcp.write_text(gcp.read_text(encoding="utf-8").rstrip("\n") + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    read = read_path(folder, catalog_settings().providers)
    shipped = load_catalog(user_dir=None)
    result = plan_refresh(read.catalogs, shipped, refreshed_on=date(2026, 11, 28), origin=str(folder))
    v6e = _offer(result, "gcp-tpu-v6e-4")
    assert (v6e.accelerator, v6e.count, v6e.usd_per_hour) == ("google-tpu-v6e", 4, 10.8)
    assert v6e.shipped is shipped.instances["gcp-tpu-v6e-4"]
    assert _offer(result, "gcp-tpu-v6e-4", "spot").usd_per_hour == 4.32
    v5p = _offer(result, "gcp-tpu-v5p-8")
    assert (v5p.count, v5p.usd_per_hour) == (4, 16.8)
    assert _offer(result, "gcp-tpu-v5e-1").count == 1


# --- bounded in time and memory, clean on signals (issue 31) ---------------------------------------------------------


def test_names_are_matched_once_per_distinct_offer(monkeypatch: pytest.MonkeyPatch) -> None:
    """10,000 rows of RunPod's 8 recorded rows in 50 regions at varying prices: 7 distinct offers (two rows are the
    same RTX 4090 pod in two regions), 7 namings (before: one per row, so a million-row catalog took minutes)."""
    from gpuadvisor.knowledge import price_refresh

    lines = (CATALOGS / "runpod.csv").read_text(encoding="utf-8").splitlines()
    header, rows = lines[0], lines[1:]
    assert len(rows) == 8
    body = []
    for i in range(10_000):
        cells = rows[i % 8].split(",")
        cells[1], cells[2] = f"R-{i % 50}", f"{float(cells[2]) + (i % 7) / 100:.2f}"
        body.append(",".join(cells))
    cat = parse_catalog(("\n".join([header, *body]) + "\n").encode(), "runpod", "runpod.csv")
    calls: list[str] = []
    real = price_refresh.OfferNamer.name

    def counted(self, provider, row):  # type: ignore[no-untyped-def]
        calls.append(row.instance)
        return real(self, provider, row)

    monkeypatch.setattr(price_refresh.OfferNamer, "name", counted)
    many = plan_refresh([cat], load_catalog(user_dir=None), refreshed_on=date(2026, 11, 25), origin="x")
    assert len(calls) == 7 and many.gpu_rows == 10_000
    once = plan_refresh(read_path(CATALOGS / "runpod.csv", ["runpod"]).catalogs, load_catalog(user_dir=None),
                        refreshed_on=date(2026, 11, 25), origin="x")
    assert {(o.id, o.pricing) for o in many.offers} == {(o.id, o.pricing) for o in once.offers}
    # the cheapest of each offer is the recorded one (every variation adds 0-6 cents): the same prices
    assert sorted(o.usd_per_hour for o in many.offers) == sorted(o.usd_per_hour for o in once.offers)


def test_a_catalog_beyond_the_row_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuadvisor.knowledge import price_catalog

    monkeypatch.setattr(price_catalog, "MAX_ROWS", 10)
    row = "g5.xlarge,us-east-1,1.006,4,16.0,1,A10G,24.0,False,,nvidia,,x86,{}"
    assert parse_catalog(("\n".join([HEADER, *[row] * 10]) + "\n").encode(), "aws", "aws.csv").read == 10
    with pytest.raises(CatalogError) as info:
        parse_catalog(("\n".join([HEADER, *[row] * 11]) + "\n").encode(), "aws", "aws.csv")
    assert str(info.value) == ("aws.csv: more than 10 rows; gpuhunt's catalogs hold a few thousand, so this is not "
                               "one (or split it by provider)")


def test_a_row_priced_zero_once_rounded_is_dropped_and_listed(data_dir: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's reproduction: one row at $0.0000001 beside good rows failed the whole refresh (exit 2) with a
    message naming a temporary file that no longer existed. It rounds to $0.000000 at the overlay's six decimals:
    dropped, listed with its line, and the rest refreshed."""
    folder = _copy(tmp_path, runpod=[("NVIDIA GeForce RTX 4090,CZ,0.59,", "NVIDIA GeForce RTX 4090,CZ,0.0000001,")])
    assert main(["kb", "refresh", "--from", str(folder)]) == 0
    out = capsys.readouterr().out
    assert (f"Dropped 1 row of {folder / 'runpod.csv'} priced $0.000000/h once rounded to six decimals (not a "
            "price): line 3: NVIDIA GeForce RTX 4090 ($1e-07/h)") in out
    catalog = load_catalog()
    price = catalog.instances["runpod-rtx-4090"].current_price("on-demand")
    assert price is not None and price.usd_per_hour == 0.69  # the other region's price: the cheapest that is one
    # per GPU: $0.0000049 an hour for 8 GPUs is $0.0000006 per GPU → $0.000001, kept; $0.000003 for 8 is dropped
    cat = parse_catalog(f"{HEADER}\np.8x,us,0.0000049,96,1152.0,8,A100,40.0,False,,nvidia,,x86,{{}}\n"
                        f"p.8y,us,0.000003,96,1152.0,8,A100,40.0,False,,nvidia,,x86,{{}}\n".encode(), "aws", "a.csv")
    assert [r.instance for r in cat.rows] == ["p.8x"] and cat.zero_rows == 1


def test_a_failed_check_names_the_overlay_not_a_temporary_file(data_dir: Path, tmp_path: Path) -> None:
    from gpuadvisor.knowledge.errors import KnowledgeError
    from gpuadvisor.knowledge.price_refresh import write_overlay

    target = data_dir / "refreshed-prices.toml"
    target.parent.mkdir(parents=True)
    target.write_text("previous\n", encoding="utf-8")
    seen: list[Path] = []

    def bad(candidate: Path) -> None:
        seen.append(candidate)
        raise KnowledgeError(f"{candidate}:3: instance x: price: must be positive")

    with pytest.raises(KnowledgeError) as info:
        write_overlay("new\n", target, bad)
    assert str(info.value) == f"{target} (the new overlay, not written):3: instance x: price: must be positive"
    assert seen[0].parent == target.parent and seen[0].name.startswith(".refreshed-prices.toml.")
    assert sorted(p.name for p in data_dir.iterdir()) == ["refreshed-prices.toml"]  # nothing left behind
    assert target.read_text(encoding="utf-8") == "previous\n"


@pytest.mark.parametrize(("make", "message"), [
    (lambda p: p.symlink_to(p), "a loop of symbolic links (it leads back to itself)"),
    (lambda p: p.symlink_to(p.parent / "gone"), "a symbolic link to nothing"),
])
def test_a_symlink_loop_is_reported_as_a_loop(tmp_path: Path, make, message: str,  # type: ignore[no-untyped-def]
                                              capsys: pytest.CaptureFixture[str]) -> None:
    link = tmp_path / "catalogs"
    make(link)
    assert _refresh_fails(link, capsys).startswith(f"gpuadvisor: error: {link}: {message}")


REFRESH_UNDER_SIGTERM = """
import os, signal, sys
from pathlib import Path
from gpuadvisor.knowledge import loader
from gpuadvisor.knowledge.price_catalog import read_path
from gpuadvisor.tui.commands.kb_refresh import refresh
real = loader.load_catalog
def load(*args, **kwargs):
    if kwargs.get("refreshed") is not None:  # the check of the new overlay
        os.kill(os.getpid(), signal.SIGTERM)
    return real(*args, **kwargs)
loader.load_catalog = load
refresh(read_path(Path(sys.argv[1]), ["runpod"]), "x", Path(sys.argv[2]), out=print)
"""


def test_sigterm_during_the_check_leaves_no_temporary_file(tmp_path: Path) -> None:
    """The issue's reproduction: SIGTERM during validation left $TMPDIR/gpuadvisor-refresh-* holding a copy of the
    overlay. Now the one temporary file is beside the target, and removed before the signal ends the process."""
    import os
    import signal
    import subprocess
    import sys

    target = tmp_path / "data" / "refreshed-prices.toml"
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "GPUADVISOR_DATA_DIR": str(target.parent)}
    done = subprocess.run([sys.executable, "-c", REFRESH_UNDER_SIGTERM, str(CATALOGS / "runpod.csv"), str(target)],
                          env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == -signal.SIGTERM, done.stderr
    assert list(temp.iterdir()) == [] and list(target.parent.iterdir()) == []


def test_temporary_files_a_killed_refresh_left_are_removed_at_the_next(data_dir: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """After SIGKILL nothing runs: `.refreshed-prices.toml.*.tmp` stayed in the data dir for ever. The next refresh
    removes those whose process is gone (and nameless ones over an hour old); a running refresh's file stays."""
    import os
    import subprocess
    import sys
    import time

    data_dir.mkdir()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        dead = data_dir / f".refreshed-prices.toml.{gone.pid}.0badf00d.tmp"
        alive = data_dir / f".refreshed-prices.toml.{running.pid}.0badf00d.tmp"
        old = data_dir / ".refreshed-prices.toml.deadbeef.tmp"  # before issue 31: no process id
        fresh = data_dir / ".refreshed-prices.toml.cafef00d.tmp"
        for path in (dead, alive, old, fresh):
            path.write_text("x", encoding="utf-8")
        two_hours_ago = time.time() - 7200
        os.utime(old, (two_hours_ago, two_hours_ago))
        assert main(["kb", "refresh", "--from", str(CATALOGS)]) == 0
        capsys.readouterr()
        assert sorted(p.name for p in data_dir.iterdir()) == sorted([alive.name, fresh.name, "refreshed-prices.toml"])
    finally:
        running.kill()
        running.wait()
