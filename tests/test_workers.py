"""Several server processes on one data folder (gunicorn workers): one writer per index, each sees the others.

Each worker is a real process of its own with its own JVM (``cairn serve`` runs
several). The children here build the app on the test's data folder and
database, as a worker does, and write through the same services; the test
releases them together with a file, waits on what they report, and checks the
index and the database afterwards.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from helpers import POSTGRES_URL
from portal.documents import services
from portal.models import Document, Pack, PendingIndexUpdate
from portal.search.errors import IndexBusy
from portal.search.index import IndexStore
from portal.search.schema import IndexedPassage
from portal.search.service import catch_up as services_catch_up
from portal.search.service import indexes, search_packs

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS_EACH = 12
CHILD_DEADLINE_S = 300

# A worker: the app on the shared data folder, ready once its JVM runs; at the go file it uploads its
# documents to the same pack, says so, waits for the other worker to finish and searches for its words.
UPLOADING_WORKER = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from portal import create_app
    from portal.documents import services
    from portal.models import Pack
    from portal.search import jvm
    from portal.search.service import search_packs

    data, name, other, count, database_url = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
    signals = Path(data).parent
    app = create_app({"CAIRN_DATA_DIR": data, "DATABASE_URL": database_url or None, "SECRET_KEY": "test",
                      "CAIRN_REPAIR_INDEX_ON_START": False})
    with app.app_context():
        jvm.start()
        (signals / f"ready-{name}").touch()
        while not (signals / "go").exists():
            time.sleep(0.01)
        pack = Pack.get(Pack.slug == "ops")
        for n in range(count):
            text = f"# {name} note {n}\\n\\nThe {name}word checklist, step {n}: restart the spool service.\\n"
            services.upload_file(pack, f"{name}-{n}.md", text.encode(), None)
        (signals / f"done-{name}").touch()
        while not (signals / f"done-{other}").exists():
            time.sleep(0.01)
        found = search_packs([pack], f"{other}word", limit=50)
        print(json.dumps({"other_documents_found": sorted({h.document_id for h in found.hits})}))
    """
)

# Holds a pack's Lucene write lock, as a worker in the middle of a long write does, until told to let go.
LOCK_HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from portal.search import jvm

    index, signals = Path(sys.argv[1]), Path(sys.argv[2])
    directory = jvm.J().JFSDirectory.open(jvm.J().JFile(str(index)).toPath())
    lock = directory.obtainLock("write.lock")
    (signals / "locked").touch()
    while not (signals / "release").exists():
        time.sleep(0.01)
    lock.close()
    directory.close()
    """
)


# A worker restarted after a kill: the app on the shared data folder, ready once its JVM runs; at the go
# file it runs the start-up catch-up (what ``create_app`` runs in each gunicorn worker, or a command before
# its work), saying when it reaches the pack's index lock. Its log goes to stderr.
RESTARTED_WORKER = textwrap.dedent(
    """
    import logging, sys, time
    from pathlib import Path
    from portal import create_app, repair_indexes_at_start
    from portal.search import jvm
    from portal.search.index import IndexStore

    data, name, database_url, check_every_index = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "yes"
    signals = Path(data).parent
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    app = create_app({"CAIRN_DATA_DIR": data, "DATABASE_URL": database_url or None, "SECRET_KEY": "test",
                      "CAIRN_REPAIR_INDEX_ON_START": False})
    jvm.start()
    update = IndexStore.update

    def update_saying_so(store, pack_slug, plan):
        (signals / f"at-index-{name}").touch()
        return update(store, pack_slug, plan)

    IndexStore.update = update_saying_so
    (signals / f"ready-{name}").touch()
    while not (signals / "go").exists():
        time.sleep(0.01)
    repair_indexes_at_start(app, check_every_index=check_every_index)
    """
)


def _start(script: str, *arguments: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", script, *arguments],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for(path: Path, children: list[subprocess.Popen]) -> None:
    """Until a child reports by creating ``path``; a child that exits first fails the test with its output."""
    deadline = time.monotonic() + CHILD_DEADLINE_S
    while not path.exists():
        for child in children:
            if child.poll() is not None:
                out, err = child.communicate()
                raise AssertionError(f"a child exited with {child.returncode} before {path.name}:\n{out}\n{err}")
        assert time.monotonic() < deadline, f"no {path.name} within {CHILD_DEADLINE_S} s"
        time.sleep(0.05)  # polling for the child's signal, not waiting a fixed time


WORKER_NAMES = ("alpha", "beta")


def _release_together(signals: Path, children: list[subprocess.Popen]) -> None:
    """Once every worker has said it is ready, let them all go at once."""
    for name in WORKER_NAMES:
        _wait_for(signals / f"ready-{name}", children)
    (signals / "go").touch()


def _outputs(workers: list[subprocess.Popen]) -> list[tuple[str, str]]:
    """Each worker's standard output and error, once it has ended well."""
    outputs = []
    for worker in workers:
        out, err = worker.communicate(timeout=CHILD_DEADLINE_S)
        assert worker.returncode == 0, err
        outputs.append((out, err))
    return outputs


