"""ncu unit strings to base units and ncu number cells to floats (thousands separators, "n/a", "-").

ncu writes numbers in one format ("4,420,544", "1,234.5"): a comma anywhere else ("1.234,5" with a decimal
comma, "1,5") is not a thousands separator, and such a cell is no number rather than a wrong one
(`malformed_number` tells it apart from text). A unit none of ncu's words make up ("fortnight") has no base unit
(`unit_problem`): its values are not read, since taking them as the base unit would be a wrong number.
"""

from __future__ import annotations

import functools
import re

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


# ncu's unit words that take no prefix (`ncu --query-metrics` and the captures in tests/fixtures): with the time
# units and the prefixable words below, every unit ncu prints is made of these.
_OTHER_WORDS = frozenset(
    {"register", "branches", "SM", "cluster", "pass", "sample", "ops", "bit", "proportion", "sectors"}
)


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


def _known_word(word: str) -> bool:
    factor, base = _split_prefix(word)
    return base in _TIME_TO_NS or base in _PREFIXABLE or base in _OTHER_WORDS or base == "%"


@functools.lru_cache(maxsize=4096)  # a page of 100,000 columns has a few dozen units
def unit_problem(unit: str) -> str | None:
    """Why `unit` is not one of ncu's ("'fortnight' is not an Nsight Compute unit"), or None when it is (or empty)."""
    text = unit.strip()
    if not text or text == "%":
        return None
    words = [w.strip() for w in text.split("/")]
    if len(words) > 2 or not all(words) or not all(_known_word(w) for w in words):
        return f"unit {text[:40]!r} is not an Nsight Compute unit"
    return None


# Not "%": ncu itself prints small negative percentages of peak (-0.15 for a tensor pipe's .min, in the foreign
# base-unit capture), and those are no wrong unit or sign of a broken file.
_NONNEGATIVE_WORDS = frozenset({*_TIME_TO_NS, "nsecond", *_PREFIXABLE, *_OTHER_WORDS})


@functools.lru_cache(maxsize=4096)
def never_negative(base_unit: str) -> bool:
    """Whether values in `base_unit` (a to_base result) are durations, sizes, counts or rates of them, which are
    never below zero ("nsecond", "byte", "register/thread", "byte/second")."""
    words = base_unit.split("/")
    return bool(base_unit) and all(w in _NONNEGATIVE_WORDS for w in words)


# ncu's thousands separators: groups of three digits after the first (a comma anywhere else is not one).
GROUPED_NUMBER = r"^\s*[-+]?\d{1,3}(?:,\d{3})+(?:\.\d*)?(?:[eE][-+]?\d+)?\s*$"
_GROUPED = re.compile(GROUPED_NUMBER)
_NUMBERISH = re.compile(r"^\s*[-+]?[\d.,]*\d[\d.,]*(?:[eE][-+]?\d+)?\s*$")


def parse_number(text: str) -> float | None:
    """ncu's printed number ("4,420,544", "1.5", "n/a", "") -> float, or None when not a number (a comma that
    is not a thousands separator, as in "1.234,5", makes no number: see malformed_number)."""
    text = text.strip()
    if not text:
        return None
    if "," in text:
        if _GROUPED.match(text) is None:
            return None
        text = text.replace(",", "")
    try:
        return float(text)
    except ValueError:
        return None


def malformed_number(text: str) -> bool:
    """True for a cell that is digits, dots and commas but not a number as ncu writes it: a decimal comma
    ("1.234,5", "0,5") or stray separators ("1.2.3"). Such a cell is missing with a warning, not text."""
    return _NUMBERISH.match(text) is not None and parse_number(text) is None


def negative_note(what: str, text: str, where: str) -> str:
    """The warning for a negative value where only zero or more makes sense (a duration, size or count)."""
    return f"{what}: value {text.strip()[:40]!r} ({where}) is negative, which it cannot be; taken as missing"


def malformed_note(what: str, text: str, where: str) -> str:
    """The warning for a cell of digits and separators that is no number as ncu writes it ("1.234,5")."""
    return (
        f"{what}: value {text.strip()[:40]!r} ({where}) is not a number as ncu writes it (a decimal comma? ncu "
        "writes 1,234.5); taken as missing"
    )
