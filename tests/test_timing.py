"""The timer on the CPU: summary statistics on hand-computed samples, the repeat budget, the order of flushes, events
and launches in `time_launches` against a recording stand-in for CuPy's CUDA module, and which committed results were
unsteady."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from types import SimpleNamespace

import pytest

from profiling.gpu import runner
from profiling.gpu import timing as T
from profiling.gpu.jobs import BenchSettings
from profiling.runs.records import BenchResult, TimeSummary
from profiling.runs.results import load_document
from profiling.shape import Shape

ROOT = Path(__file__).resolve().parent.parent


def test_summary_of_an_odd_skewed_sample() -> None:
    # Sorted: 1, 2, 3, 4, 100. The mean (22) is far from the median (3), so one cannot pass for the other.
    s = T.summarize([4.0, 100.0, 1.0, 3.0, 2.0])
    assert s["median"] == 3.0
    assert s["mean"] == 22.0
    assert (s["min"], s["max"], s["samples"]) == (1.0, 100.0, 5)
    # numpy's linear percentiles: p10 at rank 0.4 -> 1 + 0.4 * (2 - 1); p90 at rank 3.6 -> 4 + 0.6 * (100 - 4).
    assert s["p10"] == pytest.approx(1.4)
    assert s["p90"] == pytest.approx(61.6)
    # Sample standard deviation: squared deviations 441 + 400 + 361 + 324 + 6084 = 7610, over n - 1 = 4.
    assert s["stdev"] == pytest.approx(math.sqrt(7610 / 4))
    assert s["spread_pct"] == pytest.approx(100 * (61.6 - 1.4) / 3.0)


def test_summary_of_an_even_sample_averages_the_middle_pair() -> None:
    s = T.summarize([10.0, 1.0, 4.0, 3.0])  # sorted 1, 3, 4, 10
    assert s["median"] == 3.5 and s["mean"] == 4.5
    assert s["p10"] == pytest.approx(1.6)  # rank 0.3: 1 + 0.3 * (3 - 1)
    assert s["p90"] == pytest.approx(8.2)  # rank 2.7: 4 + 0.7 * (10 - 4)
    assert s["stdev"] == pytest.approx(math.sqrt((3.5**2 + 1.5**2 + 0.5**2 + 5.5**2) / 3))


def test_summary_of_one_sample() -> None:
    s = T.summarize([2.5])
    assert s == {
        "median": 2.5,
        "min": 2.5,
        "max": 2.5,
        "mean": 2.5,
        "stdev": 0.0,
        "p10": 2.5,
        "p90": 2.5,
        "spread_pct": 0.0,
        "samples": 1,
    }
    with pytest.raises(ValueError):
        T.summarize([])


@pytest.mark.parametrize(
    ("requested", "max_seconds", "estimated_ms", "expected"),
    [
        (30, 4.0, 1.0, 30),  # 4000 fit: the requested count
        (30, 4.0, 500.0, 8),  # 4 s / 0.5 s = 8
        (30, 4.0, 1500.0, 3),  # 2 fit, but a median needs at least 3
        (1, 4.0, 1.0, 3),  # fewer requested than the minimum: still 3
        (10_000, 4.0, 0.0, 10_000),  # a zero estimate counts as 1 us: 4e6 fit
        (10_000, 0.002, 0.0, 2_000),  # 2 ms / 1 us
        (100, 1.0, 12.5, 80),
    ],
)
def test_repeats_within_budget(requested: int, max_seconds: float, estimated_ms: float, expected: int) -> None:
    assert T.repeats_within_budget(requested, max_seconds, estimated_ms) == expected


class FakeCuda:
    """Stands in for cupy.cuda: logs every call; each launch advances a clock by the next duration."""

    def __init__(self, durations_ms: list[float]) -> None:
        self.log: list[tuple] = []
        self.clock = 0.0
        self.durations = iter(durations_ms)
        fake = self

        class Event:
            def __init__(self) -> None:
                self.t: float | None = None

            def record(self) -> None:
                self.t = fake.clock
                fake.log.append(("record", self))

            def synchronize(self) -> None:
                fake.log.append(("event_sync",))

        class Device:
            def synchronize(self) -> None:
                fake.log.append(("device_sync",))

        self.Event = Event
        self.Device = Device
        self.runtime = SimpleNamespace(
            memsetAsync=lambda ptr, value, size, stream: self.log.append(("memset", ptr, value, size, stream))
        )

    def get_elapsed_time(self, start, end) -> float:
        return end.t - start.t

    def get_current_stream(self) -> SimpleNamespace:
        return SimpleNamespace(ptr=77)

    def launch(self) -> None:
        self.clock += next(self.durations)
        self.log.append(("launch",))

    def kinds(self) -> list[str]:
        return [entry[0] for entry in self.log]


FLUSH = SimpleNamespace(data=SimpleNamespace(ptr=4096), nbytes=100 << 20)


def test_every_timed_launch_follows_a_flush_outside_its_events() -> None:
    # 2 warm-ups, the budget probe, then 5 timed launches with distinct durations.
    cuda = FakeCuda([9.0, 9.0, 1.0, 2.0, 3.0, 5.0, 7.0, 11.0])
    times = T.time_launches(SimpleNamespace(cuda=cuda), cuda.launch, 2, 5, 4.0, FLUSH)
    assert times == [2.0, 3.0, 5.0, 7.0, 11.0]  # each timed launch between its own pair of events
    kinds = cuda.kinds()
    assert kinds[:7] == ["launch", "launch", "device_sync", "record", "launch", "record", "event_sync"]
    timed = kinds[7:-1]
    assert timed == ["memset", "record", "launch", "record"] * 5 and kinds[-1] == "event_sync"
    memsets = [entry for entry in cuda.log if entry[0] == "memset"]
    # The whole buffer, on the timing stream, with a byte that changes every launch.
    assert memsets == [("memset", 4096, T.flush_byte(i), 100 << 20, 77) for i in range(5)]
    assert len({entry[2] for entry in memsets}) == 5


class FakeHold:
    """Logs into the fake CUDA's log where the holds and releases fall among the launches."""

    def __init__(self, cuda: FakeCuda) -> None:
        self.cuda = cuda

    def enqueue(self) -> None:
        self.cuda.log.append(("hold",))

    def release(self) -> None:
        self.cuda.log.append(("release",))


