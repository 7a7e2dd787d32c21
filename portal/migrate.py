"""Apply the numbered migrations in migrations/ (NNNN_name.py, each with ``up(migrator, db)``).

Applied names are recorded in ``schema_migration``; each migration runs in its
own transaction, so a failed one leaves the database as it was before it.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from peewee import Database, PostgresqlDatabase
from playhouse.migrate import PostgresqlMigrator, SchemaMigrator, SqliteMigrator

MIGRATIONS_DIR = Path(__file__).resolve().parents[1] / "migrations"


def dialect_sql(db: Database, sql: str) -> str:
    """Fill the few type names that differ between SQLite and PostgreSQL."""
    postgres = isinstance(db, PostgresqlDatabase)
    return sql.format(
        pk="SERIAL PRIMARY KEY" if postgres else "INTEGER PRIMARY KEY AUTOINCREMENT",
        ts="TIMESTAMP",
        bool="BOOLEAN",
    )


def run_sql(db: Database, script: str) -> None:
    """Run ``;``-separated DDL statements (with dialect placeholders)."""
    for statement in dialect_sql(db, script).split(";"):
        if statement.strip():
            db.execute_sql(statement)


def _migrator(db: Database) -> SchemaMigrator:
    return PostgresqlMigrator(db) if isinstance(db, PostgresqlDatabase) else SqliteMigrator(db)


def available() -> list[Path]:
    return sorted(p for p in MIGRATIONS_DIR.glob("[0-9][0-9][0-9][0-9]_*.py"))


def applied(db: Database) -> set[str]:
    db.execute_sql(
        "CREATE TABLE IF NOT EXISTS schema_migration (name VARCHAR(255) PRIMARY KEY, applied_at TIMESTAMP)"
    )
    return {row[0] for row in db.execute_sql("SELECT name FROM schema_migration").fetchall()}


def pending(db: Database) -> list[str]:
    done = applied(db)
    return [p.stem for p in available() if p.stem not in done]


def migrate(db: Database) -> list[str]:
    """Apply what is missing, in order; return the names applied now."""
    done = applied(db)
    ran = []
    for path in available():
        if path.stem in done:
            continue
        spec = importlib.util.spec_from_file_location(f"cairn_migration_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        with db.atomic():
            module.up(_migrator(db), db)
            db.execute_sql(
                "INSERT INTO schema_migration (name, applied_at) VALUES (%s, CURRENT_TIMESTAMP)"
                % db.param, (path.stem,))
        ran.append(path.stem)
    return ran
