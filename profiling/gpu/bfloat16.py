"""bfloat16 operands without a bfloat16 dtype: CuPy and NumPy have none, so a bfloat16 matrix is held as its uint16
bit patterns (the upper half of a float32's bits), made by rounding float32 to nearest-even and read back exactly
as float32. Every function takes the array module `xp` (cupy in the worker, numpy in the CPU tests)."""

from __future__ import annotations

from typing import Any

# The quiet NaN that rounding gives for any NaN input (rounding its bits could carry into the exponent and make it
# infinity, or drop the payload and leave an infinity's bits).
BF16_QUIET_NAN = 0x7FC0


def to_bfloat16_bits(xp: Any, x: Any) -> Any:
    """The bfloat16 nearest to each float32 of `x`, ties to even, as uint16 bit patterns (NaN stays NaN; values
    beyond bfloat16's largest finite round to infinity, as the hardware's cvt.rn.bf16.f32 does)."""
    bits = xp.ascontiguousarray(x, dtype=xp.float32).view(xp.uint32)
    # Adding 0x7FFF plus the lowest kept bit rounds the dropped 16 bits half to even; a carry moves into the exponent.
    half = xp.uint32(16)  # a uint32 shift count keeps every step uint32 under any scalar-promotion rule
    rounded = (bits + (xp.uint32(0x7FFF) + ((bits >> half) & xp.uint32(1)))) >> half
    nan = (bits & xp.uint32(0x7FFFFFFF)) > xp.uint32(0x7F800000)
    return xp.where(nan, xp.uint32(BF16_QUIET_NAN), rounded).astype(xp.uint16)


def bfloat16_bits_to_float32(xp: Any, bits: Any) -> Any:
    """The float32 values of bfloat16 bit patterns (uint16): exact, the bits shifted into a float32's upper half."""
    return (xp.asarray(bits, dtype=xp.uint16).astype(xp.uint32) << xp.uint32(16)).view(xp.float32)
