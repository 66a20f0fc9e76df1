"""Read gpuhunt's public GPU price catalogs: from its published archives online, or from files on disk.

gpuhunt (dstack's library, MPL-2.0) publishes one CSV file per provider, collected hourly from the providers' own
price lists, without credentials: `<url>/<provider>/version` holds a `YYYYMMDD-N` stamp (the day it was collected)
and `<url>/<provider>/<version>/catalog.zip` the file `<provider>.csv`. Rows are parsed by gpuhunt's own reader
(`item_from_row`), so the format is exactly the one gpuhunt writes. What this module adds is what a user needs from
a command: a size cap, a timeout, progress, every problem named with its file and line, and the catalog's own date.

A row that does not parse is skipped and counted (the first problem is kept for the summary); a file in which no row
parses, or that lacks gpuhunt's columns, is refused as a whole with a `CatalogError`.
"""

from __future__ import annotations

import csv
import errno
import io
import math
import os
import re
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from gpuadvisor.knowledge.errors import InputError
from gpuadvisor.knowledge.files import MIB, list_files, read_file_bytes
from gpuadvisor.knowledge.sanitize import one_line, shorten

CATALOG_MAX_BYTES = 256 * MIB
"""Cap per catalog file (and per download): gpuhunt's largest, AWS, is a few tens of MiB uncompressed."""
REQUIRED_COLUMNS = ("instance_name", "location", "price", "cpu", "memory", "gpu_count", "spot")
"""gpuhunt's columns without which no row can be read (`storage._load_required`)."""
VERSION = re.compile(r"^(\d{4})(\d{2})(\d{2})-\d+$")
"""gpuhunt's catalog version: the collection day and the run number (publish_catalog.sh)."""
DEFAULT_TIMEOUT_S = 30.0

Progress = Callable[[str, int, int | None], None]
"""progress(label, bytes done, bytes in all or None when the server does not say)."""


class CatalogError(InputError):
    """A catalog that cannot be read (offline, a timeout, a malformed file): the message names the file and line."""


@dataclass(frozen=True, slots=True)
class CatalogRow:
    """One GPU offer as a catalog prints it (CPU-only rows are not kept)."""

    instance: str
    location: str
    usd_per_hour: float
    gpu_count: int
    gpu_name: str | None
    gpu_memory_gb: float | None
    spot: bool
    line: int


@dataclass(frozen=True)
class ProviderCatalog:
    """One provider's catalog file, read."""

    provider: str
    """gpuhunt's provider name (the file's stem: aws, runpod, lambdalabs, ...)."""
    origin: str
    """What was read, for messages and the source: a path (`dir/aws.csv`, `catalog.zip:aws.csv`) or a URL."""
    version: str | None
    """gpuhunt's version stamp when known (downloads, archives under a version directory, a `version` file)."""
    as_of: date | None
    """The catalog's own date (its version's day, else the archive member's date), None when the file has none."""
    rows: list[CatalogRow]
    read: int
    """Data rows in the file (GPU and CPU offers)."""
    skipped: int = 0
    first_problem: str | None = None
    priced_zero: list[str] = field(default_factory=list)
    """GPU rows dropped because their price rounds to $0 at the overlay's six decimals (per machine or per GPU):
    'line N: instance ($price/h)', at most ZERO_ROWS_LISTED of them; `zero_rows` counts them all."""
    zero_rows: int = 0


@dataclass
class ReadResult:
    """The catalogs read, and the files passed over (a provider the knowledge base does not map)."""

    catalogs: list[ProviderCatalog] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)


# ----------------------------------------------------------------------------------------------------------------
# One CSV text
# ----------------------------------------------------------------------------------------------------------------


def version_date(version: str | None) -> date | None:
    """The collection day of a gpuhunt version stamp ('20261127-12' -> 2026-11-27), None for anything else."""
    m = VERSION.match(version or "")
    if not m:
        return None
    try:
        return date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return None


