"""scripts/stall_table.py on a real quick-set capture (the H200's sgemm95 round 3: cuBLAS and three v9 launches at
4096): one row per launch, values as ncu wrote them, read here straight from the CSV with the csv module."""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RAW = ROOT / "results" / "h200-2026-11-24" / "sgemm95_round3" / "raw_4096.csv"
spec = importlib.util.spec_from_file_location("stall_table", ROOT / "scripts" / "stall_table.py")
stall_table = importlib.util.module_from_spec(spec)
spec.loader.exec_module(stall_table)


def test_one_row_per_launch_with_ncus_values() -> None:
    with RAW.open(newline="") as fh:
        header, units, *launches = list(csv.reader(fh))
    col = {name: i for i, name in enumerate(header)}
    table = stall_table.stall_table(str(RAW))
    assert len(table) == len(launches) == 4
    assert units[col["gpu__time_duration.sum"]] == "ms"  # ncu chose milliseconds for this export
    for (_, row), raw in zip(table.iterrows(), launches, strict=True):
        assert row["time_us"] == pytest.approx(1000 * float(raw[col["gpu__time_duration.sum"]].replace(",", "")))
        assert row["regs"] == int(raw[col["launch__registers_per_thread"]])
        metric = "smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio"
        assert row["dispatch_stall"] == pytest.approx(float(raw[col[metric]]))
    assert table.index[0].startswith("sm80_xmma_gemm")


def test_launches_whose_names_share_60_characters_keep_a_row_each() -> None:
    # The H100's round 3: cuBLAS and three orders of sgemm_regdb_ordered<256, 128, ...>, equal in their first 60.
    table = stall_table.stall_table(str(ROOT / "results" / "h100-2026-11-24" / "sgemm95_round3" / "raw_4096.csv"))
    assert len(table) == 4 and table.index.duplicated().sum() == 2
    assert table["dispatch_stall"].nunique() == 4


def test_an_unreadable_report_is_one_line() -> None:
    with pytest.raises(stall_table.GemmLensError, match="cannot read"):
        stall_table.stall_table(str(ROOT / "no-such-report.csv"))
