"""Metric values of one report kept compactly: a float64 table (launch x metric) and one dict-like view per launch.

A raw page of 40,000 launches x 400 metrics is 16 million values; as a dict of `Metric` objects per launch that
took about 30 times the file's size in memory. Here the values sit in numpy blocks (NaN = missing) with the
names and base units shared by every launch, and `KernelLaunch.metrics` is a `MetricRow` that hands out `Metric`
objects on access, so `launch.metrics[name].value`, `in`, `.items()` and assignment work as on a dict.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np


JSON_CELLS = 1 << 13
"""Values whose JSON text MetricTable.json_row makes at once (whole rows, at least one): enough that the work per
call is shared by many rows of each pattern of missing values (22 rows of a raw page of 365 metrics, 390 rows of
derived values), few enough that the text and its pieces stay in the CPU's cache (a few hundred KB; at 65,536
values a long page's JSON took half as long again, and the allocator kept 40 MB more)."""
_JSON_KINDS = 5
"""Pieces of JSON per column that MetricTable.json_texts puts between values (see _json_piece_array)."""
JSON_TEMPLATE_BYTES = 32_000_000
"""Bytes of row templates a MetricTable keeps for writing JSON, whatever the rows' patterns of missing values
(one template of a page of 100,000 columns is about 6 MB)."""


@dataclass
class Metric:
    """One metric value in base units; `minimum`/`maximum` are set for per-kernel summaries, `derived_from` for a
    value the report did not hold but its other metrics gave (the formula, in metric names)."""

    value: float
    unit: str
    minimum: float | None = None
    maximum: float | None = None
    derived_from: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"value": self.value, "unit": self.unit}
        if self.minimum is not None:
            data["minimum"] = self.minimum
            data["maximum"] = self.maximum
        if self.derived_from is not None:
            data["derived_from"] = self.derived_from
        return data


