"""`python -m profiling compare BASELINE CANDIDATE [--fail-if-slower PCT]`: compare two runs, for CI.

Each side is a run id in the run store or a results JSON file (a bench file, a one-run export, or a
`report --json` file). Verdicts follow profiling.runs.verdict: the bootstrap interval of the median-time
ratio beside each. Exit status: 0, or 1 when --fail-if-slower is given and a kernel/size present in both is
"slower" by the same rule with PCT as the threshold, or went from ok to wrong/failed; 2 on bad input, and on
runs from different GPU models unless --cross-gpu.
"""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from profiling.commands import percentage
from profiling.errors import InvalidInput
from profiling.runs.records import SavedRun
from profiling.runs.values import iso_utc
from profiling.runs.verdict import DEFAULT_THRESHOLD_PCT

if TYPE_CHECKING:
    import pandas as pd

    from profiling.runs.store import RunStore

HELP = "compare a candidate run with a baseline (run ids or results JSON files); exit 1 on a regression"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("baseline", help="run id in the store, or a results JSON file")
    parser.add_argument("candidate", help="run id in the store, or a results JSON file")
    parser.add_argument(
        "--fail-if-slower",
        type=percentage("--fail-if-slower"),
        metavar="PCT",
        help="exit 1 when a kernel/size in both runs is slower than the baseline by more than PCT percent",
    )
    parser.add_argument(
        "--threshold",
        type=percentage("--threshold"),
        default=DEFAULT_THRESHOLD_PCT,
        metavar="PCT",
        help="practical threshold: a smaller change in time is 'same' (default %(default)s%%)",
    )
    parser.add_argument(
        "--cross-gpu",
        action="store_true",
        help="compare runs from different GPU models (labelled cross-GPU); without it they are not comparable",
    )
    parser.add_argument(
        "--db",
        metavar="URL",
        help="SQLAlchemy URL of the run store (default: GEMMLENS_DB_URL or ~/.local/share/gemmlens/runs.sqlite)",
    )


def _load(spec: str, stores: dict[str, RunStore], db: str | None) -> SavedRun:
    path = Path(spec)
    if path.exists():
        if path.is_dir():
            raise InvalidInput(f"{spec} is a directory, not a results JSON file")
        from profiling.runs.convert import read_run_file

        return read_run_file(path)
    if re.fullmatch(r"\d+", spec.strip()):
        if "store" not in stores:
            # Reading only: never create an empty store just to say the run is not there.
            from profiling.runs.store import RunStore

            stores["store"] = RunStore(db, create=False)
        return stores["store"].read_run(int(spec))
    raise InvalidInput(f"{spec!r} is neither a run id nor an existing results file")


def _table(comparison: pd.DataFrame) -> str:
    wanted = {"time_median_ms": "ms", "tflops": "TFLOP/s", "pct_cublas": "%cuBLAS"}
    rows: list[dict[str, Any]] = []
    notes: dict[str, list[str]] = {}  # note -> the pairs it is said of: a shared reason is printed once
    for (kernel, size), part in comparison.groupby(["kernel", "size"], sort=False):
        by_metric = {r["metric"]: r for _, r in part.iterrows()}
        row: dict[str, Any] = {"kernel": kernel, "size": size}
        status = by_metric["status"]
        row["status"] = (
            status["candidate"] if status["verdict"] == "same" else f"{status['baseline']}->{status['candidate']}"
        )
        for key, short in wanted.items():
            r = by_metric.get(key)
            if r is None:
                continue
            row[f"base {short}"] = _fmt(r["baseline"])
            row[f"cand {short}"] = _fmt(r["candidate"])
            if key == "time_median_ms":
                row["Δ time [95% interval]"] = r["interval"] or _pct(r["delta_pct"])
                row["verdict"] = r["verdict"] if status["verdict"] != "regression" else "regression"
                if row["verdict"] == "no verdict":
                    row["verdict"] = "-"  # the Δ column already says "..., no verdict"
                if r["note"]:
                    notes.setdefault(r["note"], []).append(f"{kernel} {size}".strip())
        rows.append(row)
    import pandas as pd

    text = pd.DataFrame(rows).to_string(index=False)
    lines = []
    for note, pairs in notes.items():
        if len(pairs) == 1:
            lines.append(f"  {pairs[0]}: {note}")
        else:
            lines.append(f"  {'all ' if len(pairs) == len(rows) else ''}{len(pairs)} kernel/size pairs: {note}")
    return text + ("\n\nnotes:\n" + "\n".join(lines) if lines else "")


