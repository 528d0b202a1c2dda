"""`gemmlens migrate [--db URL] [--app-role ROLE]`: create or upgrade the run store's tables, as their owner.

On a team server with PostgreSQL the tables belong to an owner role that only this command uses; the app connects
as an app role that owns nothing (docs/team-store.md). `--app-role` grants that role what the app needs, with
INSERT and SELECT only on the audit log, so the app cannot rewrite history even where it is compromised.
"""

from __future__ import annotations

import argparse

from profiling.errors import InvalidInput, error_line

HELP = "create or upgrade the run store's tables (as their owner); --app-role grants the app's database role its rights"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        metavar="URL",
        help="SQLAlchemy URL of the run store, connecting as the owner role "
        "(default: GEMMLENS_DB_URL or ~/.local/share/gemmlens/runs.sqlite)",
    )
    parser.add_argument(
        "--app-role",
        metavar="ROLE",
        help="PostgreSQL: the role the app connects as; it gets read and write on runs and results, INSERT and "
        "SELECT only on the audit log",
    )


def run(args: argparse.Namespace) -> int:
    import sqlalchemy as sa

    from profiling.runs.privileges import grant_app_role
    from profiling.runs.schema import SCHEMA_VERSION
    from profiling.runs.store import RunStore

    with RunStore(args.db) as store:
        if store.read_only:
            raise InvalidInput(f"cannot migrate {store.display_url}: it is read-only ({store.read_only_reason})")
        print(f"{store.display_url}: schema version {SCHEMA_VERSION}")
        if not args.app_role:
            return 0
        if store.engine.dialect.name != "postgresql":
            raise InvalidInput("--app-role is for PostgreSQL: an SQLite file has no database roles")
        try:
            with store.engine.begin() as conn:
                statements = grant_app_role(conn, args.app_role.strip())
        except ValueError as exc:
            raise InvalidInput(str(exc)) from None
        except sa.exc.SQLAlchemyError as exc:  # the database's refusal (no such role, not the owner), in one line
            raise InvalidInput(
                f"could not grant {args.app_role}: {error_line(getattr(exc, 'orig', None) or exc)}"
            ) from None
        for statement in statements:
            print(f"  {statement}")
    return 0
