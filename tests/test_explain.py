"""Explaining a step, on the REAL full-set captures of the whole catalog (H100, 1024 and 4096) and the quick-set
fixture: the time split must add up, and the ranking must name what each step was built to change."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from profiling import metric_names as M
from profiling.analysis import evidence as E
from profiling.analysis import explain as X
from profiling.nsight import load as L
from profiling.nsight import metric_registry as R
from profiling.nsight import source_load as SL

ROOT = Path(__file__).resolve().parent.parent
H100 = ROOT / "results" / "h100-2026-11-22"


def capture(name: str) -> Path:
    path = H100 / name
    if not path.is_file():
        pytest.skip(f"real capture {name} not in results/h100-2026-11-22")
    return path


@pytest.fixture(scope="module", params=(1024, 4096))
def steps(request: pytest.FixtureRequest) -> tuple[int, dict[tuple[str, str], X.Explanation]]:
    report = L.load_report(capture(f"ncu_why_{request.param}_raw.csv"))
    out = {}
    for base, cand in X.ladder_steps():
        before, after = X.find_launch(report.launches, base), X.find_launch(report.launches, cand)
        if before is None or after is None:
            assert cand in (
                "wgmma-tma",
                "wgmma-pingpong",
                "wgmma-tma-store",
                "wgmma-persistent",
                "wgmma-cluster",
                "wgmma-persistent-bf16",
                "wgmma-staged",
                "wgmma-streamk",
                "wgmma-streamk-bf16",
                "wgmma-streamk-cluster",
                "wgmma-streamk-cluster-bf16",
                "v8-splitk",
                "v9-splitk",
                "v9-clusterk",
            ), f"{base} -> {cand} is missing from the bundled capture"
            continue  # newer than the bundled H100 capture; its step needs a new capture
        out[(base, cand)] = X.explain(before, after)
    return request.param, out


def top_keys(expl: X.Explanation, n: int = 3) -> list[str]:
    return [i.key for i in expl.top(n)]


def test_ladder_steps_come_from_the_catalog() -> None:
    steps = X.ladder_steps()
    for step in [
        ("v1", "v1-coalesced"),
        ("v2", "v3"),
        ("v3", "v4"),
        ("v4", "v5"),
        ("v5", "v6-vectorized"),
        ("v6-vectorized", "v7-warptile"),
        ("v7-warptile", "v8-async"),
        ("v8-async", "v9-regdb"),
        ("wmma-addmm", "wmma-async"),
    ]:
        assert step in steps
    assert not [s for s in steps if s[1].startswith("tiled-")]


def test_the_time_split_adds_up_on_real_data(steps: tuple) -> None:
    _, explained = steps
    for (base, cand), expl in explained.items():
        assert expl.terms, f"{base} -> {cand}: {expl.warnings}"
        total = math.log(expl.time_after_ns / expl.time_before_ns)
        assert sum(expl.terms.values()) == pytest.approx(total)
        # The identity holds up to ncu's rounding: the per-reason ratios add up to its warp cycles per issue.
        assert abs(expl.terms["residual"]) < 0.03, f"{base} -> {cand}: residual {expl.terms['residual']:.3f}"


def test_each_step_is_explained_by_what_it_changed(steps: tuple) -> None:
    n, ex = steps
    # v1-coalesced: threadIdx.x walks columns, so warps read contiguous bytes.
    assert top_keys(ex[("v1", "v1-coalesced")])[:2] == ["global_excess_sectors", "stall:lg_throttle"]
    # v3: register blocking, far fewer shared loads and instructions per FMA.
    assert "stall:mio_throttle" in top_keys(ex[("v2", "v3")])
    assert {"ffma_per_shared_load", "instructions"} & set(top_keys(ex[("v2", "v3")]))
    # v4: the transposed A tile cuts the shared-load bank conflicts.
    v4 = ex[("v3", "v4")]
    assert top_keys(v4)[0] == "shared_ld_n_way" and "stall:short_scoreboard" in top_keys(v4)
    assert v4.top(1)[0].before == pytest.approx(17.0, abs=0.1) and v4.top(1)[0].after == pytest.approx(5.0, abs=0.1)
    # v5: double buffering hides the global loads behind the FMAs.
    assert top_keys(ex[("v4", "v5")])[0] == "stall:long_scoreboard"
    # v6: 16-byte accesses, conflict-free transposing stores.
    assert "shared_st_n_way" in top_keys(ex[("v5", "v6-vectorized")])
    # v7: warp tiling makes the LDS.128 reads conflict-free.
    assert top_keys(ex[("v6-vectorized", "v7-warptile")])[0] == "shared_ld_n_way"
    # v8: cp.async replaces the register-staged loads.
    assert set(top_keys(ex[("v7-warptile", "v8-async")], 2)) == {"global_loads", "ldgsts"}
    # wmma-async: cp.async pipeline and conflict-free ldmatrix.
    assert {"ldgsts", "stall:long_scoreboard", "stall:short_scoreboard"} & set(
        top_keys(ex[("wmma-addmm", "wmma-async")])
    )
    v9 = ex[("v8-async", "v9-regdb")]
    if n == 1024:
        # 128x256 tiles leave 32 blocks for 132 SMs: slower, and the split says why.
        assert v9.time_after_ns > v9.time_before_ns and top_keys(v9)[0] == E.UTILIZATION
    else:
        assert v9.time_after_ns < v9.time_before_ns


def test_summary_lines_are_derived_from_the_data(steps: tuple) -> None:
    _, ex = steps
    line = ex[("v3", "v4")].summary
    assert line.startswith("v3 -> v4: time -") and "shared-load wavefronts per request 17.0 -> 5.0" in line
    for expl in ex.values():
        assert expl.summary.count(";") == 3  # time, then the top three
        assert all(i.sentence and i.short for i in expl.items)


def test_references_sources_and_json(steps: tuple) -> None:
    n, _ = steps
    report = L.load_report(capture(f"ncu_why_{n}_raw.csv"))
    page = SL.load_source_page(capture(f"source_why_{n}_cuda_sass.csv.gz"))
    find = X.find_launch
    expl = X.explain(
        find(report.launches, "v4"),
        find(report.launches, "v5"),
        reference_before=find(report.launches, "cublas"),
        reference_after=find(report.launches, "cublas"),
        source_before=page.select("v4")[0],
        source_after=page.select("v5")[0],
    )
    assert 0 < expl.pct_of_reference_before < expl.pct_of_reference_after < 100
    assert expl.tflops_after == pytest.approx(2 * n**3 / expl.time_after_ns / 1e3)
    assert expl.adds and "two shared-memory buffers" in expl.adds.lower()
    assert expl.hot_lines_after[0]["source"].strip().startswith("sum[xx][yy] +=")
    data = json.loads(json.dumps(expl.to_dict()))
    assert data["items"][0]["key"] == expl.items[0].key and data["stalls_after"]["reasons"]


def test_quick_set_launches_are_ranked_without_a_time_split() -> None:
    report = L.load_report(ROOT / "tests" / "fixtures" / "ncu" / "raw.csv")
    kernels = {x.identity.kernel_id: x for x in report.launches}
    expl = X.explain(kernels["v3"], kernels["v4"])
    assert expl.terms == {} and any("no time split" in w for w in expl.warnings)
    assert top_keys(expl)[0] == "shared_ld_n_way"


def test_a_capture_without_the_addmm_reference_is_compared_with_the_library_kernel_it_has() -> None:
    """The H100 capture of 2026-11-22 predates cublas-addmm: its AddMM kernels are compared with cuBLAS's A*B alone
    (cublas-hgemm, 184.288 us at 4096^3 against wmma-addmm's 809.408 and wmma-async's 430.144), named as such."""
    report = L.load_report(capture("ncu_why_4096_raw.csv"))
    base, cand = X.find_launch(report.launches, "wmma-addmm"), X.find_launch(report.launches, "wmma-async")
    ref = X.reference_launch(report.launches, base)
    assert ref is not None and ref.identity.kernel_id == "cublas-hgemm"
    assert X.reference_launch(report.launches, X.find_launch(report.launches, "v4")).identity.kernel_id == "cublas"
    expl = X.explain(base, cand, ref, X.reference_launch(report.launches, cand))
    assert expl.reference_name == "cuBLAS HGEMM, A*B only"
    assert expl.pct_of_reference_before == pytest.approx(100 * 184.288 / 809.408)
    assert expl.pct_of_reference_after == pytest.approx(100 * 184.288 / 430.144)


def test_a_split_k_step_is_its_main_kernel_not_the_launch_that_zeroes_c() -> None:
    """The H100 capture of v9-regdb and v9-splitk at 1024x1024x8191 (2026-11-27): v9-splitk's NVTX range holds
    splitk_zero_c (3.5 us) before sgemm_regdb_splitk (382.0 us); the step is the second."""
    path = ROOT / "results" / "h100-2026-11-27" / "why" / "ncu_why_splitk_1024x1024x8191_raw.csv"
    report = L.load_report(path)
    assert [x.function for x in report.launches] == ["sgemm_regdb", "splitk_zero_c", "sgemm_regdb_splitk"]
    base, cand = X.find_launch(report.launches, "v9-regdb"), X.find_launch(report.launches, "v9-splitk")
    assert cand.function == "sgemm_regdb_splitk"
    assert [x.function for x in X.kernel_launches(report.launches, "v9-splitk", 1024)] == [
        "sgemm_regdb_splitk",
        "splitk_zero_c",
    ]
    assert X.summary_line(X.explain(base, cand)).startswith(
        "v9-regdb -> v9-splitk: time -50% (771.6 -> 382.0 us); waves per SM 0.24 -> 0.97"
    )
    done = subprocess.run(
        [sys.executable, "-m", "profiling", "explain", "v9-regdb", "v9-splitk", "--data", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0 and "time -50% (771.6 -> 382.0 us)" in done.stdout, done.stderr


def test_sgemm_auto_and_cublas_split_k_steps_are_their_gemm_launches() -> None:
    """The H200 capture of cuBLAS and sgemm-auto at the grid's misses (session 27): at 333x127x4096 cuBLAS runs its
    GEMM (15.0 us) then splitKreduce_kernel (5.2 us), sgemm-auto splitk_zero_c (2.0 us) then the configuration it
    chose, sgemm_regdb_splitk_narrow (21.0 us), which is not its catalog entry. The step compares the two GEMMs;
    taking each range's first launch read "time -87% (15.0 -> 2.0 us)"."""
    path = ROOT / "results" / "h200-2026-11-29" / "why_misses" / "ncu_why_misses_raw.csv"
    report = L.load_report(path)
    at_333 = [x for x in report.launches if x.identity.m == 333]
    assert [x.function for x in at_333] == [
        "Kernel2",
        "splitKreduce_kernel",
        "splitk_zero_c",
        "sgemm_regdb_splitk_narrow",
    ]
    assert [x.function for x in X.kernel_launches(report.launches, "sgemm-auto", 333)] == [
        "sgemm_regdb_splitk_narrow",
        "splitk_zero_c",
    ]
    assert [X.is_side_launch(x) for x in at_333] == [False, False, True, False]
    # cuBLAS's GEMM before its reduction by time, not by report order.
    for order in (report.launches, list(reversed(report.launches))):
        assert [x.function for x in X.kernel_launches(order, "cublas", 333)] == ["Kernel2", "splitKreduce_kernel"]
    base, cand = X.find_launch(report.launches, "cublas", 333), X.find_launch(report.launches, "sgemm-auto", 333)
    assert X.summary_line(X.explain(base, cand)).startswith("cublas -> sgemm-auto: time +40% (15.0 -> 21.0 us)")
    # M = 4096 holds two shapes: 4096x333x333 first, as the report has it, then at 4096x64x4096 cuBLAS's range holds
    # two launches of one function, the GEMM (56.3 us) and its reduction (8.1 us).
    cublas_4096 = X.kernel_launches(report.launches, "cublas", 4096)
    assert [(x.identity.size, round(x.value(M.TIME) / 1000, 1)) for x in cublas_4096] == [
        ("4096x333x333", 29.9),
        ("4096x64x4096", 56.3),
        ("4096x64x4096", 8.1),
    ]


