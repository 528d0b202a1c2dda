"""Paired A/B at full clock (GPU): each pair of launches starts only once the GPU has fallen back under its power cap,
so neither kernel of a pair runs capped.

At 8192^3 an H200 reaches its 700 W cap after 9-16 back-to-back AddMM launches and then slows both kernels by 10-20 %
(results/h200-2026-11-29/quarter/), so the usual 30 interleaved pairs mix full-clock and capped pairs and their
interval is wide. Here every round rests `--sleep` seconds, then waits until NVML reports no power or thermal slowdown and the power has dropped
under `--idle-watts`, then runs one untimed pair (the warm-up) and one timed pair, each launch after an L2 flush,
alternating which kernel goes first; NVML is sampled after each round, and rounds whose timed pair was slowed are
counted and left out. Prints each pair's ratio summary (median of B/A, 95 % bootstrap interval) and writes a JSON
with every round's times, clocks and power.

    python scripts/full_clock_ab.py cublas-addmm,wgmma-streamk 8192 [--rounds 40] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from profiling.gpu.device import CAPPING_REASONS, Nvml, device_info  # noqa: E402
from profiling.gpu.fp32_cupy import cupy  # noqa: E402
from profiling.gpu.hold import LaunchHold  # noqa: E402
from profiling.gpu.runner import Session, _spec_and_result, _verified_launch  # noqa: E402
from profiling.runs.verdict import bootstrap_ratio  # noqa: E402
from profiling.shape import parse_shape  # noqa: E402


def cooled(nvml: Nvml, idle_watts: float, limit_s: float = 30.0) -> dict:
    """Wait until NVML reports none of CAPPING_REASONS and the power under `idle_watts` (at most `limit_s`); the last
    sample."""
    deadline = time.monotonic() + limit_s
    while True:
        sample = nvml.sample()
        slowed = set(sample.get("reasons") or ()) & CAPPING_REASONS
        if (not slowed and (sample.get("power_w") or 0.0) < idle_watts) or time.monotonic() > deadline:
            return sample
        time.sleep(0.1)


def timed_pair(launches: list, order: list[int], flush: object, hold: LaunchHold) -> dict[int, float]:
    """Milliseconds of one launch of each kernel, in `order`, each after an L2 flush and after one untimed launch of
    each; all enqueued behind `hold`, so the host's pace is not in the timings."""
    stream = cupy.cuda.get_current_stream()
    events = {}
    hold.enqueue()
    for j in order:
        launches[j]()
    for index, j in enumerate(order):
        cupy.cuda.runtime.memsetAsync(flush.data.ptr, index + 1, flush.nbytes, stream.ptr)
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        launches[j]()
        end.record()
        events[j] = (start, end)
    hold.release()
    cupy.cuda.Device().synchronize()
    return {j: cupy.cuda.get_elapsed_time(start, end) for j, (start, end) in events.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pair", help="A,B: two catalog ids of one operation")
    parser.add_argument("size", help="N for N^3, or MxNxK")
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--idle-watts", type=float, default=150.0)
    parser.add_argument("--sleep", type=float, default=2.0, help="idle seconds before each round")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    kernel_a, kernel_b = args.pair.split(",")
    shape = parse_shape(args.size if "x" in args.size else f"{args.size}x{args.size}x{args.size}")
    session = Session()
    launches = []
    for kernel_id in (kernel_a, kernel_b):
        spec, result = _spec_and_result(session, kernel_id, shape)
        launches.append(_verified_launch(session, spec, result, shape)[1])
        if result.status != "ok":
            print(f"{kernel_id} at {shape.label}: {result.status}: {result.error}")
            return 1
    flush = session.flush_buffer()
    hold = LaunchHold(cupy)
    rounds = []
    for i in range(args.rounds):
        # NVML's power reading is an average over about a second and its reasons lag, so a 12 ms round cannot be
        # seen coming; a fixed rest is what lets the cap's window drain (without it rounds 10-40 of 40 ran capped).
        time.sleep(args.sleep)
        before = cooled(session.nvml, args.idle_watts)
        order = [0, 1] if i % 2 == 0 else [1, 0]
        # One untimed pair and one timed: 4 launches, under the 9-16 that reach the cap.
        ms = timed_pair(launches, order, flush, hold)
        after = session.nvml.sample()
        slowed = sorted(set(after.get("reasons") or ()) & CAPPING_REASONS)
        rounds.append(
            {"a_ms": ms[0], "b_ms": ms[1], "first": "AB"[order[0]], "before": before, "after": after, "slowed": slowed}
        )
    kept = [r for r in rounds if not r["slowed"]]
    interval = bootstrap_ratio([r["a_ms"] for r in kept], [r["b_ms"] for r in kept], paired=True)
    device = device_info(session.nvml)
    summary = {
        "device": device,
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "pair": [kernel_a, kernel_b],
        "shape": shape.label,
        "rounds": rounds,
        "kept": len(kept),
        "ratio_b_over_a": None
        if interval is None
        else {"median": interval.ratio, "low": interval.low, "high": interval.high, "confidence": interval.confidence},
    }
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1))
    a_ms = sorted(r["a_ms"] for r in kept)
    b_ms = sorted(r["b_ms"] for r in kept)
    clocks = sorted({r["after"].get("sm_clock_mhz") for r in kept})
    print(
        f"{device['name']}  {shape.label}  {kernel_b} / {kernel_a}: {len(kept)} of {len(rounds)} rounds at full "
        f"clock (SM clocks after: {clocks})"
    )
    if interval is not None:
        print(
            f"  A {a_ms[0]:.4f}-{a_ms[-1]:.4f} ms, B {b_ms[0]:.4f}-{b_ms[-1]:.4f} ms; median B/A "
            f"{interval.ratio:.4f} [{interval.low:.4f}, {interval.high:.4f}]"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
