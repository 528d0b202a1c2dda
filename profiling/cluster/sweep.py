"""Fan a benchmark or tuning sweep out over the GPU workers of a Dask cluster and gather every result once.

The plan's tasks are dealt into shares, task i to share i mod S (S = GPU workers x shares_per_gpu, so shares mix
sizes and cost about the same), each share pinned to one GPU worker (other workers may take it if that one dies).
Results stream back as they finish, with progress "n of N" and the count per GPU; the document is built from the
shares' own returns, in plan order, so each task has exactly one result whatever was streamed. A share whose
worker died fails its tasks with that message; cancelling stops running shares after their current task and the
rest before they start (their tasks are "cancelled").
"""

from __future__ import annotations

import queue
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from profiling.cluster.share import CANCEL_PREFIX, TOPIC_PREFIX, run_share
from profiling.device_model import DeviceInfo
from profiling.errors import WorkerError, error_line
from profiling.gpu.jobs import Job, Task
from profiling.gpu.process import worker_command
from profiling.runs.records import BenchResult
from profiling.runs.results import ResultsDocument, add_reference_ratios, bench_results, build_document, utc_now

ProgressFn = Callable[..., None]


def deal(n_tasks: int, n_shares: int) -> list[list[int]]:
    """Task indices dealt round-robin into at most n_shares non-empty shares (task i to share i mod n)."""
    n_shares = max(1, min(n_shares, n_tasks))
    return [list(range(s, n_tasks, n_shares)) for s in range(n_shares)]


def _gpu_label(gpu: dict[str, Any] | str, hosts: int = 1) -> str:
    if isinstance(gpu, str):
        return gpu
    return f"{gpu.get('host')}/{gpu.get('worker')}" if hosts > 1 else str(gpu.get("worker"))


def run_tasks(
    client,  # noqa: ANN001 - a distributed.Client
    workers: Sequence[str],
    job: Job,
    task_timeout_s: float,
    progress: ProgressFn,
    cancel: threading.Event | None = None,
    command: Callable[[Path], list[str]] = worker_command,
    shares_per_gpu: int = 1,
    startup_timeout_s: float = 180.0,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], float]:
    """Run `job`'s tasks over `workers` (addresses of GPU workers); returns (results in plan order, the GPU of
    each share that ran, seconds from the first submit to the last result)."""
    from distributed import Event, as_completed, wait

    tasks = job.tasks
    sweep_id = uuid.uuid4().hex[:12]
    stream: queue.Queue[dict[str, Any]] = queue.Queue()
    client.subscribe_topic(TOPIC_PREFIX + sweep_id, lambda event: stream.put(event[1]))
    remote_cancel = Event(CANCEL_PREFIX + sweep_id, client=client)
    # Cancelled already: say so before any share is submitted. Set only in the loop below, a share that a fast worker
    # started first ran its tasks (CI once got ['ok', 'cancelled', 'ok'] for a sweep cancelled before it began).
    cancelled = cancel is not None and cancel.is_set()
    if cancelled:
        remote_cancel.set()
    shares = deal(len(tasks), len(workers) * max(1, shares_per_gpu))
    started = time.monotonic()
    futures = {}
    for s, indices in enumerate(shares):
        share_job = Job(op=job.op, tasks=[tasks[i] for i in indices], settings=job.settings)
        future = client.submit(
            run_share,
            sweep_id,
            share_job.to_dict(),
            indices,
            task_timeout_s,
            startup_timeout_s,
            command,
            key=f"gemmlens-share-{sweep_id}-{s}",
            pure=False,
            resources={"GPU": 1},
            workers=[workers[s % len(workers)]],
            allow_other_workers=True,
        )
        futures[future] = indices
    progress(0.0, f"{len(tasks)} tasks in {len(shares)} shares over {len(workers)} GPU workers")
    results: dict[int, dict[str, Any]] = {}
    gpus: list[dict[str, Any]] = []
    streamed: set[int] = set()
    per_gpu: Counter[str] = Counter()
    pending = as_completed(list(futures))
    if cancelled:
        progress(None, "cancelled before the shares started: none runs a task")
    try:
        while True:
            _report_stream(stream, streamed, per_gpu, len(tasks), progress)
            if cancel is not None and cancel.is_set() and not cancelled:
                cancelled = True
                remote_cancel.set()
                progress(None, "cancelling: running shares stop after their current task")
            if pending.is_empty():
                break
            if not pending.has_ready():
                time.sleep(0.1)
                continue
            for future in pending.next_batch(block=False):
                indices = futures[future]
                try:
                    share = future.result()
                except Exception as exc:  # noqa: BLE001 - a lost worker or a bug fails its share's tasks only
                    why = f"the Dask share failed: {type(exc).__name__}: {error_line(exc, limit=300)}"
                    share = {"gpu": {}, "results": [_failed(tasks[i], i, why) for i in indices]}
                if share.get("device"):
                    gpus.append(share["gpu"])
                for record in share["results"]:
                    results.setdefault(int(record["task_index"]), record)
    except KeyboardInterrupt:
        # Stop the shares before the caller closes the cluster: a share killed mid-task would orphan its GPU child.
        remote_cancel.set()
        wait(list(futures), timeout=15)
        raise
    _report_stream(stream, streamed, per_gpu, len(tasks), progress)
    seconds = time.monotonic() - started
    remote_cancel.clear()
    client.unsubscribe_topic(TOPIC_PREFIX + sweep_id)
    missing = [i for i in range(len(tasks)) if i not in results]
    for i in missing:  # cannot happen unless a share returned short: never drop a task silently
        results[i] = _failed(tasks[i], i, "no result came back from the cluster")
    return [results[i] for i in range(len(tasks))], gpus, seconds


