"""Time the three occupancy sweeps for one kernel (target: under 50 ms together)."""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from profiling.analysis.occupancy import sweep_all  # noqa: E402


def main() -> int:
    first = time.perf_counter()
    sweep_all("9.0", 256, 128, 8192)
    cold_ms = (time.perf_counter() - first) * 1e3
    samples = []
    for _ in range(50):
        start = time.perf_counter()
        sweeps = sweep_all("9.0", 256, 128, 8192)
        samples.append((time.perf_counter() - start) * 1e3)
    points = sum(len(frame) for frame in sweeps.values())
    print(
        f"sweep_all (CC 9.0, {points} points): first call {cold_ms:.1f} ms, "
        f"median {statistics.median(samples):.2f} ms, max {max(samples):.2f} ms over {len(samples)} calls"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
