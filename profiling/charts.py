"""Plotly figures: the roofline and Nsight-Compute-style occupancy graphs. Pure functions, no I/O."""

from __future__ import annotations

import math
import zlib

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative

from profiling.analysis.device_model import Ceiling, Ceilings
from profiling.analysis.occupancy import sweep_all, theoretical_occupancy
from profiling.errors import InvalidInput

PALETTE: tuple[str, ...] = tuple(qualitative.Dark24)
LEVEL_SYMBOLS = {"DRAM": "circle", "L2": "square", "L1": "diamond", "algorithmic": "star"}
POINT_COLUMNS = ("kernel", "label", "level", "flops", "bytes", "seconds")
CEILING_COLORS = {"compute": "#444444", "tensor": "#7f3c8d", "DRAM": "#1f77b4", "L2": "#2ca02c", "L1": "#d62728"}


def _catalog_ids() -> tuple[str, ...]:
    try:
        from kernels.catalog import CATALOG
    except ImportError:  # charts must work without the catalog (e.g. in a stripped-down report viewer)
        return ()
    return tuple(spec.id for spec in CATALOG)


def kernel_color(kernel: str) -> str:
    """A colour per kernel, the same in every chart and session: catalog order, else a hash of the name."""
    ids = _catalog_ids()
    index = ids.index(kernel) if kernel in ids else zlib.crc32(kernel.encode())
    return PALETTE[index % len(PALETTE)]


def algorithmic_point(
    kernel: str, m: int, n: int, k: int, seconds: float, bytes_per_element: int = 4, label: str | None = None
) -> dict:
    """A roofline point from the problem alone: 2MNK FLOPs over the minimum traffic (read A, B; write C)."""
    return {
        "kernel": kernel,
        "label": label or f"{m}x{n}x{k}",
        "level": "algorithmic",
        "flops": 2.0 * m * n * k,
        "bytes": float(bytes_per_element) * (m * k + k * n + m * n),
        "seconds": float(seconds),
    }


def _si(value: float, unit: str) -> str:
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M")):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def roofline_points(points: pd.DataFrame, ceilings: Ceilings) -> pd.DataFrame:
    """Points with arithmetic intensity, achieved FLOP/s, the binding ceiling and % of it added.

    The compute ceiling is FP32 unless a point's optional "compute" column says "tensor".
    """
    missing = [c for c in POINT_COLUMNS if c not in points.columns]
    if missing:
        raise InvalidInput(f"roofline points lack column(s) {', '.join(missing)}")
    bad_levels = sorted(set(points["level"]) - set(LEVEL_SYMBOLS))
    if bad_levels:
        raise InvalidInput(f"unknown roofline level(s) {bad_levels}; use {', '.join(LEVEL_SYMBOLS)}")
    df = points.copy()
    df = df[(df["flops"] > 0) & (df["bytes"] > 0) & (df["seconds"] > 0)]
    df["intensity"] = df["flops"] / df["bytes"]
    df["achieved"] = df["flops"] / df["seconds"]
    kinds = df["compute"] if "compute" in df.columns else pd.Series("fp32", index=df.index)
    bound, binds = [], []
    for level, intensity, kind in zip(df["level"], df["intensity"], kinds, strict=True):
        use_tensor = kind == "tensor"
        compute = ceilings.tensor_fp16_flops if use_tensor else ceilings.fp32_flops
        compute_name = "FP16 tensor" if use_tensor else "FP32"
        bandwidth = ceilings.bandwidth(level)
        memory_roof = bandwidth.value * intensity if bandwidth else math.inf
        compute_roof = compute.value if compute else math.inf
        memory_name = "DRAM" if level == "algorithmic" else level
        if memory_roof < compute_roof:
            bound.append(memory_roof)
            binds.append(f"{memory_name} bandwidth")
        elif compute_roof < math.inf:
            bound.append(compute_roof)
            binds.append(f"{compute_name} compute")
        else:
            bound.append(math.nan)
            binds.append("no ceiling known")
    df["roof"] = bound
    df["binding_ceiling"] = binds
    df["pct_of_roof"] = 100.0 * df["achieved"] / df["roof"]
    return df