MAX_ROWS = 1_000_000
"""Most data rows read from one catalog file; a longer file is refused with a message. gpuhunt's catalogs are far
smaller (its AWS collector keeps about 110 GPU-relevant instance types per region, gpuhunt PR #254, 2026-08-19: a few
thousand rows over some 30 regions and two price kinds), while the 256 MiB byte cap alone would let through about
3.5 million rows of ~75 bytes. A million rows is read in seconds and well under a GiB (tests/benchmarks/
bench_refresh_rows.py prints both)."""
PRICE_DECIMALS = 6
"""The overlay keeps prices to six decimals (price_refresh._price_entry): a price that rounds to zero there cannot
be written as a price (the schema wants it positive), so such a row is dropped and listed, not fatal."""
ZERO_ROWS_LISTED = 5
MAX_HOURLY_USD = 100_000.0
"""Dearest plausible offer an hour (a whole 72-GPU rack rents for a few hundred dollars): above it, a row is refused."""
MAX_GPUS_PER_OFFER = 1024


def parse_catalog(data: bytes, provider: str, origin: str, *, version: str | None = None,
                  as_of: date | None = None) -> ProviderCatalog:
    """Parse one gpuhunt CSV file; raises CatalogError naming `origin` and the line when the file is unusable."""
    from gpuhunt._internal.storage import item_from_row  # gpuhunt's own row reader: its format, exactly

    try:
        data.decode("utf-8")  # checked whole first, so a bad byte is named by its line; the text is then streamed
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise CatalogError(f"{origin}:{line}: not UTF-8 text (byte {exc.start}); is it a gpuhunt catalog?") from None
    # a BOM (a catalog saved by a spreadsheet) is accepted; decoding as the reader goes keeps one copy of the text
    reader = csv.DictReader(io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline=""))
    try:
        header = reader.fieldnames
    except csv.Error as exc:
        raise CatalogError(f"{origin}:1: malformed CSV header: {exc}") from None
    if not header:
        raise CatalogError(f"{origin}: empty file, no gpuhunt catalog header")
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise CatalogError(f"{origin}:1: not a gpuhunt catalog: missing column{'s' if len(missing) > 1 else ''} "
                           f"{', '.join(missing)}")
    rows: list[CatalogRow] = []
    read = skipped = 0
    first: str | None = None
    zero: list[str] = []
    zeros = 0
    clean = _Interned()
    rows_iter: Iterator[dict[str, str]] = iter(reader)
    while True:
        try:
            raw = next(rows_iter)
        except StopIteration:
            break
        except csv.Error as exc:
            raise CatalogError(f"{origin}:{reader.line_num}: malformed CSV: {exc}") from None
        read += 1
        if read > MAX_ROWS:
            raise CatalogError(f"{origin}: more than {MAX_ROWS:,} rows; gpuhunt's catalogs hold a few thousand, so "
                               "this is not one (or split it by provider)")
        try:
            item = item_from_row(raw, provider=provider)
            if not (math.isfinite(item.price) and 0 < item.price <= MAX_HOURLY_USD):
                raise ValueError(f"price must be a positive number of at most ${MAX_HOURLY_USD:,.0f} an hour, got "
                                 f"{shorten(repr(item.price), 40)}")
            if not 0 <= item.gpu_count <= MAX_GPUS_PER_OFFER:
                raise ValueError(f"gpu_count must be 0 to {MAX_GPUS_PER_OFFER}, got {item.gpu_count}")
            if item.gpu_count < 0:
                raise ValueError(f"gpu_count must not be negative, got {item.gpu_count}")
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            skipped += 1
            first = first or f"line {reader.line_num}: {exc}"
            continue
        if item.gpu_count and _rounds_to_zero(float(item.price), item.gpu_count):
            zeros += 1
            if len(zero) < ZERO_ROWS_LISTED:
                zero.append(f"line {reader.line_num}: {clean(item.instance_name)} (${item.price:.10g}/h)")
        elif item.gpu_count:
            rows.append(CatalogRow(clean(item.instance_name), clean(item.location), float(item.price),
                                   item.gpu_count, clean(item.gpu_name) if item.gpu_name else None,
                                   item.gpu_memory, bool(item.spot), reader.line_num))
    if read == 0:
        raise CatalogError(f"{origin}: no offers in the file (a header only)")
    if skipped == read:
        raise CatalogError(f"{origin}: no row could be read ({read} rows; first problem at {first})")
    return ProviderCatalog(provider, origin, version, as_of or version_date(version), rows, read, skipped, first,
                           zero, zeros)


