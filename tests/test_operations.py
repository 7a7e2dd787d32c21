"""Operations: SQLite settings, settings documented, index repair at start."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from helpers import POSTGRES_URL
from portal import repair_indexes_at_start
from portal.config import SETTINGS
from portal.documents import services
from portal.models import Pack
from portal.search.service import indexes, search_packs

DOCS = Path(__file__).resolve().parents[1] / "docs"


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