def _ceiling_label(kind: str, ceiling: Ceiling, unit: str) -> str:
    return f"{kind} {_si(ceiling.value, unit)} ({ceiling.source})"


def roofline_figure(
    points: pd.DataFrame, ceilings: Ceilings, title: str | None = None, show_tensor: bool = False
) -> go.Figure:
    """Log-log roofline: compute ceilings, one diagonal per known bandwidth, one trace per kernel and level.

    Points need columns kernel, label, level ("L1", "L2", "DRAM", "algorithmic"), flops, bytes, seconds.
    Colour = kernel (legend group, so clicking a kernel hides all its points); symbol = level.
    `show_tensor` adds the FP16 tensor ceiling; points with compute == "tensor" are measured against it.
    """
    df = roofline_points(points, ceilings)
    compute_ceilings = [("FP32 peak", ceilings.fp32_flops, "compute")]
    if show_tensor:
        compute_ceilings.append(("FP16 tensor peak", ceilings.tensor_fp16_flops, "tensor"))
    compute_ceilings = [(n, c, k) for n, c, k in compute_ceilings if c is not None]
    bandwidths = [
        (level, ceilings.bandwidth(level)) for level in ("DRAM", "L2", "L1") if ceilings.bandwidth(level) is not None
    ]
    top = max((c.value for _, c, _ in compute_ceilings), default=None)

    ridges = [top / bw.value for _, bw in bandwidths] if top else []
    intensities = list(df["intensity"]) + ridges
    x_lo = 10 ** math.floor(math.log10(min(intensities) / 4)) if intensities else 0.01
    x_hi = 10 ** math.ceil(math.log10(max(intensities) * 4)) if intensities else 1000.0

    fig = go.Figure()
    for name, ceiling, kind in compute_ceilings:
        fig.add_trace(
            go.Scatter(
                x=[x_lo, x_hi],
                y=[ceiling.value, ceiling.value],
                mode="lines",
                name=_ceiling_label(name, ceiling, "FLOP/s"),
                line={"color": CEILING_COLORS[kind], "width": 2},
                legendgroup="ceilings",
                legendgrouptitle_text="Ceilings",
                hovertemplate=f"{name}: {_si(ceiling.value, 'FLOP/s')}<br>source: {ceiling.source}<extra></extra>",
            )
        )
    for level, bandwidth in bandwidths:
        # The diagonal stops where it meets the highest compute ceiling (the ridge point).
        x_end = top / bandwidth.value if top else x_hi
        xs = np.array([x_lo, min(x_end, x_hi)])
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=bandwidth.value * xs,
                mode="lines",
                name=_ceiling_label(f"{level} bandwidth", bandwidth, "B/s"),
                line={"color": CEILING_COLORS[level], "width": 2, "dash": "dash"},
                legendgroup="ceilings",
                hovertemplate=f"{level}: {_si(bandwidth.value, 'B/s')}<br>source: {bandwidth.source}<extra></extra>",
            )
        )

    for kernel, group in df.groupby("kernel", sort=False):
        color = kernel_color(str(kernel))
        first = True
        for level, sub in group.groupby("level", sort=False):
            custom = np.column_stack(
                [
                    sub["kernel"],
                    sub["label"],
                    sub["level"],
                    sub["intensity"],
                    [_si(a, "FLOP/s") for a in sub["achieved"]],
                    sub["pct_of_roof"],
                    sub["binding_ceiling"],
                ]
            )
            fig.add_trace(
                go.Scatter(
                    x=sub["intensity"],
                    y=sub["achieved"],
                    mode="markers",
                    name=str(kernel),
                    legendgroup=f"kernel:{kernel}",
                    showlegend=first,
                    marker={
                        "color": color,
                        "symbol": LEVEL_SYMBOLS[level],
                        "size": 11,
                        "line": {"color": "white", "width": 1},
                    },
                    customdata=custom,
                    hovertemplate=(
                        "<b>%{customdata[0]}</b> %{customdata[1]}<br>level: %{customdata[2]}"
                        "<br>arithmetic intensity: %{customdata[3]:.3g} FLOP/B"
                        "<br>achieved: %{customdata[4]}"
                        "<br>%{customdata[5]:.1f}% of the %{customdata[6]} ceiling<extra></extra>"
                    ),
                )
            )
            first = False
    # Symbol key: grey markers with no data so the level symbols are explained once, not per kernel.
    for level in [lv for lv in LEVEL_SYMBOLS if lv in set(df["level"])]:
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name=level,
                legendgroup="levels",
                legendgrouptitle_text="Level",
                marker={"color": "#999999", "symbol": LEVEL_SYMBOLS[level], "size": 10},
                hoverinfo="skip",
            )
        )
    fig.update_xaxes(
        type="log", title_text="Arithmetic intensity (FLOP/byte)", range=[math.log10(x_lo), math.log10(x_hi)]
    )
    fig.update_yaxes(type="log", title_text="Performance (FLOP/s)")
    fig.update_layout(
        title_text=title or f"Roofline{' — ' + ceilings.device_name if ceilings.device_name else ''}",
        legend={"groupclick": "togglegroup"},
        template="plotly_white",
    )
    return fig


