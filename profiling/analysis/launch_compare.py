"""Baseline comparison of two launches (one report or two, ours or anyone's): every figure of the Details view
(profiling.analysis.details.DETAIL_METRICS), and any other metric asked for, with the change and its direction.

A change is "better" or "worse" by the metric's direction, the registry's (time and bytes: lower is better; issue
slots, hit rates, occupancy: higher is better), "changed" for figures that are neither (a unit's % of peak says where
the time goes, not whether it went well), and "same" below SAME_PCT. Rows are sorted by the size of the change.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from profiling.analysis.details import BY_NAME, DETAIL_METRICS, Direction, value
from profiling.nsight.model import KernelLaunch

SAME_PCT = 1.0
"""Changes smaller than this many percent are "same": ncu's own run-to-run spread is about this size."""
Change = Literal["better", "worse", "changed", "same", "n/a"]


@dataclass
class MetricChange:
    """One metric of the comparison; values in base units, None where a launch lacks the metric."""

    section: str
    label: str
    metric: str
    unit: str
    direction: Direction
    baseline: float | None
    candidate: float | None
    delta: float | None
    delta_pct: float | None
    change: Change


def _change(direction: Direction, delta: float | None, delta_pct: float | None) -> Change:
    if delta is None:
        return "n/a"
    if delta == 0 or (delta_pct is not None and abs(delta_pct) < SAME_PCT):
        return "same"
    if direction == "neutral":
        return "changed"
    return "better" if (delta > 0) == (direction == "higher") else "worse"


def compare(
    baseline: KernelLaunch, candidate: KernelLaunch, extra: Sequence[str] = (), units: dict[str, str] | None = None
) -> list[MetricChange]:
    """Every Details figure and each `extra` metric name of two launches, the largest change (by |Δ %|) first;
    rows where either launch lacks the value come last. `units`: the unit of an extra metric, where known."""
    rows: list[MetricChange] = []
    shown = [m.name for m in DETAIL_METRICS if m.metric.shown_for(baseline, candidate)]
    wanted = shown + [n for n in extra if n not in BY_NAME or n not in shown]
    for name in dict.fromkeys(wanted):
        known = BY_NAME.get(name)
        a, b = value(baseline, name), value(candidate, name)
        delta = b - a if a is not None and b is not None else None
        pct = 100.0 * delta / abs(a) if delta is not None and a else None
        direction: Direction = known.direction if known else "neutral"
        unit = known.unit if known else (units or {}).get(name, "")
        if unit == "" and known is None:
            metric = candidate.metrics.get(name) or baseline.metrics.get(name)
            unit = metric.unit if metric is not None else ""
        rows.append(
            MetricChange(
                known.section if known else "Added",
                known.label if known else name,
                name,
                unit,
                direction,
                a,
                b,
                delta,
                pct,
                _change(direction, delta, pct),
            )
        )

    def size(row: MetricChange) -> tuple[int, float]:
        """Changes first, the largest |Δ %| first (one from zero counts as infinite), then "same", then "n/a"."""
        group = {"n/a": 2, "same": 1}.get(row.change, 0)
        return (group, -math.inf if row.delta_pct is None else -abs(row.delta_pct))

    return sorted(rows, key=size)


def launch_identity(source: str, launch: KernelLaunch) -> dict[str, Any]:
    """What names a launch in the comparison document: report, id, label, kernel name, block, grid."""
    return {
        "report": source,
        "id": launch.id,
        "label": launch.label,
        "kernel": launch.name,
        "block": list(launch.block) if launch.block else None,
        "grid": list(launch.grid) if launch.grid else None,
    }


def comparison_document(
    baseline: tuple[str, KernelLaunch], candidate: tuple[str, KernelLaunch], extra: Sequence[str] = ()
) -> dict[str, Any]:
    """The `compare-launches --json` document: both launches' identities and every row of compare()."""
    rows = compare(baseline[1], candidate[1], extra)
    return {
        "schema": "gemmlens.compare_launches.v1",
        "baseline": launch_identity(*baseline),
        "candidate": launch_identity(*candidate),
        "same_below_pct": SAME_PCT,
        "metrics": [asdict(r) for r in rows],
    }
