"""The GPU tests' one way to run catalog kernels through the real worker: a job over kernels x shapes (the library
reference first at each shape, build_tasks), its results keyed by kernel id and shape."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

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


def run_probe(script: Path | str, *args: str) -> dict:
    """The last line of `script`'s output as JSON: a GPU probe (a file, or a module named "-m module") run with
    `args` in a child process (the test process keeps no CUDA context), from the repository root with it on
    PYTHONPATH; fails the test with its error output when it exits non-zero."""
    root = Path(__file__).resolve().parents[2]
    target = script.split() if isinstance(script, str) else [str(script)]
    done = subprocess.run(
        [sys.executable, *target, *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def selected_values(request: pytest.FixtureRequest, name: str, every: list[str]) -> list[str]:
    """The values of parameter `name` (in the order of `every`) of the tests selected in the requesting module, so a
    module fixture that runs every configuration in one job runs only those a `-k` filter kept; all of `every` where
    a selected test of the module does not take that parameter."""
    chosen = set()
    for item in request.session.items:
        if item.module is not request.module:
            continue
        params = getattr(getattr(item, "callspec", None), "params", {})
        if name not in params:
            return list(every)
        chosen.add(params[name])
    return [value for value in every if value in chosen]