_OCCUPANCY_GRAPHS = (
    ("threads", "threads_per_block", "Impact of Varying Block Size", "Threads per block"),
    ("registers", "registers_per_thread", "Impact of Varying Register Count Per Thread", "Registers per thread"),
    (
        "shared_mem",
        "shared_mem_per_block",
        "Impact of Varying Shared Memory Usage Per Block",
        "Shared memory per block (bytes)",
    ),
)


def occupancy_figures(
    cc: str, threads: int, registers: int, shared_mem: int, carveout: int | None = None
) -> tuple[go.Figure, go.Figure, go.Figure]:
    """Nsight-Compute-style graphs of active warps per SM vs block size, registers and shared memory.

    Each marks the kernel's own configuration and names the limiter in an annotation.
    """
    current = theoretical_occupancy(cc, threads, registers, shared_mem, carveout)
    sweeps = sweep_all(cc, threads, registers, shared_mem, carveout)
    here = {"threads": threads, "registers": registers, "shared_mem": shared_mem}
    note = (
        f"{current.occupancy_pct:.1f}% occupancy ({current.active_warps_per_sm}/{current.max_warps_per_sm} warps)"
        f"<br>{current.describe()}"
    )
    figures = []
    for key, column, title, x_title in _OCCUPANCY_GRAPHS:
        frame = sweeps[key]
        fig = go.Figure(
            go.Scatter(
                x=frame[column],
                y=frame["active_warps_per_sm"],
                mode="lines+markers" if len(frame) <= 300 else "lines",
                line={"shape": "hv", "color": "#76b900", "width": 2},
                marker={"size": 5},
                name="warp occupancy",
                customdata=np.column_stack([frame["occupancy_pct"], frame["active_blocks_per_sm"]]),
                hovertemplate=(
                    f"{x_title}: %{{x}}<br>active warps: %{{y}}<br>occupancy: %{{customdata[0]:.1f}}%"
                    "<br>blocks per SM: %{customdata[1]}<extra></extra>"
                ),
            )
        )
        fig.add_trace(
            go.Scatter(
                x=[here[key]],
                y=[current.active_warps_per_sm],
                mode="markers",
                name="this kernel",
                marker={"color": "#d62728", "size": 14, "symbol": "circle-open", "line": {"width": 3}},
                hovertemplate=f"this kernel: {x_title} %{{x}}, %{{y}} warps<extra></extra>",
            )
        )
        fig.add_annotation(
            text=note,
            xref="paper",
            yref="paper",
            x=0.99,
            y=0.99,
            xanchor="right",
            yanchor="top",
            showarrow=False,
            align="right",
            bgcolor="rgba(255,255,255,0.85)",
            bordercolor="#999999",
        )
        fig.update_xaxes(title_text=x_title)
        fig.update_yaxes(title_text="Warp occupancy (active warps per SM)", range=[0, current.max_warps_per_sm * 1.05])
        fig.update_layout(title_text=f"{title} (CC {current.cc})", template="plotly_white", showlegend=True)
        figures.append(fig)
    return figures[0], figures[1], figures[2]
