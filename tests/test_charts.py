"""Roofline and occupancy figures: traces, log axes, labels, hover content, colours."""

from __future__ import annotations

import colorsys
import math
import os
import re
import subprocess
import sys
import zlib

import pandas as pd
import pytest

from kernels.catalog import CATALOG
from kernels.operations import OPERATIONS
from profiling.charts import (
    LEVEL_SYMBOLS,
    PALETTE,
    algorithmic_point,
    kernel_color,
    occupancy_figures,
    review_roofline,
    roofline_figure,
    roofline_points,
)
from profiling.charts.roofline import WEBGL_POINTS, operation_point, roofline, with_fallback
from profiling.charts.style import GROUP_TITLES, kernel_group
from profiling.device_model import Ceiling, Ceilings, DeviceInfo, best_ceilings
from profiling.errors import InvalidInput
from profiling.shape import Shape

N = 4096


@pytest.fixture
def ceilings() -> Ceilings:
    return Ceilings(
        fp32_flops=Ceiling(66.9e12, "ncu report"),
        tensor_fp16_flops=Ceiling(989.4e12, "built-in table: H100 SXM"),
        dram_bytes_per_s=Ceiling(3.35e12, "ncu report"),
        l2_bytes_per_s=Ceiling(10e12, "ncu report"),
        device_name="H100 SXM",
    )


@pytest.fixture
def points() -> pd.DataFrame:
    return pd.DataFrame(
        [
            algorithmic_point("v3", N, N, N, 3.1e-3),
            algorithmic_point("v1", N, N, N, 0.275),
            # A memory-bound point: 1 GFLOP over 1 GB of DRAM traffic in 1 ms (1 FLOP/B, 1 TFLOP/s).
            {"kernel": "v1", "label": "big", "level": "DRAM", "flops": 1e9, "bytes": 1e9, "seconds": 1e-3},
            {
                "kernel": "v3",
                "label": f"{N}x{N}x{N}",
                "level": "L2",
                "flops": 2 * N**3,
                "bytes": 4e10,
                "seconds": 3.1e-3,
            },
            {
                "kernel": "v3",
                "label": f"{N}x{N}x{N}",
                "level": "L1",
                "flops": 2 * N**3,
                "bytes": 8e10,
                "seconds": 3.1e-3,
            },
        ]
    )


def test_algorithmic_point():
    p = algorithmic_point("v2", 1024, 512, 256, 1e-3, bytes_per_element=2)
    assert p["flops"] == 2 * 1024 * 512 * 256
    assert p["bytes"] == 2 * (1024 * 256 + 256 * 512 + 1024 * 512)
    assert p["level"] == "algorithmic" and p["label"] == "1024x512x256"


def test_kernel_color_is_stable_and_distinct_for_catalog_kernels():
    ids = [spec.id for spec in CATALOG]
    colors = [kernel_color(i) for i in ids]
    # Every catalog kernel has its own colour, and none is a foreign kernel's colour.
    assert len(set(colors)) == len(ids)
    assert not set(colors) & set(PALETTE)
    # One family per group: the same hue (within a group), a darker shade per later step.
    for group in {spec.group for spec in CATALOG} - {"reference"}:
        members = [kernel_color(s.id) for s in CATALOG if s.group == group]
        lightness = [
            sum(int(c) for c in re.findall(r"\d+", col)) if col.startswith("rgb") else int(col[1:3], 16) * 3
            for col in members
        ]
        assert lightness == sorted(lightness, reverse=True), (group, members)
    hues = {
        g: _hue(kernel_color(next(s.id for s in CATALOG if s.group == g))) for g in ("ladder", "beyond", "tensor-core")
    }
    assert len({round(h, 1) for h in hues.values()}) == 3, hues
    # The library references are greys (the dashed reference lines of the TFLOP/s chart).
    assert all(
        len(set(kernel_color(s.id)[1:].lower()[i : i + 2] for i in (0, 2, 4))) == 1
        for s in CATALOG
        if s.group == "reference"
    )
    assert _hue(kernel_color("v1")) == pytest.approx(_hue(kernel_color("v5")), abs=0.05)
    # Other names take a crc32 of the name: the same colour in every process, whatever Python's hash seed.
    name = "someone-elses-kernel"
    assert kernel_color(name) == PALETTE[zlib.crc32(name.encode()) % len(PALETTE)]
    code = f"from profiling.charts import kernel_color; print(kernel_color({name!r}))"
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, env=env, timeout=120
        )
        assert done.stdout.strip() == kernel_color(name), done.stderr