def test_the_cluster_split_k_step_is_slower_for_its_idle_schedulers_and_cluster_barriers() -> None:
    """The H100 capture of v9-splitk and v9-clusterk at 1024x1024x8191 (full set, each GPU-tuned configuration): one
    launch instead of two, but 31 % slower, and the two reasons ranked first are the schedulers idle 16 points more of
    the time and the warps waiting at barriers (the cluster's)."""
    path = ROOT / "results" / "h100-2026-11-27" / "why" / "ncu_why_clusterk_1024x1024x8191_raw.csv"
    report = L.load_report(path)
    assert [x.function for x in report.launches] == ["splitk_zero_c", "sgemm_regdb_splitk", "sgemm_regdb_clusterk"]
    base, cand = X.find_launch(report.launches, "v9-splitk"), X.find_launch(report.launches, "v9-clusterk")
    expl = X.explain(base, cand)
    assert X.summary_line(expl).startswith(
        "v9-splitk -> v9-clusterk: time +31% (384.4 -> 505.5 us); SMs busy 96% -> 80%"
    )
    assert [item.key for item in expl.items[:3]] == ["sm_utilization", "stall:dispatch_stall", "stall:barrier"]


def test_registers_rank_only_where_they_change_how_many_warps_fit() -> None:
    """Registers act on latency stalls through the warps an SM holds. The H200 quick-set capture at 2048^3 (session
    26): cuBLAS's CUTLASS SIMT kernel at 202 registers against v9-regdb's tuned tile at 255, one 256-thread block per
    SM either way (theoretical occupancy 12.5 % in both), so registers are not ranked; the H100 step v9-regdb ->
    v9-splitk (128 -> 255 registers, 25 -> 12.5 %) still ranks them."""
    quick = L.load_report(ROOT / "results" / "h200-2026-11-29" / "sgemm_order5" / "raw_2048_4096.csv.gz")
    cublas = X.find_launch(quick.launches, "cublas", 2048)
    ours = X.find_launch(quick.launches, "v9-regdb-128x256x16-w64x64-t8x16-s3-o3", 2048)
    assert (cublas.value(M.REGISTERS), ours.value(M.REGISTERS)) == (202, 255)
    assert [R.THEORETICAL_OCC.base_value(x) for x in (cublas, ours)] == [12.5, 12.5]
    expl = X.explain(cublas, ours)
    assert top_keys(expl) == ["stall:no_instruction", "instructions", "stall:short_scoreboard"]
    assert "registers" not in [i.key for i in expl.items]
    assert X.summary_line(expl) == (
        "cublas -> v9-regdb-128x256x16-w64x64-t8x16-s3-o3: time +5% (345.4 -> 363.4 us); no_instruction stalls "
        "+580%; instructions -4%; short_scoreboard stalls -62%"
    )
    splitk = L.load_report(ROOT / "results" / "h100-2026-11-27" / "why" / "ncu_why_splitk_1024x1024x8191_raw.csv")
    base, cand = X.find_launch(splitk.launches, "v9-regdb"), X.find_launch(splitk.launches, "v9-splitk")
    assert [R.THEORETICAL_OCC.base_value(x) for x in (base, cand)] == [25.0, 12.5]
    assert [i.key for i in X.explain(base, cand).top(8)].index("registers") == 4


