"""Bundled measurements: the committed results/<device>-<date>/ folders, found and loaded."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from profiling.errors import InvalidInput
from profiling.nsight import load as ncu_load
from profiling.nsight import report as ncu_report
from profiling.paths import BUNDLED_RESULTS_DIR
from profiling.runs.convert import bench_run
from profiling.runs.records import SavedRun
from profiling.runs.results import SCHEMA, load_document

_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})$")


@dataclass(frozen=True)
class Bundle:
    """One folder of committed real measurements: results/<device>-<date>/."""

    name: str
    path: Path
    device: dict[str, Any]
    device_name: str
    date: str
    bench_files: tuple[Path, ...]
    ncu_groups: tuple[tuple[Path, ...], ...]
    ncu_reps: tuple[Path, ...]
    other_results: tuple[Path, ...] = ()
    """Results documents that are not the catalog benchmark (e.g. a tuning sweep): shown on their own."""

    @property
    def label(self) -> str:
        """'NVIDIA H200, measured 2026-11-22 (results/h200-2026-11-22)'."""
        return f"{self.device_name}, measured {self.date} (results/{self.name})"


def _ncu_groups(folder: Path) -> tuple[tuple[Path, ...], ...]:
    """ncu CSVs grouped by capture: `X_raw.csv` with its `X_details.csv` (findings), others alone."""
    csvs = sorted(p for p in folder.glob("*.csv") if p.name.startswith("ncu"))
    groups: dict[str, list[Path]] = {}
    for path in csvs:
        stem = path.stem
        key = re.sub(r"_(raw|details|summary)$", "", stem)
        groups.setdefault(key, []).append(path)
    # raw first: it carries every metric; details adds the rule findings
    order = {"raw": 0, "details": 1}
    return tuple(
        tuple(sorted(paths, key=lambda p: order.get(p.stem.rsplit("_", 1)[-1], 2)))
        for _, paths in sorted(groups.items())
    )


def discover_bundles(root: Path = BUNDLED_RESULTS_DIR) -> list[Bundle]:
    """Every results/<device>-<date>/ folder holding a results JSON or an ncu capture, newest first.

    `bench*.json` files form the bundle's benchmark (merged); other results documents in the folder (a
    tuning sweep, say) are kept apart in `other_results`. Files that are not results documents are skipped.
    """
    bundles = []
    if not root.is_dir():
        return []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        bench = []
        for path in sorted(folder.glob("*.json")):
            try:
                bench.append((path, load_document(path)))
            except InvalidInput:
                continue
        groups, reps = _ncu_groups(folder), tuple(sorted(folder.glob("*.ncu-rep")))
        if not bench and not groups and not reps:
            continue
        main = [(p, d) for p, d in bench if p.stem.startswith("bench")] or bench
        others = tuple(p for p, _ in bench if all(p != q for q, _ in main))
        device = dict(main[0][1].get("device") or {}) if main else {}
        match = _DATE.search(folder.name)
        date = match.group(1) if match else (bench[0][1].get("created_utc", "")[:10] if bench else "unknown date")
        name = device.get("name") or folder.name.removesuffix(f"-{date}").upper()
        bundles.append(
            Bundle(
                name=folder.name,
                path=folder,
                device=device,
                device_name=str(name),
                date=date,
                bench_files=tuple(p for p, _ in main),
                ncu_groups=groups,
                ncu_reps=reps,
                other_results=others,
            )
        )
    return sorted(bundles, key=lambda b: (b.date, b.name), reverse=True)


def load_bench(bundle: Bundle) -> dict[str, Any]:
    """The bundle's results documents merged into one (device and settings of the first)."""
    docs = [load_document(p) for p in bundle.bench_files]
    if not docs:
        return {"schema": SCHEMA, "created_utc": bundle.date, "device": bundle.device, "settings": {}, "results": []}
    merged = dict(docs[0])
    merged["results"] = [r for d in docs for r in d["results"]]
    merged["sources"] = [p.name for p in bundle.bench_files]
    return merged


def load_results_file(path: Path) -> dict[str, Any]:
    """One results document (see profiling.runs.results.load_document)."""
    return load_document(path)


def load_bundle_reports(bundle: Bundle) -> list[tuple[str, ncu_report.Report]]:
    """(name, Report) per ncu capture in the bundle; a raw page gets its details page's findings merged in."""
    out = []
    for group in bundle.ncu_groups:
        report = ncu_load.load_report(group[0])
        for extra in group[1:]:
            ncu_report.merge_findings(report, ncu_load.load_report(extra))
        out.append((group[0].name, report))
    return out


EARLIER = "earlier"
"""A bundle's subfolder of earlier real runs of the same benchmark (an older commit, the same GPU): saved with the
bundle's runs, they give the Review page a baseline/candidate pair of real measurements. Not a device bundle of its
own: discover_bundles() reads only top-level folders, and only a bundle's top-level files."""


def bundled_runs(bundle: Bundle) -> list[SavedRun]:
    """Runs (to save in the run store) of the bundle's results files, labelled with device, date and file; then the
    earlier runs in its `earlier/` folder, labelled with their time."""
    runs = [
        bench_run(load_document(p), label=f"bundled {bundle.device_name} {bundle.date} {p.stem}")
        for p in bundle.bench_files
    ]
    for p in sorted((bundle.path / EARLIER).glob("bench*.json")):
        doc = load_document(p)
        when = str(doc.get("created_utc", ""))[11:16]
        runs.append(
            bench_run(doc, label=f"bundled {bundle.device_name} {bundle.date} {p.stem} (earlier run, {when} UTC)")
        )
    return runs
