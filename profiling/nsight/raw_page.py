"""The raw page's launch rows, read in blocks by pandas' C parser into a MetricTable (launch x metric, float64).

Reading a 200 MB raw page cell by cell in Python took minutes and 30 times the file's size in memory; pandas
parses the numbers in C, and each block of rows becomes one float64 array. Values are exact: numbers come out
of pandas' parser or `float()` of the cell (thousands separators removed), and ncu's auto units are scaled to
base units as `round(value * factor, 3)` does (see `round3`). A value that is not finite (`nan`, `inf`,
`1e400`, or one that overflows when scaled) is missing, with one warning per metric.
"""

from __future__ import annotations

import csv
import io
import itertools
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from profiling.errors import ReportError
from profiling.nsight import metrics as M
from profiling.nsight import units as U
from profiling.nsight.metric_table import MetricRow, MetricTable
from profiling.nsight.report_input import Notes, RecordStream, record_cells

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

CHUNK_ROWS = 2048
"""Launch rows parsed per block: small enough that a block's strings stay a few MB."""
_NA_TEXTS = ["", "n/a"]


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
    import numpy as np  # lazy, as pandas below

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
) -> Iterator[str]:
    """Records with the header's field count, counted in passed[0]; longer ones are dropped, shorter ones noted.

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
        if record.count('","') == separators and record[:1] == '"' and record.rstrip("\n")[-1:] == '"':
            passed[0] += 1
            yield record
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
        yield record


def _second_header(record: str, number: int, repeat: Repeat, notes: Notes) -> str | None:
    """A header row (or the units row after one) in the body: "skip" it, "stop" reading there, or None when it is
    neither (a launch row, read as usual)."""
    cells = [cell.strip() for cell in record_cells(record)]
    if repeat.units_next:
        repeat.units_next = False
        if cells == repeat.units:
            return "skip"
        if not (cells and cells[0] == ""):  # no units row: a launch row, which is read as usual
            return None
        notes.add(
            f"row {number + 2} gives the second export's units, which differ from the first's: it and the rows after "
            "it are not read (their values would be scaled wrongly); split the file"
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
    notes.add(f"row {number + 2} repeats the header (two exports in one file?): skipped, the rows after it are read")
    repeat.units_next = True
    return "skip"


def _quoted(cells: list[str]) -> str:
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerow(cells)
    return out.getvalue()


def _column_values(
    series: pd.Series, column: MetricColumn, notes: Notes, ids: pd.Series | None = None
) -> tuple[np.ndarray, list[tuple[int, str]]]:
    """One column of a block: float64 values in the column's unit (NaN = missing) and its text cells (`ids`: the
    block's launch ids, to name where a warning's cell is)."""
    import numpy as np
    import pandas as pd

    kind = series.dtype.kind
    if kind in "iuf":
        return series.to_numpy(dtype=np.float64, na_value=np.nan), []
    fast = _arrow_numbers(series)
    if fast is not None:
        nan_cells = np.isnan(fast) & ~series.isna().to_numpy()
        if nan_cells.any():
            notes.once(column.name, _not_finite(column.name, str(series.iloc[int(np.argmax(nan_cells))])))
        return fast, []
    cells = series.to_numpy(dtype=object)
    if kind == "b":  # pandas reads a column of only true/false as booleans
        return np.full(len(cells), np.nan), [(i, str(c)) for i, c in enumerate(cells) if isinstance(c, bool)]
    missing = pd.isna(cells)
    if missing.any():
        cells = cells.copy()
        cells[missing] = ""
    # Thousands separators ("1,073,741,824") leave the numbers to Python's float(): pandas' own parsing of
    # them is off by one in the last bit for 17-digit values. One join, replace and split is C-speed.
    joined = "\x1f".join(cells)
    grouped = "," not in joined or all(_GROUPED.match(c) for c in cells if "," in c)
    texts = joined.replace(",", "").split("\x1f") if "," in joined else cells.tolist()
    if grouped and len(texts) == len(cells):
        for i in np.flatnonzero(missing):
            texts[i] = "nan"
        try:
            values = np.array(texts, dtype=np.float64)
        except ValueError:
            pass  # some cell is text: one by one below
        else:
            nan_cells = np.isnan(values) & ~missing
            if nan_cells.any():
                notes.once(column.name, _not_finite(column.name, cells[int(np.argmax(nan_cells))]))
            return values, []
    values = np.full(len(cells), np.nan)
    found: list[tuple[int, str]] = []
    parsed: dict[str, float | None] = {}
    for i, cell in enumerate(cells):
        if not cell:
            continue
        value = parsed[cell] if cell in parsed else parsed.setdefault(cell, U.parse_number(cell))
        if value is None:
            text = cell.strip()
            if U.malformed_number(text):
                where = f"launch {ids.iloc[i]}" if ids is not None else f"row {i + 1}"
                notes.once(column.name, U.malformed_note(column.name, text, where))
            elif text and text != "n/a":
                found.append((i, text))
        elif math.isfinite(value):
            values[i] = value
        else:
            notes.once(column.name, _not_finite(column.name, cell))
    return values, found


def _arrow_numbers(series: pd.Series) -> np.ndarray | None:
    """float64 of a pyarrow-backed text column whose every cell is a number once thousands separators go, else
    None. Arrow parses in C++ and rounds correctly, as float() does; it refuses what float() would also read
    differently (spaces, "1_000"), and those columns take the path through Python."""
    if getattr(series.dtype, "storage", None) != "pyarrow":
        return None
    try:
        import pyarrow as pa  # comes with pandas' pyarrow-backed strings, which are the only way here
        import pyarrow.compute as pc

        cells = pa.array(series.array)
        commas = pc.match_substring(cells, ",")
        if (
            pc.any(commas).as_py()
            and not pc.all(pc.or_(pc.invert(commas), pc.match_substring_regex(cells, U.GROUPED_NUMBER))).as_py()
        ):
            return None  # a comma that is no thousands separator ("1.234,5"): cell by cell, with a warning
        numbers = pc.cast(pc.replace_substring(cells, ",", ""), pa.float64())
    except (ImportError, ValueError, TypeError, ArithmeticError):  # pyarrow.ArrowInvalid is a ValueError
        return None
    return numbers.to_numpy(zero_copy_only=False)


_GROUPED = re.compile(U.GROUPED_NUMBER)


def _not_finite(name: str, cell: str) -> str:
    return f"{name}: value {cell.strip()[:40]!r} is not a finite number; taken as missing"


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
    order); `columns` the metric columns, with unique names. Text cells in metric columns become attributes.
    """
    import pandas as pd  # lazy: the CLI and the worker start without pandas

    table = MetricTable([c.name for c in columns], [c.unit for c in columns])
    identity = list(identity)
    passed = [0]
    checked = _checked_records(records, width, identity, id_index, notes, passed, repeat)
    first = next(checked, None)
    if first is None:
        return  # pandas cannot make a frame of no rows with these options
    stream = RecordStream(itertools.chain([first], checked))
    try:
        chunks = pd.read_csv(
            stream,
            header=None,
            names=list(range(width)),
            usecols=sorted(set(identity) | {c.index for c in columns}),
            index_col=False,
            dtype={i: object for i in identity},
            keep_default_na=False,
            na_values={c.index: _NA_TEXTS for c in columns},
            on_bad_lines="skip",
            skip_blank_lines=True,
            chunksize=CHUNK_ROWS,
            low_memory=False,  # a block is parsed whole (no DtypeWarning for a column of numbers and text)
            engine="c",
        )
    except (UnicodeDecodeError, ReportError, OSError):  # a re-read as Latin-1, our own message, a failing disk
        raise
    except Exception as exc:  # pandas' parser is a boundary: whatever it raises on bad input is one line
        raise ReportError(f"{name}: the raw page is unreadable ({_one_line(exc)})") from None
    got = 0
    interned: dict[str, str] = {}
    while True:
        try:
            chunk = next(chunks)
        except StopIteration:
            break
        except (UnicodeDecodeError, ReportError, OSError):
            raise
        except Exception as exc:  # as above
            raise ReportError(f"{name}: the raw page is unreadable near row {got + 1} ({_one_line(exc)})") from None
        got += len(chunk)
        if len(chunk):
            yield from _block_rows(chunk, table, identity, columns, notes, interned, id_index)
    skipped = passed[0] - got
    if skipped > 0:
        notes.add(f"{skipped} row(s) the CSV parser could not split into the header's {width} fields: skipped")


