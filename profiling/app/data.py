"""What the pages show, as pure functions: bundled data, uploads, tables, figures and GPU job bodies.

Nothing here imports Streamlit, so every function is tested directly on the bundled real measurements
(results/<device>-<date>/) and the ncu fixtures.
"""

from __future__ import annotations

import difflib
import html
import json
import math
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from kernels.catalog import CATALOG, KernelSpec
from kernels.registry import get_kernel
from profiling.analysis.device_model import Ceilings, best_ceilings
from profiling.errors import InvalidInput, ReportError
from profiling.gpu.env import tool_path
from profiling.nsight import load as ncu_load
from profiling.nsight import report as ncu_report
from profiling.paths import BUNDLED_RESULTS_DIR
from profiling.runs.results import SCHEMA, load_document, results_frame

MAX_UPLOAD_MB = 200
"""Matches server.maxUploadSize in .streamlit/config.toml and ncu_report.MAX_REPORT_BYTES."""
MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 1000 * 1000
REPORT_SUFFIXES = (".csv", ".txt", ".ncu-rep")
_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})$")
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=&\"'^])")


# ---------------------------------------------------------------------------------------------
# Safe text
# ---------------------------------------------------------------------------------------------


def one_line(text: object, limit: int = 400) -> str:
    """The first non-empty line of a message, cut to `limit` characters."""
    lines = [ln.strip() for ln in str(text).splitlines() if ln.strip()]
    first = lines[0] if lines else ""
    return first if len(first) <= limit else first[: limit - 1] + "…"


def md_escape(text: object) -> str:
    """Backslash-escape every Markdown/HTML-significant character so user text shows literally in st.markdown."""
    return _MD_SPECIAL.sub(r"\\\1", str(text)).replace("\n", " ")


# ---------------------------------------------------------------------------------------------
# Bundled measurements
# ---------------------------------------------------------------------------------------------


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


def bundles_table(bundles: Sequence[Bundle]) -> pd.DataFrame:
    """One row per bundle: folder, device, date and what it holds."""
    return pd.DataFrame(
        [
            {
                "folder": f"results/{b.name}",
                "device": b.device_name,
                "date": b.date,
                "benchmark files": ", ".join(p.name for p in b.bench_files),
                "other results": ", ".join(p.name for p in b.other_results),
                "ncu captures": ", ".join(g[0].name for g in b.ncu_groups),
                ".ncu-rep": ", ".join(p.name for p in b.ncu_reps),
            }
            for b in bundles
        ],
        columns=["folder", "device", "date", "benchmark files", "other results", "ncu captures", ".ncu-rep"],
    )


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


# ---------------------------------------------------------------------------------------------
# Uploads
# ---------------------------------------------------------------------------------------------


def read_upload(name: str, data: bytes, ncu: str | None = None) -> ncu_report.Report:
    """Parse one uploaded report (CSV of any ncu page, ncu stdout, or .ncu-rep through ncu).

    Raises ReportError with a one-line message for empty, oversized, binary, truncated or foreign files.
    """
    shown = Path(name).name or "upload"
    if not data:
        raise ReportError(f"{shown} is empty; expected an Nsight Compute CSV export or a .ncu-rep file")
    if len(data) > MAX_UPLOAD_BYTES:
        raise ReportError(f"{shown} is {len(data) / 1e6:.0f} MB; uploads over {MAX_UPLOAD_MB} MB are not read")
    suffix = Path(shown).suffix.lower()
    if suffix == ".ncu-rep" or data.startswith(ncu_report.NCU_REP_MAGIC):
        from profiling.nsight.tools import find_ncu

        exe = ncu or find_ncu()
        with tempfile.TemporaryDirectory(prefix="gemmlens-upload-") as tmp:
            path = Path(tmp) / (Path(shown).stem + ".ncu-rep")
            path.write_bytes(data)
            if exe is None:
                raise ReportError(
                    f"reading {shown} needs Nsight Compute (ncu), which is not installed here; upload its CSV "
                    "export instead (ncu --import report.ncu-rep --csv --page raw > report.csv)"
                )
            report = ncu_load.load_ncu_rep(path, ncu=exe)
    elif suffix == ".json":
        raise ReportError(
            f"{shown} is JSON; import saved runs on the Review page, reports here are ncu CSV or .ncu-rep"
        )
    else:
        report = ncu_report.parse_report_bytes(data, source=shown)
    report.source = shown
    return report


