"""The GEMM problem size, shared by every layer: C (m x n) = A (m x k) * B (k x n), and the one place sizes are
parsed from text ("4096x1000x333"), from numbers and from labels read back out of saved files."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from profiling.errors import InvalidInput

INT32_MAX = 2**31 - 1
"""The largest GEMM dimension, in the CLI and the app alike. Kernels take M, N and K as 32-bit `int` and index with
64-bit products (size_t), so any int dimension is addressable; what really bounds a run is GPU memory, which the
worker checks against the device's free memory before allocating."""

_SHAPE = re.compile(r"^\s*(\d+)\s*[xX*]\s*(\d+)\s*[xX*]\s*(\d+)\s*$")


@dataclass(frozen=True)
class Shape:
    """A GEMM problem size: C (m x n) = A (m x k) * B (k x n)."""

    m: int
    n: int
    k: int

    @property
    def label(self) -> str:
        return f"{self.m}x{self.n}x{self.k}"

    @property
    def flops(self) -> int:
        return 2 * self.m * self.n * self.k

    @property
    def is_cube(self) -> bool:
        return self.m == self.n == self.k


def dimension(text: str, what: str) -> int:
    """One GEMM dimension from text: a whole number in 1 .. INT32_MAX; InvalidInput naming `what` otherwise."""
    try:
        value = int(text)
    except ValueError:
        raise InvalidInput(f"{what} must be a positive integer, got '{text}'") from None
    if value < 1:
        raise InvalidInput(f"{what} must be a positive integer, got {value}")
    if value > INT32_MAX:
        raise InvalidInput(f"{what} must be at most {INT32_MAX} (kernels index with 32-bit sizes), got {value}")
    return value


def is_shape_text(text: str) -> bool:
    """Whether `text` is written as MxNxK (whole numbers; "x", "X" or "*" between them), valid or not."""
    return _SHAPE.match(text) is not None


def parse_shape(text: str) -> Shape:
    """One MxNxK shape like "4096x1000x333" typed by a user; InvalidInput with the form expected otherwise."""
    match = _SHAPE.match(text)
    if not match:
        raise InvalidInput(f"shape '{text}' is not of the form MxNxK (for example 4096x1000x333)")
    m, n, k = (dimension(g, name) for g, name in zip(match.groups(), ("M", "N", "K"), strict=True))
    return Shape(m, n, k)


def shape_from_label(text: str) -> Shape | None:
    """The shape a label read back from a file or a table stands for ("4096x4096x4096"), None when it is not one."""
    try:
        return parse_shape(text)
    except InvalidInput:
        return None


def as_shape(size: Shape | Sequence[int]) -> Shape:
    """A Shape from a Shape or an (m, n, k) sequence (the app's job factories take tuples)."""
    if isinstance(size, Shape):
        return size
    dims = tuple(size)
    if len(dims) != 3:
        raise InvalidInput(f"a size is M, N and K; got {dims}")
    return Shape(*(int(d) for d in dims))


def shape_of(m: Any, n: Any, k: Any) -> Shape | None:
    """The shape of a result record's m, n and k fields; None when any is missing."""
    if m is None or n is None or k is None:
        return None
    return Shape(m, n, k)


def tflops(flops: float | None, seconds: float | None) -> float | None:
    """TFLOP/s: `flops` over `seconds`, None when either is missing or zero. The one rate every view shows."""
    return flops / seconds / 1e12 if flops and seconds else None
