"""`python -m profiling explain BASELINE CANDIDATE [--json]`: what changed between two launches and how much each
change explains of the time. A launch is a catalog id (found in `--data` reports, else in the bundled full-set
captures results/*/ncu_why_<size>_raw.csv, the largest size unless --size) or `FILE[:kernel]`. The first line says
which capture and launches were used. `--ladder` prints the summary of every step."""

from __future__ import annotations

import argparse
import difflib
import re
from pathlib import Path

from profiling.analysis import explain as X
from profiling.commands import print_json, whole_number
from profiling.errors import InvalidInput
from profiling.nsight import load as ncu_load
from profiling.nsight import source as S
from profiling.nsight import source_load as SL
from profiling.nsight.report import KernelLaunch, Report
from profiling.paths import BUNDLED_RESULTS_DIR, SOURCE_ROOT

HELP = "explain a step: the counters that moved most between two launches, ranked by how much they explain"
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
        self.data_text = " and ".join(args.data)  # what the catalog ids were looked up in, said in the output
        if not self.reports:
            captures = bundled_captures()
            if not captures:
                raise InvalidInput("no bundled full-set captures (results/*/ncu_why_*_raw.csv); give --data REPORT")
            size = self.size or max(captures)
            if size not in captures:
                raise InvalidInput(f"no bundled capture at size {size}; there are: {', '.join(map(str, captures))}")
            raw = captures[size]
            self.reports = [ncu_load.load_report(raw)]
            self.data_text = f"the bundled capture {_shown(raw)} (size {size}; --size or --data for another)"
            page = raw.with_name(f"source_why_{size}_cuda_sass.csv.gz")
            if page.is_file() and not self.pages:
                self.pages = [SL.load_source_page(page)]

    def launch(self, text: str) -> KernelLaunch:
        if not text.strip():
            raise InvalidInput(
                "BASELINE and CANDIDATE must name a launch (a catalog id such as v3, or FILE[:kernel]), not empty text"
            )
        path, _, selector = text.partition(":")
        if Path(path).is_file():
            report = ncu_load.load_report(path, ncu=self.ncu)
            return pick(report.launches, selector or None, source=path)
        launches = [x for r in self.reports for x in r.launches]
        return pick(launches, text, source="the data", size=self.size)

    def origin(self, text: str) -> str:
        """Where the launch named by `text` was found: its FILE, or the data the catalog ids are looked up in."""
        path = text.partition(":")[0]
        return _shown(Path(path)) if Path(path).is_file() else self.data_text

    def reference(self, launch: KernelLaunch) -> KernelLaunch | None:
        return X.reference_launch([x for r in self.reports for x in r.launches], launch)

    def source(self, launch: KernelLaunch) -> S.KernelSource | None:
        ident = launch.identity
        for page in self.pages:
            for kernel in page.kernels:
                if ident.ours and kernel.catalog_id == ident.kernel_id:
                    return kernel
        return None


def _shown(path: Path) -> str:
    """A path as the reader can open it: relative to the checkout for bundled files, else as given."""
    try:
        return str(path.resolve().relative_to(SOURCE_ROOT))
    except ValueError:
        return str(path)


def close_matches(selector: str, names: list[str]) -> list[str]:
    """Names the reader may have meant: those that start with `selector` (v9 -> v9-regdb), then spelling
    neighbours."""
    starts = [n for n in names if n.startswith(selector)]
    return list(dict.fromkeys(starts + difflib.get_close_matches(selector, names, n=3, cutoff=0.6)))[:3]


def pick(launches: list[KernelLaunch], selector: str | None, source: str, size: int | None = None) -> KernelLaunch:
    """One launch by catalog id, launch ID ('#3') or a piece of its function name; InvalidInput naming the choices."""
    if selector is None:
        if len(launches) == 1:
            return launches[0]
        candidates = launches
    elif selector.startswith("#"):
        candidates = [x for x in launches if x.id == selector[1:]]
    else:
        by_id = X.kernel_launches(launches, selector, size)
        candidates = by_id or [x for x in launches if selector in x.name]
        functions = list(dict.fromkeys(x.function for x in candidates))
        if not by_id and len(functions) > 1:
            raise InvalidInput(
                f"'{selector}' is part of the names of {len(functions)} kernels in {source} "
                f"({', '.join(functions[:5])}): name one catalog id or launch ('#3')"
            )
    if candidates and (len(candidates) == 1 or selector is not None):
        return candidates[0]  # a catalog id or name may match repeated launches: the first one
    labels = ", ".join(dict.fromkeys(x.label for x in launches))
    what = f"'{selector}'" if selector else "which launch (FILE:kernel)"
    ids = list(dict.fromkeys(x.identity.kernel_id for x in launches if x.identity.ours))
    near = close_matches(selector, ids) if selector else []
    hint = f": did you mean {' or '.join(near)}? It has" if near else "; it has"
    raise InvalidInput(f"{source} has no single launch for {what}{hint}: {labels[:600]}")


def format_explanation(expl: X.Explanation, top: int) -> str:
    out = [expl.summary]
    if expl.adds:
        out.append(f"  the step adds: {expl.adds}")
    measured = []
    if expl.tflops_before and expl.tflops_after:
        measured.append(f"{expl.tflops_before:.2f} -> {expl.tflops_after:.2f} TFLOP/s")
    if expl.pct_of_reference_before and expl.pct_of_reference_after:
        measured.append(
            f"{expl.pct_of_reference_before:.0f}% -> {expl.pct_of_reference_after:.0f}% of {expl.reference_name}"
        )
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
    results, used = [], []
    for base_text, cand_text in pairs:
        try:
            base, cand = resolver.launch(base_text), resolver.launch(cand_text)
        except InvalidInput:
            if args.ladder:
                continue  # a step whose kernels are not in the data
            raise
        if base is cand:
            raise InvalidInput(
                f"'{base_text}' and '{cand_text}' are the same launch ({base.label}): name two different ones"
            )
        used.append(_used(resolver, base_text, base, cand_text, cand))
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
    if not results:
        raise InvalidInput(f"no ladder step has both of its kernels in {resolver.data_text}")
    if args.json:
        docs = [{**r.to_dict(), "data": u} for r, u in zip(results, used, strict=True)]
        print_json(docs if args.ladder else docs[0])
    elif args.ladder:
        print(f"data: {resolver.data_text}")
        print("\n".join(r.summary for r in results))
    else:
        print(f"data: {used[0]}")
        print(format_explanation(results[0], args.top))
    return 0


def _used(resolver: Resolver, base_text: str, base: KernelLaunch, cand_text: str, cand: KernelLaunch) -> str:
    """Which launches were compared and where they were found, for the first line of the output."""
    where = [resolver.origin(base_text), resolver.origin(cand_text)]
    if where[0] == where[1]:
        return f"{base.label} and {cand.label} from {where[0]}"
    return f"{base.label} from {where[0]}, {cand.label} from {where[1]}"