def _hue(color: str) -> float:
    r, g, b = (int(c) / 255 for c in re.findall(r"\d+", color)[:3])
    return colorsys.rgb_to_hsv(r, g, b)[0]


def test_binding_ceiling_and_percent(points, ceilings):
    df = roofline_points(points, ceilings).set_index(["kernel", "level", "label"])
    fast = df.loc[("v3", "algorithmic", f"{N}x{N}x{N}")]
    assert fast["intensity"] == pytest.approx(2 * N**3 / (4 * 3 * N * N))
    assert fast["binding_ceiling"] == "FP32 compute"
    assert fast["pct_of_roof"] == pytest.approx(100 * 2 * N**3 / 3.1e-3 / 66.9e12)
    slow = df.loc[("v1", "DRAM", "big")]
    assert slow["binding_ceiling"] == "DRAM bandwidth"
    assert slow["roof"] == pytest.approx(3.35e12)
    assert slow["pct_of_roof"] == pytest.approx(100 * 1e12 / 3.35e12)
    # No L1 ceiling known: only compute can bind.
    assert df.loc[("v3", "L1", f"{N}x{N}x{N}")]["binding_ceiling"] == "FP32 compute"


def test_tensor_points_use_tensor_ceiling(ceilings):
    point = {**algorithmic_point("wmma", N, N, N, 0.5e-3, bytes_per_element=2), "compute": "tensor"}
    df = roofline_points(pd.DataFrame([point]), ceilings)
    assert df["binding_ceiling"].iloc[0] == "FP16 tensor compute"
    assert df["pct_of_roof"].iloc[0] == pytest.approx(100 * 2 * N**3 / 0.5e-3 / 989.4e12)


def test_operation_points_take_element_size_and_ceiling_from_the_operation() -> None:
    half = operation_point("wmma-addmm", Shape(N, N, N), 1e-3, OPERATIONS["hgemm_addmm"])
    single = operation_point("v5", Shape(N, N, N), 1e-3, OPERATIONS["sgemm"])
    foreign = operation_point("my_hgemm", Shape(N, N, N), 1e-3, None)
    assert half["compute"] == "tensor" and single["compute"] == foreign["compute"] == "fp32"
    assert half["bytes"] == 2 * 3 * N * N and single["bytes"] == foreign["bytes"] == 4 * 3 * N * N
    assert half["flops"] == single["flops"] == 2 * N**3 and half["label"] == f"{N}x{N}x{N}"


def _run(run_id: int, *results: dict) -> dict:
    return {"id": run_id, "label": f"run {run_id}", "results": [{"m": N, "n": N, "k": N, **r} for r in results]}


def test_review_roofline_asks_the_operation_table_not_the_kernel_name(ceilings):
    def tensor_ceiling_drawn(run: dict) -> bool:
        return any((t.name or "").startswith("FP16 tensor") for t in review_roofline(run, [], ceilings).data)

    # a catalog id, a bench row's own operation, and a foreign name that only looks like half precision
    assert tensor_ceiling_drawn(_run(1, {"kernel": "wmma-async", "time_median_ms": 1.0}))
    row = {"kernel": "mine", "time_median_ms": 1.0, "extra": {"operation": "hgemm_addmm"}}
    assert tensor_ceiling_drawn(_run(2, row))
    assert not tensor_ceiling_drawn(_run(3, {"kernel": "my_hgemm_wmma", "time_median_ms": 1.0}))


