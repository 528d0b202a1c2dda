"""Cleaning of the values that results and runs carry: numbers, text, dates and JSON-safe copies.

Standard library only (the GPU worker imports the records built on these).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from profiling.errors import InvalidInput, error_line

STORE_INT_MAX = 2**31 - 1
"""The largest whole number an INTEGER column holds on every store backend (PostgreSQL's is 32-bit)."""
MAX_JSON_DEPTH = 64
"""How deeply a JSON document read from a user's file may nest (our own documents nest a few levels)."""
_SURROGATE = re.compile("[\ud800-\udfff]")


def finite_number(value: Any) -> float | None:
    """A finite float from a number, a {"value": ...} dict or a Metric-like object; else None."""
    if isinstance(value, Mapping):
        value = value.get("value")
    elif hasattr(value, "value") and not isinstance(value, (int, float, str)):
        value = value.value
    if isinstance(value, bool) or value is None:
        return None
    try:
        out = float(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: an int beyond any float
        return None
    return out if math.isfinite(out) else None


def as_int(value: Any) -> int | None:
    """The nearest int of a finite number (see finite_number), else None."""
    num = finite_number(value)
    return None if num is None else int(round(num))


def store_int(value: Any) -> int | None:
    """as_int() for a store column: InvalidInput (the value, without the field's name: callers add it) when the
    number does not fit an INTEGER column."""
    num = value if isinstance(value, int) and not isinstance(value, bool) else as_int(value)
    if num is not None and not -STORE_INT_MAX - 1 <= num <= STORE_INT_MAX:
        try:
            shown = f"{float(num):g}"
        except OverflowError:
            shown = f"an integer of {len(str(abs(num)))} digits"
        raise InvalidInput(f"{shown} is out of range (whole numbers up to {STORE_INT_MAX})")
    return num


def json_number(value: Any) -> float | None:
    """A float from a JSON number, keeping NaN (a result's "not checked"); None for anything else, an int beyond
    any float included."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return float(value)
    except OverflowError:
        return None


def unicode_text(value: Any) -> str:
    """str(value) that UTF-8 can encode: a lone surrogate (from JSON's "\\ud800", which no database or page can
    store) becomes U+FFFD. Imports refuse such text first (check_json_tree), naming where it was."""
    text = str(value)
    return text if _encodable(text) else _SURROGATE.sub("\ufffd", text)


def text_or_none(value: Any) -> str | None:
    """unicode_text(value), or None for None."""
    return None if value is None else unicode_text(value)


def nonempty_str(value: Any) -> str | None:
    """unicode_text(value), or None for None and ""."""
    return None if value is None or value == "" else unicode_text(value)


def jsonable(value: Any, _depth: int = 0) -> Any:
    """A JSON-safe copy: numpy scalars, dataclasses and objects become plain data; NaN/inf become None
    (PostgreSQL's json type rejects them, and they mean "no value" in every source we read); text becomes valid
    Unicode. InvalidInput when it nests deeper than MAX_JSON_DEPTH (a hostile file, or a cycle)."""
    if _depth > MAX_JSON_DEPTH:
        raise InvalidInput(f"the data nests deeper than {MAX_JSON_DEPTH} levels")
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, str):
        return unicode_text(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    deeper = _depth + 1
    if isinstance(value, Mapping):
        return {unicode_text(k): jsonable(v, deeper) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v, deeper) for v in value]
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    if isinstance(value, enum.Enum):
        return jsonable(value.value, deeper)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        # Field by field, not dataclasses.asdict, which recurses without a bound.
        return jsonable({f.name: getattr(value, f.name) for f in dataclasses.fields(value)}, deeper)
    if hasattr(value, "item"):  # numpy / pandas scalars
        try:
            return jsonable(value.item(), deeper)
        except (TypeError, ValueError):
            pass
    if hasattr(value, "__dict__"):
        return jsonable({k: v for k, v in vars(value).items() if not k.startswith("_")}, deeper)
    return unicode_text(value)


def parse_json(text: str | bytes, source: str, expected: str = "JSON") -> Any:
    """A JSON document from a user's file; InvalidInput naming `source` when it is not JSON (`expected` says
    what it should have been), or check_json_tree refuses it."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{source} is not {expected} ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise InvalidInput(f"{source} nests deeper than {MAX_JSON_DEPTH} levels") from None
    except ValueError as exc:  # bytes that are no Unicode; an integer of over 4300 digits
        raise InvalidInput(f"{source} is not {expected} ({error_line(exc, 200)})") from None
    check_json_tree(doc, source)
    return doc


def check_json_tree(doc: Any, source: str) -> None:
    """InvalidInput naming the first place in a parsed JSON document that nests deeper than MAX_JSON_DEPTH or holds
    text with a lone surrogate ("\\ud800": no database, file or page can store it). Iterative: no depth breaks it."""
    stack: list[tuple[Any, str, int]] = [(doc, "", 0)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, str):
            if not _encodable(value):
                raise InvalidInput(f"{source}: {path or 'the document'} holds a lone surrogate, which is not text")
            continue
        if not isinstance(value, (dict, list)):
            continue
        if depth >= MAX_JSON_DEPTH:
            raise InvalidInput(f"{source} nests deeper than {MAX_JSON_DEPTH} levels (at {path[:120]})")
        # Only containers and text that is not valid are kept to visit (in document order, so that the first bad
        # place is named): a list of millions of numbers or strings costs no entry, and no path text, each.
        items: list[tuple[Any, str, int]] = []
        if isinstance(value, dict):
            for key, v in value.items():
                if not _encodable(key):
                    raise InvalidInput(f"{source}: a key in {path or 'the document'} holds a lone surrogate")
                if isinstance(v, (dict, list)) or (isinstance(v, str) and not _encodable(v)):
                    items.append((v, f"{path}.{key}" if path else str(key), depth + 1))
        else:
            for i, v in enumerate(value):
                if isinstance(v, (dict, list)) or (isinstance(v, str) and not _encodable(v)):
                    items.append((v, f"{path}[{i}]", depth + 1))
        stack.extend(reversed(items))  # depth-first in document order: the first bad place is named


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def to_utc(value: Any, what: str = "date/time") -> dt.datetime:
    """Naive UTC datetime from an ISO string or datetime (naive input is taken as UTC); now when empty.
    InvalidInput, naming `what` (e.g. "created_utc"), for text that is no date or one that UTC cannot hold."""
    if value is None or value == "":
        return dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0)
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value.strip())
        except ValueError as exc:
            raise InvalidInput(f"{what} is not an ISO date/time: {value!r}") from exc
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        value = dt.datetime(value.year, value.month, value.day)
    if not isinstance(value, dt.datetime):
        raise InvalidInput(f"{what} is not a date/time: {value!r}")
    if value.tzinfo is not None:
        try:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        except OverflowError:  # 0001-01-01T00:00+05:00 is in year 0 in UTC
            raise InvalidInput(f"{what} {value.isoformat()} is out of range in UTC (years 1 to 9999)") from None
    return value