def test_timed_launches_are_enqueued_behind_holds_in_batches() -> None:
    # 1 warm-up, the probe, then 70 timed launches: holds before launches 0, 32 and 64, each released after the
    # last launch of its batch (31, 63, 69), and none around the warm-up or the probe.
    cuda = FakeCuda([1.0] * 72)
    times = T.time_launches(SimpleNamespace(cuda=cuda), cuda.launch, 1, 70, 4.0, FLUSH, FakeHold(cuda))
    assert len(times) == 70 and T.HELD_LAUNCHES == 32
    kinds = cuda.kinds()
    assert "hold" not in kinds[: kinds.index("event_sync")]
    timed = kinds[kinds.index("event_sync") + 1 :]
    batch = ["memset", "record", "launch", "record"]
    assert timed == (
        ["hold"]
        + batch * 32
        + ["release", "hold"]
        + batch * 32
        + ["release", "hold"]
        + batch * 6
        + ["release", "event_sync"]
    )


def test_a_launch_that_raises_releases_its_hold() -> None:
    """The 5th timed launch raises: the hold before it is released as the error leaves the timer, so the GPU does
    not spin until the hold's time-out."""
    cuda = FakeCuda([1.0] * 10)
    calls = {"n": 0}

    def launch() -> None:
        calls["n"] += 1
        if calls["n"] == 2 + 5:  # the warm-up, the probe, then the 5th timed launch
            raise RuntimeError("launch failed")
        cuda.launch()

    with pytest.raises(RuntimeError, match="launch failed"):
        T.time_launches(SimpleNamespace(cuda=cuda), launch, 1, 20, 4.0, None, FakeHold(cuda))
    assert cuda.kinds()[-1] == "release" and cuda.kinds().count("hold") == cuda.kinds().count("release") == 1