@pytest.mark.usefixtures("java")
def test_two_worker_processes_writing_one_pack_take_turns_and_see_each_others_documents(app, pack, tmp_path):
    data = app.config["CAIRN_DATA_DIR"]
    database_url = POSTGRES_URL or app.config["DATABASE_URL"]
    workers = [
        _start(UPLOADING_WORKER, data, "alpha", "beta", str(DOCUMENTS_EACH), database_url),
        _start(UPLOADING_WORKER, data, "beta", "alpha", str(DOCUMENTS_EACH), database_url),
    ]
    try:
        _release_together(tmp_path, workers)
        reports = []
        for out, err in _outputs(workers):
            assert "Traceback" not in err and "failed" not in err, err
            reports.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for worker in workers:
            worker.kill()

    # Each worker found every document the other one wrote, without being told to reopen anything.
    assert reports[0]["other_documents_found"] == sorted(f"beta-{n}" for n in range(DOCUMENTS_EACH))
    assert reports[1]["other_documents_found"] == sorted(f"alpha-{n}" for n in range(DOCUMENTS_EACH))
    # One index, at the database's generation, with every document once and no work left over.
    pack = Pack.get_by_id(pack.id)
    assert pack.index_generation == 2 * DOCUMENTS_EACH
    assert indexes().store.generation("ops") == pack.index_generation
    assert PendingIndexUpdate.select().count() == 0
    assert Document.select().where(Document.pack == pack).count() == 2 * DOCUMENTS_EACH
    result = search_packs([pack], "checklist spool", limit=50)
    assert len({hit.document_id for hit in result.hits}) == 2 * DOCUMENTS_EACH
    assert result.hits and len(result.hits) == 2 * DOCUMENTS_EACH


@pytest.mark.usefixtures("java")
def test_a_write_waits_for_another_process_holding_the_lock_then_fails_clearly_leaving_the_index_whole(tmp_path):
    root = tmp_path / "indexes"
    store = IndexStore(root, lock_timeout=0.5)
    store.write("ops", add=[IndexedPassage(1, "kept", "ops", "zeppelin hangar")], generation=1)
    holder = _start(LOCK_HOLDER, str(root / "ops"), str(tmp_path))
    try:
        _wait_for(tmp_path / "locked", [holder])
        started = time.monotonic()
        with pytest.raises(IndexBusy) as busy:
            store.write("ops", add=[IndexedPassage(2, "late", "ops", "zeppelin doors")], generation=2)
        assert time.monotonic() - started >= 0.5
        assert "being written by another process" in str(busy.value) and "Nothing was written" in str(busy.value)
        assert store.generation("ops") == 1
        (tmp_path / "release").touch()
        holder.communicate(timeout=CHILD_DEADLINE_S)
        assert holder.returncode == 0
    finally:
        holder.kill()
    store.write("ops", add=[IndexedPassage(2, "late", "ops", "zeppelin doors")], generation=2)
    assert store.generation("ops") == 2


@pytest.mark.usefixtures("java")
@pytest.mark.parametrize("check_every_index", [True, False], ids=["server start", "command start"])
def test_two_workers_restarted_at_once_catch_up_pending_work_once_without_a_locked_database(
    app, pack, other_pack, tmp_path, monkeypatch, check_every_index
):
    """Both workers killed mid-upload, one in each pack, and restarted: each catches up both packs at start.

    A third process holds the first pack's index until both workers wait for it, so the one that gets it
    second starts after the first has indexed the document and deleted its row.
    """
    services.upload_file(pack, "a.md", b"# A\n\nThe spool overflow runbook.\n", None)
    with monkeypatch.context() as patch:  # killed after the upload's commit, before its index write
        patch.setattr(IndexStore, "update", lambda store, slug, plan: None)
        services.upload_file(pack, "b.md", b"# B\n\nCertificate expiry in STRUST.\n", None)
        services.upload_file(other_pack, "c.md", b"# C\n\nLock entries in SM12.\n", None)
    assert sorted(row.doc_id for row in PendingIndexUpdate.select()) == ["b", "c"]
    data = app.config["CAIRN_DATA_DIR"]
    database_url = POSTGRES_URL or app.config["DATABASE_URL"]
    holder = _start(LOCK_HOLDER, str(Path(data) / "indexes" / "ops"), str(tmp_path))
    children = [holder]
    try:
        _wait_for(tmp_path / "locked", children)
        every = "yes" if check_every_index else "no"
        workers = [_start(RESTARTED_WORKER, data, name, database_url, every) for name in WORKER_NAMES]
        children += workers
        _release_together(tmp_path, children)
        for name in WORKER_NAMES:
            _wait_for(tmp_path / f"at-index-{name}", children)
        (tmp_path / "release").touch()
        logs = [err for _, err in _outputs(workers)]
        holder.communicate(timeout=CHILD_DEADLINE_S)
    finally:
        for child in children:
            child.kill()

    for log in logs:
        assert "Traceback" not in log and "database is locked" not in log and "failed" not in log, log
    # Each pack was caught up by one of them; the other found nothing left to do there.
    caught_up = [
        slug
        for log in logs
        for line in log.splitlines()
        if "search indexes caught up with the database: " in line
        for slug in line.split(": ", 2)[-1].split(", ")
    ]
    assert sorted(caught_up) == ["ops", "other"], logs
    assert PendingIndexUpdate.select().count() == 0
    for caught in (pack, other_pack):
        assert indexes().store.generation(caught.slug) == Pack.get_by_id(caught.id).index_generation
    assert [hit.document_id for hit in search_packs([pack], "STRUST").hits] == ["b"]
    assert [hit.document_id for hit in search_packs([pack], "spool").hits] == ["a"]
    assert [hit.document_id for hit in search_packs([other_pack], "SM12").hits] == ["c"]


