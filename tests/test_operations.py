"""Operations: SQLite settings, settings documented, index repair at start."""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from helpers import POSTGRES_URL
from portal import repair_indexes_at_start
from portal.config import SETTINGS
from portal.documents import services
from portal.models import Pack
from portal.search.service import indexes, search_packs

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def test_every_setting_is_documented():
    operations = (DOCS / "operations.md").read_text()
    missing = [s.name for s in SETTINGS if f"`{s.name}`" not in operations]
    assert not missing, f"document these settings in docs/operations.md: {missing}"


@pytest.mark.skipif(bool(POSTGRES_URL), reason="SQLite-only checks")
def test_sqlite_is_wal_synchronous_full_and_private(app):
    db = app.config["DATABASE"]
    assert db.execute_sql("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute_sql("PRAGMA synchronous").fetchone()[0] == 2
    path = Path(app.config["CAIRN_DATA_DIR"]) / "cairn.db"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_postgres_when_a_test_database_is_given(app):
    if not POSTGRES_URL:
        pytest.skip("set CAIRN_TEST_DATABASE_URL=postgresql://… to run the suite on PostgreSQL (.ci/run does)")
    assert type(app.config["DATABASE"]).__name__.startswith("Postgres")


def test_missing_or_lagging_index_is_repaired_at_start(app, pack, other_pack):
    services.upload_file(pack, "a.md", b"# A\n\nThe spool overflow runbook.\n", None)
    services.upload_file(other_pack, "b.md", b"# B\n\nCertificate expiry in STRUST.\n", None)
    store = indexes().store
    store.drop("ops")  # missing
    Pack.update(index_generation=Pack.index_generation + 5).where(Pack.slug == "other").execute()  # behind
    assert store.generation("ops") is None
    assert store.generation("other") != Pack.get(Pack.slug == "other").index_generation
    indexes().close()
    repair_indexes_at_start(app)
    assert indexes().store.generation("ops") == Pack.get(Pack.slug == "ops").index_generation
    assert indexes().store.generation("other") == Pack.get(Pack.slug == "other").index_generation
    assert [h.document_id for h in search_packs([pack], "spool").hits] == ["a"]
    assert [h.document_id for h in search_packs([other_pack], "STRUST").hits] == ["b"]


def _procfile_command(process: str) -> str:
    for line in (ROOT / "Procfile").read_text().splitlines():
        name, _, command = line.partition(":")
        if name.strip() == process:
            return command.strip()
    raise AssertionError(f"no {process} process in the Procfile")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _set_cookies_once_listening(url: str, server: subprocess.Popen, deadline_s: float = 120) -> list[str]:
    """The Set-Cookie headers of ``url`` once the server listens; fails if the server exits first."""
    deadline = time.monotonic() + deadline_s
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return response.headers.get_all("Set-Cookie") or []
        except (ConnectionError, urllib.error.URLError):
            if server.poll() is not None:
                raise AssertionError(f"the server exited with {server.returncode}; see server.log") from None
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)  # polling until the port answers, not waiting a fixed time


def test_the_procfile_serves_secure_cookies(tmp_path):
    """Run the Procfile's own web command line as a platform does (sh -c, $PORT), and read the login page."""
    port = _free_port()
    env = {**os.environ, "PORT": str(port), "CAIRN_DATA_DIR": str(tmp_path / "data"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": str(ROOT)}
    for name in ("CAIRN_SECURE_COOKIES", "DATABASE_URL", "CAIRN_ADMIN_EMAIL", "CAIRN_ADMIN_PASSWORD"):
        env.pop(name, None)
    log = (tmp_path / "server.log").open("w")
    server = subprocess.Popen(["sh", "-c", _procfile_command("web")], cwd=ROOT, env=env, start_new_session=True,
                              stdout=log, stderr=subprocess.STDOUT)
    try:
        cookies = _set_cookies_once_listening(f"http://127.0.0.1:{port}/login", server)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(60)
        log.close()
    session = [c for c in cookies if c.startswith("session=")]
    assert session, cookies
    assert "; Secure" in session[0] and "HttpOnly" in session[0]
