"""Interleaved A/B through the real worker protocol and the real child's A/B path (CPU: the GPU runner is
replaced inside the child by a scripted one), and the paired summary of its times."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from profiling import abtest
from profiling.errors import InvalidInput
from profiling.gpu.jobs import BenchSettings
from profiling.runs.results import load_document
from profiling.shape import Shape
from tests.scripted_worker import RUN_CHILD_MAIN

ROOT = Path(__file__).resolve().parent.parent

# The child runs profiling.gpu.worker.child_main unchanged (tests.scripted_worker); only `profiling.gpu.runner`
# (CuPy) is scripted: A's launches take 1.00 ms, B's 0.90 ms, both drifting upwards by 0.1 % a launch (as a warming
# GPU would).
SCRIPTED_CHILD = (
    textwrap.dedent(
        """
    import json, os, sys, types
    sys.path.insert(0, {root!r})
    runner = types.ModuleType("profiling.gpu.runner")

    class Session:
        device = {{"name": "scripted GPU", "cc": "9.0", "sm_count": 132}}

    def run_ab(session, a, b, shape, settings):
        if "segfault" in (a, b):
            os._exit(139)
        out = []
        for kernel, base in ((a, 1.0), (b, 0.9 if b == "v9-regdb" else 1.0)):
            times = [base * (1 + 0.001 * i) * (1.004 if i % 2 else 0.996) for i in range(settings.repeats)]
            median = sorted(times)[len(times) // 2]
            out.append({{"kernel": kernel, "m": shape.m, "n": shape.n, "k": shape.k, "status": "ok", "error": None,
                        "config": kernel, "time_ms": {{"median": median, "samples": len(times)}}, "times_ms": times,
                        "tflops": shape.flops / median / 1e9, "ab": {{"partner": b if kernel == a else a}}}})
        return out

    runner.Session, runner.run_ab = Session, run_ab
    """
    )
    + RUN_CHILD_MAIN
)


@pytest.fixture
def scripted_child(tmp_path: Path):
    script = tmp_path / "ab_child.py"
    script.write_text(SCRIPTED_CHILD.format(root=str(ROOT)))
    return lambda job_file: [sys.executable, str(script), str(job_file)]


def test_an_ab_run_goes_through_the_child_and_gives_a_paired_verdict(scripted_child) -> None:
    plan = abtest.plan_ab(
        "v8-async", "v9-regdb", [Shape(1024, 1024, 1024), Shape(2048, 2048, 2048)], BenchSettings(repeats=40)
    )
    document = abtest.run_ab(plan, command=scripted_child)
    assert document.ab == {"a": "v8-async", "b": "v9-regdb", "paired": True}
    assert [(r.kernel, r.shape.m) for r in document.results] == [
        ("v8-async", 1024),
        ("v9-regdb", 1024),
        ("v8-async", 2048),
        ("v9-regdb", 2048),
    ]
    assert all(len(r.times_ms) == 40 for r in document.results)
    summary = abtest.ab_summary(document, "v8-async", "v9-regdb", paired=True, threshold_pct=2.0)
    assert list(summary["verdict"]) == ["faster", "faster"]  # B at 0.9x of A
    assert summary["B/A"].between(0.89, 0.91).all() and (summary["pairs"] == 40).all()
    # Paired, the drift and the alternation cancel: the interval is far narrower than unpaired.
    unpaired = abtest.ab_summary(document, "v8-async", "v9-regdb", paired=False, threshold_pct=2.0)
    assert (summary["half-width %"] < unpaired["half-width %"] / 3).all()


def test_a_partner_that_crashes_the_worker_fails_both_alone(scripted_child) -> None:
    plan = abtest.plan_ab("v8-async", "v9-regdb", [Shape(64, 64, 64)], BenchSettings(repeats=10))
    plan.jobs[0].tasks[1].kernel = "segfault"  # the catalog would refuse the id; the child must not care
    document = abtest.run_ab(plan, command=scripted_child)
    statuses = [(r.kernel, r.status) for r in document.results]
    assert statuses == [("v8-async", "failed"), ("segfault", "failed")]
    assert "crashed" in document.results[0].error
    assert "partner crashed" in document.results[1].error
    summary = abtest.ab_summary(document, "v8-async", "segfault", paired=True, threshold_pct=2.0)
    assert list(summary["verdict"]) == ["n/a"]


@pytest.mark.parametrize(
    ("pair", "message"),
    [
        ("v8-async", "two kernel ids"),
        ("v8-async,v8-async", "two different kernels"),
        ("v8-async,wmma-async", "one operation"),
        ("v8-async,nope", "nope"),
    ],
)
def test_bad_pairs_are_refused_with_a_reason(pair: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        abtest.parse_pair(pair)


def test_a_size_one_kernel_cannot_run_is_refused_before_the_gpu() -> None:
    with pytest.raises(InvalidInput, match="cannot run"):
        abtest.plan_ab("v1", "wmma-async", [Shape(17, 17, 17)], BenchSettings())


def test_an_ab_run_with_a_rest_says_so_under_its_table() -> None:
    """The H200 run of session 22 (bench --ab cublas-addmm,wgmma-streamk --sizes 8192 --rest 2) and an A/B without a
    rest from the same day."""
    rested = load_document(ROOT / "results" / "h200-2026-11-29" / "ab_rest" / "ab_rest_8192.json")
    assert abtest.rest_note(rested) == (
        " Each pair ran after 2 s of rest and an untimed launch of both kernels, so none ran power-capped."
    )
    summary = abtest.ab_summary(rested, "cublas-addmm", "wgmma-streamk", paired=True, threshold_pct=2.0)
    assert list(summary["verdict"]) == ["same"] and round(summary["B/A"].iloc[0], 3) == 1.005
    back_to_back = load_document(
        ROOT / "results" / "h200-2026-11-29" / "sgemm_full_clock" / "ab_cublas_vs_v9-regdb.json"
    )
    assert abtest.rest_note(back_to_back) == ""
