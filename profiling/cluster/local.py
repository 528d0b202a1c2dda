"""Dask clusters for GPU work: one worker process per visible GPU of this machine, or an existing scheduler.

`local-gpus` starts a `LocalGpuCluster`: a distributed.LocalCluster whose worker processes (Nannies) each see one
GPU through CUDA_VISIBLE_DEVICES and offer the resource GPU=1 with one thread, the way dask-cuda's
LocalCUDACluster pins its workers. `tcp://host:8786` (or tls://) connects to a running scheduler whose workers were
started with `--nthreads 1 --resources GPU=1` (docs/scale-out.md). The dashboard stays off, so bokeh is not needed.
"""

from __future__ import annotations

import copy
import logging
import os
import re
import shutil
import subprocess
import sys
import time
import types
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from profiling.errors import InvalidInput, WorkerError

LOCAL_GPUS = "local-gpus"
SCHEDULER_ENV = "GEMMLENS_DASK_SCHEDULER"
_ADDRESS = re.compile(r"^(tcp|tls|ucx|inproc)://[^\s/]+(:\d+)?$")
_GPU_LINE = re.compile(r"^GPU (\d+): .*?(?:\(UUID: (GPU-[0-9a-fA-F-]+)\))?\s*$")


def check_cluster(spec: str) -> str:
    """`local-gpus` or a scheduler address (tcp://host:8786); InvalidInput with one line for anything else."""
    spec = (spec or "").strip()
    if spec == LOCAL_GPUS or _ADDRESS.match(spec):
        return spec
    raise InvalidInput(f"--cluster takes '{LOCAL_GPUS}' or a Dask scheduler address like tcp://host:8786, not {spec!r}")


def visible_gpus(environ: dict[str, str] | None = None) -> list[str]:
    """The GPUs this machine shows CUDA: the entries of CUDA_VISIBLE_DEVICES where it is set, else the UUID of each
    GPU `nvidia-smi -L` lists (MIG slices are not split out). WorkerError where there is none."""
    environ = os.environ if environ is None else environ
    chosen = environ.get("CUDA_VISIBLE_DEVICES")
    if chosen is not None and chosen.strip():
        ids = [d.strip() for d in chosen.split(",") if d.strip()]
        if ids and ids[0] not in ("-1", "NoDevFiles"):
            return ids
        raise WorkerError(f"CUDA_VISIBLE_DEVICES={chosen!r} hides every GPU; --cluster local-gpus has none to use")
    smi = shutil.which("nvidia-smi")
    if smi is None:
        raise WorkerError("--cluster local-gpus needs nvidia-smi to count the GPUs, and it is not on PATH")
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise WorkerError(f"nvidia-smi -L failed: {exc}") from None
    ids = [m.group(2) or m.group(1) for line in out.stdout.splitlines() if (m := _GPU_LINE.match(line.strip()))]
    if not ids:
        raise WorkerError(f"nvidia-smi -L lists no GPU ({(out.stderr or out.stdout).strip()[:200] or 'no output'})")
    return ids


def _local_cluster_class():  # noqa: ANN202 - the class is built on first use: importing distributed takes a second
    from distributed import LocalCluster

    class LocalGpuCluster(LocalCluster):
        """A LocalCluster with one single-threaded worker process per GPU, each pinned by CUDA_VISIBLE_DEVICES."""

        def __init__(self, gpu_ids: Sequence[str], **options) -> None:
            self.gpu_ids = list(gpu_ids)
            super().__init__(
                n_workers=0,
                threads_per_worker=1,
                processes=True,
                resources={"GPU": 1},
                dashboard_address=None,
                silence_logs=logging.ERROR,
                **options,
            )
            self.scale(len(self.gpu_ids))
            self.sync(self._correct_state)

        def new_worker_spec(self) -> dict:
            """The next GPU's worker: named gpu<i>, with CUDA_VISIBLE_DEVICES set to that GPU alone."""
            free = [i for i in range(len(self.gpu_ids)) if f"gpu{i}" not in self.worker_spec]
            if not free:
                raise ValueError(f"every GPU ({len(self.gpu_ids)}) already has its worker")
            spec = copy.deepcopy(self.new_spec)
            spec["options"]["env"] = {"CUDA_VISIBLE_DEVICES": self.gpu_ids[free[0]]}
            spec["options"]["name"] = f"gpu{free[0]}"
            return {f"gpu{free[0]}": spec}

    return LocalGpuCluster


@contextmanager
def _plain_main() -> Iterator[None]:
    """A bare `__main__` while worker processes are spawned: multiprocessing's spawn re-runs the parent's main
    script in each child, and inside the app (or a Streamlit AppTest) that script is app.py, which must not run in a
    Dask worker (it fails there, and the worker never arrives)."""
    saved = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if saved is not None:
            sys.modules["__main__"] = saved


def local_gpu_cluster(gpu_ids: Sequence[str] | None = None, **options):  # noqa: ANN201 - a LocalGpuCluster
    """Start one Dask worker process per GPU of this machine (`gpu_ids`, default visible_gpus())."""
    ids = list(gpu_ids) if gpu_ids is not None else visible_gpus()
    with _plain_main():
        return _local_cluster_class()(ids, **options)


@dataclass
class ClusterInfo:
    """What a sweep reports about the cluster it ran on."""

    spec: str
    scheduler: str
    gpu_workers: list[str]
    startup_s: float


def gpu_workers(client) -> list[str]:  # noqa: ANN001 - a distributed.Client
    """Addresses of the workers that offer a GPU resource, in name order."""
    workers = client.scheduler_info(n_workers=-1)["workers"]
    with_gpu = [(str(w.get("name")), addr) for addr, w in workers.items() if w.get("resources", {}).get("GPU", 0) >= 1]
    return [addr for _, addr in sorted(with_gpu)]


@contextmanager
def open_cluster(spec: str, connect_timeout_s: float = 30.0) -> Iterator[tuple[object, ClusterInfo]]:
    """A distributed.Client on the cluster `spec` names (check_cluster), and what it has; the local cluster is
    closed on exit. WorkerError when it has no worker offering GPU=1."""
    from distributed import Client

    spec = check_cluster(spec)
    started = time.monotonic()
    cluster = local_gpu_cluster() if spec == LOCAL_GPUS else None
    try:
        try:
            client = Client(cluster if cluster is not None else spec, timeout=connect_timeout_s)
        except OSError as exc:
            raise WorkerError(f"cannot reach the Dask scheduler at {spec}: {exc}") from None
        with client:
            if cluster is not None:
                client.wait_for_workers(len(cluster.gpu_ids), timeout=connect_timeout_s * 4)
            workers = gpu_workers(client)
            if not workers:
                raise WorkerError(
                    f"the Dask cluster at {client.scheduler.address} has no worker offering a GPU; start one per GPU "
                    "with `dask worker SCHEDULER --nthreads 1 --resources GPU=1` (docs/scale-out.md)"
                )
            info = ClusterInfo(spec, client.scheduler.address, workers, time.monotonic() - started)
            yield client, info
    finally:
        if cluster is not None:
            cluster.close()
