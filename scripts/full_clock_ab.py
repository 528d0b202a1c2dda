"""Paired A/B at full clock (GPU): each pair of launches starts after a rest, so neither kernel of a pair runs
capped.

At 8192^3 an H200 reaches its 700 W cap after 9-16 back-to-back AddMM launches and then slows both kernels by 10-20 %
(results/h200-2026-11-29/quarter/), so the usual 30 interleaved pairs mix full-clock and capped pairs and their
interval is wide. Here every round rests `--rest` seconds, then runs one untimed and one timed launch of each kernel
behind the launch hold, each timed launch after an L2 flush, alternating which kernel goes first
(profiling.gpu.timing.rested_rounds); NVML is sampled after each round, and rounds it reports slowed are left out.
Prints the median of B/A with its 95 % bootstrap interval and writes a JSON with every round's times, clocks and
power.

    python scripts/full_clock_ab.py cublas-addmm,wgmma-streamk 8192 [--rounds 40] [--rest 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from profiling.gpu.device import CAPPING_REASONS, device_info  # noqa: E402
from profiling.gpu.fp32_cupy import cupy  # noqa: E402
from profiling.gpu.hold import LaunchHold  # noqa: E402
from profiling.gpu.runner import Session, _spec_and_result, _verified_launch  # noqa: E402
from profiling.gpu.timing import rested_rounds  # noqa: E402
from profiling.runs.verdict import bootstrap_ratio  # noqa: E402
from profiling.shape import parse_shape  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pair", help="A,B: two catalog ids of one operation")
    parser.add_argument("size", help="N for N^3, or MxNxK")
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--rest", type=float, default=2.0, help="idle seconds before each round")
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
    samples: list[dict] = []
    times_a, times_b = rested_rounds(
        cupy,
        launches,
        args.rounds,
        args.rest,
        session.flush_buffer(),
        LaunchHold(cupy),
        lambda _i: samples.append(session.nvml.sample()),
    )
    rounds = [
        {
            "a_ms": a,
            "b_ms": b,
            "first": "AB"[i % 2],
            "after": sample,
            "slowed": sorted(set(sample.get("reasons") or ()) & CAPPING_REASONS),
        }
        for i, (a, b, sample) in enumerate(zip(times_a, times_b, samples, strict=True))
    ]
    kept = [r for r in rounds if not r["slowed"]]
    interval = bootstrap_ratio([r["a_ms"] for r in kept], [r["b_ms"] for r in kept], paired=True)
    device = device_info(session.nvml)
    summary = {
        "device": device,
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "pair": [kernel_a, kernel_b],
        "shape": shape.label,
        "rest_s": args.rest,
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
        f"{device['name']}  {shape.label}  {kernel_b} / {kernel_a}: {len(kept)} of {len(rounds)} rounds not slowed "
        f"(SM clocks after: {clocks})"
    )
    if interval is not None:
        print(
            f"  A {a_ms[0]:.4f}-{a_ms[-1]:.4f} ms, B {b_ms[0]:.4f}-{b_ms[-1]:.4f} ms; median B/A "
            f"{interval.ratio:.4f} [{interval.low:.4f}, {interval.high:.4f}]"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
