"""Read any Nsight Compute report (CSV pages or .ncu-rep) into one model of kernel launches.

Layouts understood: `--page raw` (header, units row, one row per launch), `--page details` (one row per
section metric or rule, display labels or raw names), `--print-summary per-kernel` (Invocations /
Minimum / Maximum / Average), `--print-units auto`, and ncu's stdout with `==PROF==` lines and the
program's own output around the CSV. Values are converted to base units (see profiling.nsight.metrics).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from kernels.catalog import CATALOG
from profiling.errors import ReportError
from profiling.nsight import metrics as M

if TYPE_CHECKING:
    import pandas as pd

Layout = Literal["raw", "details", "summary"]

MAX_REPORT_BYTES = 200 * 1000 * 1000
"""Uploads above this are refused: a raw page of 10,000 launches x 400 columns is about 40 MB."""

_ID_COLUMNS = {
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Function Name",
    "Kernel Time",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
    "Invocations",
}
_DETAIL_COLUMNS = {
    "Section Name",
    "Metric Name",
    "Metric Unit",
    "Metric Value",
    "Rule Name",
    "Rule Type",
    "Rule Description",
    "Estimated Speedup Type",
    "Estimated Speedup",
    "Minimum",
    "Maximum",
    "Average",
}
NCU_REP_MAGIC = b"NVR\x00"
"""First bytes of a .ncu-rep, so a renamed one is still recognised (see test_ncu_rep_magic)."""
# ncu 2025 adds two NVTX-state columns after "Host Name" when --nvtx is on; their names contain ":".
_NVTX_COLUMN_PREFIXES = ("thread Domain:", "Id:Domain:")
_GEMMLENS_RANGE = re.compile(r"gemmlens:([A-Za-z0-9_.+-]+):(\d+)x(\d+)x(\d+)")
_NCU_LINE = re.compile(r"^\s*==(PROF|WARNING|ERROR|WARN|INFO)==")
_DIM_RE = re.compile(r"-?\d+")


@dataclass
class Metric:
    """One metric value in base units; `minimum`/`maximum` are set for per-kernel summaries."""

    value: float
    unit: str
    minimum: float | None = None
    maximum: float | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"value": self.value, "unit": self.unit}
        if self.minimum is not None:
            data["minimum"] = self.minimum
            data["maximum"] = self.maximum
        return data


@dataclass
class Finding:
    """A rule result from the details page (or a compute-sanitizer report)."""

    rule: str
    type: str
    description: str
    section: str = ""
    speedup_type: str = ""
    estimated_speedup_pct: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "type": self.type,
            "section": self.section,
            "description": self.description,
            "speedup_type": self.speedup_type,
            "estimated_speedup_pct": self.estimated_speedup_pct,
        }


@dataclass
class KernelLaunch:
    """One profiled kernel launch (or, for a per-kernel summary, one kernel's aggregate)."""

    id: str
    name: str
    block: tuple[int, ...] | None = None
    grid: tuple[int, ...] | None = None
    cc: str | None = None
    device: str | None = None
    process: str | None = None
    invocations: int | None = None
    nvtx: str | None = None
    """The NVTX push/pop range(s) the launch ran in, as ncu prints them."""
    metrics: dict[str, Metric] = field(default_factory=dict)
    derived: dict[str, float] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    attributes: dict[str, str] = field(default_factory=dict)
    """Text-valued metrics ("NVIDIA H100 80GB HBM3") and labels with no canonical name ("Section: Label")."""
    unmapped: dict[str, Metric] = field(default_factory=dict)
    """Numeric details-page rows whose display label has no canonical name, keyed "Section: Label"."""

    def value(self, name: str) -> float | None:
        """A canonical metric's value in base units, or None."""
        metric = self.metrics.get(name)
        return metric.value if metric is not None else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "block": list(self.block) if self.block else None,
            "grid": list(self.grid) if self.grid else None,
            "cc": self.cc,
            "device": self.device,
            "process": self.process,
            "invocations": self.invocations,
            "nvtx": self.nvtx,
            "metrics": {k: m.to_dict() for k, m in self.metrics.items()},
            "derived": {k: {"value": v, "unit": M.DERIVED_UNITS.get(k, "")} for k, v in self.derived.items()},
            "findings": [f.to_dict() for f in self.findings],
            "unmapped": {k: m.to_dict() for k, m in self.unmapped.items()},
            "attributes": self.attributes,
        }


