"""Lanes, the per-lane values of the indexing models, compute exactly what numpy's int64 and bool arrays do."""

from __future__ import annotations

import operator

import numpy as np
import pytest

from kernels.lanes import Lanes

VALUES = [-70, -33, -32, -5, -1, 0, 1, 2, 3, 7, 8, 15, 16, 31, 32, 33, 100, 127, 128, 1023, 4096, 65537, *range(10)]
OPS = [
    operator.add,
    operator.sub,
    operator.mul,
    operator.floordiv,
    operator.mod,
    operator.and_,
    operator.or_,
    operator.xor,
    operator.lt,
    operator.le,
    operator.gt,
    operator.ge,
    operator.eq,
    operator.ne,
]


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.__name__)
def test_elementwise_operators_match_numpy_int64(op) -> None:
    left, right = np.array(VALUES, dtype=np.int64), np.array(VALUES[::-1], dtype=np.int64)
    right[right == 0] = 3  # no division by zero
    got = op(Lanes(left.tolist()), Lanes(right.tolist()))
    assert got.tolist() == op(left, right).tolist()
    for scalar in (-7, 0, 4, 32) if op not in (operator.floordiv, operator.mod) else (-7, 4, 32):
        assert op(Lanes(left.tolist()), scalar).tolist() == op(left, scalar).tolist()
        assert op(scalar, Lanes(right.tolist())).tolist() == op(scalar, right).tolist()


def test_shifts_match_numpy() -> None:
    values = np.array(VALUES, dtype=np.int64)
    lanes = Lanes(values.tolist())
    assert (lanes >> 1).tolist() == (values >> 1).tolist() == [v >> 1 for v in VALUES]
    assert (lanes << 3).tolist() == (values << 3).tolist()
    assert (1 << Lanes([0, 4, 8])).tolist() == [1, 16, 256]


def test_masks_are_bools_and_invert_logically() -> None:
    lanes = Lanes(range(32))
    live = (lanes < 20) & (lanes % 2 == 0)
    assert live.tolist() == [v < 20 and v % 2 == 0 for v in range(32)]
    assert (~live).tolist() == [not v for v in live]  # not -1 / -2, as Python's ~ on bools would give
    assert (~Lanes([0, 5])).tolist() == [-1, -6]  # on ints, bitwise
    assert (True & live).tolist() == live.tolist() and (False & live).any() is False
    assert (live.sum(), live.any(), live.all(), live.nonzero_lanes()[:3]) == (10, True, False, [0, 2, 4])
    with pytest.raises(ValueError, match="ambiguous"):
        bool(live)


def test_numpy_callers_get_arrays() -> None:
    lanes = Lanes(range(100, 132))
    mask = lanes % 3 == 0
    assert np.asarray(lanes).dtype == np.int64 and np.asarray(mask).dtype == bool
    assert lanes[mask].tolist() == [v for v in range(100, 132) if v % 3 == 0]  # a mask indexes as numpy does
    assert np.arange(32)[mask].tolist() == [v - 100 for v in range(100, 132) if v % 3 == 0]
    assert lanes[np.int64(5)] == 105 and lanes[5] == 105
