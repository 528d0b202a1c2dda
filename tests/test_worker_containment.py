"""The parent survives children that crash, hang or report failures (CPU: a scripted child stands in for CUDA)."""

from __future__ import annotations

import sys
import textwrap
import time
from pathlib import Path

import pytest

from profiling.errors import WorkerError
from profiling.gpu.jobs import Job, Task
from profiling.gpu.worker import run_job

# A stand-in worker: it speaks the real protocol and misbehaves on request, keyed by the task's kernel name.
FAKE_CHILD = textwrap.dedent(
    """
    import json, os, sys, time
    sys.path.insert(0, {root!r})
    from profiling.gpu.worker import DEVICE_PREFIX, RESULT_PREFIX, EXIT_CONTEXT_LOST
    job = json.load(open(sys.argv[1]))
    print(DEVICE_PREFIX + json.dumps({{"name": "scripted", "cc": "9.0"}}), flush=True)
    for task in job["tasks"]:
        kind = task["kernel"]
        if kind == "hang":
            time.sleep(600)
        if kind == "segfault":
            sys.stderr.write("Segmentation fault in kernel launch\\n"); sys.stderr.flush()
            os._exit(139)
        if kind == "sticky":
            print(RESULT_PREFIX + json.dumps(dict(task, status="failed", error="the kernel crashed the GPU context")), flush=True)
            sys.exit(EXIT_CONTEXT_LOST)
        print(RESULT_PREFIX + json.dumps(dict(task, status="ok", error=None, pid=os.getpid())), flush=True)
    """
)


@pytest.fixture
def fake_worker(tmp_path: Path):
    script = tmp_path / "fake_worker.py"
    script.write_text(FAKE_CHILD.format(root=str(Path(__file__).resolve().parent.parent)))
    return lambda job_file: [sys.executable, str(script), str(job_file)]


def _job(*kinds: str) -> Job:
    return Job(op="bench", tasks=[Task(kind, 1, 1, 1) for kind in kinds])


def test_all_tasks_report_in_order(fake_worker) -> None:
    device, results = run_job(_job("a", "b", "c"), command=fake_worker)
    assert device == {"name": "scripted", "cc": "9.0"}
    assert [r["kernel"] for r in results] == ["a", "b", "c"]
    assert len({r["pid"] for r in results}) == 1


def test_a_crashing_child_fails_only_its_task(fake_worker) -> None:
    _, results = run_job(_job("a", "segfault", "b"), command=fake_worker)
    assert [r["status"] for r in results] == ["ok", "failed", "ok"]
    assert "crashed" in results[1]["error"] and "Segmentation fault" in results[1]["error"]
    assert results[0]["pid"] != results[2]["pid"], "the task after a crash must run in a fresh child"


def test_a_lost_context_restarts_the_child(fake_worker) -> None:
    _, results = run_job(_job("sticky", "a"), command=fake_worker)
    assert [r["status"] for r in results] == ["failed", "ok"]
    assert "GPU context" in results[0]["error"]


def test_a_hanging_child_is_killed_after_the_timeout(fake_worker) -> None:
    started = time.monotonic()
    _, results = run_job(_job("a", "hang", "b"), command=fake_worker, task_timeout_s=1.5, startup_timeout_s=5)
    assert time.monotonic() - started < 30
    assert [r["status"] for r in results] == ["ok", "failed", "ok"]
    assert "timed out after 2 s" in results[1]["error"] or "timed out after 1 s" in results[1]["error"]


def test_a_child_that_cannot_start_is_one_clear_error(tmp_path: Path) -> None:
    def broken(job_file: Path) -> list[str]:
        return [sys.executable, "-c", "import sys; sys.stderr.write('no usable CUDA GPU: none\\n'); sys.exit(1)"]

    with pytest.raises(WorkerError, match="could not start: no usable CUDA GPU"):
        run_job(_job("a"), command=broken)