def test_interleaved_pairs_are_enqueued_behind_holds_in_batches() -> None:
    cuda = FakeCuda([1.0] * 100)
    times_a, _ = T.time_interleaved(
        SimpleNamespace(cuda=cuda), cuda.launch, cuda.launch, 0, 20, 4.0, None, FakeHold(cuda)
    )
    assert len(times_a) == 20
    timed = cuda.kinds()[cuda.kinds().index("event_sync") + 1 :]
    pair = ["record", "launch", "record"] * 2
    assert timed == ["hold"] + pair * 16 + ["release", "hold"] + pair * 4 + ["release", "device_sync"]


def test_no_flush_buffer_means_no_memset() -> None:
    cuda = FakeCuda([1.0] * 10)
    times = T.time_launches(SimpleNamespace(cuda=cuda), cuda.launch, 0, 4, 4.0, None)
    assert times == [1.0] * 4 and "memset" not in cuda.kinds()


def test_slow_launches_are_cut_to_the_time_budget() -> None:
    # The probe takes 1.5 s: with a 4 s budget only 2 fit, and the minimum of 3 applies.
    cuda = FakeCuda([1500.0] * 10)
    times = T.time_launches(SimpleNamespace(cuda=cuda), cuda.launch, 1, 30, 4.0, FLUSH)
    assert len(times) == 3 and cuda.kinds().count("memset") == 3


def test_the_worker_times_with_its_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """runner._time_launches hands the bench settings and the flush buffer to the timer."""
    cuda = FakeCuda([1.0] * 20)
    monkeypatch.setattr(runner, "cupy", SimpleNamespace(cuda=cuda))
    settings = BenchSettings(repeats=6, warmup=2, max_seconds_per_run=4.0, flush_l2=True)
    times = runner._time_launches(cuda.launch, settings, FLUSH, None)
    assert len(times) == 6 and cuda.kinds().count("memset") == 6 and cuda.kinds()[:2] == ["launch", "launch"]


def named_launch(cuda: FakeCuda, calls: list[str], name: str, ms: float):
    """A launch that records its name in `calls` and takes `ms` on the fake clock."""

    def launch() -> None:
        calls.append(name)
        cuda.clock += ms
        cuda.log.append(("launch", name))

    return launch


def test_interleaved_launches_alternate_order_and_pair_up() -> None:
    cuda = FakeCuda([])
    calls: list[str] = []

    a, b = named_launch(cuda, calls, "A", 1.0), named_launch(cuda, calls, "B", 3.0)
    times_a, times_b = T.time_interleaved(SimpleNamespace(cuda=cuda), a, b, 1, 4, 4.0, FLUSH)
    assert times_a == [1.0] * 4 and times_b == [3.0] * 4  # each launch timed alone, not its neighbour
    # warm-up A B, probe A B, then A B | B A | A B | B A: neither kernel always runs first.
    assert calls == ["A", "B", "A", "B", "A", "B", "B", "A", "A", "B", "B", "A"]
    timed = cuda.kinds()[cuda.kinds().index("event_sync") + 1 :]
    assert timed[:8] == ["memset", "record", "launch", "record"] * 2  # every timed launch after its own flush
    assert cuda.kinds().count("memset") == 8


