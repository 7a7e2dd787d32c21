"""`cairn sync PACK FOLDER`: a real folder tree of a few hundred files, renames, deletions, a changed
file that now fails a limit, edits in the browser, and a run killed with SIGKILL half way."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from test_crash_recovery import CAIRN, WORKTREE, cairn, check_database_and_index, create_crash_pack, unique_word

from helpers import cli_runner
from portal.documents import editing
from portal.documents import services as documents
from portal.ingest import limits
from portal.models import Document, Pack, Revision
from portal.search.service import search_packs
from portal.wording import when

FILES = 300


def write_tree(root: Path, count: int = FILES) -> dict[str, str]:
    """``count`` Markdown and text files three folders deep, plus what a sync must skip; returns id → word."""
    words = {}
    for number in range(count):
        area, topic = f"area-{number % 5}", f"topic-{number % 7}"
        folder = root / area / topic
        folder.mkdir(parents=True, exist_ok=True)
        word = unique_word(number)
        suffix = "txt" if number % 10 == 0 else "md"
        (folder / f"note-{number:03d}.{suffix}").write_text(f"# Note {number}\n\nThe {word} queue drains at night.\n")
        words[f"{area}-{topic}-note-{number:03d}"] = word
    for skipped in (".git/objects", "build", "node_modules/lib", "area-0/.cache", "area-1/vendor"):
        (root / skipped).mkdir(parents=True, exist_ok=True)
        (root / skipped / "skipped.md").write_text("# Skipped\n\nNever synced.\n")
    (root / "area-2" / ".hidden-note.md").write_text("# Hidden\n\nNever synced.\n")
    return words


@pytest.fixture
def run(app):
    return cli_runner(app)


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "handbook"
    root.mkdir()
    return root


def _json_lines(result) -> tuple[list[dict], dict]:
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    return lines[:-1], lines[-1]


def _live(pack) -> dict[str, Document]:
    return {d.doc_id: d for d in Document.select().where((Document.pack == pack) & Document.deleted_at.is_null())}


def test_a_tree_of_hundreds_of_files_is_synced_and_a_second_run_reads_nothing_twice(app, pack, tree, run):
    words = write_tree(tree)
    first = run("sync", "ops", str(tree), "--json")
    lines, summary = _json_lines(first)
    assert summary["summary"] == dict.fromkeys(("updated", "unchanged", "removed", "refused", "conflict"), 0) | {
        "added": FILES
    }
    assert {line["document"] for line in lines} == set(words)
    live = _live(pack)
    assert set(live) == set(words)  # nothing from hidden, build, vendor or version-control folders
    sample = live["area-3-topic-1-note-113"]
    assert (sample.sync_folder, sample.sync_path) == (str(tree.resolve()), "area-3/topic-1/note-113.md")
    assert sample.synced_version == 1 and sample.synced_at is not None
    for doc_id in ("area-0-topic-0-note-000", "area-4-topic-5-note-299"):
        assert doc_id in {hit.document_id for hit in search_packs([pack], words[doc_id]).hits}

    revisions, generation = Revision.select().count(), Pack.get_by_id(pack.id).index_generation
    again = run("sync", "ops", str(tree))
    assert again.stdout.splitlines()[-1] == "0 added, 0 updated, 300 unchanged, 0 removed, 0 refused, 0 conflict"
    assert Revision.select().count() == revisions and Pack.get_by_id(pack.id).index_generation == generation

    page = BeautifulSoup(_admin_page(app), "html.parser")
    assert f"from {tree.resolve()}/area-3/topic-1/note-113.md, synced" in " ".join(
        " ".join(s.text.split()) for s in page.select(".synced")
    )


def _admin_page(app) -> str:
    from helpers import PASSWORD, signed_in_client
    from portal.auth.services import create_user

    admin = create_user("sync-admin@example.test", PASSWORD, {"PlatformAdmin"}, None)
    return signed_in_client(app, admin).get("/packs/ops").get_data(as_text=True)


def test_changes_renames_and_deletions_touch_only_this_folders_documents(app, pack, tree, tmp_path, run):
    words = write_tree(tree, 40)
    run("sync", "ops", str(tree))
    documents.upload_file(pack, "by-hand.md", b"# By hand\n\nUploaded in the browser.\n", None)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "other.md").write_text("# Other\n\nFrom another folder.\n")
    run("sync", "ops", str(elsewhere))

    (tree / "area-1/topic-1/note-001.md").write_text("# Note 1\n\nRewritten.\n")  # changed
    (tree / "area-2/topic-2/note-002.md").rename(tree / "area-2/topic-2/renamed.md")  # renamed
    (tree / "area-3/topic-3/note-003.md").unlink()  # deleted
    (tree / "area-0/new.md").write_text("# New\n\nJust added.\n")  # added
    result = run("sync", "ops", str(tree), "--json", ok=False)
    lines, summary = _json_lines(result)
    assert result.exit_code == 0, result.stdout
    assert summary["summary"] == {
        "added": 2,
        "updated": 1,
        "unchanged": 37,
        "removed": 2,
        "refused": 0,
        "conflict": 0,
    }
    by_action = {(line["action"], line["document"]) for line in lines if line["action"] != "unchanged"}
    assert by_action == {
        ("updated", "area-1-topic-1-note-001"),
        ("added", "area-2-topic-2-renamed"),
        ("added", "area-0-new"),
        ("removed", "area-2-topic-2-note-002"),
        ("removed", "area-3-topic-3-note-003"),
    }
    live = _live(pack)
    assert live["area-1-topic-1-note-001"].current_version == 2
    assert "Rewritten." in live["area-1-topic-1-note-001"].current_revision().text
    assert {"by-hand", "other"} <= set(live)  # a hand upload and another folder's document stay
    assert "area-3-topic-3-note-003" not in live and len(live) == len(words) + 2 + 2 - 2


def test_a_changed_file_that_now_fails_a_limit_keeps_the_old_revision(app, pack, tree, run):
    (tree / "guide.md").write_text("# Guide\n\nThe first version.\n")
    (tree / "empty-later.md").write_text("# Soon empty\n\nText.\n")
    run("sync", "ops", str(tree))
    (tree / "guide.md").write_text("# Guide\n\n" + "x" * (limits.MAX_TEXT_CHARS + 10))
    (tree / "empty-later.md").write_text("   \n")
    result = run("sync", "ops", str(tree), ok=False)
    assert result.exit_code == 1
    out = result.stdout
    assert "guide.md: refused (too_many_chars) — " in out
    assert "version 1 stays as it was" in out and "empty-later.md: refused (" in out
    guide = _live(pack)["guide"]
    assert guide.current_version == 1 and "The first version." in guide.current_revision().text
    assert out.splitlines()[-1] == "0 added, 0 updated, 0 unchanged, 0 removed, 2 refused, 0 conflict"


def test_a_document_edited_in_the_browser_is_never_overwritten_or_removed_silently(app, pack, users, tree, run):
    (tree / "edited.md").write_text("# Edited\n\nFrom the folder.\n")
    (tree / "gone.md").write_text("# Gone\n\nFrom the folder.\n")
    (tree / "calm.md").write_text("# Calm\n\nFrom the folder.\n")
    run("sync", "ops", str(tree))
    for doc_id in ("edited", "gone", "calm"):
        editing.edit_text(_live(pack)[doc_id], f"# {doc_id}\n\nChanged in the browser.\n", 1, users["PlatformAdmin"])
    (tree / "edited.md").write_text("# Edited\n\nChanged in the folder too.\n")
    (tree / "gone.md").unlink()
    result = run("sync", "ops", str(tree), ok=False)
    assert result.exit_code == 1
    out = result.stdout
    assert "edited.md: conflict as edited v2 (edited_in_browser)" in out
    assert "gone.md: conflict as gone v2 (edited_in_browser) — Gone from the folder" in out
    assert "calm.md: unchanged as calm v2 — edited in the browser since the last sync (v1); that edit stays" in out
    live = _live(pack)
    assert all("Changed in the browser." in live[i].current_revision().text for i in ("edited", "gone", "calm"))

    taken = run("sync", "ops", str(tree), "--overwrite-edits").stdout
    assert "edited.md: updated as edited v3" in taken and "gone.md: removed as gone v2" in taken
    edit = Revision.get((Revision.document == _live(pack)["edited"]) & (Revision.version == 2))
    assert (  # the line says whose edit it replaced, and where it stays
        f"edited.md: updated as edited v3 — Version 2 was edited in the browser by platformadmin@example.test on "
        f"{when(edit.created_at)} UTC; this upload replaced that text. Version 2 stays in the history.\n"
    ) in taken
    live = _live(pack)
    assert "gone" not in live and "Changed in the folder too." in live["edited"].current_revision().text
    assert "calm.md: unchanged" in taken and "Changed in the browser." in live["calm"].current_revision().text
    assert run("sync", "ops", str(tree)).exit_code == 0  # in step again


def test_a_dry_run_changes_nothing(app, pack, tree, run):
    write_tree(tree, 12)
    (tree / "slides.pptx").write_bytes(b"PK\x03\x04")
    result = run("sync", "ops", str(tree), "--dry-run", ok=False)
    assert result.exit_code == 1 and "slides.pptx: refused (unsupported_type)" in result.stdout
    assert "area-0/topic-0/note-000.txt: would be added as area-0-topic-0-note-000\n" in result.stdout
    assert result.stdout.splitlines()[-1] == (
        "dry run, nothing changed — would be: 12 added, 0 updated, 0 unchanged, 0 removed, 1 refused, 0 conflict"
    )
    assert Document.select().count() == 0


def test_a_file_named_with_accents_keeps_the_document_an_earlier_sync_named_without_them(
    app, pack, tree, run, monkeypatch
):
    """Letters outside ASCII were dropped from ids ("Übergabe.md" → bergabe); now they are written in ASCII
    (ubergabe). A folder synced before must not get a second document, nor lose the first as removed."""
    from portal.documents import ids, sync

    (tree / "Übergabe.md").write_text("# Übergabe\n\nThe shift hands over at six.\n")

    def old_rule(name):
        return ids._cleaned(ids._stem(name))

    monkeypatch.setattr(sync, "document_id_for", old_rule)
    monkeypatch.setattr(ids, "document_id_for", old_rule)
    run("sync", "ops", str(tree))
    assert set(_live(pack)) == {"bergabe"}
    monkeypatch.undo()
    (tree / "Übergabe.md").write_text("# Übergabe\n\nThe shift hands over at seven.\n")
    (tree / "Straße.md").write_text("# Straße\n\nThe road to the plant.\n")
    lines, summary = _json_lines(run("sync", "ops", str(tree), "--json"))
    assert {line["path"]: (line["action"], line["document"]) for line in lines} == {
        "Straße.md": ("added", "strasse"),
        "Übergabe.md": ("updated", "bergabe"),
    }
    assert set(_live(pack)) == {"bergabe", "strasse"} and summary["summary"]["removed"] == 0


def test_refusals_are_named_and_make_the_exit_status_one(app, pack, tree, run):
    (tree / "a").mkdir()
    (tree / "a" / "b.md").write_text("# One\n\nA.\n")
    (tree / "a-b.md").write_text("# Two\n\nB.\n")
    (tree / "budget.xlsx").write_bytes(b"PK\x03\x04 not really")
    (tree / "big.md").write_bytes(b"x" * (limits.MAX_FILE_BYTES + 1))
    documents.upload_file(pack, "mine.md", b"# Mine\n\nBy hand.\n", None)
    (tree / "mine.md").write_text("# Mine\n\nFrom the folder.\n")
    lines, summary = _json_lines(run("sync", "ops", str(tree), "--json", ok=False))
    reasons = {line["path"]: line["reason"] for line in lines}
    assert reasons["a/b.md"] == reasons["a-b.md"] == "id_clash"
    assert reasons["big.md"] == "too_large" and reasons["mine.md"] == "not_from_this_folder"
    assert reasons["budget.xlsx"] == "unsupported_type"
    assert summary["summary"]["refused"] == 5
    assert _live(pack)["mine"].current_revision().text == "# Mine\n\nBy hand.\n"
    assert run("sync", "nope", str(tree), ok=False).exit_code == 2


def test_a_sync_killed_half_way_is_finished_by_the_next_run(tmp_path):
    env = {**os.environ, "CAIRN_DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(WORKTREE)}
    env.pop("DATABASE_URL", None)
    folder = tmp_path / "tree"
    folder.mkdir()
    words = {f"batch-{n:03d}": unique_word(n) for n in range(60)}
    for doc_id, word in words.items():
        (folder / f"{doc_id}.md").write_text(f"# {doc_id}\n\nThe {word} queue drains at night.\n")
    create_crash_pack(env)

    with tempfile.TemporaryFile() as stderr:
        child = subprocess.Popen(
            [*CAIRN, "sync", "crash", str(folder), "--json"],
            env=env,
            cwd=WORKTREE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            start_new_session=True,
        )
        printed = []
        try:
            for raw in child.stdout:
                printed.append(json.loads(raw))
                if len(printed) == 25:
                    os.killpg(child.pid, signal.SIGKILL)
                    break
        finally:
            child.stdout.close()
            child.wait(timeout=60)
        assert child.returncode == -signal.SIGKILL
    assert all(line["action"] == "added" for line in printed)

    stored = check_database_and_index_after_start(env, words)
    assert 25 <= stored <= 26  # the file after the last printed line may have been in flight

    finished = cairn(env, "sync", "crash", str(folder), "--json")
    summary = json.loads(finished.stdout.splitlines()[-1])["summary"]
    assert summary["added"] == 60 - stored and summary["unchanged"] == stored
    assert check_database_and_index(env, words) == 60


def check_database_and_index_after_start(env, words) -> int:
    cairn(env, "packs", "list")  # any command catches up with the index at start
    return check_database_and_index(env, words)


def test_one_sync_per_pack_at_a_time(app, pack, tree, run):
    (tree / "guide.md").write_text("# Guide\n\nText.\n")
    lock = Path(app.config["CAIRN_DATA_DIR"]) / f"sync-{pack.id}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # as a sync running in another process holds it
        result = run("sync", "ops", str(tree), ok=False)
    assert result.exit_code == 2 and "Another sync of the pack ops is running" in result.stderr
    assert Document.select().count() == 0
    assert run("sync", "ops", str(tree)).exit_code == 0  # released: the next run goes ahead