# ---------------------------------------------------------------------------------------------
# Benchmark tables and charts
# ---------------------------------------------------------------------------------------------

BENCH_TABLE_COLUMNS: dict[str, str] = {
    "kernel": "kernel",
    "size": "size",
    "status": "status",
    "median_ms": "time (ms)",
    "tflops": "TFLOP/s",
    "pct_peak": "% of FP32 peak",
    "pct_cublas": "% of cuBLAS",
    "rel_error": "rel. error",
    "registers": "registers",
    "sm_clock_mhz": "SM clock (MHz)",
    "capped": "clocks capped",
    "clock_events": "clock events",
    "error": "error",
}


def bench_frame(document: Mapping[str, Any]) -> pd.DataFrame:
    """results_frame() sorted by size then catalog order, with `flops` (2MNK) added."""
    frame = results_frame(dict(document))
    if frame.empty:
        return frame
    order = {spec.id: i for i, spec in enumerate(CATALOG)}
    frame["flops"] = 2.0 * frame["m"] * frame["n"] * frame["k"]
    frame["_order"] = frame["kernel"].map(lambda k: order.get(k, len(order)))
    return frame.sort_values(["flops", "_order"]).drop(columns="_order").reset_index(drop=True)


def bench_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The results table the Benchmark page shows: one row per kernel and size, readable column names."""
    view = frame[[c for c in BENCH_TABLE_COLUMNS if c in frame.columns]].copy()
    return view.rename(columns=BENCH_TABLE_COLUMNS)


def sweep_sizes(start: int, stop: int, factor: int = 2) -> list[int]:
    """Square sizes start, start*factor, ... up to stop (inclusive); InvalidInput for a bad range."""
    if start < 1 or stop < start or factor < 2:
        raise InvalidInput(f"a sweep needs 1 <= start <= stop and a factor >= 2 (got {start}..{stop} x{factor})")
    sizes, n = [], start
    while n <= stop and len(sizes) < 64:
        sizes.append(n)
        n *= factor
    return sizes


# ---------------------------------------------------------------------------------------------
# Roofline
# ---------------------------------------------------------------------------------------------


def ceilings_for(device: Mapping[str, Any] | None = None, report: ncu_report.Report | None = None) -> Ceilings:
    """The best ceilings known: the ncu report's own clocks, else the device's properties, else the table."""
    metrics = None
    name = None
    if report is not None and report.launches:
        metrics = {k: m.value for k, m in report.launches[0].metrics.items()}
        name = report.launches[0].attributes.get("device__attribute_display_name")
    info = dict(device) if device else None
    return best_ceilings(ncu_metrics=metrics, device_info=info, device_name=name or (info or {}).get("name"))


# ---------------------------------------------------------------------------------------------
# ncu tables
# ---------------------------------------------------------------------------------------------

KEY_TABLE_COLUMNS: dict[str, tuple[str, float]] = {
    "duration_ns": ("duration (µs)", 1e-3),
    "registers": ("registers", 1),
    "smem_static_bytes": ("smem static (KB)", 1 / 1024),
    "smem_dynamic_bytes": ("smem dynamic (KB)", 1 / 1024),
    "theoretical_occupancy_pct": ("theoretical occ. (%)", 1),
    "achieved_occupancy_pct": ("achieved occ. (%)", 1),
    "shared_ld_bank_conflict_pct": ("ld bank conflicts (%)", 1),
    "shared_ld_n_way": ("ld n-way", 1),
    "shared_st_bank_conflict_pct": ("st bank conflicts (%)", 1),
    "shared_st_n_way": ("st n-way", 1),
    "dram_bytes": ("DRAM (MB)", 1e-6),
    "l2_bytes": ("L2 (MB)", 1e-6),
    "l1_bytes": ("L1 (MB)", 1e-6),
    "fp32_flops_per_second": ("FP32 TFLOP/s", 1e-12),
    "fp32_pct_of_peak": ("% of FP32 peak", 1),
}


def key_metrics_table(reports: Sequence[tuple[str, ncu_report.Report]]) -> pd.DataFrame:
    """One row per launch of every report: launch (unique key), kernel, source, then the key metrics in
    display units (µs, KB, MB, %, TFLOP/s). Launch names come from the files and are plain data."""
    frames = []
    for source, report in reports:
        frame = ncu_report.key_metrics_frame(report)
        out = pd.DataFrame(
            {
                "launch": frame["label"],
                "kernel": frame["catalog_id"].fillna(frame["kernel"]),
                "source": source,
                "block": frame["block"],
                "grid": frame["grid"],
            }
        )
        for column, (title, scale) in KEY_TABLE_COLUMNS.items():
            out[title] = frame[column] * scale
        frames.append(out)
    if not frames:
        return pd.DataFrame(columns=["launch", "kernel", "source", "block", "grid"])
    table = pd.concat(frames, ignore_index=True)
    if len(reports) > 1 or table["launch"].duplicated().any():
        table["launch"] = table["launch"] + " [" + table["source"] + "]"
    dup = table["launch"].duplicated(keep=False)
    table.loc[dup, "launch"] = table.loc[dup, "launch"] + " #" + table.index[dup].astype(str)
    return table


def findings_table(reports: Sequence[tuple[str, ncu_report.Report]]) -> pd.DataFrame:
    """ncu's rule findings: launch, rule, type, estimated speedup (%), description; biggest speedup first."""
    rows = []
    for source, report in reports:
        for launch in report.launches:
            for f in launch.findings:
                rows.append(
                    {
                        "launch": ncu_report.launch_label(launch),
                        "source": source,
                        "rule": f.rule,
                        "type": f.type,
                        "est. speedup (%)": f.estimated_speedup_pct,
                        "description": f.description,
                    }
                )
    frame = pd.DataFrame(rows, columns=["launch", "source", "rule", "type", "est. speedup (%)", "description"])
    return frame.sort_values("est. speedup (%)", ascending=False, na_position="last").reset_index(drop=True)


