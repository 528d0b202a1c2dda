"""`gemmlens compare-launches A B [--metric NAME ...] [--json]`: two launches of one report or two, every figure of
the Details view with Δ and Δ %, the largest change first."""

from __future__ import annotations

import argparse

from profiling.commands import print_json
from profiling.errors import InvalidInput

HELP = "compare two launches (FILE[@LAUNCH], LAUNCH an id, label or kernel name): Details figures, change and percent"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("baseline", help="FILE[@LAUNCH]: a report (CSV or .ncu-rep) and a launch (default: its first)")
    parser.add_argument("candidate", help="FILE[@LAUNCH]: the same file or another one")
    parser.add_argument("--metric", action="append", default=[], help="also compare this metric (repeatable)")
    parser.add_argument("--json", action="store_true", help="strict JSON (nulls where a launch lacks a value)")


def _pick(spec: str):  # -> tuple[str, KernelLaunch]
    from pathlib import Path

    from profiling import usecases

    path, _, wanted = spec.partition("@")
    if not Path(path).is_file() and "@" in spec:  # a file name with an "@" in it
        path, wanted = spec, ""
    report = usecases.load_report(path)
    if not wanted:
        return Path(path).name, report.launches[0]
    for launch in report.launches:
        if wanted in (launch.id, launch.label, launch.function, launch.name):
            return Path(path).name, launch
    found = [launch for launch in report.launches if wanted in launch.label or wanted in launch.name]
    if len(found) == 1:
        return Path(path).name, found[0]
    listed = ", ".join(f"{launch.id}: {launch.label}" for launch in report.launches[:12])
    what = "matches several launches" if found else "matches no launch"
    raise InvalidInput(f"'{wanted}' {what} of {Path(path).name}; its launches: {listed}")


def run(args: argparse.Namespace) -> int:
    from profiling.analysis import launch_compare as C

    baseline, candidate = _pick(args.baseline), _pick(args.candidate)
    document = C.comparison_document(baseline, candidate, args.metric)
    if args.json:
        print_json(document)
        return 0
    a, b = document["baseline"], document["candidate"]
    print(f"baseline:  {a['label']} ({a['report']} #{a['id']})")
    print(f"candidate: {b['label']} ({b['report']} #{b['id']})")
    for row in document["metrics"]:
        pct = "-" if row["delta_pct"] is None else f"{row['delta_pct']:+.1f} %"
        base = "-" if row["baseline"] is None else f"{row['baseline']:,.4g}"
        cand = "-" if row["candidate"] is None else f"{row['candidate']:,.4g}"
        print(f"{row['label'][:34]:34} {base:>14} {cand:>14} {pct:>10}  {row['change']}")
    return 0
