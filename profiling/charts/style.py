"""Colours and text shared by every figure: a colour per kernel, SI labels, escaped text.

Verdict colours belong to the comparison (profiling.runs.comparison.VERDICT_COLORS).
"""

from __future__ import annotations

import html
import zlib

from plotly.colors import qualitative

from kernels.catalog import CATALOG

PALETTE: tuple[str, ...] = tuple(qualitative.Dark24)

_CATALOG_IDS: tuple[str, ...] = tuple(spec.id for spec in CATALOG)


def kernel_color(kernel: str) -> str:
    """A colour per kernel, the same in every chart and session: catalog order, else a hash of the name."""
    index = _CATALOG_IDS.index(kernel) if kernel in _CATALOG_IDS else zlib.crc32(kernel.encode())
    return PALETTE[index % len(PALETTE)]


def si(value: float, unit: str) -> str:
    """A value with an SI prefix and 3 significant digits: si(6.69e13, "FLOP/s") -> '66.9 TFLOP/s'."""
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M")):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def plot_text(text: object) -> str:
    """Text for plotly labels and hovers: plotly reads a subset of HTML, so user text is entity-escaped."""
    return html.escape(str(text), quote=False)
