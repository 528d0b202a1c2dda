"""The raw page's launch rows, read in blocks by Arrow into a MetricTable (launch x metric, float64).

Reading a 200 MB raw page cell by cell in Python took minutes and 30 times the file's size in memory, and
reading it column by column (pandas) took minutes on a page of 100,000 columns. Here a block of rows (a bounded
number of cells, whatever the page's shape) is split into cells and cast to float64 in Arrow, so only text cells
become Python objects. Values are exact: Arrow's cast rounds as `float()` does, cells it would read otherwise go
through `float()` (units.parse_number), and ncu's auto units are scaled to base units as `round(value * factor,
3)` does (see `round3`). A value that is not finite (`nan`, `inf`, `1e400`, or one that overflows when scaled),
a negative duration, size or count, and a decimal comma are missing, with one warning per metric.
"""

from __future__ import annotations

import csv
import gc
import io
import itertools
import math
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from profiling.errors import ReportError
from profiling.nsight import arrow_cells as A
from profiling.nsight import metrics as M
from profiling.nsight import units as U
from profiling.nsight.metric_table import MetricRow, MetricTable
from profiling.nsight.report_input import Notes, record_cells

if TYPE_CHECKING:
    import numpy as np

CHUNK_ROWS = 2048
"""Launch rows parsed per block at most."""
CELLS_PER_BLOCK = 1 << 18
"""Cells parsed per block (rows = this / the header's width): a block's cells stay a few MB however wide the page."""


@dataclass(frozen=True)
class MetricColumn:
    """One metric column of the raw page: its position, name, and how to reach base units."""

    index: int
    name: str
    factor: float
    unit: str
    nonnegative: bool = False
    """Values below zero are wrong here (durations, sizes, counts: units.never_negative) and are not read."""


class Repeat:
    """A raw page's header and units row, to tell a second export's header in the body (two files in one)."""

    def __init__(self, header: Sequence[str], units: Sequence[str]) -> None:
        self.header = list(header)
        self.units = [u.strip() for u in units]
        self.units_next = False  # a repeated header was just read: its units row follows


@dataclass
class RawRow:
    """One launch row: its identity cells (in the order asked for), metric values, derived values and texts."""

    cells: list[str]
    metrics: MetricRow
    derived: MetricRow
    attributes: dict[str, str]


def round3(values: np.ndarray) -> np.ndarray:
    """`round(v, 3)` of each value, exactly as Python rounds (numpy's rint(v * 1000) / 1000 differs near ties)."""
    import numpy as np  # lazy: the CLI and the worker start without numpy

    with np.errstate(over="ignore", invalid="ignore"):  # huge values: Python's round() takes them below
        scaled = values * 1000.0
        out = np.rint(scaled) / 1000.0
        frac = scaled - np.floor(scaled)
        # rint() picks the other integer only when x * 1000 lies within its rounding error of a tie.
        near = (np.abs(frac - 0.5) <= np.abs(scaled) * 2.0**-50) | (np.abs(scaled) >= 2.0**52)
    for i in np.flatnonzero(near & np.isfinite(values)):
        out[i] = round(float(values[i]), 3)
    return out


def _checked_records(
    records: Iterator[str],
    width: int,
    identity: Sequence[int],
    id_index: int | None,
    notes: Notes,
    passed: list[int],
    repeat: Repeat | None = None,
) -> Iterator[tuple[str, bool]]:
    """Records with the header's field count, counted in passed[0], each with whether it is a full row as ncu
    writes it; longer ones are dropped, shorter ones noted.

    ncu quotes every cell, so a full row has exactly width - 1 '","' separators; only other rows are split by
    csv to count their fields. A short row is a cut one: its last field may be cut mid-number ("4." of
    "4.420992"), so a metric there is not read. A header in the body (`repeat`: two exports in one file) is
    skipped with its units row when both repeat the first ones; otherwise reading stops there, with a warning.
    """
    separators = width - 1
    for number, record in enumerate(records, start=1):
        if repeat is not None and (repeat.units_next or record.startswith('"ID","')):
            verdict = _second_header(record, number, repeat, notes)
            if verdict == "stop":
                return
            if verdict == "skip":
                continue
        if (
            separators
            and record[:1] == '"'
            and record.endswith(_QUOTE_ENDS)
            and record.count('","') == separators
            and _OVERLAPPING_SEPARATORS not in record
        ):
            passed[0] += 1
            yield record, True
            continue
        if not record.strip():
            continue
        cells = record_cells(record)
        if len(cells) > width:
            notes.add(f"row {number} has {len(cells)} fields, more than the header's {width}: skipped", "long rows")
            continue
        if len(cells) < width and any(cell.strip() for cell in cells):
            launch = cells[id_index].strip() if id_index is not None and id_index < len(cells) else ""
            notes.add(f"launch {launch or '?'} has {len(cells)} of {width} fields (truncated file?)", "short rows")
            if len(cells) - 1 not in identity:
                cells[-1] = ""
                record = _quoted(cells)
        passed[0] += 1
        yield record, False


