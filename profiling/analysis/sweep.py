"""Shape sweeps (`bench --grid`): results as an M x N table per K, the waves each launch needed, and the winner.

A wave is one round of blocks over the whole GPU: blocks / (SMs x blocks per SM). A launch of 1.02 waves pays for
two (the second nearly empty), so speed drops where the block count crosses a whole wave; the heatmaps draw a line
there (profiling.charts.sweep).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from profiling.paths import BUNDLED_RESULTS_DIR
from profiling.runs.results import ResultsDocument

SWEEP_COLUMNS = [
    "kernel",
    "m",
    "n",
    "k",
    "status",
    "tflops",
    "pct_cublas",
    "time_ms",
    "blocks",
    "blocks_per_sm",
    "waves",
    "config",
]
SWEEP_FOLDER = "sweep"  # results/<device>-<date>/sweep/*.json: bundled grid sweeps


def sweep_frame(document: ResultsDocument) -> pd.DataFrame:
    """One row per result: kernel, shape, status, TFLOP/s, % of cuBLAS, median ms, and for catalog kernels the
    block count, blocks per SM and waves (from the launch facts and the device's SM count)."""
    sms = document.device.sm_count
    rows = []
    for r in document.results:
        launch = r.launch or {}
        grid = launch.get("grid") or []
        per_sm = launch.get("max_active_blocks_per_sm")
        blocks = math.prod(int(g) for g in grid) if grid else None
        waves = blocks / (sms * per_sm) if blocks and sms and per_sm else None
        rows.append(
            {
                "kernel": r.kernel,
                "m": r.shape.m,
                "n": r.shape.n,
                "k": r.shape.k,
                "status": r.status,
                "tflops": r.tflops if r.status == "ok" else None,
                "pct_cublas": r.pct_cublas if r.status == "ok" else None,
                "time_ms": r.time_ms.median if r.time_ms else None,
                "blocks": blocks,
                "blocks_per_sm": per_sm,
                "waves": waves,
                "config": r.config,
            }
        )
    return pd.DataFrame(rows, columns=SWEEP_COLUMNS)


def is_grid(frame: pd.DataFrame) -> bool:
    """Whether the results form a sweep worth a heatmap: at least 2 values of M and of N at one K."""
    if frame.empty:
        return False
    per_k = frame.groupby("k")[["m", "n"]].nunique()
    return bool(((per_k["m"] >= 2) & (per_k["n"] >= 2)).any())


def grid_table(frame: pd.DataFrame, kernel: str, k: int, value: str) -> pd.DataFrame:
    """M (rows, ascending) x N (columns, ascending) of one kernel's `value` at one K."""
    part = frame[(frame["kernel"] == kernel) & (frame["k"] == k)]
    return part.pivot_table(index="m", columns="n", values=value, aggfunc="first").sort_index().sort_index(axis=1)


def winners(frame: pd.DataFrame, k: int, kernels: list[str] | None = None) -> pd.DataFrame:
    """Per M x N at one K: the fastest kernel that verified (most TFLOP/s), its TFLOP/s and its lead over the
    runner-up in percent (columns m, n, winner, tflops, lead_pct)."""
    part = frame[(frame["k"] == k) & frame["tflops"].notna()]
    if kernels:
        part = part[part["kernel"].isin(kernels)]
    rows = []
    for (m, n), cell in part.groupby(["m", "n"]):
        ranked = cell.sort_values("tflops", ascending=False)
        best = ranked.iloc[0]
        second = ranked.iloc[1]["tflops"] if len(ranked) > 1 else None
        lead = 100.0 * (best["tflops"] / second - 1.0) if second else None
        rows.append({"m": m, "n": n, "winner": best["kernel"], "tflops": best["tflops"], "lead_pct": lead})
    return pd.DataFrame(rows, columns=["m", "n", "winner", "tflops", "lead_pct"])


def bundled_sweeps(root: Path = BUNDLED_RESULTS_DIR) -> list[Path]:
    """The committed grid sweeps, newest folder first."""
    if not root.is_dir():
        return []
    return sorted(
        root.glob(f"*/{SWEEP_FOLDER}/*.json"), key=lambda p: (p.parent.parent.name[-10:], p.name), reverse=True
    )
