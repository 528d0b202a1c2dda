"""The load test's pooled statistics (scripts/load_stats.py) on fixed visit times: the pooled percentile ratio and
its bootstrap interval, pinned, so a changed rank rule, pooling or resampling fails here."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

from load_stats import nearest_rank, pooled_ratio  # noqa: E402


def test_nearest_rank_is_the_value_at_rank_round_q_n() -> None:
    values = np.arange(1.0, 21.0)[::-1]  # 20 values, unsorted
    assert nearest_rank(values, 0.95) == 19.0  # rank round(19.0) = 19
    assert nearest_rank(values, 0.5) == 10.0
    assert nearest_rank(values, 1.0) == 20.0
    assert nearest_rank(np.array([3.0]), 0.95) == 3.0


def test_pooled_ratio_pools_every_run_before_taking_the_percentile() -> None:
    # Run 1: ours 1..10, ref 1..10; run 2: ours 11..20, ref 2..20 step 2 (ten values). Pooled p95 of ours is rank
    # 19 of 20 = 19; of ref the 19th of {1..10, 2, 4, ..., 20} sorted = 18. A per-run mean of p95 ratios would
    # read (10 / 10 + 20 / 20) / 2 = 1.
    ours = [list(range(1, 11)), list(range(11, 21))]
    ref = [list(range(1, 11)), list(range(2, 21, 2))]
    result = pooled_ratio(ours, ref, q=0.95, resamples=200, seed=1)
    assert (result.ours_s, result.ref_s) == (19.0, 18.0)
    assert result.ratio == pytest.approx(19 / 18)
    assert (result.runs, result.resamples, result.q) == (2, 200, 0.95)


def test_pooled_ratio_interval_is_pinned_for_a_seed() -> None:
    rng = np.random.default_rng(7)
    ours = [list(0.1 + 0.02 * rng.standard_normal(40) + 0.01 * k) for k in range(6)]
    ref = [list(0.1 + 0.02 * rng.standard_normal(40)) for _ in range(6)]
    result = pooled_ratio(ours, ref, q=0.95, resamples=500, seed=3)
    assert result.ratio == pytest.approx(1.2532, abs=1e-4)
    assert (result.low, result.high) == (pytest.approx(1.0984, abs=1e-4), pytest.approx(1.3192, abs=1e-4))
    assert result.low <= result.ratio <= result.high
    again = pooled_ratio(ours, ref, q=0.95, resamples=500, seed=3)
    assert again == result  # seeded: the same interval every time
    median = pooled_ratio(ours, ref, q=0.5, resamples=500, seed=3)
    assert median.ratio == pytest.approx(1.2419, abs=1e-4)


def test_identical_runs_give_a_ratio_of_one_with_no_width() -> None:
    runs = [[0.1, 0.2, 0.3], [0.15, 0.25, 0.35]]
    result = pooled_ratio(runs, runs, resamples=100)
    assert (result.ratio, result.low, result.high) == (1.0, 1.0, 1.0)


def test_unpaired_runs_are_refused() -> None:
    with pytest.raises(ValueError, match="same number of runs"):
        pooled_ratio([[0.1]], [[0.1], [0.2]])
    with pytest.raises(ValueError):
        pooled_ratio([], [])
