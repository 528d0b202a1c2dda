"""Timing single kernel launches with CUDA events: the repeat budget, the L2 flush, the summary statistics and
whether a result's times were steady enough to judge anything against (`is_unsteady`).

`time_launches` takes the array module `xp` (cupy in the worker); the tests pass a recording fake, so the
order of flushes, events and launches is checked without a GPU.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:
    from profiling.runs.records import BenchResult

MIN_REPEATS = 3
# A launch is never estimated at less than this, so a zero-length probe cannot ask for unbounded repeats.
MIN_ESTIMATE_MS = 1e-3
# p90 / p10 above which a result's median is not its time. In the 1371 cells of the committed shape grids where cuBLAS
# reaches 10 TFLOP/s, a steady cuBLAS stays at or under 1.23x (95th percentile 1.08x); every one at 1.44x or more stood
# beside a kernel shown at 90-1070 % of it, a hiccup of cuBLAS's, not a kernel's speed (1024x127x4096 on an H100:
# cuBLAS 41-126 us a launch, 1.74x, where it takes about 37 us, showed sgemm-auto at 155 %).
UNSTEADY_RATIO = 1.4
"""A result whose slowest tenth of launches (p90) took more than this many times its fastest tenth (p10) is unsteady:
something else held the GPU or its clocks during the run, so its median is not the kernel's time and nothing should
be judged against it until it is rerun. Steady launches stay near 1 (cuBLAS's 30 L2-flushed launches of a
4096x333x333 SGEMM on an H200: 1.05); launches of a few microseconds often pass 2 on launch jitter alone."""


HELD_LAUNCHES = 32
"""Timed launches enqueued behind one hold (profiling.gpu.hold): with their flushes and events about 130 stream
operations, well inside what a stream queues before the host's enqueue blocks (which, behind a hold, would wait
for the hold's own time-out)."""


class Hold(Protocol):
    """Keeps the stream from running what is enqueued after `enqueue` until `release` (profiling.gpu.hold)."""

    def enqueue(self) -> None: ...

    def release(self) -> None: ...


class _HeldBatches:
    """Puts a hold before every `size` of `count` items and releases it after the last of them. A hold still
    pending when the loop leaves early (a launch that raised) is released then, so the GPU does not spin until the
    hold's time-out before the worker's next work."""

    def __init__(self, hold: Hold | None, size: int, count: int) -> None:
        self.hold, self.size, self.count, self.pending = hold, size, count, False

    def __enter__(self) -> _HeldBatches:
        return self

    def before(self, i: int) -> None:
        if self.hold is not None and i % self.size == 0:
            self.hold.enqueue()
            self.pending = True

    def after(self, i: int) -> None:
        if self.pending and (i % self.size == self.size - 1 or i == self.count - 1):
            self._release()

    def _release(self) -> None:
        assert self.hold is not None
        self.hold.release()
        self.pending = False

    def __exit__(self, *_exc: object) -> None:
        if self.pending:
            self._release()


def repeats_within_budget(requested: int, max_seconds: float, estimated_ms: float) -> int:
    """How many timed launches to run: the requested count, cut so that they fit `max_seconds` at
    `estimated_ms` each, but never fewer than MIN_REPEATS (a median needs a few samples)."""
    fit = int(max_seconds * 1000 / max(estimated_ms, MIN_ESTIMATE_MS))
    return max(MIN_REPEATS, min(requested, fit))


def flush_byte(launch_index: int) -> int:
    """The byte the flush writes before timed launch `launch_index`: it changes every launch, so a test can
    see from inside a kernel that the flush ran right before it."""
    return launch_index & 0xFF


def summarize(times_ms: Sequence[float]) -> dict[str, float]:
    """Median, min, max, mean, sample stdev, 10th/90th percentiles (linear interpolation, as numpy) and the
    p10-p90 spread in percent of the median."""
    ordered = sorted(times_ms)
    if not ordered:
        raise ValueError("no timings to summarize")
    median = statistics.median(ordered)
    p10, p90 = (float(np.percentile(ordered, p)) for p in (10, 90))
    return {
        "median": median,
        "min": ordered[0],
        "max": ordered[-1],
        "mean": statistics.fmean(ordered),
        "stdev": statistics.stdev(ordered) if len(ordered) > 1 else 0.0,
        "p10": p10,
        "p90": p90,
        "spread_pct": 100.0 * (p90 - p10) / median if median > 0 else 0.0,
        "samples": len(ordered),
    }


