"""Statistics of the load test's pooled mode (scripts/load_test.py --pooled R): one app's visit times against a
reference app's, over R runs measured back to back.

A percentile of one run's forty visits a page swings with the machine from run to run (the minimal app's p95 by a
third here), so the ratio of two such percentiles cannot resolve a few percent. The pooled ratio takes the
percentile of all runs' visits of each app; its interval comes from resampling whole runs (paired: a resampled run
brings both apps' visits of that run), because the visits of one run share that run's machine load and are not
independent of each other, while runs, started one after another, are closer to it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PooledRatio:
    """A percentile of one app's pooled visits over the reference's, with its bootstrap interval."""

    q: float
    ratio: float
    low: float
    high: float
    ours_s: float  # the pooled percentile, seconds
    ref_s: float
    runs: int
    resamples: int


def nearest_rank(values: np.ndarray, q: float) -> float:
    """The `q` percentile by nearest rank (the value at rank round(q * n), 1-based), as `load_test.summary` takes
    its per-run p50 and p95, so a pooled figure and a run's figure are read alike."""
    ordered = np.sort(np.asarray(values, dtype=float))
    return float(ordered[min(len(ordered) - 1, max(0, int(round(q * len(ordered))) - 1))])


def pooled_ratio(
    ours: Sequence[Sequence[float]],
    ref: Sequence[Sequence[float]],
    q: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> PooledRatio:
    """The `q` percentile of all of `ours`'s visits (one list of seconds per run) over that of all of `ref`'s (run i
    of each measured back to back), and the `level` percentile interval of `resamples` bootstrap ratios, each from
    as many runs drawn with replacement (the same runs for both apps), with numpy's generator seeded by `seed`."""
    if len(ours) != len(ref) or not ours:
        raise ValueError(f"need the same number of runs of each app, at least one: {len(ours)} and {len(ref)}")
    ours_runs = [np.asarray(r, dtype=float) for r in ours]
    ref_runs = [np.asarray(r, dtype=float) for r in ref]
    ours_s = nearest_rank(np.concatenate(ours_runs), q)
    ref_s = nearest_rank(np.concatenate(ref_runs), q)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(ours_runs), size=(resamples, len(ours_runs)))
    ratios = np.array(
        [
            nearest_rank(np.concatenate([ours_runs[i] for i in pick]), q)
            / nearest_rank(np.concatenate([ref_runs[i] for i in pick]), q)
            for pick in picks
        ]
    )
    tail = (1 - level) / 2
    low, high = np.quantile(ratios, [tail, 1 - tail])
    return PooledRatio(
        q=q,
        ratio=ours_s / ref_s,
        low=float(low),
        high=float(high),
        ours_s=ours_s,
        ref_s=ref_s,
        runs=len(ours_runs),
        resamples=resamples,
    )


@dataclass(frozen=True)
class RoundsRatio:
    """The median over rounds of a per-round ratio (each round measured both sides back to back), with the
    bootstrap interval of that median over rounds drawn with replacement."""

    ratio: float
    low: float
    high: float
    rounds: int


def median_ratio_over_rounds(
    ratios: Sequence[float], resamples: int = 2000, seed: int = 0, level: float = 0.95
) -> RoundsRatio:
    """The median of `ratios` (one a round) and the `level` percentile interval of `resamples` medians of as many
    rounds drawn with replacement, numpy's generator seeded by `seed`: a round's ratio pairs two measurements
    taken under the same machine load, and rounds are closer to independent than visits within one."""
    if not ratios:
        raise ValueError("need at least one round")
    values = np.asarray(ratios, dtype=float)
    rng = np.random.default_rng(seed)
    medians = np.median(values[rng.integers(0, len(values), size=(resamples, len(values)))], axis=1)
    tail = (1 - level) / 2
    low, high = np.quantile(medians, [tail, 1 - tail])
    return RoundsRatio(float(np.median(values)), float(low), float(high), len(values))


def rate_at_p95(levels: Sequence[tuple[float, float]], target_p95_s: float) -> tuple[float, str]:
    """The throughput (visits/s) at which the tail reaches `target_p95_s`, from (p95 seconds, visits/s) measured at
    several numbers of people, and how it was read: "=" linear between the two levels whose p95s bracket the
    target; ">=" the highest level's rate when every p95 is under the target (more people would have got more
    through); "<=" the lowest level's rate when every p95 is over it (fewer people get less through)."""
    if not levels:
        raise ValueError("need at least one people level")
    ordered = sorted(levels)
    if ordered[-1][0] <= target_p95_s:
        return max(rate for _, rate in ordered), ">="
    if ordered[0][0] > target_p95_s:
        return ordered[0][1], "<="
    for (p_low, r_low), (p_high, r_high) in zip(ordered, ordered[1:], strict=False):
        if p_low <= target_p95_s < p_high:
            return r_low + (r_high - r_low) * (target_p95_s - p_low) / (p_high - p_low), "="
    raise AssertionError("unreachable: the target lies between the lowest and highest p95")
