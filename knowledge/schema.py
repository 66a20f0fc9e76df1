"""Pydantic schema of the knowledge base: accelerators, cloud instances, models, precisions, assumptions.

Every number in the knowledge base is a `Measure` (value + sources), because the advisor must be able to say where
each figure came from. Unknown fields are errors (``extra="forbid"``): a misspelt key in a user's overlay must not
be silently ignored.
"""

from __future__ import annotations

import math
import re
from datetime import date
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from gpuadvisor.knowledge.bounds import (
    MAX_EXPERTS,
    MAX_HEADS,
    MAX_HIDDEN,
    MAX_LAYERS,
    MAX_MEASURE,
    MAX_NORMS_PER_LAYER,
    MAX_PARAMETERS,
    MAX_POSITIONS,
    MAX_VOCAB,
    bound,
)
from gpuadvisor.knowledge.engine_names import EngineName

_DATE_PREFIX = re.compile(r"^(\d{4})-(\d{2})(?:-(\d{2}))?")


class Strict(BaseModel):
    """Base of every knowledge-base model: unknown fields are errors, instances are immutable, and values are taken as
    written (`strict`: `memory_gb = true` or `"80"` is not a number, `8.0` is not a count). Every number is finite and
    within `bounds.MAX_MEASURE` unless its field has a tighter bound of its own (see `knowledge.bounds`)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, defer_build=True, strict=True)

    @model_validator(mode="after")
    def _magnitudes(self) -> Strict:
        for name in type(self).model_fields:
            value = getattr(self, name)
            if isinstance(value, int | float) and not isinstance(value, bool) and abs(value) > MAX_MEASURE:
                raise ValueError(f"{name}: {value:g} is implausible: no figure is over {MAX_MEASURE:g}")
        return self


class Source(Strict):
    """A document a number was read from (datasheet, price file, one of the seed documents)."""

    id: str
    title: str
    url: str | None = None
    kind: str
    vendor_url: str | None = None
    read_via: str | None = None
    notes: str | None = None


class Measure(Strict):
    """A sourced number. Dense figures only: `halved_from_sparse` keeps the vendor's with-sparsity print."""

    value: float = Field(ge=-MAX_MEASURE, le=MAX_MEASURE)
    sources: list[str] = Field(min_length=1)
    notes: str | None = None
    halved_from_sparse: float | None = Field(default=None, ge=-MAX_MEASURE, le=MAX_MEASURE)
    derived: bool = False
    approximate: bool = False


class TextMeasure(Strict):
    """A sourced string value (e.g. a CUDA compute capability such as "8.9")."""

    value: str
    sources: list[str] = Field(min_length=1)
    notes: str | None = None


def parse_as_of(text: str) -> date:
    """The date a price or figure was read: 'YYYY-MM-DD' or 'YYYY-MM' (first of month), free text may follow."""
    m = _DATE_PREFIX.match(text)
    if not m:
        raise ValueError(f"as_of {text!r} must start with a date YYYY-MM-DD or YYYY-MM")
    return date(int(m[1]), int(m[2]), int(m[3] or 1))


def _checked_as_of(v: str | None) -> str | None:
    if v is not None:
        parse_as_of(v)
    return v


AsOf = Annotated[str | None, AfterValidator(_checked_as_of)]
"""A date as its source gives it ('YYYY-MM-DD' or 'YYYY-MM', text may follow), or None: the source gives none."""


PriceKind = Literal["msrp", "street", "used", "system-share", "estimate", "quote"]
"""msrp = launch list price; street = new-card retail; used = second-hand market; system-share = a published
server/system price divided by its accelerators; estimate = a documented range from quotes, press or resellers;
quote = the buyer's own vendor quote (`gpuadvisor kb quote add`), which wins over the others while it is valid."""


class Price(Strict):
    """A purchase price with its kind and, when its source gives one, its date.

    `as_of` is None for an undated figure (a document that states a price without saying when): never stamp a
    date nobody observed. An `estimate` carries the `low`/`high` range its sources span.
    """

    value: float = Field(**bound("purchase_usd").field())
    kind: PriceKind
    as_of: AsOf = None
    sources: list[str] = Field(min_length=1)
    approximate: bool = True
    derived: bool = False
    """Arithmetic on sourced figures (the formula is in `notes`)."""
    low: float | None = Field(default=None, **bound("purchase_usd").field())
    high: float | None = Field(default=None, **bound("purchase_usd").field())
    notes: str | None = None

    @model_validator(mode="after")
    def _range(self) -> Price:
        if self.kind == "estimate" and (self.low is None or self.high is None):
            raise ValueError("a price of kind 'estimate' needs 'low' and 'high' (the range its sources span)")
        if (self.low is None) != (self.high is None):
            raise ValueError("give both 'low' and 'high', or neither")
        if self.low is not None and self.high is not None and not self.low <= self.value <= self.high:
            raise ValueError(f"value {self.value:g} must lie within low {self.low:g} .. high {self.high:g}")
        return self

    @property
    def as_of_date(self) -> date | None:
        return None if self.as_of is None else parse_as_of(self.as_of)

    @property
    def as_of_label(self) -> str:
        """The date as shown to users ('2025-01', '2026-07-28'), or 'undated' when the source gives none."""
        return as_of_label(self.as_of)

    def age_months(self, today: date) -> int | None:
        """Whole months from `as_of` to `today` (None when undated); a future date counts as 0."""
        return age_months(self.as_of, today)


def as_of_label(as_of: str | None) -> str:
    """The date part of an `as_of` ('2024-12 (rates valid until ...)' -> '2024-12'), or 'undated' for None."""
    if as_of is None:
        return "undated"
    m = _DATE_PREFIX.match(as_of)
    return m[0] if m else as_of


def age_months(as_of: str | None, today: date) -> int | None:
    """Whole calendar months between an `as_of` and `today`, counting a partial month as not yet elapsed."""
    if as_of is None:
        return None
    then = parse_as_of(as_of)
    months = (today.year - then.year) * 12 + today.month - then.month - (today.day < then.day)
    return max(months, 0)


Vendor = Literal["nvidia", "amd", "google", "aws", "intel", "apple", "other"]
Market = Literal["datacenter", "workstation", "consumer", "cloud-only"]
InterconnectKind = Literal["nvlink", "infinity-fabric", "ici", "neuronlink", "roce", "pcie", "unified", "none"]
SoftwareStack = Literal["cuda", "rocm", "xla", "neuron", "synapseai", "metal", "cpu", "other"]
FlashAttention = Literal["yes", "no", "not-listed", "n/a"]
ModelSplit = Literal["tensor", "pipeline"]


ACCELERATOR_RANGES: dict[str, tuple[float, float, bool]] = {
    "memory_gb": (0, 100_000, True), "memory_bandwidth_gbs": (0, 1_000_000, True),
    **{f: (0, 10_000_000, False) for f in ("fp32_tflops", "tf32_tflops", "fp16_tflops", "bf16_tflops", "fp8_tflops",
                                          "fp4_tflops", "int8_tops")},
    "interconnect_gbs": (0, 1_000_000, False), "tdp_w": (0, 100_000, True),
    "attention_softmax_speedup": (0, 100, True),
}
"""(low, high, low excluded) per hardware figure: far around every real part (a GB200 NVL72 rack is 13.5 TB and
1.4 EFLOPS of FP4 in all), so only a typo or an absurd value is refused."""


