"""A parsed source page as tables and back, so it can be kept as Parquet (profiling.app.precompute) and read
again without parsing the CSV: rebuilding the objects from columns is several times faster than the parse.

Four tables: `page` (one row: view, source, warnings), `kernels` (one row per section, in page order), `lines`
(the cuda,sass view's source lines) and `instructions`. Dict fields (stall reasons, counters, text attributes)
travel as JSON text: their keys are ncu's column labels, which differ between exports.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

from profiling.nsight.source import Instruction, KernelSource, SourceLine, SourcePage

if TYPE_CHECKING:
    import pandas as pd


def page_tables(page: SourcePage) -> dict[str, pd.DataFrame]:
    """The page as {page, kernels, lines, instructions} DataFrames (see page_from_tables)."""
    import pandas as pd

    kernels, lines, instructions = [], [], []
    for k, kernel in enumerate(page.kernels):
        kernels.append(
            {
                "kernel": k,
                "name": kernel.name,
                "view": kernel.view,
                "file": kernel.file,
                "columns": json.dumps(kernel.columns),
                "catalog_id": kernel.catalog_id,
                "source_note": kernel.source_note,
            }
        )
        lines += [
            {"kernel": k, "line": ln.line, "file": ln.file, "text": ln.text, "addresses": json.dumps(ln.addresses)}
            for ln in kernel.lines
        ]
        for address, ins in kernel.instructions.items():
            instructions.append(
                {
                    "kernel": k,
                    "key": address,
                    "address": ins.address,
                    "sass": ins.sass,
                    "samples": ins.samples,
                    "samples_not_issued": ins.samples_not_issued,
                    "executed": ins.executed,
                    "stalls": json.dumps(ins.stalls),
                    "stalls_not_issued": json.dumps(ins.stalls_not_issued),
                    "counters": json.dumps(ins.counters),
                    "attributes": json.dumps(ins.attributes),
                    "lines": json.dumps(ins.lines),
                }
            )
    meta = {"view": [page.view], "source": [page.source], "warnings": [json.dumps(page.warnings)]}
    return {
        "page": pd.DataFrame(meta),
        "kernels": pd.DataFrame(
            kernels, columns=["kernel", "name", "view", "file", "columns", "catalog_id", "source_note"]
        ),
        "lines": pd.DataFrame(lines, columns=["kernel", "line", "file", "text", "addresses"]),
        "instructions": pd.DataFrame(
            instructions,
            columns=[
                "kernel",
                "key",
                "address",
                "sass",
                "samples",
                "samples_not_issued",
                "executed",
                "stalls",
                "stalls_not_issued",
                "counters",
                "attributes",
                "lines",
            ],
        ),
    }


def _text(value: object) -> str | None:
    return None if value is None or value != value else str(value)  # Parquet gives None or NaN for a missing text


def _columns(frame: pd.DataFrame, names: list[str]) -> list[list]:
    """The columns as Python lists (one conversion per column: iterating Arrow-backed cells one by one is slow)."""
    return [frame[name].tolist() for name in names]


def _json_column(texts: list[str]) -> list:
    """Every cell's JSON value, decoded in one call (one json.loads per cell costs most of the rebuild)."""
    return json.loads("[" + ",".join(texts) + "]") if texts else []


def page_from_tables(tables: dict[str, pd.DataFrame]) -> SourcePage:
    """The SourcePage that page_tables was given, equal to it field for field."""
    page, fill = lazy_page(tables)
    for kernel in page.kernels:
        fill(kernel)
    return page


def lazy_page(tables: dict[str, pd.DataFrame]) -> tuple[SourcePage, Callable[[KernelSource], KernelSource]]:
    """The page with its sections' names, files and source lines, and `fill`, which gives a section of it its
    instructions when it is first needed (most of a page's cost: a page holds tens of thousands of them, a view
    shows one kernel's). `fill` returns the section; a section filled once, or not from this page, is left alone."""
    names = ["name", "view", "file", "columns", "catalog_id", "source_note"]
    name, view, file, columns, catalog_id, note = _columns(tables["kernels"], names)
    columns = _json_column(columns)
    kernels = [
        KernelSource(
            name=name[i],
            view=view[i],
            file=_text(file[i]),
            columns=columns[i],
            catalog_id=_text(catalog_id[i]),
            source_note=note[i],
        )
        for i in range(len(name))
    ]
    kernel, line, file, text, addresses = _columns(tables["lines"], ["kernel", "line", "file", "text", "addresses"])
    addresses = _json_column(addresses)
    for i, k in enumerate(kernel):
        kernels[k].lines.append(SourceLine(line=line[i], file=file[i], text=text[i], addresses=addresses[i]))
    ins = tables["instructions"]
    owner = ins["kernel"].tolist()
    rows: dict[int, list[int]] = {}  # section -> [first row, end row) of its instructions (stored section by section)
    for i, k in enumerate(owner):
        rows.setdefault(k, [i, i])[1] = i + 1
    pending = {id(kernel): (kernel, k) for k, kernel in enumerate(kernels)}

    def fill(section: KernelSource) -> KernelSource:
        kernel, k = pending.pop(id(section), (None, None))
        if kernel is None or k not in rows:
            return section
        part = ins.iloc[rows[k][0] : rows[k][1]]
        key, address, sass, samples, not_issued, executed = _columns(
            part, ["key", "address", "sass", "samples", "samples_not_issued", "executed"]
        )
        stalls, stalls_ni, counters, attributes, lines = (
            _json_column(part[c].tolist()) for c in ("stalls", "stalls_not_issued", "counters", "attributes", "lines")
        )
        for i in range(len(key)):
            kernel.instructions[key[i]] = Instruction(
                address=address[i],
                sass=sass[i],
                samples=samples[i],
                samples_not_issued=not_issued[i],
                executed=executed[i],
                stalls=stalls[i],
                stalls_not_issued=stalls_ni[i],
                counters=counters[i],
                attributes=attributes[i],
                lines=lines[i],
            )
        return kernel

    view, source, warnings = _columns(tables["page"], ["view", "source", "warnings"])
    page = SourcePage(kernels=kernels, view=view[0], source=source[0], warnings=json.loads(warnings[0]))
    return page, fill
