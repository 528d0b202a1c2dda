"""Print, per launch of an Nsight Compute report (any layout load_report reads: a raw CSV export, .ncu-rep...), the
time, the issue-slot and FMA-pipe use where the report has them, and the stall reasons that separate an SGEMM from
cuBLAS's (warp cycles per issued instruction, profiling.analysis.stalls).

Usage: python scripts/stall_table.py REPORT
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from profiling import metric_names as MN  # noqa: E402
from profiling.analysis.stalls import stall_breakdown
from profiling.errors import GemmLensError
from profiling.nsight.load import load_report

STALLS = (
    "dispatch_stall",
    "not_selected",
    "short_scoreboard",
    "long_scoreboard",
    "barrier",
    "mio_throttle",
    "no_instruction",
    "wait",
    "math_pipe_throttle",
)
COLUMNS = {
    "issue_%": MN.ISSUE_ACTIVE_PCT,
    "fma_%": MN.PIPE_PCT.format("inst_executed_pipe_fma"),
    "regs": MN.REGISTERS,
}


def stall_table(path: str) -> pd.DataFrame:
    """One row per launch: time (us), the COLUMNS above and each STALLS ratio; columns the report lacks are left
    out."""
    records = []
    for launch in load_report(path).launches:
        time_ns = launch.value(MN.TIME)
        row = {"kernel": launch.name[:60], "time_us": time_ns / 1e3 if time_ns is not None else None}
        row |= {label: launch.value(metric) for label, metric in COLUMNS.items()}
        breakdown = stall_breakdown(launch)
        row |= {s: breakdown.values.get(s) if breakdown else None for s in STALLS}
        records.append(row)
    # Names are cut to 60 characters, so two configurations of one template can share an index label.
    table = pd.DataFrame.from_records(records).set_index("kernel").dropna(axis="columns", how="all")
    return table.astype({"regs": "Int64"}) if "regs" in table else table


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python scripts/stall_table.py REPORT")
    pd.set_option("display.width", 250)
    pd.set_option("display.max_columns", 20)
    try:
        print(stall_table(sys.argv[1]).round(3).to_string())
    except GemmLensError as exc:
        sys.exit(f"error: {exc}")
