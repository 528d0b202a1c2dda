"""The Dask task of a sweep: one share of its tasks run through the GPU worker child (run_job) on this Dask
worker's GPU.

The Dask worker process never touches CUDA, like the app and the CLI: run_job starts the child, which inherits
CUDA_VISIBLE_DEVICES from the worker process, so containment, timeouts and verification are the single-GPU ones.
Each result is streamed to the client as it arrives (Worker.log_event on the sweep's topic) and returned at the
end, tagged with its place in the plan (`task_index`), the host and the GPU. A distributed Event named after the
sweep cancels: a running share stops after its current task, a share that has not started runs nothing.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from profiling.errors import GemmLensError, error_line
from profiling.gpu.jobs import Job
from profiling.gpu.process import worker_command
from profiling.gpu.worker import run_job
from profiling.runs.records import BenchResult

TOPIC_PREFIX = "gemmlens-sweep-"
CANCEL_PREFIX = "gemmlens-cancel-"
# What a result keeps of the child's device dict to say which GPU produced it.
GPU_KEYS = ("name", "uuid", "pci_bus_id", "cc", "driver", "max_sm_clock_mhz", "max_mem_clock_mhz", "sm_count")


def where_am_i() -> dict[str, Any]:
    """This Dask worker: host, worker name and the CUDA_VISIBLE_DEVICES it pins its GPU with."""
    try:
        from distributed import get_worker

        worker = str(get_worker().name)
    except (ImportError, ValueError):  # not inside a Dask worker (tests call the share directly)
        worker = "local"
    return {
        "host": socket.gethostname(),
        "worker": worker,
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
    }


def gpu_identity(place: dict[str, Any], device: dict[str, Any] | None) -> dict[str, Any]:
    """The `gpu` entry of a result: where it ran plus the GPU's name, UUID, PCI bus id, driver and clocks."""
    known = {k: device[k] for k in GPU_KEYS if device and device.get(k) is not None}
    return place | known


def _send(topic: str, message: dict[str, Any]) -> None:
    try:  # Dask sets the message's "worker" key to the worker's address: ours is "gpu_worker"
        from distributed import get_worker

        get_worker().log_event(topic, message)
    except (ImportError, ValueError):  # outside a worker there is no one to stream to
        pass


def _watch(sweep_id: str, cancel: threading.Event, done: threading.Event) -> None:
    """Poll the sweep's distributed Event twice a second; set `cancel` when the client sets it."""
    from distributed import Event

    remote = Event(CANCEL_PREFIX + sweep_id)
    while not done.is_set():
        try:
            if remote.is_set():
                cancel.set()
                return
        except Exception:  # noqa: BLE001 - a scheduler hiccup must not kill the share; try again
            pass
        done.wait(0.5)


def run_share(
    sweep_id: str,
    job_dict: dict[str, Any],
    indices: Sequence[int],
    task_timeout_s: float,
    startup_timeout_s: float = 180.0,
    command: Callable[[Path], list[str]] = worker_command,
    watch_cancel: bool = True,
) -> dict[str, Any]:
    """Run the share's tasks (`job_dict`, whose task i is the plan's task indices[i]) in the GPU worker child.

    Returns {"gpu": gpu_identity, "device": the child's device dict, "results": one per task, tagged}. Never raises
    for a task: a child that cannot start fails every task of the share with its message.
    """
    job = Job.from_dict(job_dict)
    place = where_am_i()
    topic = TOPIC_PREFIX + sweep_id
    cancel, done = threading.Event(), threading.Event()
    if watch_cancel:
        threading.Thread(target=_watch, args=(sweep_id, cancel, done), daemon=True).start()
    arrived: list[dict[str, Any]] = []

    def tag(record: dict[str, Any], index: int, gpu: dict[str, Any]) -> dict[str, Any]:
        return record | {"task_index": index, "host": place["host"], "gpu": gpu}

    def on_result(record: dict[str, Any]) -> None:
        index = indices[len(arrived)]
        arrived.append(record)
        result = BenchResult.from_dict(record)
        _send(
            topic,
            {
                "task_index": index,
                "kernel": result.kernel,
                "size": result.shape.label,
                "status": result.status,
                "gpu_worker": place["worker"],
                "host": place["host"],
            },
        )

    device: dict[str, Any] | None = None
    try:
        if _cancelled_before_start(sweep_id, watch_cancel):
            cancel.set()
        if cancel.is_set():
            results = [_unrun(t, "cancelled", "cancelled") for t in job.tasks]
        else:
            device, results = run_job(
                job,
                task_timeout_s=task_timeout_s,
                on_result=on_result,
                cancel=cancel,
                startup_timeout_s=startup_timeout_s,
                command=command,
            )
    except GemmLensError as exc:  # the child could not start (no GPU, no CuPy...): the share's tasks fail with it
        why = error_line(exc, limit=400)
        results = arrived + [_unrun(t, why, "failed") for t in job.tasks[len(arrived) :]]
    finally:
        done.set()
    gpu = gpu_identity(place, device)
    return {
        "gpu": gpu,
        "device": device,
        "results": [tag(r, i, gpu) for r, i in zip(results, indices, strict=True)],
    }


def _cancelled_before_start(sweep_id: str, watch_cancel: bool) -> bool:
    if not watch_cancel:
        return False
    from distributed import Event

    try:
        return Event(CANCEL_PREFIX + sweep_id).is_set()
    except Exception:  # noqa: BLE001 - without an answer, run: the watcher keeps asking
        return False


def _unrun(task, error: str, status: str) -> dict[str, Any]:  # noqa: ANN001 - a jobs.Task
    return BenchResult(task.kernel, task.shape, status=status, error=error).to_dict()
