"""The verifier on the CPU: the same functions the worker runs on CuPy arrays, here on NumPy arrays.

Each test names the broken verifier it would catch: an output compared with itself, NaN outputs not counted,
a NaN error let through, the error computed in float32, the cuBLAS HGEMM reference left unverified.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from kernels.registry import get_kernel
from profiling.gpu import verify as V
from profiling.gpu.jobs import tolerance_for
from profiling.gpu.runner import Problem
from profiling.shape import Shape

REF = np.array([[1.0, 2.0], [2.0, 4.0]], dtype=np.float32)  # ||REF|| = 5


def test_relative_error_on_hand_computed_arrays() -> None:
    off = REF + np.array([[0.0, 3.0], [4.0, 0.0]], dtype=np.float32)  # ||off - REF|| = 5
    assert V.relative_error(np, off, REF) == pytest.approx(1.0)
    assert V.relative_error(np, REF * np.float32(1.5), REF) == pytest.approx(0.5)
    assert V.relative_error(np, REF.copy(), REF) == 0.0
    # Argument order matters: the denominator is the reference's norm (||off|| = sqrt(78)).
    assert V.relative_error(np, REF, off) == pytest.approx(5 / math.sqrt(78))


def test_relative_error_is_computed_in_float64() -> None:
    # Squares of 1e20 overflow float32 (max 3.4e38): a float32 norm would give inf / inf = NaN.
    ref = np.full((4, 4), 1e20, dtype=np.float32)
    out = ref * np.float32(1.01)
    assert V.relative_error(np, out, ref) == pytest.approx(0.01, rel=1e-4)


def test_relative_error_of_a_half_output_against_a_float32_reference() -> None:
    out = REF.astype(np.float16) + np.float16(1.0)  # every element off by 1: ||diff|| = 2
    assert V.relative_error(np, out, REF) == pytest.approx(0.4)


def test_relative_error_with_nan_output_or_zero_reference() -> None:
    out = REF.copy()
    out[0, 1] = np.nan
    assert math.isnan(V.relative_error(np, out, REF))
    zero = np.zeros((2, 2), dtype=np.float32)
    assert V.relative_error(np, zero, zero) == 0.0
    assert V.relative_error(np, REF, zero) == math.inf


def test_nan_count_counts_every_nan_and_only_nans() -> None:
    out = np.ones((3, 5), dtype=np.float32)
    assert V.nan_count(np, out) == 0
    out[0, 0] = out[2, 4] = out[1, 3] = np.nan
    out[1, 1] = np.inf  # infinite, not NaN: the relative error catches it
    assert V.nan_count(np, out) == 3
    assert V.nan_count(np, np.full((4, 4), np.nan, dtype=np.float16)) == 16


def test_check_output_verdicts() -> None:
    good = V.check_output(np, REF * np.float32(1.0 + 2.0**-19), REF, tolerance=1e-5)
    assert (good.status, good.ok, good.error, good.nan_count, good.outputs) == ("ok", True, None, 0, 4)
    assert good.rel_error == 2.0**-19  # exact: every element is off by the same power of two

    far = V.check_output(np, REF * np.float32(1.1), REF, tolerance=1e-5)
    assert far.status == "wrong" and far.error == "relative error 0.1 exceeds tolerance 1e-05"

    one_nan = REF.copy()
    one_nan[1, 0] = np.nan
    check = V.check_output(np, one_nan, REF, tolerance=1.0)
    assert check.status == "wrong" and check.nan_count == 1
    assert check.error == "1 of 4 outputs are NaN (not written or invalid)"

    infinite = REF.copy()
    infinite[0, 0] = np.inf
    assert V.check_output(np, infinite, REF, tolerance=1e-3).status == "wrong"


def test_a_nan_error_is_never_a_pass() -> None:
    # No NaN in the output, but the error itself is NaN (here: a NaN in the reference).
    ref = REF.copy()
    ref[0, 0] = np.nan
    check = V.check_output(np, REF.copy(), ref, tolerance=1e9)
    assert check.nan_count == 0 and math.isnan(check.rel_error)
    assert check.status == "wrong" and "NaN" in check.error
    assert not V.Check(math.nan, 0, 4, 1e9).ok
    # The tolerance itself is inclusive.
    assert V.Check(1e-3, 0, 4, 1e-3).ok and not V.Check(1.0001e-3, 0, 4, 1e-3).ok


# ---------------------------------------------------------------------------------------------
# The worker's Problem: which output is compared with which reference (the call site of the checks)
# ---------------------------------------------------------------------------------------------


def _sgemm_problem(m: int = 24, n: int = 20, k: int = 36, seed: int = 5) -> Problem:
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1.0, 1.0, (m, k)).astype(np.float32)
    b = rng.uniform(-1.0, 1.0, (k, n)).astype(np.float32)
    return Problem.from_arrays(np, "sgemm", Shape(m, n, k), a, b)


def test_problem_check_compares_the_kernel_output_with_the_reference() -> None:
    problem = _sgemm_problem()
    tolerance = tolerance_for(get_kernel("v1"), problem.shape)
    problem.out[...] = problem.a @ problem.b
    assert problem.check(False, tolerance).ok
    problem.out[...] = problem.ref * np.float32(1.01)  # a wrong output, NaN-free
    wrong = problem.check(False, tolerance)
    assert wrong.status == "wrong" and wrong.rel_error == pytest.approx(0.01, rel=1e-3)
    problem.out[...] = problem.ref
    problem.out[3, 4] += np.float32(1.0)  # one element off
    assert problem.check(False, tolerance).status == "wrong"


def test_problem_poison_makes_every_unwritten_output_count() -> None:
    problem = _sgemm_problem()
    problem.out[...] = problem.ref
    problem.poison()
    check = problem.check(False, 1.0)
    assert check.nan_count == 24 * 20 and check.status == "wrong"
    problem.out[:, :] = problem.ref
    problem.out[-4:, -5:] = np.nan  # a kernel that leaves a corner unwritten
    check = problem.check(False, 1.0)
    assert check.nan_count == 20 and check.error.startswith("20 of 480 outputs are NaN")


def test_cublas_sgemm_reference_is_checked_against_float64() -> None:
    problem = _sgemm_problem(m=64, n=48, k=512)
    problem.out[...] = problem.a @ problem.b  # what cuBLAS writes: float32 arithmetic
    check = problem.check(True, tolerance_for(get_kernel("cublas"), problem.shape))
    # A float32 product differs from the float64 one by rounding: a real, small, nonzero error.
    assert check.ok and 0 < check.rel_error < 1e-6


def _hgemm_problem(m: int = 40, n: int = 24, k: int = 512, seed: int = 9) -> Problem:
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1.0, 1.0, (m, k)).astype(np.float16)
    b = rng.uniform(-1.0, 1.0, (k, n)).astype(np.float16)
    c = rng.uniform(-1.0, 1.0, (m, n)).astype(np.float32)
    return Problem.from_arrays(np, "hgemm_addmm", Shape(m, n, k), a, b, c)


def test_cublas_hgemm_reference_is_verified_against_float32_on_the_half_inputs() -> None:
    problem = _hgemm_problem()
    tolerance = tolerance_for(get_kernel("cublas-hgemm"), problem.shape)
    # What cuBLAS HGEMM writes: the float32-accumulated product rounded to half.
    problem.half_out = (problem.a.astype(np.float32) @ problem.b.astype(np.float32)).astype(np.float16)
    check = problem.check(True, tolerance)
    assert check.ok, check.error
    # Half rounding of random products: measured 2.1e-4 on NumPy; the bound is 2**-11 plus accumulation.
    assert 1e-5 < check.rel_error <= V.fp16_output_bound(problem.shape.k)
    problem.half_out[7, 3] += np.float16(4.0)
    assert problem.check(True, tolerance).status == "wrong"
    problem.poison()
    unwritten = problem.check(True, tolerance)
    assert unwritten.status == "wrong" and unwritten.nan_count == 40 * 24


def test_cublas_addmm_reference_starts_from_c_and_is_checked_as_the_whole_addmm() -> None:
    """cublas-addmm works in place: its output buffer starts as C (NaN there would be its input), and what it
    writes is checked against the float32 AddMM, as our kernels' outputs are, not against a half product."""
    problem = _hgemm_problem()
    spec = get_kernel("cublas-addmm")
    problem.poison(spec)
    assert np.array_equal(problem.out, problem.c)
    problem.out[...] = problem.alpha * (problem.a.astype(np.float32) @ problem.b.astype(np.float32))
    problem.out += problem.beta * problem.c
    check = problem.check(True, tolerance_for(spec, problem.shape), half_output=False)
    assert check.ok and check.rel_error < 1e-6
    problem.out[...] = problem.a.astype(np.float32) @ problem.b.astype(np.float32)  # A*B without alpha, beta, C
    assert problem.check(True, tolerance_for(spec, problem.shape), half_output=False).status == "wrong"
    problem.poison(get_kernel("wgmma-persistent"))
    assert np.isnan(problem.out).all()


def test_hgemm_tolerance_covers_the_fp16_output_bound() -> None:
    spec = get_kernel("cublas-hgemm")
    for k in (1, 16, 1024, 8192, 65536):
        bound = V.fp16_output_bound(k)
        assert V.FP16_UNIT_ROUNDOFF < bound <= tolerance_for(spec, Shape(256, 256, k)) < 3 * bound, k
