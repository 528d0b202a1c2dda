"""On a GPU: the Hopper kernels (wgmma-tma, wgmma-pingpong, wgmma-tma-store) match float32 arithmetic on their half inputs at awkward
sizes (one 16x16 tile, K of one wgmma step, K not a multiple of the 64-deep slice, M or N of one 16-row tile beside
4096, tiles hanging over both edges), and any other GPU than compute capability 9.0 refuses them. For the persistent
wgmma-pingpong, many tiles per block with K of one or two slices run its stage sequence through many rounds and
tile boundaries (a parity or turn mistake shows as wrong tiles or a hang). For wgmma-tma-store, K of one and two
slices put its epilogue boxes in stages the main loop never used or used once, and edge tiles have whole
epilogue boxes outside D (neither copied nor stored); its beta = 0 path is checked by scripts/wgmma_probe.py."""

from __future__ import annotations

import pytest

from kernels.registry import get_kernel
from profiling.shape import Shape
from tests.gpu.jobs import run_by_kernel_and_shape

pytestmark = pytest.mark.gpu

SPECS = [get_kernel("wgmma-tma"), get_kernel("wgmma-pingpong"), get_kernel("wgmma-tma-store")]
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
    Shape(4096, 4096, 16),  # 1024 tiles of one slice each
    Shape(2064, 2048, 80),  # two slices per tile, a last row of tiles 16 high
    Shape(384, 512, 192),  # three slices: wgmma-tma-store's epilogue stages are the never-used one and two reused
    Shape(256, 768, 256),  # four slices: every epilogue stage was used once and is reused after its release
]
REFUSED = [Shape(1, 1, 1), Shape(17, 129, 33), Shape(1000, 1000, 1000)]


@pytest.fixture(scope="module")
def verified() -> tuple[dict, dict[tuple[str, Shape], dict]]:
    return run_by_kernel_and_shape("verify", SPECS, SHAPES + REFUSED)


@pytest.mark.parametrize("kernel_id", [s.id for s in SPECS])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.label)
def test_matches_float32_of_the_same_half_inputs(verified, kernel_id: str, shape: Shape) -> None:
    device, rows = verified
    r = rows[(kernel_id, shape)]
    if device["cc"] != "9.0":
        assert r["status"] == "refused" and "sm_90a" in r["error"], r
        return
    assert r["status"] == "ok", f"{kernel_id} at {shape.label}: {r['error']}"
    assert 0 <= r["rel_error"] <= r["tolerance"]
    assert r["compile"]["arch"] == "sm_90a" and r["compile"]["local_bytes"] == 0


def test_the_persistent_kernel_launches_one_block_per_sm(verified) -> None:
    device, rows = verified
    r = rows[("wgmma-pingpong", Shape(4096, 4096, 4096))]
    if device["cc"] == "9.0":
        assert r["launch"]["grid"][:2] == [device["sm_count"], 1] and r["launch"]["grid"][2:] in ([], [1])


@pytest.mark.parametrize("kernel_id", [s.id for s in SPECS])
@pytest.mark.parametrize("shape", REFUSED, ids=lambda s: s.label)
def test_sizes_off_the_16_grid_are_refused_with_a_message(verified, kernel_id: str, shape: Shape) -> None:
    r = verified[1][(kernel_id, shape)]
    assert r["status"] == "refused" and "multiples of 16" in r["error"]
