"""On a GPU: the BF16 AddMM. cuBLAS doing it (cublas-addmm-bf16) matches the float32 AddMM of the rounded bfloat16
inputs at awkward sizes (1, 17, 129, non-multiples of any tile); wgmma-persistent-bf16 does too at the shapes that
run wgmma-persistent's ring through its ordering rules (tests/gpu/test_gpu_wgmma_persistent.py says which rule each
shape aims at), refuses sizes off the 16 grid, and any GPU other than compute capability 9.0 refuses it. The
rounding to bfloat16 on the GPU gives NumPy's bits."""

from __future__ import annotations

import numpy as np
import pytest

from kernels.registry import get_kernel
from profiling.gpu.bfloat16 import bfloat16_bits_to_float32, to_bfloat16_bits
from profiling.shape import Shape
from tests.gpu.jobs import run_by_kernel_and_shape
from tests.gpu.test_gpu_wgmma_persistent import REFUSED, SHAPES

pytestmark = pytest.mark.gpu

REFERENCE = get_kernel("cublas-addmm-bf16")
KERNEL = get_kernel("wgmma-persistent-bf16")
AWKWARD = [
    Shape(1, 1, 1),
    Shape(17, 17, 17),
    Shape(129, 129, 129),
    Shape(1, 2049, 7),
    Shape(333, 1, 4096),
    Shape(130, 250, 17),
    Shape(4096, 1000, 333),
]
# Both cuBLAS and our kernels accumulate in float32: what is left against the float32 AddMM of the same rounded
# inputs is the summation order (about 5e-6 at 4096^3 for the FP16 kernels), far under the 1e-3 tolerance. Checked up
# to K = 4096, where the FP16 kernels were measured; deeper K only against the tolerance.
ACCUMULATION_ERROR = 5e-5
MEASURED_K = 4096
ALL = list(dict.fromkeys(SHAPES + REFUSED + AWKWARD))


@pytest.fixture(scope="module")
def verified() -> tuple[dict, dict[tuple[str, Shape], dict]]:
    return run_by_kernel_and_shape("verify", [REFERENCE, KERNEL], ALL)


@pytest.mark.parametrize("shape", ALL, ids=lambda s: s.label)
def test_cublas_bf16_addmm_matches_float32_of_the_rounded_inputs(verified, shape: Shape) -> None:
    r = verified[1][("cublas-addmm-bf16", shape)]
    assert r["status"] == "ok" and r["operation"] == "bgemm_addmm", (shape, r["error"])
    assert 0 <= r["rel_error"] <= r["tolerance"], shape
    assert shape.k > MEASURED_K or r["rel_error"] < ACCUMULATION_ERROR, shape


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.label)
def test_wgmma_persistent_bf16_matches_float32_of_the_rounded_inputs(verified, shape: Shape) -> None:
    device, rows = verified
    r = rows[("wgmma-persistent-bf16", shape)]
    if device["cc"] != "9.0":
        assert r["status"] == "refused" and "sm_90a" in r["error"], r
        return
    assert r["status"] == "ok", f"at {shape.label}: {r['error']}"
    assert 0 <= r["rel_error"] <= r["tolerance"], shape
    assert shape.k > MEASURED_K or r["rel_error"] < ACCUMULATION_ERROR, shape
    assert r["compile"]["arch"] == "sm_90a" and r["compile"]["local_bytes"] == 0


def test_wgmma_persistent_bf16_gets_one_block_per_sm(verified) -> None:
    device, rows = verified
    if device["cc"] != "9.0":
        return
    assert rows[("wgmma-persistent-bf16", Shape(4096, 4096, 4096))]["launch"]["grid"][:2] == [device["sm_count"], 1]
    assert rows[("wgmma-persistent-bf16", Shape(16, 16, 16))]["launch"]["grid"][:2] == [1, 1]


@pytest.mark.parametrize("shape", [s for s in ALL if KERNEL.size_problem(s.m, s.n, s.k)], ids=lambda s: s.label)
def test_wgmma_persistent_bf16_refuses_sizes_off_the_16_grid(verified, shape: Shape) -> None:
    r = verified[1][("wgmma-persistent-bf16", shape)]
    assert r["status"] == "refused" and "multiples of 16" in r["error"]


def test_bf16_rounding_on_the_gpu_gives_numpys_bits() -> None:
    from profiling.gpu.fp32_cupy import cupy

    rng = np.random.default_rng(31)
    x = np.concatenate([rng.uniform(-1.0, 1.0, 100_000), rng.standard_normal(1000) * 1e38, [np.nan, np.inf, -0.0]])
    x = x.astype(np.float32)
    on_gpu = to_bfloat16_bits(cupy, cupy.asarray(x))
    assert on_gpu.dtype == cupy.uint16 and np.array_equal(cupy.asnumpy(on_gpu), to_bfloat16_bits(np, x))
    back = bfloat16_bits_to_float32(cupy, on_gpu)
    assert np.array_equal(cupy.asnumpy(back), bfloat16_bits_to_float32(np, to_bfloat16_bits(np, x)), equal_nan=True)