def _n(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() and abs(x) < 1e18 else f"{x:g}"


class PowerLimit(Strict):
    """A board power limit with a published result: what the part sustains there (MLPerf MaxQ systems run the same
    GPUs capped with `nvidia-smi -pl`)."""

    limit_w: int = Field(**bound("power_limit_w").field())
    sustained_compute_ratio: Measure
    """Share of the datasheet tensor rate sustained at the limit, derived like `sustained_compute_ratio` from the
    capped system's rows against the same system at full power (tests/benchmarks/derive_sustained.py)."""
    system_power_w: Measure | None = None
    """Measured average wall power of the published system at this limit, with its GPU count in the notes."""


class Quote(Strict):
    """A vendor's dated quote the buyer holds (`gpuadvisor kb quote add`, kept in the user overlay's quotes.toml):
    a price per accelerator for a part, or per machine for a system. While valid it replaces the knowledge base's
    price of that part or system in every plan; once `valid_until` has passed it is ignored, and said so."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9.\-_]*$")
    vendor: str = Field(min_length=1, max_length=200)
    accelerator: str | None = None
    """The part quoted (an accelerators.toml id): `usd` is per accelerator."""
    system: str | None = None
    """The machine quoted (a systems.toml id): `usd` is per machine."""
    usd: float = Field(**bound("purchase_usd").field())
    includes_accelerators: bool = False
    """A system quote for the whole machine with its accelerators (only for a system built around a fixed part)."""
    quoted_on: str
    """The quote's date (YYYY-MM-DD)."""
    valid_until: str
    """The last day the vendor honours it (YYYY-MM-DD)."""
    notes: str | None = None

    @field_validator("quoted_on", "valid_until")
    @classmethod
    def _day(cls, v: str) -> str:
        try:
            date.fromisoformat(v)
        except ValueError:
            raise ValueError(f"{v!r} is not a date YYYY-MM-DD") from None
        return v

    @model_validator(mode="after")
    def _one_target(self) -> Quote:
        if (self.accelerator is None) == (self.system is None):
            raise ValueError("a quote names either 'accelerator' (a part) or 'system' (a machine), not both or neither")
        if self.includes_accelerators and self.system is None:
            raise ValueError("includes_accelerators applies to a system quote")
        if date.fromisoformat(self.valid_until) < date.fromisoformat(self.quoted_on):
            raise ValueError(f"valid_until {self.valid_until} is before quoted_on {self.quoted_on}")
        return self

    def expired(self, on: date) -> bool:
        return date.fromisoformat(self.valid_until) < on

    @property
    def label(self) -> str:
        """'your quote (2026-11-20)': how a plan priced on it says so."""
        return f"your quote ({self.quoted_on})"


class SoftwareSupport(Strict):
    """How long the vendor's software stack keeps a part: a hardware purchase outlives its toolkit. `dropped_in` is
    the first release that no longer builds for or runs on it (CUDA 13.0 for Volta's SM70); None = still
    supported by the newest release its sources name (`checked_release`)."""

    stack: str
    """The toolkit whose releases decide it: 'CUDA', 'ROCm'."""
    last_release: str | None = None
    """The last release series that supports the part ('CUDA 12.9'), when it is dropped."""
    dropped_in: str | None = None
    """The release that dropped it ('CUDA 13.0'); None = supported."""
    dropped_on: AsOf = None
    """When that release shipped, as its source dates it."""
    checked_release: str | None = None
    """For a supported part: the newest release a source shows supporting it ('ROCm 7.1')."""
    sources: list[str] = Field(min_length=1)
    notes: str | None = None

    @model_validator(mode="after")
    def _said_once(self) -> SoftwareSupport:
        if self.dropped_in is None and (self.last_release is not None or self.dropped_on is not None):
            raise ValueError("last_release / dropped_on describe a part that is dropped: give dropped_in too")
        if self.dropped_in is None and self.checked_release is None:
            raise ValueError("a supported part names the newest release that supports it (checked_release)")
        return self

    @property
    def dropped(self) -> bool:
        return self.dropped_in is not None

    def horizon(self) -> str:
        """'dropped in CUDA 13.0 (2025-08; last supported: CUDA 12.9)' or 'supported in ROCm 7.1'."""
        if self.dropped_in is None:
            return f"supported in {self.checked_release}"
        when = f"{as_of_label(self.dropped_on)}; " if self.dropped_on else ""
        last = f"last supported: {self.last_release}" if self.last_release else ""
        inside = (when + last).rstrip("; ")
        return f"dropped in {self.dropped_in}" + (f" ({inside})" if inside else "")


class Accelerator(Strict):
    """One accelerator model (a GPU, TPU chip, Trainium/Inferentia chip, Gaudi, Apple SoC)."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9.\-]*$")
    name: str
    aliases: list[str] = []
    vendor: Vendor
    architecture: str
    market: Market
    form_factor: str
    release_year: Measure | None = None
    memory_type: str
    memory_gb: Measure
    memory_bandwidth_gbs: Measure
    fp32_tflops: Measure | None = None
    tf32_tflops: Measure | None = None
    fp16_tflops: Measure | None = None
    bf16_tflops: Measure | None = None
    fp8_tflops: Measure | None = None
    fp4_tflops: Measure | None = None
    int8_tops: Measure | None = None
    interconnect: str
    interconnect_kind: InterconnectKind
    interconnect_gbs: Measure | None = None
    interconnect_domain: int | None = Field(default=None, ge=1)
    """Accelerators sharing the fast interconnect: 8 on an HGX/OAM board, 72 in GB200 NVL72, 2 for an
    NVLink-bridged PCIe pair, the pod size for TPUs; None when the part has none (PCIe only)."""
    pcie_gen: Measure | None = None
    tdp_w: Measure | None = None
    sustained_compute_ratio: Measure | None = Field(default=None)
    """Share of the datasheet dense tensor rate the part sustains through a long, full serving load, for power- or
    cooling-limited form factors (PCIe and NVL cards, L40S-class cards): the clocks fall to the board's power
    limit. Derived from published MLPerf Inference per-GPU throughput against the same round's full-power module
    (tests/benchmarks/derive_sustained.py), with the rows in its sources and the arithmetic in its notes. None = the
    datasheet rate is sustained (SXM/OAM modules, and parts without published large-batch rows)."""
    sustained_compute_ratio_by_precision: dict[str, Measure] = {}
    """The sustained share at one compute precision where it differs from `sustained_compute_ratio`: a board power
    limit bites harder at the densest math (the 600 W RTX PRO 6000 holds its FP8 rate but not its FP4 rate, twice
    the operations per cycle). Keys are compute precisions (fp4, fp8, bf16, ...); derived the same way, with the
    card's own rows at another precision as the reference."""
    matmul_tflops: dict[str, Measure] = {}
    """Maximum achievable dense matmul throughput measured at a compute precision (keys bf16, fp8, ...): the best
    rate a brute-force search over GEMM shapes reaches (Stas Bekman's MAMF finder), below the datasheet peak by a
    share that differs by part (H100 SXM 80 %, MI300X 51 %) and sets how much of its peak a training step's GEMMs
    can reach (`matmul_share`)."""
    attention_softmax_speedup: Measure | None = Field(default=None)
    """How many times faster the part's special-function units run attention's softmax exponentials than the
    generation before it at the same tensor rate (NVIDIA Blackwell Ultra: 2, 'doubles the SFU throughput for key
    attention instructions'); None = 1. Training's attention cost beyond its matmuls is that much cheaper."""
    power_limits: list[PowerLimit] = []
    """Board power limits below the rated one at which the part has a published large-batch result (MLPerf
    MaxQ): what it sustains there. `at_power_limit` gives the part as run at one of them."""
    ecc: bool
    mig_max_instances: Measure | None = None
    compute_capability: TextMeasure | None = None
    bf16_support: bool
    fp8_support: bool
    fp4_support: bool
    tf32_support: bool = False
    """TF32 tensor math (NVIDIA Ampere and newer, AMD CDNA3, Trainium, Gaudi); `Precision.requires` names it."""
    int8_support: bool = True
    flash_attention_2: FlashAttention
    flash_attention_notes: str | None = None
    software_stack: SoftwareStack
    software_support: SoftwareSupport | None = None
    """The software-support horizon where a source states it (dropped by CUDA 13.0, ROCm's support matrix)."""
    max_per_node: int = Field(default=8, ge=1, le=256)
    trains: bool = True
    """Whether the vendor's software stack trains on it (AWS Inferentia2: Neuron trains on Trainium only)."""
    trains_note: str | None = None
    """Why it does not train, with the source, shown when a training plan rules it out."""
    purchasable: bool = True
    purchase_price_usd: Price | None = None
    sources: list[str] = Field(min_length=1)
    unverified: list[str] = []
    notes: str | None = None

    @model_validator(mode="after")
    def _sustained_share(self) -> Accelerator:
        m = self.sustained_compute_ratio
        if m is not None and not 0 < m.value <= 1:
            raise ValueError(f"{self.id}: sustained_compute_ratio must be in (0, 1], got {m.value}")
        for compute, share in self.sustained_compute_ratio_by_precision.items():
            if not 0 < share.value <= 1:
                raise ValueError(f"{self.id}: sustained_compute_ratio_by_precision.{compute} must be in (0, 1], "
                                 f"got {share.value}")
        for i, cap in enumerate(self.power_limits):
            if not 0 < cap.sustained_compute_ratio.value <= 1:
                raise ValueError(f"{self.id}: power_limits[{i}].sustained_compute_ratio must be in (0, 1], got "
                                 f"{cap.sustained_compute_ratio.value}")
            if self.tdp_w is not None and cap.limit_w >= self.tdp_w.value:
                raise ValueError(f"{self.id}: power_limits[{i}].limit_w {cap.limit_w} W is not below the rated "
                                 f"{self.tdp_w.value:g} W")
        return self

    def at_power_limit(self, watts: int) -> Accelerator:
        """The part run at a published board power limit (MLPerf MaxQ): its sustained share there, at every
        precision, and the limit as its board power. ValueError names the published limits when `watts` is not
        one of them: a cap without a published result is not guessed."""
        found = next((p for p in self.power_limits if p.limit_w == watts), None)
        if found is None:
            have = ", ".join(f"{p.limit_w} W" for p in self.power_limits)
            raise ValueError(f"{self.name}: no published result at a {watts} W power limit "
                             + (f"(published: {have})" if have else "(none is published for this part)"))
        board = Measure(value=float(watts), sources=found.sustained_compute_ratio.sources,
                        notes=f"power limit set to {watts} W (nvidia-smi -pl), below the rated "
                              f"{self.tdp_w.value:g} W" if self.tdp_w else None)
        return self.model_copy(update={"sustained_compute_ratio": found.sustained_compute_ratio,
                                       "sustained_compute_ratio_by_precision": {}, "tdp_w": board})

    def sustained_share(self, compute: str) -> float:
        """Share of the datasheet tensor rate sustained at `compute` under a full serving load (1 = all of it)."""
        m = self.sustained_compute_ratio_by_precision.get(compute, self.sustained_compute_ratio)
        return m.value if m is not None else 1.0

    @field_validator(*ACCELERATOR_RANGES)
    @classmethod
    def _plausible(cls, m: Measure | None, info: ValidationInfo) -> Measure | None:
        """A hardware figure inside its plausible range (an overlay's `memory_gb = -80` or 1e12 is refused)."""
        low, high, positive = ACCELERATOR_RANGES[str(info.field_name)]
        if m is not None and not ((m.value > low if positive else m.value >= low) and m.value <= high):
            side = f"over {_n(low)}" if positive else f"at least {_n(low)}"
            raise ValueError(f"value {_n(m.value)} is implausible: it must be {side} and at most {_n(high)}")
        return m

    def matmul_share(self, compute: str) -> float | None:
        """Share of the datasheet dense peak at `compute` a GEMM can reach on this part (`matmul_tflops` ÷ the peak
        it was measured against), None when unmeasured (fp4 falls back to fp8's share; the 16-bit formats and TF32
        to each other's, the same tensor cores: a T4 has no BF16, its FP16 share serves)."""
        fallback = {"fp4": ("fp4", "fp8"), "fp16": ("fp16", "bf16"), "bf16": ("bf16", "fp16"),
                    "tf32": ("tf32", "bf16", "fp16")}
        for name in fallback.get(compute, (compute,)):
            m = self.matmul_tflops.get(name)
            peak = self.dense_tflops(name)
            if m is not None and peak:
                return min(1.0, m.value / peak)
        return None

    def memory_bytes(self) -> float:
        """Bytes of device memory the driver gives software (what an engine's memory fraction is a share of).

        NVIDIA's and AMD's GPU memory sizes are binary: their HBM and GDDR stacks and chips come in 2^30-byte
        multiples, so an "80 GB" H100 holds 80 GiB = 85.9 × 10^9 bytes (nvidia-smi: 81,559 of 81,920 MiB), a
        "180 GB" B200 182,631 MiB, an A100 40GB 40,960 MiB, and ROCm and Azure list the MI300X in GiB (192).
        Data-centre GDDR parts run ECC inline, which takes 1/16 (T4: 15,360 of 16,384 MiB). Other parts' figures
        (unified memory, TPUs and Trainium already converted from GiB, CPUs) are taken as 10^9 bytes. Source: the
        reference data's correction 14 (observed nvidia-smi totals), `knowledge/data/accelerators.toml` notes."""
        gb = self.memory_gb.value
        kind = self.memory_type.lower()
        if self.vendor not in ("nvidia", "amd") or not ("hbm" in kind or "gddr" in kind):
            return gb * 1e9
        inline_ecc = "gddr" in kind and self.ecc and self.market in ("datacenter", "cloud-only")
        return gb * 2**30 * (15 / 16 if inline_ecc else 1.0)

    def dense_tflops(self, precision: str) -> float | None:
        """Dense tensor throughput for a compute precision ('bf16', 'fp16', 'fp8', 'fp4', 'int8', 'tf32', 'fp32')."""
        field = {"int8": "int8_tops"}.get(precision, f"{precision}_tflops")
        m = getattr(self, field, None)
        return m.value if isinstance(m, Measure) else None

    @property
    def cc(self) -> float | None:
        """CUDA compute capability as a number (8.9), or None off CUDA."""
        return float(self.compute_capability.value) if self.compute_capability else None


FabricKind = Literal["infiniband", "roce", "efa", "ethernet", "ici", "dcn", "none"]
"""The scale-out network between nodes: InfiniBand, RoCE (RDMA over Ethernet), AWS EFA, plain Ethernet (TCP,
GPUDirect-TCPX), TPU ICI (inside a slice), TPU multislice data-centre network (DCN), or none."""

PriceType = Literal["on-demand", "spot", "capacity-block", "on-demand-equivalent", "reserved-1y", "reserved-3y"]
"""reserved-1y / reserved-3y: the effective hourly rate of a 1- or 3-year reservation or committed-use discount (the
term is the kind's; the rate is paid for every hour of the term, used or not)."""
RESERVED_TERMS: dict[str, int] = {"reserved-1y": 1, "reserved-3y": 3}
ProviderKind = Literal["hyperscaler", "specialist", "marketplace", "user"]


class ReservationTerm(Strict):
    """A short-term reservation's terms as its provider publishes them (AWS Capacity Blocks: 1-day increments up to
    14 days, then 7-day increments up to 182 days; booked up to 8 weeks ahead; paid up front, not cancellable)."""

    min_days: int = Field(ge=1, le=3650)
    max_days: int = Field(ge=1, le=3650)
    step_days: int = Field(default=1, ge=1, le=365)
    """Whole steps a reservation is booked in beyond `daily_until_days`."""
    daily_until_days: int = Field(default=0, ge=0, le=3650)
    """Up to this many days a reservation is booked by the day."""
    sources: list[str] = Field(min_length=1)

    @model_validator(mode="after")
    def _ordered(self) -> ReservationTerm:
        if self.min_days > self.max_days:
            raise ValueError(f"min_days {self.min_days} > max_days {self.max_days}")
        return self

    def booked_days(self, days: float) -> int | None:
        """The days a reservation for `days` of use is booked and paid for (whole steps, at least `min_days`);
        None beyond `max_days` (one reservation cannot hold the run)."""
        need = max(float(self.min_days), days)
        whole = math.ceil(need - 1e-9)
        if whole <= self.daily_until_days:
            booked = whole
        else:
            booked = math.ceil((need - 1e-9) / self.step_days) * self.step_days
        return booked if booked <= self.max_days else None


class InstancePrice(Strict):
    """One list price of a cloud instance, with the date its source gives (None = the source is undated)."""

    type: PriceType
    usd_per_hour: float = Field(**bound("hourly_usd").field())
    usd_per_accelerator_hour: float | None = Field(default=None, **bound("hourly_usd").field())
    as_of: AsOf = None
    """'YYYY-MM-DD' or 'YYYY-MM' (free text may follow); None when the source gives no date — never a guessed date."""
    sources: list[str] = Field(min_length=1)
    tier: str | None = None
    derived: bool = False
    notes: str | None = None
    term: ReservationTerm | None = None
    """capacity-block (a short-term reserved cluster) only: how long it may be booked and in what steps."""

    @model_validator(mode="after")
    def _term(self) -> InstancePrice:
        if (self.type == "capacity-block") != (self.term is not None):
            raise ValueError("a capacity-block price (a short-term reservation) needs its 'term' (min_days, "
                             "max_days, step_days, sources), and only it has one")
        return self

    @property
    def as_of_date(self) -> date | None:
        """The date the price was read, or None for an undated price."""
        return parse_as_of(self.as_of) if self.as_of is not None else None

    @property
    def as_of_text(self) -> str:
        """`as_of` for display: the date text, or 'undated'."""
        return self.as_of or "undated"

    @property
    def term_years(self) -> int | None:
        """The commitment a reserved price binds its buyer to (1 or 3 years); None for on-demand, spot ..."""
        return RESERVED_TERMS.get(self.type)


class Instance(Strict):
    """A cloud instance type or per-GPU rental offer."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9.\-_]*$")
    provider: str = Field(pattern=r"^[a-z0-9][a-z0-9\-]*$")
    provider_name: str
    provider_kind: ProviderKind
    instance: str
    region: str | None = None
    accelerator: str
    accelerator_count: int = Field(ge=1, le=1024)
    accelerator_memory_gb_each: float | None = None
    interconnect: str | None = None
    memory_sources: list[str] = []
    fast_domain: int | None = Field(default=None, ge=1)
    """Accelerators that can form one fast-interconnect domain (NVLink/NVSwitch, Infinity Fabric, TPU ICI, NeuronLink)
    with this offer: 1 for a single-GPU VM, a per-GPU listing or PCIe-only cards; 8 for an HGX/OAM 8-GPU node; 72 for
    a GB200/GB300 NVL72 offer even when one instance is a 4-GPU tray; a TPU slice's ICI size. None = derive it
    (`domain`). A tensor-parallel group must fit inside it."""
    cluster: bool = False
    """The provider rents multi-node clusters of this instance on a high-speed network (InfiniBand, EFA, RoCE, TPU
    pod slices), so multi-node training or serving can be planned on it."""
    internode_gbs: float | None = Field(default=None, gt=0)
    """Network bandwidth per node in GB/s (bytes, e.g. 3,200 Gbps EFA = 400 GB/s), where published."""
    fabric: FabricKind | None = None
    """What joins the nodes of a cluster (EFA on AWS, InfiniBand at Azure ND / Lambda / Nebius / CoreWeave, RoCE at
    OCI, ICI inside a TPU slice); None = not published (a cluster of unknown kind)."""
    topology_sources: list[str] = []
    """Sources for accelerator_count, fast_domain, cluster and internode_gbs."""
    node_known: bool = True
    """False when the source prices one accelerator and says nothing of the node it comes in (GPUs per node,
    fabric): such a figure never headlines without saying so (issue 39)."""
    notes: str | None = None
    price: list[InstancePrice] = Field(min_length=1)

    @model_validator(mode="after")
    def _topology(self) -> Instance:
        if self.internode_gbs is not None and not self.cluster:
            raise ValueError("internode_gbs is set but cluster = false (a per-node network bandwidth only matters "
                             "for multi-node clusters)")
        if self.fabric not in (None, "none") and not self.cluster:
            raise ValueError(f"fabric = {self.fabric!r} but cluster = false (a cluster network needs cluster = true)")
        return self

    def domain(self, acc: Accelerator) -> int:
        """Accelerators one tensor-parallel group may span on this offer: `fast_domain`, else
        min(accelerator_count, the accelerator's interconnect_domain) (1 for parts without a fast interconnect)."""
        if self.fast_domain is not None:
            return self.fast_domain
        return min(self.accelerator_count, acc.interconnect_domain or 1)

    def current_price(self, kind: str) -> InstancePrice | None:
        """The newest price of a type ('on-demand', 'spot', 'reserved-1y', 'reserved-3y'), or None when none is
        published (undated = oldest)."""
        prices = [p for p in self.price if p.type == kind]
        return max(prices, key=lambda p: p.as_of_date or date.min) if prices else None


class FreeTier(Strict):
    """A free notebook GPU (Colab, Kaggle, SageMaker Studio Lab): no price, but session and quota limits.

    Why a separate kind: a student's best option is often "the free notebook", whose limits are hours, not dollars.
    """

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9.\-_]*$")
    name: str
    provider: str = Field(pattern=r"^[a-z0-9][a-z0-9\-]*$")
    provider_name: str
    accelerator: str
    accelerator_count: int = Field(default=1, ge=1)
    session_hours: float = Field(gt=0, le=168)
    """Longest continuous session (the runtime is reset after it)."""
    weekly_hours: float | None = Field(default=None, gt=0, le=168)
    """Accelerator quota per week; None when the provider publishes none (dynamic limits)."""
    daily_hours: float | None = Field(default=None, gt=0, le=24)
    """Accelerator quota per (rolling) 24 hours, where published."""
    idle_minutes: float | None = Field(default=None, gt=0, le=1440)
    """Minutes without interaction after which the session is disconnected (its model unloaded), where reported:
    a notebook is a session someone sits at, not a server that waits for requests."""
    guaranteed: bool
    """False when the provider says a GPU may not be available (Colab free tier)."""
    ram_gb: float | None = Field(default=None, gt=0)
    as_of: AsOf = None
    """Date the limits were published or read, from the source; None when the source is undated."""
    sources: list[str] = Field(min_length=1)
    notes: str | None = None

    @model_validator(mode="after")
    def _limits(self) -> FreeTier:
        if self.daily_hours is not None and self.session_hours > self.daily_hours:
            raise ValueError(f"session_hours {self.session_hours} exceeds daily_hours {self.daily_hours}")
        if self.weekly_hours is not None and self.session_hours > self.weekly_hours:
            raise ValueError(f"session_hours {self.session_hours} exceeds weekly_hours {self.weekly_hours}")
        return self

    def hours_per_week(self) -> float | None:
        """Accelerator hours a week at most: the weekly quota, else 7 x the daily quota, else None (unpublished)."""
        if self.weekly_hours is not None:
            return self.weekly_hours
        return 7 * self.daily_hours if self.daily_hours is not None else None


SystemKind = Literal["server", "workstation", "desktop", "rack", "appliance"]
"""server: a rack-mounted machine (HGX/OAM board or PCIe slots); workstation / desktop: a desk-side tower; rack: a
whole rack-scale system (GB200 NVL72); appliance: a machine sold whole with its accelerator (DGX Spark, Mac Studio)."""
CardClass = Literal["pcie-datacenter", "pcie-desk", "module"]
"""What a chassis takes: passively cooled data-centre PCIe cards (L4, L40S, H100 PCIe/NVL, RTX PRO Server),
actively cooled workstation and consumer cards, or SXM/OAM modules on the 8-GPU baseboard of an HGX-class server."""


class SystemPrice(Price):
    """A machine's price: without its accelerators (the host: CPUs, memory, storage, chassis, power supplies, NICs),
    or whole (`includes_accelerators = true`) where only that is published. A `Price` in every other respect (kind,
    date, sources, range), validated by the same rules."""

    includes_accelerators: bool = False
    includes: list[str] = []
    """What the price covers, as its sources say (a rack: its GPUs, CPUs, NVLink switch trays, NICs, cooling):
    shown beside the price so a buyer knows what else to buy (the scale-out network is priced by `Fabric`)."""


class Nics(Strict):
    """The scale-out network adapters a system ships with (one per GPU on an HGX server)."""

    count: int = Field(ge=1, le=128)
    gbps_each: float = Field(gt=0, le=3200)
    kind: FabricKind
    included: bool = True
    """The system's price includes these adapters (HGX servers ship with them; Gaudi's are on the chip); False =
    they are bought with the fabric (`Fabric.nic_usd`)."""
    sources: list[str] = Field(min_length=1)
    notes: str | None = None

    @property
    def gbs_per_node(self) -> float:
        """Bytes per second per direction of all adapters together (3,200 Gb/s → 400 GB/s)."""
        return self.count * self.gbps_each / 8.0


class System(Strict):
    """A purchasable machine: the unit one buys, with what it costs beyond its accelerators and what it draws.

    Either a fixed accelerator (an HGX/OAM board in its server, a rack, an appliance) or a chassis that `takes`
    cards of a class in `slots` (a PCIe server, a workstation, a desktop)."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9.\-_]*$")
    name: str
    examples: list[str] = []
    kind: SystemKind
    accelerator: str | None = None
    takes: list[CardClass] = []
    slots: int = Field(ge=1, le=256)
    fill: list[int] | None = None
    """Accelerator counts a chassis is bought with (default: powers of two up to `slots`, and `slots`); a fixed
    board always holds `slots`."""
    price: SystemPrice | None = None
    """None only for an appliance whose accelerator's own purchase price is the whole machine's (a Mac Studio)."""
    host_share: Price | None = None
    """With a whole-system price: the part of it that is not accelerators (CPUs, memory, storage, chassis, NICs),
    when a source or arithmetic on sources gives it; None = not published (what is beyond the accelerators is
    then unknown, and said so)."""
    host_power_w: Measure | None = None
    """What the machine itself draws at load besides its accelerators (CPUs, memory, fans, NICs, drives)."""
    system_power_w: Measure | None = None
    """The vendor's maximum for the whole machine (PSU rating basis), for reference and as a fallback."""
    nics: Nics | None = None
    scale_up_domain: int | None = Field(default=None, ge=1)
    """Accelerators sharing the fast interconnect when it differs from the accelerator's (GB200 NVL72: 72)."""
    rack_units: int | None = Field(default=None, ge=1, le=52)
    desk_side: bool = False
    """Stands beside a desk (workstation, desktop, small appliance): no rack, no data-centre power."""
    existing: bool = False
    """A machine the user already has (a card upgrade for their own PC): only the cards are bought; offered when
    the answers say it has free slots (current.pc_slots)."""
    sources: list[str] = Field(min_length=1)
    notes: str | None = None

    @model_validator(mode="after")
    def _what_it_holds(self) -> System:
        if (self.accelerator is None) == (not self.takes):
            raise ValueError("give either 'accelerator' (a fixed board, rack or appliance) or 'takes' (the card "
                             "classes a chassis holds), not both or neither")
        if self.fill is not None:
            if self.accelerator is not None:
                raise ValueError("'fill' applies to chassis ('takes'); a fixed board always holds 'slots'")
            bad = [n for n in self.fill if not 1 <= n <= self.slots]
            if bad:
                raise ValueError(f"fill {bad} outside 1 .. slots ({self.slots})")
        if self.existing and (self.price is not None or self.accelerator is not None):
            raise ValueError("an existing machine ('existing = true') has no price and takes cards ('takes')")
        if self.price is None and self.kind != "appliance" and not self.existing:
            raise ValueError("'price' is required (only an appliance may take its accelerator's price as its own, "
                             "and a machine you already have costs nothing: existing = true)")
        if self.price is not None and self.price.includes_accelerators and self.accelerator is None:
            raise ValueError("a whole-system price (includes_accelerators) needs a fixed 'accelerator'")
        if self.kind == "rack" and self.price is not None and not self.price.includes:
            raise ValueError("a rack's price must say what it includes (price.includes): GPUs, CPUs, switch trays, "
                             "NICs, cooling ...")
        return self

    def fills(self) -> tuple[int, ...]:
        """The accelerator counts one machine is bought with."""
        if self.accelerator is not None:
            return (self.slots,)
        if self.fill is not None:
            return tuple(sorted(set(self.fill)))
        powers = [n for n in (1, 2, 4, 8, 16) if n < self.slots]
        return (*powers, self.slots)


class Fabric(Strict):
    """A network one buys to join machines: switches of `switch_ports` ports at `gbps_per_port`, the links (optics
    and cables) between the machines' NICs and the switches and between switch tiers, and the NIC itself for a
    machine whose price leaves it out. `rules.fabric` sizes the switches and links a cluster needs (a fat tree of
    one, two or three tiers), so every priced figure here is a thing one buys, never a share of an average cluster.
    """

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9.\-_]*$")
    name: str
    kind: FabricKind
    gbps_per_port: float = Field(gt=0, le=3200)
    switch_ports: int = Field(ge=4, le=1024)
    """Ports of one switch at `gbps_per_port` (its radix: 64 x 400G for a Quantum-2 QM9700, 128 x 400G for a
    51.2 Tb/s Ethernet switch with its 800G cages split in two)."""
    switch_usd: Price
    """One switch with its power supplies and fans (optics are in `link_usd`)."""
    link_usd: Price
    """One link: the optics at both ends (or a copper/active cable) and the fibre, averaged over a cluster's links."""
    nic_usd: Price | None = None
    """One adapter at this speed, for machines whose price does not include their NICs (`Nics.included`)."""
    sources: list[str] = Field(min_length=1)
    notes: str | None = None