def _report_stream(stream: queue.Queue, seen: set[int], per_gpu: Counter, total: int, progress: ProgressFn) -> None:
    while True:
        try:
            message = stream.get_nowait()
        except queue.Empty:
            return
        index = message.get("task_index")
        if index in seen:  # a share re-run after its worker died streams its tasks again
            continue
        seen.add(index)
        per_gpu[str(message.get("gpu_worker"))] += 1
        counts = ", ".join(f"{name} {n}" for name, n in sorted(per_gpu.items()))
        line = (
            f"{len(seen)} of {total} ({counts}): {message.get('kernel')} {message.get('size')}: {message.get('status')}"
        )
        progress(len(seen) / total, line, message)


def _failed(task: Task, index: int, error: str) -> dict[str, Any]:
    return BenchResult(task.kernel, task.shape, status="failed", error=error).to_dict() | {"task_index": index}


def reference_ratios_per_gpu_type(results: list[BenchResult]) -> None:
    """pct_cublas against the library reference measured on the same GPU type (each type has its own speed)."""
    groups: dict[str, list[BenchResult]] = {}
    for r in results:
        groups.setdefault(str(r.gpu_name), []).append(r)
    for group in groups.values():
        add_reference_ratios(group)


def cluster_document(
    results: list[dict[str, Any]],
    gpus: list[dict[str, Any]],
    settings: Any,
    started_utc: str,
    cluster: dict[str, Any],
) -> ResultsDocument:
    """The results document of a cluster sweep: the usual one (docs/results-format.md) with `device` the first GPU
    that reported, and `cluster`: scheduler, GPUs (host, name, UUID, PCI bus id, driver, clocks), results per GPU
    and the sweep's wall-clock seconds."""
    typed = bench_results(results)
    reference_ratios_per_gpu_type(typed)
    first = next((g for g in gpus if g.get("name")), None)
    device = {k: v for k, v in first.items() if k not in ("host", "worker", "cuda_visible_devices")} if first else None
    document = build_document(DeviceInfo.from_dict(device), asdict(settings), typed, started_utc)
    unique = {(g.get("host"), g.get("worker"), g.get("uuid") or g.get("pci_bus_id")): g for g in gpus}
    per_gpu = Counter(_gpu_label(r.get("gpu") or "none", len({g.get("host") for g in gpus})) for r in results)
    document.cluster = cluster | {"gpus": list(unique.values()), "results_per_gpu": dict(sorted(per_gpu.items()))}
    return document


def run_benchmark_on(
    client,  # noqa: ANN001
    workers: Sequence[str],
    job: Job,
    task_timeout_s: float,
    progress: ProgressFn,
    cancel: threading.Event | None = None,
    command: Callable[[Path], list[str]] | None = None,
    shares_per_gpu: int = 1,
    cluster: dict[str, Any] | None = None,
) -> ResultsDocument:
    """Verify and time `job` over the cluster's GPU workers; returns the results document (cluster_document)."""
    started = utc_now()
    results, gpus, seconds = run_tasks(
        client, workers, job, task_timeout_s, progress, cancel, command or worker_command, shares_per_gpu
    )
    if not gpus and results and all(r["status"] == "failed" for r in results):
        # No GPU child started anywhere: one line, as a single-GPU run says it (no table of identical failures).
        raise WorkerError(f"no GPU worker of the cluster could run: {results[0]['error']}")
    info = (cluster or {}) | {"gpu_workers": len(workers), "sweep_s": round(seconds, 3)}
    return cluster_document(results, gpus, job.settings, started, info)


def gpu_types(results: Sequence[BenchResult]) -> list[str]:
    """The GPU names that produced results, in order of first appearance."""
    return list(dict.fromkeys(r.gpu_name for r in results if r.gpu_name))
