"""Pictures of a kernel's indexing (kernels/indexing, profiling/analysis/access.py), as pure functions.

- `matrix_figure`: A, B and C with their block tiles; the chosen block's C tile, the A rows and B columns it
  reads along K, and the K slice of the chosen step (seed 001's picture, with the kernel's real numbers).
- `block_tile_figure`: the chosen block's C tile, element by element: which thread (and warp, lane) computes it.
- `access_figure`: one warp-wide memory instruction, lane by lane: global ones against the 32-byte sectors and
  128-byte lines they touch, shared ones against the 32 banks, coloured by the wavefront that serves each word.
- `access_pair_figure`: the same instruction of two kernels side by side (v1 and v1-coalesced, v3 and v4).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from kernels.indexing_base import LANES, Access
from profiling.analysis.access import (
    BANKS,
    LINE_BYTES,
    SECTOR_BYTES,
    bank_schedule,
    global_cost,
    lane_bytes,
    shared_cost,
)
from profiling.charts.style import kernel_color, plot_text, white

GRID_COLOR = "#b0b0b0"
LINE_BAND = "rgba(90, 90, 90, 0.16)"
WAVEFRONT_SCALE = "Turbo"
LEGEND_BELOW = {"orientation": "h", "yanchor": "top", "y": -0.2, "xanchor": "left", "x": 0}


# --- the matrix view -------------------------------------------------------------------------------------------


def _grid_lines(x0: float, x1: float, y0: float, y1: float, dx: int, dy: int) -> tuple[list, list]:
    """One polyline (None-separated) of the tile boundaries inside [x0, x1] x [y0, y1]."""
    xs: list = []
    ys: list = []
    for x in range(int(x0) + dx, int(x1), dx):
        xs += [x, x, None]
        ys += [y0, y1, None]
    for y in range(int(y0) + dy, int(y1), dy):
        xs += [x0, x1, None]
        ys += [y, y, None]
    return xs, ys


def _rect(fig: go.Figure, row: int, col: int, x: Sequence[float], y: Sequence[float], **style) -> None:
    fig.add_shape(type="rect", x0=x[0], x1=x[1], y0=y[0], y1=y[1], row=row, col=col, **style)


def matrix_figure(view: dict, bk: int) -> go.Figure:
    """A (M x K) left, B (K x N) on top, C (M x N) below B: block tiles, the chosen block and its strips.

    `view` is analysis.access.warp_view's record (kernel, shape, grid, tile, k_range); `bk` the K depth of one
    step of the kernel's main loop.
    """
    kid, shape, tile = view["kernel"], view["shape"], view["tile"]
    m, n, k = shape["m"], shape["n"], shape["k"]
    bm, bn = tile["rows"], tile["cols"]
    r0, c0 = tile["row0"], tile["col0"]
    r1, c1 = min(r0 + bm, m), min(c0 + bn, n)
    k0, k1 = view["k_range"]
    color = kernel_color(kid)
    kw = min(0.6, max(0.3, k / (k + n)))
    kh = min(0.6, max(0.25, k / (k + m)))
    fig = make_subplots(
        rows=2,
        cols=2,
        column_widths=[kw, 1 - kw],
        row_heights=[kh, 1 - kh],
        horizontal_spacing=0.04,
        vertical_spacing=0.04,
        shared_xaxes="columns",
        shared_yaxes="rows",
        subplot_titles=("", f"B ({k} x {n})", f"A ({m} x {k})", f"C ({m} x {n})"),
    )
    panels = {  # (row, col): (width, height, tile width, tile height, strip x, strip y, slice x, slice y)
        "B": (1, 2, n, k, bn, bk, (c0, c1), (0, k), (c0, c1), (k0, k1)),
        "A": (2, 1, k, m, bk, bm, (0, k), (r0, r1), (k0, k1), (r0, r1)),
        "C": (2, 2, n, m, bn, bm, (c0, c1), (r0, r1), None, None),
    }
    for name, (row, col, w, h, dx, dy, sx, sy, kx, ky) in panels.items():
        _rect(fig, row, col, (0, w), (0, h), line={"color": "#444444", "width": 1})
        # past ~64 boundaries a way the lines would only grey the panel: those are left out
        xs, ys = _grid_lines(0, w, 0, h, dx if w <= 64 * dx else w, dy if h <= 64 * dy else h)
        if xs:
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=ys,
                    mode="lines",
                    line={"color": GRID_COLOR, "width": 0.5},
                    hoverinfo="skip",
                    showlegend=False,
                ),
                row=row,
                col=col,
            )
        _rect(fig, row, col, sx, sy, fillcolor=color, opacity=0.3 if name != "C" else 0.8, line={"width": 0})
        if kx is not None:
            _rect(fig, row, col, kx, ky, fillcolor=color, opacity=0.9, line={"color": "#000000", "width": 1})
    hover = (
        f"block ({view['block'][0]}, {view['block'][1]}) of grid {view['grid'][0]} x {view['grid'][1]}<br>"
        f"C rows {r0}..{r1 - 1}, columns {c0}..{c1 - 1}<br>reads A rows {r0}..{r1 - 1}, B columns {c0}..{c1 - 1}<br>"
        f"K step {view['step']}: k {k0}..{k1 - 1}"
    )
    for label, opacity in (
        ("chosen block's C tile", 0.8),
        ("A rows and B columns<br>it reads along K", 0.3),
        (f"K slice of step {view['step']} (k {k0}{f'..{k1 - 1}' if k1 - k0 > 1 else ''})", 0.9),
    ):
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name=label,
                opacity=opacity,
                marker={"symbol": "square", "size": 12, "color": color},
            ),
            row=2,
            col=2,
        )
    for where, x, y in (
        ("C", (c0 + c1) / 2, (r0 + r1) / 2),
        ("A", (k0 + k1) / 2, (r0 + r1) / 2),
        ("B", (c0 + c1) / 2, (k0 + k1) / 2),
    ):
        row, col = panels[where][:2]
        fig.add_trace(
            go.Scatter(
                x=[x],
                y=[y],
                mode="markers",
                showlegend=False,
                marker={"size": 14, "opacity": 0},
                hovertemplate=hover + "<extra></extra>",
            ),
            row=row,
            col=col,
        )
    fig.add_trace(
        go.Scatter(
            x=[None],
            y=[None],
            mode="lines",
            name=f"boundaries: {bm} x {bn} block tiles,<br>K slices of {bk} (left out past 64 a side)",
            line={"color": GRID_COLOR, "width": 2},
        ),
        row=2,
        col=2,
    )
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(title_text="column (element)", row=2, col=2)
    fig.update_xaxes(title_text="k (element)", row=2, col=1)
    fig.update_yaxes(title_text="row (element)", row=2, col=1)
    fig.update_yaxes(title_text="k (element)", row=1, col=2)
    fig.update_layout(
        title_text=plot_text(f"{kid} at {m} x {n} x {k}: {view['grid'][0]} x {view['grid'][1]} blocks of {bm} x {bn}")
        + "<br><sup>"
        + plot_text(f"block ({view['block'][0]}, {view['block'][1]}): C rows {r0}..{r1 - 1}, columns {c0}..{c1 - 1}")
        + "</sup>",
        height=560,
        margin={"l": 60, "r": 20, "t": 60, "b": 40},
        legend={"x": 0, "y": 1, "xanchor": "left", "yanchor": "top", "font": {"size": 11}},  # the empty quarter
    )
    return white(fig)


def block_tile_figure(tiles: dict, view: dict) -> go.Figure:
    """The chosen block's C tile, element by element: the thread that computes it (warps in grey), the chosen
    warp's lanes in colour. `tiles` is analysis.access.tile_map's record, `view` warp_view's."""
    tile = tiles["tile"]
    r0, c0, rows, cols = tile["row0"], tile["col0"], tile["rows"], tile["cols"]
    thread = np.full((rows, cols), -1, dtype=np.int64)
    for t in tiles["threads"]:
        thread[np.asarray(t["rows"], dtype=np.int64) - r0, np.asarray(t["cols"], dtype=np.int64) - c0] = t["tid"]
    warp = view["warp"]
    computed = thread >= 0
    warp_of = np.where(computed, thread // LANES, np.nan)
    lane = np.where(computed & (thread // LANES == warp), thread % LANES, np.nan)
    text = np.where(
        computed,
        np.char.add(
            np.char.add("thread ", thread.astype(str)),
            np.char.add(
                np.char.add(" (warp ", (thread // LANES).astype(str)),
                np.char.add(", lane ", np.char.add((thread % LANES).astype(str), ")")),
            ),
        ),
        "outside C: not stored",
    )
    x = np.arange(c0, c0 + cols)
    y = np.arange(r0, r0 + rows)
    fig = go.Figure()
    fig.add_trace(
        go.Heatmap(
            x=x,
            y=y,
            z=warp_of % 2,
            text=text,
            colorscale=[[0, "#e4e4e4"], [1, "#c4c4c4"]],
            showscale=False,
            name="other warps (grey, alternating)",
            showlegend=True,
            hovertemplate="C[%{y}][%{x}]<br>%{text}<extra></extra>",
        ),
    )
    fig.add_trace(
        go.Heatmap(
            x=x,
            y=y,
            z=lane,
            text=text,
            colorscale="Viridis",
            zmin=0,
            zmax=LANES - 1,
            name=f"warp {warp}",
            colorbar={"title": {"text": f"lane of<br>warp {warp}"}, "thickness": 12, "len": 0.8},
            hovertemplate="C[%{y}][%{x}]<br>%{text}<extra></extra>",
        ),
    )
    # a lane's number at the middle of its elements, where they form one rectangle (not for warp tiles)
    centers = [
        (t["tid"] % LANES, np.mean(t["rows"]), np.mean(t["cols"]))
        for t in tiles["threads"]
        if t["tid"] // LANES == warp and t["rows"] and _is_rectangle(t)
    ]
    if centers:
        fig.add_trace(
            go.Scatter(
                x=[c[2] for c in centers],
                y=[c[1] for c in centers],
                mode="text",
                showlegend=False,
                text=[str(c[0]) for c in centers],
                hoverinfo="skip",
                textfont={"size": 9, "color": ["#ffffff" if c[0] < 20 else "#000000" for c in centers]},
            ),
        )
    fig.update_yaxes(autorange="reversed", title_text="row of C (element)", scaleanchor="x", constrain="domain")
    fig.update_xaxes(title_text="column of C (element)", constrain="domain")
    per = per_thread(tiles)
    fig.update_layout(
        title_text=plot_text(f"block ({tiles['block'][0]}, {tiles['block'][1]}): its {rows} x {cols} tile of C")
        + "<br><sup>"
        + plot_text(f"{len(tiles['threads'])} threads, up to {_n(per, 'element')} each; warp {warp} in colour, by lane")
        + "</sup>",
        height=560,
        margin={"l": 60, "r": 20, "t": 60, "b": 40},
        legend=LEGEND_BELOW,
    )
    return white(fig)


def _is_rectangle(thread: dict) -> bool:
    rows, cols = thread["rows"], thread["cols"]
    return (max(rows) - min(rows) + 1) * (max(cols) - min(cols) + 1) == len(rows)


def per_thread(tiles: dict) -> int:
    """The most C elements one thread of the block computes."""
    return max((len(t["rows"]) for t in tiles["threads"]), default=0)


# --- one instruction, lane by lane ----------------------------------------------------------------------------


def _element(acc: Access, lane: int) -> str:
    span = acc.width // acc.elem
    last = f"..{int(acc.col[lane]) + span - 1}" if span > 1 else ""
    return f"{acc.array}[{int(acc.row[lane])}][{int(acc.col[lane])}{last}]"


def access_title(acc: Access) -> str:
    """The instruction and its cost in one line."""
    if acc.space == "global":
        cost = global_cost(acc)
        return (
            f"{acc.sass} {acc.label}: {_n(cost.sectors, 'sector')} per request in {_n(cost.lines, 'line')} (the "
            f"{_n(int(acc.active.sum()), 'active lane')} x {acc.width} B need at least {_n(least_sectors(acc), 'sector')})"
        )
    cost = shared_cost(acc)
    view = " (bank view of a cp.async write)" if acc.op == "ldgsts" else ""
    return (
        f"{acc.sass} {acc.label}: {cost.wavefronts} wavefronts (ideal {cost.ideal}), {cost.degree}-way, "
        f"{cost.phase_lanes} lanes per phase{view}"
    )


def least_sectors(acc: Access) -> int:
    """The fewest 32-byte sectors that could hold the distinct bytes a global access touches."""
    distinct = np.unique(lane_bytes(acc)[acc.active]).size
    return -(-distinct // SECTOR_BYTES)


def _global_panel(fig: go.Figure, acc: Access, kernel: str, col: int, legend: bool) -> None:
    lanes = np.flatnonzero(acc.active)
    start = acc.addr[lanes]
    first, last = start // SECTOR_BYTES, (start + acc.width - 1) // SECTOR_BYTES
    sectors = np.unique(np.concatenate([first, last]))
    column = {int(s): i for i, s in enumerate(sectors)}
    xs, ys, hover = [], [], []
    for lane, lo, hi in zip(lanes, first, last, strict=True):
        for s in range(int(lo), int(hi) + 1):
            xs.append(column[s])
            ys.append(int(lane))
            hover.append(
                f"lane {lane}: {plot_text(_element(acc, lane))}<br>byte address {int(acc.addr[lane]):,}"
                f" (+{acc.width} B)<br>sector {s} (bytes {s * SECTOR_BYTES:,}..{s * SECTOR_BYTES + 31:,})"
                f"<br>line {s * SECTOR_BYTES // LINE_BYTES} (128 B)"
            )
    lines = sectors * SECTOR_BYTES // LINE_BYTES
    starts = [i for i in range(len(sectors)) if i == 0 or lines[i] != lines[i - 1]]
    for j, i in enumerate(starts):
        end = starts[j + 1] if j + 1 < len(starts) else len(sectors)
        if j % 2 == 0:
            fig.add_vrect(
                x0=i - 0.5,
                x1=end - 0.5,
                fillcolor=LINE_BAND,
                line_width=0,
                layer="below",
                row=1,
                col=col,
                exclude_empty_subplots=False,
            )
    every = max(1, -(-len(starts) // 8))
    ticks = [starts[j] for j in range(0, len(starts), every)]
    fig.update_xaxes(
        tickvals=ticks,
        ticktext=[f"{int(sectors[i]) * SECTOR_BYTES:,}" for i in ticks],
        range=[-0.8, len(sectors) - 0.2],
        title_text="32 B sector (byte offset)",
        row=1,
        col=col,
    )
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=ys,
            mode="markers",
            name=f"{kernel}: lane {'reads' if acc.op == 'ld' else 'writes'} a 32 B sector",
            legendgroup="sector",
            showlegend=legend,
            marker={"symbol": "square", "size": 9, "color": kernel_color(kernel)},
            hovertext=hover,
            hoverinfo="text",
        ),
        row=1,
        col=col,
    )
    _inactive(fig, acc, -0.6, col, legend)


def _inactive(fig: go.Figure, acc: Access, x: float, col: int, legend: bool) -> None:
    idle = np.flatnonzero(~acc.active)
    fig.add_trace(
        go.Scatter(
            x=[x] * len(idle),
            y=idle.tolist(),
            mode="markers",
            name="inactive lane (guard, predicate)",
            legendgroup="inactive",
            showlegend=legend and len(idle) > 0,
            marker={"symbol": "x-thin", "size": 7, "line": {"width": 1.5, "color": "#888888"}},
            hovertext=[f"lane {lane}: inactive, touches nothing" for lane in idle],
            hoverinfo="text",
        ),
        row=1,
        col=col,
    )


def _shared_panel(fig: go.Figure, acc: Access, col: int, legend: bool, wavefronts: int) -> None:
    schedule = bank_schedule(acc)
    hover = [
        f"lane {lane}: {plot_text(_element(acc, lane))}<br>byte address {int(word) * 4:,} (word {int(word)})"
        f"<br>bank {int(bank)}, phase {int(phase)}<br>wavefront {int(wave) + 1} of {wavefronts}"
        for lane, word, bank, phase, wave in zip(
            schedule.lane, schedule.word, schedule.bank, schedule.phase, schedule.wavefront, strict=True
        )
    ]
    fig.add_trace(
        go.Scatter(
            x=schedule.bank.tolist(),
            y=schedule.lane.tolist(),
            mode="markers",
            name="lane's 4 B word in a bank",
            showlegend=False,
            hovertext=hover,
            hoverinfo="text",
            marker={
                "symbol": "square",
                "size": 9,
                "color": (schedule.wavefront + 1).tolist(),
                "coloraxis": "coloraxis",
            },
        ),
        row=1,
        col=col,
    )
    fig.add_trace(
        go.Scatter(
            x=list(range(BANKS)),
            y=[-1.6] * BANKS,
            mode="text",
            name="n-way",
            showlegend=False,
            text=[str(v) if v else "" for v in schedule.per_bank],
            textfont={"size": 9},
            hovertext=[f"bank {b}: {v} distinct words in one phase ({v}-way)" for b, v in enumerate(schedule.per_bank)],
            hoverinfo="text",
        ),
        row=1,
        col=col,
    )
    fig.update_xaxes(range=[-1, BANKS], tickvals=list(range(0, BANKS, 4)), title_text="bank (4 B each)", row=1, col=col)
    _inactive(fig, acc, -0.6, col, legend)


def access_pair_figure(sides: Sequence[tuple[str, Access]]) -> go.Figure:
    """One or two (kernel, instruction) panels side by side, lanes down the side; both of one space.

    Global: a square where a lane's bytes fall in a 32-byte sector (columns: the distinct sectors, in address
    order, 128-byte lines banded). Shared: a square per 4-byte word a lane touches, in its bank's column,
    coloured by the wavefront that serves it; above each bank, its n-way (distinct words in one phase).
    """
    spaces = {acc.space for _, acc in sides}
    if len(spaces) != 1:
        raise ValueError("side by side takes instructions of one memory space")
    shared = spaces == {"shared"}
    titles = [plot_text(f"{kid}: {acc.sass} {acc.label}") for kid, acc in sides]
    fig = make_subplots(rows=1, cols=len(sides), shared_yaxes=True, horizontal_spacing=0.06, subplot_titles=titles)
    most = max((shared_cost(acc).wavefronts for _, acc in sides), default=1) if shared else 0
    for col, (kid, acc) in enumerate(sides, start=1):
        if shared:
            _shared_panel(fig, acc, col, legend=col == 1, wavefronts=shared_cost(acc).wavefronts)
        else:
            _global_panel(fig, acc, kid, col, legend=True)
    ticks = list(range(0, LANES, 4))
    fig.update_yaxes(range=[LANES - 0.4, -2.4], tickvals=ticks, title_text="lane", row=1, col=1)
    if shared:
        fig.update_yaxes(tickvals=[-1.6, *ticks], ticktext=["n-way", *map(str, ticks)], row=1, col=1)
        fig.update_layout(
            coloraxis={
                "colorscale": WAVEFRONT_SCALE,
                "cmin": 1,
                "cmax": max(most, 2),
                "colorbar": {"title": {"text": "wave-<br>front"}, "thickness": 12, "len": 0.9},
            },
        )
    captions = " · ".join(f"{kid}: {_short_cost(acc)}" for kid, acc in sides)
    fig.update_layout(
        title_text=plot_text(captions),
        height=520,
        margin={"l": 60, "r": 20, "t": 80, "b": 40},
        legend=LEGEND_BELOW,
    )
    fig.update_annotations(font_size=12)
    return white(fig)


def _short_cost(acc: Access) -> str:
    if acc.space == "global":
        cost = global_cost(acc)
        return f"{_n(cost.sectors, 'sector')}, {_n(cost.lines, 'line')} per request"
    cost = shared_cost(acc)
    return f"{cost.wavefronts} wavefronts (ideal {cost.ideal}), {cost.degree}-way"


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def access_figure(kernel: str, acc: Access) -> go.Figure:
    """One instruction of one warp (see access_pair_figure)."""
    return access_pair_figure([(kernel, acc)])
