"""The use cases that the CLI commands and the app's GPU queue both run: benchmark, profile, sanitize,
probe the device. Validation, progress reporting and error text live here once."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from kernels.registry import get_kernel
from profiling.errors import InvalidInput
from profiling.gpu.jobs import BenchSettings
from profiling.shape import Shape


def bench_job(
    kernel_ids: Sequence[str],
    shapes: Sequence[Shape],
    settings: BenchSettings,
    task_timeout_s: float = 120.0,
    command: Callable[[Path], list[str]] | None = None,
) -> Callable[[Any], dict[str, Any]]:
    """A queue job that verifies and times kernels in the worker and returns a results document.

    Each result is reported to the job as it arrives (progress = results / tasks); the job's cancel
    Event stops the run after the current task. `command` substitutes the worker (tests).
    """
    from profiling.gpu.jobs import Job, build_tasks
    from profiling.gpu.worker import run_job, worker_command
    from profiling.runs.results import add_reference_ratios, build_document, utc_now

    settings.validate()
    tasks = build_tasks([get_kernel(k) for k in kernel_ids], list(shapes))

    def run(job: Any) -> dict[str, Any]:
        started = utc_now()
        done = [0]

        def on_result(record: dict[str, Any]) -> None:
            done[0] += 1
            size = f"{record['m']}x{record['n']}x{record['k']}"
            job.report(done[0] / len(tasks), f"{record['kernel']} {size}: {record['status']}", record)

        job.report(0.0, f"starting the GPU worker for {len(tasks)} kernel/size runs")
        device, results = run_job(
            Job(op="bench", tasks=tasks, settings=settings),
            task_timeout_s=task_timeout_s,
            on_result=on_result,
            cancel=job.cancel,
            command=command or worker_command,
        )
        add_reference_ratios(results)
        return build_document(device, asdict(settings), results, started)

    return run


def device_info_job(timeout_s: float = 30.0, command: Callable[[Path], list[str]] | None = None):
    """A queue job returning the worker's device dict (raises WorkerError when there is no usable GPU)."""
    from profiling.gpu.jobs import Job
    from profiling.gpu.worker import run_job, worker_command

    def run(job: Any) -> dict[str, Any] | None:
        device, _ = run_job(
            Job(op="device_info"),
            task_timeout_s=timeout_s,
            startup_timeout_s=timeout_s,
            command=command or worker_command,
        )
        return device

    return run


def profile_job(
    kernel_ids: Sequence[str],
    size: tuple[int, int, int],
    report_path: Path,
    metric_set: str = "quick",
    extra_metrics: Sequence[str] = (),
    clock_control: str = "none",
    timeout_s: float = 600,
):
    """A queue job running ncu over the kernels at one size (profiling.nsight.runner.profile)."""
    from profiling.nsight import runner as ncu_runner

    for kid in kernel_ids:
        problem = get_kernel(kid).size_problem(*size)
        if problem:
            raise InvalidInput(problem)

    def run(job: Any):
        job.report(0.05, f"ncu profiling {', '.join(kernel_ids)} at {'x'.join(map(str, size))}")
        result = ncu_runner.profile(
            list(kernel_ids),
            [size],
            report_path,
            metric_set=metric_set,  # type: ignore[arg-type]
            extra_metrics=list(extra_metrics),
            clock_control=clock_control,  # type: ignore[arg-type]
            timeout_s=timeout_s,
        )
        job.report(0.95, f"ncu finished in {result.seconds:.1f} s; reading the report")
        return result

    return run


def sanitize_job(kernel_id: str, size: tuple[int, int, int], tool: str = "memcheck", timeout_s: float = 600):
    """A queue job running compute-sanitizer `tool` on one kernel and size."""
    from profiling.nsight import runner as ncu_runner

    def run(job: Any):
        job.report(0.1, f"compute-sanitizer --tool {tool} on {kernel_id}")
        return ncu_runner.sanitize(kernel_id, size, tool=tool, timeout_s=timeout_s)  # type: ignore[arg-type]

    return run
