"""Colours, axes and text shared by every figure: a colour per kernel, SI labels and ticks, escaped text.

Colours: one family per catalog group (ladder blues, beyond oranges, tensor-core purples, tile-width greens,
references black and grey), a darker shade per later step, so a kernel has the same colour on every page and its
family reads at a glance. Verdict colours belong to the comparison (profiling.runs.comparison.VERDICT_COLORS).
"""

from __future__ import annotations

import html
import math
import zlib
from collections.abc import Iterable

import plotly.graph_objects as go
from plotly.colors import sample_colorscale, sequential

from kernels.catalog import CATALOG
from profiling.shape import shape_from_label

PALETTE: tuple[str, ...] = ("#d62728", "#17becf", "#e7298a", "#1b9e77", "#a6761d", "#666600")
"""Colours of kernels that are not in the catalog (a crc32 of the name picks one): hues no family uses."""

GROUP_SCALES: dict[str, list[str]] = {
    "ladder": sequential.Blues,
    "beyond": sequential.Oranges,
    "tensor-core": sequential.Purples,
    "tile-width": sequential.Greens,
}
GROUP_TITLES = {
    "ladder": "SGEMM ladder",
    "beyond": "beyond the ladder",
    "tensor-core": "tensor core",
    "tile-width": "tile-width study",
    "reference": "reference (cuBLAS)",
    "other": "other kernels",
}
_REFERENCE_SHADES = ("#111111", "#7a7a7a", "#a8a8a8", "#474747")


def _family_colors() -> dict[str, str]:
    """Each catalog kernel's shade: its group's scale sampled from light-but-visible (0.45) to darkest (1.0)."""
    colors: dict[str, str] = {}
    groups: dict[str, list[str]] = {}
    for spec in CATALOG:
        groups.setdefault(spec.group, []).append(spec.id)
    for group, ids in groups.items():
        if group == "reference" or group not in GROUP_SCALES:
            shades = [_REFERENCE_SHADES[i % len(_REFERENCE_SHADES)] for i in range(len(ids))]
        else:
            stops = [0.45 + 0.55 * i / max(1, len(ids) - 1) for i in range(len(ids))]
            shades = sample_colorscale(GROUP_SCALES[group], stops)
        colors.update(zip(ids, shades, strict=True))
    return colors


_KERNEL_COLORS: dict[str, str] = _family_colors()
_KERNEL_GROUPS: dict[str, str] = {spec.id: spec.group for spec in CATALOG}
_KERNEL_ORDER: dict[str, int] = {spec.id: i for i, spec in enumerate(CATALOG)}


def kernel_color(kernel: str) -> str:
    """A colour per kernel, the same in every chart and session: its group's family and step shade for a catalog
    kernel, else a crc32 of the name into PALETTE (stable whatever Python's hash seed)."""
    if kernel in _KERNEL_COLORS:
        return _KERNEL_COLORS[kernel]
    return PALETTE[zlib.crc32(kernel.encode()) % len(PALETTE)]


def kernel_colors(kernels: Iterable[str]) -> dict[str, str]:
    """Each kernel's colour in one figure: kernel_color's, except that a kernel outside the catalog whose hashed
    colour a kernel before it already has takes the first PALETTE colour none of them has, so that tuned
    configurations drawn together (four v9-splitk ones hashed to two colours) stay apart while the palette lasts."""
    colors: dict[str, str] = {}
    for kernel in dict.fromkeys(kernels):
        color = kernel_color(kernel)
        taken = set(colors.values())
        if kernel not in _KERNEL_COLORS and color in taken:
            color = next((c for c in PALETTE if c not in taken), color)
        colors[kernel] = color
    return colors


def kernel_group(kernel: str) -> str:
    """The catalog group of a kernel id ("ladder", "beyond", "tensor-core", "tile-width", "reference"), else
    "other"."""
    return _KERNEL_GROUPS.get(kernel, "other")


def legend_rank(kernel: str) -> int:
    """Legend position of a kernel: grouped by family in catalog order, foreign kernels last."""
    return 100 + _KERNEL_ORDER.get(kernel, len(_KERNEL_ORDER))


def size_tick(size: str) -> str:
    """A size label short enough for a category tick: "4096x4096x4096" -> "4096³"; other shapes as given."""
    shape = shape_from_label(size)
    return f"{shape.m}³" if shape is not None and shape.is_cube else size


SIZE_TICK_CHARS = 70
"""Characters of size ticks that fit side by side across a chart at 1024 px; more are drawn slanted."""


SLANTED_AXIS_PX = 150
"""Room under the plot for slanted size ticks ("2048x2048x8191" at -45 degrees) and the axis title."""


def size_tick_angle(sizes: list[str]) -> int:
    """The x tick angle for category ticks of `sizes`: level while their labels fit side by side, else slanted
    (18 shapes of "127x127x8191" written level run into each other)."""
    widest = max((len(size_tick(s)) + 2 for s in sizes), default=0)
    return 0 if widest * len(sizes) <= SIZE_TICK_CHARS else -45


