"""Read Nsight Compute's source page: per-SASS-instruction warp-stall samples and memory counters.

Layouts (`ncu --import R --page source --csv --print-source sass` or `cuda,sass`, ncu 2025.3, see FIELD-NOTES):
one section per profiled kernel, opened by `"Kernel Name","<name>"` (sass) or `"File Path","<file>"` +
`"Function Name","<name>"` (cuda,sass), then a header row and one row per SASS instruction. In the cuda,sass
view a row with "Line No" and the CUDA source text precedes that line's instructions (its values are ncu's
sums over them), `"..."` rows mark gaps in the addresses, and an instruction inlined from elsewhere can be
listed under more than one line. Values carry thousands separators; "-" means not applicable. Kernels built
without -lineinfo are left out of the cuda,sass view (ncu prints a ==WARNING== instead).

Kernels of our catalog were compiled by CuPy from a temporary file that is gone when ncu reads it, so the
page says "<Unable to open source file>"; `attach_catalog_source` puts the catalog's own `.cu` lines there
(the line numbers are lines of that text).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from profiling.errors import InvalidInput, ReportError
from profiling.nsight import report_input
from profiling.nsight.report import MAX_REPORT_BYTES, NCU_REP_MAGIC

View = Literal["sass", "cuda,sass"]

SAMPLES = "Warp Stall Sampling (All Samples)"
NOT_ISSUED = "Warp Stall Sampling (Not-issued Samples)"
EXECUTED = "Instructions Executed"
N_WAY = "L1 Conflicts Shared N-Way"
SHARED_EXCESSIVE = "L1 Wavefronts Shared Excessive"
GLOBAL_EXCESSIVE = "L2 Theoretical Sectors Global Excessive"
_SKIPPED = {"# Samples"}  # the same number as SAMPLES, printed twice

# The page's short stall column names -> ncu's reason names (as in smsp__pcsamp_warps_issue_stalled_<reason>).
STALL_COLUMNS: dict[str, str] = {
    "stall_barrier": "barrier",
    "stall_branch_resolving": "branch_resolving",
    "stall_dispatch": "dispatch_stall",
    "stall_drain": "drain",
    "stall_imc": "imc_miss",
    "stall_lg": "lg_throttle",
    "stall_long_sb": "long_scoreboard",
    "stall_math": "math_pipe_throttle",
    "stall_membar": "membar",
    "stall_mio": "mio_throttle",
    "stall_misc": "misc",
    "stall_no_inst": "no_instruction",
    "stall_not_selected": "not_selected",
    "stall_selected": "selected",
    "stall_short_sb": "short_scoreboard",
    "stall_sleep": "sleeping",
    "stall_sleeping": "sleeping",  # ncu 2025.3 spells the Not Issued column this way
    "stall_tex": "tex_throttle",
    "stall_wait": "wait",
    "stall_gmma": "gmma",
    "stall_warpgroup_arrive": "warpgroup_arrive",
}
UNATTRIBUTED = "warpgroup_arrive"
"""Samples the page counts for an instruction but lists under no reason column. ncu 2025.3 has no column for
warpgroup_arrive (Hopper's HGMMA / WARPGROUP.WAIT): on every H100 capture the unlisted samples equal the raw
page's smsp__pcsamp_warps_issue_stalled_warpgroup_arrive exactly (tests/test_stalls.py)."""

_NCU_LINE = re.compile(r"^\s*==(PROF|WARNING|ERROR|WARN|INFO)==\s*(.*)")
UNOPENED = "<Unable to open source file>"


@dataclass(slots=True)
class Instruction:
    """One SASS instruction and its counters; `counters` holds every other numeric column by ncu's label."""

    address: int
    sass: str
    samples: float = 0.0
    samples_not_issued: float = 0.0
    executed: float = 0.0
    stalls: dict[str, float] = field(default_factory=dict)
    stalls_not_issued: dict[str, float] = field(default_factory=dict)
    counters: dict[str, float] = field(default_factory=dict)
    attributes: dict[str, str] = field(default_factory=dict)
    """Text columns: "Address Space" (Shared, Global...), "Access Operation" (Load, Store), "Access Size"."""
    lines: list[int] = field(default_factory=list)
    """Source lines the cuda,sass view lists it under (more than one when inlined)."""

    def to_dict(self, total_samples: float = 0.0) -> dict[str, Any]:
        return {
            "address": f"0x{self.address:x}",
            "sass": self.sass,
            "samples": self.samples,
            "pct": _pct(self.samples, total_samples),
            "samples_not_issued": self.samples_not_issued,
            "executed": self.executed,
            "dominant_stall": dominant_stall(self.stalls),
            "stalls": self.stalls,
            "bank_conflict_n_way": self.counters.get(N_WAY),
            "shared_excessive_wavefronts": self.counters.get(SHARED_EXCESSIVE),
            "global_excessive_sectors": self.counters.get(GLOBAL_EXCESSIVE),
            "lines": self.lines,
            "counters": self.counters,
            "attributes": self.attributes,
        }


@dataclass
class SourceLine:
    """One CUDA source line of the cuda,sass view with the instructions ncu lists under it."""

    line: int
    file: str
    text: str
    addresses: list[int] = field(default_factory=list)


@dataclass
class KernelSource:
    """One kernel section of a source page (one profiled launch)."""

    name: str
    view: View
    file: str | None = None
    instructions: dict[int, Instruction] = field(default_factory=dict)
    """By address, each instruction once (an inlined one listed under several lines is still one entry)."""
    lines: list[SourceLine] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    catalog_id: str | None = None
    source_note: str = ""
    """Where the line texts come from: the catalog's file, ncu's embedded source, or nothing."""

    @property
    def total_samples(self) -> float:
        """Warp-stall samples of the kernel: each instruction counted once, in either view."""
        return sum(i.samples for i in self.instructions.values())

    def stall_totals(self) -> dict[str, float]:
        """Samples per stall reason over the whole kernel, largest first."""
        totals: dict[str, float] = {}
        for ins in self.instructions.values():
            for reason, n in ins.stalls.items():
                totals[reason] = totals.get(reason, 0.0) + n
        return dict(sorted(totals.items(), key=lambda kv: -kv[1]))

    def line_instructions(self, line: SourceLine) -> list[Instruction]:
        return [self.instructions[a] for a in line.addresses]

    def line_summary(self, line: SourceLine) -> dict[str, Any]:
        """A line's totals, summed from its instructions (an inlined instruction counts under each of its lines)."""
        ins = self.line_instructions(line)
        stalls: dict[str, float] = {}
        for i in ins:
            for reason, n in i.stalls.items():
                stalls[reason] = stalls.get(reason, 0.0) + n
        samples = sum(i.samples for i in ins)
        # A barrier line holds no shared-memory access of its own: the loads ncu files under `__syncthreads();` are
        # ones the compiler moved there, and keep their n-way on their own instruction rows.
        barrier = any(i.sass.startswith("BAR") for i in ins)
        n_ways = [] if barrier else [i.counters[N_WAY] for i in ins if N_WAY in i.counters]
        return {
            "line": line.line,
            "file": line.file,
            "source": line.text,
            "samples": samples,
            "pct": _pct(samples, self.total_samples),
            "executed": sum(i.executed for i in ins),
            "dominant_stall": dominant_stall(stalls),
            "stalls": dict(sorted(stalls.items(), key=lambda kv: -kv[1])),
            # ncu's line row sums the instructions' n-way, which reads as nonsense; the worst access says more.
            "bank_conflict_n_way": max(n_ways) if n_ways else None,
            "shared_excessive_wavefronts": sum(i.counters.get(SHARED_EXCESSIVE, 0.0) for i in ins),
            "global_excessive_sectors": sum(i.counters.get(GLOBAL_EXCESSIVE, 0.0) for i in ins),
            "instructions": len(ins),
            "addresses": [f"0x{a:x}" for a in line.addresses],
        }

    def hottest_instructions(self, top: int = 10) -> list[Instruction]:
        ranked = sorted(self.instructions.values(), key=lambda i: (-i.samples, i.address))
        return ranked[:top]

    def hottest_lines(self, top: int = 10) -> list[dict[str, Any]]:
        ranked = sorted((self.line_summary(ln) for ln in self.lines), key=lambda s: (-s["samples"], s["line"]))
        return ranked[:top]

    def to_dict(self, top: int | None = None) -> dict[str, Any]:
        """The `source --json` shape; `top` keeps the hottest lines and instructions only."""
        total = self.total_samples
        if top is None:
            lines = [self.line_summary(ln) for ln in self.lines]
            instructions = sorted(self.instructions.values(), key=lambda i: i.address)
        else:
            lines, instructions = self.hottest_lines(top), self.hottest_instructions(top)
        return {
            "kernel": self.name,
            "view": self.view,
            "file": self.file,
            "catalog_id": self.catalog_id,
            "source_note": self.source_note,
            "total_samples": total,
            "instruction_count": len(self.instructions),
            "stalls": self.stall_totals(),
            "lines": lines,
            "instructions": [i.to_dict(total) for i in instructions],
        }


@dataclass
class SourcePage:
    """Every kernel section read from one or two exports of one report's source page."""

    kernels: list[KernelSource]
    view: str
    source: str = ""
    warnings: list[str] = field(default_factory=list)

    def select(self, name: str | None) -> list[KernelSource]:
        """Kernels whose name contains `name` (all when None); InvalidInput naming the kernels there otherwise."""
        if not name:
            return list(self.kernels)
        exact = [k for k in self.kernels if k.name == name or k.catalog_id == name]
        found = exact or [k for k in self.kernels if name in k.name]
        if not found:
            names = ", ".join(dict.fromkeys(short_name(k.name) for k in self.kernels))
            raise InvalidInput(f"no kernel named '{name}' in {Path(self.source).name or 'the page'}; it has: {names}")
        return found

    def to_dict(self, top: int | None = None, name: str | None = None) -> dict[str, Any]:
        return {
            "source": self.source,
            "view": self.view,
            "kernels": [k.to_dict(top) for k in self.select(name)],
            "warnings": self.warnings,
        }


def _pct(part: float, whole: float) -> float:
    return 100.0 * part / whole if whole else 0.0


def dominant_stall(stalls: dict[str, float]) -> str | None:
    """The reason with most samples, "selected" (issuing, not a stall) only when nothing else has any."""
    ranked = sorted(((n, r) for r, n in stalls.items() if n > 0), reverse=True)
    for _, reason in ranked:
        if reason != "selected":
            return reason
    return ranked[0][1] if ranked else None


def short_name(name: str) -> str:
    """'void sgemm_tiled<(int)8>(const float *, ...)' -> 'sgemm_tiled<8>'."""
    name = name.strip().removeprefix("void ")
    depth, cut = 0, len(name)
    for i, ch in enumerate(name):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            cut = i
            break
    return re.sub(r"\((?:int|unsigned int|bool|long)\)|\s+", "", name[:cut])


# ---------------------------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------------------------


def parse_source_bytes(data: bytes | bytearray, source: str = "") -> SourcePage:
    """Parse a source-page export (plain or gzip CSV); a gzip one is unpacked as a stream, up to MAX_REPORT_BYTES."""
    name = Path(source).name or "the page"
    if data[:2] == report_input.GZIP_MAGIC:
        data = report_input.gunzip(data, name, MAX_REPORT_BYTES)
    if data.startswith(NCU_REP_MAGIC):
        raise ReportError(
            f"{name} is a .ncu-rep; read it with source_load.load_source_page (`python -m profiling source {name}`)"
        )
    if b"\x00" in data[:65536]:
        raise ReportError(f"{name} is a binary file, not an Nsight Compute source-page CSV")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return parse_source_text(text, source=source)


class _Columns:
    """Positions of one section header's columns."""

    def __init__(self, header: list[str]):
        self.header = header
        self.cuda = header[0] == "Line No"
        self.address = header.index("Address")
        self.sass = self.address + 1  # the second "Source" column in cuda,sass
        self.line_text = 1 if self.cuda else None
        numeric = []
        for i, label in enumerate(header):
            if i <= self.sass or label in _SKIPPED:
                continue
            numeric.append((i, label))
        self.numeric = numeric
        self.width = len(header)


def parse_source_text(text: str, source: str = "") -> SourcePage:
    """Parse the text of `--page source --csv` (sass or cuda,sass view); ReportError when it has no source rows."""
    name = Path(source).name or "the page"
    warnings: list[str] = []
    body: list[str] = []
    for line in text.lstrip("\ufeff").splitlines():
        match = _NCU_LINE.match(line)
        if match:
            if match.group(1) in ("WARNING", "WARN", "ERROR"):
                warnings.append(match.group(2).strip())
            continue
        body.append(line)
    kernels: list[KernelSource] = []
    kernel: KernelSource | None = None
    cols: _Columns | None = None
    pending_file: str | None = None
    line_obj: SourceLine | None = None
    cache: dict[str, float | None] = {"0": 0.0}
    views: set[str] = set()
    for row in csv.reader(body):
        if not row:
            continue
        first = row[0]
        if first == "Kernel Name" and len(row) >= 2:
            kernel = KernelSource(name=row[1], view="sass")
            kernels.append(kernel)
            cols, line_obj = None, None
            continue
        if first == "File Path" and len(row) >= 2:
            pending_file = row[1]
            continue
        if first == "Function Name" and len(row) >= 2:
            # A function whose code comes from several files gets one section per file; a second launch of it
            # repeats the same file, so only a new file continues the kernel.
            if (
                kernel is not None
                and kernel.view == "cuda,sass"
                and kernel.name == row[1]
                and kernel.file != pending_file
            ):
                kernel.source_note = "several files"
            else:
                kernel = KernelSource(name=row[1], view="cuda,sass", file=pending_file)
                kernels.append(kernel)
            cols, line_obj = None, None
            continue
        if first in ("Address", "Line No") and "Address" in row:
            if kernel is None:
                raise ReportError(f"{name}: a source-page header before any kernel name; not an ncu export?")
            cols = _Columns([c.strip() for c in row])
            kernel.columns = cols.header
            views.add("cuda,sass" if cols.cuda else "sass")
            continue
        if cols is None or kernel is None:
            continue
        if cols.cuda and first:
            if first.isdigit():
                text_cell = row[1] if len(row) > 1 else ""
                # The section's own file: a kernel whose body lives in a header has lines of two files.
                line_obj = SourceLine(line=int(first), file=pending_file or kernel.file or "", text=text_cell)
                kernel.lines.append(line_obj)
            continue
        address_text = row[cols.address] if len(row) > cols.address else ""
        if not address_text.startswith("0x"):
            continue  # "..." gap rows
        address = int(address_text, 16)
        known = kernel.instructions.get(address)
        if known is None:
            known = _instruction(row, cols, address, cache)
            kernel.instructions[address] = known
        if line_obj is not None:
            line_obj.addresses.append(address)
            known.lines.append(line_obj.line)
    kernels = _drop_repeats(kernels, warnings)
    if not kernels or not any(k.instructions for k in kernels):
        detail = f" (ncu said: {warnings[0][:200]})" if warnings else ""
        raise ReportError(
            f"{name} has no source rows{detail}; expected `ncu --import R.ncu-rep --page source --csv "
            "--print-source sass` (or cuda,sass) of a report profiled with source counters"
        )
    return SourcePage(kernels=kernels, view=",".join(sorted(views)) or "sass", source=source, warnings=warnings)


def _drop_repeats(kernels: list[KernelSource], warnings: list[str]) -> list[KernelSource]:
    """ncu 2025.3 prints some sections twice in a row (the foreign capture: 22 sections for 17 launches, each
    repeat identical to the one before). Identical nonzero samples on every instruction cannot come from two
    launches, so a repeat is kept once."""
    kept: list[KernelSource] = []
    for kernel in kernels:
        prev = kept[-1] if kept else None
        if (
            prev is not None
            and prev.name == kernel.name
            and prev.total_samples > 0
            and prev.instructions == kernel.instructions
            and [ln.line for ln in prev.lines] == [ln.line for ln in kernel.lines]
        ):
            warnings.append(f"ncu printed the section of {short_name(kernel.name)} twice in a row; kept once")
            continue
        kept.append(kernel)
    return kept


def _instruction(row: list[str], cols: _Columns, address: int, cache: dict[str, float | None]) -> Instruction:
    ins = Instruction(address=address, sass=row[cols.sass].strip() if len(row) > cols.sass else "")
    counters, attributes = ins.counters, ins.attributes
    for i, label in cols.numeric:
        if i >= len(row):
            break
        cell = row[i]
        if cell == "0" or cell == "-" or not cell:
            continue
        if cell in cache:
            value = cache[cell]
        else:
            value = cache[cell] = _number(cell)
        if value is None:
            attributes[label] = cell.strip()
        elif value:
            counters[label] = value
    ins.samples = counters.pop(SAMPLES, 0.0)
    ins.samples_not_issued = counters.pop(NOT_ISSUED, 0.0)
    ins.executed = counters.get(EXECUTED, 0.0)
    listed = 0.0
    for label in [k for k in counters if k.startswith("stall_")]:
        value = counters.pop(label)
        base, _, suffix = label.partition(" (")
        reason = STALL_COLUMNS.get(base, base.removeprefix("stall_"))
        if suffix:
            ins.stalls_not_issued[reason] = ins.stalls_not_issued.get(reason, 0.0) + value
        else:
            ins.stalls[reason] = ins.stalls.get(reason, 0.0) + value
            listed += value
    if ins.samples > listed:
        ins.stalls[UNATTRIBUTED] = ins.samples - listed
    return ins


def _number(cell: str) -> float | None:
    text = cell.strip().replace(",", "")
    try:
        return float(text)
    except ValueError:
        return None
