"""How the pages draw a table: numbers rounded to what they mean, and no "None" cell.

Streamlit's grid draws a null as "None", so a column with gaps becomes text here."""

from __future__ import annotations

from typing import Any

import pandas as pd


def table_height(rows: int) -> int:
    """Pixels that show every row of a dataframe of `rows` rows (Streamlit's rows are 35 px, plus the header)."""
    return 35 * (rows + 1) + 3


def number_format(column: str, values: pd.Series) -> str | None:
    """The format a numeric column reads best in, from what it holds (its name's unit): whole numbers without
    decimals, percentages to 0.1, times to 4 significant digits, TFLOP/s to 0.01, sizes in MB/KB to 0.1."""
    name = str(column)
    finite = pd.to_numeric(values, errors="coerce").dropna()
    if finite.empty:
        return None
    if "rel. error" in name:
        return "{:.1e}"
    if (finite == finite.round()).all() and finite.abs().max() < 1e15:
        return "{:,.0f}"
    if "%" in name:
        return "{:.1f}"
    if "(ms)" in name or "(µs)" in name or name in ("value",) or "intensity" in name:
        return "{:.4g}"
    if "TFLOP/s" in name or "TB/s" in name or "per request" in name:
        return "{:.2f}"
    if "(MB)" in name or "(KB)" in name or "(MHz)" in name:
        return "{:.1f}"
    return "{:.4g}"


def missing(value: Any) -> bool:
    """None, NaN, NaT or pd.NA (a list or array cell is not missing)."""
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def display(frame: pd.DataFrame) -> pd.DataFrame:
    """A table as the pages draw it: each numeric column rounded to what it means (see number_format), and missing
    values as empty cells, never "None": Streamlit's grid draws a null as "None", so a column with gaps becomes
    text (its numbers formatted the same way); full columns stay numbers, rounded, so they sort.

    Plain values rather than a pandas Styler: Streamlit renders a Styler cell by cell on every visit, which was the
    largest share of the server's time per visit under load (docs/load-test.md).
    """
    out = frame.copy()
    for column in out.columns:
        values = out[column]
        numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
        fmt = number_format(str(column), values) if numeric else None
        if values.isna().any():
            out[column] = ["" if missing(v) else (fmt.format(v) if fmt else str(v)) for v in values]
        elif fmt == "{:,.0f}":
            out[column] = values.astype("int64")
        elif fmt:
            out[column] = [float(fmt.format(v)) for v in values]
    return out


def compare_display(side: pd.DataFrame) -> pd.DataFrame:
    """compare_launches() as text: each metric (row) rounded to its own unit, a missing value an empty cell."""
    out = side.astype(object)
    for metric, row in side.iterrows():
        fmt = number_format(str(metric), row) or "{}"
        out.loc[metric] = ["" if missing(v) else fmt.format(v) for v in row]
    return out


NO_SHARED = "–"
"""The n-way cell of a line or instruction without a shared-memory access (ncu counts no conflict there)."""


def n_way_text(n_way: float | None) -> str:
    """The worst bank-conflict degree as the table shows it: "8" for an 8-way access, NO_SHARED for none."""
    return NO_SHARED if n_way is None or n_way != n_way else f"{n_way:.0f}"


def arrow(frame: pd.DataFrame) -> Any:
    """`frame` as the Arrow table that st.dataframe and st.table build from a DataFrame on every visit (pyarrow's
    Table.from_pandas, index as pandas keeps it: the same bytes reach the browser), for a shared cache to hold, so
    drawing it only serialises it. A frame Arrow cannot take as it is comes back unchanged (Streamlit then fixes its
    column types on each visit, as it would have)."""
    import pyarrow as pa

    try:
        return pa.Table.from_pandas(frame)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return frame
