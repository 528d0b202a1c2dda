"""The load test's pooled statistics (scripts/load_stats.py) on fixed visit times: the pooled percentile ratio and
its bootstrap interval, pinned, so a changed rank rule, pooling or resampling fails here."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

from load_stats import median_ratio_over_rounds, nearest_rank, pooled_ratio, rate_at_p95  # noqa: E402


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


def test_median_ratio_over_rounds_takes_the_median_and_a_seeded_interval() -> None:
    ratios = [1.53, 1.74, 1.49, 1.60, 1.58]
    result = median_ratio_over_rounds(ratios, resamples=400, seed=2)
    assert result.ratio == 1.58  # the middle of five, not the mean (1.588)
    assert result.rounds == 5
    # Five rounds: resampled medians reach from the lowest round to the highest, an honest width for five.
    assert (result.low, result.high) == (pytest.approx(1.49), pytest.approx(1.74))
    assert median_ratio_over_rounds(ratios, resamples=400, seed=2) == result
    with pytest.raises(ValueError, match="at least one round"):
        median_ratio_over_rounds([])


def test_rate_at_p95_interpolates_between_the_bracketing_levels() -> None:
    # 2 processes at 40, 56 and 72 people: p95 0.15, 0.21, 0.27 s at 350, 370, 380 visits/s; one process's p95
    # 0.24 s lies between the last two: 370 + 10 * (0.03 / 0.06) = 375.
    levels = [(0.21, 370.0), (0.15, 350.0), (0.27, 380.0)]
    rate, read = rate_at_p95(levels, 0.24)
    assert (rate, read) == (pytest.approx(375.0), "=")
    assert rate_at_p95(levels, 0.15) == (pytest.approx(350.0), "=")


def test_rate_at_p95_says_when_the_levels_do_not_reach_the_target() -> None:
    levels = [(0.15, 350.0), (0.21, 370.0)]
    assert rate_at_p95(levels, 0.25) == (370.0, ">=")  # more people would have got more through
    assert rate_at_p95(levels, 0.21) == (370.0, ">=")  # the most people reached the p95 exactly: still a floor
    assert rate_at_p95(levels, 0.10) == (350.0, "<=")  # fewer people get less through
    with pytest.raises(ValueError, match="at least one people level"):
        rate_at_p95([], 0.2)


def test_process_ratios_pair_each_round_and_read_the_rate_at_one_process_p95() -> None:
    from load_test import process_ratios

    def run(n: int, people: int, rnd: int, rate: float, p95: float) -> dict:
        return {"processes": n, "people": people, "round": rnd, "visits_per_s": rate, "p95_s": p95}

    runs = [
        run(1, 40, 0, 200.0, 0.25), run(2, 40, 0, 300.0, 0.15), run(2, 64, 0, 360.0, 0.30),
        run(1, 40, 1, 220.0, 0.24), run(2, 40, 1, 352.0, 0.16), run(2, 64, 1, 380.0, 0.22),
    ]  # fmt: skip
    (two,) = process_ratios(runs)
    # Round 0: 300 / 200 = 1.5 at 40 people; at p95 0.25 s, 300 + 60 * (0.10 / 0.15) = 340 -> 1.7.
    # Round 1: 352 / 220 = 1.6; every p95 of 2 processes is under 0.24 s: 380 / 220 = 1.727, a floor.
    assert (two["processes"], two["rounds"], two["people"], two["people_levels"]) == (2, 2, 40, [40, 64])
    assert two["throughput_ratio"] == 1.55  # the median of 1.5 and 1.6
    assert two["p95_ratio"] == pytest.approx(round((0.15 / 0.25 + 0.16 / 0.24) / 2, 2))
    assert two["same_p95_throughput_ratio"] == 1.71  # the median of 1.7 and 1.727
    assert two["same_p95_reads"] == {"=": 1, ">=": 1}
    assert process_ratios([r for r in runs if r["processes"] == 2]) == []  # no one-process round to compare with
