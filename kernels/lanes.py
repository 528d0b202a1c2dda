"""Lanes: one value per lane of a warp, with elementwise arithmetic, in plain Python.

The indexing models compute every index expression for the 32 lanes of a warp at once (`tid * 16 + ty`,
`(r < m) & (c < k)`), which reads like the kernel source. A warp is only 32 values, so plain Python does this
as fast as numpy for the analysis and lets `gemmlens access` answer without importing numpy.

Semantics follow numpy's int64 and bool arrays (Python ints are exact, and // % >> floor as numpy's do):
operators take another Lanes of the same length or a Python int/bool, comparisons give Lanes of bools, `~` of
bools is logical not. Where numpy is already at hand (pages, charts, tests), a Lanes converts with
`np.asarray`, and indexing by anything but an int or a slice (a mask, a list of lanes) is numpy's indexing
and gives an ndarray.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable
from itertools import repeat
from numbers import Integral
from typing import Any


def _binary(op: Callable[[Any, Any], Any]) -> Callable[[Lanes, Any], Lanes]:
    def method(self: Lanes, other: Any) -> Lanes:
        if isinstance(other, Lanes):
            return Lanes(map(op, self.values, other.values))
        if isinstance(other, int):
            return Lanes(map(op, self.values, repeat(other)))
        return NotImplemented

    return method


def _reflected(op: Callable[[Any, Any], Any]) -> Callable[[Lanes, Any], Lanes]:
    def method(self: Lanes, other: Any) -> Lanes:
        if isinstance(other, int):
            return Lanes(map(op, repeat(other), self.values))
        return NotImplemented

    return method


class Lanes:
    """A fixed sequence of ints or bools with numpy-like elementwise operators (see the module docstring)."""

    __slots__ = ("values",)
    __hash__ = None  # == is elementwise, as numpy's

    def __init__(self, values: Iterable[int | bool]):
        self.values = tuple(values)

    @classmethod
    def full(cls, n: int, value: int | bool) -> Lanes:
        return cls((value,) * n)

    def __len__(self) -> int:
        return len(self.values)

    def __iter__(self):  # noqa: ANN204
        return iter(self.values)

    def __getitem__(self, index: Any) -> Any:
        if type(index) is int:
            return self.values[index]
        if isinstance(index, Integral):  # numpy's integer scalars
            return self.values[int(index)]
        if isinstance(index, slice):
            return Lanes(self.values[index])
        import numpy as np  # a mask or lane list: numpy's fancy indexing, for the callers that use numpy

        return np.asarray(self)[np.asarray(index)]

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        import numpy as np

        if dtype is None:
            dtype = bool if self.is_bool() else np.int64
        return np.array(self.values, dtype=dtype)

    def __repr__(self) -> str:
        return f"Lanes({list(self.values)})"

    def __bool__(self) -> bool:
        raise ValueError("the truth value of Lanes is ambiguous: use .any() or .all()")

    def is_bool(self) -> bool:
        return bool(self.values) and all(type(v) is bool for v in self.values)

    def any(self) -> bool:
        return any(self.values)

    def all(self) -> bool:
        return all(self.values)

    def sum(self) -> int:
        return sum(self.values)

    def min(self) -> int:
        return min(self.values)

    def max(self) -> int:
        return max(self.values)

    def tolist(self) -> list:
        return list(self.values)

    def nonzero_lanes(self) -> list[int]:
        """The indices of the true (non-zero) values, in order (numpy's flatnonzero)."""
        return [i for i, v in enumerate(self.values) if v]

    def __invert__(self) -> Lanes:
        if self.is_bool():
            return Lanes(not v for v in self.values)
        return Lanes(~v for v in self.values)

    def __neg__(self) -> Lanes:
        return Lanes(-v for v in self.values)

    __add__, __radd__ = _binary(operator.add), _reflected(operator.add)
    __sub__, __rsub__ = _binary(operator.sub), _reflected(operator.sub)
    __mul__, __rmul__ = _binary(operator.mul), _reflected(operator.mul)
    __floordiv__, __rfloordiv__ = _binary(operator.floordiv), _reflected(operator.floordiv)
    __mod__, __rmod__ = _binary(operator.mod), _reflected(operator.mod)
    __and__, __rand__ = _binary(operator.and_), _reflected(operator.and_)
    __or__, __ror__ = _binary(operator.or_), _reflected(operator.or_)
    __xor__, __rxor__ = _binary(operator.xor), _reflected(operator.xor)
    __lshift__, __rlshift__ = _binary(operator.lshift), _reflected(operator.lshift)
    __rshift__, __rrshift__ = _binary(operator.rshift), _reflected(operator.rshift)
    __lt__, __le__ = _binary(operator.lt), _binary(operator.le)
    __gt__, __ge__ = _binary(operator.gt), _binary(operator.ge)
    __eq__, __ne__ = _binary(operator.eq), _binary(operator.ne)  # type: ignore[assignment]
