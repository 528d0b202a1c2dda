"""`python -m profiling audit [--limit N] [--run ID] [--json]`: print the run store's audit log, newest first.

Each entry says who saved, imported, changed, deleted (to the trash), restored or purged which run, and when
(profiling.runs.audit). The store is opened for reading only: this never creates or migrates one.
"""

from __future__ import annotations

import argparse

from profiling.commands import print_json, whole_number

HELP = "print the run store's audit log: who saved, imported, deleted, restored or purged which run, and when"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--limit", type=whole_number("--limit"), metavar="N", help="only the newest N entries")
    parser.add_argument("--run", type=whole_number("--run"), metavar="ID", help="only the entries of run ID")
    parser.add_argument("--json", action="store_true", help="print a JSON list of entries")
    parser.add_argument(
        "--db",
        metavar="URL",
        help="SQLAlchemy URL of the run store (default: GEMMLENS_DB_URL or ~/.local/share/gemmlens/runs.sqlite)",
    )


def run(args: argparse.Namespace) -> int:
    from profiling.runs.store import RunStore

    with RunStore(args.db, create=False) as store:
        entries = store.audit_log(args.limit, run_id=args.run)
        where = store.display_url
    if args.json:
        print_json(entries)
        return 0
    if not entries:
        print(f"the audit log of {where} is empty")
        return 0
    for e in entries:
        run_id = f"run {e['run_id']}" if e["run_id"] is not None else "-"
        print(f"{e['at_utc']}  {e['actor']:<30}  {e['action']:<8} {run_id:<10} {e['detail']}")
    return 0
