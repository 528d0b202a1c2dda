"""On a GPU: the split-K kernel (v8-splitk) matches cuBLAS at awkward and small-M*N, large-K shapes, zeroes C
before every launch (timed launches stay correct), and records its split count in the launch facts."""

from __future__ import annotations

import pytest

from kernels.registry import get_kernel
from profiling.gpu.jobs import BenchSettings
from profiling.shape import Shape
from tests.gpu.jobs import run_by_kernel_and_shape

pytestmark = pytest.mark.gpu

SPLITK = get_kernel("v8-splitk")
SHAPES = [
    Shape(1, 1, 1),
    Shape(17, 17, 17),
    Shape(129, 129, 129),
    Shape(1000, 1000, 1000),
    Shape(127, 127, 8191),
    Shape(64, 64, 65536),
    Shape(1, 4096, 4096),
    Shape(4096, 1, 4096),
    Shape(333, 4096, 4096),
    Shape(4096, 4096, 333),  # one split: v8-async's work plus the zeroing
    # K not a multiple of the 16-deep slice nor of the split count; N odd (scalar adds) and N % 4 == 0 (RED.v4)
    Shape(127, 129, 8189),
    Shape(130, 252, 1001),
]


@pytest.fixture(scope="module")
def benched() -> tuple[dict, dict[Shape, dict]]:
    # op "bench" verifies once on a NaN-poisoned C, times, then checks the last timed launch again: a launcher
    # that zeroed C only once would double C on the second launch and fail that check.
    device, results = run_by_kernel_and_shape("bench", [SPLITK], SHAPES, BenchSettings(repeats=3, warmup=1))
    return device, {shape: r for (kernel, shape), r in results.items() if kernel == SPLITK.id}


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.label)
def test_split_k_matches_cublas_and_stays_correct_over_timed_launches(benched, shape) -> None:
    _device, results = benched
    assert len(results) == len(SHAPES)
    r = results[shape]
    assert r["status"] == "ok", f"{shape.label}: {r['error']}"
    assert r["rel_error"] <= r["tolerance"] and r["rel_error_after_timing"] <= r["tolerance"]


def test_launch_facts_record_the_splits(benched) -> None:
    device, results = benched
    sms = device.get("sm_count")
    for shape, r in results.items():
        # v8-splitk is tunable: where this GPU has a record, the result names the configuration it ran.
        ran = get_kernel(r["config"]) if r["config"] != SPLITK.entry else SPLITK
        grid = ran.launch_grid(shape.m, shape.n, shape.k, sms)
        assert r["launch"]["grid"] == list(grid) and r["launch"]["split_k"] == grid[2], shape.label
    # A few tiles: K is what fills the GPU (at least half the SMs get a block).
    one_tile = results[Shape(127, 127, 8191)]["launch"]["grid"]
    assert one_tile[2] > 1 and one_tile[0] * one_tile[1] * one_tile[2] >= sms // 2
    assert results[Shape(4096, 4096, 333)]["launch"]["split_k"] == 1