def compare_launches(table: pd.DataFrame, launches: Sequence[str]) -> pd.DataFrame:
    """Side by side: one row per key metric, one column per chosen launch (in the order given)."""
    chosen = table.set_index("launch").loc[list(launches)]
    metrics = [title for title, _ in KEY_TABLE_COLUMNS.values()]
    out = chosen[metrics].T
    out.index.name = "metric"
    return out


# ---------------------------------------------------------------------------------------------
# Kernels page
# ---------------------------------------------------------------------------------------------


def kernel_diff(spec: KernelSpec) -> str:
    """Unified diff of this kernel's source against its `previous` kernel's ("" when either has none)."""
    if not spec.previous or not spec.source:
        return ""
    prev = get_kernel(spec.previous)
    if not prev.source:
        return ""
    a, b = prev.read_source().splitlines(keepends=True), spec.read_source().splitlines(keepends=True)
    return "".join(difflib.unified_diff(a, b, fromfile=f"{prev.id}: {prev.source}", tofile=f"{spec.id}: {spec.source}"))


def bundled_compile_facts(document: Mapping[str, Any]) -> pd.DataFrame:
    """Compile facts the worker recorded (NVRTC, the bench's arch) per kernel: registers, shared memory,
    local (spill) bytes; one row per kernel, from its first result that has them."""
    rows: dict[str, dict[str, Any]] = {}
    for r in document.get("results", ()):
        comp, launch = r.get("compile") or {}, r.get("launch") or {}
        if not comp or r["kernel"] in rows:
            continue
        rows[r["kernel"]] = {
            "kernel": r["kernel"],
            "arch": comp.get("arch"),
            "backend": comp.get("backend"),
            "registers": comp.get("registers"),
            "shared static (B)": comp.get("shared_static_bytes"),
            "shared dynamic (B)": comp.get("dynamic_smem_bytes", launch.get("dynamic_smem_bytes")),
            "local/spill (B)": comp.get("local_bytes"),
            "max threads/block": comp.get("max_threads_per_block"),
            "blocks/SM": launch.get("max_active_blocks_per_sm"),
        }
    return pd.DataFrame(list(rows.values()))


