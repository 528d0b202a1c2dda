"""What ran just before each launch of a timing in rounds (bench or tune --interleaved): a kernel's launches split by
the kernel before them. Each launch comes after an L2 flush, but the flush leaves what the SMs keep of the kernel
before, such as its instructions: a kernel whose launches after cuBLAS take longer than those after itself pays for
that, which a benchmark of one kernel launched again and again never shows."""

from __future__ import annotations

import statistics

import pandas as pd

from profiling.gpu.timing import round_predecessors
from profiling.runs.records import BenchResult
from profiling.runs.results import ResultsDocument

PREDECESSOR_COLUMNS = ["shape", "kernel", "config", "after", "same_code", "launches", "median_ms"]


def times_by_predecessor(document: ResultsDocument) -> pd.DataFrame:
    """Per shape timed in rounds, kernel and kernel run just before: how many of its launches and their median, in
    the rounds' kernel order (PREDECESSOR_COLUMNS; "after" names the kernel, or says "itself"; "same_code": it ran
    the same configuration, as sgemm-auto and v9-regdb do where the record picks v9-regdb's, whose launches share
    one compiled kernel). Results timed otherwise, or whose rounds' times are missing, are left out."""
    by_shape: dict[tuple[int, int, int], dict[str, BenchResult]] = {}
    for result in document.results:
        if result.times_ms and isinstance(result.other.get("rounds"), dict):
            by_shape.setdefault((result.shape.m, result.shape.n, result.shape.k), {})[result.kernel] = result
    rows = []
    for results in by_shape.values():
        names = list(next(iter(results.values())).other["rounds"].get("kernels", []))
        if set(names) != set(results) or any(
            len(results[k].times_ms) != len(results[names[0]].times_ms) for k in names
        ):
            continue
        before = round_predecessors(len(names), len(results[names[0]].times_ms))
        configs = [(results[k].config or "").split(" ")[0] for k in names]
        for index, name in enumerate(names):
            result = results[name]
            times: dict[int, list[float]] = {}
            for previous, ms in zip(before[index], result.times_ms, strict=True):
                times.setdefault(previous, []).append(ms)
            for previous in sorted(times):
                rows.append(
                    {
                        "shape": result.shape.label,
                        "kernel": name,
                        "config": configs[index],
                        "after": "itself" if previous == index else names[previous],
                        "same_code": configs[previous] == configs[index],
                        "launches": len(times[previous]),
                        "median_ms": statistics.median(times[previous]),
                    }
                )
    return pd.DataFrame(rows, columns=PREDECESSOR_COLUMNS)
