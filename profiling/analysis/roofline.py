"""Roofline points, before any figure: algorithmic points of a run (2MNK over the minimum traffic), hierarchical
points of ncu launches (FLOPs over the bytes at L1, L2 and DRAM), and where each sits under its ceilings (the
arithmetic intensity, the achieved FLOP/s, the binding ceiling and the share of it). profiling.charts.roofline
draws them."""

from __future__ import annotations

import math

import pandas as pd

from kernels.operations import OPERATIONS, OperationSpec
from profiling.device_model import Ceilings
from profiling.errors import InvalidInput
from profiling.nsight import metrics as M
from profiling.nsight.report import Report
from profiling.shape import Shape

LEVELS = ("DRAM", "L2", "L1", "algorithmic")
POINT_COLUMNS = ("kernel", "label", "level", "flops", "bytes", "seconds")


def algorithmic_point(
    kernel: str, m: int, n: int, k: int, seconds: float, bytes_per_element: int = 4, label: str | None = None
) -> dict:
    """A roofline point from the problem alone: 2MNK FLOPs over the minimum traffic (read A, B; write C)."""
    return {
        "kernel": kernel,
        "label": label or Shape(m, n, k).label,
        "level": "algorithmic",
        "flops": 2.0 * m * n * k,
        "bytes": float(bytes_per_element) * (m * k + k * n + m * n),
        "seconds": float(seconds),
    }


def operation_point(
    kernel: str, shape: Shape, seconds: float, operation: OperationSpec | None, label: str | None = None
) -> dict:
    """The algorithmic point of one run of `operation` (None: a kernel that is not ours, drawn as FP32 SGEMM),
    with its FLOP count, element size and compute ceiling ("fp32" | "tensor") from the operation table.

    Every element of A, B and C is counted at the operation's input size, as the figures always have.
    """
    op = operation or OPERATIONS["sgemm"]
    point = algorithmic_point(kernel, shape.m, shape.n, shape.k, seconds, op.input_bytes, label=label)
    point["flops"] = float(op.flops(shape.m, shape.n, shape.k))
    point["compute"] = op.compute
    return point


def roofline_points(points: pd.DataFrame, ceilings: Ceilings) -> pd.DataFrame:
    """Points with arithmetic intensity, achieved FLOP/s, the binding ceiling and % of it added.

    The compute ceiling is FP32 unless a point's optional "compute" column says "tensor".
    """
    missing = [c for c in POINT_COLUMNS if c not in points.columns]
    if missing:
        raise InvalidInput(f"roofline points lack column(s) {', '.join(missing)}")
    bad_levels = sorted(set(points["level"]) - set(LEVELS))
    if bad_levels:
        raise InvalidInput(f"unknown roofline level(s) {bad_levels}; use {', '.join(LEVELS)}")
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


def launch_points(report: Report) -> pd.DataFrame:
    """Hierarchical roofline points: one row per launch and memory level that has the data.

    Columns: kernel (function name), label, level ("L1", "L2" or "DRAM"), flops, bytes (moved at that
    level), seconds (kernel duration), compute ("fp32" or "tensor"). A tensor-core launch (its identity) of known
    size counts 2*M*N*K FLOPs against the tensor ceiling (ncu's FP32 counts see only its epilogue); others count
    fadd + fmul + 2 ffma.
    """
    records = []
    for launch in report.launches:
        flops, seconds = launch.derived.get("fp32_flops"), launch.derived.get("seconds")
        compute = "fp32"
        ident = launch.identity
        if ident.tensor_core and ident.gemm_flops is not None:
            flops, compute = ident.gemm_flops, "tensor"
        if not flops or not seconds:
            continue
        label = launch.label
        for level, (bytes_name, _, _) in M.LEVEL_BYTES.items():
            moved = launch.value(bytes_name)
            if moved:
                records.append(
                    {
                        "kernel": launch.function,
                        "label": label,
                        "level": level,
                        "flops": flops,
                        "bytes": moved,
                        "seconds": seconds,
                        "compute": compute,
                    }
                )
    columns = ["kernel", "label", "level", "flops", "bytes", "seconds", "compute"]
    return pd.DataFrame.from_records(records, columns=columns)
