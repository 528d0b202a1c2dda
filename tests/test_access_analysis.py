"""Access costs (profiling/analysis/access.py) on hand-made lane patterns, and the indexing models' whole-launch
predictions against the real ncu captures: the hardware counters of the catalog at 1024 (H100 full set, H100 and
H200 quick sets) and at awkward sizes (1000^3, 997x1003x999, 1008^3), and, instruction form by instruction form,
the source pages of both H100 captures (CPU only)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from kernels.indexing import MODELS, model_for
from kernels.indexing_base import LANES, global_access, shared_access
from profiling.analysis.access import global_cost, predict_launch, shared_cost
from profiling.analysis.access_check import (
    Comparison,
    compare_report,
    compare_sass,
    launch_model,
    launch_shape,
    sass_form,
)
from profiling.nsight.load import load_report
from profiling.nsight.source import short_name
from profiling.nsight.source_load import load_source_page
from profiling.shape import Shape

ROOT = Path(__file__).resolve().parent.parent
WHY_1024 = ROOT / "results/h100-2026-11-22/ncu_why_1024_raw.csv"
SASS_1024 = ROOT / "results/h100-2026-11-22/source_why_1024_sass.csv.gz"
AWKWARD_RAW = ROOT / "results/h100-2026-11-22/access/ncu_access_awkward_raw.csv"
AWKWARD_SASS = ROOT / "results/h100-2026-11-22/access/source_access_awkward_sass.csv.gz"
# v9-regdb alone at the same sizes on the H200 (its tuning record runs 128x128x16 there): at 997x1003x999 its N % 4 != 0
# twin, sgemm_regdb_narrow.
NARROW_RAW = ROOT / "results/h200-2026-11-27/narrow/access/ncu_access_awkward_raw.csv"
NARROW_SASS = ROOT / "results/h200-2026-11-27/narrow/access/source_access_awkward_sass.csv.gz"
QUICK_1024 = [
    ROOT / "results/h100-2026-11-22/ncu_ladder_1024_raw.csv",
    ROOT / "results/h200-2026-11-22/ncu_ladder_1024_raw.csv",
]
LANE = np.arange(LANES)

# Where measurement and model part: the TILE_WIDTH kernels' shared stores. The L1 counts 6-17 % more store
# wavefronts than their STS need; the excess equals its store bank-conflict counter, while ncu's per-instruction
# source counters match the model exactly: conflict cycles the stores meet from other warps' traffic, a matter of
# timing, not of their own addresses (test_the_store_excess_is_not_a_rule_of_the_addresses). (Also not predicted,
# so not compared: the shared writes of cp.async, access.py says why.)
FINDINGS = {
    (kid, quantity)
    for kid in ("tiled-8", "tiled-16", "tiled-32")
    for quantity in ("shared_st_wavefronts_per_instruction", "shared_st_conflicts_per_instruction")
}


def lds(addr, width: int = 4, sass: str | None = None, op: str = "ld", active=True):
    sass = sass or {4: "LDS", 8: "LDS.64", 16: "LDS.128"}[width]
    return shared_access("t", sass, op, "s", 0, 0, np.asarray(addr), width, 4, active)


def ldg(addr_elems, width: int = 4, active=True):
    return global_access("t", "LDG", "ld", "A", 0, np.asarray(addr_elems), 0, 4, width, active)


@pytest.mark.parametrize(
    "addr,width,wavefronts,ideal,degree",
    [
        (LANE * 4, 4, 1, 1, 1),  # consecutive words
        (np.zeros(LANES, int), 4, 1, 1, 1),  # broadcast
        (LANE * 128, 4, 32, 1, 32),  # one bank, 32 words
        (LANE * 8, 4, 2, 1, 2),  # stride 2 words: 2-way
        (LANE * 16, 16, 4, 4, 1),  # 512 contiguous bytes: a quarter-warp per wavefront
        (np.zeros(LANES, int), 16, 2, 2, 1),  # one address: lane pairs, half-warps
        (LANE * 128, 16, 32, 4, 8),  # v2's aTile rows: every lane in the same 4 banks
        ((LANE % 16) * 32, 16, 8, 4, 2),  # v6's B reads: 2-way in each quarter
        ((LANE // 2) * 16, 16, 2, 2, 1),  # pairs: 16 lanes per phase
        ((LANE % 4) * 16, 16, 4, 4, 1),  # v7's B reads: no pairs, 4 quarters of 64 bytes
        (LANE * 8, 8, 2, 2, 1),  # 256 contiguous bytes: half-warps
        ((LANE // 4) * 512 + (LANE % 4) * 8, 8, 8, 2, 4),  # wmma's accumulator stores (as a load)
    ],
)
def test_shared_wavefronts_follow_the_phase_and_bank_rules(addr, width, wavefronts, ideal, degree) -> None:
    cost = shared_cost(lds(addr, width))
    assert (cost.wavefronts, cost.ideal, cost.degree) == (wavefronts, ideal, degree)


def test_stores_never_pair_and_inactive_lanes_cost_nothing() -> None:
    assert shared_cost(lds(np.zeros(LANES, int), 16, "STS.128", "st")).wavefronts == 4
    assert shared_cost(lds(LANE * 128, 4, active=False)).wavefronts == 0
    half = LANE < 16
    assert shared_cost(lds(LANE * 16, 16, active=half)).wavefronts == 2  # two quarter-warps with lanes


@pytest.mark.parametrize(
    "rows_bytes,wavefronts",
    [(LANE % 8 * 160, 8), (LANE % 8 * 128, 32), (LANE % 8 * 128 + (LANE % 8) * 16, 4)],
    ids=["skew 16 halves: 2-way", "no skew: 8-way", "xor swizzle: free"],
)
def test_ldmatrix_serves_one_8x8_matrix_per_phase(rows_bytes, wavefronts) -> None:
    addr = rows_bytes + (LANE // 8) * 4096
    assert shared_cost(lds(addr, 16, "LDSM.16.M88.4")).wavefronts == wavefronts


@pytest.mark.parametrize(
    "elems,width,sectors,lines",
    [
        (LANE, 4, 4, 1),
        (LANE + 1, 4, 5, 2),
        (LANE * 1024, 4, 32, 32),
        (LANE * 4, 16, 16, 4),
        (np.zeros(32, int), 4, 1, 1),
    ],
    ids=["coalesced", "misaligned", "row stride", "float4", "broadcast"],
)
def test_global_sectors_and_lines(elems, width, sectors, lines) -> None:
    cost = global_cost(ldg(elems, width))
    assert (cost.requests, cost.sectors, cost.lines) == (1, sectors, lines)
    assert global_cost(ldg(elems, width, active=False)).requests == 0


@pytest.fixture(scope="module")
def why_rows() -> list[Comparison]:
    return compare_report(load_report(WHY_1024))


def _check(rows: list[Comparison], where: str) -> None:
    for row in rows:
        if (row.kernel, row.quantity) in FINDINGS:
            continue
        assert row.within_tolerance, (
            f"{where}: {row.kernel} {row.quantity} predicted {row.predicted} measured {row.measured}"
        )


def test_predictions_match_the_h100_full_capture_of_the_catalog(why_rows: list[Comparison]) -> None:
    assert {r.kernel for r in why_rows} == set(MODELS)
    _check(why_rows, "H100 full set")
    by = {(r.kernel, r.quantity): r for r in why_rows}
    for kid in MODELS:  # every kernel is checked on the quantities its instructions have
        assert (kid, "global_ld_sectors_per_request") in by and (kid, "global_sectors_source_counters") in by
    for kid in ("v2", "tiled-8", "v3", "v4", "v5", "v6-vectorized", "v7-warptile", "wmma-addmm"):
        assert (kid, "shared_st_wavefronts_per_instruction") in by
    assert by[("v1", "global_ld_sectors_per_request")].predicted == 16.5  # A: 32 sectors, B: a broadcast
    assert by[("v1-coalesced", "global_ld_sectors_per_request")].predicted == 2.5
    assert by[("v3", "shared_ld_wavefronts_per_instruction")].predicted == 17.0
    assert by[("v4", "shared_ld_wavefronts_per_instruction")].predicted == 5.0


def test_the_findings_are_what_the_comment_says(why_rows: list[Comparison]) -> None:
    by = {(r.kernel, r.quantity): r for r in why_rows}
    for kid in ("tiled-8", "tiled-16", "tiled-32"):
        hardware = by[(kid, "shared_st_wavefronts_per_instruction")]
        assert hardware.predicted == 1.0 and 5 < hardware.diff_pct < 20
        assert by[(kid, "shared_wavefronts_source_counters")].diff_pct == 0.0
    for kid in ("v8-async", "v9-regdb", "wmma-async"):  # cp.async writes: the source-counter total would hold them
        assert (kid, "shared_wavefronts_source_counters") not in by
        assert (kid, "shared_ld_wavefronts_per_instruction") in by
    assert not any("ldgsts" in r.quantity for r in why_rows)


def test_predictions_match_the_awkward_size_capture() -> None:
    rows = compare_report(load_report(AWKWARD_RAW))
    assert {r.kernel for r in rows} == set(MODELS)
    _check(rows, "H100 awkward sizes")
    # 28 launches: the 13 FP32 kernels at two sizes, the 2 tensor-core kernels at one
    assert sum(1 for r in rows if r.quantity == "global_ld_sectors_per_request") == 2 * len(MODELS) - 2


def test_the_narrow_twin_reads_b_in_the_sectors_the_model_predicts() -> None:
    """On the H200 v9-regdb ran its tuned 128x128x16 configuration: its own kernel at 1000^3, its narrow twin at
    997x1003x999. Every counter matches the model of what ran; the twin's one-column copies of B need 12.24 global
    sectors per load request where the configuration's own 4-byte path would need 17.97."""
    report = load_report(NARROW_RAW)
    assert [short_name(launch.name) for launch in report.launches] == [
        "sgemm_regdb<128,128,16,64,32,8,8,3,256,2>",
        "sgemm_regdb_narrow<128,128,16,64,32,8,8,3,256,2,0>",
    ]
    rows = compare_report(report)
    assert len(rows) == 16 and all(r.within_tolerance for r in rows)
    sectors = [r for r in rows if r.quantity == "global_ld_sectors_per_request"]
    assert [round(r.measured, 2) for r in sectors] == [15.82, 12.24]
    assert [round(r.predicted, 2) for r in sectors] == [15.82, 12.24]
    twin = launch_model("v9-regdb", report.launches[1].name)
    own = type(twin)(replace(twin.spec, narrow_entry=None))
    awkward = Shape(997, 1003, 999)
    assert round(predict_launch(own, awkward).ratios()["global_ld_sectors_per_request"], 2) == 17.97
    page = load_source_page(NARROW_SASS)
    for kernel, shape in zip(page.kernels, [Shape(1000, 1000, 1000), awkward], strict=True):
        model = launch_model("v9-regdb", kernel.name)
        found = compare_sass(kernel.instructions.values(), predict_launch(model, shape))
        assert len(found) >= 7 and all(r.within_tolerance for r in found), kernel.name


