"""Helpers shared by the tests (fixtures live in conftest.py)."""

from __future__ import annotations

import io
import os
import re
import sqlite3
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

import pytest
from flask.testing import FlaskClient
from werkzeug.serving import make_server

SHARED_DIR = Path(os.environ.get("CAIRN_SHARED_DIR") or Path(__file__).resolve().parents[2] / "shared")
FIXTURES_DIR = SHARED_DIR / "fixtures" / "uploads"


def require_shared_fixtures(allow_module_level: bool = False) -> None:
    """Skip a test that needs ../shared/fixtures when it is missing, on a developer's machine only.

    Under CI=true a missing folder fails instead: silently skipped, it would hide some
    eighty tests of real files.
    """
    if (FIXTURES_DIR / "MANIFEST.tsv").is_file():
        return
    message = f"upload fixtures not found at {FIXTURES_DIR} (set CAIRN_SHARED_DIR)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message}; CI must run the tests of real files", pytrace=False)
    pytest.skip(message, allow_module_level=allow_module_level)


PASSWORD = "correct horse battery"
ROLES = ("PlatformAdmin", "AgentBuilder", "Auditor", "Member")
POSTGRES_URL = os.environ.get("CAIRN_TEST_DATABASE_URL")

# Two small runbooks the answer, chat and feedback tests ask about.
SPOOL = b"""# Spool overflow runbook

## Symptoms

Output requests pile up and SP01 shows thousands of entries.

## Fix

Run the report RSPO1041 to delete old spool requests.
Then check the TemSe consistency in SP12.
"""

LOCKS = b"""# Lock entries runbook

## Fix

Delete stale lock entries in SM12 only after checking that the owner's session is gone.
"""


def fresh_postgres(url: str) -> None:
    """An empty database with every migration applied, as ``migrate`` would leave a new one. When the
    schema is already fully migrated (the previous test's), its tables are emptied (a few milliseconds)
    instead of dropped and migrated again (half a second a test, a third of the suite's time on
    PostgreSQL); any other schema (a migration test's partial one) is dropped and ``migrate`` rebuilds it."""
    from playhouse.db_url import connect

    from portal.migrate import HISTORY_TABLE, runner

    db = connect(url)
    try:
        tables = set(db.get_tables())
        if HISTORY_TABLE in tables:
            applied = sorted(row[0] for row in db.execute_sql(f"SELECT name FROM {HISTORY_TABLE}"))
            if applied == sorted(m.name for m in runner(db).migrations()):
                # DELETE, not TRUNCATE: a test leaves a few rows, and TRUNCATE's new files cost 10 ms a table.
                # Foreign keys are not checked meanwhile (replica role), and every id sequence starts again.
                sequences = [row[0] for row in db.execute_sql("SELECT relname FROM pg_class WHERE relkind = 'S'")]
                db.execute_sql(
                    "SET session_replication_role = replica;"
                    + "".join(f'DELETE FROM "{table}";' for table in sorted(tables - {HISTORY_TABLE}))
                    + "SET session_replication_role = DEFAULT;"
                    + "".join(f"SELECT setval('\"{sequence}\"', 1, false);" for sequence in sequences)
                )
                db.commit()
                return
        db.execute_sql("DROP SCHEMA IF EXISTS public CASCADE")
        db.execute_sql("CREATE SCHEMA public")
    finally:
        db.close()


_sqlite_template: list[Path] = []


def copy_of_migrated_sqlite(target: Path) -> None:
    """``target`` as a migrated, empty SQLite database: a copy (SQLite's backup) of one migrated once per test
    session, instead of running every migration for every test (0.1–0.3 s each)."""
    from portal.db import open_database
    from portal.migrate import migrate

    if not _sqlite_template:
        template = Path(tempfile.mkdtemp(prefix="cairn-migrated-")) / "cairn.db"
        db = open_database(f"sqlite:///{template}")
        migrate(db)
        getattr(db, "close_all", db.close)()
        _sqlite_template.append(template)
    target.parent.mkdir(parents=True, exist_ok=True)
    source, copy = sqlite3.connect(_sqlite_template[0]), sqlite3.connect(target)
    try:
        source.backup(copy)
    finally:
        copy.close()
        source.close()
    target.chmod(0o600)


