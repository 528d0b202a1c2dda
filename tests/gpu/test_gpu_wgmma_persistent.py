"""On a GPU: the persistent Hopper kernels (wgmma-persistent; wgmma-cluster, its 2-block clusters multicasting B;
wgmma-staged, its epilogue through staging boxes with C's slots released one by one; wgmma-streamk, the last wave's
tiles shared out along K; wgmma-streamk-cluster and its BF16 twin, wgmma-streamk in 2-block clusters) match float32
arithmetic on their half inputs at awkward sizes, and any other GPU than compute capability 9.0 refuses them.

The shapes aim at their own ordering rules: K of one and two 64-deep slices with many tiles per block run the ring
(K slices and the C slots after each tile's) through many rounds across tile boundaries (a parity or release
mistake shows as wrong tiles or a hang); K not a multiple of the slice; M and N cutting the last tiles; an odd number of
tile rows, so that the last cluster's second block has no rows of D at all yet still loads and multicasts its half
of B; a single 16 x 16 tile, where one block of a cluster is wholly outside."""

from __future__ import annotations

import pytest

from kernels.registry import get_kernel
from profiling.shape import Shape
from tests.gpu.jobs import run_by_kernel_and_shape

pytestmark = pytest.mark.gpu

SPECS = [
    get_kernel("wgmma-persistent"),
    get_kernel("wgmma-cluster"),
    get_kernel("wgmma-staged"),
    get_kernel("wgmma-streamk"),
    get_kernel("wgmma-streamk-bf16"),
    get_kernel("wgmma-streamk-cluster"),
    get_kernel("wgmma-streamk-cluster-bf16"),
]
SHAPES = [
    Shape(16, 16, 16),
    Shape(128, 256, 32),
    Shape(1008, 1008, 1008),  # K = 31.5 slices, M and N cut the last tiles
    Shape(4096, 16, 4096),
    Shape(16, 4096, 4096),
    Shape(48, 80, 1040),
    Shape(272, 400, 96),
    Shape(4096, 4096, 4096),
    Shape(4096, 4096, 16),  # 512 tiles of one (quarter-filled) slice: 3-4 tiles per block
    Shape(6144, 6144, 64),  # 1152 tiles of one slice: 8-9 tiles per block
    Shape(6144, 6144, 128),  # two slices per tile
    Shape(2064, 2048, 80),  # two slices, the last one mostly outside K; a last tile row 16 high
    Shape(1136, 4112, 528),  # 9 tile rows (the last cluster's second block is outside M), N cuts a B box
    Shape(8192, 8192, 8192),
    # wgmma-streamk's last wave on 132 SMs: 192 tiles, 60 of them in the tail, of 16.75 slices cut into runs of 8,
    # so some tiles are shared by three blocks; 133 tiles, one whole wave and one tile that four blocks share.
    # (1008^3, 48x80x1040 and 4096x16x4096 also share each tile among four blocks, runs of a quarter tile.)
    Shape(1024, 6144, 1072),
    Shape(896, 4864, 4096),
]
REFUSED = [Shape(1, 1, 1), Shape(17, 129, 33), Shape(129, 129, 129), Shape(1000, 1000, 1000)]


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


def test_one_block_per_sm_and_whole_clusters(verified) -> None:
    device, rows = verified
    if device["cc"] != "9.0":
        return
    sms = device["sm_count"]
    assert rows[("wgmma-persistent", Shape(4096, 4096, 4096))]["launch"]["grid"][:2] == [sms, 1]
    assert rows[("wgmma-cluster", Shape(4096, 4096, 4096))]["launch"]["grid"][:2] == [sms - sms % 2, 1]
    # One tile: one block; a cluster still needs its second block.
    assert rows[("wgmma-persistent", Shape(16, 16, 16))]["launch"]["grid"][:2] == [1, 1]
    assert rows[("wgmma-cluster", Shape(16, 16, 16))]["launch"]["grid"][:2] == [2, 1]
    assert rows[("wgmma-streamk-cluster", Shape(8192, 8192, 8192))]["launch"]["grid"][:2] == [sms - sms % 2, 1]


@pytest.mark.parametrize("kernel_id", [s.id for s in SPECS])
@pytest.mark.parametrize("shape", REFUSED, ids=lambda s: s.label)
def test_sizes_off_the_16_grid_are_refused_with_a_message(verified, kernel_id: str, shape: Shape) -> None:
    r = verified[1][(kernel_id, shape)]
    assert r["status"] == "refused" and "multiples of 16" in r["error"]
