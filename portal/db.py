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

Writers queue for that lock outside SQLite (``_WriterTurn``): SQLite's own busy
handler polls with sleeps growing to 100 ms and serves no one in order, so under
load a chat turn waited up to 2 s for a lock held a few milliseconds at a time
(docs/performance.md, "Waiting for SQLite's write lock").
"""

from __future__ import annotations

import fcntl
import inspect
import json
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from peewee import (
    OP,
    SQL,
    Database,
    Expression,
    Node,
    NodeList,
    OperationalError,
    Proxy,
    SqliteDatabase,
    TextField,
    Value,
)
from playhouse.db_url import connect as connect_url
from playhouse.flask_utils import FlaskDB
from playhouse.pool import PooledSqliteDatabase


class _FlaskDB(FlaskDB):
    """FlaskDB that tolerates a connection already open in this thread (CLI, tests)."""

    def connect_db(self):
        self.database.connect(reuse_if_open=True)


flask_db = _FlaskDB()
BaseModel = flask_db.Model  # bound to a Proxy until init_app() initialises it


class JSONTextField(TextField):
    """A JSON value stored as text: the same column type and the same text on SQLite and PostgreSQL.

    Peewee's own ``JSONField`` needs a JSON column on PostgreSQL (it reads a text column back as a
    string); text keeps every existing column and row as it is, and a ``LIKE`` still reads it.
    """

    def db_value(self, value):
        return None if value is None else json.dumps(value)

    def python_value(self, value):
        return None if value is None else json.loads(value)

    def holds(self, value) -> NodeList:
        """Rows whose JSON text includes ``value`` as JSON: for a list of plain keys, the rows listing that key.

        A ``LIKE`` on the quoted key (``"wrong"`` cannot match ``"wrong_version"``), with the
        pattern characters escaped, on every database.
        """
        text = json.dumps(value).replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return NodeList((self, SQL("LIKE"), Value(f"%{text}%", converter=False), SQL("ESCAPE '\\'")))

    def is_empty(self) -> Expression:
        """Rows whose value is the empty list (or dict), by the text ``json.dumps`` gives it."""
        return self.is_exactly(self.default())

    def is_exactly(self, value) -> Expression:
        """Rows whose value is ``value``, by the text ``json.dumps`` gives it (the text every write stores);
        a list is compared whole, not taken for the values of an ``IN``."""
        return Expression(self, OP.EQ, Value(self.db_value(value), converter=False))


SQLITE_PRAGMAS = {
    "journal_mode": "wal",
    "synchronous": 2,  # FULL: a committed upload survives power loss
    "foreign_keys": 1,
    "busy_timeout": 10_000,
    "cache_size": -32_000,
}


SQLITE_CONNECTION_REUSE_S = 300  # a pooled connection is closed once this old (a fresh one starts clean)


# A writer waiting for another process's turn looks again this often (SQLite's handler sleeps up to 100 ms).
_TURN_POLL_S = 0.001


class _WriterTurn:
    """One writing transaction at a time across the processes sharing a database file, in turn.

    The threads of a process queue on a lock (woken as soon as it is free); the one at the head
    then takes an ``flock`` on a file beside the database, which the kernel drops if the process
    dies, so a killed writer never leaves it held. Waiting is bounded by the busy timeout, after
    which the transaction fails as SQLite's would ("database is locked": ``is_busy``).
    """

    def __init__(self, path: Path, timeout_s: float):
        self._path = path
        self._timeout_s = timeout_s
        self._in_this_process()

    def _in_this_process(self) -> None:
        """Start afresh in a new process. A forked child must not share the parent's open lock file: an
        ``flock`` belongs to the open file, so both would hold the turn at once. Nor may it inherit a
        thread lock that another thread of the parent held at the fork."""
        self._pid = os.getpid()
        self._threads = threading.Lock()
        self._fd: int | None = None
        self._held = threading.local()

    def held(self) -> bool:
        return self._pid == os.getpid() and getattr(self._held, "value", False)

    def take(self) -> None:
        if self._pid != os.getpid():
            self._in_this_process()
        deadline = time.monotonic() + self._timeout_s
        if not self._threads.acquire(timeout=self._timeout_s):
            raise OperationalError("database is locked (another writer of this process held it too long)")
        try:
            if self._fd is None:
                self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            while True:
                try:
                    fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise OperationalError("database is locked (another process held it too long)") from None
                    time.sleep(_TURN_POLL_S)
        except BaseException:
            self._threads.release()
            raise
        self._held.value = True

    def give_back(self) -> None:
        if not self.held():
            return
        self._held.value = False
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        self._threads.release()


class _ImmediateSqliteDatabase(PooledSqliteDatabase):
    """SQLite whose transactions begin IMMEDIATE unless told otherwise, each in its writer's turn
    (see the module docstring).

    Peewee 4 also takes ``lock_type`` in the constructor; overriding ``begin`` works on 3.x too.
    Pooled: FlaskDB opens a connection for every request and closes it after; opening one (and
    setting its pragmas) and closing it cost about as much as a short page's queries, so a closed
    connection goes back to the pool (any transaction left open rolled back) for the next request.
    """

    def __init__(self, database, *args, **kwargs):
        super().__init__(database, *args, **kwargs)
        timeout_s = kwargs.get("pragmas", {}).get("busy_timeout", 5_000) / 1000
        self.writer_turn = _WriterTurn(Path(f"{database}-writer.lock"), timeout_s)

    def begin(self, lock_type=None):
        lock_type = lock_type or "IMMEDIATE"
        if lock_type.upper() == "DEFERRED":  # a reader's transaction takes no write lock: no turn either
            return super().begin(lock_type)
        self.writer_turn.take()
        try:
            super().begin(lock_type)
        except BaseException:
            self.writer_turn.give_back()
            raise

    def commit(self):
        try:
            return super().commit()
        finally:
            self._give_back_when_ended()

    def rollback(self):
        try:
            return super().rollback()
        finally:
            self._give_back_when_ended()

    def _close(self, conn, close_conn=False):
        # A connection given back (or closed) with its transaction open is rolled back on the way:
        # this thread's turn ends with it.
        try:
            return super()._close(conn, close_conn)
        finally:
            self.writer_turn.give_back()

    def _give_back_when_ended(self) -> None:
        conn = self._state.conn
        if conn is None or not conn.in_transaction:
            self.writer_turn.give_back()


def open_database(url: str) -> Database:
    """A peewee Database for ``url``, with the SQLite rules applied."""
    if url.startswith("sqlite:///"):
        path = Path(url[len("sqlite:///") :])
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
        os.chmod(path, 0o600)
        return _ImmediateSqliteDatabase(
            str(path),
            pragmas=SQLITE_PRAGMAS,
            check_same_thread=False,
            max_connections=None,  # one a thread at most: never refuse a request for want of one
            stale_timeout=SQLITE_CONNECTION_REUSE_S,
        )
    return connect_url(url)


BUSY_MESSAGE = "The portal is busy with another change and could not make this one. Try again in a moment."


def is_busy(error: Exception) -> bool:
    """Whether ``error`` is SQLite's write lock still held by another change after the busy timeout
    (``SQLITE_PRAGMAS``): the transaction that raised it never began, so nothing of it was written."""
    return "database is locked" in str(error)


def init_app(app) -> None:
    app.config["DATABASE"] = open_database(app.config["DATABASE_URL"])
    flask_db.init_app(app)


def database() -> Database:
    return flask_db.database


def _engine() -> Database:
    """The database object itself, not the proxy the models are bound to: its class says which engine it is,
    and it is the key of what is kept per database."""
    db = database()
    return db.obj if isinstance(db, Proxy) else db


class _Slot:
    """Where a ``KeptSelect``'s value goes in the kept parameters, and how that value is converted."""

    __slots__ = ("position", "converter")

    def __init__(self, position: int, converter):
        self.position = position
        self.converter = converter

    def bind(self, values: tuple):
        value = values[self.position]
        return self.converter(value) if self.converter else value