def test_roofline_figure_traces_axes_and_labels(points, ceilings):
    fig = roofline_figure(points, ceilings, title="H100")
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert fig.layout.title.text == "H100"
    names = [t.name for t in fig.data]
    assert "FP32 peak 66.9 TFLOP/s (ncu report)" in names
    assert "DRAM bandwidth 3.35 TB/s (ncu report)" in names
    assert "L2 bandwidth 10 TB/s (ncu report)" in names
    assert not any(n.startswith("FP16 tensor") for n in names)  # only when asked
    assert not any(n.startswith("L1 bandwidth") for n in names)  # not known
    point_traces = [t for t in fig.data if t.legendgroup and t.legendgroup.startswith("kernel:")]
    assert sum(len(t.x) for t in point_traces) == len(points)
    # One trace per (kernel, level); only the first of each kernel shows in the legend.
    assert len(point_traces) == 5
    assert sorted(t.name for t in point_traces if t.showlegend) == ["v1", "v3"]
    for t in point_traces:
        assert t.marker.color == kernel_color(t.name)
        assert t.marker.symbol in LEVEL_SYMBOLS.values()
    symbols = {t.customdata[0][2]: t.marker.symbol for t in point_traces}
    assert symbols == {level: LEVEL_SYMBOLS[level] for level in symbols}


def test_roofline_diagonal_meets_compute_ceiling(points, ceilings):
    fig = roofline_figure(points, ceilings)
    dram = next(t for t in fig.data if t.name.startswith("DRAM bandwidth"))
    assert dram.x[-1] == pytest.approx(66.9e12 / 3.35e12)
    assert dram.y[-1] == pytest.approx(66.9e12)
    assert dram.y[0] == pytest.approx(3.35e12 * dram.x[0])


def test_roofline_hover_content(points, ceilings):
    fig = roofline_figure(points, ceilings)
    trace = next(t for t in fig.data if t.legendgroup == "kernel:v1" and t.customdata[0][2] == "DRAM")
    kernel, label, level, intensity, achieved, pct, binds = trace.customdata[0]
    assert (kernel, label, level) == ("v1", "big", "DRAM")
    assert intensity == pytest.approx(1.0) and achieved == "1 TFLOP/s"
    assert pct == pytest.approx(100 / 3.35) and binds == "DRAM bandwidth"
    for field in ("arithmetic intensity", "achieved", "% of the", "ceiling", "level"):
        assert field in trace.hovertemplate


def test_roofline_tensor_flag(points, ceilings):
    fig = roofline_figure(points, ceilings, show_tensor=True)
    tensor = [t for t in fig.data if t.name.startswith("FP16 tensor peak")]
    assert len(tensor) == 1 and "built-in table: H100 SXM" in tensor[0].name
    dram = next(t for t in fig.data if t.name.startswith("DRAM bandwidth"))
    assert dram.x[-1] == pytest.approx(989.4e12 / 3.35e12)


def test_roofline_with_table_ceilings_and_bad_input():
    c = best_ceilings(device_name="NVIDIA L4")
    fig = roofline_figure(pd.DataFrame([algorithmic_point("v2", 512, 512, 512, 1e-4)]), c)
    assert "built-in table: L4" in fig.data[0].name
    assert "L4" in fig.layout.title.text
    with pytest.raises(InvalidInput, match="lack column"):
        roofline_figure(pd.DataFrame([{"kernel": "v1"}]), c)
    bad = algorithmic_point("v2", 8, 8, 8, 1e-6) | {"level": "L3"}
    with pytest.raises(InvalidInput, match="unknown roofline level"):
        roofline_figure(pd.DataFrame([bad]), c)


def test_occupancy_figures():
    threads_fig, regs_fig, smem_fig = occupancy_figures("9.0", 256, 128, 8192)
    assert len(threads_fig.data[0].x) == 32
    assert len(regs_fig.data[0].x) == 255
    assert len(smem_fig.data[0].x) == 227 * 1024 // 128 + 1
    assert "Block Size" in threads_fig.layout.title.text and "Register" in regs_fig.layout.title.text
    for fig, x in ((threads_fig, 256), (regs_fig, 128), (smem_fig, 8192)):
        marker = fig.data[1]
        assert marker.name == "this kernel"
        assert list(marker.x) == [x] and list(marker.y) == [16]
        text = fig.layout.annotations[0].text
        assert "25.0% occupancy (16/64 warps)" in text
        assert "registers: 128 per thread allow 2 blocks of 256 threads" in text
    # The registers curve drops to 16 warps at 128 registers and is 64 at 32 registers.
    curve = dict(zip(regs_fig.data[0].x, regs_fig.data[0].y, strict=True))
    assert curve[128] == 16 and curve[32] == 64


