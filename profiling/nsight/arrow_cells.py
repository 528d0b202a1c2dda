"""Arrow arrays to and from Python lists and numpy without pyarrow's conversions, which import pandas to look for
its types (pyarrow.array() of a list or a numpy array, a None argument of a compute function, to_numpy() of an
array that needs a copy): half a second of CPU that reading a report with Arrow and numpy does not need."""

from __future__ import annotations

from typing import TYPE_CHECKING

from profiling.errors import ReportError

if TYPE_CHECKING:
    import numpy as np


def string_array(texts: list[str]):  # -> pyarrow.StringArray
    """`texts` as an Arrow string array, made from one buffer of their UTF-8."""
    import numpy as np
    import pyarrow as pa

    encoded = [text.encode("utf-8") for text in texts]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=offsets[1:])
    if offsets[-1] >= 2**31:  # a block is a few MB; the files read are at most MAX_REPORT_BYTES
        raise ReportError("a block of the raw page holds over 2 GB of text")
    data = pa.py_buffer(b"".join(encoded))
    return pa.StringArray.from_buffers(len(encoded), pa.py_buffer(offsets.astype(np.int32)), data)


def from_numpy(values: np.ndarray):  # -> pyarrow.Array
    """A numpy array of indices (int64) or a bool mask as an Arrow array."""
    import numpy as np
    import pyarrow as pa

    if values.dtype == np.bool_:
        bits = np.packbits(values, bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(bits)])
    ints = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(ints), [None, pa.py_buffer(ints)])


def _bits(buffer, offset: int, length: int) -> np.ndarray:
    """Bits offset .. offset + length of an Arrow bitmap, one uint8 (0 or 1) each."""
    import numpy as np

    return np.unpackbits(np.frombuffer(buffer, dtype=np.uint8), bitorder="little", count=offset + length)[offset:]


def bools(values) -> np.ndarray:  # values: pyarrow.BooleanArray
    """An Arrow bool array as numpy (null = False), read from its buffers."""
    import numpy as np

    if not len(values):
        return np.zeros(0, dtype=bool)
    validity, data = values.buffers()[:2]
    out = _bits(data, values.offset, len(values)).astype(bool)
    if validity is not None and values.null_count:
        out &= _bits(validity, values.offset, len(values)).astype(bool)
    return out


def ints(values) -> np.ndarray:  # values: pyarrow.Int32Array or Int64Array without nulls
    """An Arrow integer array without nulls (dictionary indices) as a numpy view of its buffer."""
    import numpy as np

    if values.null_count:
        raise ValueError("ints() reads arrays without nulls")
    dtype = np.int32 if values.type.bit_width == 32 else np.int64
    data = values.buffers()[1]
    if data is None:
        return np.zeros(0, dtype=dtype)
    return np.frombuffer(data, dtype=dtype, count=values.offset + len(values))[values.offset :]


def floats(values) -> np.ndarray:  # values: pyarrow.DoubleArray
    """An Arrow float64 array as a writable numpy copy (null = NaN), read from its buffers."""
    import numpy as np

    if not len(values):
        return np.zeros(0, dtype=np.float64)
    validity, data = values.buffers()[:2]
    out = np.frombuffer(data, dtype=np.float64, count=values.offset + len(values))[values.offset :].copy()
    if validity is not None and values.null_count:
        out[_bits(validity, values.offset, len(values)) == 0] = np.nan
    return out


def null_text():  # -> pyarrow.StringScalar
    """A null string scalar, for an Arrow function's "no value" argument."""
    import pyarrow as pa

    return pa.nulls(1, pa.string())[0]
