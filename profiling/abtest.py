"""Interleaved A/B benchmarks (`bench --ab A,B`): two kernels timed in alternation in one worker, and the paired
verdict on B against A with its interval; the same summary of a back-to-back run for comparison.

Running A's launches and then B's lets drift (clocks, heat, a neighbour on the node) land on one kernel only;
alternating them puts it on both, and the per-pair ratio cancels it (profiling.gpu.timing.time_interleaved).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

from kernels.registry import get_kernel
from profiling.device_model import DeviceInfo
from profiling.errors import InvalidInput
from profiling.gpu.jobs import BenchSettings, Job, Task
from profiling.gpu.worker import run_job, worker_command
from profiling.runs.records import BenchResult
from profiling.runs.results import ResultsDocument, add_reference_ratios, bench_results, build_document, utc_now
from profiling.runs.verdict import DEFAULT_CONFIDENCE, bootstrap_ratio, decide
from profiling.shape import Shape
from profiling.usecases import Progress, WorkerCommand, check_seconds, silent


@dataclass(frozen=True)
class AbPlan:
    """A checked A/B: one worker job per shape, each holding A and B."""

    kernel_a: str
    kernel_b: str
    jobs: list[Job]
    task_timeout_s: float


def parse_pair(text: str) -> tuple[str, str]:
    """ "A,B" -> the two catalog ids, checked: two different kernels of one operation."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if len(parts) != 2:
        raise InvalidInput(f"--ab takes two kernel ids separated by a comma (e.g. v8-async,v9-regdb), got {text!r}")
    a, b = (get_kernel(p) for p in parts)
    if a.id == b.id:
        raise InvalidInput(f"--ab needs two different kernels, got {a.id} twice")
    if a.operation != b.operation:
        raise InvalidInput(f"--ab needs two kernels of one operation: {a.id} is {a.operation}, {b.id} {b.operation}")
    return a.id, b.id


def plan_ab(
    kernel_a: str, kernel_b: str, shapes: Sequence[Shape], settings: BenchSettings, task_timeout_s: float = 120.0
) -> AbPlan:
    """Check an A/B of two kernels over shapes (the size rules of both kernels included)."""
    settings.validate()
    if not shapes:
        raise InvalidInput("no sizes given; pass e.g. --sizes 4096")
    rest = settings.rest_s * settings.repeats
    if rest >= task_timeout_s:
        raise InvalidInput(
            f"a rest of {settings.rest_s:g} s before each of {settings.repeats} pairs is {rest:g} s, past the "
            f"{task_timeout_s:g} s a size may take: fewer repeats or a shorter rest (or a longer --timeout)"
        )
    a, b = get_kernel(kernel_a), get_kernel(kernel_b)
    for spec in (a, b):
        for shape in shapes:
            problem = spec.size_problem(shape.m, shape.n, shape.k)
            if problem:
                raise InvalidInput(f"{spec.id} cannot run {shape.label}: {problem}")
    jobs = [
        Job(op="ab", tasks=[Task(a.id, s.m, s.n, s.k), Task(b.id, s.m, s.n, s.k)], settings=settings) for s in shapes
    ]
    return AbPlan(a.id, b.id, jobs, check_seconds(task_timeout_s))


def run_ab(
    plan: AbPlan,
    progress: Progress = silent,
    cancel: threading.Event | None = None,
    command: WorkerCommand | None = None,
) -> ResultsDocument:
    """Run the A/B jobs shape by shape; returns a results document with `ab` naming the pair."""
    started = utc_now()
    device: dict[str, Any] | None = None
    results: list[BenchResult] = []
    for i, job in enumerate(plan.jobs):
        if cancel is not None and cancel.is_set():
            results += [BenchResult(t.kernel, t.shape, status="cancelled", error="cancelled") for t in job.tasks]
            continue
        label = job.tasks[0].shape.label
        progress(i / len(plan.jobs), f"A/B {plan.kernel_a} vs {plan.kernel_b} at {label}")
        found, records = run_job(
            job, task_timeout_s=plan.task_timeout_s, cancel=cancel, command=command or worker_command
        )
        device = device or found
        results += bench_results(records)
    add_reference_ratios(results)
    document = build_document(DeviceInfo.from_dict(device), asdict(plan.jobs[0].settings), results, started)
    document.ab = {"a": plan.kernel_a, "b": plan.kernel_b, "paired": True}
    progress(1.0, "A/B done")
    return document


AB_COLUMNS = ["size", "A", "B", "A ms", "B ms", "B/A", "interval", "half-width %", "pairs", "verdict", "note"]


def ab_summary(
    document: ResultsDocument,
    kernel_a: str,
    kernel_b: str,
    *,
    paired: bool,
    threshold_pct: float,
    confidence: float = DEFAULT_CONFIDENCE,
) -> pd.DataFrame:
    """Per size, B against A: medians, the ratio of B's time to A's with its bootstrap interval, and the verdict
    (faster: B is faster). `paired` for an interleaved run; a back-to-back run (bench --kernels A,B) is not."""
    by_key: dict[tuple[str, str], BenchResult] = {}
    for result in document.results:
        by_key.setdefault((result.kernel, result.shape.label), result)
    rows = []
    sizes = dict.fromkeys(label for (_, label) in by_key)
    for size in sizes:
        a, b = by_key.get((kernel_a, size)), by_key.get((kernel_b, size))
        if a is None or b is None:
            continue
        row: dict[str, Any] = {"size": size, "A": kernel_a, "B": kernel_b}
        row["A ms"] = a.time_ms.median if a.time_ms else None
        row["B ms"] = b.time_ms.median if b.time_ms else None
        interval = (
            bootstrap_ratio(a.times_ms, b.times_ms, paired=paired, confidence=confidence)
            if a.times_ms and b.times_ms
            else None
        )
        if interval is None:
            why = a.error or b.error or "fewer than 5 timed launches per kernel"
            rows.append({**row, "verdict": "n/a", "note": why})
            continue
        verdict = decide(interval, threshold_pct)
        rows.append(
            {
                **row,
                "B/A": interval.ratio,
                "interval": interval.text(),
                "half-width %": interval.half_width_pct,
                "pairs": min(interval.samples),
                "verdict": verdict.verdict,
                "note": verdict.note,
            }
        )
    return pd.DataFrame(rows, columns=AB_COLUMNS)


def rest_note(document: ResultsDocument) -> str:
    """ " Each pair ran after N s of rest ..." for an A/B run with a rest before each pair (bench --ab --rest), else
    "": the sentence the page and the command line add under the A/B table."""
    rest = float((document.settings or {}).get("rest_s") or 0.0)
    if rest <= 0:
        return ""
    return f" Each pair ran after {rest:g} s of rest and an untimed launch of both kernels, so none ran power-capped."


def ab_job(
    kernel_a: str, kernel_b: str, shapes: Sequence[Shape], settings: BenchSettings, task_timeout_s: float = 120.0
):
    """A queue job (profiling.app.gpu_queue) running an A/B, checked now, before it is queued."""
    plan = plan_ab(kernel_a, kernel_b, shapes, settings, task_timeout_s)
    return lambda job: run_ab(plan, job.report, job.cancel)
