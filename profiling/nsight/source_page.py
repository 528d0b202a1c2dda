"""ncu's source page as CSV, SASS view (`ncu --import R.ncu-rep --page source --csv --print-source sass`):
for each kernel a `"Kernel Name","<name>"` line, a header, then one row per SASS instruction with its
per-instruction counters ("Instructions Executed", "Address Space", "L1 Wavefronts Shared", ...).

Only the `sass` view is read here (the `cuda,sass` view interleaves source lines); `.gz` files are opened
as gzip.
"""

from __future__ import annotations

import csv
import gzip
import io
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from profiling.errors import ReportError
from profiling.nsight.metrics import parse_number

KERNEL_NAME = '"Kernel Name"'
_CASTS = re.compile(r"\(int\)|\s")


@dataclass(frozen=True)
class SassInstruction:
    """One SASS instruction of a kernel: its text, and its counters by column name (None where ncu says '-')."""

    address: str
    source: str
    space: str
    operation: str
    counters: dict[str, float | None] = field(default_factory=dict)

    @property
    def opcode(self) -> str:
        """The instruction without its predicate: 'LDS.128', 'LDG.E.128.CONSTANT', 'LDGSTS.E.BYPASS.128'."""
        words = [w for w in self.source.split() if not w.startswith("@")]
        return words[0] if words else ""

    @property
    def executed(self) -> float:
        return self.counters.get("Instructions Executed") or 0.0


def parse_source_page(text: str) -> dict[str, list[SassInstruction]]:
    """Kernel name -> its SASS instructions, in address order."""
    out: dict[str, list[SassInstruction]] = {}
    sections = [s for s in re.split(r"^(?=" + re.escape(KERNEL_NAME) + ")", text, flags=re.M) if s.strip()]
    for section in sections:
        rows = list(csv.reader(io.StringIO(section)))
        if not rows or rows[0][:1] != ["Kernel Name"] or len(rows) < 2:
            continue
        name, header = rows[0][1], rows[1]
        if "Address" not in header or "Source" not in header:
            raise ReportError(f"source page of {name}: no Address/Source header (export with --print-source sass)")
        index = {h: i for i, h in enumerate(header)}
        instructions = []
        for row in rows[2:]:
            if len(row) != len(header):
                continue
            counters = {h: parse_number(row[i]) for h, i in index.items() if h not in ("Address", "Source")}
            text = {h: row[i] for h, i in index.items()}
            instructions.append(
                SassInstruction(
                    text["Address"],
                    text["Source"].strip(),
                    text.get("Address Space", "-"),
                    text.get("Access Operation", "-"),
                    counters,
                )
            )
        out[name] = instructions
    if not out:
        raise ReportError("no kernel sections in this source page (expected `--page source --print-source sass`)")
    return out


def load_source_page(path: str | os.PathLike[str]) -> dict[str, list[SassInstruction]]:
    """Read a source-page CSV export (plain or .gz)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ReportError(f"cannot read {path}: {exc.strerror or exc}") from None
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return parse_source_page(data.decode("utf-8", errors="replace"))


def entry_of(kernel_name: str) -> str:
    """A demangled kernel name as a catalog entry: 'void sgemm_tiled<(int)8>(const float *, ...)' ->
    'sgemm_tiled<8>', 'sgemm_v1_naive' -> 'sgemm_v1_naive'."""
    name = kernel_name.strip()
    if name.startswith("void "):
        name = name[5:]
    if "<" in name:
        head, rest = name.split("<", 1)
        args = rest.split(">", 1)[0]
        return f"{head}<{_CASTS.sub('', args)}>"
    return name.split("(", 1)[0].strip()