@pytest.mark.parametrize("path", QUICK_1024, ids=["h100", "h200"])
def test_predictions_match_the_quick_set_ladder_captures(path: Path) -> None:
    rows = compare_report(load_report(path))
    assert {r.kernel for r in rows} == {"v2", "tiled-8", "tiled-16", "tiled-32", "v3", "v4", "v5"}
    assert all(r.quantity.startswith("shared") for r in rows)  # the quick set has no global sector counters
    _check(rows, path.name)


def test_sass_forms() -> None:
    assert sass_form("@!P1  LDG.E.128.CONSTANT R60, desc[UR8][R2.64]") == "LDG.E.128"
    assert sass_form("LDGSTS.E.LTC128B desc[UR12][R80.64], P0, [R76]") == "LDGSTS.E"
    assert sass_form("      LDSM.16.MT88.4 R4, [R2]") == "LDSM.16.MT88.4"


@pytest.mark.parametrize(
    "path,fp32_shapes,half_shapes",
    [
        (SASS_1024, [Shape(1024, 1024, 1024)], [Shape(1024, 1024, 1024)]),
        (AWKWARD_SASS, [Shape(1000, 1000, 1000), Shape(997, 1003, 999)], [Shape(1008, 1008, 1008)]),
    ],
    ids=["1024", "awkward"],
)
def test_every_instruction_form_matches_the_source_page(path: Path, fp32_shapes: list, half_shapes: list) -> None:
    launches: dict[str, list] = {}
    for kernel in load_source_page(path).kernels:  # one section per launch, in launch order
        launches.setdefault(kernel.catalog_id, []).append(kernel)
    for kid in MODELS:
        shapes = half_shapes if model_for(kid).spec.dtype == "float16" else fp32_shapes
        assert len(launches[kid]) == len(shapes)
        for kernel, shape in zip(launches[kid], shapes, strict=True):
            rows = compare_sass(kernel.instructions.values(), predict_launch(launch_model(kid, kernel.name), shape))
            assert len(rows) >= 4
            for row in rows:
                assert row.within_tolerance, (
                    f"{kid} {shape.label}: {row.quantity} predicted {row.predicted} measured {row.measured}"
                )


