"""tune --interleaved and bench --interleaved through the real worker protocol and the real child's rounds path (CPU: the GPU runner is
replaced inside the child by a scripted one): each shape's configurations and cuBLAS go to one run_rounds call, their
results come back in task order, and a crash fails one task while the rest of its shape is timed again."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kernels import tuning
from profiling import usecases
from profiling.gpu.jobs import BenchSettings
from profiling.shape import Shape
from tests.scripted_worker import RUN_CHILD_MAIN

ROOT = Path(__file__).resolve().parent.parent
PADC = "v9-splitk-128x64x8-w64x32-t8x8-s5-padc"
FILL = "v9-splitk-64x128x16-w32x64-t8x8-s4-o3-fill"

# The child runs profiling.gpu.worker.child_main unchanged (tests.scripted_worker); only `profiling.gpu.runner`
# (CuPy) is scripted. It appends each run_rounds call's kernels and shape to CALLS, and times cuBLAS at 19 us, the
# padded-C split at 20 us and the other at 23 us (the H200's grid medians at 127x127x8191).
SCRIPTED_CHILD = (
    textwrap.dedent(
        """
    import json, os, sys, types
    sys.path.insert(0, {root!r})
    runner = types.ModuleType("profiling.gpu.runner")
    MS = {{"cublas": 0.019, {padc!r}: 0.020, {fill!r}: 0.023}}

    class Session:
        device = {{"name": "scripted GPU", "cc": "9.0", "sm_count": 132}}

    def run_rounds(session, kernels, shape, settings):
        with open({calls!r}, "a") as calls:
            calls.write(json.dumps([kernels, shape.label]) + "\\n")
        if "segfault" in kernels:
            os._exit(139)
        if "sticky" in kernels:
            raise RuntimeError("cudaErrorIllegalAddress")
        out = []
        for kernel in kernels:
            times = [MS[kernel]] * settings.repeats
            out.append({{"kernel": kernel, "operation": "sgemm", "m": shape.m, "n": shape.n, "k": shape.k, "status": "ok", "error": None,
                        "config": kernel, "time_ms": {{"median": MS[kernel], "samples": len(times)}},
                        "times_ms": times, "tflops": shape.flops / MS[kernel] / 1e9}})
        return out

    runner.Session, runner.run_rounds = Session, run_rounds
    """
    )
    + RUN_CHILD_MAIN
)


@pytest.fixture
def scripted(tmp_path: Path):
    calls = tmp_path / "calls.jsonl"
    script = tmp_path / "rounds_child.py"
    script.write_text(SCRIPTED_CHILD.format(root=str(ROOT), padc=PADC, fill=FILL, calls=str(calls)))
    return (lambda job_file: [sys.executable, str(script), str(job_file)]), calls


def read_calls(calls: Path) -> list[list]:
    return [json.loads(line) for line in calls.read_text().splitlines()]


def test_an_interleaved_plan_times_each_shape_s_configurations_together() -> None:
    plan = usecases.plan_tune([(127, 127, 8191), (4096, 127, 4096)], [FILL, PADC], repeats=30, interleaved=True)
    assert plan.bench.job.op == "rounds"
    assert [(t.kernel, t.m) for t in plan.bench.job.tasks] == [
        ("cublas", 127),
        (PADC, 127),
        (FILL, 127),
        ("cublas", 4096),
        (PADC, 4096),
        (FILL, 4096),
    ]
    # One task's time limit covers its shape's three: the first result comes once all three are timed.
    assert plan.bench.task_timeout_s == 360.0
    assert usecases.plan_tune([(127, 127, 8191)], [FILL], repeats=30).bench.job.op == "bench"


def test_rounds_go_through_the_child_a_shape_at_a_time_and_the_sweep_picks_from_them(scripted) -> None:
    command, calls = scripted
    plan = usecases.plan_tune([(127, 127, 8191), (4096, 127, 4096)], [FILL, PADC], repeats=30, interleaved=True)
    document = usecases.run_tune(plan, command=command)
    assert read_calls(calls) == [
        [["cublas", PADC, FILL], "127x127x8191"],
        [["cublas", PADC, FILL], "4096x127x4096"],
    ]
    assert [(r.kernel, r.shape.label, r.status) for r in document.results][:3] == [
        ("cublas", "127x127x8191", "ok"),
        (PADC, "127x127x8191", "ok"),
        (FILL, "127x127x8191", "ok"),
    ]
    best = {(b["m"], b["config"]) for b in document.tuning["best"]}
    assert best == {(127, PADC), (4096, PADC)}
    pct = {(r.kernel, r.shape.m): round(r.pct_cublas, 1) for r in document.results if r.kernel != "cublas"}
    assert pct[(PADC, 127)] == 95.0 and pct[(FILL, 127)] == 82.6


@pytest.mark.parametrize(
    ("culprit", "why"),
    [("segfault", "the GPU worker crashed"), ("sticky", "the rounds crashed the GPU context: cudaErrorIllegalAddress")],
)
def test_a_crash_fails_the_shape_s_first_task_and_times_the_rest_again(scripted, culprit: str, why: str) -> None:
    command, calls = scripted
    plan = usecases.plan_tune([(127, 127, 8191)], [FILL, PADC], repeats=10, interleaved=True)
    plan.bench.job.tasks[0].kernel = culprit  # the catalog would refuse the id; the child must not care
    document = usecases.run_tune(plan, command=command)
    assert read_calls(calls) == [[[culprit, PADC, FILL], "127x127x8191"], [[PADC, FILL], "127x127x8191"]]
    assert [(r.kernel, r.status) for r in document.results] == [(culprit, "failed"), (PADC, "ok"), (FILL, "ok")]
    assert document.results[0].error.startswith(why)


def test_interleaved_measurements_replace_the_record_s_at_that_shape(scripted, tmp_path, monkeypatch) -> None:
    command, _calls = scripted
    monkeypatch.setattr(tuning, "TUNED_DIR", tmp_path / "tuning")
    old = {"m": 127, "n": 127, "k": 8191, "base": "v9-splitk"}
    earlier = [{**old, "config": FILL, "tflops": 12.43}, {**old, "config": PADC, "tflops": 12.09}]
    (tmp_path / "tuning").mkdir()
    tuning.tuned_record_path("scripted GPU").write_text(json.dumps({"device": "scripted GPU", "measured": earlier}))
    assert tuning.tuned_config_id("scripted GPU", "v9-splitk", 127, 127, 8191) == FILL
    plan = usecases.plan_tune([Shape(127, 127, 8191)], [FILL, PADC], repeats=10, interleaved=True)
    usecases.run_tune(plan, record=True, command=command)
    assert tuning.tuned_config_id("scripted GPU", "v9-splitk", 127, 127, 8191) == PADC


def test_bench_interleaved_times_each_shape_s_kernels_and_cublas_together(scripted) -> None:
    """`bench --interleaved` (the grid stage's GRID_INTERLEAVED): the same rounds op as the sweep, one run_rounds call
    per shape with cuBLAS first, and each kernel's % of cuBLAS from those rounds."""
    command, calls = scripted
    plan = usecases.plan_benchmark(
        [PADC, FILL],
        [(127, 127, 8191), (333, 127, 8191)],
        BenchSettings(repeats=30),
        task_timeout_s=100,
        interleaved=True,
    )
    assert plan.job.op == "rounds" and plan.task_timeout_s == 300.0
    document = usecases.run_benchmark(plan, command=command)
    assert read_calls(calls) == [
        [["cublas", PADC, FILL], "127x127x8191"],
        [["cublas", PADC, FILL], "333x127x8191"],
    ]
    pct = [(r.kernel, r.shape.m, round(r.pct_cublas, 1)) for r in document.results if r.kernel != "cublas"]
    assert pct == [(PADC, 127, 95.0), (FILL, 127, 82.6), (PADC, 333, 95.0), (FILL, 333, 82.6)]
    assert usecases.plan_benchmark([PADC], [(127, 127, 8191)], BenchSettings(repeats=30)).job.op == "bench"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--kernels", "v9-regdb,wgmma-streamk", "--sizes", "256", "--interleaved"],
            "error: --interleaved times one operation's kernels together, and these compute hgemm_addmm, sgemm: "
            "bench each operation's kernels on their own",
        ),
        (
            ["--kernels", "v9-regdb", "--sizes", "256", "--interleaved", "--verify-only"],
            "error: --interleaved times kernels together; it cannot be combined with --verify-only",
        ),
        (
            ["--ab", "v9-regdb,v8-async", "--sizes", "256", "--interleaved"],
            "error: --ab already alternates its two kernels; leave out --interleaved",
        ),
    ],
)
def test_bench_interleaved_refuses_what_it_cannot_time_together(args: list[str], message: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "profiling", "bench", *args], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert (done.returncode, done.stderr.strip().splitlines()[-1], done.stdout) == (2, message, "")