def test_sgemm_against_cublas_is_first_told_by_the_a_copies_excess_sectors() -> None:
    """results/h200-2026-11-29/why_sgemm: ncu's full set of cuBLAS and v9-regdb's tuned tile at 2048^3 (cuBLAS runs
    CUTLASS's SIMT kernel there). Ranked first: the 4-k A copies' excess sectors, which cuBLAS's copies do not have
    (the narrow kernels now copy A as it does); the 16-byte tile keeps its copies, which at 255 registers spill
    otherwise."""
    path = ROOT / "results" / "h200-2026-11-29" / "why_sgemm" / "ncu_why_sgemm_2048_raw.csv"
    report = L.load_report(path)
    cublas = X.find_launch(report.launches, "cublas")
    ours = X.find_launch(report.launches, "v9-regdb-128x256x16-w64x64-t8x16-s3-o3")
    assert cublas.name == "void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>(T1::Params)"
    expl = X.explain(cublas, ours)
    assert X.summary_line(expl) == (
        "cublas -> v9-regdb-128x256x16-w64x64-t8x16-s3-o3: time +5% (342.8 -> 361.3 us); excess global sectors "
        "0 -> 12.58M; sectors per global load request 4 -> 16; cp.async copies (LDGSTS) 3.18M -> 1.60M"
    )
    assert "registers" not in [i.key for i in expl.items]