def empty_postgres(url: str) -> None:
    from playhouse.db_url import connect

    db = connect(url)
    db.execute_sql("DROP SCHEMA IF EXISTS public CASCADE")
    db.execute_sql("CREATE SCHEMA public")
    db.close()


def login(client, email: str, password: str = PASSWORD):
    return client.post("/login", data={"email": email, "password": password})


def upload(client, slug: str, name: str, data: bytes, content_type: str = "text/markdown", **headers):
    return client.post(
        f"/packs/{slug}/documents",
        data={"files": (io.BytesIO(data), name, content_type)},
        content_type="multipart/form-data",
        headers=headers,
    )


def data_snapshot(app) -> dict:
    """Every file under the data folder (but the database) and every row count: to prove nothing was stored."""
    root = Path(app.config["CAIRN_DATA_DIR"])
    files = sorted(
        str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and not re.match(r"cairn\.db", p.name)
    )
    from portal.models import ALL_MODELS, Pack

    counts = {m.__name__: m.select().count() for m in ALL_MODELS}
    generations = {p.slug: p.index_generation for p in Pack.select()}
    return {"files": files, "rows": counts, "generations": generations}


def make_index_unreadable(app, slug: str) -> None:
    """Overwrite every commit of the pack's indexes with bytes Lucene cannot read: a real failed search."""
    commits = list((Path(app.config["CAIRN_DATA_DIR"]) / "indexes" / slug).glob("*/segments_*"))
    assert commits, f"pack {slug} has no index yet"
    for commit in commits:
        commit.write_bytes(b"not a lucene commit")


def signed_in_client(app, user, password: str = PASSWORD):
    """A test client signed in as ``user`` (for users made in a test, beside the per-role ``client_as``)."""
    client = app.test_client()
    response = login(client, user.email, password)
    assert response.status_code == 302, response.data
    return client


def cli_runner(app):
    """Run a `cairn` command in process against ``app`` (Flask's CLI runner): ``run(*args, stdin=, ok=)``.

    The result carries ``exit_code`` (also as ``returncode``, the name subprocess results use),
    ``stdout`` and ``stderr``; an exception other than the command's own exit is raised.
    """
    from portal.cli import main

    runner = app.test_cli_runner()

    def run(*args: str, stdin: str | None = None, ok: bool = True):
        result = runner.invoke(main, list(args), input=stdin)
        if result.exception and not isinstance(result.exception, SystemExit):
            raise result.exception
        result.returncode = result.exit_code
        if ok:
            assert result.exit_code == 0, result.stderr + result.stdout
        return result

    return run


class BodyClosingClient(FlaskClient):
    """Flask's test client, closing the body of each request it sent, and each file it was sent, once
    the response is back.

    Werkzeug writes a multipart body of 500 KB or more to a temporary file and closes it only
    through ``response.close()`` after followed redirects (``Client.open``); tests do not close
    responses, so the file's ResourceWarning would fail some later test (``filterwarnings = error``).
    """

    def open(self, *args, **kwargs):
        response = super().open(*args, **kwargs)
        response.request.input_stream.close()
        # A file sent from disk (send_file) is streamed: read it into memory, as tests read it anyway,
        # and close the file, as the WSGI server does after the last byte.
        if response.is_streamed:
            response.make_sequence()
            response.close()
        return response