class _Parameter(Node):
    """A placeholder for a ``KeptSelect``'s value: written as the database's parameter mark, converted on each
    run as peewee converts a value there (the ``db_value`` of the field it is compared with)."""

    def __init__(self, position: int):
        self.position = position

    def __sql__(self, ctx):
        return ctx.value(_Slot(self.position, ctx.state.converter), converter=False)


class KeptSelect:
    """A select whose shape never changes (a lookup by key), its SQL written by peewee once per database.

    Peewee writes a query's SQL anew on every run, walking each node and column: for a lookup by key
    that takes 0.3–0.7 ms, thirty times what SQLite needs to answer it, and a page makes several
    (docs/performance.md, "Fewer SQL writes a page"). ``build`` takes one placeholder per value and
    returns the select; each call runs the kept text with its own values and gives rows as the select
    itself would (models, joined models, tuples). Values are scalars: an ``IN`` list changes the shape
    (``KeptSelectIn``). ``arity``: the number of values, when ``build`` takes them as ``*values``.
    """

    def __init__(self, build: Callable[..., Node], arity: int | None = None):
        self._build = build
        self._arity = len(inspect.signature(build).parameters) if arity is None else arity
        self._kept: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # database -> (select, sql, params)

    def rows(self, *values) -> list:
        if len(values) != self._arity:
            raise TypeError(f"{self._build.__name__} takes {self._arity} values, not {len(values)}")
        db = _engine()
        kept = self._kept.get(db)
        if kept is None:
            select = self._build(*(_Parameter(position) for position in range(self._arity)))
            sql, params = db.get_sql_context().sql(select).query()
            kept = self._kept[db] = (select, sql, params)
        select, sql, params = kept
        bound = [p.bind(values) if isinstance(p, _Slot) else p for p in params]
        return list(select._get_cursor_wrapper(db.execute_sql(sql, bound)))

    def first(self, *values):
        """The first row, or None; ``build`` limits the select to one row when more could match."""
        rows = self.rows(*values)
        return rows[0] if rows else None