def test_rounds_of_three_rotate_the_first_and_time_each_launch_alone() -> None:
    cuda = FakeCuda([])
    calls: list[str] = []

    launches = [named_launch(cuda, calls, name, ms) for name, ms in (("A", 1.0), ("B", 2.0), ("C", 4.0))]
    times = T.time_rounds(SimpleNamespace(cuda=cuda), launches, 1, 3, 4.0, FLUSH)
    assert times == [[1.0] * 3, [2.0] * 3, [4.0] * 3]  # in the order given, whichever ran first in a round
    # warm-up and probe A B C, then A B C | B C A | C A B.
    assert calls == ["A", "B", "C"] * 2 + ["A", "B", "C", "B", "C", "A", "C", "A", "B"]
    memsets = [entry for entry in cuda.log if entry[0] == "memset"]
    assert [entry[2] for entry in memsets] == [T.flush_byte(i) for i in range(9)]  # one flush per launch


def test_round_predecessors_name_the_kernel_the_timer_ran_before_each_timed_launch() -> None:
    """The order profiling.analysis.rounds reads back is the one time_rounds runs: checked against the launches the
    fake records, so a change of either order fails here."""
    cuda = FakeCuda([])
    calls: list[str] = []
    launches = [named_launch(cuda, calls, name, 1.0) for name in "ABC"]
    T.time_rounds(SimpleNamespace(cuda=cuda), launches, 1, 4, 4.0, FLUSH)
    timed = calls[6:]  # after the warm-up and probe rounds
    ran_before = {name: [] for name in "ABC"}
    for previous, current in zip(calls[5:], timed, strict=False):
        ran_before[current].append(previous)
    assert T.round_predecessors(3, 4) == [["ABC".index(p) for p in ran_before[name]] for name in "ABC"]
    # For two kernels (A B | B A | A B | B A), each runs right after itself where a round starts with it.
    assert T.round_predecessors(2, 4) == [[1, 1, 0, 1], [0, 1, 0, 1]]


def test_interleaved_pairs_respect_the_time_budget() -> None:
    cuda = FakeCuda([1000.0] * 40)  # a pair takes 2 s: a 4 s budget fits 2 pairs, the minimum is 3
    times_a, times_b = T.time_interleaved(SimpleNamespace(cuda=cuda), cuda.launch, cuda.launch, 0, 30, 4.0, None)
    assert len(times_a) == len(times_b) == 3


@pytest.mark.parametrize(("flush_l2", "hold_launches"), [(True, True), (False, True), (True, False)])
def test_a_bench_task_hands_the_sessions_flush_buffer_and_hold_to_the_timer(
    monkeypatch: pytest.MonkeyPatch, flush_l2, hold_launches
) -> None:
    """runner.run_task (what the worker runs per kernel and shape) times with the session's L2 flush buffer when the
    settings ask for the flush, and with none when they do not, and likewise with its launch hold; the GPU parts
    stand in (CPU only)."""
    hold = object()
    session = SimpleNamespace(
        nvml=None,
        device={"name": "NVIDIA H100 80GB HBM3"},
        flush_buffer=lambda: FLUSH,
        hold=lambda settings: hold if settings.hold_launches else None,
    )
    spec = SimpleNamespace(is_reference=True)
    result = SimpleNamespace(status="ok", tolerance=0.0, to_dict=lambda: {"status": "ok"})
    handed: list[object] = []
    monkeypatch.setattr(runner, "_spec_and_result", lambda *_: (spec, result))
    monkeypatch.setattr(runner, "_verified_launch", lambda *_: (None, lambda: None))
    monkeypatch.setattr(
        runner, "_time_launches", lambda launch, settings, flush, hold: handed.append((flush, hold)) or [1.0] * 3
    )
    monkeypatch.setattr(runner, "_record_times", lambda *_: None)
    monkeypatch.setattr(runner, "NvmlSampler", _NoSampler)
    settings = BenchSettings(
        repeats=3, warmup=1, max_seconds_per_run=4.0, flush_l2=flush_l2, hold_launches=hold_launches
    )
    assert runner.run_task(session, "cublas", None, settings, "bench") == {"status": "ok"}
    assert handed == [(FLUSH if flush_l2 else None, hold if hold_launches else None)]


