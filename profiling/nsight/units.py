"""ncu unit strings to base units and ncu number cells to floats (thousands separators, "n/a", "-")."""

from __future__ import annotations

# Time in a numerator is stored in nanoseconds (ncu's base for gpu__time_duration); time in a
# denominator ("byte/second") is stored per second, which is what rates are compared in.
_TIME_TO_NS: dict[str, float] = {
    "nsecond": 1.0,
    "ns": 1.0,
    "usecond": 1e3,
    "us": 1e3,
    "msecond": 1e6,
    "ms": 1e6,
    "second": 1e9,
    "s": 1e9,
    "sec": 1e9,
}


# "x per <time unit>" -> x per second, as exact multipliers (1e6 rather than 1 / 1e-6).
_PER_SECOND: dict[str, float] = {k: 1e9 / v for k, v in _TIME_TO_NS.items()}


_SI: dict[str, float] = {"K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}


_ALIASES: dict[str, str] = {"B": "byte", "bytes": "byte", "Hz": "hz", "percent": "%"}


# Words that take a decimal SI prefix in ncu's auto units ("Kbyte", "Mcycle", "Ghz", "Minst").
_PREFIXABLE: tuple[str, ...] = (
    "byte",
    "hz",
    "cycle",
    "inst",
    "sector",
    "request",
    "warp",
    "thread",
    "block",
    "wavefront",
    "transaction",
)


def _split_prefix(word: str) -> tuple[float, str]:
    """('Kbyte') -> (1e3, 'byte'); unknown words come back unscaled."""
    word = _ALIASES.get(word, word)
    if word in _TIME_TO_NS or word in _PREFIXABLE:
        return 1.0, word
    if len(word) > 1 and word[0] in _SI:
        rest = _ALIASES.get(word[1:], word[1:])
        if rest.lower() in _PREFIXABLE:
            return _SI[word[0]], rest.lower()
        if word[1:] == "B":
            return _SI[word[0]], "byte"
    return 1.0, word


_UNIT_CACHE: dict[str, tuple[float, str]] = {}


_UNIT_CACHE_SIZE = 4096


def to_base(unit: str) -> tuple[float, str]:
    """(factor, base unit) such that value_in_unit * factor = value in the base unit.

    "usecond" -> (1000, "nsecond"); "Gbyte/second" -> (1e9, "byte/second"); "Kbyte" -> (1000, "byte");
    "cycle/usecond" -> (1e6, "cycle/second"); "" -> (1, "").
    """
    cached = _UNIT_CACHE.get(unit)
    if cached is not None:
        return cached
    text = unit.strip()
    if not text or text == "%":
        result = (1.0, text)
    else:
        num, _, den = text.partition("/")
        factor, num_base = _split_prefix(num.strip())
        if num_base in _TIME_TO_NS:
            factor, num_base = factor * _TIME_TO_NS[num_base], "nsecond"
        if den:
            den_factor, den_base = _split_prefix(den.strip())
            factor /= den_factor
            if den_base in _PER_SECOND:
                factor, den_base = factor * _PER_SECOND[den_base], "second"
            result = (factor, f"{num_base}/{den_base}")
        else:
            result = (factor, num_base)
    if len(_UNIT_CACHE) < _UNIT_CACHE_SIZE:  # a hostile file may hold any number of distinct units
        _UNIT_CACHE[unit] = result
    return result


def parse_number(text: str) -> float | None:
    """ncu's printed number ("4,420,544", "1.5", "n/a", "") -> float, or None when not a number."""
    text = text.strip()
    if not text:
        return None
    if "," in text:
        text = text.replace(",", "")
    try:
        return float(text)
    except ValueError:
        return None
