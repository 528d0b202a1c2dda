"""Time the report parser on a raw page of 1,000 launches x 300 columns (target: under 2 s on the CPU).

The input is built from a real capture (tests/fixtures/ncu/raw.csv): its header, units row and launch
rows are kept, columns are cut or repeated to 300, and launch rows are repeated with new IDs to 1,000.

    python scripts/bench_parse.py [--fixture PATH] [--launches 1000] [--columns 300] [--repeat 3]
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from profiling.nsight.load import load_report  # noqa: E402

TARGET_S = 2.0


def build_csv(fixture: Path, launches: int, columns: int) -> str:
    """A raw page of `launches` rows x `columns` columns made from the real capture's rows."""
    rows = list(csv.reader(io.StringIO(fixture.read_text(encoding="utf-8-sig"))))
    header, units, data = rows[0], rows[1], [r for r in rows[2:] if r]
    if not data:
        raise SystemExit(f"{fixture} has no launch rows")
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixture", type=Path, default=ROOT / "tests" / "fixtures" / "ncu" / "raw.csv")
    parser.add_argument("--launches", type=int, default=1000)
    parser.add_argument("--columns", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not args.fixture.is_file():
        print(f"error: {args.fixture} not found (a real `--page raw` capture is needed)", file=sys.stderr)
        return 2
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


if __name__ == "__main__":
    raise SystemExit(main())
