"""Time the report parser, and measure its memory on a big raw page.

Two checks, both on input built from a real capture (tests/fixtures/ncu/raw.csv by default: its header, units
row and launch rows are kept; launch rows are repeated with new IDs):

- timing (default): a raw page of 1,000 launches x 300 columns (columns cut or repeated to 300) parses in
  under 2 s;
- memory and speed (`--size-mb 200`): a raw page of about that size, with every column of the capture, is
  parsed in a fresh child process (from a file, and from bytes as an upload is), which reports its peak RSS
  (`resource.getrusage`, so the interpreter and imports count too), its CPU time and wall time. Targets: peak
  RSS at most 4x the file size, 20 MB/s or faster in CPU time (wall time is printed too: on a shared machine it
  also counts the other processes' turns).

- the whole `report --json` command (`--size-mb 100 --report-json`): `python -m profiling report FILE --json` in
  a child process, its stdout read and counted here; CPU time (user + sys, interpreter start and imports
  included) from wait4, peak RSS from the child's VmHWM. It runs on two pages: a long one of about `--size-mb`
  (every column of the capture) and a wide one of `--wide-launches` rows x `--wide-columns` columns (221 x
  100,000 by default, about 183 MB; `--wide-columns 0` leaves it out). Targets: 20 MB/s of input or faster in
  CPU time, peak RSS at most 3x the file. `--baseline DIR` runs the same command from another checkout (e.g. a
  `git worktree` of an older commit) too, alternately, on the same files, and prints the ratio of their CPU
  times.

Each mode prints OK or MISSED per measurement and exits 1 when a target is missed.

    python scripts/bench_parse.py [--fixture PATH] [--launches 1000] [--columns 300] [--repeat 3]
    python scripts/bench_parse.py --size-mb 200 [--fixture PATH] [--keep PATH]
    python scripts/bench_parse.py --size-mb 100 --report-json [--keep PATH] [--keep-wide PATH] [--baseline DIR]
        [--repeat 1] [--wide-launches 221] [--wide-columns 100000]
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from profiling.nsight.load import load_report  # noqa: E402

TARGET_S = 2.0
TARGET_RSS_X = 4.0
"""Peak RSS of the parsing process, as a multiple of the file size."""
TARGET_MB_S = 20.0

# Runs in a fresh interpreter so that its peak RSS is the parse's alone; prints one JSON line. The libraries the
# parse loads (pandas, numpy, pyarrow) are imported first, so their share of the RSS is known.
_CHILD = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
def status_bytes(field):
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) * 1024 for line in fh if line.startswith(field + ":"))
def rss_now():
    return status_bytes("VmRSS")
before = rss_now()
from profiling.nsight import load, report
import numpy, pandas
try:
    import pyarrow, pyarrow.compute
except ImportError:
    pass
libraries = rss_now()
path, mode = sys.argv[2], sys.argv[3]
start, cpu_start = time.perf_counter(), time.process_time()
if mode == "bytes":
    with open(path, "rb") as fh:
        data = fh.read()
    parsed = report.parse_report_bytes(data, source=path)
else:
    parsed = load.load_report(path)
seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
first = parsed.launches[0]
print(json.dumps({
    "seconds": seconds,
    "cpu_seconds": cpu_seconds,
    # VmHWM, not ru_maxrss: Linux keeps ru_maxrss across fork and exec, so a child of a big parent (pytest after
    # the app tests) would report the parent's size; VmHWM belongs to this process's own address space.
    "peak_rss": status_bytes("VmHWM"),
    "rss_before": before,
    "rss_libraries": libraries,
    "launches": len(parsed.launches),
    "values": len(first.metrics) + len(first.attributes),
}))
"""


def measure(path: Path, mode: str) -> dict[str, float]:
    """Parse `path` in a fresh child process ("file": load_report, "bytes": parse_report_bytes of its bytes, as an
    upload); its seconds, cpu_seconds, peak_rss, rss_before (bare interpreter), rss_libraries, launches, values."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(ROOT), str(path), mode], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"{mode}: the parse failed (exit {done.returncode}): {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


TARGET_COMMAND_RSS_X = 3.0
"""Peak RSS of `report --json`, as a multiple of the file size."""

# `report FILE --json` as the CLI runs it; its peak RSS goes to stderr as the last line, once stdout is written.
_COMMAND_CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
from profiling.cli import main
code = main(["report", sys.argv[2], "--json"])
sys.stdout.flush()
with open("/proc/self/status") as fh:
    peak = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmHWM:"))
print(json.dumps({"code": code, "peak_rss": peak}), file=sys.stderr)
"""