def test_occupancy_note_sits_above_the_graph_one_limit_a_line():
    """v1's launch in the default bundle (1024 threads, 32 registers, 100 % occupancy, two binding limits): inside
    the plot the note covered the curve's top and the ring at 64 warps, and at 1024 px its one line ran out of the
    chart. It sits above the plot, the occupancy and each limit on a line, with the top margin to hold them."""
    for fig in occupancy_figures("9.0", 1024, 32, 0):
        note = fig.layout.annotations[0]
        assert note.text == (
            "100.0% occupancy (64/64 warps)<br>warps: 32 warps per block allow 2 blocks of 1024 threads in 64 warp "
            "slots<br>registers: 32 per thread allow 2 blocks of 1024 threads"
        )
        assert (note.yref, note.y, note.yanchor) == ("paper", 1.02, "bottom") and fig.layout.margin.t == 60 + 17 * 3
        assert list(fig.data[1].y) == [64]


def test_occupancy_figures_reject_impossible_config():
    with pytest.raises(InvalidInput):
        occupancy_figures("9.0", 2048, 32, 0)


# --- readable charts --------------------------------------------------------------------


def test_roofline_axis_stays_on_the_data_and_names_the_outlier(points, ceilings):
    far = {"kernel": "hgemm", "label": "L1 outlier", "level": "L1", "flops": 1.1e13, "bytes": 1e6, "seconds": 1e-2}
    fig = roofline_figure(pd.concat([points, pd.DataFrame([far])], ignore_index=True), ceilings)
    ridge = 66.9e12 / 3.35e12
    x_hi = 10 ** fig.layout.xaxis.range[1]
    assert x_hi <= 10 ** (math.ceil(math.log10(ridge)) + 2) < 1.1e7  # two decades past the ridge, not 1e8
    outlier = next(t for t in fig.data if t.legendgroup == "kernel:hgemm")
    assert list(outlier.x) == [x_hi] and outlier.customdata[0][3] == pytest.approx(1.1e7)  # the hover keeps the truth
    notes = " ".join(a.text for a in fig.layout.annotations)
    assert "hgemm L1 1.1e+07" in notes and "right edge" in notes


def test_roofline_ticks_carry_units_and_the_legend_sits_below(points, ceilings):
    fig = roofline_figure(points, ceilings)
    assert all(t.endswith("FLOP/s") and " " in t for t in fig.layout.yaxis.ticktext)
    assert "1 TFLOP/s" in fig.layout.yaxis.ticktext and not any(t.endswith("B") for t in fig.layout.yaxis.ticktext)
    assert fig.layout.legend.orientation == "h" and fig.layout.legend.y < 0
    key = [t.name for t in fig.data if t.legendgroup == "levels"]
    assert key == ["DRAM", "L2", "L1", "algorithmic (A+B+C once)"]


def test_measured_ceilings_keep_the_tensor_roof(ceilings):
    measured = Ceilings(fp32_flops=Ceiling(65e12, "measured 2026-11-22"), dram_bytes_per_s=Ceiling(3e12, "measured"))
    merged = with_fallback(measured, ceilings)
    assert merged.fp32_flops.value == 65e12 and merged.dram_bytes_per_s.value == 3e12
    assert merged.tensor_fp16_flops == ceilings.tensor_fp16_flops and merged.l2_bytes_per_s == ceilings.l2_bytes_per_s
    point = {**algorithmic_point("wmma", N, N, N, 0.5e-3, bytes_per_element=2), "compute": "tensor"}
    names = [t.name for t in roofline(pd.DataFrame([point]), merged, "t").data]
    assert any(n.startswith("FP16 tensor peak") for n in names)


