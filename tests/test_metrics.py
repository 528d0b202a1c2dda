"""Canonical metric names, unit conversion and derived metrics (pure functions, no ncu needed)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from profiling.nsight import metrics as M
from profiling.nsight import units as U


def test_quick_metrics_are_unique_wellformed_and_cover_the_issue() -> None:
    assert len(M.QUICK_METRICS) == len(set(M.QUICK_METRICS))
    assert all(M.looks_like_metric_name(n) for n in M.QUICK_METRICS)
    for needed in (
        "gpu__time_duration.sum",
        "launch__registers_per_thread",
        "launch__occupancy_limit_shared_mem",
        "sm__maximum_warps_per_active_cycle_pct",
        "sm__warps_active.avg.pct_of_peak_sustained_active",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
        "smsp__sass_inst_executed_op_shared_ld.sum",
        "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
        "sm__inst_executed_pipe_tensor.sum",
        "dram__bytes.sum.peak_sustained",
        "l1tex__cycles_elapsed.avg.per_second",
    ):
        assert needed in M.QUICK_METRICS
    # docs/measured-facts.md: this name does not exist and aborts the whole ncu run (exit code 9).
    assert "sm__maxwarps_per_active_cycle_pct" not in M.QUICK_METRICS


def test_importing_metrics_does_not_import_pandas() -> None:
    code = "import sys, profiling.nsight.metrics; sys.exit(1 if 'pandas' in sys.modules else 0)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


@pytest.mark.parametrize(
    ("unit", "factor", "base"),
    [
        ("nsecond", 1.0, "nsecond"),
        ("usecond", 1e3, "nsecond"),
        ("us", 1e3, "nsecond"),
        ("ms", 1e6, "nsecond"),
        ("msecond", 1e6, "nsecond"),
        ("byte", 1.0, "byte"),
        ("Kbyte", 1e3, "byte"),
        ("Mbyte", 1e6, "byte"),
        ("Gbyte", 1e9, "byte"),
        ("Gbyte/second", 1e9, "byte/second"),
        ("Tbyte/s", 1e12, "byte/second"),
        ("byte/nsecond", 1e9, "byte/second"),
        ("cycle/usecond", 1e6, "cycle/second"),
        ("cycle/nsecond", 1e9, "cycle/second"),
        ("Ghz", 1e9, "hz"),
        ("Mcycle", 1e6, "cycle"),
        ("%", 1.0, "%"),
        ("", 1.0, ""),
        ("register/thread", 1.0, "register/thread"),
        ("inst/cycle", 1.0, "inst/cycle"),
        ("block", 1.0, "block"),
    ],
)
def test_to_base(unit: str, factor: float, base: str) -> None:
    got_factor, got_base = U.to_base(unit)
    assert got_base == base
    assert got_factor == factor


@pytest.mark.parametrize(
    ("text", "value"),
    [("4,420,544", 4420544.0), ("1.5", 1.5), (" 12 ", 12.0), ("n/a", None), ("", None), ("(16, 1, 1)", None)],
)
def test_parse_number(text: str, value: float | None) -> None:
    assert U.parse_number(text) == value


def test_labels_map_to_canonical_names() -> None:
    assert M.canonical_name("Duration", "ns") == "gpu__time_duration.sum"
    assert M.canonical_name("Registers Per Thread") == "launch__registers_per_thread"
    assert M.canonical_name("Achieved Occupancy", "%") == "sm__warps_active.avg.pct_of_peak_sustained_active"
    assert M.canonical_name("Theoretical Occupancy", "%") == "sm__maximum_warps_per_active_cycle_pct"
    assert M.canonical_name("Block Limit Registers", "block") == "launch__occupancy_limit_registers"
    # Same label, different metric depending on the unit.
    assert M.canonical_name("Memory Throughput", "%").endswith("pct_of_peak_sustained_elapsed")
    assert M.canonical_name("Memory Throughput", "byte/second") == "dram__bytes.sum.per_second"
    assert M.canonical_name("dram__bytes.sum") == "dram__bytes.sum"
    assert M.canonical_name("Something Unknown") is None


def test_derive_bank_conflicts_flops_intensity_occupancy() -> None:
    n = 1024
    values = {
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": 3_000.0,
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 4_000.0,
        "smsp__sass_inst_executed_op_shared_ld.sum": 1_000.0,
        M.FFMA: float(n**3),
        M.FADD: 10.0,
        M.FMUL: 6.0,
        M.TIME: 2_000_000.0,  # 2 ms in ns
        "dram__bytes.sum": 8.0 * n * n,
        "lts__t_bytes.sum": 64.0 * n * n,
        "l1tex__t_bytes.sum": 1024.0 * n * n,
        f"{M.FFMA}.peak_sustained": 16_896.0,
        "sm__cycles_elapsed.avg.per_second": 1.98e9,
        "dram__bytes.sum.peak_sustained": 1_504.0,
        "dram__cycles_elapsed.avg.per_second": 3.1995e9,
        M.ACHIEVED_OCC: 45.0,
        M.THEORETICAL_OCC: 50.0,
    }
    d = M.derive(values)
    assert d["shared_ld_bank_conflict_pct"] == pytest.approx(75.0)
    assert d["shared_ld_n_way"] == pytest.approx(4.0)
    assert "shared_st_bank_conflict_pct" not in d  # no store counters given
    flops = 10 + 6 + 2 * n**3
    assert d["fp32_flops"] == flops
    assert d["seconds"] == pytest.approx(2e-3)
    assert d["fp32_flops_per_second"] == pytest.approx(flops / 2e-3)
    # docs/measured-facts.md: 16,896 ffma/cycle x 2 x 1.98 GHz = 66.9 TFLOP/s; 1,504 B/cycle x 3.1995 GHz = 4.81 TB/s.
    assert d["fp32_peak_flops_per_second"] == pytest.approx(66.9e12, rel=1e-3)
    assert d["dram_peak_bytes_per_second"] == pytest.approx(4.81e12, rel=1e-3)
    assert d["ai_dram"] == pytest.approx(flops / (8.0 * n * n))
    assert d["ai_l1"] < d["ai_l2"] < d["ai_dram"]
    assert d["occupancy_achieved_of_theoretical"] == pytest.approx(0.9)
    assert "l2_peak_bytes_per_second" not in d


def test_derive_skips_division_by_zero() -> None:
    d = M.derive(
        {
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": 0.0,
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": 0.0,
            M.TIME: 0.0,
            M.FFMA: 5.0,
        }
    )
    assert "shared_st_bank_conflict_pct" not in d
    assert "fp32_flops_per_second" not in d
    assert d["fp32_flops"] == 10.0


def test_base_metric_name() -> None:
    assert M.base_metric_name("dram__bytes.sum.per_second") == "dram__bytes"
    assert M.base_metric_name("launch__grid_size") == "launch__grid_size"
    assert not M.looks_like_metric_name("dram bytes")
    assert not M.looks_like_metric_name("--set")


def test_metric_name_check_is_linear_and_bounded() -> None:
    """A pattern that tries every "__" split takes seconds on 8,000 underscores and a "!": these inputs, far longer,
    end at once (a backtracking check would hang the test, which is how it fails; speed itself is not asserted)."""
    assert (
        M.looks_like_metric_name("a___b") and M.looks_like_metric_name("___a") and not M.looks_like_metric_name("a__")
    )
    assert not M.looks_like_metric_name("__a") and not M.looks_like_metric_name("dram__bytes.")
    assert not M.looks_like_metric_name("dram__bytes.sum\n") and not M.looks_like_metric_name("a.b__c")
    assert M.looks_like_metric_name("sm__x" + "y" * 250) and not M.looks_like_metric_name("sm__x" + "y" * 252)
    for hostile in ("_" * 100_000 + "!", "a_" * 50_000 + "!", "a__" + "b." * 50_000 + "!", "x__" + "y" * 10**6):
        assert not M.looks_like_metric_name(hostile)


def test_derive_gives_its_names_in_order() -> None:
    import numpy as np

    out = M.derive_columns(lambda name: np.array([1.0, np.nan]))
    assert tuple(out) == M.DERIVED_NAMES
    assert set(M.DERIVED_NAMES) == set(M.DERIVED_UNITS)
    assert all(len(v) == 2 and np.isnan(v[1]) for v in out.values())


def test_derive_drops_what_is_not_finite() -> None:
    d = M.derive({M.TIME: 2e6, M.FFMA: 1e308, "dram__bytes.sum": 0.0, M.ACHIEVED_OCC: 50.0, M.THEORETICAL_OCC: 0.0})
    assert "fp32_flops" not in d and "fp32_flops_per_second" not in d and "ai_dram" not in d  # 2 x 1e308 = inf
    assert "occupancy_achieved_of_theoretical" not in d  # 50 / 0
    assert d["seconds"] == 2e-3 and d["theoretical_occupancy_pct"] == 0.0