class KeptSelectIn:
    """A select whose one varying part is an ``IN`` list (the hits of a search), kept as a ``KeptSelect`` for
    each length of the list: callers bound the length (a search's limit), and with it the SQL texts kept."""

    def __init__(self, build: Callable[[list], Node]):
        self._build = build
        self._by_length: dict[int, KeptSelect] = {}

    def rows(self, values) -> list:
        values = list(values)
        if not values:  # peewee writes an empty IN as "0 = 1": no rows
            return []
        kept = self._by_length.get(len(values))
        if kept is None:
            kept = self._by_length.setdefault(
                len(values), KeptSelect(lambda *placeholders: self._build(list(placeholders)), arity=len(values))
            )
        return kept.rows(*values)


def locking(query, shared: bool = False):
    """``query`` taking its rows' write lock until the transaction ends, so a writer that reads, decides and
    then writes waits for another one doing the same and sees what it wrote: PostgreSQL's ``FOR UPDATE``
    (its READ COMMITTED reads of the second writer see the first one's commit). SQLite needs nothing:
    every transaction begins IMMEDIATE and holds the whole database (module docstring).

    ``shared``: ``FOR SHARE``, for a writer that only needs the rows to stay as read (not changed or
    deleted) until it commits; several such writers do not wait for each other."""
    if not database().for_update:
        return query
    return query.for_update("FOR SHARE" if shared else True)


@contextmanager
def one_snapshot() -> Iterator[None]:
    """Reads that see the database as of one moment however many statements they take (a page's rows and
    their count), another connection's commit in between seen by none of them: a reading transaction.

    SQLite's deferred transaction reads one snapshot from its first read on and takes no write lock, so
    no writer's turn either. PostgreSQL's default, READ COMMITTED, gives each statement a snapshot of its
    own; REPEATABLE READ gives the transaction one. Inside a transaction already, the reads are that
    transaction's.
    """
    db = database()
    if db.in_transaction():
        yield
        return
    if isinstance(_engine(), SqliteDatabase):
        with db.atomic("DEFERRED"):
            yield
    else:
        with db.atomic(isolation_level="REPEATABLE READ"):
            yield