def test_device_property_ceilings_do_not_claim_a_live_gpu():
    c = best_ceilings(device_info=DeviceInfo(name="NVIDIA H200", cc="9.0", sm_count=132, max_sm_clock_mhz=1980))
    fig = roofline_figure(pd.DataFrame([algorithmic_point("v5", N, N, N, 6e-3)]), c)
    assert not any("live device" in (t.name or "") for t in fig.data)
    assert any("(device properties)" in (t.name or "") for t in fig.data)


def test_many_points_draw_with_webgl_and_say_so(ceilings):
    many = pd.DataFrame(
        [algorithmic_point(f"k{i % 7}", 256 + i, 256, 256, 1e-4 * (1 + i % 13)) for i in range(WEBGL_POINTS + 1)]
    )
    fig = roofline_figure(many, ceilings)
    assert {type(t).__name__ for t in fig.data if (t.legendgroup or "").startswith("kernel:")} == {"Scattergl"}
    assert any("WebGL" in a.text for a in fig.layout.annotations)
    few = roofline_figure(many.head(50), ceilings)
    assert {type(t).__name__ for t in few.data if (t.legendgroup or "").startswith("kernel:")} == {"Scatter"}


def test_kernel_legend_is_grouped_by_family(points, ceilings):
    fig = roofline_figure(points, ceilings)
    first = next(t for t in fig.data if t.legendgroup == "kernel:v3" and t.showlegend)
    assert fig.layout[first.legend].title.text == "SGEMM ladder"
    # every kernel sits in its own family's legend, each legend on rows of its own under the previous one
    entries = [t for t in fig.data if (t.legendgroup or "").startswith("kernel:") and t.showlegend]
    for t in entries:
        assert fig.layout[t.legend].title.text == GROUP_TITLES[kernel_group(t.name)], t.name
    legends = sorted({t.legend for t in entries}, key=lambda lid: int(lid.removeprefix("legend")))
    tops = [fig.layout.legend.y, *(fig.layout[lid].y for lid in legends)]
    assert tops == sorted(tops, reverse=True) and len(set(tops)) == len(tops)
    ranks = {t.name: t.legendrank for t in fig.data if (t.legendgroup or "").startswith("kernel:") and t.showlegend}
    assert ranks["v1"] < ranks["v3"]


def test_figures_are_drawn_on_plotly_white_each_with_its_own_copy(points, ceilings):
    import plotly.io as pio

    roof = roofline_figure(points, ceilings)
    occupancy = occupancy_figures("9.0", 256, 128, 8192)[0]
    white = pio.templates["plotly_white"]
    assert roof.layout.template == white and occupancy.layout.template == white
    assert roof.to_dict()["layout"]["template"] == white.to_plotly_json()
    roof.layout.template.layout.font.size = 30  # a figure's template is its own: the registered one is unchanged
    assert white.layout.font.size is None and occupancy.layout.template.layout.font.size is None


def test_percent_bars_over_an_unsteady_cublas_are_hatched_and_say_so() -> None:
    """h100-2026-11-25/splitk_v9 (not a grid run, so its Benchmark page draws the % bars): cuBLAS's launches at
    64x64x8191 were unsteady (p90 1.9x p10: the bars there read 88-189 %), so each of the six kernels' bar there is
    hatched with the reason in its hover and
    the note under the title; every other bar, and every bar of a steady bundle, is plain."""
    from profiling.app import tables
    from profiling.app.bundles import discover_bundles, load_bench
    from profiling.charts.bench import UNSTEADY_LEGEND, pct_cublas_figure

    by_name = {b.name: b for b in discover_bundles()}
    fig = pct_cublas_figure(tables.bench_frame(load_bench(by_name["h100-2026-11-25/splitk_v9"])))
    hatched = {
        (trace.name, x, note)
        for trace in fig.data
        if trace.marker.pattern.shape == "/"
        for x, note in zip(trace.x, trace.customdata, strict=True)
    }
    # Over the plain bars of the same kernel (same offset group), out of the legend.
    plain = {t.offsetgroup: t for t in fig.data if t.showlegend is not False}
    for trace in (t for t in fig.data if t.marker.pattern.shape == "/"):
        assert trace.showlegend is False and plain[trace.offsetgroup].name == trace.name
        assert plain[trace.offsetgroup].marker.pattern.shape is None
    assert {x for _, x, _ in hatched} == {"64x64x8191"} and len(hatched) == 6
    assert {note for _, _, note in hatched} == {"<br>cuBLAS unsteady here (p90 1.9x p10): rerun"}
    assert fig.layout.title.text.endswith(f"<sup>{UNSTEADY_LEGEND}</sup>")
    steady = pct_cublas_figure(tables.bench_frame(load_bench(by_name["h100-2026-11-24/auto_round3"])))
    assert all(t.marker.pattern.shape is None for t in steady.data) and "<sup>" not in steady.layout.title.text