def test_counter_formatting() -> None:
    assert X.fmt(17.0, "wavefronts") == "17.0" and X.fmt(318.2e6, "bytes") == "318.2 MB"
    assert X.change_text(0, 5) == "new" and X.change_text(5, 0) == "gone" and X.change_text(1, 20) == "20x"
    assert X.change_text(100, 65) == "-35%"


# The top three of every ladder step, in order, on each H100 capture. A counter whose stall reasons an earlier one
# already stands for (n-way and wavefronts of the same loads) counts half: without that, v3 -> v4 would list
# shared wavefronts before short_scoreboard, and other steps would repeat one story three times.
TOP_THREE = {
    1024: {
        ("v1", "v1-coalesced"): ["global_excess_sectors", "stall:lg_throttle", "global_sectors_per_request"],
        ("v1", "v2"): ["global_loads", "stall:lg_throttle", "shared_wavefronts"],
        ("v2", "v3"): ["instructions", "stall:mio_throttle", "sm_utilization"],
        ("v3", "v4"): ["shared_ld_n_way", "stall:short_scoreboard", "shared_wavefronts"],
        ("v4", "v5"): ["stall:long_scoreboard", "stall:short_scoreboard", "stall:not_selected"],
        ("v5", "v6-vectorized"): ["global_excess_sectors", "shared_st_n_way", "global_loads"],
        ("v6-vectorized", "v7-warptile"): ["shared_ld_n_way", "stall:short_scoreboard", "shared_wavefronts"],
        ("v7-warptile", "v8-async"): ["global_loads", "ldgsts", "shared_wavefronts"],
        ("wmma-addmm", "wmma-async"): ["ldgsts", "sm_utilization", "stall:long_scoreboard"],
        ("v8-async", "v9-regdb"): ["sm_utilization", "stall:short_scoreboard", "instructions"],
    },
    4096: {
        ("v1", "v1-coalesced"): ["global_excess_sectors", "stall:lg_throttle", "global_sectors_per_request"],
        ("v1", "v2"): ["global_loads", "stall:lg_throttle", "shared_wavefronts"],
        ("v2", "v3"): ["stall:mio_throttle", "ffma_per_shared_load", "instructions"],
        ("v3", "v4"): ["shared_ld_n_way", "stall:short_scoreboard", "shared_wavefronts"],
        ("v4", "v5"): ["stall:long_scoreboard", "stall:short_scoreboard", "stall:mio_throttle"],
        ("v5", "v6-vectorized"): ["shared_st_n_way", "stall:short_scoreboard", "stall:mio_throttle"],
        ("v6-vectorized", "v7-warptile"): ["shared_ld_n_way", "stall:short_scoreboard", "stall:not_selected"],
        ("v7-warptile", "v8-async"): ["global_loads", "ldgsts", "shared_busy_per_gflop"],
        ("wmma-addmm", "wmma-async"): ["ldgsts", "stall:short_scoreboard", "shared_wavefronts"],
        ("v8-async", "v9-regdb"): ["stall:selected", "registers", "instructions"],
    },
}


