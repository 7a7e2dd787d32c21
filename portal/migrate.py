"""Apply the numbered migrations in migrations/ with peewee's runner (``playhouse.migrations``).

Each file ``NNNN_name.py`` defines ``up(migrator, db)``; the runner applies the
pending ones in numeric order, each in its own transaction (a failed one leaves
the database as it was before it), and records their names in ``schema_migration``.

Databases migrated before Cairn used peewee's runner keep the same history under
the older table layout (``name`` primary key, ``applied_at``): ``migrate`` rewrites
that table once into the runner's layout, so no applied migration runs again.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from peewee import Database, PostgresqlDatabase
from playhouse.migrations import Runner

MIGRATIONS_DIR = Path(__file__).resolve().parents[1] / "migrations"
HISTORY_TABLE = "schema_migration"


def dialect_sql(db: Database, sql: str) -> str:
    """Fill the few type names that differ between SQLite and PostgreSQL."""
    postgres = isinstance(db, PostgresqlDatabase)
    return sql.format(
        pk="SERIAL PRIMARY KEY" if postgres else "INTEGER PRIMARY KEY AUTOINCREMENT",
        ts="TIMESTAMP",
        bool="BOOLEAN",
    )


def run_sql(db: Database, script: str) -> None:
    """Run ``;``-separated DDL statements (with dialect placeholders); the migrations' own helper."""
    for statement in dialect_sql(db, script).split(";"):
        if statement.strip():
            db.execute_sql(statement)


def runner(db: Database) -> Runner:
    return Runner(db, str(MIGRATIONS_DIR), table_name=HISTORY_TABLE)


def _old_history(db: Database) -> list[tuple[str, dt.datetime | None]] | None:
    """The applied names in the table layout of Cairn's own former runner, or None if it is not that."""
    if not db.table_exists(HISTORY_TABLE):
        return None
    columns = {c.name for c in db.get_columns(HISTORY_TABLE)}
    if "applied_at" not in columns or "id" in columns:
        return None
    return [tuple(row) for row in db.execute_sql(f"SELECT name, applied_at FROM {HISTORY_TABLE}").fetchall()]


def _adopt_old_history(db: Database, history: Runner) -> None:
    """Rewrite the former runner's history table into peewee's, in one transaction, keeping every row."""
    with db.atomic():
        rows = _old_history(db)
        if rows is None:
            return
        db.execute_sql(f"DROP TABLE {HISTORY_TABLE}")
        history.History.create_table()
        for name, applied_at in rows:
            if isinstance(applied_at, str):  # SQLite's CURRENT_TIMESTAMP text
                applied_at = dt.datetime.fromisoformat(applied_at)
            history.History.create(name=name, applied=applied_at or dt.datetime.now())


def pending(db: Database) -> list[str]:
    """Names of the migrations not applied yet (reads only)."""
    old = _old_history(db)
    if old is not None:
        done = {name for name, _ in old}
        return [m.name for m in runner(db).migrations() if m.name not in done]
    return [m.name for m in runner(db).status() if m.path is not None and not m.applied]


def migrate(db: Database, target: str | None = None) -> list[str]:
    """Apply what is missing, in order (stopping after ``target`` if given); return the names applied now."""
    history = runner(db)
    _adopt_old_history(db, history)
    return history.up(target)
