"""Output verification: relative error against a reference, NaN count and the ok/wrong verdict.

Every function takes the array module `xp` (cupy in the worker, numpy in the CPU tests), so the worker
and the tests run the same code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

# Unit roundoff of IEEE half (10 stored mantissa bits): rounding a value to float16 changes it by at most
# this fraction, so a half output rounded from an exact result has ||out - ref|| / ||ref|| <= 2**-11.
FP16_UNIT_ROUNDOFF = 2.0**-11
FP32_EPSILON = 1.1920929e-07


def fp16_output_bound(k: int) -> float:
    """Relative-error bound for a half output computed with float32 accumulation over K terms.

    Rounding the result to half costs at most FP16_UNIT_ROUNDOFF; a float32 accumulation in another order
    than the reference's adds about eps32 * sqrt(K) for random inputs (the SGEMM tolerance's 8 eps32 sqrt(K)).
    """
    return FP16_UNIT_ROUNDOFF + 8 * FP32_EPSILON * math.sqrt(k)


def relative_error(xp: Any, out: Any, ref: Any) -> float:
    """||out - ref|| / ||ref|| (Frobenius norms) computed in float64; NaN where `out` holds a NaN."""
    ref64 = ref.astype(xp.float64)
    diff = float(xp.linalg.norm(out - ref64))  # mixed types promote to float64 element by element
    ref_norm = float(xp.linalg.norm(ref64))
    if math.isnan(diff):
        return math.nan
    if ref_norm == 0.0:
        return 0.0 if diff == 0.0 else math.inf
    return diff / ref_norm


def nan_count(xp: Any, out: Any) -> int:
    """How many outputs are NaN: not written over the NaN poison, or computed as NaN."""
    return int(xp.isnan(out).sum())


@dataclass(frozen=True)
class Check:
    """One verification: the measured error, the NaN count and the verdict against the tolerance."""

    rel_error: float
    nan_count: int
    outputs: int
    tolerance: float

    @property
    def status(self) -> str:
        return "ok" if self.error is None else "wrong"

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def error(self) -> str | None:
        """Why the output is wrong, or None when it passes. A NaN error or any NaN output never passes."""
        if self.nan_count:
            return f"{self.nan_count} of {self.outputs} outputs are NaN (not written or invalid)"
        if math.isnan(self.rel_error):
            return "relative error is NaN (the output or the reference holds NaN or infinity)"
        if not self.rel_error <= self.tolerance:
            return f"relative error {self.rel_error:.3g} exceeds tolerance {self.tolerance:.3g}"
        return None


def check_output(xp: Any, out: Any, ref: Any, tolerance: float) -> Check:
    """Compare a kernel's output with its reference and decide ok or wrong."""
    return Check(relative_error(xp, out, ref), nan_count(xp, out), int(out.size), tolerance)
