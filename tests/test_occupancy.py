"""Occupancy calculator: known cases from ncu reports and NVIDIA's rules, sweeps, CLI and errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from profiling.analysis.occupancy import (
    ARCHITECTURES,
    NCU_LIMIT_METRICS,
    arch_limits,
    occupancy_from_ncu,
    sweep_all,
    sweep_registers,
    sweep_shared_mem,
    sweep_threads,
    theoretical_occupancy,
)
from profiling.cli import main
from profiling.errors import InvalidInput
from profiling.nsight.load import load_report

NCU_FIXTURES = Path(__file__).parent / "fixtures" / "ncu"


def test_h100_register_limited_kernel_measured_fact():
    # Measured on an H100 (ncu): 256 threads, 128 registers, 8 KB static smem -> 2 blocks, 16 warps, 25 %.
    r = theoretical_occupancy("9.0", 256, 128, 8192)
    assert r.active_blocks_per_sm == 2
    assert r.active_warps_per_sm == 16
    assert r.occupancy_pct == pytest.approx(25.0)
    assert r.limiters == ["registers"]
    assert r.blocks_allowed_by == {"warps": 8, "registers": 2, "shared_mem": 25, "blocks": 32}
    assert r.describe() == "registers: 128 per thread allow 2 blocks of 256 threads"


@pytest.mark.parametrize(
    ("cc", "threads", "regs", "smem", "carveout", "expected", "occupancy"),
    [
        # ncu on an A800 (8.0): 512 threads, 46 registers -> Block Limit Registers 2, Warps 4, SM 32, 50 %.
        ("8.0", 512, 46, 0, None, {"warps": 4, "registers": 2, "blocks": 32}, 50.0),
        # ncu on an RTX 4060 (8.9): 1024-thread blocks -> Block Limit Warps 1, Block Limit SM 24.
        ("8.9", 1024, 32, 0, None, {"warps": 1, "blocks": 24}, 200 / 3),
        # ncu, 255 registers x 128 threads (launch bounds 128,2) -> Block Limit Registers 2, 12.5 %.
        ("9.0", 128, 255, 0, None, {"registers": 2}, 12.5),
        # ncu on Turing (7.5), reduction kernels with 256 floats / 320 floats of shared memory and the
        # driver's 32 KB configuration -> Block Limit Shared Mem 32 / 25, Warps 4, SM 16, 100 %.
        ("7.5", 256, 16, 1024, 32 * 1024, {"warps": 4, "shared_mem": 32, "blocks": 16}, 100.0),
        ("7.5", 256, 16, 1280, 32 * 1024, {"warps": 4, "shared_mem": 25, "blocks": 16}, 100.0),
    ],
)
def test_known_ncu_cases(cc, threads, regs, smem, carveout, expected, occupancy):
    r = theoretical_occupancy(cc, threads, regs, smem, carveout)
    for name, blocks in expected.items():
        assert r.blocks_allowed_by[name] == blocks, name
    assert r.occupancy_pct == pytest.approx(occupancy)


def test_register_limit_rounds_warps_down_to_multiple_of_four():
    # 40 regs -> 1280 per warp -> 16384 // 1280 = 12 warps per sub-partition -> 48 warps;
    # a plain 65536 // 1280 = 51 would wrongly allow more.
    r = theoretical_occupancy("9.0", 32, 40, 0)
    assert r.blocks_allowed_by["registers"] == 48
    # 33 registers round up to 1280 per warp too (256-register units).
    assert theoretical_occupancy("9.0", 32, 33, 0).blocks_allowed_by["registers"] == 48
    # 96-thread blocks (3 warps): 48 warps / 3 = 16 blocks.
    assert theoretical_occupancy("9.0", 96, 40, 0).blocks_allowed_by["registers"] == 16


def test_warp_limit_is_floor_of_max_warps_over_warps_per_block():
    # ncu's launch__occupancy_limit_warps = floor(64 / warps per block) on 9.0; partial warps count whole.
    assert theoretical_occupancy("9.0", 192, 32, 0).blocks_allowed_by["warps"] == 10
    assert theoretical_occupancy("9.0", 200, 32, 0).blocks_allowed_by["warps"] == 9  # 7 warps
    assert theoretical_occupancy("8.6", 192, 32, 0).blocks_allowed_by["warps"] == 8  # 48 warps per SM


def test_shared_memory_reserve_and_granularity():
    # 9.0: 8 KB + 1 KB reserve = 9216 B per block; 233472 // 9216 = 25.
    r = theoretical_occupancy("9.0", 128, 32, 8192)
    assert r.shared_mem_allocated_per_block == 9216
    # 100 B rounds to 1152 B (128 B units incl. the reserve): 233472 // 1152 = 202 (not capped at 32).
    assert theoretical_occupancy("9.0", 128, 32, 100).blocks_allowed_by["shared_mem"] == 202
    # 7.0: no reserve, 256 B units.
    assert theoretical_occupancy("7.0", 128, 32, 100).shared_mem_allocated_per_block == 256


def test_shared_memory_limit_binds():
    r = theoretical_occupancy("9.0", 128, 32, 100 * 1024)
    assert r.blocks_allowed_by["shared_mem"] == 2
    assert r.limiters == ["shared_mem"]
    assert "shared_mem" in r.describe() and "228 KB carveout" in r.describe()


def test_carveout_chosen_and_fallback_to_smallest_that_fits():
    # A 64 KB carveout holds 7 blocks of 8 KB + 1 KB.
    r = theoretical_occupancy("9.0", 128, 32, 8192, carveout=64 * 1024)
    assert r.carveout_used == 64 * 1024
    assert r.blocks_allowed_by["shared_mem"] == 7
    # 8 KB is too small for one 9 KB block: the smallest carveout that fits (16 KB) is used instead.
    r = theoretical_occupancy("9.0", 128, 32, 8192, carveout=8 * 1024)
    assert r.carveout_used == 16 * 1024
    assert r.blocks_allowed_by["shared_mem"] == 1
    # A value between two supported sizes rounds up, like the driver's preference.
    assert theoretical_occupancy("9.0", 128, 32, 0, carveout=50_000).carveout_used == 64 * 1024
    # Turing supports only 32 and 64 KB.
    assert theoretical_occupancy("7.5", 128, 32, 0, carveout=0).carveout_used == 32 * 1024


def test_block_limit_binds_for_tiny_blocks():
    r = theoretical_occupancy("9.0", 32, 16, 0)
    assert r.active_blocks_per_sm == 32
    assert r.limiters == ["blocks"]
    assert r.occupancy_pct == pytest.approx(50.0)
    assert r.describe() == "blocks: the SM holds at most 32 blocks of 32 threads"


def test_several_limiters_listed():
    r = theoretical_occupancy("9.0", 1024, 32, 0)
    assert r.active_blocks_per_sm == 2
    assert set(r.limiters) == {"warps", "registers"}
    assert r.describe().count(";") == 1


def test_volta_zero_shared_memory_never_limits():
    r = theoretical_occupancy("7.0", 64, 16, 0)
    assert "shared_mem" not in r.limiters
    assert r.active_blocks_per_sm == 32


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("9.9", 256, 32, 0), "unknown compute capability"),
        (("9.0", 1056, 32, 0), "threads per block"),
        (("9.0", 0, 32, 0), "threads per block"),
        (("9.0", 256, 256, 0), "registers per thread"),
        (("9.0", 1024, 128, 0), "registers per block"),
        (("9.0", 256, 32, 227 * 1024 + 1), "opt-in maximum"),
        (("8.6", 256, 32, 100 * 1024), "opt-in maximum"),
        (("9.0", 256, 32, -1), "shared memory"),
    ],
)
def test_impossible_configs_raise_invalid_input(args, fragment):
    with pytest.raises(InvalidInput, match=fragment):
        theoretical_occupancy(*args)


def test_carveout_out_of_range_raises():
    with pytest.raises(InvalidInput, match="carveout"):
        theoretical_occupancy("8.6", 128, 32, 0, carveout=164 * 1024)


def test_largest_shared_memory_per_block_fits_exactly():
    r = theoretical_occupancy("9.0", 128, 32, 227 * 1024)
    assert r.active_blocks_per_sm == 1
    assert r.carveout_used == 228 * 1024


def test_cc_spellings():
    assert arch_limits("9").cc == "9.0"
    assert arch_limits(" 12.0 ").cc == "12.0"
    assert set(ARCHITECTURES) >= set("7.0 7.2 7.5 8.0 8.6 8.7 8.9 9.0 10.0 10.3 11.0 12.0".split())


@pytest.mark.parametrize("cc", sorted(ARCHITECTURES))
def test_full_occupancy_reachable_everywhere(cc):
    arch = arch_limits(cc)
    threads = arch.max_threads_per_sm // 2 if arch.max_threads_per_sm > 1024 else 512
    r = theoretical_occupancy(cc, threads, 32, 0)
    assert r.occupancy_pct == pytest.approx(100.0)


def test_sweeps_shapes_and_agreement_with_single_point():
    sweeps = sweep_all("9.0", 256, 128, 8192)
    assert list(sweeps["threads"]["threads_per_block"]) == list(range(32, 1025, 32))
    assert list(sweeps["registers"]["registers_per_thread"]) == list(range(1, 256))
    shared = sweeps["shared_mem"]["shared_mem_per_block"]
    assert shared.iloc[0] == 0 and shared.iloc[-1] == 227 * 1024 and len(shared) == 227 * 1024 // 128 + 1
    row = sweeps["registers"].set_index("registers_per_thread").loc[128]
    assert row["active_warps_per_sm"] == 16 and row["occupancy_pct"] == pytest.approx(25.0)
    row = sweeps["threads"].set_index("threads_per_block").loc[256]
    assert row["limit_registers"] == 2
    for regs in (1, 37, 64, 200, 255):
        single = theoretical_occupancy("9.0", 256, regs, 8192)
        assert sweeps["registers"].iloc[regs - 1]["active_blocks_per_sm"] == single.active_blocks_per_sm


def test_sweeps_report_zero_where_a_block_no_longer_fits():
    regs = sweep_registers("9.0", 1024, 0)
    assert regs.set_index("registers_per_thread").loc[64, "active_warps_per_sm"] == 32
    assert regs.set_index("registers_per_thread").loc[65, "occupancy_pct"] == 0
    threads = sweep_threads("9.0", 255, 0)
    assert threads.set_index("threads_per_block").loc[256, "active_blocks_per_sm"] == 1
    assert threads.set_index("threads_per_block").loc[288, "active_blocks_per_sm"] == 0
    shared = sweep_shared_mem("8.6", 128, 32)
    assert shared["occupancy_pct"].is_monotonic_decreasing


def test_ncu_metric_names_and_recompute_from_launch_metrics():
    r = theoretical_occupancy("9.0", 256, 128, 8192)
    assert r.ncu_limits() == {
        "launch__occupancy_limit_warps": 8,
        "launch__occupancy_limit_registers": 2,
        "launch__occupancy_limit_shared_mem": 25,
        "launch__occupancy_limit_blocks": 32,
    }
    metrics = {
        "launch__block_size": 256.0,
        "launch__registers_per_thread": 128.0,
        "launch__shared_mem_per_block_static": 8192.0,
        "launch__shared_mem_per_block_dynamic": 0.0,
        "launch__shared_mem_config_size": 233472.0,
    }
    assert occupancy_from_ncu(metrics, "9.0").ncu_limits() == r.ncu_limits()
    with pytest.raises(InvalidInput, match="launch__block_size"):
        occupancy_from_ncu({}, "9.0")


def _ncu_fixture_rows() -> list[dict]:
    """Launches from the real ncu raw-page captures under tests/fixtures/ncu, read by the project's parser.

    The parser converts ncu's units row (the raw page prints shared memory in Kbyte) to base units,
    which the calculator expects. Only launches carrying the launch__* occupancy metrics are used.
    """
    rows: list[dict] = []
    for path in sorted(NCU_FIXTURES.glob("*raw*.csv")):
        for launch in load_report(path).launches:
            row = {name: metric.value for name, metric in launch.metrics.items()}
            row["cc"] = launch.cc or "9.0"
            row["kernel"] = launch.name
            rows.append(row)
    return [r for r in rows if "launch__block_size" in r and "launch__occupancy_limit_registers" in r]


NCU_ROWS = _ncu_fixture_rows()


def test_captured_ncu_reports_are_present():
    # The ladder (10 launches, raw.csv) and v4 --set full in auto and base units: a missing capture fails.
    assert len(NCU_ROWS) >= 12, [r["kernel"] for r in NCU_ROWS]


@pytest.mark.parametrize("row", NCU_ROWS, ids=lambda r: r["kernel"][:40])
def test_matches_captured_ncu_reports(row):
    result = occupancy_from_ncu(row, str(row.get("cc", "9.0")))
    for metric, blocks in result.ncu_limits().items():
        if metric in row:
            assert blocks == int(row[metric]), metric
    if "sm__maximum_warps_per_active_cycle_pct" in row:
        assert result.occupancy_pct == pytest.approx(float(row["sm__maximum_warps_per_active_cycle_pct"]), abs=0.01)
    assert set(NCU_LIMIT_METRICS.values()) >= {m for m in row if m.startswith("launch__occupancy_limit_")} - {
        "launch__occupancy_limit_barriers"
    }


def test_cli_text_and_json(capsys):
    assert main(["occupancy", "--cc", "9.0", "--threads", "256", "--registers", "64", "--shared-mem", "16384"]) == 0
    out = capsys.readouterr().out
    assert "50.0 %" in out and "registers: 64 per thread allow 4 blocks of 256 threads" in out
    assert main(["occupancy", "--cc", "9.0", "--threads", "256", "--registers", "128", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["active_blocks_per_sm"] == 2 and data["limiters"] == ["registers"]
    assert data["blocks_allowed_by"]["warps"] == 8


def test_cli_bad_input_exits_2_with_one_line(capsys):
    assert main(["occupancy", "--cc", "9.0", "--threads", "2048", "--registers", "32"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: threads per block") and err.count("\n") == 1


@pytest.mark.parametrize(
    "threads,registers,shared_mem,carveout,message",
    [
        (float("nan"), 32, 0, None, "threads per block must be a whole number, got nan"),
        (256.5, 32, 0, None, "threads per block must be a whole number, got 256.5"),
        (None, 32, 0, None, "threads per block must be a whole number, got None"),
        (256, "32", 0, None, "registers per thread must be a whole number, got '32'"),
        (256, True, 0, None, "registers per thread must be a whole number, got True"),
        (256, 32, float("inf"), None, "shared memory per block must be a whole number, got inf"),
        (256, 32, 0, "256", "the carveout must be a whole number, got '256'"),
        (256, 32, 0, 10**30, "carveout 1000000000000000000000000000000 B is outside"),
        (2**63, 32, 0, None, "threads per block must be 1..1024"),
    ],
)
def test_odd_launch_values_are_invalid_input(
    threads: object, registers: object, shared_mem: object, carveout: object, message: str
) -> None:
    with pytest.raises(InvalidInput, match=re.escape(message)):
        theoretical_occupancy("9.0", threads, registers, shared_mem, carveout)  # type: ignore[arg-type]


def test_whole_floats_are_accepted_as_ncu_writes_them() -> None:
    assert theoretical_occupancy("9.0", 256.0, 64.0, 0.0) == theoretical_occupancy("9.0", 256, 64, 0)  # type: ignore[arg-type]


def test_turing_allocates_shared_memory_in_256_byte_units() -> None:
    """cuda_occupancy.h: 7.x allocates shared memory in 256-byte units. A block asking 1,100 B gets 1,280 B, the
    same as the 320-float reduction kernel that ncu measured on Turing at 25 blocks in 32 KB (test_known_ncu_cases);
    128-byte units would give 1,152 B and 28 blocks."""
    r = theoretical_occupancy("7.5", 256, 16, 1100, 32 * 1024)
    assert r.shared_mem_allocated_per_block == 1280
    assert r.blocks_allowed_by["shared_mem"] == 25
    assert theoretical_occupancy("7.5", 128, 32, 100).shared_mem_allocated_per_block == 256
    assert arch_limits("7.5").shared_mem_unit == arch_limits("7.0").shared_mem_unit == 256