_DERIVED = MetricTable(M.DERIVED_NAMES, [M.DERIVED_UNITS.get(name, "") for name in M.DERIVED_NAMES])


def _block_rows(
    chunk: pd.DataFrame,
    table: MetricTable,
    identity: list[int],
    columns: Sequence[MetricColumn],
    notes: Notes,
    interned: dict[str, str],
    id_index: int | None = None,
) -> Iterator[RawRow]:
    """The launches of one block of rows, with their derived metrics computed for the whole block at once."""
    import numpy as np

    rows = len(chunk)
    block = np.empty((rows, table.width), dtype=np.float64)
    texts: list[tuple[str, list[tuple[int, str]]]] = []
    ids = chunk[id_index] if id_index is not None else None
    for j, column in enumerate(columns):
        values, found = _column_values(chunk[column.index], column, notes, ids)
        if column.factor != 1.0:
            with np.errstate(over="ignore"):  # an overflow to inf is caught just below
                values = values * column.factor
            if column.factor > 1.0:
                # "0.509472" ms is 509,472 ns exactly; drop the float noise of the scaling.
                values = round3(values)
        bad = np.isinf(values)
        if bad.any():
            notes.once(column.name, _not_finite(column.name, str(chunk[column.index].iloc[int(np.argmax(bad))])))
            values = np.where(bad, np.nan, values)
        if column.nonnegative:
            with np.errstate(invalid="ignore"):
                negative = values < 0
            if negative.any():
                at = int(np.argmax(negative))
                where = f"launch {ids.iloc[at]}" if ids is not None else f"row {at + 1}"
                notes.once(column.name, U.negative_note(column.name, str(chunk[column.index].iloc[at]), where))
                values = np.where(negative, np.nan, values)
        block[:, j] = values
        if found:
            texts.append((column.name, [(i, interned.setdefault(t, t)) for i, t in found]))
    nothing = np.full(rows, np.nan)
    derived = M.derive_columns(lambda name: block[:, table.index[name]] if name in table.index else nothing)
    derived_block = np.ascontiguousarray(np.column_stack([derived[name] for name in M.DERIVED_NAMES]))
    cells_by_column = [
        [interned.setdefault(c, c) if isinstance(c, str) else "" for c in chunk[i].tolist()] for i in identity
    ]
    views = table.rows(block)
    derived_views = _DERIVED.rows(derived_block)
    attributes: list[dict[str, str]] = [{} for _ in range(rows)]
    for column_name, found in texts:
        for i, text in found:
            attributes[i][column_name] = text
    for r in range(rows):
        yield RawRow([column[r].strip() for column in cells_by_column], views[r], derived_views[r], attributes[r])


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]
