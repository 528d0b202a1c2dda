"""Verdicts on real sample sets (H100, 2026-11-24, results/h100-2026-11-24/): a run against itself is "same", a known
shift is faster or slower, too few launches of a jittery kernel are "noisy"; and the comparability guard on real
results of two GPU models. Hand-made numbers appear only where a test needs a property no real run has."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from profiling.runs import convert
from profiling.runs.comparison import compare_runs, slower_than, undecided
from profiling.runs.records import SavedRun
from profiling.runs.verdict import (
    bootstrap_ratio,
    comparability,
    decide,
    repeats_to_decide,
    resampled_medians,
    time_verdict,
)

ROOT = Path(__file__).resolve().parents[1]
VERDICTS = ROOT / "results" / "h100-2026-11-24" / "verdicts"
SWEEP = ROOT / "results" / "h100-2026-11-24" / "sweep" / "sweep_grid.json"
H100_BENCH = ROOT / "results" / "h100-2026-11-22" / "bench_2048-4096.json"
H200_BENCH = ROOT / "results" / "h200-2026-11-22" / "bench_1024-4096.json"


def run_of(path: Path) -> SavedRun:
    return convert.bench_run(json.loads(path.read_text()))


def times(run: SavedRun, kernel: str) -> tuple[float, ...]:
    return next(r.times_ms for r in run.results if r.kernel == kernel)


def shifted(run: SavedRun, factor: float) -> SavedRun:
    """The run with every launch `factor` times as long (medians and raw times alike): a known shift."""
    results = tuple(
        dataclasses.replace(
            r,
            times_ms=tuple(t * factor for t in r.times_ms),
            time_median_ms=r.time_median_ms * factor,
            tflops=r.tflops / factor,
        )
        for r in run.results
    )
    return dataclasses.replace(run, results=results)


def test_a_committed_run_compared_with_itself_is_same_everywhere() -> None:
    for path in (VERDICTS / "seq_4096_r100.json", VERDICTS / "seq_4096_r10.json", VERDICTS / "ab_4096_r300.json"):
        run = run_of(path)
        table = compare_runs(run, [run])
        time_rows = table[table["metric"] == "time_median_ms"]
        assert set(time_rows["verdict"]) == {"same"}, path.name
        assert time_rows["interval"].str.contains(r"^\+0\.0 %").all()
        assert slower_than(table, 2.0).empty


@pytest.mark.parametrize(("factor", "verdict"), [(1.10, "slower"), (0.90, "faster"), (1.005, "same")])
def test_a_known_shift_of_a_real_run_is_found(factor: float, verdict: str) -> None:
    base = run_of(VERDICTS / "seq_4096_r100.json")
    table = compare_runs(base, [shifted(base, factor)], threshold_pct=2.0)
    time_rows = table[table["metric"] == "time_median_ms"]
    assert set(time_rows["verdict"]) == {verdict}
    assert pytest.approx((factor - 1) * 100, abs=0.01) == time_rows["delta_pct"].iloc[0]
    # The interval is as narrow as 100 steady launches make it, and it covers the shift.
    low, high = time_rows["ratio_low"].iloc[0], time_rows["ratio_high"].iloc[0]
    assert low <= factor <= high and high - low < 0.01
    assert (slower_than(table, 2.0).empty) == (verdict != "slower")


def test_two_real_runs_of_the_same_code_agree() -> None:
    """Back-to-back runs a minute apart on one H100: same, with an interval far inside the 2 % threshold."""
    table = compare_runs(run_of(VERDICTS / "seq_4096_r100.json"), [run_of(VERDICTS / "again_seq_4096_r100.json")])
    time_rows = table[table["metric"] == "time_median_ms"]
    assert set(time_rows["verdict"]) == {"same"}
    assert (time_rows["ratio_high"] - time_rows["ratio_low"] < 0.01).all()


def test_few_launches_of_a_jittery_kernel_are_noisy_with_a_repeat_count() -> None:
    """cuBLAS at 16x8192x512 (about 18 us) in the grid sweep: its first timed launch took 58 us. Five launches
    against the next five cannot decide anything at a 2 % threshold."""
    doc = json.loads(SWEEP.read_text())
    row = next(r for r in doc["results"] if (r["kernel"], r["m"], r["n"], r["k"]) == ("cublas", 16, 8192, 512))
    first, rest = row["times_ms"][:5], row["times_ms"][5:]
    found = time_verdict(first, rest, None, None, threshold_pct=2.0)
    assert found.verdict == "noisy" and found.interval.low < 0.98 and found.interval.high > 1.0
    assert found.repeats_needed is None or found.repeats_needed > 10
    assert "launches per side" in found.note


def test_the_a_b_pair_is_faster_by_the_same_amount_paired_or_not() -> None:
    """v8-async against v7-warptile at 4096: 4.3 % faster, interleaved and back-to-back alike (a quiet H100)."""
    ab = run_of(VERDICTS / "ab_4096_r300.json")
    a, b = times(ab, "v7-warptile"), times(ab, "v8-async")
    paired = bootstrap_ratio(a, b, paired=True)
    unpaired = bootstrap_ratio(a, b, paired=False)
    assert paired.samples == (300, 300) and decide(paired, 2.0).verdict == "faster"
    assert 0.95 < paired.ratio < 0.965 and abs(paired.ratio - unpaired.ratio) < 0.002
    assert paired.high < 0.97


def test_repeats_to_decide_shrinks_as_the_interval_narrows() -> None:
    doc = json.loads(SWEEP.read_text())
    row = next(r for r in doc["results"] if (r["kernel"], r["m"], r["n"], r["k"]) == ("cublas", 16, 8192, 512))
    wide = bootstrap_ratio(row["times_ms"][:5], row["times_ms"][5:])
    narrow = dataclasses.replace(wide, low=0.99, high=1.03)
    assert (repeats_to_decide(narrow, 2.0) or 0) < (repeats_to_decide(wide, 2.0) or 10**9)


def test_runs_on_two_gpu_models_are_not_comparable_unless_asked() -> None:
    h100, h200 = run_of(H100_BENCH), run_of(H200_BENCH)
    guard = comparability(h100, h200)
    assert not guard.comparable
    assert any(d.what == "GPU model" and d.blocking for d in guard.differences)
    assert "NVIDIA H100 80GB HBM3 -> NVIDIA H200" in guard.label() and "--cross-gpu" in guard.label()
    table = compare_runs(h100, [h200])
    speed = table[table["metric"].isin(["time_median_ms", "tflops", "pct_cublas"])]
    assert set(speed["verdict"]) == {"not comparable"} and slower_than(table, 2.0).empty
    cross = compare_runs(h100, [h200], cross_gpu=True)
    assert "not comparable" not in set(cross[cross["metric"] == "time_median_ms"]["verdict"])
    assert comparability(h100, h200, cross_gpu=True).label().startswith("cross-GPU comparison")


def test_the_guard_lists_software_clock_and_flush_differences_as_warnings() -> None:
    base = run_of(VERDICTS / "seq_4096_r100.json")
    other = dataclasses.replace(
        base,
        catalog_commit="0000000",
        meta={**base.meta, "settings": {**base.settings, "flush_l2": False}},
        device=dataclasses.replace(base.device, driver="575.00"),
    )
    guard = comparability(base, other)
    assert guard.comparable
    whats = {d.what for d in guard.differences}
    assert {"commit", "L2 flush", "driver"} <= whats
    assert "L2 flush: on -> off" in guard.label()
    assert comparability(base, base).differences == ()


def test_the_guard_names_a_different_nvrtc() -> None:
    """One NVRTC for another moved v9-regdb's tuned tile by 5 points on an H200 (results/h200-2026-12-01/nvrtc/): two
    runs built by different ones say so. A run from before the NVRTC was recorded is not said to differ."""
    base = run_of(ROOT / "results" / "h200-2026-12-01" / "catalog_nvrtc" / "bench_4096.json")
    assert base.device.nvrtc == "13.0" and base.meta["tool"]["nvrtc"] == "13.0"
    newer = dataclasses.replace(base, device=dataclasses.replace(base.device, nvrtc="13.2"))
    guard = comparability(base, newer)
    assert guard.comparable
    assert [(d.what, d.baseline, d.candidate) for d in guard.differences] == [("NVRTC", "13.0", "13.2")]
    assert "NVRTC: 13.0 -> 13.2" in guard.label()
    unrecorded = dataclasses.replace(base, device=dataclasses.replace(base.device, nvrtc=None), meta={})
    assert comparability(unrecorded, newer).differences == ()


def test_a_run_timed_behind_the_launch_hold_is_flagged_against_one_timed_without() -> None:
    """A committed run from before the hold (settings without hold_launches) against one timed behind it."""
    base = run_of(VERDICTS / "seq_4096_r100.json")
    assert "hold_launches" not in base.settings
    held = dataclasses.replace(base, meta={**base.meta, "settings": {**base.settings, "hold_launches": True}})
    guard = comparability(base, held)
    assert guard.comparable
    assert [(d.what, d.baseline, d.candidate) for d in guard.differences] == [
        ("launch timing", "as enqueued", "behind a hold")
    ]
    no_settings = dataclasses.replace(base, meta={})
    assert comparability(no_settings, held).differences == ()


def test_undecided_growth_is_reported_not_failed() -> None:
    doc = json.loads(SWEEP.read_text())
    rows = [r for r in doc["results"] if (r["kernel"], r["m"], r["n"], r["k"]) == ("cublas", 16, 8192, 512)]
    base_doc = {**doc, "results": [{**rows[0], "times_ms": rows[0]["times_ms"][5:]}]}
    cand_doc = {
        **doc,
        "results": [
            {
                **rows[0],
                "times_ms": rows[0]["times_ms"][:5],
                "time_ms": {**rows[0]["time_ms"], "median": rows[0]["time_ms"]["median"] * 1.03},
            }
        ],
    }
    table = compare_runs(convert.bench_run(base_doc), [convert.bench_run(cand_doc)])
    assert slower_than(table, 2.0).empty and len(undecided(table, 2.0)) == 1


def test_the_interval_is_the_two_sided_95_percent_percentile_bootstrap() -> None:
    """The interval against a recomputation with the same seed: 2,000 resamples of each run's launches, the
    median of each, and the 2.5 % and 97.5 % quantiles of their ratio (a 95 % interval has 2.5 % in each tail, not
    5 %). Two back-to-back H100 runs of v7-warptile at 4096, 10 launches each; and the A/B pairs of v8 against v7."""
    base = times(run_of(VERDICTS / "seq_4096_r10.json"), "v7-warptile")
    cand = times(run_of(VERDICTS / "seq_4096_r30.json"), "v7-warptile")
    rng = np.random.default_rng(0)
    b, c = np.asarray(base), np.asarray(cand)
    b_boot = np.median(b[rng.integers(0, len(b), size=(2000, len(b)))], axis=1)
    c_boot = np.median(c[rng.integers(0, len(c), size=(2000, len(c)))], axis=1)
    point = float(np.median(c) / np.median(b))
    low, high = np.quantile(c_boot / b_boot, [0.025, 0.975])
    found = bootstrap_ratio(base, cand)
    assert found.confidence == 0.95 and found.ratio == pytest.approx(point, rel=1e-12)
    assert (found.low, found.high) == pytest.approx((min(low, point), max(high, point)), rel=1e-12)
    narrower = np.quantile(c_boot / b_boot, [0.05, 0.95])
    assert found.high - found.low > narrower[1] - narrower[0]  # the data tell 95 % from 90 % apart

    ab = run_of(VERDICTS / "ab_4096_r30.json")
    a7, b8 = np.asarray(times(ab, "v7-warptile")), np.asarray(times(ab, "v8-async"))
    ratios = b8 / a7
    rng = np.random.default_rng(0)
    boot = np.median(ratios[rng.integers(0, len(ratios), size=(2000, len(ratios)))], axis=1)
    paired = bootstrap_ratio(times(ab, "v7-warptile"), times(ab, "v8-async"), paired=True)
    expected = np.quantile(boot, [0.025, 0.975])
    assert (paired.low, paired.high) == pytest.approx(
        (min(expected[0], paired.ratio), max(expected[1], paired.ratio)), rel=1e-12
    )


@pytest.mark.parametrize("take", [5, 6, 10, 29, 30])
def test_resampled_medians_are_numpys_medians_bit_for_bit(take: int) -> None:
    """The bootstrap's medians by counting are np.median's numbers exactly, on real launch times (odd and even
    counts, and with values repeated, as a timer's resolution repeats them)."""
    launches = np.asarray(times(run_of(VERDICTS / "seq_4096_r30.json"), "v7-warptile"))[:take]
    for values in (launches, np.round(launches, 2)):
        picks = np.random.default_rng(take).integers(0, len(values), size=(2000, len(values)))
        assert np.array_equal(resampled_medians(values, picks), np.median(values[picks], axis=1))
    assert len(set(np.round(launches, 2))) < len(launches)


def test_no_decided_verdict_rests_on_an_interval_that_includes_no_change() -> None:
    """The committed H100 sweep, 512 results of 10 launches: the first five against the last five and back, 1,024
    comparisons. "faster" needs the whole interval below 1 and "slower" above it: 29 comparisons whose medians
    moved by more than 2 % with an interval that still includes 1 are noisy, not faster."""
    doc = json.loads(SWEEP.read_text())
    counts: dict[str, int] = {}
    for row in doc["results"]:
        t = row["times_ms"]
        for a, b in ((t[:5], t[5:]), (t[5:], t[:5])):
            found = time_verdict(a, b, None, None, threshold_pct=2.0)
            counts[found.verdict] = counts.get(found.verdict, 0) + 1
            if found.verdict == "faster":
                assert found.interval.high < 1.0, (row["kernel"], row["m"], row["n"], row["k"])
            if found.verdict == "slower":
                assert found.interval.low > 1.0, (row["kernel"], row["m"], row["n"], row["k"])
    assert counts == {"noisy": 235, "same": 766, "slower": 12, "faster": 11}


def test_capping_in_either_run_is_a_warning() -> None:
    """The H100 wgmma_store run was power-capped while timed (NVML: SwPowerCap); the verdicts run was not. The guard
    says so whichever side is capped, and says nothing about capping between two uncapped runs."""
    capped = run_of(ROOT / "results" / "h100-2026-11-24" / "wgmma_store" / "bench.json")
    calm = run_of(VERDICTS / "seq_4096_r100.json")
    for base, cand, text in ((calm, capped, "none -> SwPowerCap"), (capped, calm, "SwPowerCap -> none")):
        guard = comparability(base, cand)
        assert guard.comparable
        assert f"power/thermal capping: {text}" in guard.warnings
    assert "power/thermal capping: SwPowerCap -> SwPowerCap" in comparability(capped, capped).warnings
    quiet = comparability(calm, run_of(VERDICTS / "again_seq_4096_r100.json"))
    assert not any(d.what == "power/thermal capping" for d in quiet.differences)
