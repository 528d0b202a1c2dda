"""On a GPU: the Hopper kernel (wgmma-tma) matches float32 arithmetic on its half inputs at awkward sizes (one
16x16 tile, K of one wgmma step, K not a multiple of the 64-deep slice, M or N of one 16-row tile beside 4096,
tiles hanging over both edges), and any other GPU than compute capability 9.0 refuses it."""

from __future__ import annotations

import pytest

from kernels.registry import get_kernel
from profiling.gpu.jobs import BenchSettings, Job, build_tasks
from profiling.gpu.worker import run_job
from profiling.shape import Shape

pytestmark = pytest.mark.gpu

SPEC = get_kernel("wgmma-tma")
SHAPES = [
    Shape(16, 16, 16),
    Shape(128, 128, 16),
    Shape(128, 256, 64),
    Shape(1008, 1008, 1008),  # K = 15.75 slices, M and N cut the last tiles
    Shape(4096, 16, 4096),
    Shape(16, 4096, 4096),
    Shape(48, 80, 1040),
    Shape(272, 400, 96),
    Shape(4096, 4096, 4096),
]
REFUSED = [Shape(1, 1, 1), Shape(17, 129, 33), Shape(1000, 1000, 1000)]


@pytest.fixture(scope="module")
def verified() -> tuple[dict, dict[Shape, dict]]:
    job = Job(op="verify", tasks=build_tasks([SPEC], SHAPES + REFUSED), settings=BenchSettings())
    device, results = run_job(job, task_timeout_s=120)
    assert device is not None
    return device, {Shape(r["m"], r["n"], r["k"]): r for r in results if r["kernel"] == SPEC.id}


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.label)
def test_matches_float32_of_the_same_half_inputs(verified, shape: Shape) -> None:
    device, rows = verified
    r = rows[shape]
    if device["cc"] != "9.0":
        assert r["status"] == "refused" and "sm_90a" in r["error"], r
        return
    assert r["status"] == "ok", f"wgmma-tma at {shape.label}: {r['error']}"
    assert 0 <= r["rel_error"] <= r["tolerance"]
    assert r["compile"]["arch"] == "sm_90a" and r["compile"]["local_bytes"] == 0


@pytest.mark.parametrize("shape", REFUSED, ids=lambda s: s.label)
def test_sizes_off_the_16_grid_are_refused_with_a_message(verified, shape: Shape) -> None:
    r = verified[1][shape]
    assert r["status"] == "refused" and "multiples of 16" in r["error"]
