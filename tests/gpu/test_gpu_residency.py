"""On a GPU: the kernels whose blocks wait for other blocks of their launch (wgmma-streamk's finishing pieces wait
for the flags of the blocks that ran the tile's earlier slices; a serial split-K tile's later splits wait for split
0, or for split 0 to have zeroed its tile) finish, correct, with all but four SMs held by blocks of another kernel,
so they never need all their blocks resident at once (profiling/gpu/residency.py runs each in a child process)."""

from __future__ import annotations

import pytest

from tests.gpu.jobs import run_probe

pytestmark = pytest.mark.gpu

FREE_SMS = 4
CASES = [
    # 192 tiles on 132 blocks: 60 tail tiles of 16.75 slices in runs of 8, some shared by three blocks.
    ("wgmma-streamk", "1024x6144x1072"),
    # 272 tiles of 9 slices: the 8 tail tiles shared by three blocks each.
    ("wgmma-streamk-bf16", "2064x4096x528"),
    # 96 units of two tiles on 66 clusters: 30 tail units of 16.75 slices, a cluster's two blocks on the same runs.
    ("wgmma-streamk-cluster", "1024x6144x1072"),
    # 2 tiles of 64 splits: 126 blocks wait for the two split-0 blocks (N = 127: the narrow twin).
    ("v9-splitk-64x128x16-w32x64-t8x8-s3-d8-ser", "127x127x8191"),
    # 2 splits a tile, 192 tiles: half the blocks wait.
    ("v9-splitk-64x128x16-w32x64-t8x8-s3-d8-ser", "333x4096x333"),
    # Zero-first splits: 6 tiles of 22 splits, whose 126 later splits wait (at their end) for the split-0 blocks to
    # have zeroed their tiles.
    ("v9-splitk-64x128x16-w32x64-t8x8-s4-o3-fill-zf", "333x127x4096"),
    # 64 tiles of 8 splits (the 16-byte kernel).
    ("v9-splitk-64x64x16-w32x64-t8x8-s3-d32-zf", "4096x64x4096"),
    # Zero-first splits into C's padded copy: 4 tiles of 64 splits, 252 blocks waiting on 4.
    ("v9-splitk-64x64x16-w32x64-t8x8-s3-d8-zf-padc", "127x127x8191"),
]


@pytest.fixture(scope="module", params=CASES, ids=lambda case: f"{case[0]}@{case[1]}")
def probed(request: pytest.FixtureRequest) -> dict:
    kernel_id, shape = request.param
    result = run_probe(
        "-m profiling.gpu.residency", "--kernel", kernel_id, "--shape", shape, "--free-sms", str(FREE_SMS)
    )
    if result.get("refused"):
        pytest.skip(result["refused"])
    return result


def test_finishes_correct_on_the_sms_left_free(probed: dict) -> None:
    assert probed["free_sms"] == FREE_SMS
    assert probed["finished"], probed
    assert probed["verified"], probed


def test_the_other_sms_were_held_until_it_had_finished(probed: dict) -> None:
    # Every holder sat on its own SM and was let go by the host after the kernel finished, none by its time-out.
    assert probed["holders_on_distinct_sms"] == probed["held_sms"] == probed["sm_count"] - FREE_SMS
    assert probed["holders_released"] == probed["held_sms"]


def test_it_ran_on_the_few_sms_left(probed: dict) -> None:
    # More blocks than 4 SMs hold at once, so they ran in turns: far slower than on the whole GPU.
    assert probed["grid"][0] * probed["grid"][1] * probed["grid"][2] > FREE_SMS
    assert probed["ms_with_sms_held"] > 5 * probed["ms_whole_gpu"], probed