def test_a_benchmark_of_one_size_draws_a_named_bar_per_kernel() -> None:
    """results/h200-2026-11-30/catalog_2048/ (every catalog kernel at 2048³ on an H200): over one size a line chart is
    a column of dots told apart only by colour, so both charts draw a bar per kernel, named on the axis in catalog
    order, FP32 before tensor core, cuBLAS hatched, at the measured value."""
    from profiling.app import tables
    from profiling.app.bundles import discover_bundles, load_bench
    from profiling.charts.bench import pct_cublas_figure, tflops_figure

    by_name = {b.name: b for b in discover_bundles()}
    frame = tables.bench_frame(load_bench(by_name["h200-2026-11-30/catalog_2048"]))
    fig = tflops_figure(frame)
    assert fig.layout.title.text == "TFLOP/s at 2048³" and {t.type for t in fig.data} == {"bar"}
    fp32 = [t.name for t in fig.data if t.yaxis == "y"]
    tensor = [t.name for t in fig.data if t.yaxis == "y2"]
    assert fp32[:4] == ["cublas", "v1", "v1-coalesced", "v2"] and fp32[-1] == "sgemm-auto" and len(fp32) == 18
    assert tensor[:3] == ["cublas-addmm", "cublas-hgemm", "cublas-addmm-bf16"] and len(tensor) == 16
    assert fig.layout.yaxis.autorange == "reversed"  # the first kernel on top
    bar = {t.name: t for t in fig.data}
    assert round(float(bar["v9-regdb"].x[0]), 2) == 48.42 and round(float(bar["cublas"].x[0]), 2) == 50.23
    assert {n for n, t in bar.items() if t.marker.pattern.shape == "/"} == {
        "cublas",
        "cublas-addmm",
        "cublas-hgemm",
        "cublas-addmm-bf16",
    }
    pct = pct_cublas_figure(frame)
    names = [t.name for t in pct.data]
    assert names[0] == "v1" and names.index("sgemm-auto") < names.index("wmma-addmm") and len(names) == 30
    assert all(t.orientation == "h" for t in pct.data) and pct.layout.showlegend is False
    assert round(float(next(t for t in pct.data if t.name == "v9-regdb").x[0]), 1) == 96.4
    assert pct.layout.shapes[0].x0 == 100 and pct.layout.xaxis.title.text == "% of cuBLAS at 2048³"


