"""How many K splits a split-K launch uses (gridDim.z), as a pure function of the launch's tile count, its K slices
and the GPU (KernelSpec.split_count applies it to a catalog entry or tuning configuration).

Each split adds its partial tile into C with one reduction per C element, and the splits of one tile all finish at
about the same time, so the reductions into one element queue at the L2 behind each other: every extra split costs
about one more atomic round per C element, whatever the split's depth. A split that covers few K slices therefore
spends a large share of its time adding (v8-splitk with 128 splits of 4 slices at 127x127x8191 ran at 36 % of
cuBLAS on an H100, where cuBLAS ran 64 splits of 128 K). The rule prefers fewer, deeper splits once the GPU has work
on every SM, and where that is not possible it balances idle SMs against the reductions.
"""

from __future__ import annotations

import math

# A split covers at least this many slices where that still puts a block on every SM: with 16-deep slices, one
# reduction per C element per 256 FMAs of it.
DEEP_SLICES_PER_SPLIT = 16
# Never fewer than this: below it the cp.async pipeline is mostly prologue.
MIN_SLICES_PER_SPLIT = 4


def split_count_for(
    tiles: int,
    slices: int,
    sm_count: int,
    blocks_per_sm: int,
    deep_slices: int = DEEP_SLICES_PER_SPLIT,
    min_slices: int = MIN_SLICES_PER_SPLIT,
    one_block_per_sm: bool = False,
) -> int:
    """K splits for a launch of `tiles` output tiles whose K loop is `slices` slices long, on `sm_count` SMs that
    each hold `blocks_per_sm` of its blocks.

    1. No split when one wave of resident blocks (sm_count x blocks_per_sm) has room for fewer than two per tile, or
       when K has fewer than 2 x `min_slices` slices.
    2. `deep` = slices // deep_slices splits keep every split at least `deep_slices` slices deep. Where the tiles
       times `deep` reach sm_count (every SM gets a block), take min(deep, one wave): the GPU is filled, and each
       further split would only add one more reduction per C element.
    3. Otherwise deep splits leave SMs idle. Taking the time as idle-SM cost fill / s plus reduction cost s / deep
       (fill = ceil(sm_count / tiles), the splits that give every SM a block; each term is 1 at its own end), the
       sum is least at s = sqrt(fill x deep): the geometric mean, rounded down, never past one wave nor past
       slices // min_slices.
    4. Lowered to the count that leaves no split empty (the kernel gives each split ceil(slices / splits) slices).

    `one_block_per_sm` replaces 2 and 3 with cuBLAS's split-K launches at 333x127x4096 (6 tiles x 22) and
    4096x64x4096 (16 x 8): sm_count // tiles splits, one block on as many SMs as that fills, none doubled up.
    """
    one_wave = (sm_count * blocks_per_sm) // max(1, tiles)
    if one_wave < 2 or slices < 2 * min_slices:
        return 1
    deep = max(1, slices // deep_slices)
    if one_block_per_sm:
        wanted = min(sm_count // max(1, tiles), slices // min_slices)
    elif tiles * deep >= sm_count:
        wanted = min(one_wave, deep)
    else:
        fill = math.ceil(sm_count / tiles)
        wanted = min(one_wave, slices // min_slices, math.isqrt(fill * deep))
    wanted = max(1, wanted)
    return math.ceil(slices / math.ceil(slices / wanted))


def stream_k_blocks(slices: int, sm_count: int, blocks_per_sm: int, min_slices: int = MIN_SLICES_PER_SPLIT) -> int:
    """Blocks of a stream-K launch (gridDim.x), which share the `slices` K slices of all output tiles equally, each
    block a run of consecutive slices that may cross tile boundaries: one wave of resident blocks
    (sm_count x blocks_per_sm), or fewer where a run would be shorter than `min_slices` slices."""
    return max(1, min(sm_count * blocks_per_sm, slices // min_slices))
