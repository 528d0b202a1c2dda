"""Operations made of several launches: cuBLAS's split-K GEMM plus its reduction, a memset before an accumulate.

The worker wraps each profiled operation in one NVTX range (`gemmlens:<id>:<m>x<n>x<k>`), and ncu with --nvtx
records every launch inside it. An operation's time is the sum of its parts' gpu__time_duration, which is what
CUDA events around the whole call measure (on an H100, cuBLAS SGEMM at 127x127x8191 ran as a CUTLASS split-K
kernel of 12.4 us plus splitKreduce_kernel of 7.2 us: 19.6 us under ncu, 19.2 us by events).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from profiling.identity import parse_nvtx
from profiling.metric_names import TIME

TIME_METRIC = TIME
ADDITIVE_SUFFIXES = (".sum",)  # counts, bytes and durations add up over the parts; ratios and averages do not


def _get(launch: Any, name: str) -> Any:
    return launch.get(name) if isinstance(launch, Mapping) else getattr(launch, name, None)


def range_key(launch: Any) -> tuple[str, int, int, int] | None:
    """(catalog id, m, n, k) of the worker's NVTX range a launch ran in, else None."""
    text = _get(launch, "nvtx")
    named = parse_nvtx(text) if isinstance(text, str) else None
    if named is None:
        return None
    kernel_id, shape = named
    return kernel_id, shape.m, shape.n, shape.k


def metric_value(launch: Any, name: str) -> float | None:
    metrics = _get(launch, "metrics") or {}
    value = metrics.get(name) if isinstance(metrics, Mapping) else None
    value = _get(value, "value") if value is not None and not isinstance(value, (int, float)) else value
    return float(value) if isinstance(value, (int, float)) else None


@dataclass
class Operation:
    """Launches that ran inside one NVTX range of the worker (or a single launch outside any)."""

    key: tuple[str, int, int, int] | None
    parts: list[Any]

    @property
    def label(self) -> str:
        if self.key is None:
            return str(_get(self.parts[0], "name") or "")
        kid, m, n, k = self.key
        return f"{kid} {m}x{n}x{k}"

    @property
    def time_ns(self) -> float | None:
        """The sum of the parts' durations; None when any part has none (a partial sum would flatter it)."""
        times = [metric_value(p, TIME_METRIC) for p in self.parts]
        return None if any(t is None for t in times) else sum(times)  # type: ignore[arg-type]

    @property
    def main_part(self) -> Any:
        """The longest part (its ratios and averages stand for the operation's)."""
        return max(self.parts, key=lambda p: metric_value(p, TIME_METRIC) or 0.0)


def group_operations(launches: Sequence[Any]) -> list[Operation]:
    """Launches in report order, consecutive ones of the same worker range grouped into one operation."""
    out: list[Operation] = []
    for launch in launches:
        key = range_key(launch)
        if key is not None and out and out[-1].key == key:
            out[-1].parts.append(launch)
        else:
            out.append(Operation(key, [launch]))
    return out


def merged_metrics(operation: Operation) -> dict[str, float]:
    """The operation's metrics: `.sum` metrics added over the parts, every other one from the longest part."""
    main = operation.main_part
    names = {str(n) for p in operation.parts for n in (_get(p, "metrics") or {})}
    out: dict[str, float] = {}
    for name in names:
        if name.endswith(ADDITIVE_SUFFIXES):
            values = [metric_value(p, name) for p in operation.parts]
            if all(v is not None for v in values):
                out[name] = sum(values)  # type: ignore[arg-type]
                continue
        value = metric_value(main, name)
        if value is not None:
            out[name] = value
    return out


OPERATION_COLUMNS = ["operation", "part", "kernel", "grid", "block", "time_us", "share_pct"]


def operations_frame(launches: Sequence[Any]) -> pd.DataFrame:
    """Operations of more than one launch: a total row ("part" = "all") and each part beneath, with its time and
    share of the whole. Empty when every operation is a single launch."""
    rows = []
    for op in group_operations(launches):
        if len(op.parts) < 2:
            continue
        total = op.time_ns
        rows.append(
            {
                "operation": op.label,
                "part": "all",
                "kernel": f"{len(op.parts)} launches",
                "time_us": None if total is None else total / 1e3,
                "share_pct": 100.0,
            }
        )
        for i, part in enumerate(op.parts, 1):
            t = metric_value(part, TIME_METRIC)
            grid, block = _get(part, "grid"), _get(part, "block")
            rows.append(
                {
                    "operation": op.label,
                    "part": str(i),
                    "kernel": str(_get(part, "name") or ""),
                    "grid": "x".join(map(str, grid)) if grid else "",
                    "block": "x".join(map(str, block)) if block else "",
                    "time_us": None if t is None else t / 1e3,
                    "share_pct": None if t is None or not total else 100.0 * t / total,
                }
            )
    return pd.DataFrame(rows, columns=OPERATION_COLUMNS)
