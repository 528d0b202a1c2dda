"""On a GPU: the app's live paths (benchmark, profile, sanitizer) run through the GPU job queue end to end.

These are the functions the Benchmark and Profile pages submit; only the Streamlit widgets are left out.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu
pytest.importorskip("plotly", reason="the app's tables need plotly")

from profiling import usecases  # noqa: E402
from profiling.app import tables  # noqa: E402
from profiling.app.gpu_queue import GpuJobQueue  # noqa: E402
from profiling.gpu.jobs import BenchSettings  # noqa: E402
from profiling.paths import tool_path  # noqa: E402
from profiling.shape import Shape  # noqa: E402


def test_benchmark_through_the_queue_reports_progress_and_a_document() -> None:
    queue = GpuJobQueue()
    job = queue.submit(
        "bench", "test", usecases.bench_job(["v5", "v9-regdb"], [Shape(512, 512, 512)], BenchSettings(repeats=5))
    )
    done = queue.wait(job.id, timeout_s=300)
    assert done.state == "done", done.error
    document = done.result
    frame = tables.bench_frame(document)
    assert set(frame["kernel"]) == {"cublas", "v5", "v9-regdb"} and (frame["status"] == "ok").all()
    assert done.progress == 1.0 and len(done.partial) == 3
    assert len(tables.bench_table(frame)) == 3


def test_cancel_stops_a_running_benchmark() -> None:
    queue = GpuJobQueue()
    shapes = [Shape(n, n, n) for n in (256, 512, 1024, 2048)]
    job = queue.submit("bench", "test", usecases.bench_job(["v1", "v2", "v3"], shapes, BenchSettings(repeats=30)))
    while not job.partial and not job.finished_state:
        queue.wait(job.id, timeout_s=0.2)
    queue.cancel(job.id)
    done = queue.wait(job.id, timeout_s=120)
    assert done.finished_state
    statuses = [r["status"] for r in (done.result or {}).get("results", [])] or [p["status"] for p in done.partial]
    assert len([s for s in statuses if s == "ok"]) < len(shapes) * 4


@pytest.mark.skipif(tool_path("ncu") is None, reason="Nsight Compute (ncu) is not installed")
def test_profile_through_the_queue_reads_the_report(tmp_path: Path) -> None:
    queue = GpuJobQueue()
    job = queue.submit(
        "profile", "test", usecases.profile_job(["v4", "v9-regdb"], (1024, 1024, 1024), tmp_path / "r.ncu-rep")
    )
    done = queue.wait(job.id, timeout_s=300)
    assert done.state == "done", done.error
    run = done.result
    assert run.report_path.is_file()
    table = tables.key_metrics_table([("live", run.report)])
    assert set(table["kernel"]) == {"v4", "v9-regdb"}
    assert (table["registers"] > 0).all()


@pytest.mark.skipif(tool_path("compute-sanitizer") is None, reason="compute-sanitizer is not installed")
def test_sanitizer_through_the_queue() -> None:
    queue = GpuJobQueue()
    job = queue.submit("sanitize", "test", usecases.sanitize_job("v8-async", (130, 200, 40), "racecheck"))
    done = queue.wait(job.id, timeout_s=300)
    assert done.state == "done", done.error
    assert done.result.errors == 0
