"""The one table of plausible ranges for every number gpuadvisor takes in: answers files and their flags, `estimate`'s
flags, knowledge files and overlays, a model's config.json, quotes, and saved JSON reports.

Why one table: a quantity entered by two doors (`--context` and `precision.context_tokens`, `kb quote add --usd` and a
quote in quotes.toml) must be refused at the same value with the same words, and a bound far below what makes the
arithmetic overflow keeps every later step finite (an overlay's purchase price of 1e30 used to end in
`decimal.InvalidOperation`, `--mfu 1e-300` in an overflow). Each bound is far outside every real value (late 2025:
126 layers, hidden 16,384, a vocabulary of 262,208, a 10M-token context, a $3.5M rack) and far inside what Python's
floats and the printing of figures can carry.

`Bound.field()` gives a pydantic `Field`'s `ge`/`gt`/`le`; `Bound.check()` refuses a value with its name and range.

Booleans are never numbers (`memory_gb = true` is not 1 GB), whichever door a value comes in by: knowledge files,
overlays and quotes are validated in pydantic's strict mode (`schema.Strict`), answers files and saved JSON reports
by `booleans_as_numbers` below (their models are lax on purpose: `8` for a float, a list for a tuple), a model's
config.json by `hf_config`'s own checks (it has no model).
"""

from __future__ import annotations

import math
import types
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypedDict, Union, get_args, get_origin

from pydantic import BaseModel

MAX_LAYERS = 10_000
MAX_HIDDEN = 1_048_576  # hidden size, FFN widths, head dims, LoRA ranks of MLA
MAX_VOCAB = 16_777_216
MAX_HEADS = 65_536
MAX_EXPERTS = 65_536
MAX_POSITIONS = 2**31  # context lengths, sliding windows, learned position tables
MAX_NORMS_PER_LAYER = 16
MAX_PARAMETERS = 10**15  # a published parameter count (the largest today is about 1.0e12)
MAX_MEASURE = 1e15
"""Largest magnitude of any sourced figure (TFLOPS, GB, GB/s, W, dollars): finite, far above any real one."""
MAX_REPORT_NUMBER = 1e30
"""Largest magnitude of a number in a saved JSON report: its figures include FLOPs of a training run (6·N·D, about
1e25 for a frontier model), so the bound is above those and far below where float arithmetic overflows."""


class FieldBounds(TypedDict, total=False):
    ge: float
    gt: float
    le: float


@dataclass(frozen=True)
class Bound:
    """A closed range, or half-open at `low` (`low_open`: the value must be over it)."""

    low: float
    high: float
    low_open: bool = False

    def field(self) -> FieldBounds:
        """The range as pydantic `Field` arguments."""
        return FieldBounds(gt=self.low, le=self.high) if self.low_open else FieldBounds(ge=self.low, le=self.high)

    def scaled(self, factor: float) -> Bound:
        """The same range in another unit (training tokens → billions of tokens)."""
        return Bound(self.low * factor, self.high * factor, self.low_open)

    def holds(self, value: float) -> bool:
        return math.isfinite(value) and (value > self.low if self.low_open else value >= self.low) \
            and value <= self.high

    def describe(self) -> str:
        """'over 0 and at most 1,000,000' (for a message)."""
        return f"{'over' if self.low_open else 'at least'} {_n(self.low)} and at most {_n(self.high)}"

    def check(self, value: float, name: str) -> float:
        """`value` if it holds, else ValueError naming `name` and the range."""
        if not self.holds(value):
            raise ValueError(f"{name} must be {self.describe()} (got {_n(value)})")
        return value


def _n(x: float) -> str:
    if not math.isfinite(x):
        return str(x)
    return f"{x:,.0f}" if float(x).is_integer() and abs(x) < 1e18 else f"{x:g}"


