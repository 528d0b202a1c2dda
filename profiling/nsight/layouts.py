"""The three CSV layouts ncu writes, read into KernelLaunch objects.

`--page raw` (header, units row, one row per launch; its values go through profiling.nsight.raw_page),
`--page details` (one row per section metric or rule, display labels or raw names) and
`--print-summary per-kernel` (Invocations / Minimum / Maximum / Average). Values are converted to base
units; a value that is not finite is missing, with one warning per metric.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Sequence

from profiling.errors import ReportError
from profiling.nsight import metrics as M
from profiling.nsight import raw_page, report_input
from profiling.nsight import units as U
from profiling.nsight.metric_table import Metric
from profiling.nsight.model import Finding, KernelLaunch, Report

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
    "Body Item Label",
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
# ncu 2025 adds two NVTX-state columns after "Host Name" when --nvtx is on; their names contain ":".
_NVTX_COLUMN_PREFIXES = ("thread Domain:", "Id:Domain:")
_DIM_RE = re.compile(r"-?\d+")
# An instance-valued metric (`--print-details all`): "301,505,536 (268,698,624; 17,240,064; ...)", the total and then
# the value of each instance.
_INSTANCES_RE = re.compile(r"^\s*([-+]?[\d,]*\.?\d+(?:[eE][-+]?\d+)?)\s+\((.*)\)\s*$", re.DOTALL)


def _cell(row: Sequence[str], index: int | None) -> str:
    if index is None or index >= len(row):
        return ""
    return row[index].strip()


def _dims(text: str) -> tuple[int, ...] | None:
    """'(16, 16, 1)' -> (16, 16, 1); None when there is none, a number has more than 18 digits or is negative."""
    found = _DIM_RE.findall(text)
    if not found or any(len(x) > 18 or x.startswith("-") for x in found):
        return None
    return tuple(int(x) for x in found)


def _finite(value: float | None, what: str, text: str, notes: report_input.Notes) -> float | None:
    """`value`, or None with a warning (once per `what`) when it is nan or infinite."""
    if value is None or math.isfinite(value):
        return value
    notes.once(what, f"{what}: value {text.strip()[:40]!r} is not a finite number; taken as missing")
    return None


def _count(value: float | None, what: str, text: str, where: str, notes: report_input.Notes) -> float | None:
    """`value` as a count (finite, not negative), else None with a warning once per `what`."""
    value = _finite(value, what, text, notes)
    if value is not None and value < 0:
        notes.once(what, U.negative_note(what, text, where))
        return None
    if value is None and U.malformed_number(text):
        notes.once(what, U.malformed_note(what, text, where))
    return value


def repeated_header(cells: Sequence[str], header: Sequence[str]) -> bool:
    """Whether a body row is a header again (two exports in one file): its ID and Kernel Name cells name those
    columns."""
    names = {"ID", "Kernel Name", "Function Name"}
    found = [c.strip() for c, h in zip(cells, header, strict=False) if h in names]
    return bool(found) and all(c in names for c in found)


class _Identity:
    """Column positions of the launch-identity fields in one header."""

    def __init__(self, header: Sequence[str], notes: report_input.Notes | None = None):
        pos: dict[str, int] = {}
        for i, h in enumerate(header):
            if h in pos and h in _ID_COLUMNS and notes is not None:
                notes.add(
                    f"column {h!r} appears more than once (columns {pos[h] + 1} and {i + 1}): the first is read",
                    kind="repeated columns",
                )
            pos.setdefault(h, i)
        self.id = pos.get("ID")
        self.name = pos.get("Kernel Name", pos.get("Function Name"))
        self.block = pos.get("Block Size")
        self.grid = pos.get("Grid Size")
        self.cc = pos.get("CC")
        self.device = pos.get("Device")
        self.process = pos.get("Process Name")
        self.invocations = pos.get("Invocations")
        self.nvtx = [i for i, h in enumerate(header) if h.startswith(_NVTX_COLUMN_PREFIXES)]
        self._dims: dict[str, tuple[int, ...] | None] = {}
        if self.name is None:
            raise ReportError("the CSV has no 'Kernel Name' column; expected an Nsight Compute export")

    def columns(self) -> list[int]:
        """Positions of every identity column present."""
        fields = (self.id, self.name, self.block, self.grid, self.cc, self.device, self.process, self.invocations)
        return sorted({i for i in fields if i is not None} | set(self.nvtx))

    def dims(self, text: str) -> tuple[int, ...] | None:
        """_dims(text), remembered: a report repeats a few block and grid shapes many times."""
        if text in self._dims:
            return self._dims[text]
        found = _dims(text)
        if len(self._dims) < 10_000:
            self._dims[text] = found
        return found

    def key(self, row: Sequence[str]) -> tuple[str, ...]:
        # Summaries have no ID: one kernel name can appear with several launch shapes.
        fields = (self.id, self.name, self.process, self.device, self.block, self.grid)
        return tuple(_cell(row, i) for i in fields)

    def nvtx_text(self, row: Sequence[str]) -> str | None:
        parts = [_cell(row, i) for i in self.nvtx]
        text = " ".join(p for p in parts if p)
        return text or None

    def launch_like(self, launch: KernelLaunch, row: Sequence[str], fallback_id: int) -> KernelLaunch:
        """A launch whose identity cells other than its ID are those of `launch` (launch() of such a row): every
        field but the id is taken from it, and the warnings launch() gives once per column were given for it."""
        return KernelLaunch(
            id=_cell(row, self.id) or str(fallback_id),
            name=launch.name,
            block=launch.block,
            grid=launch.grid,
            cc=launch.cc,
            device=launch.device,
            process=launch.process,
            invocations=launch.invocations,
            nvtx=launch.nvtx,
        )

    def launch(self, row: Sequence[str], fallback_id: int, notes: report_input.Notes) -> KernelLaunch:
        invocations = None
        launch_id = _cell(row, self.id) or str(fallback_id)
        where = f"launch {launch_id[:40]}"
        if self.invocations is not None:
            text = _cell(row, self.invocations)
            invocations = _count(U.parse_number(text), "Invocations", text, where, notes)
        block, grid = _cell(row, self.block), _cell(row, self.grid)
        for what, text in (("Block Size", block), ("Grid Size", grid)):
            if "-" in text and _DIM_RE.search(text):
                notes.once(what, U.negative_note(what, text, where))
        return KernelLaunch(
            id=launch_id,
            name=_cell(row, self.name),
            block=self.dims(block),
            grid=self.dims(grid),
            cc=_cell(row, self.cc) or None,
            device=_cell(row, self.device) or None,
            process=_cell(row, self.process) or None,
            invocations=int(invocations) if invocations is not None else None,
            nvtx=self.nvtx_text(row),
        )


def parse_raw(header: list[str], records: Iterator[str], notes: report_input.Notes, name: str) -> Report:
    """Raw page: one column per metric, a units row, then one row per launch."""
    ident = _Identity(header, notes)
    metric_cols = [i for i, h in enumerate(header) if h not in _ID_COLUMNS and not h.startswith(_NVTX_COLUMN_PREFIXES)]
    if not metric_cols:
        raise ReportError("the CSV has kernel columns but no metric columns; expected `--page raw` output")
    width = len(header)
    units: list[str] = [""] * width
    # The units row has an empty ID and kernel name; ncu always writes it, older tools may not.
    first: list[str] = []
    for record in records:
        first = report_input.record_cells(record)
        if any(cell.strip() for cell in first):
            break
    if first and not _cell(first, ident.id) and not _cell(first, ident.name):
        units = [cell.strip() for cell in first[:width]] + [""] * max(0, width - len(first))
    else:
        notes.add("no units row after the header: values taken as printed, in base units")
        if first:
            records = _chain_one(record, records)
    columns: list[raw_page.MetricColumn] = []
    seen: set[str] = set()
    for i in metric_cols:
        if header[i] in seen:
            notes.add(f"column {header[i]!r} appears more than once: the first is read", kind="repeated columns")
            continue
        seen.add(header[i])
        problem = U.unit_problem(units[i])
        if problem is not None:
            notes.add(f"column {header[i][:80]!r}: {problem}; its values are not read", kind="unknown units")
            continue
        factor, base = U.to_base(units[i])
        columns.append(raw_page.MetricColumn(i, header[i], factor, base, U.never_negative(base)))
    identity = ident.columns()
    present = set(header)
    # Metrics this page lacks but can derive (M.FALLBACKS): only then is each launch looked at for them.
    fallbacks = any(set(inputs) <= present and target not in present for target, _, inputs, _, _ in M.FALLBACKS)
    launches: list[KernelLaunch] = []
    row = [""] * width  # one row of identity cells, reused: the metric cells live in the table
    repeat = raw_page.Repeat(header, units)
    rows = raw_page.read_raw_rows(records, width, identity, columns, ident.id, notes, name, repeat)
    id_at = identity.index(ident.id) if ident.id is not None else len(identity)
    seen: dict[tuple[str, ...], KernelLaunch] = {}  # a launch per identity without the ID: a kernel repeats
    with raw_page.collector_paused():
        for n, raw in enumerate(rows):
            for i, cell in zip(identity, raw.cells, strict=True):
                row[i] = cell
            if not _cell(row, ident.name):
                if any(raw.cells) or raw.attributes or len(raw.metrics):
                    notes.add(f"row {n + 1} has no kernel name: skipped", kind="rows without a kernel name")
                continue
            key = (*raw.cells[:id_at], *raw.cells[id_at + 1 :])
            like = seen.get(key)
            if like is not None:
                launch = ident.launch_like(like, row, n)
            else:
                launch = ident.launch(row, n, notes)
                if len(seen) < 10_000:
                    seen[key] = launch
            launch.metrics = raw.metrics
            if fallbacks:
                M.fill_fallbacks(launch.metrics, derived_metric)
            launch.derived = raw.derived.floats()
            launch.attributes = raw.attributes
            launches.append(launch)
    return Report(launches=launches, layout="raw")


def _chain_one(first: str, rest: Iterator[str]) -> Iterator[str]:
    yield first
    yield from rest


def _details_columns(header: list[str]) -> dict[str, int | None]:
    pos = {h: i for i, h in enumerate(header)}
    return {name: pos.get(name) for name in _DETAIL_COLUMNS}


def _scale(value: float, factor: float) -> float:
    """value x factor without the float noise of the scaling ("0.509472" ms is 509,472 ns)."""
    if factor == 1.0:
        return value
    return round(value * factor, 3) if factor > 1.0 else value * factor


def _add_labelled(
    launch: KernelLaunch,
    section: str,
    label: str,
    unit: str,
    text: str,
    notes: report_input.Notes,
    minmax=None,
    body: str = "",
) -> None:
    """Store one details/summary metric row under its canonical name (or as unmapped).

    A row of a section's body (`body`, the Body Item Label of `--print-details all`) keeps its display label
    under "Section: Body: Label": only a raw metric name there is canonical, as the same label can name another
    metric in a chart's table ("SM Frequency" of a roofline). An instance-valued cell gives its total as the value
    and keeps the instances' values as text under the same key plus " (instances)".
    """
    value = U.parse_number(text)
    factor, base = U.to_base(unit)
    canonical = M.canonical_name(label, unit) if not body or "__" in label else None
    key = " : ".join(p for p in (section, body) if p).replace(" : ", ": ")
    key = f"{key}: {label}" if key else label
    where = f"launch {launch.id[:40]}"
    if value is None and "(" in text:
        match = _INSTANCES_RE.match(text)
        if match is not None:
            value = U.parse_number(match.group(1))
            launch.attributes[f"{canonical or key} (instances)"] = match.group(2).strip()
    if value is None:
        if U.malformed_number(text):
            notes.once(canonical or key, U.malformed_note(canonical or key, text, where))
        elif text and text != "n/a":
            launch.attributes[canonical or key] = text
        return
    problem = U.unit_problem(unit)
    if problem is not None:
        notes.once(canonical or key, f"{canonical or key}: {problem}; its values are not read")
        return
    negative = value < 0
    value = _finite(_scale(value, factor), canonical or key, text, notes)
    if value is None:
        return
    if negative and U.never_negative(base):
        notes.once(canonical or key, U.negative_note(canonical or key, text, where))
        return
    metric = Metric(value, base)
    if minmax is not None:
        lo, hi = minmax
        metric.minimum = _finite(_scale(lo, factor), canonical or key, str(lo), notes) if lo is not None else None
        metric.maximum = _finite(_scale(hi, factor), canonical or key, str(hi), notes) if hi is not None else None
    if canonical is None:
        launch.unmapped.setdefault(key, metric)
    elif canonical not in launch.metrics:
        # The first section that reports a metric wins; later sections repeat it.
        launch.metrics[canonical] = metric


def parse_details(header: list[str], rows: Iterable[list[str]], notes: report_input.Notes) -> Report:
    """Details page: one row per (launch, section, metric) or (launch, section, rule).

    With `--print-details all` ncu also prints a section's body tables (the NUMA Affinity table) and notes (the
    NVLink topology's) between the launch's rows, without the launch columns: they belong to the launch above.
    """
    ident = _Identity(header, notes)
    col = _details_columns(header)
    body_layout = col["Body Item Label"] is not None
    launch_width = min(i for i in (col["Section Name"], col["Metric Name"]) if i is not None) if body_layout else 0
    launches: dict[tuple[str, ...], KernelLaunch] = {}
    launch: KernelLaunch | None = None
    section = ""
    for n, row in enumerate(rows):
        if body_layout and len(row) <= launch_width:
            if launch is None:
                notes.add(f"row {n + 2} has only {len(row)} fields before any launch: skipped", kind="short rows")
            else:
                cells = [cell.strip() for cell in row]
                launch.tables.setdefault(section if len(cells) > 1 else "notes", []).append(cells)
            continue
        if repeated_header(row, header):
            if _second_export(row, header, n, notes):
                break
            launch = None
            continue
        key = ident.key(row)
        launch = launches.get(key)
        if launch is None:
            launch = launches[key] = ident.launch(row, len(launches), notes)
        section = _cell(row, col["Section Name"])
        label = _cell(row, col["Metric Name"])
        rule = _cell(row, col["Rule Name"])
        if label:
            unit, value = _cell(row, col["Metric Unit"]), _cell(row, col["Metric Value"])
            _add_labelled(launch, section, label, unit, value, notes, body=_cell(row, col["Body Item Label"]))
        elif rule:
            speedup = _cell(row, col["Estimated Speedup"])
            launch.findings.append(
                Finding(
                    rule=rule,
                    type=_cell(row, col["Rule Type"]),
                    description=_cell(row, col["Rule Description"]),
                    section=section,
                    speedup_type=_cell(row, col["Estimated Speedup Type"]),
                    estimated_speedup_pct=_finite(U.parse_number(speedup), f"{rule} estimated speedup", speedup, notes),
                )
            )
        elif len(row) < len(header) // 2:
            notes.add(f"row {n + 2} has only {len(row)} fields: skipped", kind="short rows")
    _derive(launches.values())
    return Report(launches=list(launches.values()), layout="details")


def parse_summary(header: list[str], rows: Iterable[list[str]], notes: report_input.Notes) -> Report:
    """`--print-summary per-kernel`: one row per (kernel, metric) with Minimum / Maximum / Average."""
    ident = _Identity(header, notes)
    col = _details_columns(header)
    launches: dict[tuple[str, ...], KernelLaunch] = {}
    for n, row in enumerate(rows):
        if repeated_header(row, header):
            if _second_export(row, header, n, notes):
                break
            continue
        key = ident.key(row)
        launch = launches.get(key)
        if launch is None:
            launch = launches[key] = ident.launch(row, len(launches), notes)
        label = _cell(row, col["Metric Name"])
        if not label:
            continue
        lo = U.parse_number(_cell(row, col["Minimum"]))
        hi = U.parse_number(_cell(row, col["Maximum"]))
        _add_labelled(
            launch,
            _cell(row, col["Section Name"]),
            label,
            _cell(row, col["Metric Unit"]),
            _cell(row, col["Average"]),
            notes,
            minmax=(lo, hi),
        )
    _derive(launches.values())
    return Report(launches=list(launches.values()), layout="summary")


def _second_export(row: Sequence[str], header: Sequence[str], n: int, notes: report_input.Notes) -> bool:
    """A header row in the body (two exports in one file): True, with a warning, when it differs from the first
    header (reading on would put its cells under the wrong columns); False, with a warning, when it repeats it."""
    cells = [c.strip() for c in row]
    if cells != list(header):
        notes.add(
            f"row {n + 2} starts a second export with other columns (two files in one?): it and the rows after "
            "it are not read; split the file"
        )
        return True
    notes.add(f"row {n + 2} repeats the header (two exports in one file?): skipped, the rows after it are read")
    return False


def derived_metric(value: float, unit: str, formula: str) -> Metric:
    """A metric the report lacked, derived from others (M.fill_fallbacks' `make`)."""
    return Metric(value, unit, derived_from=formula)


def _derive(launches: Iterable[KernelLaunch]) -> None:
    """Derived metrics of details and summary launches (the raw page's come per block from raw_page), and the
    metrics the page lacks but its others give (M.FALLBACKS)."""
    for launch in launches:
        M.fill_fallbacks(launch.metrics, derived_metric)
        launch.derived = M.derive(launch.metric_values())