@dataclass
class Report:
    """Everything read from one report: launches in report order, the layout read, and warnings."""

    launches: list[KernelLaunch]
    layout: Layout
    source: str = ""
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "layout": self.layout,
            "launches": [launch.to_dict() for launch in self.launches],
            "warnings": self.warnings,
        }


# ---------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------


def parse_report_bytes(data: bytes, source: str = "") -> Report:
    """Parse report bytes (CSV of any layout, or captured ncu stdout)."""
    name = Path(source).name or "the report"
    if not data.strip():
        raise ReportError(f"{name} is empty; expected an Nsight Compute CSV export or a .ncu-rep file")
    if len(data) > MAX_REPORT_BYTES:
        raise ReportError(f"{name} is over {MAX_REPORT_BYTES / 1e6:.0f} MB; reports that large are not read")
    if b"\x00" in data[:65536]:
        raise ReportError(
            f"{name} is a binary file, not an Nsight Compute CSV; upload a .ncu-rep with that extension "
            "or export CSV with `ncu --import report.ncu-rep --csv --page raw > report.csv`"
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return parse_report_text(text, source=source)


def parse_report_text(text: str, source: str = "") -> Report:
    """Parse the text of a CSV export or ncu stdout into a Report; raises ReportError when unreadable."""
    name = Path(source).name or "the report"
    text = text.lstrip("\ufeff")
    lines = text.splitlines()
    header_at, warnings = _find_header(lines)
    if header_at is None:
        errors = [ln.strip() for ln in lines if ln.lstrip().startswith("==ERROR==")]
        if errors:
            raise ReportError(f"{name} holds no metrics; ncu said: {errors[0][:300]}")
        raise ReportError(
            f"{name} is not an Nsight Compute CSV (no header with 'ID' and 'Kernel Name' found); "
            "expected `ncu --csv` output such as `ncu --import report.ncu-rep --csv --page raw`"
        )
    body = [ln for ln in lines[header_at:] if not _NCU_LINE.match(ln)]
    rows = list(csv.reader(io.StringIO("\n".join(body))))
    header = [h.strip() for h in rows[0]]
    data_rows = [r for r in rows[1:] if r and any(cell.strip() for cell in r)]
    columns = set(header)
    if {"Metric Name", "Metric Value"} <= columns:
        report = _parse_details(header, data_rows, warnings)
    elif {"Metric Name", "Average"} <= columns:
        report = _parse_summary(header, data_rows, warnings)
    else:
        report = _parse_raw(header, data_rows, warnings)
    report.source = source
    if not report.launches:
        raise ReportError(f"{name} has a header but no kernel launches (truncated, or no kernel was profiled)")
    for launch in report.launches:
        launch.derived = M.derive({k: m.value for k, m in launch.metrics.items()})
    return report


def _find_header(lines: Sequence[str]) -> tuple[int | None, list[str]]:
    """Index of the CSV header line, and ncu warnings found before it."""
    warnings: list[str] = []
    for i, line in enumerate(lines[:5000]):
        stripped = line.strip()
        if stripped.startswith("==WARNING==") or stripped.startswith("==WARN=="):
            warnings.append(stripped.split("==", 2)[-1].strip())
            continue
        if stripped.startswith('"ID",') or (
            stripped.startswith('"') and '"Kernel Name"' in stripped and "," in stripped
        ):
            return i, warnings
    return None, warnings


# ---------------------------------------------------------------------------------------------
# Layouts
# ---------------------------------------------------------------------------------------------


def _cell(row: Sequence[str], index: int | None) -> str:
    if index is None or index >= len(row):
        return ""
    return row[index].strip()


def _dims(text: str) -> tuple[int, ...] | None:
    """'(16, 16, 1)' -> (16, 16, 1)."""
    found = _DIM_RE.findall(text)
    return tuple(int(x) for x in found) if found else None


class _Identity:
    """Column positions of the launch-identity fields in one header."""

    def __init__(self, header: Sequence[str]):
        pos = {h: i for i, h in enumerate(header)}
        self.id = pos.get("ID")
        self.name = pos.get("Kernel Name", pos.get("Function Name"))
        self.block = pos.get("Block Size")
        self.grid = pos.get("Grid Size")
        self.cc = pos.get("CC")
        self.device = pos.get("Device")
        self.process = pos.get("Process Name")
        self.invocations = pos.get("Invocations")
        self.nvtx = [i for i, h in enumerate(header) if h.startswith(_NVTX_COLUMN_PREFIXES)]
        if self.name is None:
            raise ReportError("the CSV has no 'Kernel Name' column; expected an Nsight Compute export")

    def key(self, row: Sequence[str]) -> tuple[str, ...]:
        # Summaries have no ID: one kernel name can appear with several launch shapes.
        fields = (self.id, self.name, self.process, self.device, self.block, self.grid)
        return tuple(_cell(row, i) for i in fields)

    def nvtx_text(self, row: Sequence[str]) -> str | None:
        parts = [_cell(row, i) for i in self.nvtx]
        text = " ".join(p for p in parts if p)
        return text or None

    def launch(self, row: Sequence[str], fallback_id: int) -> KernelLaunch:
        invocations = M.parse_number(_cell(row, self.invocations)) if self.invocations is not None else None
        return KernelLaunch(
            id=_cell(row, self.id) or str(fallback_id),
            name=_cell(row, self.name),
            block=_dims(_cell(row, self.block)),
            grid=_dims(_cell(row, self.grid)),
            cc=_cell(row, self.cc) or None,
            device=_cell(row, self.device) or None,
            process=_cell(row, self.process) or None,
            invocations=int(invocations) if invocations is not None else None,
            nvtx=self.nvtx_text(row),
        )


def _parse_raw(header: list[str], rows: list[list[str]], warnings: list[str]) -> Report:
    """Raw page: one column per metric, a units row, then one row per launch."""
    ident = _Identity(header)
    metric_cols = [i for i, h in enumerate(header) if h not in _ID_COLUMNS and not h.startswith(_NVTX_COLUMN_PREFIXES)]
    if not metric_cols:
        raise ReportError("the CSV has kernel columns but no metric columns; expected `--page raw` output")
    units: list[str] = [""] * len(header)
    # The units row has an empty ID and kernel name; ncu always writes it, older tools may not.
    if rows and not _cell(rows[0], ident.id) and not _cell(rows[0], ident.name):
        units = [cell.strip() for cell in rows[0]] + [""] * max(0, len(header) - len(rows[0]))
        rows = rows[1:]
    else:
        warnings.append("no units row after the header: values taken as printed, in base units")
    plan = []
    for i in metric_cols:
        factor, base = M.to_base(units[i])
        plan.append((i, header[i], factor, base))
    launches: list[KernelLaunch] = []
    width = len(header)
    parse = M.parse_number
    for n, row in enumerate(rows):
        if len(row) > width:
            warnings.append(f"row {n + 1} has {len(row)} fields, more than the header's {width}: skipped")
            continue
        launch = ident.launch(row, n)
        if not launch.name:
            warnings.append(f"row {n + 1} has no kernel name: skipped")
            continue
        short = len(row) < width
        if short:
            warnings.append(f"launch {launch.id} has {len(row)} of {width} fields (truncated file?)")
        metrics = launch.metrics
        for i, name, factor, base in plan:
            if short and i >= len(row) - 1:
                break  # the last field of a cut row may be cut mid-number ("4." of "4.420992"): not a value
            text = row[i]
            value = parse(text)
            if value is not None:
                if factor != 1.0:
                    # "0.509472" ms is 509,472 ns exactly; drop the float noise of the scaling.
                    value = round(value * factor, 3) if factor > 1.0 else value * factor
                metrics[name] = Metric(value, base)
            else:
                text = text.strip()
                if text and text != "n/a":
                    launch.attributes[name] = text
        launches.append(launch)
    return Report(launches=launches, layout="raw", warnings=warnings)


def _details_columns(header: list[str]) -> dict[str, int | None]:
    pos = {h: i for i, h in enumerate(header)}
    return {name: pos.get(name) for name in _DETAIL_COLUMNS}


def _scale(value: float, factor: float) -> float:
    """value x factor without the float noise of the scaling ("0.509472" ms is 509,472 ns)."""
    if factor == 1.0:
        return value
    return round(value * factor, 3) if factor > 1.0 else value * factor


def _add_labelled(launch: KernelLaunch, section: str, label: str, unit: str, text: str, minmax=None) -> None:
    """Store one details/summary metric row under its canonical name (or as unmapped)."""
    value = M.parse_number(text)
    factor, base = M.to_base(unit)
    canonical = M.canonical_name(label, unit)
    key = f"{section}: {label}" if section else label
    if value is None:
        if text and text != "n/a":
            launch.attributes[canonical or key] = text
        return
    metric = Metric(_scale(value, factor), base)
    if minmax is not None:
        lo, hi = minmax
        metric.minimum = _scale(lo, factor) if lo is not None else None
        metric.maximum = _scale(hi, factor) if hi is not None else None
    if canonical is None:
        launch.unmapped[key] = metric
    elif canonical not in launch.metrics:
        # The first section that reports a metric wins; later sections repeat it.
        launch.metrics[canonical] = metric


def _parse_details(header: list[str], rows: list[list[str]], warnings: list[str]) -> Report:
    """Details page: one row per (launch, section, metric) or (launch, section, rule)."""
    ident = _Identity(header)
    col = _details_columns(header)
    launches: dict[tuple[str, ...], KernelLaunch] = {}
    for n, row in enumerate(rows):
        key = ident.key(row)
        launch = launches.get(key)
        if launch is None:
            launch = launches[key] = ident.launch(row, len(launches))
        section = _cell(row, col["Section Name"])
        label = _cell(row, col["Metric Name"])
        rule = _cell(row, col["Rule Name"])
        if label:
            unit, value = _cell(row, col["Metric Unit"]), _cell(row, col["Metric Value"])
            _add_labelled(launch, section, label, unit, value)
        elif rule:
            launch.findings.append(
                Finding(
                    rule=rule,
                    type=_cell(row, col["Rule Type"]),
                    description=_cell(row, col["Rule Description"]),
                    section=section,
                    speedup_type=_cell(row, col["Estimated Speedup Type"]),
                    estimated_speedup_pct=M.parse_number(_cell(row, col["Estimated Speedup"])),
                )
            )
        elif len(row) < len(header) // 2:
            warnings.append(f"row {n + 2} has only {len(row)} fields: skipped")
    return Report(launches=list(launches.values()), layout="details", warnings=warnings)


def _parse_summary(header: list[str], rows: list[list[str]], warnings: list[str]) -> Report:
    """`--print-summary per-kernel`: one row per (kernel, metric) with Minimum / Maximum / Average."""
    ident = _Identity(header)
    col = _details_columns(header)
    launches: dict[tuple[str, ...], KernelLaunch] = {}
    for row in rows:
        key = ident.key(row)
        launch = launches.get(key)
        if launch is None:
            launch = launches[key] = ident.launch(row, len(launches))
        label = _cell(row, col["Metric Name"])
        if not label:
            continue
        lo = M.parse_number(_cell(row, col["Minimum"]))
        hi = M.parse_number(_cell(row, col["Maximum"]))
        _add_labelled(
            launch,
            _cell(row, col["Section Name"]),
            label,
            _cell(row, col["Metric Unit"]),
            _cell(row, col["Average"]),
            minmax=(lo, hi),
        )
    return Report(launches=list(launches.values()), layout="summary", warnings=warnings)


def merge_findings(target: Report, details: Report) -> None:
    """Copy rule findings and metrics missing from `target` out of a details-page Report of the same run."""
    by_id = {launch.id: launch for launch in details.launches}
    for launch in target.launches:
        other = by_id.get(launch.id)
        if other is None:
            continue
        launch.findings.extend(other.findings)
        for name, metric in other.metrics.items():
            launch.metrics.setdefault(name, metric)
        launch.unmapped.update(other.unmapped)
        launch.derived = M.derive({k: m.value for k, m in launch.metrics.items()})


# ---------------------------------------------------------------------------------------------
# Catalog matching and tables
# ---------------------------------------------------------------------------------------------


def _base_name(name: str) -> str:
    """'void sgemm_tiled<16>(float const*, ...)' -> 'sgemm_tiled'."""
    name = name.strip()
    if name.startswith("void "):
        name = name[5:]
    for stop in ("(", "<"):
        cut = name.find(stop)
        if cut > 0:
            name = name[:cut]
    return name.strip()


def match_catalog(launch: KernelLaunch) -> tuple[str, int, int] | None:
    """(catalog id, m, n) for a launch of one of our kernels, else None.

    The worker's NVTX range (`gemmlens:<id>:<m>x<n>x<k>`) says it outright; without one, the function
    name, block and grid do (templates share a name, sgemm_tiled<8/16/32>, so the block breaks the tie).
    """
    shape = nvtx_shape(launch)
    if shape is not None:
        return shape[0], shape[1], shape[2]

    base = _base_name(launch.name)
    block = launch.block or ()
    for spec in CATALOG:
        if not spec.entry or _base_name(spec.entry) != base:
            continue
        if block and tuple(block[:2]) != tuple(spec.block):
            continue
        grid = launch.grid or (0, 0)
        if spec.grid_order == "rows_x":
            m, n = grid[0] * spec.tile_m, grid[1] * spec.tile_n
        else:
            m, n = grid[1] * spec.tile_m, grid[0] * spec.tile_n
        return spec.id, m, n
    return None


def nvtx_shape(launch: KernelLaunch) -> tuple[str, int, int, int] | None:
    """(catalog id, m, n, k) from the worker's NVTX range name, when the launch ran inside one."""
    if not launch.nvtx:
        return None
    match = _GEMMLENS_RANGE.search(launch.nvtx)
    if match is None:
        return None
    return match.group(1), int(match.group(2)), int(match.group(3)), int(match.group(4))


def launch_label(launch: KernelLaunch) -> str:
    """Short label: 'v3 4096x4096' for catalog kernels, else the kernel's function name and id."""
    shape = nvtx_shape(launch)
    if shape is not None:
        kid, m, n, k = shape
        return f"{kid} {m}x{n}x{k}"
    hit = match_catalog(launch)
    if hit is not None:
        kid, m, n = hit
        return f"{kid} {m}x{n}"
    return f"{_base_name(launch.name)} #{launch.id}"


KEY_COLUMNS: tuple[tuple[str, str], ...] = (
    ("duration_ns", "gpu__time_duration.sum"),
    ("registers", "launch__registers_per_thread"),
    ("smem_static_bytes", "launch__shared_mem_per_block_static"),
    ("smem_dynamic_bytes", "launch__shared_mem_per_block_dynamic"),
    ("smem_driver_bytes", "launch__shared_mem_per_block_driver"),
    ("limit_registers", "launch__occupancy_limit_registers"),
    ("limit_shared_mem", "launch__occupancy_limit_shared_mem"),
    ("limit_warps", "launch__occupancy_limit_warps"),
    ("limit_blocks", "launch__occupancy_limit_blocks"),
    ("waves_per_sm", "launch__waves_per_multiprocessor"),
    ("dram_bytes", "dram__bytes.sum"),
    ("l2_bytes", "lts__t_bytes.sum"),
    ("l1_bytes", "l1tex__t_bytes.sum"),
    ("tensor_inst", "sm__inst_executed_pipe_tensor.sum"),
)
KEY_DERIVED: tuple[str, ...] = (
    "theoretical_occupancy_pct",
    "achieved_occupancy_pct",
    "occupancy_achieved_of_theoretical",
    "shared_ld_bank_conflict_pct",
    "shared_ld_n_way",
    "shared_st_bank_conflict_pct",
    "shared_st_n_way",
    "fp32_flops",
    "fp32_flops_per_second",
    "fp32_pct_of_peak",
    "dram_bytes_per_second",
    "ai_l1",
    "ai_l2",
    "ai_dram",
)


def key_metrics_frame(report: Report) -> pd.DataFrame:
    """One row per launch with the key metrics.

    Columns: id, kernel (function name), label, catalog_id, block, grid, cc, the KEY_COLUMNS names
    (base units: ns, bytes, counts) and the KEY_DERIVED names (%, flop, flop/second, flop/byte);
    missing values are NaN.
    """
    import pandas as pd  # lazy: reading a report for the CLI or the worker needs no pandas

    records = []
    for launch in report.launches:
        hit = match_catalog(launch)
        record: dict[str, Any] = {
            "id": launch.id,
            "kernel": _base_name(launch.name),
            "label": launch_label(launch),
            "catalog_id": hit[0] if hit else None,
            "block": "x".join(map(str, launch.block)) if launch.block else None,
            "grid": "x".join(map(str, launch.grid)) if launch.grid else None,
            "cc": launch.cc,
        }
        for column, name in KEY_COLUMNS:
            record[column] = launch.value(name)
        for name in KEY_DERIVED:
            record[name] = launch.derived.get(name)
        records.append(record)
    frame = pd.DataFrame.from_records(records)
    numeric = [c for c, _ in KEY_COLUMNS] + list(KEY_DERIVED)
    frame[numeric] = frame[numeric].astype("float64")
    return frame


def roofline_points(report: Report) -> pd.DataFrame:
    """Hierarchical roofline points: one row per launch and memory level that has the data.

    Columns: kernel (function name), label, level ("L1", "L2" or "DRAM"), flops, bytes (moved at that
    level), seconds (kernel duration), compute ("fp32" or "tensor"). A launch inside one of the worker's
    NVTX ranges that issued tensor-core instructions and far fewer FP32 FLOPs than its GEMM counts 2*M*N*K
    FLOPs against the tensor ceiling (ncu's FP32 counts see only its epilogue); others count fadd + fmul + 2 ffma.
    """
    import pandas as pd  # lazy: reading a report for the CLI or the worker needs no pandas

    records = []
    for launch in report.launches:
        flops, seconds = launch.derived.get("fp32_flops"), launch.derived.get("seconds")
        compute = "fp32"
        shape = nvtx_shape(launch)
        if shape and (launch.value("sm__inst_executed_pipe_tensor.sum") or 0) > 0:
            _, m, n, k = shape
            # FP32 kernels also show a few tensor-pipe instructions; only a kernel whose FP32 work falls far
            # short of its GEMM did its multiply on the tensor cores.
            if (flops or 0) < 0.5 * 2.0 * m * n * k:
                flops, compute = 2.0 * m * n * k, "tensor"
        if not flops or not seconds:
            continue
        label = launch_label(launch)
        for level, (bytes_name, _, _) in M.LEVEL_BYTES.items():
            moved = launch.value(bytes_name)
            if moved:
                records.append(
                    {
                        "kernel": _base_name(launch.name),
                        "label": label,
                        "level": level,
                        "flops": flops,
                        "bytes": moved,
                        "seconds": seconds,
                        "compute": compute,
                    }
                )
    columns = ["kernel", "label", "level", "flops", "bytes", "seconds", "compute"]
    return pd.DataFrame.from_records(records, columns=columns)


def iter_metric_names(report: Report) -> Iterable[str]:
    """Every canonical metric name present in any launch, in first-seen order."""
    seen: dict[str, None] = {}
    for launch in report.launches:
        for name in launch.metrics:
            seen.setdefault(name, None)
    return list(seen)
