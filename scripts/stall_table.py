"""Print, per kernel of an ncu raw CSV export (quick or full set), the time, the issue-slot and FMA-pipe use and
the stall reasons that separate an SGEMM from cuBLAS's (warps stalled per issued instruction).

Usage: python scripts/stall_table.py raw.csv
"""

from __future__ import annotations

import sys

import pandas as pd

STALLS = ("dispatch_stall", "not_selected", "short_scoreboard", "long_scoreboard", "barrier", "mio_throttle",
          "no_instruction", "wait", "math_pipe_throttle")  # fmt: skip
COLUMNS = {
    "time_us": "gpu__time_duration.sum",
    "issue_%": "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "fma_%": "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active",
    "regs": "launch__registers_per_thread",
}


def stall_table(path: str) -> pd.DataFrame:
    """One row per launch: the COLUMNS above and each STALLS ratio (absent metrics are left out)."""
    raw = pd.read_csv(path, low_memory=False)
    units = raw.iloc[0]  # ncu's raw export: a units row under the header
    raw = raw.iloc[1:]
    rows = pd.DataFrame(index=raw["Kernel Name"].astype(str).str.slice(0, 60))
    for label, metric in COLUMNS.items():
        if metric in raw:
            rows[label] = pd.to_numeric(raw[metric].astype(str).str.replace(",", ""), errors="coerce").to_numpy()
    for stall in STALLS:
        metric = f"smsp__average_warps_issue_stalled_{stall}_per_issue_active.ratio"
        if metric in raw:
            rows[stall] = pd.to_numeric(raw[metric].astype(str).str.replace(",", ""), errors="coerce").to_numpy()
    if "time_us" in rows:
        scale = {"ns": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3, "nsecond": 1e-3}
        rows["time_us"] = rows["time_us"] * scale.get(str(units[COLUMNS["time_us"]]).strip(), 1.0)
    return rows


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python scripts/stall_table.py raw.csv")
    pd.set_option("display.width", 250)
    pd.set_option("display.max_columns", 20)
    print(stall_table(sys.argv[1]).round(3).to_string())