class MoE(Strict):
    """Mixture-of-experts feed-forward layers."""

    num_experts: int = Field(ge=2, le=MAX_EXPERTS)
    experts_per_token: int = Field(ge=1, le=MAX_EXPERTS)
    num_shared_experts: int = Field(default=0, ge=0, le=MAX_EXPERTS)
    expert_intermediate_size: int = Field(ge=1, le=MAX_HIDDEN)
    shared_expert_intermediate_size: int | None = Field(default=None, ge=1, le=MAX_HIDDEN)
    first_dense_layers: int = Field(default=0, ge=0, le=MAX_LAYERS)
    """Leading layers with a dense MLP of `intermediate_size` (DeepSeek's first_k_dense_replace)."""
    router_bias: bool = False
    interleave_moe_layer_step: int = Field(default=1, ge=1, le=MAX_LAYERS)
    """Every n-th layer (after the leading dense ones) is MoE, the others have a dense MLP of `intermediate_size`
    (Llama 4 Maverick: 2, layers 1, 3, 5, ...; HF: layer i is MoE when (i + 1) % step == 0). 1 = all MoE."""


class MLA(Strict):
    """Multi-head latent attention (DeepSeek-V2/V3): the KV cache holds a compressed latent per token."""

    q_lora_rank: int | None = Field(default=None, ge=1, le=MAX_HIDDEN)
    kv_lora_rank: int = Field(ge=1, le=MAX_HIDDEN)
    qk_nope_head_dim: int = Field(ge=0, le=MAX_HIDDEN)
    qk_rope_head_dim: int = Field(ge=0, le=MAX_HIDDEN)
    v_head_dim: int = Field(ge=1, le=MAX_HIDDEN)


