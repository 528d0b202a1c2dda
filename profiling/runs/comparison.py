"""Baseline-vs-candidate comparison of saved runs: per kernel/size and metric, the change and its verdict.

The time row's verdict rests on the per-launch times (profiling.runs.verdict): "faster", "slower", "same",
"noisy" or "not comparable", with the bootstrap interval of the time ratio beside it; "no verdict" where a run
saved no per-launch times, with the medians' change in the interval column. The other metrics
keep a threshold rule: "improvement", "regression" or "same" (the change is within the threshold);
"changed" for metrics with no better direction (registers, shared memory) that moved past it; "n/a" where
either side has no value. Runs are SavedRun or their record dicts.
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
from profiling.runs.verdict import DEFAULT_CONFIDENCE, DEFAULT_THRESHOLD_PCT, Comparability, comparability, time_verdict


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


# Colours of verdicts as in Nsight Compute's baseline view: green better, red worse.
VERDICT_COLORS = {
    "improvement": "#1a7f37",
    "regression": "#cf222e",
    "faster": "#1a7f37",
    "slower": "#cf222e",
    "same": "#57606a",
    "changed": "#9a6700",
    "noisy": "#9a6700",
    "no verdict": "#8c959f",
    "not comparable": "#8c959f",
    "n/a": "#8c959f",
}
BETTER_VERDICTS = ("improvement", "faster")
WORSE_VERDICTS = ("regression", "slower")


COMPARISON_COLUMNS = [
    "candidate_id",
    "candidate_label",
    "kernel",
    "size",
    "metric",
    "metric_label",
    "better",
    "baseline",
    "candidate",
    "delta",
    "delta_pct",
    "verdict",
    "interval",
    "ratio_low",
    "ratio_high",
    "repeats_needed",
    "note",
]


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
    cross_gpu: bool = False,
    confidence: float = DEFAULT_CONFIDENCE,
) -> pd.DataFrame:
    """Long comparison table (COMPARISON_COLUMNS): one row per candidate, kernel/size present in both
    runs, and metric; delta = candidate - baseline, delta_pct relative to the baseline. `thresholds`
    overrides the threshold (percent) per metric key. A "status" row per pair says whether the
    result went from ok to wrong/failed (regression) or back (improvement). The time row carries the
    statistical verdict and its interval; runs on different GPU models are "not comparable" unless
    `cross_gpu` (see profiling.runs.verdict.comparability)."""
    if not math.isfinite(threshold_pct) or threshold_pct < 0:
        raise InvalidInput(f"the noise threshold must be a percentage >= 0, not {threshold_pct}")
    specs = [METRIC_BY_KEY[k] for k in metrics] if metrics else list(METRICS)
    base_run = as_run(baseline)
    base = _keyed(base_run)
    rows = []
    for cand in map(as_run, candidates):
        guard = comparability(base_run, cand, cross_gpu=cross_gpu)
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
            common = {"candidate_id": cand.id, "candidate_label": cand.label, "kernel": key[0], "size": key[1]}
            rows.append(
                {
                    **common,
                    "metric": "status",
                    "metric_label": "Status",
                    "better": None,
                    "baseline": b_status,
                    "candidate": c_status,
                    "delta": None,
                    "delta_pct": None,
                    "verdict": verdict,
                }
            )
            for spec in specs:
                bv, cv = finite_number(getattr(b, spec.key)), finite_number(getattr(c, spec.key))
                limit = (thresholds or {}).get(spec.key, threshold_pct)
                row = {
                    **common,
                    "metric": spec.key,
                    "metric_label": spec.label,
                    "better": spec.better,
                    "baseline": bv,
                    "candidate": cv,
                    "delta": None if bv is None or cv is None else cv - bv,
                    "delta_pct": None if bv is None or cv is None else _delta_pct(bv, cv),
                    "verdict": classify(spec.better, bv, cv, limit),
                }
                if spec.key == "time_median_ms":
                    row.update(_time_columns(b, c, guard, limit, confidence))
                elif spec.key in SPEED_KEYS and not guard.comparable:
                    row["verdict"] = "not comparable"
                rows.append(row)
    return pd.DataFrame(rows, columns=COMPARISON_COLUMNS)


# Metrics that measure speed: on runs from different GPU models their verdicts say "not comparable".
SPEED_KEYS = ("time_median_ms", "tflops", "pct_cublas")


def _time_columns(
    b: RunResult, c: RunResult, guard: Comparability, threshold_pct: float, confidence: float
) -> dict[str, Any]:
    """The statistical verdict, interval and note of one kernel/size's time row."""
    if not guard.comparable:
        return {"verdict": "not comparable", "note": guard.label()}
    found = time_verdict(
        b.times_ms, c.times_ms, b.time_median_ms, c.time_median_ms, threshold_pct=threshold_pct, confidence=confidence
    )
    interval = found.interval
    return {
        "verdict": found.verdict,
        "interval": found.interval_text(),
        "ratio_low": None if interval is None else interval.low,
        "ratio_high": None if interval is None else interval.high,
        "repeats_needed": found.repeats_needed,
        "note": found.note,
    }


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
            columns={
                "baseline": f"{label} (base)",
                "candidate": label,
                "delta_pct": f"{label} Δ%",
                "verdict": f"{label} verdict",
            }
        )
        cols = [f"{label} (base)", label] + ([f"{label} Δ%"] if metric != "status" else []) + [f"{label} verdict"]
        if metric == "time_median_ms":
            part = part.rename(columns={"interval": f"{label} interval", "note": f"{label} note"})
            cols += [f"{label} interval", f"{label} note"]
        out = out.merge(part[keys + cols], on=keys, how="left")
    return out


TIME_NOTE = "Time (ms) note"  # side_by_side's column of the time rows' notes


def notes_said_once(side: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """A side_by_side table without its time-note column when every row carries the same note (e.g. neither
    run saved per-launch times), and that note, for a view to say once above the table; else (side, "")."""
    if TIME_NOTE not in side.columns or side.empty:
        return side, ""
    notes = set(side[TIME_NOTE].fillna("").astype(str))
    if len(notes) != 1 or not next(iter(notes)):
        return side, ""
    return side.drop(columns=[TIME_NOTE]), notes.pop()


def slower_than(comparison: pd.DataFrame, pct: float) -> pd.DataFrame:
    """Kernel/size pairs that are "slower" by the verdicts' rule with `pct` as the practical threshold (the
    interval excludes no change and the median grew by more than `pct`; on results without per-launch times,
    the median alone), or that stopped being ok."""
    time_rows = comparison[comparison["metric"] == "time_median_ms"]
    grew = time_rows["delta_pct"].astype(float) > pct
    low = pd.to_numeric(time_rows["ratio_low"], errors="coerce")
    decided = low.isna() | (low > 1.0)
    slower = time_rows[grew & decided & (time_rows["verdict"] != "not comparable")]
    broken = comparison[(comparison["metric"] == "status") & (comparison["verdict"] == "regression")]
    return pd.concat([slower, broken], ignore_index=True)


def undecided(comparison: pd.DataFrame, pct: float) -> pd.DataFrame:
    """Time rows that grew by more than `pct` but whose interval still includes no change: too noisy to gate on."""
    time_rows = comparison[comparison["metric"] == "time_median_ms"]
    low = pd.to_numeric(time_rows["ratio_low"], errors="coerce")
    return time_rows[(time_rows["delta_pct"].astype(float) > pct) & low.notna() & (low <= 1.0)]