def iso_utc(value: dt.datetime | None) -> str | None:
    """ "2026-11-22T01:23:45Z" for a naive UTC datetime (whole seconds), None for None."""
    return None if value is None else value.replace(tzinfo=None).isoformat(timespec="seconds") + "Z"


# ---------------------------------------------------------------------------------------------
# Results: per-launch times and the values a result may hold
# ---------------------------------------------------------------------------------------------


MAX_RAW_TIMES = 100_000


def raw_times(value: Any) -> list[float] | None:
    """Per-launch times (ms) from a JSON list: positive finite numbers only; None when there is no usable list.

    A list with any non-number, non-finite or non-positive entry is dropped whole: statistics on a silently
    filtered sample would look more certain than the run was. A list of more than MAX_RAW_TIMES is refused
    (InvalidInput): no run of ours has that many (bench --repeats allows 10,000), and dropping it would turn the
    verdict into one on medians without a word."""
    if not isinstance(value, Sequence) or isinstance(value, (str, bytes)) or not value:
        return None
    if len(value) > MAX_RAW_TIMES:
        raise InvalidInput(
            f"times_ms holds {len(value):,} launch times; at most {MAX_RAW_TIMES:,} are read (bench --repeats "
            "allows 10,000): keep a sample of them"
        )
    out = []
    for v in value:
        number = json_number(v)
        if number is None or not math.isfinite(number) or number <= 0:
            return None
        out.append(number)
    return out


_POSITIVE_FIELDS = ("time_median_ms", "time_min_ms", "time_max_ms")
_NONNEGATIVE_FIELDS = (
    "tflops",
    "pct_cublas",
    "rel_error",
    "registers",
    "shared_bytes",
    "occupancy_pct",
    "bank_conflicts",
    "dram_bytes",
)


def result_value_problem(values: Mapping[str, Any], data: Mapping[str, Any]) -> str | None:
    """Why a result's columns cannot be stored as they are, or None: a size (m, n, k) that is no whole number from 1
    (-2048, 0, 2.5, true), a time that is not above zero, or a negative count, size or rate. Stored, each would give
    a wrong comparison ("-246 % faster") without a word."""
    for name in ("m", "n", "k"):
        raw = data.get(name)
        if raw is None:
            continue
        number = json_number(raw) if not isinstance(raw, str) else finite_number(raw)
        # NaN and Infinity first: JSON's NaN reads as a float that int() cannot take
        if isinstance(raw, bool) or number is None or not math.isfinite(number) or number != int(number) or number < 1:
            shown = "true" if raw is True else "false" if raw is False else repr(raw)[:40]
            return f"{name} {shown} is not a size (a whole number from 1)"
    for name in _POSITIVE_FIELDS:
        if values.get(name) is not None and values[name] <= 0:
            return f"{name} {values[name]:g} is not a time (times are above zero)"
    for name in _NONNEGATIVE_FIELDS:
        if values.get(name) is not None and values[name] < 0:
            return f"{name} {values[name]:g} is negative, which it cannot be"
    return None
