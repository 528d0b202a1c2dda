"""Operations of several launches, on a real H100 capture (results/h100-2026-11-24/verdicts/ops_raw.csv): cuBLAS
split-K GEMMs plus their reduction, summed inside the worker's NVTX range and listed part by part."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profiling.launch_operations import group_operations, operations_frame
from profiling.nsight.report import parse_report_bytes
from profiling.runs.convert import report_run

ROOT = Path(__file__).resolve().parents[1]
OPS = ROOT / "results" / "h100-2026-11-24" / "verdicts"


@pytest.fixture(scope="module")
def report():
    return parse_report_bytes((OPS / "ops_raw.csv").read_bytes(), "ops_raw.csv", ours=True)


def test_split_k_operations_group_their_launches(report) -> None:
    ops = group_operations(report.launches)
    assert len(report.launches) == 16 and len(ops) == 12
    multi = {op.label: op for op in ops if len(op.parts) > 1}
    assert set(multi) == {
        "cublas 127x127x8191",
        "cublas-hgemm 127x127x8191",
        "cublas 64x64x65536",
        "cublas-hgemm 64x64x65536",
    }
    op = multi["cublas 127x127x8191"]
    assert "splitKreduce_kernel" in op.parts[1].name and op.main_part is op.parts[0]
    assert op.time_ns == pytest.approx(sum(p.value("gpu__time_duration.sum") for p in op.parts))


def test_the_operations_table_lists_each_part_beneath_its_total(report) -> None:
    table = operations_frame(report.launches)
    first = table[table["operation"] == "cublas 127x127x8191"]
    assert list(first["part"]) == ["all", "1", "2"]
    assert first["time_us"].iloc[0] == pytest.approx(first["time_us"].iloc[1:].sum())
    assert first["share_pct"].iloc[1:].sum() == pytest.approx(100.0)


def test_a_saved_profile_run_holds_one_result_per_operation_timed_like_events(report) -> None:
    run = report_run(report)
    by_key = {(r.kernel, r.size): r for r in run.results}
    assert len(run.results) == 12
    op = by_key[("cublas", "127x127x8191")]
    assert [p["time_ns"] for p in op.extra["parts"]] == [12416.0, 7168.0]
    assert op.time_median_ms == pytest.approx(0.019584)
    # CUDA events around the whole cuBLAS call in the same session's benchmark: within 5 % of the ncu sum.
    bench = json.loads((OPS / "ops_bench.json").read_text())
    events = next(r for r in bench["results"] if (r["kernel"], r["m"], r["k"]) == ("cublas", 127, 8191))
    assert op.time_median_ms == pytest.approx(events["time_ms"]["median"], rel=0.05)
    single = by_key[("v9-regdb", "127x127x8191")]
    assert "parts" not in single.extra and single.extra["function"].startswith("void sgemm_regdb")


def test_our_split_k_kernel_is_one_operation_of_its_zeroing_and_its_gemm() -> None:
    """v8-splitk at 127x127x8191 on the H100 (results/h100-2026-11-24/splitk): the profile command's own capture
    holds the C-zeroing launch and the split-K GEMM inside one worker range; saved, they are one result."""
    capture = ROOT / "results" / "h100-2026-11-24" / "splitk" / "ncu_raw.csv"
    report = parse_report_bytes(capture.read_bytes(), capture.name, ours=True)
    (op,) = group_operations(report.launches)
    assert [p.name.split("<")[0].removeprefix("void ") for p in op.parts] == ["splitk_zero_c", "sgemm_splitk"]
    assert op.parts[1].grid[2] > 1  # K split over gridDim.z
    (result,) = report_run(report).results
    assert (result.kernel, result.size) == ("v8-splitk", "127x127x8191")
    assert result.time_median_ms == pytest.approx(op.time_ns / 1e6)
    assert len(result.extra["parts"]) == 2


def test_a_hand_edited_operation_with_odd_fields_still_loads() -> None:
    """Two launches in one worker range whose grid, block and metrics are not what ncu writes (bad input)."""
    nvtx = '1  "<default domain>:gemmlens:cublas:64x64x64:none"'
    launches = [
        {"name": "a", "nvtx": nvtx, "grid": 7, "block": "x", "metrics": [1, 2]},
        {"name": "b", "nvtx": nvtx, "grid": None, "metrics": {"gpu__time_duration.sum": 5.0}},
    ]
    (result,) = report_run(launches).results
    assert (result.kernel, result.size) == ("cublas", "64x64x64")
    assert [p["grid"] for p in result.extra["parts"]] == [None, None]


def test_a_report_and_its_json_form_save_the_same_results(report) -> None:
    """The capture parsed and its `report --json` form (dict launches) name and size every operation alike."""
    parsed = [(r.kernel, r.size, r.time_median_ms) for r in report_run(report).results]
    from_json = [(r.kernel, r.size, r.time_median_ms) for r in report_run(report.to_dict()).results]
    assert parsed == from_json and ("v9-regdb", "127x127x8191", 0.800064) in parsed