def nvcc_compile_facts(spec: KernelSpec, arch: str = "sm_90") -> pd.DataFrame:
    """ptxas facts of the catalog entry (nvcc -Xptxas -v); other instantiations in the file are left out.

    Raises RuntimeError when nvcc is missing or fails (see kernels.compile_info.nvcc_resources).
    """
    from kernels.compile_info import entry_matches, nvcc_resources

    if spec.source_path is None or spec.entry is None:
        return pd.DataFrame()
    found, _ = nvcc_resources(spec.source_path, arch=arch)
    matching = [f for f in found if entry_matches(f.name, spec.entry)] or found
    return pd.DataFrame(
        [
            {
                "function": f.name,
                "arch": f.arch,
                "registers": f.registers,
                "barriers": f.barriers,
                "shared static (B)": f.shared_bytes,
                "stack (B)": f.stack_bytes,
                "spill stores (B)": f.spill_store_bytes,
                "spill loads (B)": f.spill_load_bytes,
            }
            for f in matching
        ]
    )


def catalog_table() -> pd.DataFrame:
    """The catalog as a table: id, title, group, operation, previous, source file."""
    return pd.DataFrame(
        [
            {"id": s.id, "title": s.title, "group": s.group, "operation": s.operation,
             "previous": s.previous or "", "source": s.source or "(library)"}
            for s in CATALOG
        ]
    )  # fmt: skip


def kernel_summary(spec: KernelSpec) -> pd.DataFrame:
    """Launch shape and parameters of a catalog entry as a two-column table."""
    rows = [
        ("operation", spec.operation),
        ("dtype", spec.dtype),
        ("entry", spec.entry or "(library)"),
        ("block", "x".join(map(str, spec.block))),
        ("tile (M x N)", f"{spec.tile_m}x{spec.tile_n}"),
        ("grid order", spec.grid_order),
        ("dynamic shared memory (B)", str(spec.dynamic_smem_bytes)),
        ("sizes must be multiples of", str(spec.multiple_of)),
        ("previous", spec.previous or "-"),
        ("group", spec.group),
        *((f"param {k}", str(v)) for k, v in spec.params.items()),
    ]
    return pd.DataFrame(rows, columns=["property", "value"])


# ---------------------------------------------------------------------------------------------
# Overview
# ---------------------------------------------------------------------------------------------


def cuda_version(value: Any) -> str:
    """13020 -> '13.2' (CUDA's integer encoding); other values as given."""
    try:
        v = int(value)
    except (TypeError, ValueError):
        return str(value) if value else "-"
    return f"{v // 1000}.{(v % 1000) // 10}"


def device_rows(device: Mapping[str, Any]) -> pd.DataFrame:
    """The Overview's device table: name, compute capability, SMs, clocks, memory, driver, CUDA, CuPy."""
    mem = device.get("total_memory_bytes")
    rows = [
        ("GPU", device.get("name")),
        ("compute capability", device.get("cc")),
        ("SMs", device.get("sm_count")),
        ("max SM clock (MHz)", device.get("max_sm_clock_mhz")),
        ("max memory clock (MHz)", device.get("max_mem_clock_mhz")),
        ("memory", f"{mem / 2**30:.1f} GiB" if mem else None),
        ("memory bus (bits)", device.get("memory_bus_width_bits")),
        ("L2", f"{device['l2_bytes'] / 2**20:.0f} MiB" if device.get("l2_bytes") else None),
        ("FP32 peak (TFLOP/s)", f"{device['fp32_peak_tflops']:.1f}" if device.get("fp32_peak_tflops") else None),
        ("driver", device.get("driver")),
        ("CUDA runtime", cuda_version(device.get("cuda_runtime"))),
        ("CUDA driver API", cuda_version(device.get("cuda_driver"))),
        ("CuPy", device.get("cupy")),
    ]
    return pd.DataFrame([(k, "-" if v is None else str(v)) for k, v in rows], columns=["property", "value"])


def no_gpu_device_nodes(dev: Path = Path("/dev")) -> str | None:
    """On Linux, why no NVIDIA GPU can be present (no /dev/nvidia* or WSL /dev/dxg node), else None.

    Lets the app skip starting a worker child just to learn there is no GPU.
    """
    import sys

    if not sys.platform.startswith("linux") or not dev.is_dir():
        return None
    if any(dev.glob("nvidia[0-9]*")) or (dev / "nvidiactl").exists() or (dev / "dxg").exists():
        return None
    return f"no NVIDIA device nodes ({dev}/nvidia*) on this machine"