def _rounds_to_zero(usd_per_hour: float, gpu_count: int) -> bool:
    """The price, per machine or per GPU, is $0 once written with the overlay's six decimals."""
    return round(usd_per_hour / gpu_count, PRICE_DECIMALS) <= 0 or round(usd_per_hour, PRICE_DECIMALS) <= 0


class _Interned:
    """`_clean` once per distinct string: a catalog repeats its few instance, region and GPU names on every row, so a
    million rows hold a few hundred strings, not three million."""

    def __init__(self) -> None:
        self._seen: dict[str, str] = {}

    def __call__(self, text: str) -> str:
        found = self._seen.get(text)
        if found is None:
            found = self._seen[text] = _clean(text)
        return found


def _clean(text: str) -> str:
    """Catalog strings are data shown in a terminal: through the one sanitiser (escape sequences become spaces), and
    cut to a length a name can have."""
    return shorten(one_line(text), 200)


# ----------------------------------------------------------------------------------------------------------------
# Files on disk: a directory of CSV files, a published archive, or one CSV file
# ----------------------------------------------------------------------------------------------------------------


def read_path(path: Path, providers: Iterable[str]) -> ReadResult:
    """Every catalog under `path` of the given gpuhunt providers: a directory of `<provider>.csv` files (and/or
    `catalog.zip` archives), an archive, or one CSV file. A `version` file beside them dates them all."""
    wanted = set(providers)
    if not os.path.exists(path):  # os.path never raises (an over-long path is "no such file")
        raise CatalogError(f"{path}: {_why_missing(path)}")
    result = ReadResult()
    if os.path.isdir(path):
        stamp = _version_file(path)
        files = list_files(path, (".csv", ".zip"), what="price catalog")
        if not files:
            raise CatalogError(f"{path}: no gpuhunt catalog here (expected <provider>.csv files or catalog.zip)")
        for file in files:
            _read_file(file, wanted, result, stamp)
    else:
        _read_file(path, wanted, result, _version_in(path))
    if not result.catalogs:
        names = ", ".join(sorted(wanted))
        raise CatalogError(f"{path}: no catalog of a known provider ({names}); found only "
                           f"{', '.join(result.ignored) or 'nothing'}")
    return result


def _why_missing(path: Path) -> str:
    """Why a path `os.path.exists` calls missing is: a loop of symbolic links, a link to nothing, or nothing."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a loop of symbolic links (it leads back to itself); point --from at the catalogs themselves"
        if os.path.islink(path):
            return "a symbolic link to nothing"
        if exc.errno not in (errno.ENOENT, errno.ENOTDIR):
            return f"cannot read it: {exc.strerror or exc}"
    return "no such file or directory"


def _version_file(directory: Path) -> str | None:
    stamp = directory / "version"
    if os.path.isfile(stamp):
        text = read_file_bytes(stamp, what="catalog version file", max_bytes=1024).decode("utf-8", "replace").strip()
        if version_date(text) is None:
            raise CatalogError(f"{stamp}:1: not a gpuhunt version stamp (YYYYMMDD-N): {text[:40]!r}")
        return text
    return _version_in(directory)


def _version_in(path: Path) -> str | None:
    """A version stamp among the path's parts (the bucket's layout `<provider>/<version>/catalog.zip`)."""
    return next((part for part in reversed(path.parts) if version_date(part) is not None), None)


def _read_file(file: Path, wanted: set[str], result: ReadResult, stamp: str | None) -> None:
    data = read_file_bytes(file, what="price catalog", max_bytes=CATALOG_MAX_BYTES)
    if file.suffix.lower() == ".zip":
        _read_archive(data, str(file), wanted, result, stamp)
        return
    provider = file.stem.lower()
    if provider not in wanted:
        result.ignored.append(file.name)
        return
    result.catalogs.append(parse_catalog(data, provider, str(file), version=stamp))


def _read_archive(data: bytes, origin: str, wanted: set[str], result: ReadResult, stamp: str | None,
                  only: str | None = None) -> None:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise CatalogError(f"{origin}: not a zip archive ({exc})") from None
    with archive:
        members = [m for m in archive.infolist() if m.filename.lower().endswith(".csv") and not m.is_dir()]
        if not members:
            raise CatalogError(f"{origin}: the archive holds no <provider>.csv file")
        for member in members:
            provider = Path(member.filename).stem.lower()
            if only is not None and provider != only:
                continue
            if provider not in wanted:
                result.ignored.append(f"{Path(origin).name}:{member.filename}")
                continue
            if member.file_size > CATALOG_MAX_BYTES:
                raise CatalogError(f"{origin}:{member.filename}: {member.file_size:,} bytes, over the "
                                   f"{CATALOG_MAX_BYTES // MIB} MiB limit")
            try:
                content = archive.read(member)
            except (zipfile.BadZipFile, OSError, EOFError) as exc:
                raise CatalogError(f"{origin}:{member.filename}: damaged archive member ({exc})") from None
            dated = date(*member.date_time[:3]) if member.date_time[0] >= 1980 else None
            result.catalogs.append(parse_catalog(content, provider, f"{origin}:{member.filename}", version=stamp,
                                                 as_of=version_date(stamp) or dated))


# ----------------------------------------------------------------------------------------------------------------
# The published catalogs
# ----------------------------------------------------------------------------------------------------------------


def catalog_url() -> str:
    """gpuhunt's catalog address (its own `GPUHUNT_CATALOG_URL` wins, as in gpuhunt)."""
    from gpuhunt._internal.catalog import _get_base_url

    return str(_get_base_url())


