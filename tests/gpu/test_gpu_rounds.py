"""On a GPU: tune --interleaved's worker op "rounds" verifies each configuration, times it together with cuBLAS in
rounds at one shape, and verifies it again afterwards: at 127x127x8191, where one configuration after another the
sweep misordered the padded-C 128x64 split and the one-block-per-SM split against their grids (H200, session 29)."""

from __future__ import annotations

import pytest

from kernels.registry import get_kernel
from profiling.gpu.jobs import BenchSettings
from profiling.shape import Shape
from tests.gpu.jobs import run_by_kernel_and_shape

pytestmark = pytest.mark.gpu

PADC = "v9-splitk-128x64x8-w64x32-t8x8-s5-padc"
FILL_ZF = "v9-splitk-64x128x16-w32x64-t8x8-s4-o3-fill-zf"
SHAPE = Shape(127, 127, 8191)


def test_rounds_time_each_verified_configuration_beside_cublas_and_check_it_after() -> None:
    _device, results = run_by_kernel_and_shape(
        "rounds", [get_kernel(PADC), get_kernel(FILL_ZF)], [SHAPE], BenchSettings(repeats=10)
    )
    assert list(results) == [("cublas", SHAPE), (PADC, SHAPE), (FILL_ZF, SHAPE)]
    for (kernel, _shape), r in results.items():
        assert r["status"] == "ok", f"{kernel}: {r['error']}"
        assert r["rounds"]["kernels"] == ["cublas", PADC, FILL_ZF]
        assert len(r["times_ms"]) == 10
        if kernel != "cublas":
            assert r["rel_error"] <= r["tolerance"] and r["rel_error_after_timing"] <= r["tolerance"]
