"""The GEMM problem size, shared by every layer: C (m x n) = A (m x k) * B (k x n)."""

from __future__ import annotations

from dataclasses import dataclass


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
