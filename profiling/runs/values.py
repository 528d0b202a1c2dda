"""Cleaning of the values that results and runs carry: numbers, text, dates and JSON-safe copies.

Standard library only (the GPU worker imports the records built on these).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import math
from collections.abc import Mapping
from typing import Any

from profiling.errors import InvalidInput


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
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


def as_int(value: Any) -> int | None:
    """The nearest int of a finite number (see finite_number), else None."""
    num = finite_number(value)
    return None if num is None else int(round(num))


def json_number(value: Any) -> float | None:
    """A float from a JSON number, keeping NaN (a result's "not checked"); None for anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def text_or_none(value: Any) -> str | None:
    """str(value), or None for None."""
    return None if value is None else str(value)


def nonempty_str(value: Any) -> str | None:
    """str(value), or None for None and ""."""
    return None if value is None or value == "" else str(value)


def jsonable(value: Any) -> Any:
    """A JSON-safe copy: numpy scalars, dataclasses and objects become plain data; NaN/inf become None
    (PostgreSQL's json type rejects them, and they mean "no value" in every source we read)."""
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    if isinstance(value, enum.Enum):
        return jsonable(value.value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable(dataclasses.asdict(value))
    if hasattr(value, "item"):  # numpy / pandas scalars
        try:
            return jsonable(value.item())
        except (TypeError, ValueError):
            pass
    if hasattr(value, "__dict__"):
        return jsonable({k: v for k, v in vars(value).items() if not k.startswith("_")})
    return str(value)


def to_utc(value: Any) -> dt.datetime:
    """Naive UTC datetime from an ISO string or datetime (naive input is taken as UTC); now when empty."""
    if value is None or value == "":
        return dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0)
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value.strip())
        except ValueError as exc:
            raise InvalidInput(f"not an ISO date/time: {value!r}") from exc
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        value = dt.datetime(value.year, value.month, value.day)
    if not isinstance(value, dt.datetime):
        raise InvalidInput(f"not a date/time: {value!r}")
    if value.tzinfo is not None:
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    return value


def iso_utc(value: dt.datetime | None) -> str | None:
    """ "2026-11-22T01:23:45Z" for a naive UTC datetime (whole seconds), None for None."""
    return None if value is None else value.replace(tzinfo=None).isoformat(timespec="seconds") + "Z"