def tool_rows() -> pd.DataFrame:
    """Which CUDA tools are installed here: ncu, compute-sanitizer, nvcc (path or 'not found')."""
    from profiling.nsight.tools import find_ncu, find_tool

    found = {"ncu": find_ncu(), "compute-sanitizer": find_tool("compute-sanitizer"), "nvcc": tool_path("nvcc")}
    return pd.DataFrame(
        [(name, "yes" if path else "no", path or "not found") for name, path in found.items()],
        columns=["tool", "available", "path"],
    )


# ---------------------------------------------------------------------------------------------
# Occupancy
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LaunchConfig:
    """What theoretical occupancy needs about one kernel, plus ncu's achieved value when known."""

    name: str
    source: str
    cc: str
    threads: int
    registers: int
    shared_mem: int
    achieved_pct: float | None = None
    ncu_theoretical_pct: float | None = None
    waves_per_sm: float | None = None


def launch_configs_from_bench(document: Mapping[str, Any]) -> list[LaunchConfig]:
    """One config per compiled kernel in a results document (block, registers, static + dynamic smem)."""
    cc = str((document.get("device") or {}).get("cc") or "9.0")
    seen: dict[str, LaunchConfig] = {}
    for r in document.get("results", ()):
        comp, launch = r.get("compile") or {}, r.get("launch") or {}
        if r["kernel"] in seen or not comp.get("registers") or not launch.get("block"):
            continue
        threads = math.prod(int(b) for b in launch["block"])
        smem = int(comp.get("shared_static_bytes") or 0) + int(launch.get("dynamic_smem_bytes") or 0)
        seen[r["kernel"]] = LaunchConfig(r["kernel"], "benchmark", cc, threads, int(comp["registers"]), smem)
    return list(seen.values())


def launch_configs_from_reports(reports: Sequence[tuple[str, ncu_report.Report]]) -> list[LaunchConfig]:
    """One config per launch in ncu reports (launch__* metrics), with ncu's theoretical and achieved occupancy."""
    out = []
    for source, report in reports:
        for launch in report.launches:
            threads = launch.value("launch__block_size") or (math.prod(launch.block) if launch.block else None)
            regs = launch.value("launch__registers_per_thread")
            if not threads or not regs:
                continue
            smem = (launch.value("launch__shared_mem_per_block_static") or 0) + (
                launch.value("launch__shared_mem_per_block_dynamic") or 0
            )
            out.append(
                LaunchConfig(
                    name=ncu_report.launch_label(launch),
                    source=source,
                    cc=str(launch.cc or "9.0"),
                    threads=int(threads),
                    registers=int(regs),
                    shared_mem=int(smem),
                    achieved_pct=launch.derived.get("achieved_occupancy_pct"),
                    ncu_theoretical_pct=launch.derived.get("theoretical_occupancy_pct"),
                    waves_per_sm=launch.value("launch__waves_per_multiprocessor"),
                )
            )
    return out


def occupancy_gap_note(theoretical_pct: float, achieved_pct: float | None, waves_per_sm: float | None) -> str | None:
    """Why achieved occupancy falls well short of theoretical, in words; None when the gap is small.

    A grid of less than one wave leaves SMs idle for the whole kernel and a partial last wave idles them at the
    end; otherwise warps and blocks finishing unevenly leave slots empty until the next block is scheduled.
    """
    if achieved_pct is None or theoretical_pct <= 0:
        return None
    gap = theoretical_pct - achieved_pct
    if gap < max(5.0, 0.2 * theoretical_pct):
        return None
    reasons = []
    if waves_per_sm is not None and waves_per_sm < 1:
        reasons.append(
            f"the grid fills only {waves_per_sm:.2f} of one wave, so most SMs hold fewer blocks than they could "
            "(more, smaller blocks or a larger problem fill them)"
        )
    elif waves_per_sm is not None and waves_per_sm < 4 and waves_per_sm % 1 < 0.5:
        reasons.append(
            f"{waves_per_sm:.2f} waves: the partial last wave leaves SMs idle at the end of the kernel (tail effect)"
        )
    reasons.append("warps and blocks finishing at different times leave slots empty until the next block starts")
    return (
        f"Achieved {achieved_pct:.1f}% is {gap:.1f} points below the theoretical {theoretical_pct:.1f}%: "
        + "; ".join(reasons)
        + "."
    )