def _fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{float(value):.4g}"


def _pct(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{float(value):+.1f}%"


NOT_COMPARED_SHOWN = 12


def _not_compared(only: pd.DataFrame) -> str:
    """A count per side, then the first NOT_COMPARED_SHOWN pairs a line each: a long list stays readable."""
    sides = only["only_in"].value_counts()
    counts = ", ".join(f"{sides.get(side, 0)} only in the {side}" for side in ("baseline", "candidate"))
    lines = [f"not compared (in one run only): {len(only)} kernel/size pair(s): {counts}"]
    lines += [f"  {r.kernel} {r.size}".rstrip() + f" ({r.only_in})" for r in only.head(NOT_COMPARED_SHOWN).itertuples()]
    if len(only) > NOT_COMPARED_SHOWN:
        lines.append(f"  ... and {len(only) - NOT_COMPARED_SHOWN} more")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    # The heavy libraries load here, not at import: `gemmlens --help` imports every command module.
    import sqlalchemy as sa

    from profiling.runs.comparison import compare_runs, slower_than, undecided, unmatched
    from profiling.runs.verdict import comparability

    if args.db is not None:
        # A mistyped --db must not pass unnoticed in CI just because both sides were files.
        try:
            sa.engine.make_url(args.db)
        except sa.exc.ArgumentError as exc:
            raise InvalidInput(f"--db: not a database URL: {args.db!r} (e.g. sqlite:///runs.sqlite)") from exc
    stores: dict[str, RunStore] = {}
    try:
        baseline = _load(args.baseline, stores, args.db)
        candidate = _load(args.candidate, stores, args.db)
    finally:
        for s in stores.values():
            s.close()
    guard = comparability(baseline, candidate, cross_gpu=args.cross_gpu)
    if not guard.comparable and args.fail_if_slower is not None:
        raise InvalidInput(f"{guard.label()}: a CI gate needs two runs on the same GPU model")
    threshold = args.fail_if_slower if args.fail_if_slower is not None else args.threshold
    comparison = compare_runs(baseline, [candidate], threshold_pct=threshold, cross_gpu=args.cross_gpu)
    if comparison.empty:
        raise InvalidInput(f"nothing to compare: {args.baseline} and {args.candidate} have no kernel/size in common")
    print(f"baseline:  {_describe(baseline, args.baseline)}")
    print(f"candidate: {_describe(candidate, args.candidate)}")
    print(f"{'WARNING: ' if guard.differences else ''}{guard.label()}")
    print(f"verdicts: 95% bootstrap interval of the median-time ratio; practical threshold {threshold:g}%")
    print()
    print(_table(comparison))
    only = unmatched(baseline, candidate)
    if not only.empty:
        print("\n" + _not_compared(only))
    if args.fail_if_slower is None:
        return 0
    bad = slower_than(comparison, args.fail_if_slower)
    unsure = undecided(comparison, args.fail_if_slower)
    if not unsure.empty:
        pairs = ", ".join(f"{r.kernel} {r.size}".strip() + f" ({r.interval})" for r in unsure.itertuples())
        print(
            f"\nNOTE: {len(unsure)} pair(s) grew past {args.fail_if_slower:g}% but their interval includes no "
            f"change (noisy, not failed): {pairs}; rerun with more --repeats to decide"
        )
    if bad.empty:
        print(f"\nOK: nothing slower than the baseline by more than {args.fail_if_slower:g}%")
        return 0
    items = []
    for r in bad.itertuples():
        if r.metric == "status":
            what = f"{r.baseline}->{r.candidate}"
        else:
            # The gate falls back to the medians where a run saved no launches, and says there is no interval.
            has_interval = isinstance(r.ratio_low, (int, float)) and math.isfinite(r.ratio_low)
            what = r.interval if has_interval else f"{_pct(r.delta_pct)}, medians only, no interval"
        items.append(f"{r.kernel} {r.size}".strip() + f" ({what})")
    print(
        f"\nFAIL: {len(items)} kernel/size pair(s) slower than the baseline by more than "
        f"{args.fail_if_slower:g}% or no longer ok: {', '.join(items)}"
    )
    return 1


def _describe(run: SavedRun, spec: str) -> str:
    device = run.device.name or "unknown device"
    ident = f"run {run.id}" if run.id is not None else spec
    return f"{ident} '{run.label}' ({run.kind}, {device}, {iso_utc(run.created)})"
