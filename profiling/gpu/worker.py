"""The GPU worker: a child process that runs a job and reports one JSON line per task.

The parent (`run_job`) never touches CUDA. A kernel that faults, hangs past its timeout or exhausts
memory fails only its own task: the parent kills the child and starts a fresh one for the tasks left.
Nsight Compute and compute-sanitizer launch the same child (`python -m profiling worker --job FILE`).
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from profiling.errors import WorkerError, error_line, first_line, last_line
from profiling.gpu.ceilings import measure_ceilings
from profiling.gpu.env import cuda_start_failure
from profiling.gpu.jobs import Job, Task
from profiling.gpu.process import kill_process_group, worker_command
from profiling.paths import SOURCE_ROOT
from profiling.runs.records import BenchResult
from profiling.shape import Shape

RESULT_PREFIX = "GEMMLENS_RESULT "
DEVICE_PREFIX = "GEMMLENS_DEVICE "
EXIT_CONTEXT_LOST = 3


def _emit(prefix: str, record: dict[str, Any]) -> None:
    sys.stdout.write(prefix + json.dumps(record) + "\n")
    sys.stdout.flush()


def child_main(job: Job) -> int:
    """Run a job inside this (child) process, printing result lines; the exit code tells the parent why it ended."""
    # Lazy: the runner imports CuPy, which only the child may load (the parent never touches CUDA).
    from profiling.gpu import runner as gpu_runner

    if job.op in ("selftest_fault", "selftest_hang"):
        gpu_runner.selftest(job.op.removeprefix("selftest_"))
        return 0
    try:
        session = gpu_runner.Session()
    except Exception as exc:  # noqa: BLE001 - no driver, no device, no CuPy: one line for the parent
        print(cuda_start_failure(f"{type(exc).__name__}: {first_line(exc)}"), file=sys.stderr)
        return 1
    _emit(DEVICE_PREFIX, session.device)
    if job.op == "device_info":
        return 0
    if job.op == "ceilings":
        ceilings = BenchResult("ceilings", Shape(1, 1, 1), other={"ceilings": measure_ceilings(session.device)})
        _emit(RESULT_PREFIX, ceilings.to_dict())
        return 0
    if job.op == "ab":
        return _child_ab(session, job)
    if job.op == "rounds":
        return _child_rounds(session, job)
    for task in job.tasks:
        try:
            record = gpu_runner.run_task(session, task.kernel, task.shape, job.settings, job.op)
        except Exception as exc:  # noqa: BLE001 - a sticky CUDA error: report it, then let the parent restart us
            record = _failed(task, f"the kernel crashed the GPU context: {error_line(exc)}")
            _emit(RESULT_PREFIX, record)
            return EXIT_CONTEXT_LOST
        _emit(RESULT_PREFIX, record)
    return 0


def _child_ab(session: Any, job: Job) -> int:
    """An interleaved A/B: exactly two tasks of one shape. After a crash the parent restarts the child with
    the task left alone, which can only be reported: its partner took the worker down."""
    from profiling.gpu import runner as gpu_runner

    tasks = job.tasks
    if len(tasks) != 2 or tasks[0].shape != tasks[1].shape:
        for task in tasks:
            why = "its A/B partner crashed the worker" if len(tasks) == 1 else "an A/B job needs two tasks of one shape"
            _emit(RESULT_PREFIX, _failed(task, why))
        return 0
    run = partial(gpu_runner.run_ab, session, tasks[0].kernel, tasks[1].kernel, tasks[0].shape, job.settings)
    return 0 if _emit_together(tasks, run, "the A/B") else EXIT_CONTEXT_LOST


def _child_rounds(session: Any, job: Job) -> int:
    """Each run of consecutive tasks of one shape timed together in rounds (runner.run_rounds), results in task
    order. After a crash the first task of that shape is reported as its cause, and the parent restarts the child
    with the rest."""
    from profiling.gpu import runner as gpu_runner

    for _shape, group in itertools.groupby(job.tasks, key=lambda task: task.shape):
        tasks = list(group)
        run = partial(gpu_runner.run_rounds, session, [task.kernel for task in tasks], tasks[0].shape, job.settings)
        if not _emit_together(tasks, run, "the rounds"):
            return EXIT_CONTEXT_LOST
    return 0


def _emit_together(tasks: list[Task], run: Callable[[], list[dict[str, Any]]], what: str) -> bool:
    """Emit the results of `run`, which times `tasks` together; where it raises (a sticky CUDA error), a failure of
    the first task naming `what` instead, and False: the parent restarts the child with the rest."""
    try:
        records = run()
    except Exception as exc:  # noqa: BLE001 - a sticky CUDA error: report it on the first task, restart
        _emit(RESULT_PREFIX, _failed(tasks[0], f"{what} crashed the GPU context: {error_line(exc)}"))
        return False
    for record in records:
        _emit(RESULT_PREFIX, record)
    return True


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SOURCE_ROOT), env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"
    env["CUPY_TF32"] = "0"
    return env


def _failed(task: Task, error: str, status: str = "failed") -> dict[str, Any]:
    """The result line of a task that did not run to the end (config null: no entry point reported)."""
    return BenchResult(task.kernel, task.shape, status=status, error=error).to_dict()


class _Child:
    """One worker child process with its stdout read by a thread into a queue."""

    def __init__(self, job: Job, workdir: str, command: Callable[[Path], list[str]]) -> None:
        job_file = Path(workdir) / f"job-{time.monotonic_ns()}.json"
        job_file.write_text(json.dumps(job.to_dict()))
        self.stderr_file = open(Path(workdir) / f"stderr-{time.monotonic_ns()}.txt", "w+")  # noqa: SIM115
        self.proc = subprocess.Popen(
            command(job_file),
            stdout=subprocess.PIPE,
            stderr=self.stderr_file,
            stdin=subprocess.DEVNULL,
            text=True,
            env=_child_env(),
            cwd=SOURCE_ROOT,
            start_new_session=True,  # so a kill takes the whole process group
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def kill(self) -> None:
        if self.proc.poll() is None:
            kill_process_group(self.proc)
        self.proc.wait()

    def stderr_tail(self) -> str:
        self.stderr_file.flush()
        self.stderr_file.seek(0)
        return last_line(self.stderr_file.read(), limit=400)

    def close(self) -> None:
        self.kill()
        self.stderr_file.close()


def run_job(
    job: Job,
    task_timeout_s: float = 120.0,
    on_result: Callable[[dict[str, Any]], None] | None = None,
    cancel: threading.Event | None = None,
    startup_timeout_s: float = 180.0,
    command: Callable[[Path], list[str]] = worker_command,
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """Run a job in worker children; returns (device info, one result per task, in order).

    Each task must report within `task_timeout_s` (the first also gets `startup_timeout_s` for CUDA
    start-up and compilation). A child that dies or hangs fails the task it was on; the rest continue
    in a fresh child. Setting `cancel` stops after the current task (remaining tasks are "cancelled").
    `command` builds the child's command line from the job file (tests substitute a scripted child).
    """
    pending = list(job.tasks)
    results: list[dict[str, Any]] = []
    device: dict[str, Any] | None = None
    with tempfile.TemporaryDirectory(prefix="gemmlens-job-") as workdir:
        while True:
            sub_job = Job(op=job.op, tasks=pending, settings=job.settings)
            child = _Child(sub_job, workdir, command)
            deadline = time.monotonic() + startup_timeout_s + task_timeout_s
            try:
                while True:
                    if cancel is not None and cancel.is_set():
                        for task in pending:
                            results.append(_failed(task, "cancelled", status="cancelled"))
                        return device, results
                    try:
                        line = child.lines.get(timeout=min(0.5, max(deadline - time.monotonic(), 0.01)))
                    except queue.Empty:
                        if time.monotonic() < deadline:
                            continue
                        child.kill()
                        if not pending:
                            raise WorkerError(f"the GPU worker did not answer within {task_timeout_s:.0f} s") from None
                        task = pending.pop(0)
                        results.append(_failed(task, f"timed out after {task_timeout_s:.0f} s; the worker was killed"))
                        if on_result:
                            on_result(results[-1])
                        break
                    if line is None:  # the child ended
                        code = child.proc.wait()
                        if not pending:
                            if code != 0 and device is None:
                                raise WorkerError(
                                    f"the GPU worker failed: {child.stderr_tail() or f'exit code {code}'}"
                                )
                            return device, results
                        if device is None and not job.op.startswith("selftest"):
                            raise WorkerError(
                                f"the GPU worker could not start: {child.stderr_tail() or f'exit code {code}'}"
                            )
                        if code == EXIT_CONTEXT_LOST:
                            break  # its last result line already reported the crash
                        task = pending.pop(0)
                        why = child.stderr_tail() or f"exit code {code}"
                        results.append(_failed(task, f"the GPU worker crashed: {why}"))
                        if on_result:
                            on_result(results[-1])
                        break
                    if line.startswith(DEVICE_PREFIX):
                        device = json.loads(line[len(DEVICE_PREFIX) :])
                    elif line.startswith(RESULT_PREFIX):
                        record = json.loads(line[len(RESULT_PREFIX) :])
                        pending.pop(0)
                        results.append(record)
                        if on_result:
                            on_result(record)
                        deadline = time.monotonic() + task_timeout_s
            finally:
                child.close()
            if not pending:
                return device, results


def run_selftest(kind: str, timeout_s: float = 60.0) -> str:
    """Run a deliberately faulting or hanging kernel in a child; returns the message the parent reports."""
    job = Job(op=f"selftest_{kind}", tasks=[Task("selftest", 1, 1, 1)])
    _, results = run_job(job, task_timeout_s=timeout_s, startup_timeout_s=0)
    return results[0]["error"] or "no error"
