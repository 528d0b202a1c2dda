"""Runs a store already holds: found by what was measured (records.content_fingerprint), not by label."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from profiling.runs.records import SavedRun, as_run, content_fingerprint
from profiling.runs.store import RunStore
from profiling.runs.values import to_utc


def identical_runs(store: RunStore, runs: Sequence[SavedRun | Mapping[str, Any]]) -> list[int | None]:
    """For each run, the id of a stored run (outside the trash) holding the same measurement, else None: what to
    ask about before saving a run a second time. Only stored runs of the same kind measured at the same second are
    read whole."""
    wanted = [as_run(r) for r in runs]
    times = {(r.kind, r.created) for r in wanted}
    by_print: dict[str, int] = {}
    for summary in store.list_runs():
        if (summary["kind"], to_utc(summary["created_utc"])) in times:
            by_print.setdefault(content_fingerprint(store.read_run(summary["id"])), summary["id"])
    return [by_print.get(content_fingerprint(r)) for r in wanted]
