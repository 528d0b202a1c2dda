"""On a GPU: deliberately wrong kernels, run through the real worker, are reported "wrong" and never "ok".

The kernels live in tests/gpu/wrong_kernels.cu (not in the catalog); tests/gpu/wrong_worker.py is the worker
child with them added to its kernel lookup, so they go through the same compile, NaN poison, launch,
verification and timing code as catalog kernels. A correct control kernel from the same file must pass, so a
broken harness cannot pass for a caught bug. Each wrong kernel breaks one check: the off-by-one and
skipped-tile kernels write every element with finite values (only the relative error sees them); the corner
and NaN kernels leave NaN behind (the NaN count must name how many).
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest

from profiling.gpu.jobs import BenchSettings, Job, Task
from profiling.gpu.worker import run_job
from profiling.shape import Shape

pytestmark = pytest.mark.gpu

WORKER = Path(__file__).resolve().parent / "wrong_worker.py"
_module_spec = importlib.util.spec_from_file_location("wrong_worker", WORKER)
wrong_worker = importlib.util.module_from_spec(_module_spec)
_module_spec.loader.exec_module(wrong_worker)

CONTROL = wrong_worker.CONTROL.id
WRONG = [spec.id for spec in wrong_worker.WRONG]
# K is never a multiple of the 16-wide tile except at 1024, M and N are not multiples of the block either.
SHAPES = [Shape(96, 80, 200), Shape(257, 130, 333), Shape(1024, 1024, 1024)]


def _command(job_file: Path) -> list[str]:
    return [sys.executable, str(WORKER), "--job", str(job_file)]


def _run(op: str, kernels: list[str], shapes: list[Shape], settings: BenchSettings) -> dict[tuple[str, Shape], dict]:
    tasks = [Task(kernel, s.m, s.n, s.k) for s in shapes for kernel in kernels]
    device, results = run_job(Job(op=op, tasks=tasks, settings=settings), task_timeout_s=120, command=_command)
    assert device is not None, "the worker did not start"
    assert len(results) == len(tasks)
    return {(r["kernel"], Shape(r["m"], r["n"], r["k"])): r for r in results}


@pytest.fixture(scope="module")
def verified() -> dict[tuple[str, Shape], dict]:
    return _run("verify", [CONTROL, *WRONG], SHAPES, BenchSettings())


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.label)
def test_control_kernel_passes(verified, shape: Shape) -> None:
    r = verified[(CONTROL, shape)]
    assert r["status"] == "ok", r["error"]
    assert 0 <= r["rel_error"] <= r["tolerance"]


@pytest.mark.parametrize("kernel", WRONG)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.label)
def test_wrong_kernel_is_reported_wrong(verified, kernel: str, shape: Shape) -> None:
    r = verified[(kernel, shape)]
    # "wrong" exactly: "failed" would mean the kernel never ran, which proves nothing about the verifier.
    assert r["status"] == "wrong", f"{kernel} at {shape.label}: {r['status']} {r['error']}"


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.label)
def test_finite_wrong_outputs_are_caught_by_the_relative_error(verified, shape: Shape) -> None:
    m, n, k = shape.m, shape.n, shape.k
    # Random +-1 inputs: dropping j of the K products of every dot leaves a relative error near sqrt(j / K)
    # (the dropped and kept parts are independent sums). Over >= 7,680 outputs the estimate is tight; the
    # factor 2 either way only guards against a wrong derivation, and is far above the 1e-4 tolerances.
    for kernel, dropped in (("test-off-by-one", 1), ("test-skip-last-k-tile", k - 16 * ((k - 1) // 16))):
        r = verified[(kernel, shape)]
        expected = math.sqrt(dropped / k)
        assert r["error"].startswith("relative error"), r["error"]
        assert 0.5 * expected < r["rel_error"] < 2 * expected, (kernel, r["rel_error"], expected)
        assert r["rel_error"] > 10 * r["tolerance"]
    assert m * n >= 7680


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.label)
def test_nan_outputs_are_counted(verified, shape: Shape) -> None:
    outputs = shape.m * shape.n
    corner = verified[("test-corner-unwritten", shape)]
    assert corner["error"] == f"64 of {outputs} outputs are NaN (not written or invalid)"
    nan = verified[("test-writes-nan", shape)]
    assert nan["error"] == f"1 of {outputs} outputs are NaN (not written or invalid)"


def test_wrong_kernels_stay_wrong_when_benchmarked() -> None:
    shape = Shape(257, 130, 333)
    results = _run("bench", [CONTROL, *WRONG], [shape], BenchSettings(repeats=5, warmup=1))
    control = results[(CONTROL, shape)]
    assert control["status"] == "ok" and control["time_ms"]["samples"] >= 3
    assert control["rel_error_after_timing"] <= control["tolerance"]
    for kernel in WRONG:
        assert results[(kernel, shape)]["status"] == "wrong", kernel
