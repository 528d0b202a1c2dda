"""profiling.analysis.rounds and scripts/round_predecessors.py on the H200 grid timed in interleaved rounds
(results/h200-2026-11-30/grid_interleaved/, session 30): v9-regdb's 128x256 tile takes 8-13 us longer after another
kernel's code than right after its own, whatever the shape, while its 128x128, 64x128 and 64x64 tiles take the same
time either way. Session 31's captures of why (results/h200-2026-11-30/icache/, real ncu output read by our parser)
and the 8-deep tile that does not pay it (grid_tunerounds/)."""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path

import pandas as pd

from profiling.analysis.rounds import PREDECESSOR_COLUMNS, times_by_predecessor
from profiling.nsight.load import load_report
from profiling.nsight.model import Report
from profiling.runs.results import load_document

ROOT = Path(__file__).resolve().parent.parent
GRID = ROOT / "results" / "h200-2026-11-30" / "grid_interleaved"
BIG_TILE = "v9-regdb-128x256x16-w64x64-t8x16-s3-o3"


def penalties() -> pd.DataFrame:
    """v9-regdb's median after cuBLAS minus after sgemm-auto, in us, at the shapes where both ran one configuration."""
    table = pd.concat([times_by_predecessor(load_document(p)) for p in sorted(GRID.glob("bench_k*.json"))])
    ours = table[table["kernel"] == "v9-regdb"].set_index(["shape", "after"])
    rows = []
    for shape in ours.index.get_level_values("shape").unique():
        warm = ours.loc[(shape, "sgemm-auto")]
        if warm["same_code"]:
            cold = ours.loc[(shape, "cublas")]
            rows.append((shape, warm["config"], round((cold["median_ms"] - warm["median_ms"]) * 1000, 1)))
    return pd.DataFrame(rows, columns=["shape", "config", "us"])


def test_a_kernel_s_launches_split_by_the_kernel_before_them() -> None:
    table = times_by_predecessor(load_document(GRID / "bench_k333.json"))
    assert list(table.columns) == PREDECESSOR_COLUMNS
    rows = table[table["shape"] == "2048x2048x333"]
    got = [(r.kernel, r.after, r.same_code, r.launches, round(r.median_ms * 1000, 1)) for r in rows.itertuples()]
    assert got == [
        ("cublas", "sgemm-auto", False, 9, 68.5),
        ("cublas", "v9-regdb", False, 21, 68.2),
        ("sgemm-auto", "cublas", False, 20, 77.5),
        ("sgemm-auto", "v9-regdb", True, 10, 66.5),
        ("v9-regdb", "cublas", False, 10, 77.5),
        ("v9-regdb", "sgemm-auto", True, 20, 66.9),
    ]
    assert set(rows["config"]) == {"", BIG_TILE}  # cuBLAS names no configuration


def test_only_the_128x256_tile_pays_for_following_other_code() -> None:
    found = penalties()
    big = found[found["config"].str.startswith("v9-regdb-128x256x16")]
    small = found[~found["config"].str.startswith("v9-regdb-128x256x16")]
    assert len(big) == 12 and big["us"].min() == 7.8 and big["us"].max() == 12.7
    assert len(small) == 8 and small["us"].abs().max() == 0.6
    assert set(small["config"]) == {
        "v9-regdb-128x128x16-w64x32-t8x8-s3",
        "v9-regdb-64x128x16-w32x64-t8x8-s3",
        "v9-regdb-64x64x16-w32x32-t8x4-s3-o1",
    }
    assert found.set_index("shape").loc["4096x4096x4096", "us"] == 8.8


def test_the_script_prints_the_split_and_refuses_a_document_timed_otherwise() -> None:
    def run(*args: str) -> subprocess.CompletedProcess:
        command = [sys.executable, str(ROOT / "scripts" / "round_predecessors.py"), *args]
        return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120)

    done = run(str(GRID / "bench_k333.json"), "--kernel", "sgemm-auto", "--shape", "2048x2048x333")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["shape", "kernel", "config", "after", "same_code", "launches", "median_us"]
    assert [line.split()[3:] for line in lines[1:]] == [
        ["cublas", "False", "20", "77.5"],
        ["v9-regdb", "True", "10", "66.5"],
    ]
    sequential = ROOT / "results" / "h200-2026-11-30" / "grid_zfpadc" / "bench_k333.json"
    refused = run(str(sequential))
    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr.strip() == (
        f"error: {sequential} holds no results timed in rounds (bench or tune --interleaved)"
    )