def tenths_ratio(result: BenchResult) -> float | None:
    """p90 / p10 of a result's launch times: of its per-launch times (`times_ms`, as `summarize` takes them) where it
    kept them, else of its stored `time_ms` summary; None where it has neither or p10 is not positive."""
    if result.times_ms:
        stats = summarize(result.times_ms)
        p10, p90 = stats["p10"], stats["p90"]
    elif result.time_ms is not None and result.time_ms.p10 is not None and result.time_ms.p90 is not None:
        p10, p90 = result.time_ms.p10, result.time_ms.p90
    else:
        return None
    return p90 / p10 if p10 > 0 else None


def slow_launches(times_ms: Sequence[float]) -> list[int]:
    """The launches (their numbers in `times_ms`, 0 = the first timed) slower than UNSTEADY_RATIO x the p10 of all
    of them: the ones that make a result unsteady, for scripts/launch_spread.py to say where in a run they fell."""
    if not times_ms:
        return []
    limit = UNSTEADY_RATIO * summarize(times_ms)["p10"]
    return [i for i, t in enumerate(times_ms) if t > limit]


def is_unsteady(result: BenchResult) -> bool:
    """Whether a result's times were unsteady: its p90 more than UNSTEADY_RATIO x its p10 (`tenths_ratio`). A result
    without launch times is not called unsteady (there is nothing to tell it by)."""
    ratio = tenths_ratio(result)
    return ratio is not None and ratio > UNSTEADY_RATIO


def time_launches(
    xp: Any,
    launch: Callable[[], None],
    warmup: int,
    repeats: int,
    max_seconds: float,
    flush: Any | None,
    hold: Hold | None = None,
) -> list[float]:
    """Event-timed single launches, each after an L2 flush (a memset of `flush`, when given); milliseconds.

    The flush is enqueued on the timing stream before the start event, so it is never inside a timing. With a
    `hold`, every HELD_LAUNCHES launches are enqueued behind one, released once they all are: the GPU never waits
    for the host between a start event and its launch.
    """
    cuda = xp.cuda
    for _ in range(warmup):
        launch()
    cuda.Device().synchronize()
    # Estimate one launch's cost to keep slow kernels inside the time budget.
    probe_start, probe_end = cuda.Event(), cuda.Event()
    probe_start.record()
    launch()
    probe_end.record()
    probe_end.synchronize()
    count = repeats_within_budget(repeats, max_seconds, cuda.get_elapsed_time(probe_start, probe_end))
    stream = cuda.get_current_stream()
    events = [(cuda.Event(), cuda.Event()) for _ in range(count)]
    with _HeldBatches(hold, HELD_LAUNCHES, count) as batches:
        for i, (start, end) in enumerate(events):
            batches.before(i)
            if flush is not None:
                cuda.runtime.memsetAsync(flush.data.ptr, flush_byte(i), flush.nbytes, stream.ptr)
            start.record()
            launch()
            end.record()
            batches.after(i)
    events[-1][1].synchronize()
    return [cuda.get_elapsed_time(s, e) for s, e in events]


def round_order(round_index: int, kernels: int) -> list[int]:
    """The kernels of round `round_index` of time_rounds in the order they run: from kernel round_index % kernels
    on, in order (for two: A B, B A, A B, ...)."""
    return [(round_index + j) % kernels for j in range(kernels)]


def round_predecessors(kernels: int, rounds: int) -> list[list[int]]:
    """For each kernel of time_rounds, the kernel that ran just before each of its timed launches (the untimed probe
    round, all in order, comes before round 0): a flush between them clears the L2, not what the SMs keep, such as
    the last kernel's instructions."""
    before: list[list[int]] = [[] for _ in range(kernels)]
    last = kernels - 1
    for i in range(rounds):
        for kernel in round_order(i, kernels):
            before[kernel].append(last)
            last = kernel
    return before


