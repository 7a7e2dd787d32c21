"""A `cairn ingest` killed with SIGKILL at random points loses nothing it committed.

A child process ingests many small generated files (each with a word of its
own; some are Word files with figures, so figure files are written) and is
killed after a random number of its printed lines, several rounds in a row.
After each kill the next `cairn` command catches up; then every document the
database holds must be found by a search for its own word, and every file
under the data folder must belong to a row (and every row's file must exist).
A single upload, a deletion, narrowing who may read a document and describing
its figures are killed at each step of their own.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI

from helpers import PASSWORD, POSTGRES_URL, empty_postgres
from portal.models import Pack
from resources.make_fixtures import add_picture, docx_bytes, image_bytes

CAIRN = [sys.executable, "-m", "portal.cli"]
WORKTREE = Path(__file__).resolve().parents[1]
FILES = 24
ROUNDS = 3


def unique_word(number: int) -> str:
    """Letters only, the same length for every file: no word is another's stem or prefix."""
    letters = "".join("bcdfghjklmnp"[int(digit)] for digit in f"{number:03d}")
    return f"qz{letters}vq"


def write_files(folder: Path, count: int = FILES) -> dict[str, str]:
    """The files to ingest; returns document id → its unique word."""
    words = {}
    for number in range(count):
        word = unique_word(number)
        doc_id = f"crash-{number:03d}"
        words[doc_id] = word
        if number % 6 == 0:

            def build(document, word=word, number=number):
                document.add_heading(f"Figure notes {number}", level=1)
                document.add_paragraph(f"The {word} diagram shows the message path.")
                add_picture(document, image_bytes(96, 64, color=(number * 5 % 255, 90, 160)), alt=f"Path {number}")
                add_picture(document, image_bytes(64, 96, color=(40, number * 5 % 255, 90)), alt=f"Chart {number}")

            (folder / f"{doc_id}.docx").write_bytes(docx_bytes(build))
        else:
            (folder / f"{doc_id}.md").write_text(f"# Note {number}\n\nThe {word} queue drains at night.\n")
    return words


