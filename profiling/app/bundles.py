"""Bundled measurements: the committed results/<device>-<date>/ folders, found and loaded."""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from profiling.device_model import DeviceInfo
from profiling.errors import InvalidInput
from profiling.nsight import load as ncu_load
from profiling.nsight import report as ncu_report
from profiling.paths import BUNDLED_RESULTS_DIR
from profiling.runs.convert import bench_run
from profiling.runs.records import SavedRun
from profiling.runs.results import ResultsDocument, load_document, merge_documents

_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})$")


@dataclass(frozen=True)
class Bundle:
    """One folder of committed real measurements: results/<device>-<date>/."""

    name: str
    path: Path
    device: DeviceInfo
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


_PAGE = re.compile(r"^(raw|details|summary)_|_(raw|details|summary)$")
"""The page an ncu CSV export holds, from its name: `ncu_ladder_1024_raw.csv` or, in a run's subfolder, `raw_4096.csv`."""


def _ncu_groups(folder: Path) -> tuple[tuple[Path, ...], ...]:
    """ncu CSVs grouped by capture: `X_raw.csv` with its `X_details.csv` (findings), others alone."""
    csvs = sorted(p for p in folder.glob("*.csv") if p.name.startswith("ncu") or _PAGE.search(p.stem))
    groups: dict[str, list[Path]] = {}
    for path in csvs:
        groups.setdefault(_PAGE.sub("", path.stem), []).append(path)

    def page(path: Path) -> str:
        found = _PAGE.search(path.stem)
        return (found.group(1) or found.group(2)) if found else ""

    # raw first: it carries every metric; details adds the rule findings
    order = {"raw": 0, "details": 1}
    return tuple(tuple(sorted(paths, key=lambda p: order.get(page(p), 2))) for _, paths in sorted(groups.items()))


def discover_bundles(root: Path = BUNDLED_RESULTS_DIR) -> list[Bundle]:
    """Every committed results folder, newest first: each results/<device>-<date>/ folder holding a results JSON
    or an ncu capture, and each of its subfolders (one run of the day: `auto_round3/`, `wgmma_store/`) holding a
    benchmark document (`*bench*.json`). Newest = the latest date, then the latest benchmark document written.

    A folder's `bench*.json` files (in a subfolder, its `*bench*.json`) form the bundle's benchmark (merged);
    other results documents in the folder (a tuning sweep, say) are kept apart in `other_results`. Files that are
    not results documents are skipped.
    """
    found: list[tuple[str, Bundle]] = []
    for folder, name, date, is_top in _results_folders(root):
        found_here = _bundle(folder, name, date, bench_prefix=is_top)
        # A run subfolder is a bundle only with a benchmark document.
        if found_here is not None and (is_top or found_here[1].bench_files):
            found.append(found_here)
    found.sort(key=lambda item: (item[1].date, item[0], item[1].name), reverse=True)
    return [b for _, b in found]


def _results_folders(root: Path) -> Iterator[tuple[Path, str, str | None, bool]]:
    """(folder, bundle name, date from the day folder's name or None, whether it is a day folder) of each
    results/<device>-<date>/ folder and, after it, each of its subfolders but EARLIER ones, in a fixed order."""
    if not root.is_dir():
        return
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        match = _DATE.search(folder.name)
        date = match.group(1) if match else None
        yield folder, folder.name, date, True
        for sub in sorted(p for p in folder.iterdir() if p.is_dir() and p.name != EARLIER):
            yield sub, f"{folder.name}/{sub.name}", date, False


def bundle_files(root: Path = BUNDLED_RESULTS_DIR) -> list[Path]:
    """The files discover_bundles reads or lists: every `*.json`, ncu CSV and `.ncu-rep` of the folders it looks in
    (_results_folders), in a fixed order."""
    return [
        path
        for folder, *_ in _results_folders(root)
        for path in sorted(folder.iterdir())
        if path.suffix in (".json", ".csv", ".ncu-rep") and path.is_file()
    ]


def indexed_bundles(root: Path = BUNDLED_RESULTS_DIR) -> list[Bundle]:
    """discover_bundles(root), kept on disk (profiling.app.precompute) under a key of every file's path, size and
    modification time and of this package's code: it parses 30 MB of JSON (0.3 s of a fresh server's first visit),
    to learn from each document little more than its device and date. `python -m profiling.app.prebuild` builds it."""
    from profiling.app import precompute

    stats = hashlib.sha256()
    for path in bundle_files(root):
        info = path.stat()
        stats.update(f"{path.relative_to(root)}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    key = precompute.content_key([], [sys.modules[__name__], sys.modules[load_document.__module__]])
    stats.update(key.encode() + str(root.resolve()).encode())
    return precompute.cached_object("bundle-index", stats.hexdigest()[:32], lambda: discover_bundles(root))


def _bundle(folder: Path, name: str, date: str | None, bench_prefix: bool) -> tuple[str, Bundle] | None:
    """(when its newest benchmark document was written, the Bundle) of one folder; None when it holds no data."""
    docs = []
    for path in sorted(folder.glob("*.json")):
        try:
            docs.append((path, load_document(path)))
        except InvalidInput:
            continue
    groups, reps = _ncu_groups(folder), tuple(sorted(folder.glob("*.ncu-rep")))
    if not docs and not groups and not reps:
        return None
    is_bench = (lambda p: p.stem.startswith("bench")) if bench_prefix else (lambda p: "bench" in p.stem)
    main = [(p, d) for p, d in docs if is_bench(p)] or (docs if bench_prefix else [])
    others = tuple(p for p, _ in docs if all(p != q for q, _ in main))
    device = main[0][1].device if main else DeviceInfo()
    date = date or (docs[0][1].created_utc[:10] if docs else "unknown date")
    device_name = device.name or name.split("/")[0].removesuffix(f"-{date}").upper()
    written = max((d.created_utc for _, d in main), default="")
    bundle = Bundle(
        name=name,
        path=folder,
        device=device,
        device_name=str(device_name),
        date=date,
        bench_files=tuple(p for p, _ in main),
        ncu_groups=groups,
        ncu_reps=reps,
        other_results=others,
    )
    return written, bundle


def load_bench(bundle: Bundle) -> ResultsDocument:
    """The bundle's results documents merged into one (device and settings of the first)."""
    docs = [load_document(p) for p in bundle.bench_files]
    if not docs:
        return ResultsDocument(created_utc=bundle.date, device=bundle.device)
    return merge_documents(docs, [p.name for p in bundle.bench_files])


def load_results_file(path: Path) -> ResultsDocument:
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
    run = bundle.name.partition("/")[2]  # a run of the day kept in its own subfolder: its name tells runs apart
    runs = [
        bench_run(
            load_document(p), label=f"bundled {bundle.device_name} {bundle.date} {run + '/' if run else ''}{p.stem}"
        )
        for p in bundle.bench_files
    ]
    for p in sorted((bundle.path / EARLIER).glob("bench*.json")):
        doc = load_document(p)
        when = doc.created_utc[11:16]
        runs.append(
            bench_run(doc, label=f"bundled {bundle.device_name} {bundle.date} {p.stem} (earlier run, {when} UTC)")
        )
    return runs
