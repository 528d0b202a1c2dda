"""Baseline-vs-candidate comparison of saved runs: per kernel/size and metric, the change and its verdict.

Verdicts per metric and kernel/size: "improvement", "regression" or "same" (the change is within the
noise threshold); "changed" for metrics with no better direction (registers, shared memory) that moved
past the threshold; "n/a" where either side has no value. Runs are SavedRun or their record dicts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from profiling.errors import InvalidInput
from profiling.runs.records import RunResult, SavedRun, as_run
from profiling.runs.values import finite_number


@dataclass(frozen=True)
class MetricSpec:
    """A compared metric: result field, display label, and which way is better (None: neither)."""

    key: str
    label: str
    better: str | None  # "lower" | "higher" | None


METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("time_median_ms", "Time (ms)", "lower"),
    MetricSpec("tflops", "TFLOP/s", "higher"),
    MetricSpec("pct_cublas", "% cuBLAS", "higher"),
    MetricSpec("registers", "Registers", None),
    MetricSpec("shared_bytes", "Shared mem (B)", None),
    MetricSpec("occupancy_pct", "Occupancy (%)", "higher"),
    MetricSpec("bank_conflicts", "Bank conflicts", "lower"),
    MetricSpec("dram_bytes", "DRAM bytes", "lower"),
)


METRIC_BY_KEY = {m.key: m for m in METRICS}


DEFAULT_THRESHOLD_PCT = 2.0


# Colours of verdicts as in Nsight Compute's baseline view: green better, red worse.
VERDICT_COLORS = {
    "improvement": "#1a7f37",
    "regression": "#cf222e",
    "same": "#57606a",
    "changed": "#9a6700",
    "n/a": "#8c959f",
}


COMPARISON_COLUMNS = [
    "candidate_id", "candidate_label", "kernel", "size", "metric", "metric_label", "better",
    "baseline", "candidate", "delta", "delta_pct", "verdict",
]  # fmt: skip


def classify(better: str | None, baseline: Any, candidate: Any, threshold_pct: float) -> str:
    """The verdict of one metric: see the module docstring."""
    b, c = finite_number(baseline), finite_number(candidate)
    if b is None or c is None:
        return "n/a"
    pct = _delta_pct(b, c)
    if abs(pct) <= threshold_pct:
        return "same"
    if better is None:
        return "changed"
    return "improvement" if (pct < 0) == (better == "lower") else "regression"


def _delta_pct(baseline: float, candidate: float) -> float:
    if baseline == 0:
        return 0.0 if candidate == 0 else math.copysign(math.inf, candidate)
    return (candidate - baseline) / abs(baseline) * 100.0


def _keyed(run: SavedRun) -> dict[tuple[str, str], RunResult]:
    out: dict[tuple[str, str], RunResult] = {}
    for r in run.results:
        out.setdefault((r.kernel, r.size), r)  # a repeated kernel/size: the first one counts
    return out


def compare_runs(
    baseline: SavedRun | Mapping[str, Any],
    candidates: Sequence[SavedRun | Mapping[str, Any]],
    *,
    threshold_pct: float = DEFAULT_THRESHOLD_PCT,
    thresholds: Mapping[str, float] | None = None,
    metrics: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Long comparison table (COMPARISON_COLUMNS): one row per candidate, kernel/size present in both
    runs, and metric; delta = candidate - baseline, delta_pct relative to the baseline. `thresholds`
    overrides the noise threshold (percent) per metric key. A "status" row per pair says whether the
    result went from ok to wrong/failed (regression) or back (improvement)."""
    if not math.isfinite(threshold_pct) or threshold_pct < 0:
        raise InvalidInput(f"the noise threshold must be a percentage >= 0, not {threshold_pct}")
    specs = [METRIC_BY_KEY[k] for k in metrics] if metrics else list(METRICS)
    base = _keyed(as_run(baseline))
    rows = []
    for cand in map(as_run, candidates):
        cand_rows = _keyed(cand)
        for key in [k for k in base if k in cand_rows]:
            b, c = base[key], cand_rows[key]
            b_status, c_status = b.status, c.status
            if b_status == c_status:
                verdict = "same"
            elif b_status == "ok":
                verdict = "regression"
            elif c_status == "ok":
                verdict = "improvement"
            else:
                verdict = "changed"
            common = {"candidate_id": cand.id, "candidate_label": cand.label,
                      "kernel": key[0], "size": key[1]}  # fmt: skip
            rows.append(
                {**common, "metric": "status", "metric_label": "Status", "better": None,
                 "baseline": b_status, "candidate": c_status, "delta": None, "delta_pct": None,
                 "verdict": verdict}
            )  # fmt: skip
            for spec in specs:
                bv, cv = finite_number(getattr(b, spec.key)), finite_number(getattr(c, spec.key))
                limit = (thresholds or {}).get(spec.key, threshold_pct)
                rows.append(
                    {
                        **common, "metric": spec.key, "metric_label": spec.label, "better": spec.better,
                        "baseline": bv, "candidate": cv,
                        "delta": None if bv is None or cv is None else cv - bv,
                        "delta_pct": None if bv is None or cv is None else _delta_pct(bv, cv),
                        "verdict": classify(spec.better, bv, cv, limit),
                    }
                )  # fmt: skip
    return pd.DataFrame(rows, columns=COMPARISON_COLUMNS)


def unmatched(baseline: SavedRun | Mapping[str, Any], candidate: SavedRun | Mapping[str, Any]) -> pd.DataFrame:
    """Kernel/size pairs present in only one of the two runs (columns kernel, size, only_in)."""
    base, cand = _keyed(as_run(baseline)), _keyed(as_run(candidate))
    rows = [{"kernel": k, "size": s, "only_in": "baseline"} for (k, s) in base if (k, s) not in cand]
    rows += [{"kernel": k, "size": s, "only_in": "candidate"} for (k, s) in cand if (k, s) not in base]
    return pd.DataFrame(rows, columns=["kernel", "size", "only_in"])


def side_by_side(comparison: pd.DataFrame) -> pd.DataFrame:
    """Wide table: one row per candidate/kernel/size, per metric columns "<label>", "<label> (base)" and
    "<label> Δ%", plus "<label> verdict" columns for colouring."""
    keys = ["candidate_label", "kernel", "size"]
    if comparison.empty:
        return pd.DataFrame(columns=keys)
    out = comparison[keys].drop_duplicates().reset_index(drop=True)
    for metric, part in comparison.groupby("metric", sort=False):
        label = part["metric_label"].iloc[0]
        part = part.rename(
            columns={"baseline": f"{label} (base)", "candidate": label, "delta_pct": f"{label} Δ%",
                     "verdict": f"{label} verdict"}
        )  # fmt: skip
        cols = [f"{label} (base)", label] + ([f"{label} Δ%"] if metric != "status" else []) + [f"{label} verdict"]
        out = out.merge(part[keys + cols], on=keys, how="left")
    return out


def slower_than(comparison: pd.DataFrame, pct: float) -> pd.DataFrame:
    """Kernel/size pairs whose median time grew by more than `pct` percent, or that stopped being ok."""
    time_rows = comparison[comparison["metric"] == "time_median_ms"]
    slower = time_rows[time_rows["delta_pct"].astype(float) > pct]
    broken = comparison[(comparison["metric"] == "status") & (comparison["verdict"] == "regression")]
    return pd.concat([slower, broken], ignore_index=True)
