"""bfloat16 operands on the CPU: the rounding and decoding the worker runs on CuPy arrays (profiling.gpu.bfloat16),
here on NumPy arrays, pinned against values worked out by hand and against a float64 nearest-value search; the BF16
AddMM problem, its reference and its cuBLAS data type."""

from __future__ import annotations

import numpy as np
import pytest

from kernels.catalog import CATALOG
from kernels.operations import OPERATIONS
from kernels.registry import get_kernel
from profiling.gpu.bfloat16 import BF16_QUIET_NAN, bfloat16_bits_to_float32, to_bfloat16_bits
from profiling.gpu.cublas_addmm import CUDA_R_16BF, CUDA_R_16F, INPUT_TYPES
from profiling.gpu.jobs import tolerance_for
from profiling.gpu.runner import Problem, as_float32, to_input
from profiling.shape import Shape


@pytest.mark.parametrize(
    "value,bits",
    [
        (1.0, 0x3F80),
        (-2.0, 0xC000),
        (1.0 + 2.0**-8, 0x3F80),  # halfway between 1 and 1 + 2**-7: ties to the even 1.0
        (1.0 + 3 * 2.0**-8, 0x3F82),  # halfway between 1 + 2**-7 and 1 + 2**-6: ties to the even upper one
        (1.0 + 2.0**-8 + 2.0**-20, 0x3F81),  # just above halfway: up
        (np.pi, 0x4049),  # 3.140625
        (0.0, 0x0000),
        (-0.0, 0x8000),
        (1e-40, 0x0001),  # a float32 subnormal: bfloat16 keeps subnormals
        (3.4e38, 0x7F80),  # above bfloat16's largest finite (3.3895e38, 0x7F7F): rounds to infinity
        (np.inf, 0x7F80),
        (-np.inf, 0xFF80),
        (np.nan, BF16_QUIET_NAN),
    ],
)
def test_rounding_to_bfloat16_is_nearest_even(value: float, bits: int) -> None:
    got = to_bfloat16_bits(np, np.array([value], dtype=np.float32))
    assert got.dtype == np.uint16 and int(got[0]) == bits


def test_rounding_picks_the_nearest_bfloat16_of_random_float32_values() -> None:
    """Against a search in float64: of the two bfloat16 values around x (x's bits truncated, and one up), the nearer,
    the even one on a tie."""
    rng = np.random.default_rng(31)
    x = np.concatenate([rng.uniform(-1.0, 1.0, 20_000), rng.standard_normal(20_000) * 1e30]).astype(np.float32)
    # Ties are rare at random: make a thousand exact halfway points (lower 16 bits 0x8000).
    ties = (rng.integers(0x0080_0000, 0x7F00_0000, 1000, dtype=np.uint32) & np.uint32(0xFFFF0000)) | np.uint32(0x8000)
    x = np.concatenate([x, ties.view(np.float32)])
    down = (x.view(np.uint32) >> 16).astype(np.uint16)
    candidates = [down, down + np.uint16(1)]
    lo, hi = (bfloat16_bits_to_float32(np, c).astype(np.float64) for c in candidates)
    dist_lo, dist_hi = np.abs(x - lo), np.abs(x - hi)
    expected = np.where(dist_lo < dist_hi, candidates[0], candidates[1])
    expected = np.where(dist_lo == dist_hi, np.where(candidates[0] % 2 == 0, candidates[0], candidates[1]), expected)
    assert np.array_equal(to_bfloat16_bits(np, x), expected)


def test_decoding_is_exact_and_rounding_gives_every_bit_pattern_back() -> None:
    assert bfloat16_bits_to_float32(np, np.array([0x3F80, 0xC000, 0x4049, 0x7F7F, 0x0001], np.uint16)).tolist() == [
        1.0,
        -2.0,
        3.140625,
        float(np.float32(3.3895313892515355e38)),
        float(np.float32(2.0**-133)),
    ]
    every = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    values = bfloat16_bits_to_float32(np, every)
    assert values.dtype == np.float32
    finite_or_inf = ~np.isnan(values)
    assert np.array_equal(to_bfloat16_bits(np, values)[finite_or_inf], every[finite_or_inf])
    assert (to_bfloat16_bits(np, values)[~finite_or_inf] == BF16_QUIET_NAN).all()