# ---------------------------------------------------------------------------------------------
# Review
# ---------------------------------------------------------------------------------------------


def bundled_runs(bundle: Bundle) -> list[dict[str, Any]]:
    """Run records (profiling.runs.store) of the bundle's results files, labelled with device, date and file."""
    from profiling.runs.store import run_from_bench

    return [
        run_from_bench(load_document(p), label=f"bundled {bundle.device_name} {bundle.date} {p.stem}")
        for p in bundle.bench_files
    ]


def style_side_by_side(side: pd.DataFrame):  # -> pandas.io.formats.style.Styler
    """review.side_by_side() with each metric's cells coloured by verdict (green better, red worse, as
    Nsight Compute's baseline view); the verdict columns themselves are hidden."""
    from profiling.runs.review import VERDICT_COLORS

    verdict_cols = [c for c in side.columns if str(c).endswith(" verdict")]
    shown = [c for c in side.columns if c not in verdict_cols]

    def colour(row: pd.Series) -> list[str]:
        styles = []
        for c in shown:
            base = str(c).removesuffix(" Δ%")
            verdict = row.get(f"{base} verdict") if not str(c).endswith("(base)") else None
            if isinstance(verdict, str) and verdict in ("improvement", "regression", "changed"):
                styles.append(f"color: {VERDICT_COLORS[verdict]}; font-weight: 600")
            else:
                styles.append("")
        return styles

    full = side.copy()
    styler = full.style.apply(lambda row: colour(row) + [""] * len(verdict_cols), axis=1)
    styler = styler.hide(verdict_cols, axis="columns").format(precision=4, na_rep="")
    return styler


def run_ceilings(run: Mapping[str, Any]) -> Ceilings | None:
    """Ceilings for a saved run's device: its properties when recorded, else the built-in table by name."""
    device = dict(run.get("device") or {})
    device.setdefault("name", run.get("device_name"))
    try:
        if device.get("sm_count"):
            return ceilings_for(device)
        return best_ceilings(device_name=device.get("name"))
    except InvalidInput:
        return None


# ---------------------------------------------------------------------------------------------
# GPU job bodies (run on the queue's thread; the GPU work itself is in worker children)
# ---------------------------------------------------------------------------------------------


def roofline_table(points: pd.DataFrame, ceilings: Ceilings) -> pd.DataFrame:
    """The points under a roofline: kernel, label, level, intensity (FLOP/B), TFLOP/s, binding ceiling, % of it."""
    from profiling.charts import roofline_points

    df = roofline_points(points, ceilings)
    out = pd.DataFrame(
        {
            "kernel": df["kernel"].map(html.unescape),
            "label": df["label"].map(html.unescape),
            "level": df["level"],
            "intensity (FLOP/B)": df["intensity"],
            "TFLOP/s": df["achieved"] / 1e12,
            "binding ceiling": df["binding_ceiling"],
            "% of ceiling": df["pct_of_roof"],
        }
    )
    return out.reset_index(drop=True)


def occupancy_limits_table(result: Any) -> pd.DataFrame:
    """Blocks per SM each resource allows (warps, registers, shared memory, blocks) and which bind."""
    return pd.DataFrame(
        [
            {"resource": name, "blocks per SM allowed": allowed, "limits": name in result.limiters}
            for name, allowed in result.blocks_allowed_by.items()
        ]
    )


def occupancy_table(reports: Sequence[tuple[str, ncu_report.Report]]) -> pd.DataFrame:
    """Per launch: block, registers, shared memory, our theoretical occupancy, ncu's theoretical and achieved,
    and the limiting resource(s)."""
    from profiling.analysis.occupancy import theoretical_occupancy

    rows = []
    for config in launch_configs_from_reports(reports):
        try:
            result = theoretical_occupancy(config.cc, config.threads, config.registers, config.shared_mem)
            ours, limit = result.occupancy_pct, ", ".join(result.limiters)
        except InvalidInput as exc:
            ours, limit = None, one_line(exc)
        rows.append(
            {
                "launch": config.name,
                "threads": config.threads,
                "registers": config.registers,
                "shared mem (B)": config.shared_mem,
                "theoretical (%)": ours,
                "ncu theoretical (%)": config.ncu_theoretical_pct,
                "ncu achieved (%)": config.achieved_pct,
                "limited by": limit,
            }
        )
    return pd.DataFrame(rows)