def measure_report_json(path: Path, root: Path = ROOT) -> dict[str, float]:
    """`report PATH --json` with the code of checkout `root`, in a child process: its cpu_seconds (user + sys, from
    wait4: interpreter start and imports count), seconds (wall), peak_rss (VmHWM) and output_bytes (its stdout,
    read and counted here)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", _COMMAND_CHILD, str(root), str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stderr is not None
    written = 0
    while chunk := proc.stdout.read(1 << 20):
        written += len(chunk)
    err = proc.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - start
    last = err.strip().splitlines()[-1] if err.strip() else ""
    if proc.returncode != 0 or not last.startswith("{"):
        raise RuntimeError(f"report --json from {root} failed (exit {proc.returncode}): {err.strip()[-2000:]}")
    return {
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "seconds": seconds,
        "peak_rss": json.loads(last)["peak_rss"],
        "output_bytes": written,
    }


def _read_capture(fixture: Path) -> tuple[list[str], list[str], list[list[str]]]:
    rows = list(csv.reader(io.StringIO(fixture.read_text(encoding="utf-8-sig"))))
    header, units, data = rows[0], rows[1], [r for r in rows[2:] if r]
    if not data:
        raise SystemExit(f"{fixture} has no launch rows")
    return header, units, data


def build_csv(fixture: Path, launches: int, columns: int) -> str:
    """A raw page of `launches` rows x `columns` columns made from the real capture's rows."""
    header, units, data = _read_capture(fixture)
    first_metric = header.index("CC") + 1 if "CC" in header else 11
    picks = list(range(columns)) if len(header) >= columns else list(range(len(header)))
    extra = columns - len(picks)
    metric_span = list(range(first_metric, len(header)))
    picks += [metric_span[i % len(metric_span)] for i in range(extra)]
    names = [header[i] if n < len(header) else f"{header[i]}_{n}" for n, i in enumerate(picks)]
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow(names)
    writer.writerow([units[i] if i < len(units) else "" for i in picks])
    id_col = header.index("ID")
    for n in range(launches):
        row = list(data[n % len(data)])
        row[id_col] = str(n)
        writer.writerow([row[i] if i < len(row) else "" for i in picks])
    return out.getvalue()


def write_big_csv(fixture: Path, size_bytes: int, path: Path) -> int:
    """Write a raw page of at most `size_bytes` to `path` by repeating the capture's launch rows; returns launches."""
    header, units, data = _read_capture(fixture)
    id_col = header.index("ID")

    def line(row: list[str]) -> bytes:
        out = io.StringIO()
        csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerow(row)
        return out.getvalue().encode("utf-8")

    with path.open("wb") as fh:
        written = fh.write(line(header) + line(units))
        n = 0
        while True:
            row = list(data[n % len(data)])
            row[id_col] = str(n)
            text = line(row)
            if written + len(text) > size_bytes:
                return n
            written += fh.write(text)
            n += 1


def _timing(args: argparse.Namespace) -> int:
    text = build_csv(args.fixture, args.launches, args.columns)
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as fh:
        fh.write(text)
        path = Path(fh.name)
    try:
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            report = load_report(path)
            times.append(time.perf_counter() - start)
    finally:
        path.unlink()
    metrics = len(report.launches[0].metrics) + len(report.launches[0].attributes)
    best, worst = min(times), max(times)
    verdict = "OK" if worst < TARGET_S else "TOO SLOW"
    print(
        f"parsed {len(report.launches)} launches x {args.columns} columns ({metrics} metric values each, "
        f"{len(text) / 1e6:.1f} MB) in {best:.3f} s best / {worst:.3f} s worst of {args.repeat}; "
        f"target < {TARGET_S:.1f} s: {verdict}"
    )
    return 0 if worst < TARGET_S else 1


def _memory(args: argparse.Namespace) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="gemmlens-bench-"))
    path = args.keep or tmp / "big_raw.csv"
    try:
        if not path.is_file():
            write_big_csv(args.fixture, int(args.size_mb * 1e6), path)
        size = path.stat().st_size
        ok = True
        for mode in ("file", "bytes"):
            try:
                got = measure(path, mode)
            except RuntimeError as exc:
                print(exc)
                return 1
            ratio = got["peak_rss"] / size
            speed, cpu_speed = size / 1e6 / got["seconds"], size / 1e6 / got["cpu_seconds"]
            passed = ratio <= TARGET_RSS_X and cpu_speed >= TARGET_MB_S
            ok = ok and passed
            print(
                f"{mode}: {size / 1e6:.1f} MB, {got['launches']} launches x {got['values']} values: "
                f"{got['cpu_seconds']:.1f} s CPU ({cpu_speed:.1f} MB/s), {got['seconds']:.1f} s wall ({speed:.1f} "
                f"MB/s; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs), peak RSS "
                f"{got['peak_rss'] / 1e6:.0f} MB ({ratio:.2f}x the file; {got['rss_before'] / 1e6:.0f} MB bare, "
                f"{got['rss_libraries'] / 1e6:.0f} MB with the libraries); targets <= {TARGET_RSS_X:.0f}x and "
                f">= {TARGET_MB_S:.0f} MB/s of CPU time: {'OK' if passed else 'MISSED'}"
            )
        return 0 if ok else 1
    finally:
        if path.parent == tmp and path.exists():
            path.unlink()
        os.rmdir(tmp)