def test_the_top_three_of_every_ladder_step(steps: tuple) -> None:
    size, found = steps
    assert {step: top_keys(expl) for step, expl in found.items()} == TOP_THREE[size]


H200_CAPTURES = ROOT / "results" / "h200-2026-11-29"


@pytest.mark.parametrize(
    "folder,base,cand,clocks,line",
    [
        # The step that wins on the clock: 0.7 % more cycles at a 1.2 % higher clock.
        (
            "why_cluster",
            "wgmma-streamk",
            "wgmma-streamk-cluster",
            (1.479736, 1.497557),
            "wgmma-streamk -> wgmma-streamk-cluster: time -1% (1,503.3 -> 1,495.5 us); "
            "cycles +0.7% at a +1.2% SM clock (1.480 -> 1.498 GHz); ",
        ),
        # The new step against cuBLAS: 3.9 % fewer cycles at a 3.0 % lower clock (wgmma-streamk: 4.1 % at 5.1 %).
        (
            "why_cluster_cublas",
            "cublas-addmm",
            "wgmma-streamk-cluster",
            (1.529060, 1.483837),
            "cublas-addmm -> wgmma-streamk-cluster: time -1% (1,514.1 -> 1,498.7 us); "
            "cycles -3.9% at a -3.0% SM clock (1.529 -> 1.484 GHz); ",
        ),
        # cuBLAS's AddMM against ours at the power limit: ours in 4.1 % fewer cycles, at a 5.1 % lower clock.
        (
            "why8192",
            "cublas-addmm",
            "wgmma-streamk",
            (1.521929, 1.443597),
            "cublas-addmm -> wgmma-streamk: time +1% (1,519.1 -> 1,535.1 us); "
            "cycles -4.1% at a -5.1% SM clock (1.522 -> 1.444 GHz); ",
        ),
    ],
)
def test_a_step_that_moved_the_clock_says_so_first(folder, base, cand, clocks, line) -> None:
    """Real H200 captures at 8192^3 with clocks free: the clock over a launch (elapsed cycles per ns) is ncu's own
    SM frequency (sm__cycles_elapsed.avg.per_second, in the same CSV), and the summary splits time into cycles
    and clock where the clock moved at least a third as much as the time."""
    raw = next((H200_CAPTURES / folder).glob("ncu_why_*_raw.csv"))
    launches = L.load_report(raw).launches
    expl = X.explain(X.find_launch(launches, base), X.find_launch(launches, cand))
    assert (expl.clock_before_ghz, expl.clock_after_ghz) == pytest.approx(clocks, abs=2e-3)
    assert expl.summary.startswith(line), expl.summary
    (clock,) = [i for i in expl.items if i.key == "clock"]
    assert (clock.unit, round(clock.before, 3), round(clock.after, 3)) == (
        "GHz",
        round(clocks[0], 3),
        round(clocks[1], 3),
    )
    assert clock.short == f"SM clock {clocks[0]:.2f} -> {clocks[1]:.2f} GHz"
    assert X.fmt(clock.before, clock.unit) == f"{clocks[0]:.3f} GHz"


def test_a_clock_that_moved_little_against_the_time_stays_out_of_the_summary() -> None:
    """H100 1024 capture, v3 -> v4: 47 % faster at a 0.7 % lower clock; the cycles tell that step."""
    report = L.load_report(capture("ncu_why_1024_raw.csv"))
    expl = X.explain(X.find_launch(report.launches, "v3"), X.find_launch(report.launches, "v4"))
    assert expl.clock_after_ghz / expl.clock_before_ghz == pytest.approx(0.993, abs=1e-3)
    assert "SM clock" not in expl.summary