def test_the_benchmark_page_folds_the_split_under_the_results_of_a_timing_in_rounds(offline_app) -> None:
    """The Benchmark page on the bundled grid timed in rounds shows the split in an expander, built once opened; on a
    grid timed one kernel after another it shows none."""
    from streamlit.testing.v1 import AppTest

    for bundle, shown in (("h200-2026-11-30/grid_interleaved", True), ("h200-2026-11-30/grid_zfpadc", False)):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
        at.session_state["bundle"] = bundle
        at.run()
        at.switch_page("pages/2_Benchmark.py").run()
        assert not at.exception, [e.value for e in at.exception]
        labels = [e.label for e in at.expander]
        assert ("Launches by the kernel run just before them (timed in rounds)" in labels) == shown, bundle
        assert not [d for d in at.dataframe if "run just before" in d.value.columns]  # closed: not built
        if not shown:
            continue
        at.session_state["predecessors_open"] = True  # the expander opened (a reader's click reruns the page)
        at.run()
        (split,) = [d.value for d in at.dataframe if "run just before" in d.value.columns]
        assert list(split.columns) == [
            "shape",
            "kernel",
            "run just before",
            "same code",
            "launches",
            "median (us)",
            "configuration",
        ]
        row = split[(split["shape"] == "2048x2048x333") & (split["kernel"] == "sgemm-auto")]
        assert list(zip(row["run just before"], row["median (us)"], strict=True)) == [
            ("cublas", 77.5),
            ("v9-regdb", 66.5),
        ]


@functools.cache
def icache_report(build: str) -> Report:
    """The ncu capture of scripts/icache_probe.py's `build` (launch 0 checks the result after cuBLAS; then after
    cuBLAS and after itself in turn), read once for all the tests that ask."""
    return load_report(ROOT / "results" / "h200-2026-11-30" / "icache" / f"ncu_{build}.csv")


def stalls(build: str, reason: str) -> list[float]:
    """Per captured launch, warp cycles an issued instruction stalled for `reason`."""
    name = f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"
    return [launch.metrics[name].value for launch in icache_report(build).launches]


def durations_us(build: str) -> list[float]:
    return [round(launch.metrics["gpu__time_duration.sum"].value / 1000, 1) for launch in icache_report(build).launches]


def test_ncu_finds_the_cost_in_instruction_fetch_and_the_rolled_loop_without_it() -> None:
    """ncu with its own cache flush off: the tuned tile after cuBLAS (launches 1, 3, 5, 7) stalls 0.67-0.71 warp
    cycles an instruction on no_instruction and takes 75.8-77.3 us; after itself (2, 4, 6, 8) 0.06 and 65.3-65.4 us.
    Its k loop rolled into 4-step bodies stalls alike either way, but twice as long on dispatch."""
    built = stalls("as_built", "no_instruction")
    assert len(built) == 9
    assert [built[i] for i in (1, 3, 5, 7)] == [0.68, 0.71, 0.67, 0.69]
    assert [built[i] for i in (2, 4, 6, 8)] == [0.06] * 4
    times = durations_us("as_built")
    assert min(times[i] for i in (1, 3, 5, 7)) == 75.8 and max(times[i] for i in (2, 4, 6, 8)) == 65.4
    rolled = stalls("k_loop_by_4", "no_instruction")
    assert min(rolled) == 0.05 and max(rolled) == 0.07
    assert set(stalls("as_built", "dispatch_stall")) == {0.21} and set(stalls("k_loop_by_4", "dispatch_stall")) == {
        0.43
    }


def test_the_8_deep_tile_the_rounds_sweep_chose_takes_the_same_time_after_any_code() -> None:
    """grid_tunerounds/ (session 31): at 2048x2048x333 sgemm-auto and v9-regdb run v9-regdb's 256x128x8 tile, whose
    main loop is 1,128 instructions against the 128x256x16 tile's 2,212: 67.4 us after cuBLAS, 67.3 after itself."""
    table = times_by_predecessor(
        load_document(ROOT / "results" / "h200-2026-11-30" / "grid_tunerounds" / "bench_k333.json")
    )
    rows = table[(table["shape"] == "2048x2048x333") & (table["kernel"] == "sgemm-auto")]
    got = [(r.config, r.after, r.same_code, round(r.median_ms * 1000, 1)) for r in rows.itertuples()]
    assert got == [
        ("v9-regdb-256x128x8-w64x64-t16x8-s4", "cublas", False, 67.4),
        ("v9-regdb-256x128x8-w64x64-t16x8-s4", "v9-regdb", True, 67.3),
    ]
