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

    python scripts/bench_parse.py [--fixture PATH] [--launches 1000] [--columns 300] [--repeat 3]
    python scripts/bench_parse.py --size-mb 200 [--fixture PATH] [--keep PATH]
"""

from __future__ import annotations

import argparse
import csv
import io
import json
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixture", type=Path, default=ROOT / "tests" / "fixtures" / "ncu" / "raw.csv")
    parser.add_argument("--launches", type=int, default=1000)
    parser.add_argument("--columns", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--size-mb", type=float, help="measure memory and speed on a raw page of this size")
    parser.add_argument("--keep", type=Path, help="with --size-mb: build the page here once and reuse it")
    args = parser.parse_args()
    if not args.fixture.is_file():
        print(f"error: {args.fixture} not found (a real `--page raw` capture is needed)", file=sys.stderr)
        return 2
    return _memory(args) if args.size_mb else _timing(args)


if __name__ == "__main__":
    raise SystemExit(main())