def _report_json(args: argparse.Namespace) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="gemmlens-bench-"))
    long_path = args.keep or tmp / "big_raw.csv"
    wide_path = args.keep_wide or tmp / "wide_raw.csv"
    try:
        if not long_path.is_file():
            write_big_csv(args.fixture, int(args.size_mb * 1e6), long_path)
        pages = [("long", long_path)]
        if args.wide_columns:
            if not wide_path.is_file():
                wide_path.write_text(build_csv(args.fixture, args.wide_launches, args.wide_columns), encoding="utf-8")
            pages.append(("wide", wide_path))
        ok = True
        for page, path in pages:
            ok = _report_json_page(args, page, path) and ok
        return 0 if ok else 1
    finally:
        for path in (long_path, wide_path):
            if path.parent == tmp and path.exists():
                path.unlink()
        os.rmdir(tmp)


def _report_json_page(args: argparse.Namespace, page: str, path: Path) -> bool:
    """`report PATH --json` measured args.repeat times (alternately with the baseline's); whether it met the targets
    every time."""
    roots = [("this checkout", ROOT)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    size = path.stat().st_size
    ok = True
    best: dict[str, float] = {}
    for _ in range(args.repeat):
        for label, root in roots:  # alternately, so that both see the machine's load alike
            try:
                got = measure_report_json(path, root)
            except RuntimeError as exc:
                print(exc)
                return False
            cpu_speed, speed = size / 1e6 / got["cpu_seconds"], size / 1e6 / got["seconds"]
            ratio = got["peak_rss"] / size
            passed = ratio <= TARGET_COMMAND_RSS_X and cpu_speed >= TARGET_MB_S
            if root == ROOT:
                ok = ok and passed
            best[label] = min(best.get(label, math.inf), got["cpu_seconds"])
            print(
                f"report --json of the {page} page ({label}): {size / 1e6:.1f} MB in, "
                f"{got['output_bytes'] / 1e6:.0f} MB out: {got['cpu_seconds']:.1f} s CPU ({cpu_speed:.1f} MB/s of "
                f"input), {got['seconds']:.1f} s wall ({speed:.1f} MB/s; load average {os.getloadavg()[0]:.1f} on "
                f"{os.cpu_count()} CPUs), peak RSS {got['peak_rss'] / 1e6:.0f} MB ({ratio:.2f}x the file); targets "
                f">= {TARGET_MB_S:.0f} MB/s of CPU time and <= {TARGET_COMMAND_RSS_X:.0f}x: "
                f"{'OK' if passed else 'MISSED'}",
                flush=True,
            )
    if args.baseline:
        print(
            f"{page} page, CPU time, best of {args.repeat}: baseline {best['baseline']:.1f} s, this checkout "
            f"{best['this checkout']:.1f} s: {best['baseline'] / best['this checkout']:.2f}x as fast"
        )
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixture", type=Path, default=ROOT / "tests" / "fixtures" / "ncu" / "raw.csv")
    parser.add_argument("--launches", type=int, default=1000)
    parser.add_argument("--columns", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--size-mb", type=float, help="measure memory and speed on a raw page of this size")
    parser.add_argument("--keep", type=Path, help="with --size-mb: build the page here once and reuse it")
    parser.add_argument(
        "--report-json", action="store_true", help="with --size-mb: measure the whole `report FILE --json` command"
    )
    parser.add_argument("--keep-wide", type=Path, help="with --report-json: the wide page, built here once and reused")
    parser.add_argument("--wide-launches", type=int, default=221, help="with --report-json: rows of the wide page")
    parser.add_argument(
        "--wide-columns", type=int, default=100_000, help="with --report-json: columns of the wide page (0: none)"
    )
    parser.add_argument("--baseline", type=Path, help="with --report-json: also run it from this checkout")
    args = parser.parse_args()
    if not args.fixture.is_file():
        print(f"error: {args.fixture} not found (a real `--page raw` capture is needed)", file=sys.stderr)
        return 2
    if args.report_json or args.baseline:
        if not args.size_mb:
            parser.error("--report-json needs --size-mb")
        return _report_json(args)
    return _memory(args) if args.size_mb else _timing(args)


if __name__ == "__main__":
    raise SystemExit(main())