# A worker installs its signal handlers before it imports the app, whose first search starts the JVM.
GRACEFUL_WORKER = textwrap.dedent(
    """
    import os, signal
    from portal.search import jvm

    stopping = []
    signal.signal(signal.SIGTERM, lambda number, frame: stopping.append(number))
    jvm.J().JHashMap()
    os.kill(os.getpid(), signal.SIGTERM)
    while not stopping:
        signal.pause()
    print("stopped gracefully")
    """
)


def test_a_worker_keeps_its_own_sigterm_handler_after_the_jvm_starts():
    """gunicorn stops and restarts workers with SIGTERM; the JVM must not take the signal over."""
    worker = _start(GRACEFUL_WORKER)
    out, err = worker.communicate(timeout=CHILD_DEADLINE_S)
    assert worker.returncode == 0, err
    assert out.strip() == "stopped gracefully"


@pytest.mark.parametrize(
    ("environment", "workers"), [({"WEB_CONCURRENCY": None}, "2"), ({"WEB_CONCURRENCY": "3"}, "3")]
)
def test_cairn_serve_runs_worker_processes_that_each_load_the_app_after_the_fork(monkeypatch, environment, workers):
    from click.testing import CliRunner

    from portal.cli import server

    started = []
    monkeypatch.setattr(server.os, "execvp", lambda program, arguments: started.append(arguments))
    result = CliRunner().invoke(server.serve, [], env=environment)
    assert result.exit_code == 0, result.output
    [arguments] = started
    assert arguments[arguments.index("--workers") + 1] == workers
    assert arguments[arguments.index("--threads") + 1] == str(server.DEFAULT_THREADS)
    assert "--preload" not in arguments and arguments[-1] == "app:app"


@pytest.mark.usefixtures("java")
def test_a_catch_up_finding_the_index_busy_leaves_its_work_listed_with_a_warning_not_a_traceback(
    app, pack, tmp_path, monkeypatch, caplog
):
    """Another worker rebuilding a large pack holds its lock past the wait: this one leaves the pack to it."""
    with monkeypatch.context() as patch:  # killed after the upload's commit, before its index write
        patch.setattr(IndexStore, "update", lambda store, slug, plan: None)
        services.upload_file(pack, "b.md", b"# B\n\nCertificate expiry in STRUST.\n", None)
    holder = _start(LOCK_HOLDER, str(Path(app.config["CAIRN_DATA_DIR"]) / "indexes" / "ops"), str(tmp_path))
    try:
        _wait_for(tmp_path / "locked", [holder])
        monkeypatch.setattr(indexes().store, "lock_timeout", 0.3)
        with caplog.at_level("WARNING", logger="portal.search.service"):
            assert services_catch_up(pack) is None
        (tmp_path / "release").touch()
        holder.communicate(timeout=CHILD_DEADLINE_S)
    finally:
        holder.kill()
    [record] = [r for r in caplog.records if r.name == "portal.search.service"]
    assert record.levelname == "WARNING" and record.exc_info is None
    assert "being written by another process" in record.getMessage() and "stay listed" in record.getMessage()
    assert [row.doc_id for row in PendingIndexUpdate.select()] == ["b"]
    monkeypatch.undo()
    assert services_catch_up(pack) is not None  # the next attempt writes it
    assert PendingIndexUpdate.select().count() == 0
