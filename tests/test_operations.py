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
from portal.documents import editing, services
from portal.models import Pack
from portal.search.service import indexes, search_packs

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def test_every_setting_is_documented():
    operations = (DOCS / "operations.md").read_text()
    missing = [s.name for s in SETTINGS if f"`{s.name}`" not in operations]
    assert not missing, f"document these settings in docs/operations.md: {missing}"


def test_the_jvm_heap_setting_is_checked_at_start_and_reaches_the_jvm(tmp_path, monkeypatch):
    from portal import create_app
    from portal.config import ConfigError, environment_settings
    from portal.search import jvm

    base = {"CAIRN_DATA_DIR": str(tmp_path / "d"), "SECRET_KEY": "x", "DATABASE_URL": POSTGRES_URL or None}
    with pytest.raises(ConfigError, match="CAIRN_JVM_HEAP: '1 GB' is not a Java memory size"):
        create_app({**base, "CAIRN_JVM_HEAP": "1 GB"})
    monkeypatch.setenv("CAIRN_JVM_HEAP", "-Xmx2g")
    with pytest.raises(ConfigError, match="CAIRN_JVM_HEAP: '-Xmx2g'"):
        environment_settings()
    monkeypatch.setenv("CAIRN_JVM_HEAP", "1536m")
    assert environment_settings()["CAIRN_JVM_HEAP"] == "1536m"
    monkeypatch.delenv("CAIRN_JVM_HEAP")
    create_app({**base, "CAIRN_JVM_HEAP": "768m"})
    assert jvm._configured_heap == "768m"  # a JVM started by this process from now on gets -Xmx768m
    assert jvm._jvm_options("768m", (21,))[0] == "-Xmx768m"


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
            # Two workers each start the app (and a JVM) on a busy machine: a slow first answer is not a
            # failure, only the deadline is.
            with urllib.request.urlopen(url, timeout=60) as response:
                return response.headers.get_all("Set-Cookie") or []
        except (ConnectionError, urllib.error.URLError, TimeoutError):
            if server.poll() is not None:
                raise AssertionError(f"the server exited with {server.returncode}; see server.log") from None
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)  # polling until the port answers, not waiting a fixed time


