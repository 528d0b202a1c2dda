"""Every plotly figure of the app and the exported review, as pure functions (no I/O, no Streamlit).

- `style`: a colour per kernel, SI labels, escaped text.
- `roofline`: algorithmic and hierarchical roofline figures (their points: profiling.analysis.roofline).
- `occupancy`: Nsight-Compute-style occupancy graphs.
- `bench`: TFLOP/s and % of cuBLAS per size.
- `review`: saved runs side by side, baseline vs candidates, a kernel's history.
"""

from __future__ import annotations

from profiling.analysis.roofline import POINT_COLUMNS, algorithmic_point, roofline_points
from profiling.charts.bench import pct_cublas_figure, tflops_figure
from profiling.charts.occupancy import occupancy_figures
from profiling.charts.review import comparison_figures, history_figure, review_roofline
from profiling.charts.roofline import (
    CEILING_COLORS,
    LEVEL_SYMBOLS,
    bench_roofline_points,
    kernel_points,
    report_roofline_points,
    roofline,
    roofline_figure,
)
from profiling.charts.style import PALETTE, kernel_color, plot_text, si

__all__ = [
    "CEILING_COLORS",
    "LEVEL_SYMBOLS",
    "PALETTE",
    "POINT_COLUMNS",
    "algorithmic_point",
    "bench_roofline_points",
    "comparison_figures",
    "history_figure",
    "kernel_color",
    "kernel_points",
    "occupancy_figures",
    "pct_cublas_figure",
    "plot_text",
    "report_roofline_points",
    "review_roofline",
    "roofline",
    "roofline_figure",
    "roofline_points",
    "si",
    "tflops_figure",
]