def _h100_padc_result(kernel: str, label: str) -> BenchResult:
    """A result of the committed H100 grid run with the padded-C configurations (30 L2-flushed launches each)."""
    document = load_document(ROOT / "results" / "h100-2026-11-28" / "grid_padc" / "bench_k333.json")
    (result,) = [r for r in document.results if r.kernel == kernel and r.shape.label == label]
    return result


def test_a_reference_whose_slowest_tenth_took_2_9x_its_fastest_is_unsteady() -> None:
    """cuBLAS at 4096x333x333 in that run: 0.135-0.536 ms a launch (every other H100 grid: about 0.033 ms), its p90
    2.87x its p10; sgemm-auto beside it ran steadily (1.05x)."""
    cublas, auto = _h100_padc_result("cublas", "4096x333x333"), _h100_padc_result("sgemm-auto", "4096x333x333")
    assert T.UNSTEADY_RATIO == 1.4
    assert round(T.tenths_ratio(cublas), 2) == 2.87 and T.is_unsteady(cublas)
    assert round(T.tenths_ratio(auto), 2) == 1.05 and not T.is_unsteady(auto)
    # Without its per-launch times the stored summary decides, and says the same (it was computed from them).
    stored = dataclasses.replace(cublas, times_ms=None)
    assert stored.time_ms.p90 / stored.time_ms.p10 == T.tenths_ratio(cublas) and T.is_unsteady(stored)
    assert not T.is_unsteady(dataclasses.replace(auto, times_ms=None))


def test_a_result_without_launch_times_is_not_called_unsteady() -> None:
    cublas = _h100_padc_result("cublas", "4096x333x333")
    bare = dataclasses.replace(cublas, times_ms=None, time_ms=None)
    assert T.tenths_ratio(bare) is None and not T.is_unsteady(bare)
    no_tenths = dataclasses.replace(cublas, times_ms=None, time_ms=TimeSummary(median=0.167))  # a median alone
    assert T.tenths_ratio(no_tenths) is None and not T.is_unsteady(no_tenths)
    zero = dataclasses.replace(cublas, times_ms=None, time_ms=TimeSummary(median=0.1, p10=0.0, p90=0.2))  # by hand
    assert T.tenths_ratio(zero) is None and not T.is_unsteady(zero)


@pytest.mark.parametrize(("argv", "held"), [([], True), (["--no-hold"], False)])
def test_bench_holds_launches_unless_told_not_to(monkeypatch: pytest.MonkeyPatch, argv: list[str], held: bool) -> None:
    """`bench` times behind the launch hold by default; --no-hold times launches as the host enqueues them. The
    settings the worker gets say which, and so does the results document (its `settings`)."""
    import argparse

    from profiling import usecases
    from profiling.commands import bench

    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    seen: list[BenchSettings] = []

    class Stop(Exception):
        pass

    def plan(kernels, shapes, settings, verify_only, timeout, interleaved):
        seen.append(settings)
        raise Stop

    monkeypatch.setattr(usecases, "plan_benchmark", plan)
    with pytest.raises(Stop):
        bench.run(parser.parse_args(["--kernels", "v1", "--sizes", "64", *argv]))
    assert [s.hold_launches for s in seen] == [held]
    assert BenchSettings().hold_launches is True


def test_slow_launches_are_the_ones_over_the_unsteady_ratio_times_p10() -> None:
    """cuBLAS at 127x127x333 timed as enqueued on an H200 (results/h200-2026-11-28/hold_2): its first two of 200
    launches ran at 100.7 and 34 us against a p10 of 11.3 us, the rest under 1.4x that."""
    from pathlib import Path

    from profiling.runs.results import load_document

    root = Path(__file__).resolve().parent.parent
    document = load_document(root / "results/h200-2026-11-28/hold_2/small_no-hold.json")
    (result,) = [r for r in document.results if r.shape.label == "127x127x333"]
    assert T.slow_launches(result.times_ms) == [0, 1]
    assert T.slow_launches([]) == [] and T.slow_launches([1.0, 1.0, 1.5]) == [2]


