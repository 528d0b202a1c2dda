"""The split-count rule (kernels/splitk_policy.py) at the split-K study's shapes, for each split-K tuning configuration, against
counts worked out by hand below (an H100's 132 SMs)."""

from __future__ import annotations

import math

import pytest

from kernels import tuning
from kernels.registry import get_kernel
from kernels.splitk_policy import DEEP_SLICES_PER_SPLIT, MIN_SLICES_PER_SPLIT, split_count_for

SMS = 132
BIG, SMALL, TINY = (c["id"] for c in tuning.SPLITK_TUNING_CONFIGS)

# Per configuration: tile, blocks per SM (MIN_BLOCKS), resident blocks = 132 x that, BK = 16 for all three.
#   BIG   128x128, 256 threads, 2 per SM -> 264 resident
#   SMALL  64x64,  128 threads, 4 per SM -> 528 resident
#   TINY   32x32,   32 threads, 16 per SM -> 2112 resident
# one_wave = resident // tiles; deep = slices // 16; fill = ceil(132 / tiles); filled when tiles x deep >= 132.
CASES = [
    # 127x127x8191: slices = ceil(8191 / 16) = 512, deep = 32.
    #   BIG: 1 tile, 1 x 32 < 132 -> isqrt(fill 132 x deep 32 = 4224) = 64 (64^2 = 4096 <= 4224 < 65^2),
    #        min(one_wave 264, 512 // 4 = 128, 64) = 64; 512 / 64 = 8 slices each, none empty -> 64.
    (BIG, (127, 127, 8191), 64),
    #   SMALL: 2 x 2 = 4 tiles, 4 x 32 = 128 < 132 -> isqrt(ceil(132 / 4) = 33 x 32 = 1056) = 32 (32^2 = 1024);
    #          min(528 // 4 = 132, 128, 32) = 32 splits of 16 slices: 128 blocks, one reduction per 256 K.
    (SMALL, (127, 127, 8191), 32),
    #   TINY: 4 x 4 = 16 tiles, 16 x 32 = 512 >= 132 (filled) -> min(2112 // 16 = 132, deep 32) = 32.
    (TINY, (127, 127, 8191), 32),
    # 64x64x65536: slices = 4096, deep = 256.
    #   BIG: 1 tile, 256 >= 132 -> min(264, 256) = 256; SMALL: 1 tile -> min(528, 256) = 256;
    #   TINY: 2 x 2 = 4 tiles, 1024 >= 132 -> min(2112 // 4 = 528, 256) = 256. Each 16 slices deep.
    (BIG, (64, 64, 65536), 256),
    (SMALL, (64, 64, 65536), 256),
    (TINY, (64, 64, 65536), 256),
    # 333x4096x4096: slices = 256, deep = 16.
    #   BIG: 3 x 32 = 96 tiles, one_wave 264 // 96 = 2, 96 x 16 >= 132 -> min(2, 16) = 2 (128 slices each).
    #   SMALL: 6 x 64 = 384 tiles, 528 // 384 = 1 -> no split. TINY: 11 x 128 = 1408, 2112 // 1408 = 1 -> none.
    (BIG, (333, 4096, 4096), 2),
    (SMALL, (333, 4096, 4096), 1),
    (TINY, (333, 4096, 4096), 1),
    # 1024^3: slices = 64, deep = 4.
    #   BIG: 64 tiles, 264 // 64 = 4, 64 x 4 >= 132 -> min(4, 4) = 4; SMALL: 256 tiles, 528 // 256 = 2 -> 2;
    #   TINY: 1024 tiles, 2112 // 1024 = 2 -> min(2, 4) = 2.
    (BIG, (1024, 1024, 1024), 4),
    (SMALL, (1024, 1024, 1024), 2),
    (TINY, (1024, 1024, 1024), 2),
    # 4096^3: 1024 / 4096 / 16384 tiles, more than one wave of resident blocks for each -> no split.
    (BIG, (4096, 4096, 4096), 1),
    (SMALL, (4096, 4096, 4096), 1),
    (TINY, (4096, 4096, 4096), 1),
]


@pytest.mark.parametrize("config_id,shape,splits", CASES, ids=lambda v: str(v))
def test_split_count_at_the_issue_shapes(config_id: str, shape: tuple[int, int, int], splits: int) -> None:
    spec = get_kernel(config_id)
    assert spec.split_count(*shape, SMS) == splits
    assert spec.launch_grid(*shape, SMS)[2] == splits


