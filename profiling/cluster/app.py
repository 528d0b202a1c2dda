"""The app's GPU queue on a cluster: where GEMMLENS_DASK_SCHEDULER names a Dask scheduler, a benchmark job spreads
over every GPU of that cluster. The queue itself is unchanged (one job at a time, turns between users); the job's
progress lines count results per GPU and its cancel Event stops the shares (profiling.cluster.sweep)."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from profiling.cluster.local import SCHEDULER_ENV, check_cluster
from profiling.gpu.jobs import BenchSettings
from profiling.runs.results import ResultsDocument
from profiling.shape import Shape
from profiling.usecases import WorkerCommand, bench_job, plan_benchmark


def configured_scheduler() -> str | None:
    """The scheduler address of GEMMLENS_DASK_SCHEDULER (checked), or None where none is set."""
    address = os.environ.get(SCHEDULER_ENV, "").strip()
    return check_cluster(address) if address else None


def benchmark_job(
    kernel_ids: Sequence[str],
    shapes: Sequence[Shape],
    settings: BenchSettings,
    task_timeout_s: float = 120.0,
    command: WorkerCommand | None = None,
) -> Callable[[Any], ResultsDocument]:
    """profiling.usecases.bench_job, run on the configured cluster when there is one (checked before queueing)."""
    scheduler = configured_scheduler()
    if scheduler is None:
        return bench_job(kernel_ids, shapes, settings, task_timeout_s, command)
    plan = plan_benchmark(kernel_ids, shapes, settings, task_timeout_s=task_timeout_s)

    def run(job: Any) -> ResultsDocument:
        from profiling.cluster.usecases import run_benchmark  # Dask is imported when the job runs

        return run_benchmark(plan, scheduler, job.report, job.cancel, command)

    return run


def work_per_gpu(job: Any) -> dict[str, int]:
    """Results so far per GPU worker of a cluster job (its streamed partial items); empty for a local job."""
    return dict(
        Counter(str(item["gpu_worker"]) for item in job.partial if isinstance(item, dict) and "gpu_worker" in item)
    )