BOUNDS: dict[str, Bound] = {
    # the workload (answers, their flags, `estimate`'s flags)
    "context_tokens": Bound(1, 10_000_000),
    "batch": Bound(1, 1_000_000),
    "request_tokens": Bound(1, 10_000_000),
    "requests_per_minute": Bound(0.001, 10_000_000),
    "gpus": Bound(1, 1_000_000),
    "parallel_degree": Bound(1, MAX_HEADS),
    "pipeline_stages": Bound(1, MAX_LAYERS),
    "lora_rank": Bound(1, 4096),
    "training_tokens": Bound(1_000, 1e15),
    "global_batch": Bound(1, 100_000_000),  # sequences per optimizer step (Llama 3 405B: 2,048 of 8k at its end)
    "global_batch_tokens": Bound(0, 1e12, low_open=True),  # tokens per step (the largest published: 16M-60M)
    "parameters": Bound(1, MAX_PARAMETERS),
    "utilization": Bound(0.01, 1),
    "mfu": Bound(0.01, 1),  # published runs: 0.2 to 0.6; below 1 % is a typo (1e-300 made a run's hours overflow)
    "budget_usd": Bound(0, 1e12, low_open=True),
    # prices (knowledge files, overlays, quotes, refreshed catalogs)
    "purchase_usd": Bound(0.01, 1e9),  # a part or a machine bought (a GB200 NVL72 rack: about $3.5M), a quote
    "hourly_usd": Bound(0, 100_000, low_open=True),  # the dearest rack rents for a few hundred dollars an hour
    "power_limit_w": Bound(50, 3000),
    "memory_gb": Bound(0, 100_000, low_open=True),
    "measure": Bound(-MAX_MEASURE, MAX_MEASURE),
    "report_number": Bound(-MAX_REPORT_NUMBER, MAX_REPORT_NUMBER),
}


def bound(name: str) -> Bound:
    """The range of quantity `name` (a KeyError for a name not in the table is a bug, not an input error)."""
    return BOUNDS[name]


def takes_bool(annotation: Any) -> bool:
    """Whether a field of this type may hold true/false (bool, Any, a Literal of booleans, a union with one)."""
    if annotation is bool or annotation is Any or annotation is object:
        return True
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return any(isinstance(a, bool) for a in args)
    if origin is Annotated:
        return takes_bool(args[0])
    if origin is Union or origin is types.UnionType:
        return any(takes_bool(a) for a in args)
    return False


def booleans_as_numbers(annotation: Any, value: Any, path: str = "", *, models: bool = True) -> Iterator[str]:
    """The paths in `value` (data to be validated as `annotation`: a pydantic model, a container of them, a scalar
    type) that hold true/false where the type takes no boolean: pydantic's lax mode would read `true` as 1. The walk
    follows the data, so it is as deep as the (already bounded) document; `models=False` stops at nested models (a
    model validator that runs this on its own fields: the nested model checks its own)."""
    if isinstance(value, bool):
        if not takes_bool(annotation):
            yield path
        return
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        yield from booleans_as_numbers(args[0], value, path, models=models)
    elif origin is Union or origin is types.UnionType:
        if not takes_bool(annotation):  # a boolean inside a value fits none of the members that take none
            found = dict.fromkeys(p for a in args for p in booleans_as_numbers(a, value, path, models=models))
            yield from found
    elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if isinstance(value, Mapping) and models:
            for name, item in value.items():
                info = annotation.model_fields.get(name) if isinstance(name, str) else None
                if info is not None:
                    yield from booleans_as_numbers(info.annotation, item, f"{path}.{name}" if path else name)
    elif isinstance(value, Mapping) and origin in (dict, Mapping) and len(args) == 2:
        for key, item in value.items():
            yield from booleans_as_numbers(args[1], item, f"{path}.{key}" if path else str(key), models=models)
    elif isinstance(value, list) and origin in (list, tuple, set, frozenset, Sequence) and args:
        for i, item in enumerate(value):
            element = args[0] if origin is not tuple or args[-1] is Ellipsis else (args[i] if i < len(args) else Any)
            yield from booleans_as_numbers(element, item, f"{path}.{i}" if path else str(i), models=models)