def _bf16_problem(m: int = 40, n: int = 24, k: int = 512, seed: int = 9) -> Problem:
    rng = np.random.default_rng(seed)
    a = to_input(np, "bfloat16", rng.uniform(-1.0, 1.0, (m, k)).astype(np.float32))
    b = to_input(np, "bfloat16", rng.uniform(-1.0, 1.0, (k, n)).astype(np.float32))
    c = rng.uniform(-1.0, 1.0, (m, n)).astype(np.float32)
    return Problem.from_arrays(np, "bgemm_addmm", Shape(m, n, k), a, b, c)


def test_the_bf16_problem_is_checked_against_the_float32_addmm_of_its_rounded_inputs() -> None:
    problem = _bf16_problem()
    assert problem.a.dtype == problem.b.dtype == np.uint16
    a32, b32 = as_float32(np, "bfloat16", problem.a), as_float32(np, "bfloat16", problem.b)
    assert np.array_equal(to_bfloat16_bits(np, a32), problem.a)  # rounded values are exact in float32
    np.testing.assert_array_equal(problem.ref, problem.alpha * (a32 @ b32) + problem.beta * problem.c)
    spec = get_kernel("wgmma-persistent-bf16")
    tolerance = tolerance_for(spec, problem.shape)
    # A correct kernel: float32 accumulation of the same products in another order (here float64, then rounded).
    problem.out[...] = (problem.alpha * (a32.astype(np.float64) @ b32) + problem.beta * problem.c).astype(np.float32)
    check = problem.check(False, tolerance)
    assert check.ok and check.rel_error < 1e-6
    # A kernel that reads the bfloat16 bits as float16 is far outside the tolerance.
    as_half = problem.a.view(np.float16).astype(np.float32) @ problem.b.view(np.float16).astype(np.float32)
    problem.out[...] = problem.alpha * as_half + problem.beta * problem.c
    assert problem.check(False, tolerance).status == "wrong"
    # cublas-addmm-bf16 works in place from C and is checked as the whole AddMM too.
    problem.poison(get_kernel("cublas-addmm-bf16"))
    assert np.array_equal(problem.out, problem.c)
    assert problem.check(True, tolerance, half_output=False).status == "wrong"


def test_inputs_of_each_type_and_their_float32_values() -> None:
    x = np.array([[1.0 + 3 * 2.0**-8, -0.1]], dtype=np.float32)
    assert to_input(np, "float32", x) is x
    assert to_input(np, "float16", x).dtype == np.float16
    assert to_input(np, "bfloat16", x).tolist() == [[0x3F82, 0xBDCD]]  # -0.1: 0xBDCCCCCD rounds up
    assert as_float32(np, "bfloat16", to_input(np, "bfloat16", x)).tolist() == [[1.015625, -0.10009765625]]
    assert as_float32(np, "float16", to_input(np, "float16", x)).dtype == np.float32


def test_every_cublas_addmm_reference_has_its_cuda_data_type() -> None:
    """cublasGemmEx's A/B type follows the operation: CUDA_R_16F (2) for float16, CUDA_R_16BF (14) for bfloat16
    (library_types.h)."""
    assert INPUT_TYPES == {"float16": CUDA_R_16F, "bfloat16": CUDA_R_16BF} and (CUDA_R_16F, CUDA_R_16BF) == (2, 14)
    addmm_refs = [s for s in CATALOG if s.is_reference and s.library_call == "addmm"]
    assert {s.id: s.operation for s in addmm_refs} == {
        "cublas-addmm": "hgemm_addmm",
        "cublas-addmm-bf16": "bgemm_addmm",
    }
    assert all(OPERATIONS[s.operation].input_dtype in INPUT_TYPES for s in addmm_refs)
