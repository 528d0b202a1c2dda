"""The benchmark and tuning use cases on a Dask cluster (`--cluster`, or the app with a scheduler configured).

Plans are the single-GPU ones (profiling.usecases.plan_benchmark / plan_tune): only where the tasks run changes.
`cluster` is a spec for open_cluster ("local-gpus", "tcp://host:8786") or a distributed.Client already connected
(tests, the app's long-lived client).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kernels.tuning import best_per_size
from profiling.cluster.local import ClusterInfo, gpu_workers, open_cluster
from profiling.cluster.sweep import gpu_types, run_benchmark_on
from profiling.errors import WorkerError
from profiling.runs.results import ResultsDocument
from profiling.usecases import BenchmarkPlan, Progress, TunePlan, WorkerCommand, record_tuning, silent


@contextmanager
def connected(cluster: Any) -> Iterator[tuple[Any, ClusterInfo]]:
    """(client, info) for a cluster spec (opened here, closed after) or for a Client already connected."""
    if isinstance(cluster, str):
        with open_cluster(cluster) as pair:
            yield pair
        return
    workers = gpu_workers(cluster)
    if not workers:
        raise WorkerError(f"the Dask cluster at {cluster.scheduler.address} has no worker offering a GPU")
    yield cluster, ClusterInfo("client", cluster.scheduler.address, workers, 0.0)


def run_benchmark(
    plan: BenchmarkPlan,
    cluster: Any,
    progress: Progress = silent,
    cancel: threading.Event | None = None,
    command: WorkerCommand | None = None,
    shares_per_gpu: int = 1,
) -> ResultsDocument:
    """profiling.usecases.run_benchmark over every GPU worker of `cluster`; the document gains `cluster`
    (profiling.cluster.sweep.cluster_document) and each result `host`, `gpu` and `task_index`."""
    with connected(cluster) as (client, info):
        progress(0.0, f"cluster {info.scheduler}: {len(info.gpu_workers)} GPU workers (up in {info.startup_s:.1f} s)")
        about = {"spec": info.spec, "scheduler": info.scheduler, "startup_s": round(info.startup_s, 3)}
        return run_benchmark_on(
            client, info.gpu_workers, plan.job, plan.task_timeout_s, progress, cancel, command, shares_per_gpu, about
        )


def run_tune(
    plan: TunePlan,
    cluster: Any,
    record: bool = False,
    progress: Progress = silent,
    cancel: threading.Event | None = None,
    command: WorkerCommand | None = None,
    shares_per_gpu: int = 1,
) -> ResultsDocument:
    """The tuning sweep over the cluster. `tuning.by_gpu_type` has the fastest verified configuration per GPU type,
    kernel and size (`tuning.best`: the first type's, as on one GPU); with `record`, each GPU type seen gets its
    tuning record (kernels.tuning.tuned_record_path), from the results of that type only."""
    document = run_benchmark(plan.bench, cluster, progress, cancel, command, shares_per_gpu)
    by_type = {name: [r for r in document.results if r.gpu_name == name] for name in gpu_types(document.results)}
    best = {name: best_per_size([r.to_dict() for r in results]) for name, results in by_type.items()}
    first = next(iter(best.values()), None)
    if first is None:
        first = best_per_size([r.to_dict() for r in document.results])
    document.tuning = {"kernels": plan.bases, "best": first, "by_gpu_type": best}
    if record:
        for name, results in by_type.items():
            record_tuning(document, name, results, progress)
    return document
