"""`cairn sync PACK FOLDER`: a pack kept in step with a real folder tree of a few hundred files.

In process through Flask's CLI runner for the behaviour, and as a real `cairn` subprocess
killed with SIGKILL half way for the crash-safety: the next run finishes the job.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from helpers import POSTGRES_URL, cli_runner, empty_postgres
from portal.documents.editing import edit_text
from portal.documents.services import upload_file
from portal.ingest import limits
from portal.models import Document, Pack, Revision
from portal.search.service import search_packs

CAIRN = [sys.executable, "-m", "portal.cli"]
WORKTREE = Path(__file__).resolve().parents[1]
TOPICS = ("spool", "queue", "backup", "printer", "transport", "batch")


def word(number: int) -> str:
    """A word of the file's own, letters only, the same length for every file."""
    return "sy" + "".join("bcdfghjklm"[int(d)] for d in f"{number:03d}") + "zq"


def make_tree(root: Path, count: int = 300) -> dict[str, str]:
    """``count`` Markdown and text files in nested folders, plus what sync must skip; path → its word."""
    files = {}
    for number in range(count):
        folder = root / TOPICS[number % len(TOPICS)] / f"part-{number % 4}"
        folder.mkdir(parents=True, exist_ok=True)
        suffix = ".md" if number % 3 else ".txt"
        path = folder / f"note-{number:03d}{suffix}"
        path.write_text(f"# Note {number}\n\nThe {word(number)} job runs nightly.\n", encoding="utf-8")
        files[path.relative_to(root).as_posix()] = word(number)
    for skipped in (".git/notes.md", "node_modules/pkg/readme.md", "build/out.md", "vendor/lib.md", ".hidden.md"):
        (root / skipped).parent.mkdir(parents=True, exist_ok=True)
        (root / skipped).write_text("# Skipped\n\nThe skipzz word must never be indexed.\n")
    (root / "linked.md").symlink_to("/etc/hostname")
    return files


@pytest.fixture
def run(app):
    return cli_runner(app)


def synced(pack) -> dict[str, Document]:
    return {d.source_path: d for d in Document.select().where((Document.pack == pack) & Document.deleted_at.is_null())}


def test_a_tree_is_added_then_left_alone_then_followed(app, run, pack, tmp_path):
    root = tmp_path / "tree"
    files = make_tree(root)
    first = run("sync", "ops", str(root), "--json")
    report = json.loads(first.stdout)
    assert report["summary"] == {
        "added": 300,
        "updated": 0,
        "unchanged": 0,
        "removed": 0,
        "refused": 0,
        "conflict": 0,
    }
    documents = synced(pack)
    assert set(documents) == set(files)  # hidden, build, vendor, node_modules, .git and the link skipped
    assert not search_packs([pack], "skipzz").hits
    hit = search_packs([pack], word(123)).hits[0]
    assert documents["printer/part-3/note-123.txt"].doc_id == hit.document_id == "printer-part-3-note-123"
    assert all(d.source_folder == str(root.resolve()) and d.synced_version == 1 for d in documents.values())

    again = run("sync", "ops", str(root))
    assert again.stdout.strip().endswith("0 added, 0 updated, 300 unchanged, 0 removed, 0 refused, 0 conflict")
    assert Revision.select().count() == 300  # nothing stored twice

    (root / "spool/part-0/note-000.txt").write_text("# Note 0\n\nThe syrenamedzq job moved.\n")  # changed
    (root / "queue/part-1/note-001.md").rename(root / "queue/part-1/renamed-001.md")  # renamed
    (root / "backup/part-2/note-002.md").unlink()  # deleted
    (root / "printer/part-3/note-003.txt").write_bytes(b"a" * (limits.MAX_FILE_BYTES + 1))  # now over the limit
    (root / "new").mkdir()
    (root / "new/fresh.md").write_text("# Fresh\n\nThe syfreshzq arrives.\n")
    third = run("sync", "ops", str(root), ok=False)
    assert third.exit_code == 1  # something was refused
    lines = third.stdout.splitlines()
    assert "spool/part-0/note-000.txt: updated spool-part-0-note-000 v2" in lines
    assert "queue/part-1/renamed-001.md: added queue-part-1-renamed-001 v1" in lines
    assert "new/fresh.md: added new-fresh v1" in lines
    assert "queue/part-1/note-001.md: removed queue-part-1-note-001 v1" in lines
    assert "backup/part-2/note-002.md: removed backup-part-2-note-002 v1" in lines
    refused = next(line for line in lines if line.startswith("printer/part-3/note-003.txt: refused"))
    assert "(too_large)" in refused
    assert lines[-1] == "2 added, 1 updated, 296 unchanged, 2 removed, 1 refused, 0 conflict"
    # The refused file's document keeps its last good revision, and sync tries it again next time.
    kept = Document.get(Document.doc_id == "printer-part-3-note-003")
    assert kept.current_version == 1 and word(3) in kept.current_revision().text
    assert search_packs([pack], "syrenamedzq").hits[0].document_id == "spool-part-0-note-000"
    assert not search_packs([pack], word(2)).hits
    assert Document.get(Document.doc_id == "backup-part-2-note-002").is_deleted


