"""Every shape a buyer can order (issue 28): TPU slices at the sizes Google sells, GPU instances at 1/2/4/8 GPUs,
reserved rates beside on-demand and spot, and a JAX serving case that plans the right v6e slice. Figures are the
knowledge base's, checked by hand against the catalog rows they were read from."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.rules.consult import Advisor
from gpuadvisor.rules.inputs.answers import parse_answers
from gpuadvisor.rules.planning.units import rental_units

GEMMA_JAX_GCP = {"workload": "inference", "model": {"name": "gemma-3-27b"}, "inference": {"concurrent_requests": 16},
                 "framework": {"name": "jax"}, "deployment": {"where": "cloud", "providers": ["gcp"]}}


@pytest.mark.parametrize(("family", "per_chip"), [("v6e", 2.70), ("v5e", 1.20)])
def test_tpu_slices_at_every_size_google_sells(catalog: Catalog, family: str, per_chip: float) -> None:
    # one-host slices of 1, 4 and 8 chips are shapes of their own (a v6e-4 is one VM of 4 chips on ICI) ...
    for chips in (1, 4, 8):
        inst = catalog.instances[f"gcp-tpu-{family}-{chips}"]
        assert inst.accelerator_count == chips
        od = inst.current_price("on-demand")
        assert od is not None and od.usd_per_hour == pytest.approx(chips * per_chip)
        assert inst.cluster == (chips == 8)
    # ... and the slices of 16 to 256 chips are 8-chip hosts joined on one ICI torus, at the same per-chip rate
    host = catalog.instances[f"gcp-tpu-{family}-8"]
    assert host.fast_domain == 256
    unit = next(u for u in rental_units(catalog, catalog.accelerators[f"google-tpu-{family}"])
                if u.id == f"inst:gcp-tpu-{family}-8")
    sizes = [n for _, n in unit.counts(256, joined=True)]
    assert {8, 16, 32, 64, 128, 256} <= set(sizes)
    assert unit.topology.link(256).cls == "scale-up"  # a 256-chip tensor-parallel group stays on ICI


def test_v5p_slices_count_tensorcores_in_their_name(catalog: Catalog) -> None:
    v5p = catalog.instances["gcp-tpu-v5p-8"]  # 'v5p-8' = 8 TensorCores = 4 chips at $4.20
    assert v5p.accelerator_count == 4 and v5p.fast_domain == 8960
    assert v5p.current_price("on-demand").usd_per_hour == pytest.approx(16.8)  # type: ignore[union-attr]
    assert v5p.internode_gbs == pytest.approx(4 * 50 / 8)  # 50 Gbps DCN per chip


def test_reserved_rates_are_price_kinds_beside_on_demand(catalog: Catalog) -> None:
    v6e = catalog.instances["gcp-tpu-v6e-4"]
    one, three = v6e.current_price("reserved-1y"), v6e.current_price("reserved-3y")
    assert one is not None and three is not None
    assert (one.usd_per_hour, three.usd_per_hour) == (pytest.approx(4 * 1.89), pytest.approx(4 * 1.22))
    assert (one.term_years, three.term_years) == (1, 3)
    # AWS: p5.48xlarge has only a 3-year term listed ($23.77728, no upfront), p4d both
    p5 = catalog.instances["aws-p5.48xlarge"]
    assert p5.current_price("reserved-1y") is None
    assert p5.current_price("reserved-3y").usd_per_hour == pytest.approx(23.77728)  # type: ignore[union-attr]
    p4d = catalog.instances["aws-p4d.24xlarge"]
    assert p4d.current_price("reserved-1y").usd_per_hour == pytest.approx(13.921094)  # type: ignore[union-attr]
    assert p4d.current_price("on-demand").term_years is None  # type: ignore[union-attr]


def test_gpu_instances_at_one_two_four_and_eight_gpus(catalog: Catalog) -> None:
    def counts(provider: str, acc: str) -> set[int]:
        return {i.accelerator_count for i in catalog.instances.values()
                if i.provider == provider and i.accelerator == acc}

    assert counts("gcp", "nvidia-l4") == {1, 2, 4, 8}  # g2-standard-8 / 24 / 48 / 96
    assert counts("lambda", "nvidia-h100-sxm5") == {1, 2, 4, 8}
    assert counts("lambda", "nvidia-b200") == {1, 2, 4, 8}
    assert counts("aws", "nvidia-l4") == {1, 4, 8}  # g6.xlarge / 12xlarge / 48xlarge
    g2 = catalog.instances["gcp-g2-standard-48"]
    # host $1.7615 + four L4 $2.24016 (us-central1 catalog rows)
    assert g2.current_price("on-demand").usd_per_hour == pytest.approx(1.7615 + 2.24016)  # type: ignore[union-attr]
    units = {u.id for u in rental_units(catalog, catalog.accelerators["nvidia-l4"])}
    assert "inst:gcp-g2-standard-48" in units


def test_a_jax_team_serving_gemma_3_27b_on_gcp_plans_a_v6e_4_slice(catalog: Catalog) -> None:
    # 27B in BF16 = 54 GB of weights: one v6e chip (32 GB) cannot hold it, a v6e-4 slice holds it at TP 4 with
    # about 18 GB a chip; before issue 28 the only v6e shape was an 8-chip host planned at TP 2 and 90 % memory.
    advisor = Advisor(catalog, include_user_packs=False)
    result: dict[str, Any] = json.loads(advisor.consult(parse_answers(GEMMA_JAX_GCP)).model_dump_json())
    options = result["recommendations"] + result["runners_up"]
    v6e = [o for o in options if o["accelerator"]["id"] == "google-tpu-v6e"]
    assert v6e, "no TPU v6e option"
    four = next(o for o in v6e if o["instance"]["id"] == "gcp-tpu-v6e-4")
    assert four["count"] == 4 and four["tensor_parallel"] == 4 and four["accelerators_paid"] == 4
    assert four["memory_gb_per_gpu"] < 0.85 * 32
    # every TPU option is a whole slice, never a TP group larger than its ICI domain
    for o in options:
        inst = catalog.instances.get((o.get("instance") or {}).get("id", ""))
        if inst is not None and inst.accelerator.startswith("google-tpu"):
            assert o["tensor_parallel"] <= (inst.fast_domain or 1), o["title"]
