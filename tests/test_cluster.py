"""Sweeps on a Dask cluster (CPU only): two worker processes, each pinned to a "GPU" by CUDA_VISIBLE_DEVICES, run a
sweep through the real code path (profiling.cluster: LocalGpuCluster, run_share, run_job) with a scripted GPU child
that crashes or hangs on request. Results land in the run store: SQLite, and PostgreSQL when GEMMLENS_TEST_PG_URL
is set (`.ci/postgres.sh`), as in tests/test_store.py."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from profiling import usecases
from profiling.cluster import local, sweep
from profiling.cluster import usecases as cluster_usecases
from profiling.cluster.profiling import _merge, _range_key
from profiling.errors import InvalidInput, WorkerError
from profiling.gpu.jobs import BenchSettings, Job, Task
from profiling.nsight.model import Report
from profiling.nsight.report import parse_report_text
from profiling.runs.convert import bench_run
from profiling.runs.store import RunStore
from profiling.shape import Shape
from profiling.usecases import BenchmarkPlan

distributed = pytest.importorskip("distributed")
REPO = Path(__file__).resolve().parents[1]
PG_URL = os.environ.get("GEMMLENS_TEST_PG_URL", "").strip()

# The scripted GPU child: the worker protocol, a device named after the GPU its Dask worker pinned, and misbehaviour
# keyed by the task's kernel name (as in tests/test_worker_containment.py).
FAKE_CHILD = textwrap.dedent(
    """
    import json, os, sys, time
    sys.path.insert(0, {root!r})
    from profiling.gpu.worker import DEVICE_PREFIX, RESULT_PREFIX
    job = json.load(open(sys.argv[1]))
    gpu = os.environ.get("CUDA_VISIBLE_DEVICES", "none")
    device = {{"name": "Scripted GPU" + (" B" if gpu == "1" else ""), "cc": "9.0", "uuid": "GPU-fake-" + gpu, "pci_bus_id": "0000:0" + gpu + ":00.0",
              "driver": "580.00", "max_sm_clock_mhz": 1980}}
    print(DEVICE_PREFIX + json.dumps(device), flush=True)
    for task in job["tasks"]:
        kind = task["kernel"]
        if kind == "hang":
            time.sleep(600)
        if kind == "segfault":
            sys.stderr.write("Segmentation fault in kernel launch\\n"); sys.stderr.flush()
            os._exit(139)
        if kind.startswith("slow"):
            time.sleep(0.4)
        ms = 1.0 + task["m"] / 1000 + len(kind) % 7 / 10
        row = dict(task, status="ok", error=None, pid=os.getpid(), tflops=2e-9 * task["m"] * task["n"] * task["k"] / ms,
                   time_ms={{"median": ms, "min": ms, "max": ms, "mean": ms, "stdev": 0.0, "samples": 3}})
        print(RESULT_PREFIX + json.dumps(row), flush=True)
    """
)


@pytest.fixture(scope="module")
def client() -> Iterator[object]:
    """A LocalGpuCluster (a distributed.LocalCluster) with two worker processes, "GPUs" 0 and 1."""
    cluster = local.local_gpu_cluster(["0", "1"])
    with distributed.Client(cluster) as dask_client:
        dask_client.wait_for_workers(2, timeout=60)
        yield dask_client
    cluster.close()


@pytest.fixture
def scripted_child(tmp_path: Path):
    script = tmp_path / "fake_worker.py"
    script.write_text(FAKE_CHILD.format(root=str(REPO)))
    return lambda job_file: [sys.executable, str(script), str(job_file)]


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'runs.sqlite'}"
        return
    if not PG_URL:
        pytest.skip('GEMMLENS_TEST_PG_URL is not set (start a server with `eval "$(.ci/postgres.sh)"`)')
    import sqlalchemy as sa

    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f"CREATE SCHEMA {schema}")
    try:
        yield f"{PG_URL}{'&' if '?' in PG_URL else '?'}options=-csearch_path%3D{schema}"
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f"DROP SCHEMA {schema} CASCADE")
        admin.dispose()


def _plan(kinds: list[str], timeout_s: float = 1.5) -> BenchmarkPlan:
    tasks = [Task(kind, 64 * (i + 1), 64, 64) for i, kind in enumerate(kinds)]
    return BenchmarkPlan(Job(op="bench", tasks=tasks, settings=BenchSettings(repeats=3)), timeout_s)


# Dealt over two shares (even and odd indices): the hang (index 4) and the crash (index 3) are not the first task of
# their share, so the hang is caught by the per-task timeout, not the first task's start-up allowance.
SWEEP = ["a0", "a1", "a2", "segfault", "hang", "a5", "a6", "a7", "a8", "a9"]


def test_a_sweep_over_two_workers_gives_each_task_one_result(client, scripted_child, db_url: str) -> None:
    messages: list[str] = []
    streamed: list[dict] = []

    def progress(fraction=None, message=None, item=None) -> None:
        if message:
            messages.append(message)
        if item is not None:
            streamed.append(item)

    started = time.monotonic()
    document = cluster_usecases.run_benchmark(_plan(SWEEP), client, progress, command=scripted_child)
    assert time.monotonic() - started < 40
    results = document.to_dict()["results"]  # as the results file holds them
    assert [r["kernel"] for r in results] == SWEEP and [r["task_index"] for r in results] == list(range(len(SWEEP)))
    status = {r["kernel"]: r["status"] for r in results}
    assert status.pop("segfault") == "failed" and status.pop("hang") == "failed"
    assert set(status.values()) == {"ok"}, "a crash or a hang must fail only its own task"
    assert "Segmentation fault" in results[3]["error"] and "timed out" in results[4]["error"]
    # Both GPU workers ran, each on the GPU its CUDA_VISIBLE_DEVICES pinned; every result says where it ran.
    assert {r["gpu"]["worker"] for r in results} == {"gpu0", "gpu1"}
    for r in results:
        assert r["gpu"]["uuid"] == "GPU-fake-" + r["gpu"]["cuda_visible_devices"]
        assert r["host"] and r["gpu"]["driver"] == "580.00"
        assert r["gpu"]["name"] == {"0": "Scripted GPU", "1": "Scripted GPU B"}[r["gpu"]["cuda_visible_devices"]]
    # Streamed as they finished, each task once, with the count per GPU.
    assert sorted(m["task_index"] for m in streamed) == list(range(len(SWEEP)))
    assert any(m.startswith(f"{len(SWEEP)} of {len(SWEEP)} (gpu0 ") and "gpu1 " in m for m in messages), messages
    assert document.cluster["results_per_gpu"] == {"gpu0": 5, "gpu1": 5}
    assert len(document.cluster["gpus"]) == 2 and document.device.name.startswith("Scripted GPU")
    # Every worker's results land in one run of the store, with host and GPU.
    with RunStore(db_url) as store:
        run_id = store.save_run(bench_run(document, label="cluster sweep"))
        saved = store.read_run(run_id)
    assert len(saved.results) == len(SWEEP)
    assert {r.extra["gpu"]["worker"] for r in saved.results} == {"gpu0", "gpu1"}
    assert [r.status for r in saved.results].count("failed") == 2


def test_cancelling_stops_the_rest(client, scripted_child) -> None:
    kinds = [f"slow{i}" for i in range(20)]  # 10 per worker at 0.4 s: 4 s when nothing stops them
    cancel = threading.Event()

    def progress(fraction=None, message=None, item=None) -> None:
        if item is not None:
            cancel.set()  # cancel as soon as the first result is in

    started = time.monotonic()
    document = cluster_usecases.run_benchmark(_plan(kinds, timeout_s=10), client, progress, cancel, scripted_child)
    elapsed = time.monotonic() - started
    statuses = [r.status for r in document.results]
    assert len(statuses) == len(kinds) and [r.other["task_index"] for r in document.results] == list(range(len(kinds)))
    assert set(statuses) <= {"ok", "cancelled"}
    assert statuses.count("cancelled") >= len(kinds) // 2, statuses
    assert elapsed < 3.8, f"cancel took {elapsed:.1f} s"


def test_a_share_cancelled_before_it_starts_runs_nothing(client, scripted_child) -> None:
    cancel = threading.Event()
    cancel.set()
    document = cluster_usecases.run_benchmark(_plan(["a", "b", "c"]), client, cancel=cancel, command=scripted_child)
    assert [r.status for r in document.results] == ["cancelled"] * 3


def test_shares_mix_the_plan_and_cover_it_once() -> None:
    assert sweep.deal(5, 2) == [[0, 2, 4], [1, 3]]
    assert sweep.deal(2, 8) == [[0], [1]]
    shares = sweep.deal(32, 4)
    assert sorted(i for s in shares for i in s) == list(range(32))


@pytest.mark.parametrize("spec", ["local-gpus", "tcp://10.0.0.5:8786", "tls://sched.example.com:8786"])
def test_cluster_option_accepts(spec: str) -> None:
    assert local.check_cluster(spec) == spec


@pytest.mark.parametrize("spec", ["", "localhost", "http://x:8786", "local_gpus", "tcp://a b:1"])
def test_cluster_option_refuses_with_one_line(spec: str) -> None:
    with pytest.raises(InvalidInput, match="--cluster takes"):
        local.check_cluster(spec)


def test_visible_gpus_follow_cuda_visible_devices() -> None:
    assert local.visible_gpus({"CUDA_VISIBLE_DEVICES": "2, 3"}) == ["2", "3"]
    with pytest.raises(WorkerError, match="hides every GPU"):
        local.visible_gpus({"CUDA_VISIBLE_DEVICES": "-1"})


def test_tune_records_the_best_configuration_per_gpu_type(client, scripted_child, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(usecases, "tuned_record_path", lambda name: tmp_path / f"{name.replace(' ', '-')}.json")
    plan = usecases.plan_tune([Shape(2048, 2048, 2048)], repeats=3)
    document = cluster_usecases.run_tune(plan, client, record=True, command=scripted_child)
    assert len(document.results) == len(plan.bench.job.tasks) and {r.status for r in document.results} == {"ok"}
    by_type = document.tuning["by_gpu_type"]
    assert set(by_type) == {"Scripted GPU", "Scripted GPU B"}
    for name, best in by_type.items():
        ran_here = {r.kernel for r in document.results if r.gpu_name == name}
        assert {b["base"] for b in best} == set(plan.bases) and all(b["config"] in ran_here for b in best)
        record = json.loads((tmp_path / f"{name.replace(' ', '-')}.json").read_text())
        assert record["device"] == name and record["best"] == best
        assert {m["config"] for m in record["measured"]} <= ran_here


def test_profile_reports_of_two_workers_merge_into_one_in_plan_order() -> None:
    """Two ncu processes' reports (the recorded ladder capture dealt over two workers, each numbered from 0 as ncu
    numbers them) become one report: a launch per task, in plan order, each naming its host and GPU worker."""
    whole = parse_report_text((REPO / "tests/fixtures/ncu/raw.csv").read_text(), "raw.csv")
    shares = []
    for worker, launches in (("gpu0", whole.launches[0::2]), ("gpu1", whole.launches[1::2])):
        renumbered = [dataclasses.replace(launch, id=str(i)) for i, launch in enumerate(launches)]
        place = {"host": "node1", "worker": worker, "cuda_visible_devices": worker[-1]}
        shares.append({"place": place, "report": Report(renumbered, whole.layout)})
    order = [_range_key(launch) for launch in whole.launches]
    merged = _merge(shares[::-1], order, "run.ncu-rep")
    assert [_range_key(launch) for launch in merged.launches] == order
    assert [launch.id for launch in merged.launches] == [str(i) for i in range(len(order))]
    assert [launch.attributes["gpu_worker"] for launch in merged.launches] == ["gpu0", "gpu1"] * (len(order) // 2)
    assert merged.launches[3].attributes["ncu_id"] == "1" and merged.launches[3].metrics == whole.launches[3].metrics


def test_the_app_queue_sends_a_benchmark_to_the_configured_cluster(client, scripted_child, monkeypatch) -> None:
    from profiling.app.gpu_queue import GpuJobQueue
    from profiling.cluster import app as cluster_app

    monkeypatch.setenv("GEMMLENS_DASK_SCHEDULER", client.scheduler.address)
    fn = cluster_app.benchmark_job(["v1", "v3"], [Shape(64, 64, 64)], BenchSettings(repeats=3), command=scripted_child)
    queue = GpuJobQueue()
    job = queue.wait(queue.submit("benchmark", "me", fn).id, timeout_s=60)
    assert job is not None and job.state == "done", job.error if job else None
    assert job.result.cluster["scheduler"] == client.scheduler.address
    assert [r.kernel for r in job.result.results] == ["cublas", "v1", "v3"]
    assert sum(cluster_app.work_per_gpu(job).values()) == 3 and any("of 3 (gpu" in e for e in job.events)
    monkeypatch.setenv("GEMMLENS_DASK_SCHEDULER", "not-an-address")
    with pytest.raises(InvalidInput, match="--cluster takes"):
        cluster_app.benchmark_job(["v1"], [Shape(64, 64, 64)], BenchSettings(repeats=3))


def test_workers_start_when_the_main_script_is_the_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Inside the app (and a Streamlit AppTest) `__main__` is app.py; spawned workers must not re-run it."""
    import types

    from distributed import Client

    script = tmp_path / "app.py"
    script.write_text("raise RuntimeError('the main script ran inside a Dask worker')\n")
    fake_main = types.ModuleType("__main__")
    fake_main.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", fake_main)
    cluster = local.local_gpu_cluster(["0"])
    try:
        with Client(cluster) as client:
            client.wait_for_workers(1, timeout=60)
            assert local.gpu_workers(client)
    finally:
        cluster.close()
    assert sys.modules["__main__"] is fake_main  # put back
