"""The database: one FlaskDB wrapper whose Model every table inherits.

``DATABASE_URL`` picks SQLite (the embedded default) or PostgreSQL. SQLite is
opened in WAL mode with synchronous FULL, and its file is created with mode
0600 before SQLite touches it, so no other local user can read it.

Every SQLite transaction begins ``IMMEDIATE``: it takes the write lock at its
start, waiting up to the busy timeout for it. A deferred transaction that reads
and then writes fails at once with "database is locked" when another writer
committed in between (the busy timeout does not cover that case); an immediate
one reads what the previous writer committed, so a compare-and-set loses with a
clear conflict instead. PostgreSQL needs nothing of the kind: its row locks make
the compare-and-set wait and re-check.
"""

from __future__ import annotations

import os
from pathlib import Path

from peewee import Database, SqliteDatabase
from playhouse.db_url import connect as connect_url
from playhouse.flask_utils import FlaskDB

class _FlaskDB(FlaskDB):
    """FlaskDB that tolerates a connection already open in this thread (CLI, tests)."""

    def connect_db(self):
        self.database.connect(reuse_if_open=True)


flask_db = _FlaskDB()
BaseModel = flask_db.Model  # bound to a Proxy until init_app() initialises it

SQLITE_PRAGMAS = {
    "journal_mode": "wal",
    "synchronous": 2,  # FULL: a committed upload survives power loss
    "foreign_keys": 1,
    "busy_timeout": 10_000,
    "cache_size": -32_000,
}


class _ImmediateSqliteDatabase(SqliteDatabase):
    """SQLite whose transactions begin IMMEDIATE unless told otherwise (see the module docstring).

    Peewee 4 also takes ``lock_type`` in the constructor; overriding ``begin`` works on 3.x too.
    """

    def begin(self, lock_type=None):
        super().begin(lock_type or "IMMEDIATE")


def open_database(url: str) -> Database:
    """A peewee Database for ``url``, with the SQLite rules applied."""
    if url.startswith("sqlite:///"):
        path = Path(url[len("sqlite:///"):])
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
        os.chmod(path, 0o600)
        return _ImmediateSqliteDatabase(str(path), pragmas=SQLITE_PRAGMAS, check_same_thread=False)
    return connect_url(url)


def init_app(app) -> None:
    app.config["DATABASE"] = open_database(app.config["DATABASE_URL"])
    flask_db.init_app(app)


def database() -> Database:
    return flask_db.database