def test_the_catalog_entry_is_the_first_configuration() -> None:
    catalog = get_kernel("v8-splitk")
    first = tuning.SPLITK_TUNING_CONFIGS[0]
    assert (catalog.entry, catalog.params, catalog.dynamic_smem_bytes) == (
        first["entry"],
        first["params"],
        first["dynamic_smem_bytes"],
    )
    assert get_kernel(BIG).split_count(127, 127, 8191, SMS) == catalog.split_count(127, 127, 8191, SMS) == 64


def test_fewer_deeper_splits_than_the_fill_only_rule() -> None:
    """The old rule (as many as one wave of resident blocks holds, 4 slices each) gave 128 splits at 127x127x8191;
    128 reductions into every element of C ran at 36 % of cuBLAS."""
    old_rule = min(264 // 1, 512 // MIN_SLICES_PER_SPLIT)
    assert old_rule == 128 and split_count_for(1, 512, SMS, 2) == 64
    # Where the GPU is filled, no split is shallower than DEEP_SLICES_PER_SPLIT unless K itself is short.
    for tiles, slices in ((1, 4096), (4, 512), (64, 64), (96, 256)):
        splits = split_count_for(tiles, slices, SMS, 2)
        assert math.ceil(slices / splits) >= min(DEEP_SLICES_PER_SPLIT, slices // 2), (tiles, slices)


def test_a_configuration_may_prefer_deeper_splits() -> None:
    # BIG at 64x64x65536 with 32-slice splits: deep = 4096 // 32 = 128 < 132 SMs -> isqrt(132 x 128 = 16896) = 129
    # (129^2 = 16641, 130^2 = 16900); 4096 / 129 -> 32 slices each -> ceil(4096 / 32) = 128 splits.
    spec = get_kernel(BIG)
    deeper = type(spec)(**{**spec.__dict__, "params": dict(spec.params, SPLIT_DEEP_SLICES=32)})
    assert deeper.split_count(64, 64, 65536, SMS) == 128 and spec.split_count(64, 64, 65536, SMS) == 256
    assert split_count_for(1, 4096, SMS, 2, deep_slices=32) == 128


@pytest.mark.parametrize("tiles,slices", [(1, 1), (1, 7), (5, 7), (300, 4096), (133, 4096)])
def test_no_split_where_k_is_short_or_the_tiles_fill_a_wave(tiles: int, slices: int) -> None:
    # Fewer than 2 x 4 slices, or room for fewer than two blocks per tile in one wave of 264.
    assert split_count_for(tiles, slices, SMS, 2) == 1


def test_the_fill_rounds_up_to_a_block_on_every_sm() -> None:
    """7 tiles on 132 SMs need ceil(132 / 7) = 19 splits for a block on every SM (18 leave 6 idle): with 200
    slices, deep = 12 and isqrt(19 x 12 = 228) = 15; rounding the fill down gives isqrt(216) = 14."""
    assert split_count_for(7, 200, 132, 2) == 15
    assert split_count_for(7, 200, 126, 2) == 14  # 126 / 7 = 18 exactly: isqrt(216) = 14


def test_one_block_per_sm_takes_cublas_split_counts() -> None:
    """`one_block_per_sm` (the -fill configurations) splits as cuBLAS's launches measured on an H200 do:
    sm_count // tiles. 333x127x4096 on the 64x128x16 tile (three blocks per SM): 6 tiles, 256 slices -> 132 // 6 = 22
    splits of ceil(256 / 22) = 12 slices (21 x 12 + 4), where the default rule takes isqrt(22 x 16 = 352) = 18 and
    leaves 24 SMs idle. 16 tiles of 512 slices (cuBLAS's 256x64 split at 4096x64x4096) -> 132 // 16 = 8. Short K
    still caps it: 6 tiles of 40 slices -> 40 // 4 = 10 splits of 4."""
    assert split_count_for(6, 256, SMS, 3, one_block_per_sm=True) == 22 and split_count_for(6, 256, SMS, 3) == 18
    assert split_count_for(16, 512, SMS, 1, one_block_per_sm=True) == 8
    assert split_count_for(6, 40, SMS, 3, one_block_per_sm=True) == 10
    fill = get_kernel("v9-splitk-64x128x16-w32x64-t8x8-s4-fill")
    assert fill.launch_grid(333, 127, 4096, SMS) == (1, 6, 22)
    assert get_kernel("v9-splitk-64x128x16-w32x64-t8x8-s4").launch_grid(333, 127, 4096, SMS) == (1, 6, 18)
    # 129x17x1001 (the sanitizer's shape): 3 tiles, 63 slices -> min(44, 63 // 4 = 15) = 15 -> ceil(63 / 5) = 13.
    assert fill.split_count(129, 17, 1001, SMS) == 13