_QUOTE_ENDS = ('"\n', '"')
# A cell ending in '",' is written '..."","': its doubled quote and the separator after it make two '","' that
# overlap, which count and split both take as one, so the cells after it would shift. Such a row is read by csv.
_OVERLAPPING_SEPARATORS = '",","'


def _second_header(record: str, number: int, repeat: Repeat, notes: Notes) -> str | None:
    """A header row (or the units row after one) in the body: "skip" it, "stop" reading there, or None when it is
    neither (a launch row, read as usual)."""
    cells = [cell.strip() for cell in record_cells(record)]
    if repeat.units_next:
        repeat.units_next = False
        again = f"row {number + 1} repeats the header (two exports in one file?): skipped"
        if cells == repeat.units:
            notes.add(f"{again} with its units row, the rows after them are read")
            return "skip"
        if not (cells and cells[0] == ""):  # no units row: a launch row, which is read as usual
            notes.add(f"{again}, the rows after it are read")
            return None
        notes.add(
            f"row {number + 1} repeats the header but the units row after it differs from the first's: the rows from "
            f"there on are not read (their values would be scaled otherwise); split the file"
        )
        return "stop"
    if cells != repeat.header:
        if not (cells and cells[0] == "ID"):
            return None
        notes.add(
            f"row {number + 2} starts a second export with other columns (two files in one?): it and the rows after "
            "it are not read; split the file"
        )
        return "stop"
    repeat.units_next = True  # the warning waits for the row after it: a units row, the same or not, or a launch
    return "skip"


def _quoted(cells: list[str]) -> str:
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerow(cells)
    return out.getvalue()


_GROUPED = re.compile(U.GROUPED_NUMBER)
# What Arrow's cast reads exactly as float() does: digits with an optional point and exponent, or ncu's thousands
# groups. Anything else (spaces, "inf", "1_000", text) is read cell by cell through units.parse_number.
_ARROW_NUMBER = r"^[-+]?(?:\d+\.?\d*|\.\d+|\d{1,3}(?:,\d{3})+(?:\.\d*)?)(?:[eE][-+]?\d+)?$"
_ARROW_GROUPED = r"^[-+]?\d{1,3}(?:,\d{3})+(?:\.\d*)?(?:[eE][-+]?\d+)?$"


def _not_finite(name: str, cell: str) -> str:
    return f"{name}: value {cell.strip()[:40]!r} is not a finite number; taken as missing"


class _Columns:
    """Where a block's cells go: identity positions, metric positions with their scaling, as numpy arrays."""

    def __init__(self, width: int, identity: Sequence[int], columns: Sequence[MetricColumn]) -> None:
        import numpy as np

        self.width = width
        self.identity = np.asarray(list(identity), dtype=np.int64)
        self.metrics = np.asarray([c.index for c in columns], dtype=np.int64)
        self.names = [c.name for c in columns]
        factors = np.asarray([c.factor for c in columns], dtype=np.float64)
        self.scaled = np.flatnonzero(factors != 1.0)
        self.scaled_up = np.flatnonzero(factors > 1.0)
        self.factors = factors
        self.nonnegative = np.flatnonzero(np.asarray([c.nonnegative for c in columns], dtype=bool))


