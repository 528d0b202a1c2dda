"""Apply deliberate bugs to the verifier, the timer, the analyses and the verdicts one at a time, run tests, restore.

Every bug must make at least one test fail. Each bug is a literal text replacement,
so the script refuses to run when the code it targets has changed (update the entry instead).

    python scripts/deliberate_bugs.py                          # every bug against the CPU suite
    python scripts/deliberate_bugs.py --targeted               # each bug against the CPU test files of its code
    python scripts/deliberate_bugs.py --only 1 3 8 -- tests/gpu/test_gpu_wrong_kernels.py tests/gpu/test_gpu_flush.py

Files are restored from memory (not from git) after each run, also on the GPU machines, whose copy of the
tree may not match its .git. Prints one JSON line per bug: the failing tests and pytest's summary line.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CPU_SUITE = ["tests", "--ignore=tests/browser", "--ignore=tests/test_packaging.py"]

# (number, what breaks, file, original text, broken text)
BUGS: list[tuple[int, str, str, str, str]] = [
    (
        1,
        "relative_error compares the output with itself",
        "profiling/gpu/verify.py",
        "diff = float(xp.linalg.norm(out - ref64))",
        "diff = float(xp.linalg.norm(out - out.astype(xp.float64)))",
    ),
    (
        2,
        "the worker's Problem compares the output with itself",
        "profiling/gpu/runner.py",
        "            return self.out, self.ref\n",
        "            return self.out, self.out\n",
    ),
    (3, "NaN outputs not counted", "profiling/gpu/verify.py", "return int(xp.isnan(out).sum())", "return 0"),
    (
        4,
        "a NaN relative error passes",
        "profiling/gpu/verify.py",
        '            return "relative error is NaN (the output or the reference holds NaN or infinity)"',
        "            return None",
    ),
    (
        5,
        "the cuBLAS HGEMM reference is not verified (error NaN)",
        "profiling/gpu/runner.py",
        "        out, ref = self.output_and_reference(reference_run, half_output)\n",
        "        if reference_run and self.operation == 'hgemm_addmm':\n"
        "            return Check(float('nan'), 0, 1, tolerance)\n"
        "        out, ref = self.output_and_reference(reference_run, half_output)\n",
    ),
    (
        6,
        "the timing summary returns the mean as the median",
        "profiling/gpu/timing.py",
        "    median = statistics.median(ordered)",
        "    median = statistics.fmean(ordered)",
    ),
    (7, "the 10th percentile is taken at 20", "profiling/gpu/timing.py", "for p in (10, 90))", "for p in (20, 90))"),
    (
        8,
        "the L2 flush is never issued (timer)",
        "profiling/gpu/timing.py",
        "            if flush is not None:\n                cuda.runtime.memsetAsync(flush.data.ptr, flush_byte(i),",
        "            if flush is not None and False:\n                cuda.runtime.memsetAsync(flush.data.ptr, flush_byte(i),",
    ),
    (
        9,
        "the L2 flush is never handed to the timer (run_task)",
        "profiling/gpu/runner.py",
        "_time_launches(launch, settings, flush, session.hold(settings))",
        "_time_launches(launch, settings, None, session.hold(settings))",
    ),
    (
        10,
        "the repeat budget is ignored",
        "profiling/gpu/timing.py",
        "    return max(MIN_REPEATS, min(requested, fit))",
        "    return max(MIN_REPEATS, requested)",
    ),
    (
        11,
        "ncu unit conversion: K taken as 1024",
        "profiling/nsight/units.py",
        '_SI: dict[str, float] = {"K": 1e3, "k": 1e3,',
        '_SI: dict[str, float] = {"K": 1024.0, "k": 1024.0,',
    ),
    (
        12,
        "occupancy: register limit not rounded to the warp allocation granularity",
        "profiling/analysis/occupancy.py",
        "    warps_per_sm_by_regs = (arch.registers_per_sm // granularity) // max(regs_per_warp, 1) * granularity",
        "    warps_per_sm_by_regs = arch.registers_per_sm // max(regs_per_warp, 1)",
    ),
    (
        13,
        "compare verdicts: improvement and regression swapped",
        "profiling/runs/comparison.py",
        '    return "improvement" if (pct < 0) == (better == "lower") else "regression"',
        '    return "regression" if (pct < 0) == (better == "lower") else "improvement"',
    ),
    # Round two: bugs a tired developer could write that the CPU suite once let through.
    (
        14,
        "access: the shared-memory bank taken from the byte address instead of the 4-byte word",
        "profiling/analysis/access.py",
        "[(w % BANKS, w) for w in lane_words(acc, lane)] if on else []",
        "[(w * BANK_BYTES % BANKS, w) for w in lane_words(acc, lane)] if on else []",
    ),
    (
        15,
        "access: a lane's last byte taken as addr+width, one past the end",
        "profiling/analysis/access.py",
        "{int(acc.addr[lane]) // SECTOR_BYTES, (int(acc.addr[lane]) + acc.width - 1) // SECTOR_BYTES}",
        "{int(acc.addr[lane]) // SECTOR_BYTES, (int(acc.addr[lane]) + acc.width) // SECTOR_BYTES}",
    ),
    (
        16,
        "occupancy: Turing (7.5) given a 128-byte shared-memory allocation unit instead of 256",
        "profiling/analysis/occupancy.py",
        '"7.5": ArchLimits("7.5", 32, 16, _CARVEOUTS_TURING, 64 * KB, shared_mem_unit=256,',
        '"7.5": ArchLimits("7.5", 32, 16, _CARVEOUTS_TURING, 64 * KB, shared_mem_unit=128,',
    ),
    (
        17,
        "source: a line's n-way taken as the sum of its instructions' n-ways instead of the maximum",
        "profiling/nsight/source.py",
        '"bank_conflict_n_way": max(n_ways) if n_ways else None,',
        '"bank_conflict_n_way": sum(n_ways) if n_ways else None,',
    ),
    (
        18,
        'source: dominant_stall may return "selected" (issuing is not a stall)',
        "profiling/nsight/source.py",
        '    for _, reason in ranked:\n        if reason != "selected":\n            return reason\n',
        "    for _, reason in ranked:\n        return reason\n",
    ),
    (
        19,
        "explain: a second counter of the same stall group no longer halved",
        "profiling/analysis/explain.py",
        "            if group in seen:\n                item.score *= 0.5\n",
        "            if group in seen:\n                item.score *= 1.0\n",
    ),
    (
        20,
        "verdict: alpha = 1 - confidence (a 90 % interval labelled 95 %)",
        "profiling/runs/verdict.py",
        "    alpha = (1.0 - confidence) / 2.0",
        "    alpha = 1.0 - confidence",
    ),
    (
        21,
        'verdict: "faster" even when the interval includes 1',
        "profiling/runs/verdict.py",
        "    if interval.high < 1.0 and change < -t:",
        "    if change < -t:",
    ),
    (
        22,
        "verdict: capping warned about only when both runs were capped",
        "profiling/runs/verdict.py",
        "    if b_cap or c_cap:",
        "    if b_cap and c_cap:",
    ),
    (
        23,
        "tuning.shape_efficiency: the split-K count computed for 132 SMs on every GPU",
        "kernels/tuning.py",
        "    splits = config_split_count(config, m, n, k, sm_count)\n    blocks = tiles * splits",
        "    splits = config_split_count(config, m, n, k)\n    blocks = tiles * splits",
    ),
    (
        24,
        "splitk_policy: the fill rounded down instead of up",
        "kernels/splitk_policy.py",
        "        fill = math.ceil(sm_count / tiles)",
        "        fill = sm_count // tiles",
    ),
]


# The CPU test files that cover each bug's code: --targeted runs each bug against these alone, which takes minutes
# instead of the whole suite once per bug.
TARGETED: dict[int, list[str]] = {
    **dict.fromkeys((1, 2, 3, 4, 5), ["tests/test_verify.py"]),
    **dict.fromkeys((6, 7, 8, 9, 10), ["tests/test_timing.py"]),
    11: ["tests/test_metrics.py", "tests/test_ncu_rep.py"],
    12: ["tests/test_occupancy.py"],
    13: ["tests/test_review.py", "tests/test_compare_cli.py"],
    **dict.fromkeys((14, 15), ["tests/test_access_charts.py"]),
    16: ["tests/test_occupancy.py"],
    **dict.fromkeys((17, 18), ["tests/test_source_page.py"]),
    19: ["tests/test_explain.py"],
    **dict.fromkeys((20, 21, 22), ["tests/test_verdict.py"]),
    23: ["tests/test_tuning.py"],
    24: ["tests/test_splitk_policy.py"],
}


def run_one(number: int, what: str, path: str, original: str, broken: str, pytest_args: list[str]) -> dict:
    file = ROOT / path
    text = file.read_text()
    if text.count(original) != 1:
        raise SystemExit(f"bug {number} ({what}): its target text is not in {path} exactly once; update the entry")
    file.write_text(text.replace(original, broken))
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf", *pytest_args],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
    finally:
        file.write_text(text)
    lines = done.stdout.strip().splitlines()
    failed = sorted(set(re.findall(r"^FAILED (\S+)", done.stdout, flags=re.MULTILINE)))
    return {
        "bug": number,
        "what": what,
        "caught": bool(failed),
        "failed": failed,
        "summary": lines[-1] if lines else "",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", type=int, nargs="*", help="bug numbers to apply (default: all)")
    parser.add_argument("--targeted", action="store_true", help="each bug against its own test files (TARGETED)")
    parser.add_argument("pytest_args", nargs="*", help="tests to run (default: the CPU suite)")
    args = parser.parse_args(argv)
    missed = 0
    for number, what, path, original, broken in BUGS:
        if args.only and number not in args.only:
            continue
        tests = TARGETED[number] if args.targeted else (args.pytest_args or CPU_SUITE)
        record = run_one(number, what, path, original, broken, tests)
        print(json.dumps(record), flush=True)
        missed += not record["caught"]
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
