"""Verdicts a review can trust: a bootstrap interval of the time ratio, and whether two runs may be compared.

A time verdict compares the per-launch times of one kernel and size in two runs (RunResult.times_ms):
- "faster" / "slower": the confidence interval of the ratio of medians (candidate / baseline) excludes 1 and
  the change is larger than the practical threshold;
- "same": the interval lies inside +-threshold (or the change is real but smaller than the threshold);
- "noisy": the interval is too wide to say, with how many repeats would likely decide it;
- "not comparable": the two runs ran on different GPU models (unless a cross-GPU comparison was asked for);
- "no verdict": a side saved fewer than MIN_SAMPLES per-launch times (results saved before schema 4 have none), so
  there is no interval: the change of the medians is shown ("medians only: -2.2 %, no verdict") and the note says
  why, in words that are the same on every such row so a view can say it once;
- "n/a": a side has no time.

The bootstrap resamples the launches with numpy (fixed seed, so a verdict does not flicker between views).
Interleaved A/B runs (bench --ab) are paired: launch i of A and of B ran back to back, so the ratio is taken
per pair and the pairs are resampled together, which cancels drift that hits both alike.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

DEFAULT_THRESHOLD_PCT = 2.0
"""The practical threshold (percent): a smaller change is "same" (the CLI's --threshold, the Review page's)."""
DEFAULT_CONFIDENCE = 0.95
DEFAULT_RESAMPLES = 2000
MIN_SAMPLES = 5  # fewer launches than this give no interval worth showing
MAX_REPEATS_SUGGESTED = 10_000  # the most --repeats allows (profiling.gpu.jobs.REPEATS)
VERDICTS = ("faster", "slower", "same", "noisy", "no verdict", "not comparable", "n/a")


@dataclass(frozen=True)
class RatioInterval:
    """Candidate/baseline time ratio (above 1: the candidate is slower) with its confidence interval."""

    ratio: float
    low: float
    high: float
    confidence: float
    samples: tuple[int, int]  # launches of the baseline and of the candidate (pairs twice when paired)
    paired: bool = False

    @property
    def change_pct(self) -> float:
        return (self.ratio - 1.0) * 100.0

    @property
    def half_width_pct(self) -> float:
        return (self.high - self.low) / 2.0 * 100.0

    def text(self) -> str:
        """The change and its interval in percent, e.g. "+3.1 % [+1.2, +5.0]"."""
        return f"{self.change_pct:+.1f} % [{(self.low - 1) * 100:+.1f}, {(self.high - 1) * 100:+.1f}]"


@dataclass(frozen=True)
class TimeVerdict:
    """The verdict on one kernel and size, with the interval it rests on and a note for the reader."""

    verdict: str  # one of VERDICTS
    interval: RatioInterval | None = None
    repeats_needed: int | None = None  # for "noisy": launches per side that would likely decide it
    note: str = ""
    medians_change_pct: float | None = None  # for "no verdict": the change of the medians, with no interval

    def interval_text(self) -> str:
        """The interval, or for "no verdict" the medians' change said to be no verdict; "" otherwise."""
        if self.interval:
            return self.interval.text()
        if self.medians_change_pct is not None:
            return f"medians only: {self.medians_change_pct:+.1f} %, no verdict"
        return ""


def _clean(times: Sequence[float] | None) -> np.ndarray:
    import numpy as np  # only a verdict needs it: the CLI's --help and option defaults import this module

    values = np.asarray([t for t in (times or ()) if isinstance(t, (int, float)) and math.isfinite(t) and t > 0])
    return values.astype(float)


