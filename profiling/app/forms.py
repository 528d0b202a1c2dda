"""What the pages' form fields turn into job arguments: sweep sizes and ncu metric names.

`sweep_sizes` belongs beside `profiling.gpu.jobs.parse_sizes`; it stays here until that module takes it.
"""

from __future__ import annotations

from profiling.errors import InvalidInput


def sweep_sizes(start: int, stop: int, factor: int = 2) -> list[int]:
    """Square sizes start, start*factor, ... up to stop (inclusive); InvalidInput for a bad range."""
    if start < 1 or stop < start or factor < 2:
        raise InvalidInput(f"a sweep needs 1 <= start <= stop and a factor >= 2 (got {start}..{stop} x{factor})")
    sizes, n = [], start
    while n <= stop and len(sizes) < 64:
        sizes.append(n)
        n *= factor
    return sizes


def metric_names(text: str) -> list[str]:
    """The names in a comma list of ncu metrics, blanks dropped ("a, b,," -> ["a", "b"])."""
    return [name.strip() for name in text.split(",") if name.strip()]
