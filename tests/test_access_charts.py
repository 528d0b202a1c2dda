"""The indexing pictures (profiling/charts/access.py) on the real models: what each trace holds, lane by lane,
agrees with the access analysis (sectors, wavefronts, n-way), for every modelled kernel."""

from __future__ import annotations

import numpy as np
import pytest

from kernels.indexing import MODELS, model_for
from profiling.analysis.access import (
    access_record,
    bank_schedule,
    global_cost,
    lane_bytes,
    shared_cost,
    tile_map,
    warp_view,
)
from profiling.charts.access import access_figure, access_pair_figure, block_tile_figure, matrix_figure
from profiling.shape import Shape

S1024 = Shape(1024, 1024, 1024)


def first(kernel: str, pred, shape: Shape = S1024, block=(0, 0), warp: int = 0, step: int = 0):
    model = model_for(kernel)
    accs = model.step_accesses(shape, block, warp, step) + model.epilogue_accesses(shape, block, warp)
    return next(a for a in accs if pred(a))


def traces(fig, name_part: str) -> list:
    return [t for t in fig.data if name_part in (t.name or "")]


def markers(fig) -> list:
    return [t for t in fig.data if t.mode == "markers" and t.x and t.x[0] is not None and t.x[0] >= 0]


def test_v1_against_v1_coalesced_global_load_of_a() -> None:
    v1 = first("v1", lambda a: a.array == "A")
    co = first("v1-coalesced", lambda a: a.array == "A")
    fig = access_pair_figure([("v1", v1), ("v1-coalesced", co)])
    left, right = traces(fig, "v1: lane reads"), traces(fig, "v1-coalesced: lane reads")
    assert len(left) == len(right) == 1
    assert len(left[0].y) == 32 and sorted(left[0].y) == list(range(32))  # every lane, one sector each
    assert len(set(left[0].x)) == global_cost(v1).sectors == 32  # a row of A apart: 32 sectors
    assert len(set(right[0].x)) == global_cost(co).sectors == 1  # one address for the warp
    assert fig.layout.title.text == "v1: 32 sectors, 32 lines per request · v1-coalesced: 1 sector, 1 line per request"
    hover = left[0].hovertext[5]
    assert "lane 5" in hover and "byte address 20,480" in hover and "sector 640" in hover and "line 160" in hover
    assert fig.layout.xaxis.title.text == "32 B sector (byte offset)"
    assert len(fig.layout.shapes) == 16 + 1  # every other 128 B line banded: v1 touches 32 lines, v1-coalesced 1
    assert fig.layout.yaxis.title.text == "lane"


def test_a_coalesced_store_spans_four_sectors_of_one_line() -> None:
    acc = first("v1-coalesced", lambda a: a.array == "C")
    fig = access_figure("v1-coalesced", acc)
    (trace,) = traces(fig, "lane writes")
    assert len(set(trace.x)) == 4 and len(trace.x) == 32
    assert "1 line" in fig.layout.title.text


def test_v3_against_v4_shared_reads_of_the_a_tile() -> None:
    v3 = first("v3", lambda a: a.sass == "LDS.128" and a.array == "aTile")
    v4 = first("v4", lambda a: a.sass == "LDS.128" and a.array == "aTile")
    fig = access_pair_figure([("v3", v3), ("v4", v4)])
    words, nway = markers(fig)[:2], [t for t in fig.data if t.name == "n-way"]
    assert len(words) == 2 and len(nway) == 2
    for trace, text, acc in zip(words, nway, (v3, v4), strict=True):
        cost = shared_cost(acc)
        assert len(trace.x) == 32 * 4  # every lane's four words
        assert max(trace.marker.color) == cost.wavefronts
        assert max(int(v) for v in text.text if v) == cost.degree
    assert (shared_cost(v3).degree, shared_cost(v4).degree) == (8, 2)
    assert fig.layout.coloraxis.cmax == 32  # one colour scale for both panels: v3's 32 wavefronts
    assert fig.layout.xaxis.title.text == "bank (4 B each)"
    assert "lane 0" in words[0].hovertext[0] and "bank 0" in words[0].hovertext[0]
    assert "wavefront 1 of 32" in words[0].hovertext[0]


@pytest.mark.parametrize("kernel", list(MODELS))
def test_every_instruction_draws_and_its_n_way_and_wavefronts_are_the_models(kernel: str) -> None:
    model = model_for(kernel)
    shape = Shape(1008, 1008, 1008)
    drawn = set()
    for acc in model.step_accesses(shape, (0, 0), 1, 1) + model.epilogue_accesses(shape, (0, 0), 1):
        if acc.space == "shared":
            cost = shared_cost(acc)
            schedule = bank_schedule(acc)
            assert int(schedule.wavefront.max()) + 1 == cost.wavefronts
            assert int(schedule.per_bank.max()) == cost.degree
        if (acc.category, acc.sass, acc.array) in drawn:
            continue  # one picture per instruction form and array keeps the test quick
        drawn.add((acc.category, acc.sass, acc.array))
        fig = access_figure(kernel, acc)
        if acc.space == "shared":
            (text,) = [t for t in fig.data if t.name == "n-way"]
            assert max(int(v) for v in text.text if v) == cost.degree
        else:
            (trace,) = traces(fig, "a 32 B sector")
            assert len(set(trace.x)) == global_cost(acc).sectors
            assert set(trace.y) == set(np.flatnonzero(acc.active).tolist())


