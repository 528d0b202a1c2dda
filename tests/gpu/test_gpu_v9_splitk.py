"""On a GPU: v9-splitk (split-K on v9's register-double-buffered body), each tile configuration, matches cuBLAS at
awkward sizes (1, 17, 129, non-multiples of the tile, K not a multiple of the slice, a split remainder where K's
slices do not divide by the split count) and at small-M*N, deep-K shapes, zeroes C before every launch (timed
launches stay correct: op "bench" checks the last timed launch again) and records its splits. Its stream-K
configurations (one wave of blocks, each an equal run of all tiles' K slices across tile boundaries) the same, and
those that pad N to a multiple of 4 where N % 4 != 0, copying B and C, C alone or B alone, or copying C back tile by
tile in the multiply (all refused where N % 4 == 0), and those with serial splits (split 0 stores, the others add after it: no zeroing launch, and the per-tile counts reset
for the next launch, which the check after the timed launches covers), and the stream-K ones in one launch (C zeroed,
B and C padded and C copied back by the kernel itself, between barriers over its grid)."""

from __future__ import annotations

import pytest

from kernels.registry import get_kernel
from kernels.tuning import V9_SPLITK_TUNING_CONFIGS
from profiling.gpu.jobs import BenchSettings
from profiling.shape import Shape
from tests.gpu.jobs import run_by_kernel_and_shape, selected_values

pytestmark = pytest.mark.gpu

SPECS = [get_kernel(c["id"]) for c in V9_SPLITK_TUNING_CONFIGS]
SHAPES = [
    Shape(1, 1, 1),
    Shape(17, 17, 17),
    Shape(129, 129, 129),
    Shape(127, 127, 8191),  # 8191 = 511 slices of 16 + 15: the last split ends inside a slice
    Shape(1, 4096, 4096),
    Shape(333, 1, 4097),  # N = 1: scalar adds; M not a multiple of any tile
    Shape(127, 129, 8189),  # N odd (atomicAdd per float), 512 slices over 43 or 64 splits: uneven last split
    Shape(130, 252, 1001),  # N % 4 == 0 (red.global.add.v4.f32), edge tiles in both directions
    Shape(1024, 1024, 8191),
    Shape(333, 4096, 4096),
]


@pytest.fixture(scope="module")
def benched(request: pytest.FixtureRequest) -> tuple[dict, dict[tuple[str, Shape], dict]]:
    chosen = selected_values(request, "config_id", [s.id for s in SPECS])
    specs = [s for s in SPECS if s.id in chosen]
    return run_by_kernel_and_shape("bench", specs, SHAPES, BenchSettings(repeats=2, warmup=1))


@pytest.mark.parametrize("config_id", [s.id for s in SPECS])
def test_v9_split_k_matches_cublas_and_stays_correct_over_timed_launches(benched, config_id: str) -> None:
    _device, results = benched
    mine = {shape: r for (kernel, shape), r in results.items() if kernel == config_id}
    assert set(mine) == set(SHAPES)
    pads_n = get_kernel(config_id).pads_n
    for shape, r in mine.items():
        if pads_n and shape.n % 4 == 0:
            # A configuration that pads N differs from its twin only where N % 4 != 0, and runs only there.
            assert r["status"] == "refused" and "only where N % 4 != 0" in r["error"], shape.label
            continue
        assert r["status"] == "ok", f"{config_id} at {shape.label}: {r['error']}"
        assert r["rel_error"] <= r["tolerance"] and r["rel_error_after_timing"] <= r["tolerance"], shape.label


def test_launch_facts_record_the_splits(benched) -> None:
    device, results = benched
    sms = device.get("sm_count")
    for (kernel, shape), r in results.items():
        if kernel not in {s.id for s in SPECS}:
            continue  # cuBLAS, run first at each shape
        spec = get_kernel(kernel)
        if spec.fused:
            # One launch: the kernel pads B and C where N % 4 != 0 and zeroes C where it does not.
            assert [launch["kernel"] for launch in r["launch"]["launches"]] == [spec.entry], (kernel, shape.label)
            assert r["launch"]["fused"] is True
            assert r["launch"].get("padded_n") == (-(-shape.n // 4) * 4 if shape.n % 4 else None), (kernel, shape.label)
        elif spec.pads_n:
            if shape.n % 4 == 0:
                continue  # refused
            # Three launches: C's copy zeroed (with B's written: the 16-byte kernel at N padded; without: the
            # padded-C kernel at N), then C copied back; or two: C (or C's copy) zeroed and B's copy written, then the
            # padded-B kernel at N adding into C (or the tile-copy kernel copying each completed tile back).
            assert r["launch"]["padded_n"] == -(-shape.n // 4) * 4, (kernel, shape.label)
            names = [launch["kernel"] for launch in r["launch"]["launches"]]
            expected = ["splitk_zero_c_pad_b", spec.entry] if spec.pads_b else ["splitk_zero_c", spec.narrow_entry]
            if spec.serial:  # split 0 stores into C's copy: no zeroing launch
                expected = [spec.narrow_entry]
            if not spec.launches_copy_back:  # B alone padded, or the multiply copies C back tile by tile
                assert names == ["splitk_zero_c_pad_b", spec.narrow_entry], (kernel, shape.label)
            else:
                assert names == [*expected, "splitk_unpad_c"], (kernel, shape.label)
        elif spec.split_k:
            assert "padded_n" not in r["launch"], (kernel, shape.label)
            entry = spec.narrow_entry if shape.n % 4 else spec.entry
            names = [launch["kernel"] for launch in r["launch"]["launches"]]
            assert names == ([entry] if spec.serial else ["splitk_zero_c", entry]), (kernel, shape.label)
        grid = spec.launch_grid(shape.m, shape.n, shape.k, sms)
        assert r["launch"]["grid"] == list(grid), (kernel, shape.label)
        if spec.stream_k:
            assert r["launch"]["stream_k"]["blocks"] == grid[0] and "split_k" not in r["launch"], (kernel, shape.label)
        else:
            assert r["launch"]["split_k"] == grid[2], (kernel, shape.label)
    # Uneven splits happen: some configuration splits 127x129x8189's 512 slices into a count that does not divide it.
    splits = [results[(s.id, Shape(127, 129, 8189))]["launch"]["split_k"] for s in SPECS if not s.stream_k]
    assert sorted({z for z in splits if 512 % z}) == [18, 22, 43] and all(z > 1 for z in splits)
    # Stream-K runs cross tiles: at 333x4096x4096 each 128x256 tile's 256 slices are shared by about 2.75 blocks.
    runs = {
        s.id: results[(s.id, Shape(333, 4096, 4096))]["launch"]["stream_k"]
        for s in SPECS
        if s.stream_k and not s.pads_n
    }
    assert runs["v9-splitk-128x256x16-w64x64-t8x16-s3-o3-sk"] == {
        "blocks": sms,
        "slices_per_block": -(-48 * 256 // sms),
    }