def _store_excess_per_sts(path: Path, k: int | None = None) -> dict[str, tuple[float, float]]:
    """Per kernel: (predicted store wavefronts per STS, measured minus predicted per STS)."""
    out = {}
    for launch in load_report(path).launches:
        found = launch_shape(launch, k)
        executed = launch.value("smsp__sass_inst_executed_op_shared_st.sum")
        if found is None or found[0] not in MODELS or not executed:
            continue
        predicted = predict_launch(model_for(found[0]), found[1]).totals["shared_st"].wavefronts
        measured = launch.value("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")
        out[found[0]] = (predicted / executed, (measured - predicted) / executed)
    return out


def test_the_store_excess_is_not_a_rule_of_the_addresses() -> None:
    """The finding's evidence (access_table.TILED_STORE_GAP): the same STS addresses, at 1024 and at 4096, cost
    the same in the model and in ncu's source counters, but a different excess in the L1's counters; and at 1024
    the excess is zero where global loads run a tile ahead of the shared stores."""
    at_1024 = _store_excess_per_sts(WHY_1024)
    at_4096 = _store_excess_per_sts(ROOT / "results/h100-2026-11-22/ncu_why_4096_raw.csv", 4096)
    for kid in ("tiled-32", "v4", "v5"):
        assert at_1024[kid][0] == at_4096[kid][0]  # the model: a function of the per-warp addresses only
        assert abs(at_1024[kid][1] - at_4096[kid][1]) > 0.03
    for kid in ("v2", "tiled-8", "tiled-16", "tiled-32", "v3", "v4"):  # stores right after their loads
        assert at_1024[kid][1] > 0.05
    for kid in ("v5", "v6-vectorized", "v7-warptile"):  # loads a tile ahead
        assert at_1024[kid][1] < 0.001
