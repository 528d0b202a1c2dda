"""How a comment names the launch it is about (a kernel at a size of a saved run), for the store that checks the name
and the Review page that offers it. The comments themselves are RunStore.add_comment and RunStore.comments."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from profiling.runs.records import size_text
from profiling.runs.schema import ResultRow


def launch_name(kernel: str, size: str) -> str:
    """One launch of a run: its kernel and size (RunResult.size, records.size_text), as the run's results table
    shows them: "v4 4096x4096x4096"."""
    return f"{kernel} {size}" if size else kernel


def launches_of(conn: Connection, run_id: int) -> list[str]:
    """The launch names of a run's results, in the run's order, without repeats."""
    columns = (ResultRow.kernel, ResultRow.m, ResultRow.n, ResultRow.k, ResultRow.size_label)
    rows = conn.execute(sa.select(*columns).where(ResultRow.run_id == run_id).order_by(ResultRow.position))
    return list(dict.fromkeys(launch_name(r.kernel, size_text(r._asdict())) for r in rows))