def resampled_medians(values: np.ndarray, picks: np.ndarray) -> np.ndarray:
    """np.median(values[picks], axis=1), the same numbers, for many resamples (rows of `picks`) of a few values.

    Each row's middle order statistics are found by counting how often it drew each value (by rank) instead of
    partitioning the row: 1.4-1.7x less CPU for 2,000 resamples of 10-100 launches, and a Review comparison takes
    two such sets of medians per kernel and size."""
    import numpy as np

    order = np.argsort(values, kind="stable")
    rank = np.empty(len(values), dtype=np.intp)
    rank[order] = np.arange(len(values))
    ranked = values[order]
    rows, width = picks.shape
    slots = rank[picks] + (np.arange(rows) * len(values))[:, None]
    drawn = np.bincount(slots.ravel(), minlength=rows * len(values)).reshape(rows, len(values)).cumsum(axis=1)
    upper = ranked[(drawn > width // 2).argmax(axis=1)]
    if width % 2:
        return upper
    # np.median's mean of the two middle values, computed as it does
    return (ranked[(drawn > width // 2 - 1).argmax(axis=1)] + upper) / 2


def bootstrap_ratio(
    baseline: Sequence[float],
    candidate: Sequence[float],
    *,
    paired: bool = False,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> RatioInterval | None:
    """Percentile-bootstrap interval of median(candidate) / median(baseline); None with fewer than MIN_SAMPLES
    launches on a side. `paired` (interleaved launches, equal counts) resamples pairs and takes the median of the
    per-pair ratios."""
    if not 0.5 <= confidence < 1.0:
        raise ValueError(f"confidence must be in [0.5, 1), not {confidence}")
    base, cand = _clean(baseline), _clean(candidate)
    if len(base) < MIN_SAMPLES or len(cand) < MIN_SAMPLES:
        return None
    import numpy as np

    rng = np.random.default_rng(seed)
    alpha = (1.0 - confidence) / 2.0
    if paired:
        n = min(len(base), len(cand))
        ratios = cand[:n] / base[:n]
        point = float(np.median(ratios))
        boot = resampled_medians(ratios, rng.integers(0, n, size=(resamples, n)))
        sizes = (n, n)
    else:
        point = float(np.median(cand) / np.median(base))
        base_boot = resampled_medians(base, rng.integers(0, len(base), size=(resamples, len(base))))
        cand_boot = resampled_medians(cand, rng.integers(0, len(cand), size=(resamples, len(cand))))
        boot = cand_boot / base_boot
        sizes = (len(base), len(cand))
    low, high = (float(q) for q in np.quantile(boot, [alpha, 1.0 - alpha]))
    # The percentile interval of a median can sit beside the point estimate on tiny samples: keep it inside.
    return RatioInterval(point, min(low, point), max(high, point), confidence, sizes, paired)


def decide(interval: RatioInterval, threshold_pct: float) -> TimeVerdict:
    """faster / slower / same / noisy from an interval and the practical threshold (percent)."""
    t = threshold_pct / 100.0
    change = interval.ratio - 1.0
    if interval.low > 1.0 and change > t:
        return TimeVerdict("slower", interval)
    if interval.high < 1.0 and change < -t:
        return TimeVerdict("faster", interval)
    if interval.low >= 1.0 - t and interval.high <= 1.0 + t:
        return TimeVerdict("same", interval)
    if (interval.low > 1.0 or interval.high < 1.0) and abs(change) <= t:
        # A real change, but smaller than the threshold: same for practical purposes.
        return TimeVerdict("same", interval, note=f"a real change of {change * 100:+.1f} %, within the threshold")
    needed = repeats_to_decide(interval, threshold_pct)
    more = f"about {needed} launches per side" if needed else f"more than {MAX_REPEATS_SUGGESTED} launches per side"
    return TimeVerdict("noisy", interval, needed, note=f"interval too wide to decide: {more} would likely settle it")


def repeats_to_decide(interval: RatioInterval, threshold_pct: float) -> int | None:
    """Launches per side that would likely narrow the interval enough to decide (half-width ~ 1/sqrt(n)).

    Deciding needs the half-width below the distance from the estimate to the nearer edge that matters: the
    threshold for "same", 1 for "faster"/"slower". None when that is beyond MAX_REPEATS_SUGGESTED."""
    t = threshold_pct / 100.0
    d = abs(interval.ratio - 1.0)
    target = (t - d) if d < t else d
    half = (interval.high - interval.low) / 2.0
    n = max(interval.samples)
    if target <= 1e-4 or half <= 0:
        return None
    needed = math.ceil(n * (half / target) ** 2 * 1.2)  # 20 % margin: the next interval will not be as lucky
    return needed if needed <= MAX_REPEATS_SUGGESTED else None


def time_verdict(
    baseline_times: Sequence[float] | None,
    candidate_times: Sequence[float] | None,
    baseline_median: float | None,
    candidate_median: float | None,
    *,
    threshold_pct: float,
    paired: bool = False,
    confidence: float = DEFAULT_CONFIDENCE,
) -> TimeVerdict:
    """The verdict on one kernel and size from per-launch times, or from the medians when a side has none."""
    interval = None
    if baseline_times and candidate_times:
        interval = bootstrap_ratio(baseline_times, candidate_times, paired=paired, confidence=confidence)
    if interval is not None:
        return decide(interval, threshold_pct)
    if not (baseline_median and candidate_median) or baseline_median <= 0:
        return TimeVerdict("n/a", note="no time on one side")
    change = (candidate_median / baseline_median - 1.0) * 100.0
    return TimeVerdict(
        "no verdict", note=no_interval_reason(baseline_times, candidate_times), medians_change_pct=change
    )


def no_interval_reason(baseline_times: Sequence[float] | None, candidate_times: Sequence[float] | None) -> str:
    """Why two results give no interval, in words that do not depend on the kernel (a view says it once)."""
    few = [
        side
        for side, times in (("baseline", baseline_times), ("candidate", candidate_times))
        if len(_clean(times)) < MIN_SAMPLES
    ]
    none = [side for side, times in (("baseline", baseline_times), ("candidate", candidate_times)) if not times]
    if len(none) == 2:
        what = "neither run saved per-launch times"
    elif none and few == none:
        what = f"the {none[0]} saved no per-launch times"
    else:
        what = " and ".join(f"the {side}" for side in few) + f" saved fewer than {MIN_SAMPLES} per-launch times"
    return (
        f"{what}, so there is no interval and no verdict: only the medians' change is shown "
        f"(a verdict needs at least {MIN_SAMPLES} launches per side; results saved before schema 4 have none)"
    )


# ---------------------------------------------------------------------------------------------
# Comparability: what differs between the two runs before their times are compared
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Difference:
    """One fact that differs between the runs; `blocking` ones make the pair not comparable."""

    what: str
    baseline: str
    candidate: str
    blocking: bool = False

    def text(self) -> str:
        return f"{self.what}: {self.baseline} -> {self.candidate}"


@dataclass(frozen=True)
class Comparability:
    """What differs between two runs, and whether their times may be compared at all."""

    differences: tuple[Difference, ...] = field(default_factory=tuple)
    cross_gpu: bool = False  # the user asked to compare across GPU models

    @property
    def comparable(self) -> bool:
        return self.cross_gpu or not any(d.blocking for d in self.differences)

    @property
    def warnings(self) -> list[str]:
        return [d.text() for d in self.differences if not d.blocking or self.cross_gpu]

    def label(self) -> str:
        """One line for the header of a comparison."""
        if not self.comparable:
            blocking = "; ".join(d.text() for d in self.differences if d.blocking)
            return f"not comparable ({blocking}); pass --cross-gpu to compare anyway"
        prefix = "cross-GPU comparison" if self.cross_gpu and any(d.blocking for d in self.differences) else ""
        rest = "; ".join(self.warnings)
        if not rest:
            return prefix or "comparable: same GPU model, software, clocks and settings"
        return f"{prefix + ': ' if prefix else ''}differs: {rest}"


CLOCK_TOLERANCE_PCT = 2.0  # median SM clocks further apart than this are a warning


def _text(value: Any) -> str:
    return "unknown" if value is None or value == "" else str(value)


def _versions(run: Any) -> dict[str, Any]:
    device = run.device
    tool = (run.meta or {}).get("tool") or {}
    return {
        "driver": device.driver or tool.get("nvidia_driver"),
        "CUDA runtime": device.cuda_runtime or tool.get("cuda_runtime"),
        "CuPy": device.cupy or tool.get("cupy"),
        "NVRTC": device.nvrtc or tool.get("nvrtc"),
        "ncu": tool.get("ncu") or (run.meta or {}).get("ncu_version"),
        "commit": run.catalog_commit,
    }


def median_sm_clock(run: Any) -> float | None:
    """The median of the results' median SM clocks while timed (NVML), None when none was sampled."""
    clocks = []
    for r in run.results:
        nvml = (r.extra or {}).get("nvml") or {}
        clock = nvml.get("sm_clock_mhz") if isinstance(nvml, Mapping) else None
        if isinstance(clock, Mapping) and isinstance(clock.get("median"), (int, float)):
            clocks.append(float(clock["median"]))
    return statistics.median(clocks) if clocks else None


def capping(run: Any) -> list[str]:
    """The clock-event reasons of results that NVML saw power- or thermal-capped while timed."""
    reasons: set[str] = set()
    for r in run.results:
        nvml = (r.extra or {}).get("nvml") or {}
        if isinstance(nvml, Mapping) and nvml.get("capped"):
            reasons |= {str(x) for x in nvml.get("clock_event_reasons") or []} or {"capped"}
    return sorted(reasons)


def l2_flush(run: Any) -> bool | None:
    flush = ((run.meta or {}).get("settings") or {}).get("flush_l2")
    return flush if isinstance(flush, bool) else None


def launch_hold(run: Any) -> bool | None:
    """Whether a run's launches were timed behind a hold kernel (BenchSettings.hold_launches); False for a run
    of our bench from before the hold existed (its settings lack the key), None where there are no settings."""
    settings = (run.meta or {}).get("settings")
    if not isinstance(settings, Mapping) or "flush_l2" not in settings:
        return None
    hold = settings.get("hold_launches", False)
    return hold if isinstance(hold, bool) else None


def comparability(baseline: Any, candidate: Any, *, cross_gpu: bool = False) -> Comparability:
    """What differs between two SavedRuns: GPU model (blocking unless `cross_gpu`), driver, CUDA runtime, CuPy,
    NVRTC, ncu, commit, median SM clock, power/thermal capping, the L2 flush setting and whether launches were timed behind
    a hold (warnings)."""
    diffs: list[Difference] = []
    b_gpu, c_gpu = (
        baseline.device_name or baseline.device.name,
        candidate.device_name or candidate.device.name,
    )
    if b_gpu and c_gpu and b_gpu != c_gpu:
        diffs.append(Difference("GPU model", b_gpu, c_gpu, blocking=True))
    b_versions, c_versions = _versions(baseline), _versions(candidate)
    for what, b_value in b_versions.items():
        c_value = c_versions[what]
        if b_value is not None and c_value is not None and str(b_value) != str(c_value):
            diffs.append(Difference(what, _text(b_value), _text(c_value)))
    b_clock, c_clock = median_sm_clock(baseline), median_sm_clock(candidate)
    if b_clock and c_clock and abs(c_clock - b_clock) / b_clock * 100.0 > CLOCK_TOLERANCE_PCT:
        diffs.append(Difference("median SM clock", f"{b_clock:.0f} MHz", f"{c_clock:.0f} MHz"))
    b_cap, c_cap = capping(baseline), capping(candidate)
    if b_cap or c_cap:
        diffs.append(Difference("power/thermal capping", ", ".join(b_cap) or "none", ", ".join(c_cap) or "none"))
    b_flush, c_flush = l2_flush(baseline), l2_flush(candidate)
    if b_flush is not None and c_flush is not None and b_flush != c_flush:
        on_off = {True: "on", False: "off"}
        diffs.append(Difference("L2 flush", on_off[b_flush], on_off[c_flush]))
    b_hold, c_hold = launch_hold(baseline), launch_hold(candidate)
    if b_hold is not None and c_hold is not None and b_hold != c_hold:
        held = {True: "behind a hold", False: "as enqueued"}
        diffs.append(Difference("launch timing", held[b_hold], held[c_hold]))
    return Comparability(tuple(diffs), cross_gpu)
