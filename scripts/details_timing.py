"""Time opening a `.ncu-rep` and drawing its Details view, and searching its metrics, on this machine.

    python scripts/details_timing.py REPORT.ncu-rep [...]

Each report: a fresh interpreter's whole cost is not measured (imports are shared by the app); what is timed is
reading the report with the ncu-report wheel, building the Details view of every launch and its figures as the
page sends them to the browser (plotly JSON), the metric frame of all launches, and the median of five searches.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from profiling.analysis import details as D
from profiling.analysis import metric_browser as B
from profiling.charts.details import memory_flow, peak_bars
from profiling.nsight import load as L

# Wall-clock targets of a person's wait; judged here, on the machine at hand, not in unit tests.
OPEN_AND_DRAW_TARGET_S = 2.0
SEARCH_TARGET_S = 0.100


def main(paths: list[str]) -> int:
    import numpy  # noqa: F401 - imported once, as in the running app
    import plotly.graph_objects  # noqa: F401

    failed = False
    for path in paths:
        size = Path(path).stat().st_size
        start, cpu = time.perf_counter(), time.process_time()
        report = L.load_report(path)
        read = time.perf_counter() - start
        start = time.perf_counter()
        view = D.details(report.launches[0])
        for fig in (peak_bars(view.speed_of_light, "sol"), peak_bars(view.pipes, "pipes"), memory_flow(view)):
            fig.to_json()
        first = time.perf_counter() - start
        cpu = time.process_time() - cpu
        start = time.perf_counter()
        frame = B.metric_frame([(Path(path).name, report)])
        built = time.perf_counter() - start
        searches = []
        for query in ("dram bytes", "hit rate", "pct_of_peak", "warp stall", "zzz"):
            start = time.perf_counter()
            B.search(frame, query)
            searches.append(time.perf_counter() - start)
        print(
            f"{Path(path).name}: {size / 1e6:.1f} MB, {len(report.launches)} launches, {len(frame)} metrics; "
            f"read {read:.2f} s, Details of launch 0 drawn in {first:.3f} s (read + draw {read + first:.2f} s, "
            f"{cpu:.2f} s of CPU); "
            f"metric frame {built:.2f} s; search median {1e3 * statistics.median(searches):.1f} ms"
        )
        verdicts = (read + first < OPEN_AND_DRAW_TARGET_S, statistics.median(searches) < SEARCH_TARGET_S)
        print(
            f"  targets: read + draw < {OPEN_AND_DRAW_TARGET_S:.0f} s {'OK' if verdicts[0] else 'MISSED'}; "
            f"search < {1e3 * SEARCH_TARGET_S:.0f} ms {'OK' if verdicts[1] else 'MISSED'}"
        )
        failed = failed or not all(verdicts)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