def _split_block(records: list[tuple[str, bool]], width: int):  # -> (pyarrow.StringArray, bool)
    """The cells of a block of records (with whether each is a full row, as _checked_records tells), row after row,
    each row exactly `width` cells (short rows padded with ""), and whether a cell may hold a doubled quote.

    ncu quotes every cell, so full rows split on their '","' separators in Arrow (no Python object per cell): a run
    of them is joined into one text whose row ends '"\\n"' become separators too, so the run is split at once; a
    quoted '"\\n"' inside a cell would add a cell, so a run whose cell count is not the rows' is split row by row,
    and any other odd row is read by csv. Cells keep their quotes doubled as the file writes them ('""' inside a
    cell: ncu's NVTX column has them; csv's cells are doubled again to match): a doubled quote is no part of a
    number or of "" and "n/a", and only the cells that become text are undone (_unescape), not every cell of the
    block.
    """
    import pyarrow as pa

    pieces = []
    plain: list[str] = []
    quoted = False

    def flush() -> None:
        nonlocal quoted
        if not plain:
            return
        text = "".join(plain)
        if not text.endswith("\n"):  # the file's last line
            text += "\n"
        text = text.replace('"\n"', '","')
        rows = len(plain)
        quoted = quoted or text.count('"') != 2 * width * rows  # only the quotes around each cell
        cells = _split_run(text)
        if len(cells) != rows * width:
            cells = pa.concat_arrays([_split_run(record.rstrip("\n") + "\n") for record in plain])
        pieces.append(cells)
        plain.clear()

    for record, full in records:
        if full:
            plain.append(record)
            continue
        flush()
        cells = record_cells(record)[:width]
        if any('"' in cell for cell in cells):
            quoted = True
            cells = [cell.replace('"', '""') for cell in cells]
        pieces.append(A.string_array(cells + [""] * (width - len(cells))))
    flush()
    return (pa.concat_arrays(pieces) if len(pieces) > 1 else pieces[0]), quoted


def _split_run(text: str):  # -> pyarrow.StringArray
    """The cells of '"a","b",...,"z"\\n' split on '","' in Arrow (the outer quotes and the line end left out)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    data = text.encode("utf-8")
    if len(data) >= 2**31:  # a block is a few MB; the files read are at most MAX_REPORT_BYTES
        raise ReportError("a block of the raw page holds over 2 GB of text")
    offsets = pa.py_buffer(np.array([1, len(data) - 2], dtype=np.int32))
    one = pa.StringArray.from_buffers(1, offsets, pa.py_buffer(data))
    return pc.split_pattern(one, '","').flatten()


def _unescape(text: str, quoted: bool) -> str:
    """A cell's text with its doubled quotes undone (see _split_block)."""
    return text.replace('""', '"') if quoted and '""' in text else text


def _empty_cells(cells) -> np.ndarray:  # cells: pyarrow.StringArray
    """Which cells are "" or "n/a", told from their lengths (only cells of three characters are compared)."""
    import numpy as np
    import pyarrow.compute as pc

    lengths = A.ints(pc.binary_length(cells))
    empty = lengths == 0
    three = np.flatnonzero(lengths == 3)
    if len(three):
        not_available = A.string_array(["n/a"])[0]  # a scalar from an array: pa.scalar() imports pandas
        empty[three] = A.bools(pc.equal(pc.take(cells, A.from_numpy(three)), not_available))
    return empty


