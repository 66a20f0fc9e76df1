"""The data-parallel synchronisation term of training time (speed.sync_slowdown), checked by hand."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from gpuadvisor.rules.sizing.factors import Factors
from gpuadvisor.rules.sizing.speed import (
    TrainingShape,
    global_batch_tokens,
    scaled_mfu,
    sync_slowdown,
    training_time,
)

F = Factors(training_comm_overlap=0.1, training_grad_bytes_per_param=6.0, training_network_gbs=400.0)
SHAPE = TrainingShape(hidden=4096, layers=32, seq=512, batch_tokens=16e6)


def test_sync_slowdown_hand_calculation() -> None:
    # compute = 6 × 8e9 × (16e6 / 16384) / (1000e12 × 0.4) = 0.1171875 s; sync = 6 × 8e9 / 400e9 = 0.12 s
    # step = 0.1171875 + (0.12 − 0.1 × 0.1171875) = 0.22546875 s → 1.924×
    assert sync_slowdown(8e9, 16384, 1000.0, SHAPE, 0.4, F) == pytest.approx(0.22546875 / 0.1171875)
    # 4× fewer GPUs: 0.46875 s of compute, 0.046875 s of it overlapped → 1 + 0.073125 / 0.46875
    assert sync_slowdown(8e9, 4096, 1000.0, SHAPE, 0.4, F) == pytest.approx(1 + 0.073125 / 0.46875)
    # the shape's own network (e.g. an instance's figure) replaces the assumption: 100 GB/s → sync 0.48 s
    slow_net = replace(SHAPE, network_gbs=100.0)
    assert sync_slowdown(8e9, 4096, 1000.0, slow_net, 0.4, F) == pytest.approx(1 + (0.48 - 0.046875) / 0.46875)


def test_model_parallel_beyond_a_node_and_overlap_shrink_the_exposed_sync() -> None:
    # tensor parallelism inside the node: the node still holds one whole copy → same as pure data parallelism
    tp8 = replace(SHAPE, model_parallel=8)
    assert sync_slowdown(8e9, 16384, 1000.0, tp8, 0.4, F) == sync_slowdown(8e9, 16384, 1000.0, SHAPE, 0.4, F)
    # TP 8 × PP 4 = 32: a node holds a quarter of the model, sync 0.03 s, exposed 0.03 − 0.01171875
    split = replace(SHAPE, model_parallel=32)
    assert sync_slowdown(8e9, 16384, 1000.0, split, 0.4, F) == pytest.approx(1 + 0.01828125 / 0.1171875)
    # full overlap: step = max(compute, sync) = 0.12 s
    full = replace(F, training_comm_overlap=1.0)
    assert sync_slowdown(8e9, 16384, 1000.0, SHAPE, 0.4, full) == pytest.approx(0.12 / 0.1171875)
    assert sync_slowdown(8e9, 4096, 1000.0, SHAPE, 0.4, full) == 1.0


def test_each_replica_processes_at_least_one_sequence() -> None:
    """16,384 replicas of 8,192-token sequences make a 134M-token batch, whatever the 16M asked for:
    compute = 6 × 8e9 × 8192 / 4e14 = 0.98304 s, sync 0.12 s, exposed 0.12 − 0.098304 = 0.021696 s."""
    long = replace(SHAPE, seq=8192)
    assert sync_slowdown(8e9, 16384, 1000.0, long, 0.4, F) == pytest.approx(1 + 0.021696 / 0.98304)
    # with TP 8 the 2,048 replicas need 16,777,216 tokens: compute 6 × 8e9 × 1024 / 4e14 = 0.12288 s
    tp8 = replace(long, model_parallel=8)
    assert sync_slowdown(8e9, 16384, 1000.0, tp8, 0.4, F) == pytest.approx(1 + (0.12 - 0.012288) / 0.12288)


def test_no_sync_term_within_a_node_or_for_lora() -> None:
    assert sync_slowdown(8e9, 8, 1000.0, SHAPE, 0.4, F) == 1.0
    assert sync_slowdown(8e9, 16384, 1000.0, SHAPE, 0.4, F, method="lora") == 1.0


def test_global_batch_grows_from_4m_to_16m() -> None:
    assert global_batch_tokens(7e9, F) == 4194304
    assert global_batch_tokens(405e9, F) == pytest.approx(16777216)
    assert global_batch_tokens(2e12, F) == pytest.approx(16777216)
    assert global_batch_tokens(60e9, F) == pytest.approx(4194304 * 2 ** (math.log(4) / math.log(13.5)))


def test_training_time_divides_the_compute_mfu_by_the_slowdown() -> None:
    tt = training_time(8e9, 1e12, gpus=16384, peak_tflops=1000.0, factors=F, shape=SHAPE)
    compute_mfu = scaled_mfu(8e9, 16384, SHAPE, F)
    assert tt.mfu == pytest.approx(compute_mfu / sync_slowdown(8e9, 16384, 1000.0, SHAPE, compute_mfu, F))
    assert tt.mfu < compute_mfu
    assert tt.gpu_hours == pytest.approx(6 * 8e9 * 1e12 / (1000e12 * tt.mfu) / 3600)
    # the user's MFU is used as given: no synchronisation term on top
    assert training_time(8e9, 1e12, gpus=16384, peak_tflops=1000.0, factors=F, shape=SHAPE, mfu=0.3).mfu == 0.3


def test_faster_chip_loses_more_mfu_at_the_same_cluster() -> None:
    """The same run on a chip with 3× the peak has 3× less compute per step to hide the same sync behind."""
    slow = training_time(8e9, 1e12, gpus=4096, peak_tflops=312.0, factors=F, shape=SHAPE).mfu
    fast = training_time(8e9, 1e12, gpus=4096, peak_tflops=936.0, factors=F, shape=SHAPE).mfu
    assert fast < slow


def test_plain_ethernet_reaches_less_of_its_line_rate_as_nodes_are_added() -> None:
    from gpuadvisor.rules.sizing.speed import network_efficiency

    f = Factors(tcp_fabric_efficiency=0.4, tcp_fabric_loss_per_doubling=0.1)
    assert network_efficiency(False, 64, f) == 1.0  # RDMA (InfiniBand, RoCE, EFA, ICI): the line rate
    assert network_efficiency(True, 1, f) == 1.0  # one machine: no network in the step
    assert network_efficiency(True, 2, f) == pytest.approx(0.4 / 1.1)  # 0.364
    assert network_efficiency(True, 16, f) == pytest.approx(0.4 / 1.4)  # 4 doublings: 0.286
    # 128 GPUs on 16 nodes of 100 Gb/s (12.5 GB/s): compute = 6 × 8e9 × 16e6 ÷ 128 ÷ 4e14 = 15 s a step; the
    # gradients (6 B × 8e9 = 48e9 B per node) cross 12.5 × 0.4/1.4 = 3.571 GB/s in 13.44 s, exposed 13.44 − 1.5
    # → 1.796×; over RDMA at the line rate 3.84 s, exposed 2.34 s → 1.156×
    shape = replace(SHAPE, network_gbs=12.5, network_efficiency=network_efficiency(True, 16, f), gpus_per_node=8)
    rdma = replace(shape, network_efficiency=1.0)
    assert sync_slowdown(8e9, 128, 1000.0, shape, 0.4, F) == pytest.approx(1 + (48e9 / (12.5e9 * 0.4 / 1.4) - 1.5)
                                                                          / 15)
    assert sync_slowdown(8e9, 128, 1000.0, rdma, 0.4, F) == pytest.approx(1 + (3.84 - 1.5) / 15)
