"""On a GPU (compute capability 9.0 or newer): v9-clusterk, each tile configuration and cluster size, matches cuBLAS
at awkward sizes (1, 17, 129, non-multiples of every tile, K not a multiple of the slice, K so short that some of a
cluster's blocks have an empty K range and add zeros) and at the narrow, deep-K shapes it is for; it is one launch
whose grid's z is its cluster size; and it writes the same bits on every run (no atomics: each C element is summed
once, in the cluster's rank order). The bitwise check runs the kernels in a child process (as the worker does), so
that this process never holds a CUDA context."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kernels.registry import get_kernel
from kernels.tuning import V9_CLUSTERK_TUNING_CONFIGS
from profiling.gpu.jobs import BenchSettings
from profiling.shape import Shape
from tests.gpu.jobs import run_by_kernel_and_shape

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
SPECS = [get_kernel(c["id"]) for c in V9_CLUSTERK_TUNING_CONFIGS]
SHAPES = [
    Shape(1, 1, 1),  # one K slice: every block but rank 0 of the cluster has an empty range
    Shape(17, 17, 17),  # two slices, the second partial: 2 to 6 empty ranges
    Shape(129, 129, 129),  # 9 slices over 8 splits: 5 of 2, 1, then two empty; edge tiles in both directions
    Shape(200, 300, 40),  # 3 slices: empty ranges with several tiles, N % 4 == 0 (float4 stores) and edge tiles
    Shape(4096, 1, 33),  # N = 1: scalar stores, one column of tiles
    Shape(1, 4096, 4096),
    Shape(127, 127, 8191),  # 8191 = 511 slices of 16 + 15: the last range ends inside a slice
    Shape(130, 252, 1001),
    Shape(1024, 127, 4096),  # the narrow, deep-K shapes sgemm-auto was slowest at
    Shape(333, 333, 4096),
    Shape(4096, 333, 8191),
]


@pytest.fixture(scope="module")
def benched() -> tuple[dict, dict[tuple[str, Shape], dict]]:
    device, results = run_by_kernel_and_shape("bench", SPECS, SHAPES, BenchSettings(repeats=2, warmup=1))
    if problem := get_kernel("v9-clusterk").device_problem(str(device.get("cc", ""))):
        pytest.skip(problem)
    return device, results


@pytest.mark.parametrize("config_id", [s.id for s in SPECS])
def test_cluster_split_k_matches_cublas_and_stays_correct_over_timed_launches(benched, config_id: str) -> None:
    _device, results = benched
    mine = {shape: r for (kernel, shape), r in results.items() if kernel == config_id}
    assert set(mine) == set(SHAPES)
    for shape, r in mine.items():
        assert r["status"] == "ok", f"{config_id} at {shape.label}: {r['error']}"
        assert r["rel_error"] <= r["tolerance"] and r["rel_error_after_timing"] <= r["tolerance"], shape.label
        # The same output after the timed launches as at the first: the error is the same number.
        assert r["rel_error_after_timing"] == r["rel_error"], shape.label


def test_one_launch_with_the_cluster_size_on_z(benched) -> None:
    device, results = benched
    sms = device.get("sm_count")
    for (kernel, shape), r in results.items():
        if kernel not in {s.id for s in SPECS}:
            continue  # cuBLAS, run first at each shape
        spec = get_kernel(kernel)
        splits = spec.params["SPLITS"]
        grid = spec.launch_grid(shape.m, shape.n, shape.k, sms)
        assert grid[2] == splits and r["launch"]["grid"] == list(grid), (kernel, shape.label)
        assert r["launch"]["split_k"] == splits and r["launch"]["cluster"] == [1, 1, splits]
        assert "launches" not in r["launch"]  # nothing runs before it
        assert r["launch"]["max_active_blocks_per_sm"] >= 1, (kernel, r["launch"])


# Runs every configuration three times at each shape on one NaN-poisoned output and reports whether all runs gave
# the same bits (NaN compares unequal, so an element left unwritten fails too).
_BITWISE = """
import json, sys
from profiling.gpu.fp32_cupy import cupy
from kernels.registry import get_kernel
from profiling.gpu.compile import compile_kernel
from profiling.gpu.runner import Problem
from profiling.shape import Shape

config_ids, shapes = json.loads(sys.argv[1]), json.loads(sys.argv[2])
sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
out = {}
for m, n, k in shapes:
    problem = Problem("sgemm", Shape(m, n, k), seed=7)
    for config_id in config_ids:
        spec = get_kernel(config_id)
        launch = problem.launcher(compile_kernel(spec), spec, sms)
        runs = []
        for _ in range(3):
            problem.poison()
            launch()
            cupy.cuda.Device().synchronize()
            runs.append(problem.out.copy())
        same = all(bool(cupy.array_equal(runs[0], r)) for r in runs[1:])
        out[f"{config_id} {m}x{n}x{k}"] = {"same": same, "error": problem.check(False, 1.0).rel_error}
print(json.dumps(out))
"""
BITWISE_SHAPES = [(129, 129, 129), (127, 127, 8191), (1024, 127, 4096), (200, 300, 40)]


def test_every_run_writes_the_same_bits(benched) -> None:
    ids = [s.id for s in SPECS]
    done = subprocess.run(
        [sys.executable, "-c", _BITWISE, json.dumps(ids), json.dumps(BITWISE_SHAPES)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(found) == len(ids) * len(BITWISE_SHAPES)
    for key, r in found.items():
        assert r["same"], f"{key}: the runs differ"
        assert r["error"] < 1e-4, f"{key}: error {r['error']}"
