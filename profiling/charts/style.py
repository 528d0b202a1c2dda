"""Colours, axes and text shared by every figure: a colour per kernel, SI labels and ticks, escaped text.

Colours: one family per catalog group (ladder blues, beyond oranges, tensor-core purples, tile-width greens,
references black and grey), a darker shade per later step, so a kernel has the same colour on every page and its
family reads at a glance. Verdict colours belong to the comparison (profiling.runs.comparison.VERDICT_COLORS).
"""

from __future__ import annotations

import html
import math
import zlib

import plotly.graph_objects as go
from plotly.colors import sample_colorscale, sequential

from kernels.catalog import CATALOG

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
_REFERENCE_SHADES = ("#111111", "#7a7a7a")


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


def kernel_group(kernel: str) -> str:
    """The catalog group of a kernel id ("ladder", "beyond", "tensor-core", "tile-width", "reference"), else
    "other"."""
    return _KERNEL_GROUPS.get(kernel, "other")


def legend_rank(kernel: str) -> int:
    """Legend position of a kernel: grouped by family in catalog order, foreign kernels last."""
    return 100 + _KERNEL_ORDER.get(kernel, len(_KERNEL_ORDER))


def si(value: float, unit: str) -> str:
    """A value with an SI prefix and 3 significant digits: si(6.69e13, "FLOP/s") -> '66.9 TFLOP/s'."""
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M")):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def log_ticks(lo: float, hi: float, unit: str = "") -> tuple[list[float], list[str]]:
    """Tick values at each power of ten in [lo, hi] and their labels with SI units ("100 GFLOP/s", "1 TFLOP/s");
    with no unit, plain numbers (0.01, 1, 1000, 1e+05)."""
    values = [10.0**e for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)]
    values = [v for v in values if lo * 0.999 <= v <= hi * 1.001]
    if unit:
        return values, [si(v, unit) for v in values]
    return values, [f"{v:g}" for v in values]


def legend_below(fig: go.Figure, entries: int, base_height: int = 460) -> go.Figure:
    """A horizontal legend under the plot (it never takes width from the chart at 1024 px), and the figure made
    tall enough for its rows (about five entries a row at 1024 px)."""
    rows = max(1, math.ceil(entries / 5))
    fig.update_layout(
        legend={"orientation": "h", "yanchor": "top", "y": -0.16, "xanchor": "left", "x": 0, "font": {"size": 11}},
        height=base_height + 24 * rows,
        margin={"b": 40 + 24 * rows},
    )
    return fig


def plot_text(text: object) -> str:
    """Text for plotly labels and hovers: plotly reads a subset of HTML, so user text is entity-escaped."""
    return html.escape(str(text), quote=False)