class Indexer(Strict):
    """DeepSeek sparse attention's lightning indexer (DeepSeek-V3.2): per layer it scores every cached token with
    its own small FP8 key cache and lets MLA attend to the `index_topk` best."""

    index_n_heads: int = Field(ge=1, le=MAX_HEADS)
    index_head_dim: int = Field(ge=1, le=MAX_HIDDEN)
    index_topk: int = Field(ge=1, le=MAX_POSITIONS)


class Architecture(Strict):
    """Transformer shape fields, named as in Hugging Face config.json where one exists."""

    vocab_size: int = Field(ge=1, le=MAX_VOCAB)
    hidden_size: int = Field(ge=1, le=MAX_HIDDEN)
    intermediate_size: int = Field(ge=1, le=MAX_HIDDEN)
    num_hidden_layers: int = Field(ge=1, le=MAX_LAYERS)
    num_attention_heads: int = Field(ge=1, le=MAX_HEADS)
    num_key_value_heads: int | None = Field(default=None, ge=1, le=MAX_HEADS)
    head_dim: int | None = Field(default=None, ge=1, le=MAX_HIDDEN)
    tie_word_embeddings: bool = False
    mlp: Literal["gated", "plain"] = "gated"
    norm: Literal["rmsnorm", "layernorm"] = "rmsnorm"
    norms_per_layer: int = Field(default=2, ge=0, le=MAX_NORMS_PER_LAYER)
    final_norm: bool = True
    attention_bias: bool = False
    attention_output_bias: bool = False
    mlp_bias: bool = False
    parallel_attention: bool = False
    learned_position_embeddings: int = Field(default=0, ge=0, le=MAX_POSITIONS)
    """Rows of a learned absolute position table (GPT-2: 1024; OPT: max positions + 2 offset rows); 0 for RoPE/ALiBi."""
    alibi: bool = False
    """ALiBi attention biases instead of a position table or RoPE (BLOOM, MPT): no parameters, noted in reports."""
    embedding_norm: bool = False
    """A norm right after the token embedding (BLOOM's word_embeddings_layernorm)."""
    layernorm_bias: bool = True
    """LayerNorms carry a bias as well as a weight (False: MPT's bias-free LayerNorm); ignored for RMSNorm."""
    lm_head_bias: bool = False
    """The output projection has a bias of vocab_size (GPT-J)."""
    word_embed_proj_dim: int | None = Field(default=None, ge=1, le=MAX_HIDDEN)
    """Width of the token embedding when it differs from hidden_size (OPT-350m: 512), with bias-free
    project_in/project_out matrices between the two."""
    max_position_embeddings: int | None = Field(default=None, ge=1, le=MAX_POSITIONS)
    moe: MoE | None = None
    mla: MLA | None = None
    qk_norm: bool = False
    """RMSNorm weights (head_dim each) on queries and keys in every layer (Qwen3, Gemma 3, OLMo 2)."""
    attention_sinks: bool = False
    """One learned sink logit per attention head per layer (gpt-oss), a parameter the attention softmax adds."""
    sliding_window: int | None = Field(default=None, ge=1, le=MAX_POSITIONS)
    """Tokens a local (sliding-window or chunked) attention layer attends to, so at most what its KV cache holds."""
    layer_types: list[Literal["full_attention", "sliding_attention", "chunked_attention"]] | None = None
    """Per-layer attention kind, as in HF config.json (gpt-oss); overrides `sliding_window_pattern`."""
    sliding_window_pattern: int | None = Field(default=None, ge=1, le=MAX_LAYERS)
    """Every n-th layer is global, the others local (Gemma 3: 6, i.e. 5 local : 1 global; layer i is global when
    (i + 1) % n == 0). With `sliding_window` and neither field, every layer is local (Mistral 7B v0.1)."""
    indexer: Indexer | None = None
    """DeepSeek-V3.2's sparse-attention indexer (needs `mla` with a q_lora_rank)."""
    expert_weights_format: str | None = None
    """Precision id (precisions.toml) the publisher ships the routed experts' weight matrices in when it differs
    from the other tensors (gpt-oss: "mxfp4"; attention, router, embeddings, biases and norms stay bf16)."""

    @model_validator(mode="after")
    def _layer_types(self) -> Architecture:
        if self.layer_types is not None and len(self.layer_types) != self.num_hidden_layers:
            raise ValueError(f"layer_types lists {len(self.layer_types)} layers, num_hidden_layers is "
                             f"{self.num_hidden_layers}")
        if self.indexer is not None and (self.mla is None or not self.mla.q_lora_rank):
            raise ValueError("indexer (DeepSeek sparse attention) needs mla with q_lora_rank")
        if self.sliding_window is None and (self.sliding_window_pattern is not None or (
                self.layer_types is not None and any(t != "full_attention" for t in self.layer_types))):
            raise ValueError("local attention layers (layer_types / sliding_window_pattern) need sliding_window")
        return self

    def is_local_layer(self, layer: int) -> bool:
        """Whether layer `layer` (0-based) attends only to the last `sliding_window` tokens."""
        if self.sliding_window is None:
            return False
        if self.layer_types is not None:
            return self.layer_types[layer] != "full_attention"
        if self.sliding_window_pattern is not None:
            return (layer + 1) % self.sliding_window_pattern != 0
        return True

    @property
    def local_layers(self) -> int:
        """Number of layers whose KV cache is capped at `sliding_window` tokens (in closed form: no loop over the
        layers, whatever their number)."""
        if self.sliding_window is None:
            return 0
        if self.layer_types is not None:
            return sum(t != "full_attention" for t in self.layer_types)
        if self.sliding_window_pattern is not None:
            return self.num_hidden_layers - self.num_hidden_layers // self.sliding_window_pattern
        return self.num_hidden_layers

    @model_validator(mode="after")
    def _heads(self) -> Architecture:
        kv = self.num_key_value_heads or self.num_attention_heads
        if self.num_attention_heads % kv:
            raise ValueError(f"num_attention_heads {self.num_attention_heads} is not a multiple of "
                             f"num_key_value_heads {kv}")
        return self

    @property
    def kv_heads(self) -> int:
        return self.num_key_value_heads or self.num_attention_heads

    @property
    def head_size(self) -> int:
        return self.head_dim or self.hidden_size // self.num_attention_heads