def runs_table(runs: pd.DataFrame) -> pd.DataFrame:
    """review.runs_frame() for display: kernels joined, date as text."""
    out = runs.copy()
    out["kernels"] = out["kernels"].map(lambda ks: ", ".join(ks))
    out["created"] = out["created"].dt.strftime("%Y-%m-%d %H:%M")
    return out


def run_info_table(run: Mapping[str, Any]) -> pd.DataFrame:
    """A saved run's own fields and device as a property/value table."""
    device = run.get("device") or {}
    rows = [
        ("id", run.get("id")),
        ("label", run.get("label")),
        ("author", run.get("author")),
        ("notes", run.get("notes")),
        ("created", run.get("created_utc")),
        ("kind", run.get("kind")),
        ("device", device.get("name") or run.get("device_name")),
        ("compute capability", device.get("cc") or run.get("device_cc")),
        ("driver", device.get("driver")),
        ("CUDA runtime", cuda_version(device.get("cuda_runtime"))),
        ("max SM clock (MHz)", device.get("max_sm_clock_mhz")),
        ("catalog commit", run.get("catalog_commit")),
    ]
    return pd.DataFrame([(k, "" if v is None else str(v)) for k, v in rows], columns=["property", "value"])


def run_results_table(run: Mapping[str, Any]) -> pd.DataFrame:
    """A saved run's results: kernel, size, status and the compared metrics."""
    from profiling.runs.review import METRICS
    from profiling.runs.store import size_text

    rows = []
    for r in run.get("results", ()):
        row = {"kernel": r.get("kernel"), "size": size_text(r), "status": r.get("status")}
        row.update({m.label: r.get(m.key) for m in METRICS})
        rows.append(row)
    return pd.DataFrame(rows)


def markdown_table(frame: pd.DataFrame) -> str:
    """A small DataFrame as a Markdown table, every cell escaped (drawn at once, no grid component)."""
    head = "| " + " | ".join(md_escape(c) for c in frame.columns) + " |"
    rule = "|" + "---|" * len(frame.columns)
    rows = ["| " + " | ".join(md_escape(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([head, rule, *rows])


def measured_ceilings(bundle: Bundle | None, device_name: str | None) -> Ceilings | None:
    """Ceilings measured on the GPU (`python -m profiling ceilings`): the bundle's ceilings.json for bundled
    data, else this machine's per-device cache; None when neither was measured for that device."""
    from profiling.analysis.ceilings import load_cached, measured_to_ceilings

    record = None
    if bundle is not None and (bundle.path / "ceilings.json").is_file():
        try:
            record = json.loads((bundle.path / "ceilings.json").read_text()).get("measured")
        except (OSError, ValueError):
            record = None
    if (record is None or record.get("device") != device_name) and device_name:
        record = load_cached(device_name)
    if not record or record.get("device") != device_name:
        return None
    return measured_to_ceilings(record["ceilings"] | {"device": record["device"]}, f"measured {record['measured_utc']}")


def ceilings_table(theoretical: Ceilings, measured: Ceilings | None) -> pd.DataFrame:
    """Each roofline ceiling: the theoretical value and its source beside the measured one, in T units."""
    rows = []
    for label, attr, unit in (
        ("FP32", "fp32_flops", "TFLOP/s"),
        ("FP16 tensor", "tensor_fp16_flops", "TFLOP/s"),
        ("DRAM", "dram_bytes_per_s", "TB/s"),
        ("L2", "l2_bytes_per_s", "TB/s"),
        ("L1 / shared", "l1_bytes_per_s", "TB/s"),
    ):
        t = getattr(theoretical, attr)
        m = getattr(measured, attr) if measured else None
        if t is None and m is None:
            continue
        rows.append(
            {
                "ceiling": label,
                "unit": unit,
                "theoretical": t.value / 1e12 if t else None,
                "source": t.source if t else "",
                "measured": m.value / 1e12 if m else None,
                "measured how": m.note if m else "",
                "measured / theoretical (%)": 100 * m.value / t.value if (t and m) else None,
            }
        )
    return pd.DataFrame(rows)
