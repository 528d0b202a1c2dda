"""Apply deliberate bugs to the verifier, the timer and their neighbours one at a time, run tests, restore.

Evidence for issue 19: every bug must make at least one test fail. Each bug is a literal text replacement,
so the script refuses to run when the code it targets has changed (update the entry instead).

    python scripts/deliberate_bugs.py                          # every bug against the CPU suite
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
    (1, "relative_error compares the output with itself", "profiling/gpu/verify.py",
     "diff = float(xp.linalg.norm(out - ref64))", "diff = float(xp.linalg.norm(out - out.astype(xp.float64)))"),
    (2, "the worker's Problem compares the output with itself", "profiling/gpu/runner.py",
     "            return self.out, self.ref\n", "            return self.out, self.out\n"),
    (3, "NaN outputs not counted", "profiling/gpu/verify.py",
     "return int(xp.isnan(out).sum())", "return 0"),
    (4, "a NaN relative error passes", "profiling/gpu/verify.py",
     '            return "relative error is NaN (the output or the reference holds NaN or infinity)"',
     "            return None"),
    (5, "the cuBLAS HGEMM reference is not verified (error NaN)", "profiling/gpu/runner.py",
     "        out, ref = self.output_and_reference(reference_run)\n",
     "        if reference_run and self.operation == 'hgemm_addmm':\n"
     "            return Check(float('nan'), 0, 1, tolerance)\n"
     "        out, ref = self.output_and_reference(reference_run)\n"),
    (6, "the timing summary returns the mean as the median", "profiling/gpu/timing.py",
     "    median = statistics.median(ordered)", "    median = statistics.fmean(ordered)"),
    (7, "the 10th percentile is taken at 20", "profiling/gpu/timing.py",
     "for p in (10, 90))", "for p in (20, 90))"),
    (8, "the L2 flush is never issued (timer)", "profiling/gpu/timing.py",
     "        if flush is not None:\n            cuda.runtime.memsetAsync(flush.data.ptr, flush_byte(i),",
     "        if flush is not None and False:\n            cuda.runtime.memsetAsync(flush.data.ptr, flush_byte(i),"),
    (9, "the L2 flush is never handed to the timer (run_task)", "profiling/gpu/runner.py",
     "_time_launches(launch, settings, session.flush_buffer() if settings.flush_l2 else None)",
     "_time_launches(launch, settings, None)"),
    (10, "the repeat budget is ignored", "profiling/gpu/timing.py",
     "    return max(MIN_REPEATS, min(requested, fit))", "    return max(MIN_REPEATS, requested)"),
    (11, "ncu unit conversion: K taken as 1024", "profiling/nsight/units.py",
     '_SI: dict[str, float] = {"K": 1e3, "k": 1e3,', '_SI: dict[str, float] = {"K": 1024.0, "k": 1024.0,'),
    (12, "occupancy: register limit not rounded to the warp allocation granularity", "profiling/analysis/occupancy.py",
     "    warps_per_sm_by_regs = (arch.registers_per_sm // granularity) // np.maximum(regs_per_warp, 1) * granularity",
     "    warps_per_sm_by_regs = arch.registers_per_sm // np.maximum(regs_per_warp, 1)"),
    (13, "compare verdicts: improvement and regression swapped", "profiling/runs/comparison.py",
     '    return "improvement" if (pct < 0) == (better == "lower") else "regression"',
     '    return "regression" if (pct < 0) == (better == "lower") else "improvement"'),
]  # fmt: skip


def run_one(number: int, what: str, path: str, original: str, broken: str, pytest_args: list[str]) -> dict:
    file = ROOT / path
    text = file.read_text()
    if text.count(original) != 1:
        raise SystemExit(f"bug {number} ({what}): its target text is not in {path} exactly once; update the entry")
    file.write_text(text.replace(original, broken))
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf", *pytest_args],
            cwd=ROOT, capture_output=True, text=True,
        )  # fmt: skip
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
    parser.add_argument("pytest_args", nargs="*", help="tests to run (default: the CPU suite)")
    args = parser.parse_args(argv)
    missed = 0
    for number, what, path, original, broken in BUGS:
        if args.only and number not in args.only:
            continue
        record = run_one(number, what, path, original, broken, args.pytest_args or CPU_SUITE)
        print(json.dumps(record), flush=True)
        missed += not record["caught"]
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
