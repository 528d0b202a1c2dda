"""Time the source-page parser on a 10 MB export (target: under 2 s) and the explanation of two launches after
parsing (target: under 200 ms), on this machine's CPU: the `explain` command's ranking and text, and the Why
page's whole Explain view (profiling.app.why.explain_step: ranking, tables, code diff, stall frame, hottest lines,
and the stall figure).

The 10 MB page is built from a real capture (results/h100-2026-11-22/source_why_4096_cuda_sass.csv.gz): its
kernel sections, header rows and instruction rows are kept as ncu wrote them and whole sections are repeated
until the text reaches the size asked for. The explanation uses the same capture's raw page and source page.

    python scripts/bench_source.py [--mb 10] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gzip
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from profiling.analysis import explain as X  # noqa: E402
from profiling.app import why  # noqa: E402
from profiling.charts.stalls import stall_figure  # noqa: E402
from profiling.commands.explain import format_explanation  # noqa: E402
from profiling.nsight import source_load as SL  # noqa: E402
from profiling.nsight.load import load_report  # noqa: E402

CAPTURE = ROOT / "results" / "h100-2026-11-22"
PARSE_TARGET_S = 2.0
EXPLAIN_TARGET_S = 0.2


def build_page(capture: Path, megabytes: float) -> str:
    """The capture's text, then its kernel sections again in turn until the text is `megabytes` long."""
    text = gzip.open(capture, "rt").read()
    marker = '"File Path"'
    body = text[text.index(marker) :]
    sections = [marker + part for part in body.split(marker)[1:]]
    out, size, n = [text], len(text), 0
    while size < megabytes * 1e6:
        section = sections[n % len(sections)]
        out.append(section)
        size += len(section)
        n += 1
    return "".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=10.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    page_path, raw_path = CAPTURE / "source_why_4096_cuda_sass.csv.gz", CAPTURE / "ncu_why_4096_raw.csv"
    for path in (page_path, raw_path):
        if not path.is_file():
            print(f"error: {path} not found (the bundled H100 capture is needed)", file=sys.stderr)
            return 2
    text = build_page(page_path, args.mb)
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as fh:
        fh.write(text)
        path = Path(fh.name)
    try:
        parse_times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            page = SL.read_source_file(path)
            parse_times.append(time.perf_counter() - start)
    finally:
        path.unlink()
    rows = sum(len(k.instructions) for k in page.kernels)
    worst_parse = max(parse_times)
    print(
        f"parsed a {len(text) / 1e6:.1f} MB source page ({len(page.kernels)} kernel sections, {rows:,} instructions) "
        f"in {min(parse_times):.3f} s best / {worst_parse:.3f} s worst of {args.repeat}; target < "
        f"{PARSE_TARGET_S:.1f} s: {'OK' if worst_parse < PARSE_TARGET_S else 'TOO SLOW'}"
    )

    report = load_report(raw_path)
    sources = SL.load_source_page(page_path)
    launches = report.launches
    pairs = X.ladder_steps()
    explain_times = []
    for base_id, cand_id in pairs:
        base, cand = X.find_launch(launches, base_id), X.find_launch(launches, cand_id)
        start = time.perf_counter()
        expl = X.explain(
            base,
            cand,
            reference_before=X.find_launch(launches, "cublas"),
            reference_after=X.find_launch(launches, "cublas"),
            source_before=sources.select(base_id)[0],
            source_after=sources.select(cand_id)[0],
        )
        format_explanation(expl, top=8)
        explain_times.append(time.perf_counter() - start)
    worst_explain = max(explain_times)
    print(
        f"explained {len(pairs)} ladder steps at 4096 (ranking, stall breakdowns, hottest lines, text) in "
        f"{1e3 * min(explain_times):.1f} ms best / {1e3 * worst_explain:.1f} ms worst per step; target < "
        f"{1e3 * EXPLAIN_TARGET_S:.0f} ms: {'OK' if worst_explain < EXPLAIN_TARGET_S else 'TOO SLOW'}"
    )
    worst_view = why_view_times(raw_path, page_path)
    ok = worst_parse < PARSE_TARGET_S and worst_explain < EXPLAIN_TARGET_S and worst_view < EXPLAIN_TARGET_S
    return 0 if ok else 1


def why_view_times(raw_path: Path, page_path: Path) -> float:
    """Load the capture as the Why page does (raw page + both source views), then time its Explain view per
    ladder step; returns the worst step's seconds."""
    start = time.perf_counter()
    data = why.load_capture("bench", raw_path, page_path, page_path.with_name(page_path.name.replace("_cuda", "")))
    load_s = time.perf_counter() - start
    times = []
    for base, cand in why.ladder_pairs(data):
        start = time.perf_counter()
        view = why.explain_step(data, base, cand)
        stall_figure(view.stalls, "cycles", f"{base} -> {cand}", why.kernel_ids(data, [base, cand]))
        times.append(time.perf_counter() - start)
    worst = max(times)
    print(
        f"Why page: loaded the capture (raw page, both source views) in {load_s:.2f} s (once per server, cached); "
        f"Explain view of {len(times)} ladder steps (ranking, tables, diff, stall figure, hot lines) in "
        f"{1e3 * min(times):.1f} ms best / {1e3 * worst:.1f} ms worst per step; target < "
        f"{1e3 * EXPLAIN_TARGET_S:.0f} ms: {'OK' if worst < EXPLAIN_TARGET_S else 'TOO SLOW'}"
    )
    return worst


if __name__ == "__main__":
    raise SystemExit(main())