def download(providers: Iterable[str], *, base_url: str | None = None, timeout: float = DEFAULT_TIMEOUT_S,
             progress: Progress | None = None) -> ReadResult:
    """The newest published catalog of each provider; any failure (offline, a timeout, an HTTP error, a malformed
    file) raises CatalogError naming the provider and the address, so nothing half-read is ever used."""
    base = (base_url or catalog_url()).rstrip("/")
    result = ReadResult()
    for provider in providers:
        version_url = f"{base}/{provider}/version"
        version = _fetch(version_url, timeout, None, provider, max_bytes=1024).decode("utf-8", "replace").strip()
        if version_date(version) is None:
            raise CatalogError(f"{version_url}: not a gpuhunt version stamp (YYYYMMDD-N): {version[:40]!r}")
        url = f"{base}/{provider}/{version}/catalog.zip"
        data = _fetch(url, timeout, progress, f"{provider} {version}", max_bytes=CATALOG_MAX_BYTES)
        _read_archive(data, url, {provider}, result, version, only=provider)
        if not any(c.provider == provider for c in result.catalogs):
            raise CatalogError(f"{url}: the archive holds no {provider}.csv")
    return result


def _fetch(url: str, timeout: float, progress: Progress | None, label: str, *, max_bytes: int) -> bytes:
    from gpuadvisor.knowledge.loader import _package_version

    request = urllib.request.Request(url, headers={"User-Agent": f"gpuadvisor/{_package_version()}"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 (an https address)
            total = response.headers.get("Content-Length")
            size = int(total) if total and total.isdigit() else None
            if size is not None and size > max_bytes:
                raise CatalogError(f"{url}: {size:,} bytes, over the {max_bytes // MIB or 1} MiB limit")
            chunks: list[bytes] = []
            done = 0
            while chunk := response.read(256 * 1024):
                chunks.append(chunk)
                done += len(chunk)
                if done > max_bytes:
                    raise CatalogError(f"{url}: more than {max_bytes:,} bytes; not a gpuhunt catalog")
                if progress is not None:
                    progress(label, done, size)
            return b"".join(chunks)
    except urllib.error.HTTPError as exc:
        raise CatalogError(f"{url}: the server answered HTTP {exc.code} {exc.reason}") from None
    except TimeoutError:
        raise CatalogError(f"{url}: no answer within {timeout:g} s (timed out); try again, or read a saved "
                           "catalog with --from PATH") from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, TimeoutError):
            raise CatalogError(f"{url}: no answer within {timeout:g} s (timed out); try again, or read a saved "
                               "catalog with --from PATH") from None
        raise CatalogError(f"{url}: cannot connect ({reason}); offline? Read a saved catalog with --from PATH") \
            from None
    except OSError as exc:
        raise CatalogError(f"{url}: download failed ({exc.strerror or exc}); offline? Read a saved catalog with "
                           "--from PATH") from None
