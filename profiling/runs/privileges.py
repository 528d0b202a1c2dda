"""What the database role of a PostgreSQL run store may do to the audit log, and the grants of the two-role
deployment (docs/team-store.md).

The audit log's triggers refuse UPDATE, DELETE and TRUNCATE, but the table's owner can disable them (ALTER TABLE
audit DISABLE TRIGGER) or replace the function they call, and a superuser can do anything. So a team server runs as
an app role that owns nothing: an owner role creates and migrates the tables (`gemmlens migrate`), and grants the
app role what it needs, with INSERT and SELECT only on the audit log. history_risks() says, for the connected role,
what of that does not hold; RunStore turns it into a warning at start.

SQLite has no roles: whoever may write the file may change anything in it; its triggers guard against the app's own
statements only (see docs/team-store.md).
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

GUARD_FUNCTION = "gemmlens_audit_append_only"

_RISKS = sa.text(
    """
    SELECT current_user AS who,
           r.rolsuper AS superuser,
           pg_has_role(current_user, c.relowner, 'MEMBER') AS owns_audit,
           pg_has_role(current_user, n.nspowner, 'MEMBER') AS owns_schema,
           n.nspname AS schema,
           has_table_privilege(c.oid, 'UPDATE') AS may_update,
           has_table_privilege(c.oid, 'DELETE') AS may_delete,
           has_table_privilege(c.oid, 'TRUNCATE') AS may_truncate,
           (SELECT bool_or(pg_has_role(current_user, p.proowner, 'MEMBER')) FROM pg_proc p
             WHERE p.proname = :guard AND p.pronamespace = n.oid) AS owns_guard
      FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN pg_roles r ON r.rolname = current_user
     WHERE c.oid = to_regclass('audit')
    """
)


def history_risks(conn: Connection) -> list[str]:
    """How the role behind `conn` could rewrite or remove audit entries on PostgreSQL (empty: it can only add
    and read them, or this is not PostgreSQL, or there is no audit table yet)."""
    if conn.dialect.name != "postgresql":
        return []
    row = conn.execute(_RISKS, {"guard": GUARD_FUNCTION}).mappings().first()
    if row is None:
        return []
    risks = []
    if row["superuser"]:
        risks.append("it is a superuser")
    if row["owns_audit"]:
        risks.append("it owns the audit table (it can disable its triggers)")
    if row["owns_guard"]:
        risks.append(f"it owns the trigger function {GUARD_FUNCTION} (it can replace it)")
    if row["owns_schema"]:
        risks.append(f"it owns the schema {row['schema']} (it can drop the table)")
    granted = [
        p for p, key in (("UPDATE", "may_update"), ("DELETE", "may_delete"), ("TRUNCATE", "may_truncate")) if row[key]
    ]
    if granted and not (row["superuser"] or row["owns_audit"]):
        risks.append(f"it holds {', '.join(granted)} on the audit table (only the triggers stand in the way)")
    return risks


def history_warning(conn: Connection) -> str | None:
    """One line for the start-up warning, or None where the role can only add and read audit entries."""
    risks = history_risks(conn)
    if not risks:
        return None
    who = conn.execute(sa.text("SELECT current_user")).scalar()
    return (
        f"the database role {who} could rewrite the run store's audit log: {'; '.join(risks)}. Run the app as a "
        "role with INSERT and SELECT only on the audit table (docs/team-store.md: `gemmlens migrate --app-role`)"
    )


def grant_app_role(conn: Connection, role: str) -> list[str]:
    """Grant `role` what the app needs on the store's tables in the current schema, and no more: read and write runs
    and results and comments, read schema_version, INSERT and SELECT on the audit log (anything else it held there is revoked).
    Run as the owner. Returns the statements run."""
    quote = conn.dialect.identifier_preparer.quote
    if role == conn.execute(sa.text("SELECT current_user")).scalar():
        raise ValueError(f"the app role must not be the owner role {role}: it would own the audit log")
    schema = quote(conn.execute(sa.text("SELECT current_schema()")).scalar())
    # A store of an older schema has no comments table yet; `migrate --app-role` grants on it once it exists.
    present = [
        table
        for table in ("runs", "results", "comments", "audit")
        if conn.execute(sa.text("SELECT to_regclass(:t)"), {"t": table}).scalar() is not None
    ]
    sequences = [
        conn.execute(sa.text("SELECT pg_get_serial_sequence(:t, 'id')"), {"t": table}).scalar() for table in present
    ]
    app = quote(role)
    data_tables = ", ".join(table for table in present if table != "audit")
    statements = [
        f"GRANT USAGE ON SCHEMA {schema} TO {app}",
        f"GRANT SELECT ON schema_version TO {app}",
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON {data_tables} TO {app}",
        f"REVOKE ALL ON audit FROM {app}",
        f"GRANT SELECT, INSERT ON audit TO {app}",
        f"GRANT USAGE ON SEQUENCE {', '.join(s for s in sequences if s)} TO {app}",
    ]
    for statement in statements:
        conn.exec_driver_sql(statement)
    return statements