@pytest.fixture
def env(tmp_path):
    env = {**os.environ, "CAIRN_DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(WORKTREE)}
    env.pop("DATABASE_URL", None)
    if POSTGRES_URL:
        env["DATABASE_URL"] = POSTGRES_URL
        empty_postgres(POSTGRES_URL)
    return env


def cairn(env, *args: str) -> subprocess.CompletedProcess:
    result = subprocess.run(CAIRN + list(args), env=env, capture_output=True, text=True, cwd=WORKTREE, timeout=120)
    assert result.returncode == 0, result.stderr + result.stdout
    return result


def _killed(env: dict, script: str, *args: str) -> None:
    """Run ``script`` in a child process that kills itself with SIGKILL at the step ``args`` name."""
    child = subprocess.run(
        [sys.executable, "-c", script, *args], env=env, cwd=WORKTREE, capture_output=True, text=True, timeout=120
    )
    assert child.returncode == -signal.SIGKILL, child.stderr


def ingest_until_killed(env, files: list[Path], stores_before_kill: int) -> list[dict]:
    """Run `cairn ingest` and SIGKILL it once it has printed ``stores_before_kill`` new stores.

    Returns every line it printed, those it wrote after the one that decided the kill too (a busy
    machine lets it store more files before the signal lands). Waits on the child's output only,
    never on time; a child that ends on its own (finished, or failed) fails the test with what it
    wrote to stderr.
    """
    with tempfile.TemporaryFile() as stderr:
        child = subprocess.Popen(
            CAIRN + ["ingest", "crash", "--json", *map(str, files)],
            env=env,
            cwd=WORKTREE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            start_new_session=True,
        )
        lines, stores = [], 0
        try:
            for raw in child.stdout:
                line = json.loads(raw)
                lines.append(line)
                stores += line["status"] == "accepted" and line["message"] is None
                if stores >= stores_before_kill:
                    os.killpg(child.pid, signal.SIGKILL)  # its Word reader children too
                    break
            # What it printed before the signal landed; a line cut by the kill never ends in a newline.
            lines += [json.loads(raw) for raw in child.stdout if raw.endswith("\n")]
        finally:
            child.stdout.close()
            child.wait(timeout=60)
        stderr.seek(0)
        assert child.returncode == -signal.SIGKILL, stderr.read().decode(errors="replace")
    return lines


@contextmanager
def portal_app(env):
    """The portal on the test's data folder and database, in this process."""
    from portal import create_app

    app = create_app(
        {
            "CAIRN_DATA_DIR": env["CAIRN_DATA_DIR"],
            "DATABASE_URL": env.get("DATABASE_URL"),
            "SECRET_KEY": "test-secret",
            "CAIRN_REPAIR_INDEX_ON_START": False,
        }
    )
    try:
        with app.app_context():
            yield app
    finally:
        app.extensions["cairn_indexes"].close()
        app.config["DATABASE"].close()


def create_crash_pack(env) -> None:
    from portal.migrate import migrate
    from portal.packs.services import create_pack

    with portal_app(env) as app:
        migrate(app.config["DATABASE"])
        create_pack("crash", "Crash test")


def check_database_and_index(env, words: dict[str, str]) -> int:
    """Every stored document is found by its word; files and rows match. Returns how many documents."""
    from portal.models import Document, Figure, Revision
    from portal.search.service import search_packs

    with portal_app(env):
        pack = Pack.get(Pack.slug == "crash")
        stored = [d.doc_id for d in Document.select().where((Document.pack == pack) & Document.deleted_at.is_null())]
        missing = [
            doc_id
            for doc_id in stored
            if doc_id not in {hit.document_id for hit in search_packs([pack], words[doc_id]).hits}
        ]
        assert not missing, f"stored but not searchable: {missing}"

        named = {
            p for (p,) in Revision.select(Revision.original_path).where(Revision.original_path.is_null(False)).tuples()
        } | {p for (p,) in Figure.select(Figure.path).tuples()}
        on_disk = files_on_disk(Path(env["CAIRN_DATA_DIR"]) / "files")
        assert on_disk - named == set(), "files that belong to no row"
        assert named - on_disk == set(), "rows whose file is missing"
        return len(stored)


def files_on_disk(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()} if root.exists() else set()


def test_killed_ingests_leave_everything_committed_searchable_and_no_stray_files(env, tmp_path):
    seed = int.from_bytes(os.urandom(4), "big")
    rng = random.Random(seed)
    folder = tmp_path / "incoming"
    folder.mkdir()
    words = write_files(folder)
    files = sorted(folder.iterdir())
    create_crash_pack(env)

    stored = 0
    for round_number in range(ROUNDS):
        kill_after = rng.randint(1, 6)  # at most 18 in all: each round is killed before the end
        lines = ingest_until_killed(env, files, kill_after)
        assert all(line["status"] == "accepted" for line in lines), lines
        printed = sum(line["message"] is None for line in lines)  # new stores, each printed once committed
        assert printed >= kill_after
        cairn(env, "packs", "list")  # any command catches up at start
        now = check_database_and_index(env, words)
        # Each line is printed once its file is stored: at most the file after the last line was in flight.
        # (Counted from every line printed, not from the kill's threshold: under load the child stored and
        # printed more files before the signal landed, and the test failed.)
        assert stored + printed <= now <= stored + printed + 1, f"seed {seed}, round {round_number}"
        stored = now

    # The same ingest, run to its end, makes every accepted file searchable.
    cairn(env, "ingest", "crash", "--json", *map(str, files))
    assert check_database_and_index(env, words) == FILES, f"seed {seed}"


# A child that stores one file (or deletes one document) and kills itself with SIGKILL at one exact step.
KILLED_AT = """
import os, signal, sys
from portal import create_app

def killed(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

step, path = sys.argv[1], sys.argv[2]
app = create_app({"CAIRN_REPAIR_INDEX_ON_START": False})
with app.app_context():
    from portal import storage
    from portal.documents import editing, revisions, services
    from portal.models import Document, Pack
    from portal.search import index, service

    if step == "files written, transaction open":
        revisions.create_passages = killed
    elif step == "committed, index not written":
        service.index_changes = killed
    elif step == "index committed, its pending rows not deleted":
        commit = index._commit  # the pack has one partition: its commit is the write's last
        index._commit = lambda writer, *commit_data: (commit(writer, *commit_data), killed())
    elif step == "deleted, files not removed":
        storage.remove_tree = killed
    elif step == "access narrowed, index not written":
        service.index_changes = killed
    pack = Pack.get(Pack.slug == "crash")
    document = Document.get_or_none(Document.doc_id == os.path.splitext(os.path.basename(path))[0])
    if step.startswith("deleted"):
        editing.delete_document(document, document.current_version)
    elif step.startswith("access"):
        from portal.documents.readers import ReaderAccess, change_reader_access

        change_reader_access(document, ReaderAccess("staff"), document.current_version, None)
    else:
        with open(path, "rb") as handle:
            services.upload_file(pack, os.path.basename(path), handle.read(), None)
"""


@pytest.mark.parametrize(
    "step",
    [
        "files written, transaction open",
        "committed, index not written",
        "index committed, its pending rows not deleted",
        "deleted, files not removed",
        "access narrowed, index not written",
    ],
)
def test_a_process_killed_at_each_step_of_a_change_leaves_nothing_for_the_next_start_to_miss(env, tmp_path, step):
    from portal.documents.readers import ReaderAccess
    from portal.documents.services import upload_file
    from portal.search.service import search_packs

    folder = tmp_path / "incoming"
    folder.mkdir()
    words = write_files(folder, count=2)
    word_file, text_file = folder / "crash-000.docx", folder / "crash-001.md"  # number 0 has figures
    create_crash_pack(env)
    with portal_app(env):
        pack = Pack.get(Pack.slug == "crash")
        for path in [text_file, word_file] if step.startswith(("deleted", "access")) else [text_file]:
            shared = ReaderAccess("shared")  # members of every company read it, until the access step narrows it
            assert upload_file(pack, path.name, path.read_bytes(), None, reader_access=shared).accepted

    _killed(env, KILLED_AT, step, str(word_file))
    if step.startswith(("files written", "deleted")):
        files = Path(env["CAIRN_DATA_DIR"]) / "files"
        assert any(path.name.startswith("figure-") for path in files.rglob("*"))  # left behind, for now

    cairn(env, "packs", "list")  # any command catches up at start

    stored = check_database_and_index(env, words)
    assert stored == (2 if step.startswith(("committed", "index committed", "access")) else 1)
    if step.startswith("access"):  # its passages left the partition members search, for the staff one
        with portal_app(env):
            pack = Pack.get(Pack.slug == "crash")
            for partition, found in (("shared", []), ("staff", ["crash-000"])):
                hits = search_packs(
                    [pack], words["crash-000"], readable=lambda _slug, p, partition=partition: p == partition
                )
                assert [hit.document_id for hit in hits.hits] == found, partition


# A child that describes the figures of crash-000.docx (a fake vision model over HTTP answers) and kills
# itself with SIGKILL at one exact step.
DESCRIBE_KILLED_AT = """
import os, signal, sys
from portal import create_app

def killed(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

step = sys.argv[1]
app = create_app({"CAIRN_REPAIR_INDEX_ON_START": False})
with app.app_context():
    from portal.describing import service, vision
    from portal.documents import editing
    from portal.models import Document, User
    from portal.search import service as search_service

    if step == "descriptions committed, index not written":
        search_service.index_changes = killed
    elif step == "descriptions committed, job not ended":
        write = editing.add_figure_descriptions
        editing.add_figure_descriptions = lambda *args: (write(*args), killed())
    elif step == "last figure claimed, model not answered":
        describe = vision.describe
        vision.describe = lambda client, webp, title, label: (
            killed() if label.startswith("Chart") else describe(client, webp, title, label)
        )
    service.run_to_end(service.start(Document.get(Document.doc_id == "crash-000"), User.get()))
"""
DESCRIPTION = "A pressure gauge labelled qzgaugevq."


@pytest.mark.parametrize(
    "step, described",
    [
        ("descriptions committed, index not written", 2),
        ("descriptions committed, job not ended", 2),
        ("last figure claimed, model not answered", 1),
    ],
)
def test_describing_killed_at_each_step_ends_its_job_with_what_was_described_and_searchable(
    env, tmp_path, step, described
):
    """The job a killed process leaves running ends at its next step (the page asks again): with the revision
    the process wrote, or with every description, the figure whose request died described then; it never describes
    a figure twice. A job whose last figure's request died waits first as long as a model call may take: until then
    that request may be alive."""
    from flask import current_app

    from portal.auth.services import create_user
    from portal.describing import service
    from portal.documents.services import upload_file
    from portal.models import DescribeJob, Document
    from portal.search.service import search_packs

    folder = tmp_path / "incoming"
    folder.mkdir()
    words = write_files(folder, count=1)
    create_crash_pack(env)
    with portal_app(env):
        create_user("admin@example.test", PASSWORD, {"PlatformAdmin"})
        word_file = folder / "crash-000.docx"
        assert upload_file(Pack.get(Pack.slug == "crash"), word_file.name, word_file.read_bytes(), None).accepted

    with FakeOpenAI() as vision:
        vision.reply(DESCRIPTION)
        env = {**env, "CAIRN_VISION_BASE_URL": vision.base_url, "CAIRN_VISION_API_KEY": "k"}
        env["CAIRN_VISION_MODEL"] = "fake-vision"
        _killed(env, DESCRIBE_KILLED_AT, step)
        called = len(vision.requests)
        assert called == described  # the last step's process died at its call, or after it

        cairn(env, "packs", "list")  # any command catches up at start
        assert check_database_and_index(env, words) == 1
        with portal_app(env) as app:
            app.config.update(CAIRN_VISION_BASE_URL=vision.base_url, CAIRN_VISION_API_KEY="k")  # as the killed one
            if described < 2:  # the last figure's request may still be at its call: the job waits
                assert service.step(DescribeJob.get()).status == "running"
                # as if a model call's timeout (and the margin) had passed since it last moved
                waited = float(current_app.config["CAIRN_VISION_TIMEOUT"]) + service.MOVE_MARGIN_SECONDS + 1
                DescribeJob.update(updated_at=DescribeJob.get().last_moved - dt.timedelta(seconds=waited)).execute()
            job = service.step(DescribeJob.get())  # what the job's page asks next
            # the figure whose request died is described now; no figure is described twice
            assert len(vision.requests) == called + (2 - described)
            assert job.status == "written"
            assert job.message == "Version 2 holds 2 of 2 figure descriptions."
            revision = Document.get(Document.doc_id == "crash-000").current_revision()
            assert revision.version == 2 and revision.text.count(DESCRIPTION) == 2
            assert service.step(job).status == "written"  # asked once more: nothing changes
            hits = search_packs([Pack.get(Pack.slug == "crash")], "qzgaugevq").hits
            assert [hit.document_id for hit in hits] == ["crash-000"]
    assert check_database_and_index(env, words) == 1


SEED_KILLED_AT = """
import os, signal
from portal import create_app

app = create_app({"CAIRN_REPAIR_INDEX_ON_START": False})
with app.app_context():
    from portal.demo import seed

    seed.create_user = lambda *args, **kwargs: os.kill(os.getpid(), signal.SIGKILL)  # its packs are in, no user
    seed.seed_demo()
"""


def test_a_demo_seed_killed_before_its_users_is_finished_by_the_next_run(env):
    """scripts/run seeds with --if-empty: a seed killed after its packs left a portal nobody could sign in to, and
    the next run said the database was not empty and served it so (found by a probe)."""
    from portal.demo import catalog
    from portal.models import Agent, User

    cairn(env, "init")
    _killed(env, SEED_KILLED_AT)
    with portal_app(env):
        assert User.select().count() == 0 and Pack.select().count() == len(catalog.PACKS)
    finished = cairn(env, "seed-demo", "--if-empty")
    assert finished.stdout.startswith("finishing a demo seed that was stopped before its end")
    with portal_app(env):
        assert sorted(u.email for u in User.select()) == sorted(e["email"] for e in catalog.DEMO_USERS)
        assert Agent.select().count() == len(catalog.AGENTS)
    again = cairn(env, "seed-demo", "--if-empty")
    assert "demo seed skipped: the database is not empty" in again.stdout