def si(value: float, unit: str) -> str:
    """A value with an SI prefix and 3 significant digits: si(6.69e13, "FLOP/s") -> '66.9 TFLOP/s'."""
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M")):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def log_ticks(lo: float, hi: float, unit: str = "") -> tuple[list[float], list[str]]:
    """Tick values at each power of ten in [lo, hi] (1-2-5 steps when that gives fewer than three) and their labels
    with SI units ("100 GFLOP/s", "1 TFLOP/s"); with no unit, plain numbers (0.01, 1, 1000, 1e+05)."""
    decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
    values = [10.0**e for e in decades if lo * 0.999 <= 10.0**e <= hi * 1.001]
    if len(values) < 3:  # a short axis: 1-2-5 steps, so it still has a few labelled ticks
        values = [m * 10.0**e for e in decades for m in (1, 2, 5) if lo * 0.999 <= m * 10.0**e <= hi * 1.001]
    if unit:
        return values, [si(v, unit) for v in values]
    return values, [f"{v:g}" for v in values]


LEGEND_ROW_PX = 600
"""The legend width legend_below() plans for: a chart in a 1024 px window with the sidebar open."""


def legend_below(fig: go.Figure, base_height: int = 460, axis_px: int = 80) -> go.Figure:
    """A horizontal legend under the plot (it never takes width from the chart at 1024 px), and the figure made
    tall enough for it: rows estimated from the entries' text at LEGEND_ROW_PX a row, a row per group title.
    `axis_px` is the room the x axis's tick labels and title take under the plot (more for slanted labels)."""
    shown = [t for t in fig.data if t.showlegend is not False and t.name]
    titles = {t.legendgrouptitle.text for t in fig.data if t.legendgrouptitle and t.legendgrouptitle.text}
    width = sum(46 + 6.2 * len(html.unescape(str(t.name))) for t in shown)
    rows = max(1, math.ceil(width / LEGEND_ROW_PX) + len(titles))
    plot_px = base_height - 70 - axis_px  # the plotting area: the figure less the top and bottom margins' fixed part
    fig.update_layout(
        legend={
            "orientation": "h",
            "yanchor": "top",
            "y": -axis_px / plot_px,
            "xanchor": "left",
            "x": 0,
            "font": {"size": 11},
        },
        height=base_height + 22 * rows,
        margin={"b": axis_px + 10 + 22 * rows, "t": 60},
    )
    return fig


FAMILY_ORDER: tuple[str, ...] = ("reference", "ladder", "tile-width", "beyond", "tensor-core", "other")
"""The order of the kernel families' legend rows (family_legend)."""


def family_legend(family: str) -> str:
    """The plotly legend ("legend2", "legend3", ...) of a kernel family's own row in legends_below."""
    return f"legend{2 + FAMILY_ORDER.index(family if family in FAMILY_ORDER else 'other')}"


def legends_below(fig: go.Figure, base_height: int = 460, axis_px: int = 80) -> go.Figure:
    """The main legend and then each kernel family's legend (traces with `legend=family_legend(...)`) under the
    plot, each family on rows of its own with its title at the left: in one wrapped legend a group title runs on
    into the next family's kernels and reads as theirs. Rows are estimated from the entries' text at
    LEGEND_ROW_PX a row (the main legend's titled groups stack their entries: a row per entry, one for the title);
    the figure grows by the legends' height. Clicking a kernel still hides all its points (legendgroup)."""
    shown = [t for t in fig.data if t.showlegend is not False and t.name]
    by_legend: dict[str, list] = {}
    for trace in shown:
        by_legend.setdefault(trace.legend or "legend", []).append(trace)
    order = sorted(by_legend, key=lambda lid: 0 if lid == "legend" else int(lid.removeprefix("legend")))
    plot_px = base_height - 70 - axis_px
    top = axis_px
    layout: dict = {}
    for lid in order:
        traces = by_legend[lid]
        width = sum(46 + 6.2 * len(html.unescape(str(t.name))) for t in traces)
        groups: dict[str, int] = {}
        for t in traces:
            groups[t.legendgroup or t.name] = groups.get(t.legendgroup or t.name, 0) + 1
        titled = any(t.legendgrouptitle and t.legendgrouptitle.text for t in traces)
        if lid == "legend":
            rows = max(groups.values()) + 1 if titled else max(1, math.ceil(width / LEGEND_ROW_PX))
            title = {}
        else:
            family = FAMILY_ORDER[int(lid.removeprefix("legend")) - 2]
            rows = max(1, math.ceil((width + 7 * len(GROUP_TITLES[family])) / LEGEND_ROW_PX))
            title = {"title": {"text": GROUP_TITLES[family], "side": "left", "font": {"size": 11}}}
        layout[lid] = {
            "orientation": "h",
            "yanchor": "top",
            "y": -top / plot_px,
            "xanchor": "left",
            "x": 0,
            "font": {"size": 11},
            "groupclick": "togglegroup",
            **title,
        }
        top += 22 * rows + 6
    extra = top - axis_px
    fig.update_layout(**layout, height=base_height + extra, margin={"b": axis_px + 10 + extra, "t": 60})
    return fig


def plot_text(text: object) -> str:
    """Text for plotly labels and hovers: plotly reads a subset of HTML, so user text is entity-escaped."""
    return html.escape(str(text), quote=False)


def white(fig: go.Figure) -> go.Figure:
    """`fig` drawn on plotly's "plotly_white" template, returned for chaining.

    The same template `update_layout(template="plotly_white")` gives, without plotly validating it again: that
    rebuilds the whole registered template property by property (20-70 ms a figure on this machine, much of a
    chart's first build), while the registered template is valid already. Plotly applies its default template
    the same way (`BaseFigure._initialize_layout_template`); the figure still gets its own copy.
    """
    import plotly.io as pio

    layout = fig._layout_obj
    layout._validate = False
    try:
        layout.template = pio.templates["plotly_white"]
    finally:
        layout._validate = fig._validate
    return fig