def test_rested_rounds_rest_then_warm_then_time_each_kernel_behind_one_hold() -> None:
    # Per round: 2 untimed launches, then 2 timed ones; durations make each launch's place visible.
    cuda = FakeCuda([9.0, 9.0, 1.0, 2.0, 8.0, 8.0, 3.0, 4.0])
    calls: list[str] = []
    slept: list[float] = []
    finished: list[int] = []
    launches = [lambda: (calls.append("A"), cuda.launch()), lambda: (calls.append("B"), cuda.launch())]
    times = T.rested_rounds(
        SimpleNamespace(cuda=cuda), launches, 2, 2.5, FLUSH, FakeHold(cuda), finished.append, slept.append
    )
    # Round 0 runs A B (warm) A B (timed); round 1 starts with B: B A, then B A timed.
    assert calls == ["A", "B", "A", "B", "B", "A", "B", "A"]
    assert times == [[1.0, 4.0], [2.0, 3.0]]
    assert slept == [2.5, 2.5] and finished == [0, 1]
    kinds = cuda.kinds()
    one_round = ["hold", "launch", "launch"] + ["memset", "record", "launch", "record"] * 2 + ["release", "device_sync"]
    assert kinds == one_round * 2
    memsets = [entry[2] for entry in cuda.log if entry[0] == "memset"]
    assert memsets == [T.flush_byte(i) for i in range(4)]


@pytest.mark.parametrize("rest_s", [0.0, 2.0])
def test_an_ab_with_a_rest_times_through_rested_rounds(monkeypatch: pytest.MonkeyPatch, rest_s: float) -> None:
    """runner.run_ab times the pair back to back (time_interleaved) without a rest, and in rested rounds with one,
    handing them the settings' repeats and rest, the session's flush buffer and hold; each result records how its
    pairs ran (CPU only: the GPU parts stand in)."""
    hold = object()
    session = SimpleNamespace(
        nvml=None, device={"name": "NVIDIA H200"}, flush_buffer=lambda: FLUSH, hold=lambda s: hold
    )
    results = {}

    def spec_and_result(_session, kernel_id, _shape):
        results[kernel_id] = BenchResult(kernel=kernel_id, shape=Shape(64, 64, 64), title=kernel_id, operation="sgemm")
        return SimpleNamespace(operation="sgemm", id=kernel_id), results[kernel_id]

    calls: list[tuple] = []
    monkeypatch.setattr(runner, "_spec_and_result", spec_and_result)
    monkeypatch.setattr(runner, "_verified_launch", lambda *_: (None, lambda: None))
    monkeypatch.setattr(runner, "_record_times", lambda *_: None)
    monkeypatch.setattr(
        runner, "time_interleaved", lambda *args: calls.append(("interleaved", *args[3:])) or ([1.0] * 3, [2.0] * 3)
    )
    monkeypatch.setattr(
        runner, "rested_rounds", lambda *args: calls.append(("rested", *args[2:])) or ([1.0] * 3, [2.0] * 3)
    )
    monkeypatch.setattr(runner, "NvmlSampler", _NoSampler)
    settings = BenchSettings(repeats=3, warmup=1, max_seconds_per_run=4.0, rest_s=rest_s)
    runner.run_ab(session, "cublas", "v9-regdb", None, settings)
    if rest_s:
        assert calls == [("rested", 3, 2.0, FLUSH, hold)]
        order = "alternating, each after an L2 flush, each pair after 2 s of rest and an untimed launch of both"
    else:
        assert calls == [("interleaved", 1, 3, 4.0, FLUSH, hold)]
        order = "alternating, each after an L2 flush"
    assert results["v9-regdb"].other["ab"] == {"partner": "cublas", "paired": True, "order": order}


class _NoSampler:
    """Stands in for runner.NvmlSampler: samples nothing."""

    def __init__(self, nvml) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass

    def summary(self) -> dict:
        return {}