class OfficialCount(Strict):
    """A parameter count the model's publisher states (exact where the publisher gives it)."""

    total: int = Field(ge=1, le=MAX_PARAMETERS)
    active: int | None = Field(default=None, ge=1, le=MAX_PARAMETERS)
    active_counts: Literal["matmul", "with-embedding"] = "with-embedding"
    """How the publisher counts `active`: "matmul" = the parameters a token multiplies through, the input
    embedding left out and the output projection in (OpenAI's gpt-oss card, this tool's `active`);
    "with-embedding" = the input embedding counted too (Mixtral's 12.9B)."""
    rounded_to: int = Field(default=1, ge=1, le=MAX_PARAMETERS)
    """Granularity of the published figure: 1 for an exact count, 10_000_000 for "8.03B"."""
    sources: list[str] = Field(min_length=1)
    notes: str | None = None


def served_format(arch: Architecture, published: str | None) -> str | None:
    """The precision a model is served in unless the user chooses: its experts' own format (gpt-oss: MXFP4), else
    the whole checkpoint's when it is stored below 16 bits (DeepSeek-V3: FP8); None = the 16-bit default."""
    return arch.expert_weights_format or published


class Model(Strict):
    """A known model architecture with its exact config and the source of that config."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9.\-_]*$")
    name: str
    family: str
    aliases: list[str] = []
    hf_repo: str | None = None
    architecture: Architecture
    official_parameters: OfficialCount | None = None
    config_sources: list[str] = Field(min_length=1)
    notes: str | None = None
    published_weights: str | None = None
    """Precision id (precisions.toml) the publisher's checkpoint stores its weights in when it is not 16-bit
    (DeepSeek-V3: "fp8"): serving defaults to it, as serving a Hugging Face checkpoint does."""

    @property
    def checkpoint_format(self) -> str | None:
        """What serving this model defaults to (`served_format`)."""
        return served_format(self.architecture, self.published_weights)


class TrainingRecipe(Strict):
    """A published recipe that trains with a low-precision format: its linear layers' GEMMs run at `compute`, a
    share of them kept in BF16, and what it costs in tokens to reach the higher-precision run's loss."""

    compute: Literal["fp8", "fp4"]
    high_precision_share: Measure
    """Share of the linear layers' GEMM FLOPs the recipe keeps in BF16 (the LM head is never quantized)."""
    token_overhead: Measure | None = None
    """Extra tokens, as a share, the recipe needs to reach the loss of its higher-precision baseline."""
    scaling: str
    """How the format is scaled (per tensor delayed or current, per block of 16 / 32 with their scale format)."""
    sources: list[str] = Field(min_length=1)
    notes: str | None = None

    @field_validator("high_precision_share", "token_overhead")
    @classmethod
    def _share(cls, m: Measure | None) -> Measure | None:
        if m is not None and not 0 <= m.value < 1:
            raise ValueError(f"must be a share in [0, 1), got {m.value:g}")
        return m


