"""`python -m profiling explain BASELINE CANDIDATE [--json]`: what changed between two launches and how much each
change explains of the time. A launch is a catalog id (found in `--data` reports, else in the bundled full-set
captures results/*/ncu_why_<size>_raw.csv) or `FILE[:kernel]`. `--ladder` prints the summary of every step."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from kernels.catalog import CATALOG, reference_for
from profiling.analysis import explain as X
from profiling.commands import print_json, whole_number
from profiling.errors import InvalidInput
from profiling.nsight import load as ncu_load
from profiling.nsight import source as S
from profiling.nsight import source_load as SL
from profiling.nsight.report import KernelLaunch, Report, launch_label, match_catalog
from profiling.paths import BUNDLED_RESULTS_DIR

HELP = "Explain a step: the counters that moved most between two launches, ranked by how much they explain"
_WHY_RAW = re.compile(r"ncu_why_(\d+)_raw\.csv$")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("launches", nargs="*", help="BASELINE CANDIDATE: catalog ids, or FILE[:kernel]")
    parser.add_argument("--data", action="append", default=[], help="report(s) the catalog ids are looked up in")
    parser.add_argument(
        "--size", type=whole_number("--size"), default=None, help="M of the launches to use (default: the largest)"
    )
    parser.add_argument("--source", action="append", default=[], help="source page(s) for the hottest lines")
    parser.add_argument("--ladder", action="store_true", help="one summary line per ladder step")
    parser.add_argument("--top", type=whole_number("--top"), default=8, help="ranked items shown (default 8)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--ncu", default=None, help="ncu for .ncu-rep files")


def bundled_captures(root: Path = BUNDLED_RESULTS_DIR) -> dict[int, Path]:
    """Size -> the newest bundled full-set raw page (results/<device>-<date>/ncu_why_<size>_raw.csv)."""
    found: dict[int, Path] = {}
    for path in sorted(root.glob("*/ncu_why_*_raw.csv"), key=lambda p: p.parent.name.split("-", 1)[-1]):
        match = _WHY_RAW.search(path.name)
        if match:
            found[int(match.group(1))] = path
    return found


class Resolver:
    """Finds launches, their cuBLAS references and their source-page kernels in the given or bundled data."""

    def __init__(self, args: argparse.Namespace):
        self.ncu = args.ncu
        self.size = args.size
        self.reports: list[Report] = [ncu_load.load_report(p, ncu=args.ncu) for p in args.data]
        self.pages: list[S.SourcePage] = [SL.load_source_page(p, ncu=args.ncu) for p in args.source]
        if not self.reports:
            captures = bundled_captures()
            if not captures:
                raise InvalidInput("no bundled full-set captures (results/*/ncu_why_*_raw.csv); give --data REPORT")
            size = self.size or max(captures)
            if size not in captures:
                raise InvalidInput(f"no bundled capture at size {size}; there are: {', '.join(map(str, captures))}")
            raw = captures[size]
            self.reports = [ncu_load.load_report(raw)]
            page = raw.with_name(f"source_why_{size}_cuda_sass.csv.gz")
            if page.is_file() and not self.pages:
                self.pages = [SL.load_source_page(page)]

    def launch(self, text: str) -> KernelLaunch:
        path, _, selector = text.partition(":")
        if Path(path).is_file():
            report = ncu_load.load_report(path, ncu=self.ncu)
            return pick(report.launches, selector or None, source=path)
        launches = [x for r in self.reports for x in r.launches]
        return pick(launches, text, source="the data", size=self.size)

    def reference(self, launch: KernelLaunch) -> KernelLaunch | None:
        hit = match_catalog(launch)
        spec = next((s for s in CATALOG if hit and s.id == hit[0]), None)
        ref = reference_for(spec) if spec else None
        if ref is None:
            return None
        return X.find_launch([x for r in self.reports for x in r.launches], ref.id, hit[1])

    def source(self, launch: KernelLaunch) -> S.KernelSource | None:
        hit = match_catalog(launch)
        for page in self.pages:
            for kernel in page.kernels:
                if hit and kernel.catalog_id == hit[0]:
                    return kernel
        return None


def pick(launches: list[KernelLaunch], selector: str | None, source: str, size: int | None = None) -> KernelLaunch:
    """One launch by catalog id, launch ID ('#3') or a piece of its function name; InvalidInput naming the choices."""
    if selector is None:
        if len(launches) == 1:
            return launches[0]
        candidates = launches
    elif selector.startswith("#"):
        candidates = [x for x in launches if x.id == selector[1:]]
    else:
        by_id = [x for x in launches if (hit := match_catalog(x)) and hit[0] == selector]
        if size is not None:
            by_id = [x for x in by_id if match_catalog(x)[1] == size]
        candidates = by_id or [x for x in launches if selector in x.name]
    if candidates and (len(candidates) == 1 or selector is not None):
        return candidates[0]  # a catalog id or name may match repeated launches: the first one
    labels = ", ".join(dict.fromkeys(launch_label(x) for x in launches))
    what = f"'{selector}'" if selector else "which launch (FILE:kernel)"
    raise InvalidInput(f"{source} has no single launch for {what}; it has: {labels[:600]}")


def format_explanation(expl: X.Explanation, top: int) -> str:
    out = [expl.summary]
    if expl.adds:
        out.append(f"  the step adds: {expl.adds}")
    measured = []
    if expl.tflops_before and expl.tflops_after:
        measured.append(f"{expl.tflops_before:.2f} -> {expl.tflops_after:.2f} TFLOP/s")
    if expl.pct_of_reference_before and expl.pct_of_reference_after:
        measured.append(f"{expl.pct_of_reference_before:.0f}% -> {expl.pct_of_reference_after:.0f}% of cuBLAS")
    if measured:
        out.append("  measured: " + ", ".join(measured))
    for n, item in enumerate(expl.top(top), 1):
        out.append(f"  {n}. [{item.score:.2f}] {item.sentence}")
    for side, stalls in (("before", expl.stalls_before), ("after", expl.stalls_after)):
        if stalls is not None:
            parts = ", ".join(f"{r} {v:.2f}" for r, v in stalls.top(4, include_selected=True))
            out.append(f"  stalls {side} ({stalls.total:.2f} warp cycles per issued instruction): {parts}")
    for side, lines in (("before", expl.hot_lines_before), ("after", expl.hot_lines_after)):
        for s in lines[:3]:
            out.append(
                f"  hot line {side}: {s['line']:>4} {s['pct']:5.1f}% {s['dominant_stall']:<17} {s['source'].strip()[:60]}"
            )
    out.extend(f"  warning: {w}" for w in expl.warnings)
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    resolver = Resolver(args)
    if args.ladder:
        pairs = X.ladder_steps()
    elif len(args.launches) == 2:
        pairs = [(args.launches[0], args.launches[1])]
    else:
        raise InvalidInput("give BASELINE and CANDIDATE (catalog ids or FILE[:kernel]), or --ladder")
    results = []
    for base_text, cand_text in pairs:
        try:
            base, cand = resolver.launch(base_text), resolver.launch(cand_text)
        except InvalidInput:
            if args.ladder:
                continue  # a step whose kernels are not in the data
            raise
        results.append(
            X.explain(
                base,
                cand,
                resolver.reference(base),
                resolver.reference(cand),
                resolver.source(base),
                resolver.source(cand),
            )
        )
    if args.json:
        print_json([r.to_dict() for r in results] if args.ladder else results[0].to_dict())
    elif args.ladder:
        print("\n".join(r.summary for r in results))
    else:
        print(format_explanation(results[0], args.top))
    return 0