class MetricTable:
    """The metric columns of one report: unique names, their base units, and blocks of launch rows."""

    def __init__(self, names: Sequence[str], units: Sequence[str]) -> None:
        if len(set(names)) != len(names) or len(units) != len(names):
            raise ValueError("metric names must be unique, with one unit each")
        self.names: list[str] = list(names)
        self.units: list[str] = list(units)
        self.index: dict[str, int] = {name: j for j, name in enumerate(self.names)}
        self._json_pieces: np.ndarray | None = None
        self._json_templates: dict[bytes, tuple[bytes, np.ndarray | None, int]] = {}
        self._json_bytes = 0
        self._json_block: tuple[np.ndarray, int, list[bytes | memoryview]] | None = None
        self._json_piece_arrow = None  # pyarrow.LargeBinaryArray, made on the first json_texts
        self._json_patterns: dict[bytes, tuple[Any, ...]] = {}
        self._units_checked: tuple[Mapping[str, str], bool] | None = None

    @property
    def width(self) -> int:
        return len(self.names)

    def __getstate__(self) -> dict[str, Any]:
        """Its state without the texts and pieces kept for writing JSON (they are made again where needed; the
        texts are views of Arrow buffers, which copy and pickle do not take)."""
        state = self.__dict__.copy()
        state.update(
            _json_pieces=None,
            _json_templates={},
            _json_bytes=0,
            _json_block=None,
            _json_piece_arrow=None,
            _json_patterns={},
        )
        return state

    def has_units(self, units: Mapping[str, str]) -> bool:
        """Whether each column's unit is units.get(name, "") (checked once per mapping)."""
        if self._units_checked is None or self._units_checked[0] is not units:
            same = all(unit == units.get(name, "") for name, unit in zip(self.names, self.units, strict=True))
            self._units_checked = (units, same)
        return self._units_checked[1]

    def json_template(self, missing: np.ndarray) -> tuple[bytes, np.ndarray | None, int]:
        """For a row whose missing columns are `missing` (bool, one per column): its JSON members as a %-format,
        `"name":{"value":%s,"unit":"u"}` per column present, joined by commas ('%' of names and units doubled),
        the columns present (None when all are) and their count. A column's piece is made once; rows of a report
        mostly share a few patterns of missing values, so the formats are kept per pattern, up to
        JSON_TEMPLATE_BYTES in all. Formatting a row's values into it (`bytes % tuple`) makes the row in one
        call, without a list of pieces to join."""
        import json

        import numpy as np

        key = np.packbits(missing).tobytes()
        found = self._json_templates.get(key)
        if found is not None:
            return found
        if self._json_pieces is None:

            def escaped(text: str) -> bytes:
                return json.dumps(text).replace("%", "%%").encode()

            units = [escaped(unit) for unit in self.units]
            pieces = np.empty(self.width, dtype=object)
            pieces[:] = [
                b"," + escaped(name) + b':{"value":%s,"unit":' + unit + b"}"
                for name, unit in zip(self.names, units, strict=True)
            ]
            self._json_pieces = pieces
        present = None if not missing.any() else np.flatnonzero(~missing)
        chosen = self._json_pieces if present is None else self._json_pieces[present]
        template = (b"".join(chosen.tolist())[1:], present, len(chosen))
        if self._json_bytes + len(template[0]) <= JSON_TEMPLATE_BYTES:
            self._json_templates[key] = template
            self._json_bytes += len(template[0])
        return template

    def json_row(self, block: np.ndarray, row: int) -> bytes | memoryview:
        """The JSON members of row `row` of `block` as MetricRow.json_members writes them (without the metrics set
        apart), made for the rows of JSON_CELLS values at once (json_texts). The texts are kept until other rows
        are asked for or a row of this table changes."""
        per_call = max(1, JSON_CELLS // max(1, self.width))
        first_row = row - row % per_call
        cached = self._json_block
        if cached is not None and cached[0] is block and cached[1] == first_row:
            return cached[2][row - first_row]
        texts = self.json_texts(block[first_row : first_row + per_call])
        self._json_block = (block, first_row, texts)
        return texts[row - first_row]

    def json_texts(self, part: np.ndarray) -> list[bytes | memoryview]:
        """Each row's JSON members, `"name":{"value":1.5,"unit":"byte"},...` for its values present (not NaN), as
        views of one buffer per group of rows with the same missing values, without a Python object per value:
        orjson writes the group's values at once, and one Arrow take interleaves their texts with the pieces of
        JSON around them, in the order the group's pattern gives (json_pattern)."""
        import numpy as np  # here, not above: the calls answered from the texts made are most
        import orjson
        import pyarrow as pa
        import pyarrow.compute as pc

        texts: list[bytes | memoryview] = [b""] * part.shape[0]
        if not part.size:
            return texts
        missing = np.isnan(part)
        groups: dict[bytes, list[int]] = {}
        for r, key in enumerate(map(bytes, np.packbits(missing, axis=1))):
            groups.setdefault(key, []).append(r)
        for rows in groups.values():
            pieces, order, is_value, present, count = self.json_pattern(missing[rows[0]])
            if not count:
                continue
            values = part[rows] if present is None else part[np.ix_(rows, present)]
            text = orjson.dumps(np.ascontiguousarray(values).reshape(-1), option=orjson.OPT_SERIALIZE_NUMPY)
            m = len(rows) * count  # "[1.0,2.5,...]": each value's text is taken with the comma after it
            offsets = np.empty(m + 1, dtype=np.int64)
            offsets[0] = 1
            offsets[1:m] = np.flatnonzero(np.frombuffer(text, dtype=np.uint8) == ord(",")) + 1
            offsets[m] = len(text) - 1
            value_texts = pa.Array.from_buffers(pa.large_binary(), m, [None, pa.py_buffer(offsets), pa.py_buffer(text)])
            take = order + np.multiply.outer(np.arange(len(rows), dtype=np.int64) * count, is_value)
            take[-1, -1] = len(pieces) - 1  # the last value's text has no comma after it: its unit piece has one
            total = take.size
            both = pa.concat_arrays([pieces, value_texts])
            out = pc.take(both, pa.Array.from_buffers(pa.int64(), total, [None, pa.py_buffer(take)]))
            _, out_offsets, data = out.buffers()
            bounds = np.frombuffer(out_offsets, dtype=np.int64, count=total + 1)[:: len(order)].tolist()
            view = memoryview(data)
            for k, r in enumerate(rows):
                texts[r] = view[bounds[k] : bounds[k + 1]]
        return texts

    def json_pattern(self, missing: np.ndarray):  # -> (pyarrow.LargeBinaryArray, np.ndarray, np.ndarray, ...)
        """For rows whose missing columns are `missing`: the pieces of JSON of such a row in order (and last the
        row's end as it follows a text without a comma), the order of a row's pieces and values as indices into
        those pieces followed by the row's values (the k-th value at len(pieces) + k), which of them are values
        (1, else 0), the columns present (None when all are) and their count. Each value is followed by the next
        column's name where that column is the next one (one piece), by its unit and the name after a gap, and by
        its unit alone at the row's end. Kept per pattern, up to JSON_TEMPLATE_BYTES in all."""
        import numpy as np
        import pyarrow.compute as pc

        from profiling.nsight.arrow_cells import from_numpy

        key = b"order" + np.packbits(missing).tobytes()
        found = self._json_patterns.get(key)
        if found is not None:
            return found
        width = self.width
        columns = np.flatnonzero(~missing)
        n = len(columns)
        present = None if n == width else columns
        if not n:
            return None, None, None, present, 0
        gap = np.zeros(n, dtype=bool)
        gap[:-1] = columns[1:] != columns[:-1] + 1
        per_value = 2 + gap.astype(np.int64)
        place = 1 + np.cumsum(per_value) - per_value  # each value's slot; the row's first name comes before them
        order = np.empty(1 + int(per_value.sum()), dtype=np.int64)
        is_value = np.zeros(len(order), dtype=np.int64)
        is_value[place] = 1
        order[0] = columns[0]  # its name
        after = np.where(gap, 3 * width + columns, 4 * width + columns)
        after[-1] = width + columns[-1]  # the row's end
        order[place + 1] = after
        order[place[gap] + 2] = columns[1:][gap[:-1]]  # the name after a gap
        piece_at = np.flatnonzero(is_value == 0)
        used = np.append(order[piece_at], 2 * width + columns[-1])
        pieces = pc.take(self._json_piece_array(), from_numpy(used))
        order[piece_at] = np.arange(len(piece_at))
        order[place] = len(used) + np.arange(n)
        pattern = (pieces, order, is_value, present, n)
        size = order.nbytes * 2 + pieces.nbytes
        if self._json_bytes + size <= JSON_TEMPLATE_BYTES:
            self._json_patterns[key] = pattern
            self._json_bytes += size
        return pattern

    def _json_piece_array(self):  # -> pyarrow.LargeBinaryArray
        """The pieces of JSON between values, _JSON_KINDS per column in this order: `"name":{"value":`, then
        `"unit":"u"}`, `,"unit":"u"}`, `"unit":"u"},` and `"unit":"u"},"next name":{"value":`."""
        if self._json_piece_arrow is None:
            import json

            import numpy as np
            import pyarrow as pa

            def quoted(text: str) -> bytes:  # json.dumps(text), without its work where nothing is escaped
                if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
                    return b'"' + text.encode() + b'"'
                return json.dumps(text).encode()

            names = [quoted(name) + b':{"value":' for name in self.names]
            units = [b'"unit":' + quoted(unit) + b"}" for unit in self.units]
            pieces = (
                names
                + units
                + [b"," + unit for unit in units]
                + [unit + b"," for unit in units]
                + [unit + b"," + name for unit, name in zip(units, names[1:] + [b""], strict=True)]
            )
            offsets = np.zeros(len(pieces) + 1, dtype=np.int64)
            np.cumsum(np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces)), out=offsets[1:])
            self._json_piece_arrow = pa.Array.from_buffers(
                pa.large_binary(), len(pieces), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(pieces))]
            )
        return self._json_piece_arrow

    def rows(self, block: np.ndarray) -> list[MetricRow]:
        """One view per row of `block` (float64, C-contiguous, `width` columns, NaN = missing)."""
        if block.ndim != 2 or block.shape[1] != self.width or block.dtype.kind != "f" or not block.flags.c_contiguous:
            raise ValueError("a block must be a C-contiguous float64 array with one column per metric")
        flat = memoryview(block.reshape(-1))
        return [MetricRow(self, block, flat, r * self.width) for r in range(block.shape[0])]


