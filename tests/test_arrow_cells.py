"""profiling.nsight.arrow_cells against pyarrow's own conversions (the oracle), on the real capture's cells: the
same values, for sliced arrays (an offset into their buffers) and nulls."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from profiling.nsight import arrow_cells as A

RAW = Path(__file__).resolve().parent / "fixtures" / "ncu" / "raw.csv"


def _cells() -> list[str]:
    rows = list(csv.reader(io.StringIO(RAW.read_text(encoding="utf-8-sig"))))
    return [cell for row in rows[2:] for cell in row]


def test_string_array_holds_the_cells_as_they_are() -> None:
    cells = _cells()
    assert A.string_array(cells).to_pylist() == cells == pa.array(cells, type=pa.string()).to_pylist()
    assert A.string_array([]).to_pylist() == []


def test_numbers_and_masks_read_from_buffers_equal_pyarrows() -> None:
    cells = A.string_array(_cells())
    numeric = pc.match_substring_regex(cells, r"^\d+(\.\d+)?$")
    values = pc.cast(pc.if_else(numeric, cells, A.null_text()), pa.float64())
    for start, stop in ((0, len(cells)), (3, len(cells) - 5), (9, 10), (5, 5)):
        mask, floats = numeric[start:stop], values[start:stop]
        assert A.bools(mask).tolist() == mask.to_numpy(zero_copy_only=False).tolist()
        np.testing.assert_array_equal(A.floats(floats), floats.to_numpy(zero_copy_only=False))
    assert A.bools(numeric).sum() > 1000 and np.isnan(A.floats(values)).sum() > 100  # both kinds are there
    at = np.flatnonzero(A.bools(numeric))
    assert pc.take(cells, A.from_numpy(at)).to_pylist() == [
        c for c, n in zip(_cells(), A.bools(numeric), strict=True) if n
    ]
    assert A.from_numpy(A.bools(numeric)).to_pylist() == numeric.to_pylist()