def test_the_whole_catalog_over_two_sizes_draws_a_row_per_kernel_and_a_panel_per_size() -> None:
    """results/h200-2026-12-01/catalog/ (every catalog kernel at 1024³ and 4096³): 30 kernels' bars in two groups
    were told apart by 30 colours in a legend; over at most SIZE_PANELS_MAX sizes, more than LEGEND_KERNELS_MAX kernels
    are a row per kernel named on the shared axis, FP32 first in catalog order, a panel per size, at the measured
    values. Six kernels over four sizes (h100-2026-11-25/splitk_v9) keep the grouped bars and their legend."""
    from profiling.app import tables
    from profiling.app.bundles import discover_bundles, load_bench
    from profiling.charts.bench import LEGEND_KERNELS_MAX, pct_cublas_figure

    by_name = {b.name: b for b in discover_bundles()}
    fig = pct_cublas_figure(tables.bench_frame(load_bench(by_name["h200-2026-12-01/catalog"])))
    assert all(t.orientation == "h" for t in fig.data) and fig.layout.showlegend is False
    panels = {axis: [t for t in fig.data if t.xaxis == axis] for axis in ("x", "x2")}
    names = [t.name for t in panels["x"]]
    assert [t.name for t in panels["x2"]] == names and len(names) == 30 > LEGEND_KERNELS_MAX
    assert names[0] == "v1" and names.index("sgemm-auto") < names.index("wmma-addmm")
    assert (
        fig.layout.xaxis.title.text == "% of cuBLAS at 1024³" and fig.layout.xaxis2.title.text == "% of cuBLAS at 4096³"
    )
    assert fig.layout.yaxis.autorange == "reversed" and fig.layout.yaxis2.matches == "y"
    auto = [round(float(t.x[0]), 1) for t in fig.data if t.name == "sgemm-auto"]
    assert auto == [112.4, 96.4]
    assert [s.x0 for s in fig.layout.shapes] == [100, 100] and fig.layout.xaxis2.matches == "x"
    grouped = pct_cublas_figure(tables.bench_frame(load_bench(by_name["h100-2026-11-25/splitk_v9"])))
    assert grouped.layout.showlegend is True and {t.orientation for t in grouped.data} == {None}


def test_one_size_percent_bars_over_an_unsteady_cublas_stay_hatched() -> None:
    """The one size of h100-2026-11-25/splitk_v9 where cuBLAS was unsteady (64x64x8191): each kernel's bar is
    hatched over its plain one on the kernel's row, with the reason in its hover."""
    from profiling.app import tables
    from profiling.app.bundles import discover_bundles, load_bench
    from profiling.charts.bench import pct_cublas_figure

    by_name = {b.name: b for b in discover_bundles()}
    frame = tables.bench_frame(load_bench(by_name["h100-2026-11-25/splitk_v9"]))
    fig = pct_cublas_figure(frame[frame["size"] == "64x64x8191"])
    hatched = [t for t in fig.data if t.marker.pattern.shape == "/"]
    plain = {t.name: t for t in fig.data if t.marker.pattern.shape != "/"}
    assert len(hatched) == 6 and all(list(t.y) == list(plain[t.name].y) == [t.name] for t in hatched)
    assert {note for t in hatched for note in t.customdata} == {"<br>cuBLAS unsteady here (p90 1.9x p10): rerun"}


def test_tuned_configurations_drawn_together_keep_apart_colours() -> None:
    """results/h200-2026-11-30/autochoice/ (the Overview's default bundle in session 35): four tuned
    configurations whose hashed colours are two pink and two teal ones. In one figure each line has a colour of its
    own; a configuration alone keeps its hashed colour, and catalog kernels keep their family shades."""
    from profiling.app import tables
    from profiling.app.bundles import discover_bundles, load_bench
    from profiling.charts.bench import pct_cublas_figure, tflops_figure
    from profiling.charts.style import kernel_colors

    by_name = {b.name: b for b in discover_bundles()}
    frame = tables.bench_frame(load_bench(by_name["h200-2026-11-30/autochoice"]))
    configs = [str(k) for k in frame["kernel"].unique() if k != "cublas"]
    assert len(configs) == 4 and len({kernel_color(c) for c in configs}) == 2  # what a hash alone gave
    for fig in (tflops_figure(frame), pct_cublas_figure(frame)):
        drawn = {
            t.name: (t.line.color if t.type == "scatter" else t.marker.color) for t in fig.data if t.name in configs
        }
        assert sorted(drawn) == sorted(configs) and len(set(drawn.values())) == 4
    colors = kernel_colors(["v9", *configs, "cublas"])
    assert colors["v9"] == kernel_color("v9") and colors["cublas"] == kernel_color("cublas")
    assert colors[configs[0]] == kernel_color(configs[0]) and len(set(colors.values())) == 6
    assert kernel_colors([configs[1]]) == {configs[1]: kernel_color(configs[1])}