def test_documents_from_elsewhere_are_never_touched(app, run, pack, users, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    for folder in (one, two):
        folder.mkdir()
    (one / "shared-name.md").write_text("# From one\n\nThe syonezq text.\n")
    (two / "other.md").write_text("# From two\n\nThe sytwozq text.\n")
    (two / "by-hand.md").write_text("# Clash\n\nThe syclashzq text.\n")
    upload_file(pack, "by-hand.md", b"# By hand\n\nThe syhandzq text.\n", users["PlatformAdmin"])
    run("sync", "ops", str(one))
    result = run("sync", "ops", str(two), ok=False)
    assert result.exit_code == 1
    assert (
        "by-hand.md: refused by-hand (id_taken) — The pack has a document 'by-hand' uploaded by hand" in result.stdout
    )
    (one / "shared-name.md").unlink()
    run("sync", "ops", str(two), ok=False)  # the folder "two" does not own shared-name: it stays
    assert not Document.get(Document.doc_id == "shared-name").is_deleted
    run("sync", "ops", str(one))
    assert Document.get(Document.doc_id == "shared-name").is_deleted
    assert not Document.get(Document.doc_id == "by-hand").is_deleted
    assert not Document.get(Document.doc_id == "other").is_deleted
    assert Document.get(Document.doc_id == "by-hand").current_revision().text.startswith("# By hand")


def test_an_edit_in_the_browser_is_a_conflict_not_overwritten(app, run, pack, users, tmp_path):
    root = tmp_path / "tree"
    root.mkdir()
    (root / "runbook.md").write_text("# Runbook\n\nRestart the syrunzq queue.\n")
    run("sync", "ops", str(root))
    document = Document.get(Document.doc_id == "runbook")
    edit_text(document, "# Runbook\n\nRestart the queue, then check syeditzq.\n", 1, users["PlatformAdmin"])
    (root / "runbook.md").write_text("# Runbook\n\nRestart the syfolderzq queue.\n")
    result = run("sync", "ops", str(root), ok=False)
    assert result.exit_code == 1
    assert "runbook.md: conflict runbook v2 (edited)" in result.stdout
    assert "--overwrite-edited" in result.stdout
    assert "syeditzq" in Document.get_by_id(document.id).current_revision().text
    page = app.test_client()
    from helpers import login

    login(page, users["PlatformAdmin"].email)
    listing = page.get("/packs/ops").get_data(as_text=True)
    assert f"from <code>{root.resolve()}/runbook.md</code>" in listing and "changed here since" in listing
    (root / "runbook.md").unlink()
    removal = run("sync", "ops", str(root), ok=False)
    assert "its file is gone; it was not removed" in removal.stdout
    assert not Document.get_by_id(document.id).is_deleted
    run("sync", "ops", str(root), "--overwrite-edited")
    assert Document.get_by_id(document.id).is_deleted


def test_a_dry_run_changes_nothing(app, run, pack, tmp_path):
    root = tmp_path / "tree"
    make_tree(root, count=12)
    result = run("sync", "ops", str(root), "--dry-run")
    assert "spool/part-0/note-000.txt: would be added spool-part-0-note-000 v1" in result.stdout
    assert result.stdout.strip().endswith(
        "dry run, nothing changed: 12 added, 0 updated, 0 unchanged, 0 removed, 0 refused, 0 conflict"
    )
    assert Document.select().count() == 0


def test_bad_arguments_are_named(app, run, pack, tmp_path):
    missing = run("sync", "nope", str(tmp_path), ok=False)
    assert missing.exit_code != 0 and "no such pack: nope" in missing.stderr + missing.stdout
    not_folder = run("sync", "ops", str(tmp_path / "absent"), ok=False)
    assert not_folder.exit_code != 0 and "is not a folder" in not_folder.stderr + not_folder.stdout


@pytest.fixture
def env(tmp_path):
    env = {**os.environ, "CAIRN_DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(WORKTREE)}
    env.pop("DATABASE_URL", None)
    if POSTGRES_URL:
        env["DATABASE_URL"] = POSTGRES_URL
        empty_postgres(POSTGRES_URL)
    return env


def _cairn(env, *args: str, ok: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(CAIRN + list(args), env=env, capture_output=True, text=True, cwd=WORKTREE, timeout=600)
    if ok:
        assert result.returncode == 0, result.stderr + result.stdout
    return result


def test_a_sync_killed_half_way_is_finished_by_the_next(env, tmp_path):
    root = tmp_path / "tree"
    files = make_tree(root, count=60)
    _cairn(env, "init")
    _cairn(env, "packs", "create", "ops", "--title", "Operations")
    with tempfile.TemporaryFile() as stderr:
        child = subprocess.Popen(
            CAIRN + ["sync", "ops", str(root)],
            env=env,
            cwd=WORKTREE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            start_new_session=True,
        )
        done = 0
        try:
            for line in child.stdout:  # waits on what it printed, never on time
                done += ": added " in line
                if done >= 25:
                    os.killpg(child.pid, signal.SIGKILL)
                    break
        finally:
            child.stdout.close()
            child.wait(timeout=60)
        assert child.returncode == -signal.SIGKILL
    second = _cairn(env, "sync", "ops", str(root))
    summary = second.stdout.strip().splitlines()[-1]
    added = int(summary.split(" added")[0])
    unchanged = int(summary.split(", ")[2].split()[0])
    assert added + unchanged == 60 and unchanged >= 25, summary
    third = _cairn(env, "sync", "ops", str(root))
    assert third.stdout.strip().endswith("0 added, 0 updated, 60 unchanged, 0 removed, 0 refused, 0 conflict")
    check_every_file_is_found(env, files)


def check_every_file_is_found(env, files: dict[str, str]) -> None:
    """Each file's own word finds exactly its document in the index the runs left."""
    from test_crash_recovery import portal_app

    with portal_app(env):
        pack = Pack.get(Pack.slug == "ops")
        for path, own_word in files.items():
            hits = search_packs([pack], own_word).hits
            assert [h.document_id for h in hits] == [path.replace("/", "-").rsplit(".", 1)[0]], path


def test_one_sync_of_a_pack_at_a_time(app, run, pack, tmp_path):
    from portal.documents.sync import sync_folder

    root = tmp_path / "tree"
    make_tree(root, count=4)
    first = sync_folder(pack, root)
    next(first)  # the first sync holds the pack's lock, half way through
    second = run("sync", "ops", str(root), ok=False)
    assert second.exit_code != 0
    assert "Another sync of pack ops is running; nothing was changed." in second.stderr + second.stdout
    assert len(list(first)) == 3  # the first one finishes its job
    assert run("sync", "ops", str(root)).stdout.strip().endswith("4 unchanged, 0 removed, 0 refused, 0 conflict")