class MetricRow(MutableMapping[str, Metric]):
    """One launch's metrics as a mapping name -> Metric over a shared MetricTable block (missing = absent).

    Assignment writes into the table when the name is a column with the same unit and the value is plain, and
    otherwise into a small dict of its own, so a details-page merge can add metrics the raw page lacked.
    """

    __slots__ = ("_table", "_block", "_flat", "_start", "_extra")

    def __init__(self, table: MetricTable, block: np.ndarray, flat: memoryview, start: int) -> None:
        self._table = table
        self._block = block
        self._flat = flat
        self._start = start
        self._extra: dict[str, Metric] | None = None

    def value(self, name: str) -> float | None:
        """The value in base units, or None when missing."""
        if self._extra is not None and name in self._extra:
            return self._extra[name].value
        j = self._table.index.get(name)
        if j is None:
            return None
        v = self._flat[self._start + j]
        return None if v != v else v

    def __getitem__(self, name: str) -> Metric:
        if self._extra is not None and name in self._extra:
            return self._extra[name]
        j = self._table.index.get(name)
        if j is not None:
            v = self._flat[self._start + j]
            if v == v:
                return Metric(v, self._table.units[j])
        raise KeyError(name)

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self[name]
        except KeyError:
            return default

    def __contains__(self, name: object) -> bool:
        if self._extra is not None and name in self._extra:
            return True
        j = self._table.index.get(name) if isinstance(name, str) else None
        if j is None:
            return False
        v = self._flat[self._start + j]
        return v == v

    def _row(self) -> np.ndarray:
        """This launch's values as a numpy view (NaN = missing)."""
        return self._block.reshape(-1)[self._start : self._start + self._table.width]

    def _present(self) -> list[int]:
        import numpy as np

        return np.flatnonzero(~np.isnan(self._row())).tolist()

    def __iter__(self) -> Iterator[str]:
        names = self._table.names
        extra = self._extra or {}
        for j in self._present():
            if names[j] not in extra:
                yield names[j]
        yield from extra

    def __len__(self) -> int:
        import numpy as np

        row = self._row()
        count = int(len(row) - np.count_nonzero(np.isnan(row)))
        for name in self._extra or ():
            j = self._table.index.get(name)
            if j is None or row[j] != row[j]:  # not also a value of the table (counted above)
                count += 1
        return count

    def __setitem__(self, name: str, metric: Metric) -> None:
        j = self._table.index.get(name)
        plain = (
            metric.minimum is None
            and metric.maximum is None
            and metric.derived_from is None
            and metric.value == metric.value
        )
        self._table._json_block = None  # written rows are made again
        if j is not None and plain and metric.unit == self._table.units[j] and not self._extra_has(name):
            self._flat[self._start + j] = float(metric.value)
            return
        if self._extra is None:
            self._extra = {}
        self._extra[name] = metric

    def _extra_has(self, name: str) -> bool:
        return self._extra is not None and name in self._extra

    def __delitem__(self, name: str) -> None:
        self._table._json_block = None
        found = False
        if self._extra is not None and name in self._extra:
            del self._extra[name]
            found = True
        j = self._table.index.get(name)
        if j is not None and self._flat[self._start + j] == self._flat[self._start + j]:
            self._flat[self._start + j] = float("nan")
            found = True
        if not found:
            raise KeyError(name)

    def json_members(self, dumps: Callable[[Any], bytes]) -> bytes:
        """The members of this row's JSON object, `"name":{"value":1.5,"unit":"byte"},...`, as orjson writes
        {name: metric.to_dict()}: the table's values written for many rows at once (MetricTable.json_row),
        without a Metric, dict or float object per value (report --json of 30,000 launches x 400 metrics);
        metrics set apart from the table (see __setitem__) follow, written by `dumps` (the writer's strict JSON)."""
        if not self._extra:
            width = self._table.width  # 0 where every column was left out (an unknown unit)
            return self._table.json_row(self._block, self._start // width) if width else b""
        import numpy as np
        import orjson

        row = self._row()
        missing = np.isnan(row)
        for name in self._extra:
            j = self._table.index.get(name)
            if j is not None:
                missing[j] = True
        template, present, count = self._table.json_template(missing)
        values = row if present is None else row[present]
        members = b""
        if count:
            members = template % tuple(orjson.dumps(values, option=orjson.OPT_SERIALIZE_NUMPY)[1:-1].split(b","))
        more = b",".join(dumps(name) + b":" + dumps(m.to_dict()) for name, m in self._extra.items())
        return members + b"," + more if members else more

    def float_items(self) -> list[tuple[str, float]]:
        """(name, value in base units) of every metric present, in iteration order, read from the row at once."""
        names = self._table.names
        values = self._row().tolist()
        extra = self._extra or {}
        pairs = [(names[j], values[j]) for j in self._present() if not extra or names[j] not in extra]
        pairs += [(name, m.value) for name, m in extra.items()]
        return pairs

    def floats(self) -> Mapping[str, float]:
        """name -> value in base units, without building Metric objects (what derive() reads)."""
        return RowFloats(self)

    def __repr__(self) -> str:
        return repr(dict(self.items()))

    def __getstate__(self) -> tuple[Any, ...]:
        return (self._table, self._block, self._start, self._extra)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self._table, self._block, self._start, self._extra = state
        self._flat = memoryview(self._block.reshape(-1))


class RowFloats(Mapping[str, float]):
    """A MetricRow's values as floats."""

    __slots__ = ("_row",)

    def __init__(self, row: MetricRow) -> None:
        self._row = row

    def get(self, name: str, default: Any = None) -> Any:
        value = self._row.value(name)
        return default if value is None else value

    def __getitem__(self, name: str) -> float:
        value = self._row.value(name)
        if value is None:
            raise KeyError(name)
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self._row)

    def __len__(self) -> int:
        return len(self._row)

    def items(self) -> list[tuple[str, float]]:  # type: ignore[override]
        """The pairs in one pass over the row (Mapping's items() looks each name up again)."""
        return self._row.float_items()

    def json_members(self, units: Mapping[str, str]) -> bytes | None:
        """The members of {name: {"value": value, "unit": units.get(name, "")}} for this row's values as orjson
        writes them (MetricRow.json_members), or None where the table's units are not those or the row has values
        set apart from it."""
        row = self._row
        if row._extra or not row._table.has_units(units):
            return None
        return row.json_members(_no_dumps)


def _no_dumps(data: Any) -> bytes:
    raise AssertionError("a row without values set apart writes none")