def test_inactive_lanes_are_drawn_apart() -> None:
    shape = Shape(1000, 1000, 1000)
    acc = first("v1-coalesced", lambda a: a.array == "B", shape, block=(31, 0), warp=0)  # columns 992..1023
    assert acc.active.sum() == 8
    fig = access_figure("v1-coalesced", acc)
    (idle,) = [t for t in fig.data if t.name.startswith("inactive lane")]
    assert sorted(idle.y) == list(range(8, 32)) and idle.showlegend


def test_mixed_spaces_are_refused() -> None:
    with pytest.raises(ValueError, match="one memory space"):
        access_pair_figure(
            [("v3", first("v3", lambda a: a.space == "global")), ("v4", first("v4", lambda a: a.space == "shared"))]
        )


def test_matrix_view_marks_the_block_its_strips_and_the_k_slice() -> None:
    model = model_for("v3")
    view = warp_view(model, S1024, (2, 5), 0, 3)
    fig = matrix_figure(view, model.bk)
    rects = [(s.x0, s.x1, s.y0, s.y1) for s in fig.layout.shapes]
    assert (640, 768, 256, 384) in rects  # C tile: v3 puts blockIdx.x on rows (256..383), y on columns
    assert (0, 1024, 256, 384) in rects  # A rows it reads, along all of K
    assert (24, 32, 256, 384) in rects  # step 3's K slice of A: k 24..31
    assert (640, 768, 24, 32) in rects  # and of B
    names = [t.name for t in fig.data if t.name]
    assert names[:3] == [
        "chosen block's C tile",
        "A rows and B columns<br>it reads along K",
        "K slice of step 3 (k 24..31)",
    ]
    assert "8 x 8 blocks of 128 x 128" in fig.layout.title.text
    assert fig.layout.xaxis3.title.text == "k (element)" and fig.layout.yaxis3.title.text == "row (element)"


@pytest.mark.parametrize(
    "kernel,lane_cells", [("v1", 32), ("v1-coalesced", 32), ("v3", 32 * 64), ("v9-regdb", 32 * 128)]
)
def test_block_tile_colours_the_chosen_warps_elements_by_lane(kernel: str, lane_cells: int) -> None:
    model = model_for(kernel)
    view = warp_view(model, S1024, (1, 1), 1, 0)
    fig = block_tile_figure(tile_map(model, S1024, (1, 1)), view)
    lanes = next(t for t in fig.data if t.type == "heatmap" and t.name == "warp 1")
    z = np.asarray(lanes.z, dtype=float)
    assert np.count_nonzero(~np.isnan(z)) == lane_cells
    assert np.nanmin(z) == 0 and np.nanmax(z) == 31


def test_v1_and_v1_coalesced_warps_lie_across_each_other() -> None:
    """threadIdx.x walks rows in v1 (a warp is a column of C), columns in v1-coalesced (a row)."""
    shapes = {}
    for kernel in ("v1", "v1-coalesced"):
        model = model_for(kernel)
        fig = block_tile_figure(tile_map(model, S1024, (0, 0)), warp_view(model, S1024, (0, 0), 0, 0))
        z = np.asarray(next(t for t in fig.data if t.name == "warp 0").z, dtype=float)
        rows, cols = np.nonzero(~np.isnan(z))
        shapes[kernel] = (len(set(rows)), len(set(cols)))
    assert shapes == {"v1": (32, 1), "v1-coalesced": (1, 32)}


@pytest.mark.parametrize("kernel", list(MODELS))
def test_each_lanes_sectors_and_banks_are_those_its_bytes_fall_in(kernel: str) -> None:
    """The warp record (the access command's lanes, the Indexing page's tables): an active lane lists the 32-byte
    sectors from its first to its last byte (addr + width - 1) and the banks of the 4-byte words it touches (word
    mod 32, never byte mod 32), as the bank picture places them; the union of the sectors is the request's count."""
    model = model_for(kernel)
    shape = Shape(1008, 1008, 1008)
    for acc in model.step_accesses(shape, (0, 0), 1, 1) + model.epilogue_accesses(shape, (0, 0), 1):
        record = access_record(acc)
        touched = lane_bytes(acc)
        active = np.flatnonzero(acc.active)
        if acc.space == "global":
            union: set[int] = set()
            for lane in active:
                sectors = sorted(set((touched[lane] // 32).tolist()))
                assert record["lanes"][lane]["sectors"] == sectors, (acc.label, lane)
                union |= set(sectors)
            assert len(union) == global_cost(acc).sectors, acc.label
        else:
            schedule = bank_schedule(acc)
            for lane in active:
                banks = sorted(set((touched[lane] // 4 % 32).tolist()))
                assert record["lanes"][lane]["banks"] == banks, (acc.label, lane)
                assert banks == sorted(set(schedule.bank[schedule.lane == lane].tolist())), (acc.label, lane)


def test_a_16_byte_lane_spans_one_sector_and_four_banks() -> None:
    """v6's A loads are 16 bytes per lane at 16-byte-aligned addresses: one sector each, not two; its shared reads
    of a 16-byte word group touch four consecutive banks."""
    ldg = first("v6-vectorized", lambda a: a.space == "global" and a.width == 16)
    lanes = access_record(ldg)["lanes"]
    assert all(len(lane["sectors"]) == 1 for lane in lanes if lane["active"])
    lds = first("v6-vectorized", lambda a: a.space == "shared" and a.width == 16 and a.op == "ld")
    lane0 = access_record(lds)["lanes"][0]
    start = lane0["address"] // 4 % 32
    assert lane0["banks"] == sorted((start + i) % 32 for i in range(4))