def _column_mask(columns: set[int], width: int, cells: int) -> np.ndarray:
    """Which of `cells` (rows of `width`, row after row) lie in `columns`."""
    import numpy as np

    by_column = np.zeros(width, dtype=bool)
    by_column[list(columns)] = True
    return np.tile(by_column, cells // width)


def _cast_known(cells, width: int, text_columns: set[int], empty: np.ndarray, comma_columns: set[int] | None = None):
    """(float64 values, mask of the cells cast) when every cell outside `text_columns` (columns that held text in an
    earlier block) and `empty` (the cells that are "" or "n/a") is a number Arrow takes, else None: most blocks
    need no regex then. Cells with thousands separators are cast apart, without them (only those cells are
    rewritten); a comma that is no thousands separator keeps its cell out of the cast (it goes through Python, and
    is named there). `comma_columns` (columns that held a comma in an earlier block) grows as blocks are read."""

    skip = empty.copy()
    if text_columns:
        skip |= _column_mask(text_columns, width, len(cells))
    if comma_columns:
        fast = _cast_by_comma_columns(cells, width, skip, comma_columns)
        if fast is not None:
            return fast
    return _cast_finding_commas(cells, width, skip, comma_columns)


def _cast_by_comma_columns(cells, width: int, skip: np.ndarray, comma_columns: set[int]):
    """_cast_known's answer where only the cells of `comma_columns` hold commas, without looking for commas in
    every cell: the other cells are cast at once (a comma among them fails the cast), and the cells of those
    columns as _cast_finding_commas casts them, once per distinct text. None where a cast fails (_cast_finding_commas
    then gives the answer)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    candidates = _column_mask(comma_columns, width, len(cells)) & ~skip
    try:
        values = A.floats(pc.cast(pc.if_else(A.from_numpy(skip | candidates), A.null_text(), cells), pa.float64()))
        at = np.flatnonzero(candidates)
        if len(at):
            codes, castable, numbers = _distinct_numbers(cells, at)
            values[at] = numbers[codes]
            skip[at[~castable[codes]]] = True
    except (pa.ArrowInvalid, ValueError):
        return None
    return values, ~skip


def _distinct_numbers(cells, at: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The cells at `at`, each distinct text read once (texts with a comma repeat: a device's attributes,
    "1,980,000" in every launch): (each cell's text code, per text whether it is a number as ncu writes it, without a
    comma or with thousands separators, per text its value, NaN where it is not). Raises ArrowInvalid where a text
    without a comma is no number."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    coded = pc.take(cells, A.from_numpy(at)).dictionary_encode()
    texts, codes = coded.dictionary, A.ints(coded.indices)
    with_comma = A.bools(pc.match_substring(texts, ","))
    castable = ~with_comma | (with_comma & A.bools(pc.match_substring_regex(texts, _ARROW_GROUPED)))
    which = np.flatnonzero(castable)
    numbers = np.full(len(texts), np.nan)
    numbers[which] = A.floats(pc.cast(pc.replace_substring(pc.take(texts, A.from_numpy(which)), ",", ""), pa.float64()))
    return codes, castable, numbers


def _cast_finding_commas(cells, width: int, skip: np.ndarray, comma_columns: set[int] | None):
    """_cast_known's answer, the cells with a comma found by looking at every cell."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    apart = skip
    grouped_at, grouped_values = None, None
    commas = pc.match_substring(cells, ",")
    if pc.any(commas).as_py():
        with_comma = A.bools(commas)
        at = np.flatnonzero(with_comma & ~skip)
        if comma_columns is not None:
            comma_columns.update(np.unique(at % width).tolist())
        if len(at):
            try:
                codes, castable, numbers = _distinct_numbers(cells, at)  # every text has a comma: castable = grouped
            except (pa.ArrowInvalid, ValueError):
                return None
            grouped = castable[codes]
            skip[at[~grouped]] = True
            grouped_at, grouped_values = at[grouped], numbers[codes[grouped]]
        apart = skip | with_comma
    try:
        values = A.floats(pc.cast(pc.if_else(A.from_numpy(apart), A.null_text(), cells), pa.float64()))
    except (pa.ArrowInvalid, ValueError):
        return None
    if grouped_at is not None:
        values[grouped_at] = grouped_values
    return values, ~skip


def _numbers(
    cells,
    notes: Notes,
    names: list[str],
    where,
    parsed: dict[str, tuple[float | None, bool]],
    text_columns: set[int],
    quoted: bool = False,
    comma_columns: set[int] | None = None,
):
    """float64 values of a row-major (rows x metrics) block of metric cells, NaN where missing, and the text cells
    as (flat index, text). Numbers Arrow reads exactly are cast there; the rest one by one (units.parse_number).
    `text_columns` (columns with a cell Arrow did not cast) and `comma_columns` (columns with a comma) grow as
    blocks are read; `quoted`: the cells may hold doubled quotes (_split_block)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    width = len(names)
    empty = _empty_cells(cells)
    fast = _cast_known(cells, width, text_columns, empty, comma_columns)
    if fast is not None:
        values, cast = fast
        nan_cast = np.flatnonzero(np.isnan(values) & cast)  # "nan" is a number to Arrow: named here
        for i, cell in zip(nan_cast.tolist(), pc.take(cells, A.from_numpy(nan_cast)).to_pylist(), strict=True):
            notes.once(names[i % width], _not_finite(names[i % width], cell))
        numeric = A.from_numpy(cast)
    else:
        numeric = pc.match_substring_regex(cells, _ARROW_NUMBER)
        commas = pc.any(pc.match_substring(cells, ",")).as_py()
        cast_from = pc.replace_substring(cells, ",", "") if commas else cells
        try:
            values = A.floats(pc.cast(pc.if_else(numeric, cast_from, A.null_text()), pa.float64()))
        except (pa.ArrowInvalid, ValueError):  # a number Arrow does not take after all: every cell through Python
            numeric = A.from_numpy(np.zeros(len(cells), dtype=bool))
            values = np.full(len(cells), np.nan)
    others = ~A.bools(numeric) & ~empty
    found: list[tuple[int, str]] = []
    at = np.flatnonzero(others)
    if len(at):
        text_columns.update(np.unique(at % width).tolist())
        for i, raw in zip(at.tolist(), pc.take(cells, A.from_numpy(at)).to_pylist(), strict=True):
            cell = _unescape(raw, quoted)
            known = parsed.get(cell)
            if known is None:
                number = U.parse_number(cell)
                known = (number, number is None and U.malformed_number(cell.strip()))
                if len(parsed) < 100_000:  # a report repeats a few texts; a hostile one need not
                    parsed[cell] = known
            value, malformed = known
            if value is None:
                text = cell.strip()
                if malformed:
                    name = names[i % width]
                    notes.once(name, U.malformed_note(name, text, where(i // width)))
                elif text and text != "n/a":
                    found.append((i, text))
            elif math.isfinite(value):
                values[i] = value
            else:
                notes.once(names[i % width], _not_finite(names[i % width], cell))
    return values, found


def read_raw_rows(
    records: Iterator[str],
    width: int,
    identity: Sequence[int],
    columns: Sequence[MetricColumn],
    id_index: int | None,
    notes: Notes,
    name: str,
    repeat: Repeat | None = None,
) -> Iterator[RawRow]:
    """Parse the raw page's launch rows (after the units row) block by block.

    `identity` are the positions of the launch-identity columns (their cells come back as stripped text, in that
    order); `columns` the metric columns, with unique names. Text cells in metric columns become attributes. A
    block holds at most CELLS_PER_BLOCK cells (and CHUNK_ROWS rows), so a wide page (100,000 columns) and a long one
    cost the same per cell: the cells live in Arrow arrays, and only text cells become Python strings.
    """
    table = MetricTable([c.name for c in columns], [c.unit for c in columns])
    layout = _Columns(width, identity, columns)
    checked = _checked_records(records, width, list(identity), id_index, notes, [0], repeat)
    per_block = max(1, min(CHUNK_ROWS, CELLS_PER_BLOCK // max(1, width)))
    interned: dict[str, str] = {}
    parsed: dict[str, tuple[float | None, bool]] = {}
    text_columns: set[int] = set()
    comma_columns: set[int] = set()
    while True:
        block = list(itertools.islice(checked, per_block))
        if not block:
            return
        try:
            cells, quoted = _split_block(block, width)
        except (ReportError, OSError):
            raise
        except Exception as exc:  # Arrow is a boundary: whatever it raises on bad input is one line
            raise ReportError(f"{name}: the raw page is unreadable ({_one_line(exc)})") from None
        yield from _block_rows(
            cells, len(block), table, layout, notes, interned, parsed, text_columns, id_index, quoted, comma_columns
        )


_DERIVED = MetricTable(M.DERIVED_NAMES, [M.DERIVED_UNITS.get(name, "") for name in M.DERIVED_NAMES])


def _block_rows(
    cells,  # pyarrow.StringArray, rows x width, row-major
    rows: int,
    table: MetricTable,
    layout: _Columns,
    notes: Notes,
    interned: dict[str, str],
    parsed: dict[str, tuple[float | None, bool]],
    text_columns: set[int],
    id_index: int | None = None,
    quoted: bool = False,
    comma_columns: set[int] | None = None,
) -> Iterator[RawRow]:
    """The launches of one block of rows, with their derived metrics computed for the whole block at once; `quoted`:
    the cells may hold doubled quotes (_split_block); `comma_columns`: as _numbers takes it."""
    import numpy as np
    import pyarrow.compute as pc

    starts = np.arange(rows, dtype=np.int64)[:, None] * layout.width
    # Identity cells repeat (a kernel's name, its device, its block size): each distinct text becomes one string.
    coded = pc.take(cells, A.from_numpy((starts + layout.identity[None, :]).ravel())).dictionary_encode()
    texts = coded.dictionary.to_pylist()
    if quoted:
        texts = [_unescape(text, quoted) for text in texts]
    texts = [interned.setdefault(text, text).strip() for text in texts]
    ident_cells = list(map(texts.__getitem__, A.ints(coded.indices).tolist()))
    n_ident = len(layout.identity)
    id_at = list(layout.identity).index(id_index) if id_index is not None and id_index in layout.identity else None

    def where(r: int) -> str:
        return f"launch {ident_cells[r * n_ident + id_at][:40]}" if id_at is not None else f"row {r + 1}"

    metric_cells = pc.take(cells, A.from_numpy((starts + layout.metrics[None, :]).ravel()))
    del cells
    values, found = _numbers(metric_cells, notes, layout.names, where, parsed, text_columns, quoted, comma_columns)
    block = values.reshape(rows, table.width)
    if len(layout.nonnegative):  # before scaling: a tiny negative value must not round to -0.0
        sub = block[:, layout.nonnegative]
        with np.errstate(invalid="ignore"):
            negative = (sub < 0) & np.isfinite(sub)  # -inf is named as not finite, below
        if negative.any():
            for r, k in _first_per_column(negative):
                j = int(layout.nonnegative[k])
                name = layout.names[j]
                notes.once(name, U.negative_note(name, _cell_text(metric_cells, r * table.width + j, quoted), where(r)))
            sub[negative] = np.nan
            block[:, layout.nonnegative] = sub
    if len(layout.scaled):
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow to inf is caught just below
            block[:, layout.scaled] *= layout.factors[layout.scaled]
        if len(layout.scaled_up):
            # "0.509472" ms is 509,472 ns exactly; drop the float noise of the scaling.
            up = block[:, layout.scaled_up]
            block[:, layout.scaled_up] = round3(up.ravel()).reshape(up.shape)
    bad = np.isinf(block)
    if bad.any():
        for r, j in _first_per_column(bad):
            name = layout.names[j]
            notes.once(name, _not_finite(name, _cell_text(metric_cells, r * table.width + j, quoted)))
        block[bad] = np.nan
    nothing = np.full(rows, np.nan)
    derived = M.derive_columns(lambda name: block[:, table.index[name]] if name in table.index else nothing)
    derived_block = np.ascontiguousarray(np.column_stack([derived[name] for name in M.DERIVED_NAMES]))
    views = table.rows(np.ascontiguousarray(block))
    derived_views = _DERIVED.rows(derived_block)
    attributes: list[dict[str, str]] = [{} for _ in range(rows)]
    width, names = table.width, layout.names
    for i, text in found:
        attributes[i // width][names[i % width]] = interned.setdefault(text, text)
    for r in range(rows):
        yield RawRow(ident_cells[r * n_ident : (r + 1) * n_ident], views[r], derived_views[r], attributes[r])


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while a page's launches are made (and back on after, where it was on):
    they hold no reference cycles, and its passes over the growing number of objects (a dozen per launch) took a
    tenth of the parse of a long page."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _first_per_column(mask: np.ndarray) -> list[tuple[int, int]]:
    """(row, column) of the first True of each column that has one."""
    import numpy as np

    cols = np.flatnonzero(mask.any(axis=0))
    return [(int(np.argmax(mask[:, j])), int(j)) for j in cols]


def _cell_text(cells, i: int, quoted: bool = False) -> str:
    return _unescape(str(cells[i].as_py() or ""), quoted)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]