@contextmanager
def migrated_app(data_dir: Path, **settings):
    """A Cairn app on a migrated, empty database (PostgreSQL when CAIRN_TEST_DATABASE_URL is set), its context
    pushed."""
    from flask import g

    from portal import create_app
    from portal.migrate import migrate

    if POSTGRES_URL:
        fresh_postgres(POSTGRES_URL)
    elif "DATABASE_URL" not in settings:
        copy_of_migrated_sqlite(data_dir / "cairn.db")
    app = create_app(
        {
            "CAIRN_DATA_DIR": str(data_dir),
            "DATABASE_URL": POSTGRES_URL or None,
            "SECRET_KEY": "test-secret",
            "CAIRN_REPAIR_INDEX_ON_START": False,
            "TESTING": True,
            "WTF_CSRF_ENABLED": False,
            **settings,
        }
    )

    app.test_client_class = BodyClosingClient

    # Requests from the test client reuse this pushed app context, and with it
    # ``g``: forget the signed-in user between requests, as a real server does.
    @app.before_request
    def forget_signed_in_user():
        g.pop("_login_user", None)

    with app.app_context():
        migrate(app.config["DATABASE"])
        yield app
        app.extensions["cairn_indexes"].close()
        app.config["DATABASE"].close()


def _closed_before_sending(app):
    """``app`` with each response body read whole and closed before the server sends a byte.

    werkzeug's development server closes a response only after draining the request socket, in the same
    ``finally``; when the browser resets the connection (a page closed while its favicon was requested),
    that read raises first, the static file stays open, and whichever test is running fails on the
    unraisable ResourceWarning. No page of the portal streams, so reading the body first costs nothing.
    """

    def wsgi(environ, start_response):
        body = app(environ, start_response)
        try:
            return [b"".join(body)]
        finally:
            if hasattr(body, "close"):
                body.close()

    return wsgi


def serve_in_thread(app):
    """Serve ``app`` on 127.0.0.1 from a thread of this process (the JVM and the database are shared); yield its URL."""
    server = make_server("127.0.0.1", 0, _closed_before_sending(app), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join(5)
    server.server_close()


def template_lines_matching(pattern: re.Pattern) -> list[str]:
    """Every line of the templates that ``pattern`` finds, as ``path:number: line`` (for the tests that keep
    a fact out of the templates, where only its owner may write it)."""
    templates = Path(__file__).resolve().parent.parent / "templates"
    return [
        f"{path.relative_to(templates.parent)}:{number}: {line.strip()}"
        for path in sorted(templates.rglob("*.html"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]


@contextmanager
def statements_run(db):
    """Every SQL statement ``db`` runs meanwhile, in order (peewee sends each one through ``execute_sql``): for
    the tests that keep the queries of a page from growing with what it lists."""
    run: list[str] = []
    execute_sql = db.execute_sql

    def recorded(sql, *args, **kwargs):
        run.append(sql)
        return execute_sql(sql, *args, **kwargs)

    db.execute_sql = recorded
    try:
        yield run
    finally:
        del db.execute_sql


@contextmanager
def audit_log_refusing_writes(db, action: str | None = None):
    """The database refuses every new audit entry (of ``action`` only, if given) with a trigger, as a full disk
    or a lost connection would: what the change wrote with it must be rolled back."""
    only = f"NEW.action = '{action}'" if action else "TRUE"
    if POSTGRES_URL:
        db.execute_sql(
            "CREATE FUNCTION refuse_audit() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'audit log full'; END; "
            "$$ LANGUAGE plpgsql"
        )
        db.execute_sql(
            f"CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_log FOR EACH ROW WHEN ({only}) "
            "EXECUTE FUNCTION refuse_audit()"
        )
        undo = ("DROP TRIGGER refuse_audit ON audit_log", "DROP FUNCTION refuse_audit()")
    else:
        db.execute_sql(
            f"CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_log WHEN {only} "
            "BEGIN SELECT RAISE(ABORT, 'audit log full'); END"
        )
        undo = ("DROP TRIGGER refuse_audit",)
    try:
        yield
    finally:
        for statement in undo:
            db.execute_sql(statement)


def segment_sizes(root: Path, pack: str, partition: str = "staff") -> list[int]:
    """The number of passages in each Lucene segment of a pack's partition (a vector search costs per segment)."""
    from portal.search import jvm
    from portal.search.schema import open_directory

    with jvm.java_lock:
        directory = open_directory(root / pack / partition)
        reader = jvm.J().JDirectoryReader.open(directory)
        try:
            return [leaf.reader().maxDoc() for leaf in reader.leaves().toArray()]
        finally:
            reader.close()
            directory.close()