class Precision(Strict):
    """A numeric format for weights, KV cache or compute, with its effective storage cost."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_\-]*$")
    name: str
    aliases: list[str] = []
    bits_per_weight: float = Field(gt=0, le=32)
    """Effective bits per stored value including block scales/zero points (e.g. Q4_K_M ≈ 4.85)."""
    compute: Literal["fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4"]
    """The tensor-core rate the matrix multiplies run at (weight-only formats dequantize to fp16/bf16)."""
    uses: list[Literal["weights", "kv_cache", "compute", "training"]] = Field(min_length=1)
    requires: list[Literal["bf16_support", "fp8_support", "fp4_support", "int8_support", "tf32_support"]] = []
    min_compute_capability: float | None = None
    software: list[str] = []
    """Stacks with a working implementation (cuda, rocm, metal, xla, neuron, synapseai, cpu)."""
    library: str | None = None
    training_recipe: TrainingRecipe | None = None
    """The published recipe that trains in this format (FP8 with per-tensor scaling, NVFP4, MXFP4); None = a
    16/32-bit format, or one nobody trains in."""
    sources: list[str] = Field(min_length=1)
    notes: str | None = None

    @property
    def bytes_per_weight(self) -> float:
        return self.bits_per_weight / 8


class Assumption(Strict):
    """An efficiency or overhead factor the estimates depend on, with its source and error band."""

    id: str = Field(pattern=r"^[a-z0-9_]+$")
    title: str
    value: float
    unit: str
    low: float | None = None
    high: float | None = None
    sources: list[str] = Field(min_length=1)
    notes: str | None = None


class UsedPrice(Strict):
    """One observation of the used market: what a part sold for second-hand on a date, against its price new.

    The series (assumptions.toml `[[used_price]]`) is the evidence the resale curves (`resale_share_*`) are held to:
    each observation's age is counted from the part's launch (`Accelerator.release_year`), not from anyone's
    purchase, because a buyer pays for a part of that age whoever owned it before."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9.\-_]*$")
    accelerator: str
    as_of: str
    """When the used price was observed ('YYYY-MM' or 'YYYY-MM-DD')."""
    usd: float = Field(gt=0)
    """The observed used price (a median, or the middle of a range)."""
    low: float = Field(gt=0)
    high: float = Field(gt=0)
    new_usd: float = Field(gt=0)
    """The part's price new it is compared with (its launch list price or the street price it sold at new)."""
    sources: list[str] = Field(min_length=1)
    notes: str | None = None

    @model_validator(mode="after")
    def _ordered(self) -> UsedPrice:
        parse_as_of(self.as_of)
        if not self.low <= self.usd <= self.high:
            raise ValueError(f"need low <= usd <= high (got {self.low:g}, {self.usd:g}, {self.high:g})")
        return self

    @property
    def share(self) -> tuple[float, float, float]:
        """(low, middle, high) of the used price as a share of the price new."""
        return self.low / self.new_usd, self.usd / self.new_usd, self.high / self.new_usd


