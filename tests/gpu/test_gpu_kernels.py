"""On a GPU: every catalog kernel matches cuBLAS at awkward sizes, and faulting or hanging kernels are contained."""

from __future__ import annotations

import pytest

from kernels.catalog import CATALOG
from profiling.gpu.jobs import Job, build_tasks
from profiling.gpu.verify import fp16_output_bound
from profiling.gpu.worker import run_job, run_selftest
from profiling.shape import Shape
from tests.gpu.jobs import run_by_kernel_and_shape

pytestmark = pytest.mark.gpu

SQUARE = [1, 7, 33, 127, 128, 129, 1000, 1024, 2049]
ODD_SHAPES = [Shape(4096, 1000, 333), Shape(1, 2049, 7), Shape(333, 1, 4096), Shape(130, 250, 17), Shape(48, 80, 1040)]


@pytest.fixture(scope="module")
def verified() -> dict[tuple[str, Shape], dict]:
    shapes = [Shape(n, n, n) for n in SQUARE] + ODD_SHAPES
    return run_by_kernel_and_shape("verify", list(CATALOG), shapes)[1]


@pytest.mark.parametrize("spec", [s for s in CATALOG if not s.is_reference], ids=lambda s: s.id)
def test_kernel_matches_cublas_at_every_size(verified, spec) -> None:
    mine = {shape: r for (kernel, shape), r in verified.items() if kernel == spec.id}
    assert len(mine) == len(SQUARE) + len(ODD_SHAPES)
    for shape, r in mine.items():
        if spec.size_problem(shape.m, shape.n, shape.k):
            assert r["status"] == "refused" and f"multiples of {spec.multiple_of}" in r["error"]
            continue
        assert r["status"] == "ok", f"{spec.id} at {shape.label}: {r['error']}"
        assert r["rel_error"] <= r["tolerance"]


def test_cublas_reference_agrees_with_float64(verified) -> None:
    for (kernel, shape), r in verified.items():
        if kernel == "cublas":
            assert r["status"] == "ok" and r["rel_error"] < 1e-5, shape


def test_cublas_hgemm_reference_is_verified_against_float32(verified) -> None:
    """The HGEMM reference writes half: checked against float32 arithmetic on its half inputs, it gets a real
    error (about 2e-4 from rounding to half, measured on NumPy) within the fp16 output bound, never NaN."""
    rows = {shape: r for (kernel, shape), r in verified.items() if kernel == "cublas-hgemm"}
    assert rows
    for shape, r in rows.items():
        if r["status"] == "refused":
            continue
        assert r["status"] == "ok", (shape, r["error"])
        assert 0 <= r["rel_error"] <= fp16_output_bound(shape.k) <= r["tolerance"], shape
        if shape.m * shape.n >= 1000:  # enough outputs that some must round
            assert r["rel_error"] > 1e-5, shape


def test_cublas_addmm_reference_does_the_whole_addmm_in_float32(verified) -> None:
    """The tensor-core reference reads C and writes float32 D in place (cublasGemmEx), so it matches the float32
    AddMM on the half inputs far closer than a half output could (its error is accumulation order alone)."""
    rows = {shape: r for (kernel, shape), r in verified.items() if kernel == "cublas-addmm"}
    assert len(rows) == len(SQUARE) + len(ODD_SHAPES)
    for shape, r in rows.items():
        assert r["status"] == "ok", (shape, r["error"])
        # Our wgmma kernels measure 5e-6 at 4096^3; a half output would be near 2e-4.
        assert r["rel_error"] < 5e-5 < fp16_output_bound(shape.k), shape


def test_faulting_kernel_is_contained() -> None:
    message = run_selftest("fault")
    assert "illegal" in message.lower() or "crashed" in message.lower()
    # The parent is unaffected: the next job runs normally in a fresh child.
    _, results = run_job(Job(op="verify", tasks=build_tasks([CATALOG[1]], [Shape(64, 64, 64)])))
    assert all(r["status"] == "ok" for r in results)


def test_hanging_kernel_is_killed_after_its_timeout() -> None:
    message = run_selftest("hang", timeout_s=20)
    assert "timed out after 20 s" in message
