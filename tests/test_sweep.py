"""Shape sweeps on the bundled H100 grid (v5, v8-async, v9-regdb and cuBLAS over 8 x 8 x 2 shapes, 2026-11-24):
the frame, the waves, the winners and both charts; the grid option's parsing."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from profiling.analysis.sweep import bundled_sweeps, grid_table, is_grid, sweep_frame, winners
from profiling.charts.sweep import sweep_heatmap, winner_map
from profiling.errors import InvalidInput
from profiling.gpu.jobs import MAX_GRID_SHAPES, parse_grid
from profiling.runs.results import load_document
from profiling.shape import Shape

ROOT = Path(__file__).resolve().parents[1]
SWEEP = ROOT / "results" / "h100-2026-11-24" / "sweep" / "sweep_grid.json"


@pytest.fixture(scope="module")
def frame():
    return sweep_frame(load_document(SWEEP))


def test_the_bundled_sweep_is_an_8_by_8_grid_at_two_k(frame) -> None:
    assert SWEEP in bundled_sweeps(ROOT / "results")
    assert set(frame["kernel"]) == {"cublas", "v5", "v8-async", "v9-regdb"} and is_grid(frame)
    assert frame.groupby("k")[["m", "n"]].nunique().to_dict("list") == {"m": [8, 8], "n": [8, 8]}
    assert (frame["status"] == "ok").all() and len(frame) == 4 * 8 * 8 * 2


def test_waves_follow_blocks_sms_and_occupancy(frame) -> None:
    v9 = frame[(frame["kernel"] == "v9-regdb") & (frame["m"] == 8192) & (frame["n"] == 16384)].iloc[0]
    assert v9["waves"] == pytest.approx(v9["blocks"] / (132 * v9["blocks_per_sm"]))
    assert frame[frame["kernel"] == "cublas"]["waves"].isna().all()  # no launch facts for the library


def test_the_winners_are_the_fastest_cells(frame) -> None:
    best = winners(frame, 8192, ["v5", "v8-async", "v9-regdb"])
    assert len(best) == 64 and set(best["winner"]) <= {"v8-async", "v9-regdb"}
    cell = frame[(frame["k"] == 8192) & (frame["m"] == 4096) & (frame["n"] == 4096) & (frame["kernel"] != "cublas")]
    top = cell.sort_values("tflops").iloc[-1]
    row = best[(best["m"] == 4096) & (best["n"] == 4096)].iloc[0]
    assert row["winner"] == top["kernel"] and row["lead_pct"] > 0
    assert set(winners(frame, 8192)["winner"]) == {"cublas"}  # cuBLAS wins every shape when it may


def test_heatmap_draws_values_and_wave_lines_on_cell_borders(frame) -> None:
    fig = sweep_heatmap(frame, "v9-regdb", 8192, "pct_cublas")
    heat = fig.data[0]
    table = grid_table(frame, "v9-regdb", 8192, "pct_cublas")
    assert list(heat.x) == [str(n) for n in table.columns] and list(heat.y) == [str(m) for m in table.index]
    assert heat.zmin == 0 and heat.zmax >= 100
    lines = [s for s in fig.layout.shapes if s.type == "line"]
    assert lines, "v9 at K=8192 crosses whole waves inside the grid"
    for s in lines:  # every segment lies on a border between cells (half-integer positions)
        assert all(math.isclose(v % 1, 0.5) for v in (s.x0, s.x1, s.y0, s.y1) if v != int(v)) or s.x0 == s.x1
    waves = grid_table(frame, "v9-regdb", 8192, "waves")
    vertical = [s for s in lines if s.x0 == s.x1]
    for s in vertical:
        i, j = int(s.y0 + 0.5), int(s.x0 - 0.5)
        assert math.ceil(waves.iat[i, j] - 1e-9) != math.ceil(waves.iat[i, j + 1] - 1e-9)
    assert "whole wave" in fig.data[1].name


def test_winner_map_gives_each_winner_its_own_colour(frame) -> None:
    fig = winner_map(frame, 8192, ["v5", "v8-async", "v9-regdb"])
    legend = [t for t in fig.data if t.type == "scatter"]
    assert {t.name for t in legend} == {"v8-async", "v9-regdb"}
    assert len({t.marker.color for t in legend}) == len(legend)
    assert "lead over the runner-up" in fig.layout.title.text


def test_parse_grid_orders_shapes_and_refuses_bad_grids() -> None:
    assert parse_grid("M=1,16,N=1024,K=4096,512") == [
        Shape(1, 1024, 4096),
        Shape(16, 1024, 4096),
        Shape(1, 1024, 512),
        Shape(16, 1024, 512),
    ]
    for bad, message in [
        ("M=1,N=2", "missing K"),
        ("M=1,M=2,N=3,K=4", "twice"),
        ("X=1", "not of the form"),
        ("M=0,N=1,K=1", "positive"),
        ("M=1,N=,K=1", "no values"),
    ]:
        with pytest.raises(InvalidInput, match=message):
            parse_grid(bad)
    many = ",".join(str(i) for i in range(1, 12))
    with pytest.raises(InvalidInput, match=f"at most {MAX_GRID_SHAPES}"):
        parse_grid(f"M={many},N={many},K={many}")