def time_rounds(
    xp: Any,
    launches: Sequence[Callable[[], None]],
    warmup: int,
    repeats: int,
    max_seconds: float,
    flush: Any | None,
    hold: Hold | None = None,
) -> list[list[float]]:
    """Event-timed launches of several kernels in rounds that run each once, each after its own L2 flush; the
    milliseconds of each kernel's launches, in the order given.

    Round i holds launch i of each: clock drift, heating under the power cap and neighbours hit all alike. Round i
    runs in round_order (from kernel i % n on), so none always runs on another's leftovers. A `hold` keeps the host
    out of the timings as in time_launches, HELD_LAUNCHES // n rounds at a time.
    """
    cuda = xp.cuda
    n = len(launches)
    for _ in range(warmup):
        for launch in launches:
            launch()
    cuda.Device().synchronize()
    probe_start, probe_end = cuda.Event(), cuda.Event()
    probe_start.record()
    for launch in launches:
        launch()
    probe_end.record()
    probe_end.synchronize()
    count = repeats_within_budget(repeats, max_seconds, cuda.get_elapsed_time(probe_start, probe_end))
    stream = cuda.get_current_stream()
    events: list[list[tuple[Any, Any]]] = [[] for _ in launches]
    index = 0
    with _HeldBatches(hold, max(1, HELD_LAUNCHES // n), count) as batches:
        for i in range(count):
            batches.before(i)
            for kernel in round_order(i, n):
                if flush is not None:
                    cuda.runtime.memsetAsync(flush.data.ptr, flush_byte(index), flush.nbytes, stream.ptr)
                start, end = cuda.Event(), cuda.Event()
                start.record()
                launches[kernel]()
                end.record()
                events[kernel].append((start, end))
                index += 1
            batches.after(i)
    cuda.Device().synchronize()
    return [[cuda.get_elapsed_time(s, e) for s, e in timed] for timed in events]


def rested_rounds(
    xp: Any,
    launches: Sequence[Callable[[], None]],
    rounds: int,
    rest_s: float,
    flush: Any | None,
    hold: Hold | None,
    after_round: Callable[[int], None] | None = None,
    sleep: Callable[[float], None] | None = None,
) -> list[list[float]]:
    """Event-timed launches of several kernels in `rounds` rounds that each start after `rest_s` idle seconds: one
    untimed launch of every kernel, then one timed launch of each after its own L2 flush (`flush`, where given),
    all enqueued behind `hold` (where given) and released at once; round i starts with kernel i % n. The
    milliseconds of each kernel's launches, in the order given; `after_round(i)` runs once round i has finished
    (an NVML sample).

    A long launch (an H200's 8192^3 AddMM, 1.5 ms) reaches the power cap after 9-16 launches back to back, so
    time_rounds mixes full-clock rounds with capped ones; a rest long enough for the cap's averaging window to
    drain keeps every round at full clock."""
    import time

    cuda = xp.cuda
    n = len(launches)
    times: list[list[float]] = [[] for _ in launches]
    stream = cuda.get_current_stream()
    for i in range(rounds):
        (sleep or time.sleep)(rest_s)
        order = [(i + j) % n for j in range(n)]
        if hold is not None:
            hold.enqueue()
        for kernel in order:
            launches[kernel]()
        events = {}
        for j, kernel in enumerate(order):
            if flush is not None:
                cuda.runtime.memsetAsync(flush.data.ptr, flush_byte(i * n + j), flush.nbytes, stream.ptr)
            start, end = cuda.Event(), cuda.Event()
            start.record()
            launches[kernel]()
            end.record()
            events[kernel] = (start, end)
        if hold is not None:
            hold.release()
        cuda.Device().synchronize()
        for kernel in range(n):
            times[kernel].append(cuda.get_elapsed_time(*events[kernel]))
        if after_round is not None:
            after_round(i)
    return times


def time_interleaved(
    xp: Any,
    launch_a: Callable[[], None],
    launch_b: Callable[[], None],
    warmup: int,
    repeats: int,
    max_seconds: float,
    flush: Any | None,
    hold: Hold | None = None,
) -> tuple[list[float], list[float]]:
    """Event-timed launches of two kernels, alternating (A B, B A, A B, ...), each after its own L2 flush: time_rounds
    of the pair. Pair i holds launch i of each, so the ratio per pair cancels what hits both alike."""
    times_a, times_b = time_rounds(xp, [launch_a, launch_b], warmup, repeats, max_seconds, flush, hold)
    return times_a, times_b
