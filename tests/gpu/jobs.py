"""The GPU tests' one way to run catalog kernels through the real worker: a job over kernels x shapes (the library
reference first at each shape, build_tasks), its results keyed by kernel id and shape."""

from __future__ import annotations

from kernels.spec import KernelSpec
from profiling.gpu.jobs import BenchSettings, Job, build_tasks
from profiling.gpu.worker import run_job
from profiling.shape import Shape


def run_by_kernel_and_shape(
    op: str, specs: list[KernelSpec], shapes: list[Shape], settings: BenchSettings | None = None
) -> tuple[dict, dict[tuple[str, Shape], dict]]:
    """(the worker's device facts, {(kernel id, shape): result}) of `op` ("verify", "bench") on every spec at
    every shape; fails the test when the worker reports no device."""
    job = Job(op=op, tasks=build_tasks(specs, shapes), settings=settings or BenchSettings())
    device, results = run_job(job, task_timeout_s=120)
    assert device is not None
    return device, {(r["kernel"], Shape(r["m"], r["n"], r["k"])): r for r in results}