def test_the_procfile_serves_secure_cookies(tmp_path):
    """Run the Procfile's own web command line as a platform does (sh -c, $PORT), and read the login page."""
    port = _free_port()
    env = {
        **os.environ,
        "PORT": str(port),
        "CAIRN_DATA_DIR": str(tmp_path / "data"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),
    }
    for name in ("CAIRN_SECURE_COOKIES", "DATABASE_URL", "CAIRN_ADMIN_EMAIL", "CAIRN_ADMIN_PASSWORD"):
        env.pop(name, None)
    log = (tmp_path / "server.log").open("w")
    server = subprocess.Popen(
        ["sh", "-c", _procfile_command("web")],
        cwd=ROOT,
        env=env,
        start_new_session=True,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        cookies = _set_cookies_once_listening(f"http://127.0.0.1:{port}/login", server)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(60)
        log.close()
    session = [c for c in cookies if c.startswith("session=")]
    assert session, cookies
    assert "; Secure" in session[0] and "HttpOnly" in session[0]


def _lose_index_writes(monkeypatch):
    """Every index write fails, as if the process had been killed right after its database commit."""
    from portal.search.errors import SearchError
    from portal.search.index import IndexStore

    def killed(self, pack_slug, plan):
        raise SearchError("killed before the index was written")

    monkeypatch.setattr(IndexStore, "update", killed)


def test_a_change_committed_while_a_rebuild_holds_the_pack_is_indexed_when_the_rebuild_ends(app, pack, monkeypatch):
    """An upload committed while a long rebuild (``cairn index rebuild``, a worker's repair at start) holds the
    pack's write lock waits for it, gives up after the lock wait and leaves its pending row. The rebuild wrote
    only what it read before, so the document stayed unsearchable until some later write to the pack or a
    restart. The rebuild indexes what was committed meanwhile before it ends."""
    from portal.models import PendingIndexUpdate
    from portal.search import service as search_service
    from portal.search.index import IndexStore

    services.upload_file(pack, "a.md", b"# A\n\nThe spool overflow runbook.\n", None)
    read_by_the_rebuild = search_service.current_passages
    # The other process: its own store, which meets the rebuild's write.lock (this one's thread lock would wait).
    other_process = IndexStore(indexes().root, lock_timeout=0.2)
    uploaded = []

    def passages_then_another_admins_upload(read_pack, doc_ids=None):
        yield from read_by_the_rebuild(read_pack, doc_ids)
        if doc_ids is None and not uploaded:
            rebuilding_store, indexes()._store = indexes().store, other_process
            try:
                uploaded.append(services.upload_file(pack, "b.md", b"# B\n\nCertificate expiry in STRUST.\n", None))
                assert PendingIndexUpdate.select().count() == 1  # its own catch-up gave up waiting
            finally:
                indexes()._store = rebuilding_store
                other_process.close()

    monkeypatch.setattr(search_service, "current_passages", passages_then_another_admins_upload)
    search_service.rebuild_pack(Pack.get_by_id(pack.id))

    assert uploaded[0].accepted
    assert [h.document_id for h in search_packs([pack], "STRUST").hits] == ["b"]
    assert [h.document_id for h in search_packs([pack], "spool").hits] == ["a"]
    assert PendingIndexUpdate.select().count() == 0
    assert indexes().store.generation("ops") == Pack.get_by_id(pack.id).index_generation


def test_a_change_whose_index_write_was_lost_is_indexed_by_the_next_write_to_the_pack(app, pack, monkeypatch):
    from portal.models import PendingIndexUpdate

    services.upload_file(pack, "a.md", b"# A\n\nThe spool overflow runbook.\n", None)
    with monkeypatch.context() as patch:
        _lose_index_writes(patch)
        services.upload_file(pack, "b.md", b"# B\n\nCertificate expiry in STRUST.\n", None)
    assert search_packs([pack], "STRUST").no_evidence
    assert [row.doc_id for row in PendingIndexUpdate.select()] == ["b"]

    services.upload_file(pack, "c.md", b"# C\n\nLock entries in SM12.\n", None)  # stamps the newest generation

    assert [h.document_id for h in search_packs([pack], "STRUST").hits] == ["b"]
    assert [h.document_id for h in search_packs([pack], "SM12").hits] == ["c"]
    assert PendingIndexUpdate.select().count() == 0
    assert indexes().store.generation("ops") == Pack.get_by_id(pack.id).index_generation


def test_a_change_whose_index_write_was_lost_is_indexed_at_the_next_start(app, pack, monkeypatch):
    services.upload_file(pack, "a.md", b"# A\n\nThe spool overflow runbook.\n", None)
    with monkeypatch.context() as patch:
        _lose_index_writes(patch)
        document = services.upload_file(pack, "b.md", b"# B\n\nCertificate expiry in STRUST.\n", None).document
        services.upload_file(pack, "a.md", b"# A\n\nThe spool overflow runbook, second edition.\n", None)
        editing.delete_document(services.Document.get(services.Document.doc_id == "a"), 2)
        assert services.upload_file(pack, "b.md", b"# B\n\nCertificate expiry in STRUST.\n", None).unchanged
    assert search_packs([pack], "STRUST").no_evidence

    repair_indexes_at_start(app, check_every_index=False)  # what every `cairn` command does first

    assert [h.document_id for h in search_packs([pack], "STRUST").hits] == [document.doc_id]
    assert search_packs([pack], "spool").no_evidence
    assert indexes().store.generation("ops") == Pack.get_by_id(pack.id).index_generation


def test_an_index_older_than_its_pending_work_explains_is_rebuilt(app, pack):
    """An index restored from an old backup: no pending row accounts for the generations it lacks."""
    services.upload_file(pack, "a.md", b"# A\n\nThe spool overflow runbook.\n", None)
    indexes().store.write("ops", delete_documents=["a"], generation=0)  # as it was before "a"
    assert search_packs([pack], "spool").no_evidence

    repair_indexes_at_start(app)

    assert [h.document_id for h in search_packs([pack], "spool").hits] == ["a"]


def test_a_new_packs_first_index_is_built_quietly_and_a_lost_one_is_reported(app, pack, caplog):
    """Building a pack's first index is routine; an index behind its database is news for the operator."""
    import shutil

    from portal.search.service import batched_index_updates

    with caplog.at_level("WARNING", logger="portal.search.service"), batched_index_updates():
        services.upload_file(pack, "a.md", b"# A\n\nThe spool overflow runbook.\n", None)
    assert [h.document_id for h in search_packs([pack], "spool").hits] == ["a"]
    assert "rebuilding it" not in caplog.text

    indexes().close()
    shutil.rmtree(Path(app.config["CAIRN_DATA_DIR"]) / "indexes" / "ops")
    with caplog.at_level("WARNING", logger="portal.search.service"):
        repair_indexes_at_start(app)
    assert "index of pack ops shows generation None, the database is at 1: rebuilding it" in caplog.text
    assert [h.document_id for h in search_packs([pack], "spool").hits] == ["a"]


def test_the_sweep_keeps_named_files_leaves_unnoted_folders_and_waits_for_running_transactions(app, pack):
    """A killed transaction's note names the folders it wrote; only unnamed files there are swept."""
    from portal import storage

    kept = services.upload_file(pack, "a.docx", _word_file_with_a_figure(), None)
    assert kept.revision.original_path and kept.images_kept == 1
    named = _files_on_disk(app)
    killed = storage.FileChanges(Path(app.config["CAIRN_DATA_DIR"]) / storage.NOTES_FOLDER / "4242-killed")
    killed.write("packs/1/documents/99/v1/figure-1.webp", b"left by a killed upload")
    killed.touches(str(Path(kept.revision.original_path).parent))  # a folder it noted but never changed
    storage.write("packs/1/documents/77/v1/original.md", b"no note names it: not the sweep's to judge")

    with storage.changing():  # another upload is between writing its files and committing
        repair_indexes_at_start(app, check_every_index=False)
        assert "packs/1/documents/99/v1/figure-1.webp" in _files_on_disk(app)

    repair_indexes_at_start(app, check_every_index=False)

    assert _files_on_disk(app) == named | {"packs/1/documents/77/v1/original.md"}
    assert not (storage.files_root() / "packs" / "1" / "documents" / "99").exists()
    assert not any((Path(app.config["CAIRN_DATA_DIR"]) / storage.NOTES_FOLDER).iterdir())


def _files_on_disk(app) -> set[str]:
    root = Path(app.config["CAIRN_DATA_DIR"]) / "files"
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def _word_file_with_a_figure() -> bytes:
    from resources.make_fixtures import add_picture, docx_bytes, image_bytes

    def build(document):
        document.add_paragraph("The message path of the spool service.")
        add_picture(document, image_bytes(96, 64), alt="Message path")

    return docx_bytes(build)


def test_upgrading_to_the_pending_index_work_rebuilds_indexes_an_old_crash_may_have_left_short(app, pack):
    """Before migrations/0007 a killed ingest could leave an index stamped current but missing documents."""
    import importlib.util

    from portal.migrate import MIGRATIONS_DIR

    spec = importlib.util.spec_from_file_location("migration_0007", MIGRATIONS_DIR / "0007_index_pending.py")
    migration = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(migration)
    services.upload_file(pack, "a.md", b"# A\n\nThe spool overflow runbook.\n", None)
    indexes().store.write("ops", delete_documents=["a"], generation=Pack.get_by_id(pack.id).index_generation)
    app.config["DATABASE"].execute_sql(migration.REBUILD_EVERY_INDEX)

    repair_indexes_at_start(app)

    assert [h.document_id for h in search_packs([pack], "spool").hits] == ["a"]


def test_many_pending_documents_are_caught_up_by_one_rebuild(app, pack, monkeypatch):
    monkeypatch.setattr("portal.search.service.REBUILD_ABOVE_DOCUMENTS", 2)
    services.upload_file(pack, "first.md", b"# First\n\nThe deltazulu checklist.\n", None)
    with monkeypatch.context() as patch:
        _lose_index_writes(patch)
        for word in ("alpha", "bravo", "charlie"):
            services.upload_file(pack, f"{word}.md", f"# {word}\n\nThe {word}zulu checklist.\n".encode(), None)
    update, written = type(indexes().store).update, []

    def recording(self, slug, plan):
        written.append(update(self, slug, plan))
        return written[-1]

    monkeypatch.setattr(type(indexes().store), "update", recording)

    repair_indexes_at_start(app, check_every_index=False)

    assert [change.replace_all for change in written] == [True]
    for word in ("alpha", "bravo", "charlie"):
        assert [h.document_id for h in search_packs([pack], f"{word}zulu").hits] == [word]
    assert [h.document_id for h in search_packs([pack], "deltazulu").hits] == ["first"]


def test_a_rebuild_reads_the_pack_a_few_documents_at_a_time(app, pack, monkeypatch):
    """A million-passage pack is not read in one query (PostgreSQL's driver would hold it all in memory)."""
    from portal.models import Document
    from portal.search.service import current_passages, rebuild_pack

    monkeypatch.setattr("portal.search.service.DOCUMENTS_PER_READ", 2)
    for word in ("alpha", "bravo", "charlie", "delta", "echo"):
        services.upload_file(pack, f"{word}.md", f"# {word}\n\nThe {word}zulu checklist.\n".encode(), None)
    services.upload_file(pack, "alpha.md", b"# alpha\n\nThe alphayankee checklist.\n", None)  # a newer revision
    charlie = Document.get((Document.pack == pack) & (Document.doc_id == "charlie"))
    editing.delete_document(charlie, charlie.current_version)

    assert [p.document_id for p in current_passages(pack)] == ["alpha", "bravo", "delta", "echo"]
    assert rebuild_pack(Pack.get_by_id(pack.id)) == 4
    for word in ("bravo", "delta", "echo"):
        assert [h.document_id for h in search_packs([pack], f"{word}zulu").hits] == [word]
    assert [h.document_id for h in search_packs([pack], "alphayankee").hits] == ["alpha"]
    assert search_packs([pack], "alphazulu").hits == []
    assert search_packs([pack], "charliezulu").hits == []
