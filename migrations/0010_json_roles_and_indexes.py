"""Role lists as JSON, and the indexes the models declare.

- ``user.roles`` and ``document.reader_roles`` held comma-separated role names;
  they now hold a JSON list (``"Auditor,Member"`` becomes ``["Auditor", "Member"]``,
  ``""`` becomes ``[]``), like the other JSON text columns, and default to ``[]``.
- An index on each foreign key that no other index starts with, so deleting a
  user, agent or company does not scan the tables that name it.
- On SQLite, a ``UNIQUE`` column's index is SQLite's unnamed automatic index,
  which ``playhouse.schema_diff`` does not count; a named unique index stands for
  it there (PostgreSQL names its own ``…_key`` and needs none), so a migrated
  database shows no difference from the models.
"""

import json

from peewee import SqliteDatabase

ROLE_COLUMNS = (("user", "roles"), ("document", "reader_roles"))

FOREIGN_KEY_INDEXES = (
    ("user", "company_id"),
    ("pack", "company_id"),
    ("revision", "created_by_id"),
    ("agent", "company_id"),
    ("audit_log", "actor_id"),
    ("conversation", "agent_id"),
    ("feedback", "user_id"),
    ("feedback", "reviewed_by_id"),
    ("feedback_triage", "actor_id"),
    ("regression_case", "agent_id"),
    ("regression_case", "created_by_id"),
)

SQLITE_UNIQUE_COLUMNS = (("company", "name"), ("user", "email"), ("pack", "slug"), ("agent", "slug"))


def up(migrator, db):
    for table, column in ROLE_COLUMNS:
        rows = db.execute_sql(f'SELECT id, {column} FROM "{table}"').fetchall()
        for row_id, csv in rows:
            names = [name for name in (csv or "").split(",") if name]
            db.execute_sql(
                f'UPDATE "{table}" SET {column} = {db.param} WHERE id = {db.param}', (json.dumps(names), row_id)
            )
        # Dropped first: on SQLite adding a default appends a second DEFAULT clause to the column.
        migrator.migrate(
            migrator.drop_column_default(table, column), migrator.add_column_default(table, column, "'[]'")
        )
    migrator.migrate(*(migrator.add_index(table, (column,)) for table, column in FOREIGN_KEY_INDEXES))
    if isinstance(db, SqliteDatabase):
        migrator.migrate(
            *(migrator.add_index(table, (column,), unique=True) for table, column in SQLITE_UNIQUE_COLUMNS)
        )
