"""On a GPU: sgemm-auto runs the configuration kernels/auto.py chooses for this GPU and shape (tuning record or
default), matches cuBLAS at small, odd and split-K shapes, stays correct over timed launches, and names its choice."""

from __future__ import annotations

import re

import pytest

from kernels import auto, tuning
from kernels.registry import get_kernel
from profiling.gpu.jobs import BenchSettings
from profiling.shape import Shape
from tests.gpu.jobs import run_by_kernel_and_shape

pytestmark = pytest.mark.gpu

AUTO = get_kernel("sgemm-auto")
SHAPES = [
    Shape(1, 1, 1),
    Shape(17, 17, 17),
    Shape(129, 129, 129),
    Shape(1000, 1000, 1000),
    Shape(127, 127, 8191),
    Shape(333, 4096, 4096),
    Shape(2048, 2048, 333),  # the 8-deep 256x128 tile on the H200 since its sweep in rounds (session 31)
]


@pytest.fixture(scope="module")
def benched() -> tuple[dict, dict[Shape, dict]]:
    # op "bench" verifies on a NaN-poisoned C, times, then checks the last timed launch again (a split-K choice must
    # zero C before every launch).
    device, results = run_by_kernel_and_shape("bench", [AUTO], SHAPES, BenchSettings(repeats=3, warmup=1))
    return device, {shape: r for (kernel, shape), r in results.items() if kernel == AUTO.id}


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.label)
def test_auto_matches_cublas_and_stays_correct_over_timed_launches(benched, shape) -> None:
    _device, results = benched
    r = results[shape]
    assert r["status"] == "ok", f"{shape.label}: {r['error']}"
    assert r["rel_error"] <= r["tolerance"] and r["rel_error_after_timing"] <= r["tolerance"]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.label)
def test_auto_runs_and_names_the_choice_for_this_gpu(benched, shape) -> None:
    device, results = benched
    # The worker names the NVRTC that built the kernels; a record measured by another one says so in the label.
    assert re.fullmatch(r"\d+\.\d+", device["nvrtc"])
    choice = auto.auto_choice(device["name"], shape.m, shape.n, shape.k, device.get("sm_count"), device["nvrtc"])
    r = results[shape]
    assert r["config"] == choice.label
    assert "(tuning record " in r["config"] or "(default, no tuning record for " in r["config"]
    config = tuning.config_by_id(choice.config_id)
    splits = tuning.config_split_count(config, shape.m, shape.n, shape.k, device.get("sm_count") or 132)
    assert r["launch"]["grid"][2] == splits and r["launch"]["block"][0] == config["params"]["THREADS"]