class Band(Strict):
    """A calibrated value with its pessimistic-to-optimistic band (`low` ≤ `value` ≤ `high`)."""

    value: float = Field(ge=0)
    low: float = Field(ge=0)
    high: float = Field(ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> Band:
        if not self.low <= self.value <= self.high:
            raise ValueError(f"need low <= value <= high (got {self.low:g}, {self.value:g}, {self.high:g})")
        return self


class ReserveTier(Strict):
    """One memory tier of an engine's default reserve: the devices below `below_mib` of memory get these sizes."""

    below_mib: float | None = Field(default=None, gt=0)
    """Devices with less memory than this (MiB, as the driver reports it) take this tier; none on the last."""
    prefill_tokens: int = Field(ge=1, le=1_000_000)
    """Tokens of one prefill chunk the engine reserves activations for (SGLang's chunked_prefill_size)."""
    graph_batch: int = Field(ge=0, le=100_000)
    """Largest batch captured as a CUDA graph below 4-way tensor parallelism (SGLang's cuda_graph_max_bs)."""
    graph_batch_wide: int = Field(ge=0, le=100_000)
    """The same from 4-way tensor parallelism up."""


class StaticMemory(Strict):
    """An engine that sizes its weights and KV cache to a share of the device and holds the rest back (SGLang's
    mem_fraction_static, 'the fraction of the memory used for static allocation (model weights and KV cache memory
    pool)'): its default reserve in MiB is base + prefill tokens × per token + graph batch × per sequence + GPUs of
    the replica × per GPU, with the prefill and graph sizes of the device's memory tier (server_args.py,
    _handle_gpu_memory_settings). Activations, CUDA graphs and metadata live inside the reserve."""

    base_mib: float = Field(ge=0)
    mib_per_prefill_token: float = Field(ge=0)
    mib_per_graph_sequence: float = Field(ge=0)
    mib_per_gpu: float = Field(ge=0)
    """Per GPU of the replica (tensor × pipeline degree): SGLang's 'adjustments for large parallel size'."""
    tiers: list[ReserveTier] = Field(min_length=1)

    @model_validator(mode="after")
    def _ordered(self) -> StaticMemory:
        bounds = [t.below_mib for t in self.tiers[:-1]]
        if None in bounds or bounds != sorted(b for b in bounds if b is not None) or self.tiers[-1].below_mib:
            raise ValueError("tiers must rise in below_mib, the last one without it")
        return self

    def tier(self, device_mib: float) -> ReserveTier:
        """The tier of a device with `device_mib` of memory."""
        return next(t for t in self.tiers if t.below_mib is None or device_mib < t.below_mib)

    def reserve_mib(self, device_mib: float, tp: int, pp: int) -> float:
        """The default reserve (MiB) on a device of `device_mib` in a replica of tp × pp GPUs."""
        tier = self.tier(device_mib)
        graph = tier.graph_batch_wide if tp >= 4 else tier.graph_batch
        return (self.base_mib + tier.prefill_tokens * self.mib_per_prefill_token
                + graph * self.mib_per_graph_sequence + tp * pp * self.mib_per_gpu)


class Engine(Strict):
    """A serving engine (llama.cpp, vLLM, ...): which software stacks it runs on."""

    id: EngineName
    name: str
    aliases: list[str] = []
    software: list[str] = Field(min_length=1)
    """Stacks it runs on (cuda, rocm, metal)."""
    memory_headroom: float | None = Field(default=None, ge=0, lt=0.5)
    """Share of the card's memory the engine leaves free (vLLM's gpu_memory_utilization 0.9 leaves 0.10; llama.cpp
    allocates its buffers up front and needs only a small margin). None: the `headroom_fraction` assumption."""
    runtime_overhead_gb: float | None = Field(default=None, ge=0, le=16)
    """Memory per GPU the engine itself holds besides weights, KV cache and activations (CUDA context, framework,
    workspaces). None: the `runtime_overhead_gb` assumption (a PyTorch-based server)."""
    activation_tokens: int | None = Field(default=None, ge=1, le=1_000_000)
    """Tokens of the largest forward pass the engine reserves activation memory for (llama.cpp's compute buffer:
    one physical batch, --ubatch-size 512). None: the `prefill_chunk_tokens` assumption (a chunked-prefill
    server's token budget)."""
    static_memory: StaticMemory | None = None
    """The engine's default reserve beside its weights and KV cache (SGLang's mem_fraction_static); None: it sizes
    them to what its activations, runtime and `memory_headroom` leave."""
    model_split: list[ModelSplit] = Field(default=["tensor", "pipeline"], min_length=1)
    """How the engine spreads one model over several GPUs: `tensor` (every layer's matrices split, an all-reduce
    per layer: vLLM, SGLang, TensorRT-LLM) and/or `pipeline` (whole layers per GPU, one sequence's token crossing
    them in turn: llama.cpp's default layer split). The planner searches only these."""
    sources: list[str] = Field(min_length=1)
    notes: str | None = None


class EngineProfile(Strict):
    """What one engine achieves on one accelerator family, calibrated on published measurements.

    decode step = weights ÷ (bandwidth × bandwidth_efficiency) + KV cache ÷ (bandwidth × kv_efficiency)
                  + layers × overhead_per_layer_us. The bands are the calibration residuals: every published row
    of this engine and family lies between the predictions at the pessimistic and optimistic ends.
    """

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9.\-]*@[a-z0-9*][a-z0-9\-*]*$")
    """`engine@family`, e.g. `llama.cpp@nvidia-ampere-hbm`."""
    engine: EngineName
    family: str
    """Accelerator family key (see gpuadvisor.rules.planning.serving.family_keys): vendor-architecture-memory
    (`nvidia-ada-gddr`), vendor-memory (`nvidia-hbm`), vendor (`amd`) or `any`."""
    bandwidth_efficiency: Band
    kv_efficiency: Band
    overhead_per_layer_us: Band
    """In the band, `low` is the optimistic end."""
    overhead_per_sequence_us: Band | None = None
    """Per sequence of the batch per decode step (host work: scheduling, sampling); `low` is the optimistic
    end."""
    overhead_per_sequence_layer_us: Band | None = None
    """Per sequence of the batch per layer per decode step, beyond `overhead_per_sequence_us` (the decode attention's
    fixed work per sequence, paid by every layer); `low` is the optimistic end."""
    compute_efficiency: Band | None = None
    gemm_ramp_us: Band | None = None
    """Fixed time of each weight GEMM kernel of a weight-bound (small-batch) step beyond its bytes at the streaming
    rate (µs; rules/sizing/speed.py `weight_gemm_kernels`); `low` is the optimistic end. Not fitted: measured by
    GEMM microbenchmarks, and set only on profiles fitted on compute-bound rows, whose per-layer overhead cannot
    hold it."""
    expert_bandwidth_efficiency: Band | None = None
    """Share of peak bandwidth the routed experts' grouped GEMMs read at, where an engine's MoE rows measure it apart
    from the dense GEMMs' `bandwidth_efficiency` (rules/sizing/speed.py `EngineEfficiency`)."""
    overhead_per_moe_layer_us: Band | None = None
    """Per MoE layer per pass, beyond `overhead_per_layer_us` (an engine's fused-MoE path on a vendor's parts that
    its dense rows do not show); `low` is the optimistic end."""
    rows: int = Field(default=0, ge=0)
    """Published measurements the values were fitted to (0 = carried over from a related family)."""
    sources: list[str] = Field(min_length=1)
    release: str = Field(min_length=1)
    """The engine releases the fitted rows measured (what the profile describes: engines change fast, and a figure
    says which software it assumed)."""
    released: str = Field(pattern=r"^\d{4}-\d{2}$")
    """The newest of those releases' dates, YYYY-MM."""
    notes: str | None = None


class Document(Strict):
    """One of the seed documents (or a user's policy document) that rules cite."""

    id: str
    file: str
    title: str
    notes: str | None = None
