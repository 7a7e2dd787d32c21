"""Packs managed in the browser: editing title and description; deleting a pack with everything in
it after a confirmation that names what goes, safely against a kill and a second administrator."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from helpers import LOCKS, SPOOL
from portal import repair_indexes_at_start, storage
from portal.agents.services import create_agent
from portal.documents import services as documents
from portal.errors import NotFound, PackDeleted, Refused
from portal.models import (
    AgentGrant,
    AuditLog,
    Company,
    Document,
    Figure,
    Pack,
    Passage,
    PendingIndexUpdate,
    Revision,
    RunReference,
)
from portal.packs import deletion
from portal.packs.services import MAX_DESCRIPTION_CHARS, create_pack
from portal.runs.ask import ask
from portal.search.service import search_packs
from resources.make_fixtures import mixed_images_docx

QUESTION = "How do I delete old spool requests?"


def _soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


@pytest.fixture
def filled(app, pack, other_pack, users):
    """The ops pack with two Markdown runbooks and a Word file with figures, granted to an agent that ran once."""
    documents.upload_file(pack, "spool-overflow.md", SPOOL, None)
    documents.upload_file(pack, "lock-entries.md", LOCKS, None)
    documents.upload_file(pack, "mixed.docx", mixed_images_docx(), None)
    documents.upload_file(
        other_pack, "elsewhere.md", b"# Elsewhere\n\nDelete old spool requests with RSPO0041.\n", None
    )
    agent = create_agent(None, "desk", "Service desk", "preferred", None, "", ["ops", "other"])
    run = ask(agent, users["AgentBuilder"], QUESTION)
    assert any(r.pack_slug == "ops" for r in run.references())
    return run


def _files_root(app) -> Path:
    return Path(app.config["CAIRN_DATA_DIR"]) / "files"


def _index_folder(app, slug: str) -> Path:
    return Path(app.config["CAIRN_DATA_DIR"]) / "indexes" / slug


# --- editing -------------------------------------------------------------------------------------


def test_an_admin_edits_title_and_description_and_the_change_is_audited(pack, client_as):
    admin = client_as("PlatformAdmin")
    form = _soup(admin.get("/packs/ops/edit"))
    assert form.select_one("#title")["value"] == "Operations"
    assert form.select_one("#description").text == "Runbooks and notes"
    response = admin.post("/packs/ops/edit", data={"title": " Ops runbooks ", "description": "For the desk."})
    assert response.status_code == 303 and response.headers["Location"].endswith("/packs/ops")
    page = _soup(admin.get("/packs/ops"))
    assert page.select_one("h1").text.startswith("Ops runbooks") and "For the desk." in page.select_one(".lead").text
    entry = AuditLog.get(AuditLog.action == "pack.update")
    assert entry.detail["changed"] == {
        "title": ["Operations", "Ops runbooks"],
        "description": ["Runbooks and notes", "For the desk."],
    }


def test_an_empty_title_is_refused_and_shown_with_the_form(pack, client_as):
    response = client_as("PlatformAdmin").post("/packs/ops/edit", data={"title": "  ", "description": "x"})
    assert response.status_code == 422
    assert "A pack needs a title." in _soup(response).select_one(".error").text
    assert Pack.get(Pack.slug == "ops").title == "Operations"
    # as on the new-pack form: the field refused is marked, described by the message, and takes the focus
    title = _soup(response).select_one("#title")
    assert (
        title["aria-invalid"] == "true" and title["aria-describedby"] == "title-error" and title.has_attr("autofocus")
    )
    assert _soup(response).select_one("#title-error").text == "A pack needs a title."
    vocabulary = client_as("PlatformAdmin").post(
        "/packs/ops/edit", data={"title": "Operations", "description": "x", "vocabulary": "no arrow here"}
    )
    field = _soup(vocabulary).select_one("#vocabulary")
    assert field["aria-describedby"] == "vocabulary-help vocabulary-error"
    assert "Vocabulary line 1" in _soup(vocabulary).select_one("#vocabulary-error").text


def test_a_title_or_company_wider_than_its_column_is_refused_not_a_server_error(pack, client_as):
    """PostgreSQL refuses a value wider than the column (255): it was a 500 there, and SQLite stored it."""
    admin = client_as("PlatformAdmin")
    edited = admin.post("/packs/ops/edit", data={"title": "t" * 256, "description": "x"})
    assert edited.status_code == 422
    assert "A pack's title has at most 255 characters; this one has 256." in _soup(edited).select_one(".error").text
    created = admin.post("/packs/", data={"slug": "wide", "title": "t" * 256, "kind": "generic"})
    company = admin.post("/packs/", data={"slug": "wide", "title": "Wide", "kind": "company", "company": "c" * 256})
    assert (created.status_code, company.status_code) == (422, 422)
    assert "A company's name has at most 255 characters; this one has 256." in _soup(company).select_one(".error").text
    assert [p.slug for p in Pack.select()] == ["ops"] and Pack.get(Pack.slug == "ops").title == "Operations"
    assert admin.post("/packs/ops/edit", data={"title": "t" * 255, "description": "x"}).status_code == 303


def test_a_description_over_its_limit_is_refused_on_both_forms(pack, client_as):
    """A pack's description had no limit: a PlatformAdmin's form of 4 MB stored one, which its pack page then
    drew on every visit and the audit entry of each later change held twice. It has a limit as an agent's has."""
    admin = client_as("PlatformAdmin")
    wide = "d" * (MAX_DESCRIPTION_CHARS + 1)
    created = admin.post("/packs/", data={"slug": "wide", "title": "Wide", "kind": "generic", "description": wide})
    edited = admin.post("/packs/ops/edit", data={"title": "Operations", "description": wide})
    assert (created.status_code, edited.status_code) == (422, 422)
    message = f"A pack's description has at most {MAX_DESCRIPTION_CHARS:,} characters; this one has {len(wide):,}."
    assert message in _soup(created).select_one(".error").text and message in _soup(edited).select_one(".error").text
    assert [p.slug for p in Pack.select()] == ["ops"] and Pack.get(
        Pack.slug == "ops"
    ).description == "Runbooks and notes"
    assert _soup(admin.get("/packs/ops/edit")).select_one("#description")["maxlength"] == str(MAX_DESCRIPTION_CHARS)
    assert _soup(admin.get("/packs/")).select_one("#description")["maxlength"] == str(MAX_DESCRIPTION_CHARS)
    full = "d" * MAX_DESCRIPTION_CHARS
    assert admin.post("/packs/ops/edit", data={"title": "Operations", "description": full}).status_code == 303
    # the browser counted each line break as one character against maxlength and sends it as two
    lines = ("d" * 99 + "\r\n") * (MAX_DESCRIPTION_CHARS // 100)
    assert admin.post("/packs/ops/edit", data={"title": "Operations", "description": lines}).status_code == 303
    assert Pack.get(Pack.slug == "ops").description == lines.replace("\r\n", "\n").strip()


def test_a_company_pack_is_for_an_existing_company_and_the_form_never_adds_one(app, client_as, users):
    admin = client_as("PlatformAdmin")
    field = _soup(admin.get("/packs/")).select_one("form select#company")
    assert [o["value"] for o in field.select("option")] == ["", "Acme Test Co"]  # none, then the Member's company
    posted = {"slug": "initech", "title": "Initech specs", "kind": "company", "company": "Initech"}
    refused = admin.post("/packs/", data=posted)
    assert refused.status_code == 422
    page = _soup(refused)
    error = page.select_one(".error")
    assert "Company" in error.text and "“Initech”" in error.text and "no existing company" in error.text
    company = page.select_one("form select#company")  # the field the error names, marked and described by it
    assert company["aria-invalid"] == "true" and error["id"] in company["aria-describedby"].split()
    assert page.select_one("input#title")["value"] == "Initech specs"  # what was typed stays
    assert [c.name for c in Company.select()] == ["Acme Test Co"] and not Pack.select().exists()

    created = admin.post("/packs/", data={**posted, "company": "Acme Test Co"})
    assert created.status_code == 303
    assert Pack.get(Pack.slug == "initech").company.name == "Acme Test Co"
    assert [c.name for c in Company.select()] == ["Acme Test Co"]


def test_the_command_line_still_names_a_new_company_for_a_pack(app):
    """Setting a deployment up: ``cairn packs create --company`` (and the demo seed) add the company when new."""
    pack = create_pack("globex", "Globex material", "company", "Globex", add_company=True)
    assert pack.company.name == "Globex"
    with pytest.raises(Refused, match="no existing company"):
        create_pack("initech", "Initech", "company", "Initech")


def test_read_only_staff_see_no_pack_actions(pack, client_as):
    for role in ("AgentBuilder", "Auditor"):
        page = _soup(client_as(role).get("/packs/ops"))
        assert page.select_one('[aria-label="Pack actions"]') is None
    admin = _soup(client_as("PlatformAdmin").get("/packs/ops"))
    links = {a.text: a["href"] for a in admin.select('[aria-label="Pack actions"] a')}
    assert links == {"Edit pack": "/packs/ops/edit", "Delete pack…": "/packs/ops/delete"}


# --- the confirmation ----------------------------------------------------------------------------


def test_the_confirmation_names_what_will_go(filled, client_as):
    page = _soup(client_as("PlatformAdmin").get("/packs/ops/delete"))
    items = [" ".join(li.text.split()) for li in page.select(".pack-contents li")]
    figures = Figure.select().count()  # all of them are the Word file's, in ops
    assert figures > 0
    passages = Passage.select().join(Revision).join(Document).where(Document.pack == Pack.get(slug="ops")).count()
    assert items == [
        "3 documents, with 3 revisions",
        f"{figures + 1} stored files (originals and images), of them {figures} figures",
        f"{passages} searchable passages and the pack's search index",
        "the grant to 1 agent: Service desk",
    ]
    assert page.select_one("input[name=generation]")["value"] == "3"
    assert "stays reserved" in page.text


# --- deleting ------------------------------------------------------------------------------------


def test_deleting_removes_everything_and_keeps_the_slug_reserved(app, filled, client_as):
    ops = Pack.get(Pack.slug == "ops")
    assert (_files_root(app) / f"packs/{ops.id}").is_dir() and _index_folder(app, "ops").is_dir()
    admin = client_as("PlatformAdmin")
    response = admin.post("/packs/ops/delete", data={"generation": "3"})
    assert response.status_code == 303 and response.headers["Location"].endswith("/packs/")
    listing = _soup(admin.get("/packs/"))
    assert "Deleted the pack Operations: 3 documents, 3 revisions" in listing.select_one(".flashes").text
    assert "/packs/ops" not in str(listing.select("table.list a"))

    assert admin.get("/packs/ops").status_code == 404
    assert admin.get("/packs/ops/documents/spool-overflow").status_code == 404
    assert not (_files_root(app) / f"packs/{ops.id}").exists()
    assert not _index_folder(app, "ops").exists()
    documents_of_ops = Document.select().where(Document.pack == ops)
    assert documents_of_ops.count() == 3 and all(d.is_deleted for d in documents_of_ops)  # tombstones only
    assert Revision.select().join(Document).where(Document.pack == ops).count() == 0
    assert Figure.select().count() == 0 and PendingIndexUpdate.select().count() == 0
    assert [g.pack.slug for g in AgentGrant.select()] == ["other"]
    assert search_packs([Pack.get(Pack.slug == "other")], "spool requests").hits  # the other pack is untouched

    with pytest.raises(Refused) as refused:
        create_pack("ops", "Operations again")
    assert refused.value.reason == "slug_reused"
    assert client_as("PlatformAdmin").post("/packs/", data={"slug": "ops", "title": "Again"}).status_code == 422


def test_a_deletion_killed_after_its_index_went_is_finished_by_the_servers_start(app, filled):
    """Killed after the deleted pack's index folder was removed and before its "drop the index" row was: the server's
    start looked only at deleted packs whose folder was still there, and the row stayed (found by a kill probe)."""
    ops = Pack.get(Pack.slug == "ops")
    deletion.delete_pack(None, ops, 3)
    PendingIndexUpdate.create(pack=ops, doc_id="", generation=Pack.get_by_id(ops.id).index_generation)  # as left
    repair_indexes_at_start(app)  # the server's start: every index checked
    assert PendingIndexUpdate.select().count() == 0


def test_runs_that_cited_the_pack_show_the_passage_unavailable(app, filled, client_as):
    deletion.delete_pack(None, Pack.get(Pack.slug == "ops"), 3)
    ops_rows = [r for r in RunReference.select().where(RunReference.run == filled.id) if r.pack_slug == "ops"]
    assert ops_rows and all(r.text is None for r in ops_rows)
    page = _soup(client_as("AgentBuilder").get(f"/runs/{filled.id}"))
    unavailable = page.select(".passage-unavailable")
    assert len(unavailable) == len(ops_rows)
    assert {p.text for p in unavailable} == {"Passage unavailable for this source."}
    agent_history = [e.detail for e in AuditLog.select().where(AuditLog.action == "agent.update")]
    assert agent_history == [{"revoked": ["ops"], "because": "pack deleted", "by": "command line"}]


def test_a_confirmation_older_than_a_change_deletes_nothing(app, filled, client_as):
    admin = client_as("PlatformAdmin")
    documents.upload_file(Pack.get(Pack.slug == "ops"), "late.md", b"# Late\n\nAdded after the confirmation.\n", None)
    response = admin.post("/packs/ops/delete", data={"generation": "3"})
    assert response.status_code == 409
    page = _soup(response)
    assert "changed after the confirmation was shown" in page.select_one(".error").text
    assert "4 documents" in page.select_one(".pack-contents").text  # the counts as they are now
    assert not Pack.get(Pack.slug == "ops").is_deleted
    assert admin.post("/packs/ops/delete", data={"generation": "4"}).status_code == 303


def test_two_admins_deleting_at_once_delete_once_and_the_other_gets_not_found(app, filled):
    ops = Pack.get(Pack.slug == "ops")
    outcomes: list[str] = []
    start = threading.Barrier(2)

    def delete_as_one_admin():
        with app.app_context():
            start.wait()
            try:
                deletion.delete_pack(None, ops, 3)
                outcomes.append("deleted")
            except NotFound:
                outcomes.append("not found")

    threads = [threading.Thread(target=delete_as_one_admin) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["deleted", "not found"]
    # the loser is told the pack was deleted by someone else, not only that there is nothing here
    with pytest.raises(PackDeleted) as deleted:
        deletion.delete_pack(None, ops, 3)
    assert "deleted by someone else" in deleted.value.message
    assert AuditLog.select().where(AuditLog.action == "pack.delete").count() == 1
    assert not _index_folder(app, "ops").exists()


def test_the_second_admins_click_is_a_not_found_page_not_an_error(app, filled, client_as):
    first, second = client_as("PlatformAdmin"), client_as("PlatformAdmin")
    assert first.post("/packs/ops/delete", data={"generation": "3"}).status_code == 303
    assert second.post("/packs/ops/delete", data={"generation": "3"}).status_code == 404


def test_an_upload_that_started_before_the_deletion_stores_nothing(app, filled):
    stale = Pack.get(Pack.slug == "ops")  # as an upload request loaded it, before the deletion committed
    deletion.delete_pack(None, Pack.get(Pack.slug == "ops"), 3)
    before = Document.select().count()
    with pytest.raises(NotFound):
        documents.upload_file(stale, "late.md", b"# Late\n\nToo late.\n", None)
    assert Document.select().count() == before and Revision.select().count() == 1  # the other pack's
    assert not (_files_root(app) / f"packs/{stale.id}").exists()
    assert not _index_folder(app, "ops").exists()


def test_a_kill_after_the_commit_is_finished_by_the_next_start(app, filled, monkeypatch):
    """Killed between the database commit and the removal of files and index: nothing is half
    there for anyone (the pack is gone from every page), and the next start removes the rest."""
    ops = Pack.get(Pack.slug == "ops")

    class Killed(BaseException):
        pass

    def killed(_relative):
        raise Killed

    monkeypatch.setattr(storage, "remove_tree", killed)
    with pytest.raises(Killed):
        deletion.delete_pack(None, ops, 3)
    monkeypatch.undo()
    assert (
        Pack.get_by_id(ops.id).is_deleted and Revision.select().join(Document).where(Document.pack == ops).count() == 0
    )
    assert (_files_root(app) / f"packs/{ops.id}").is_dir() and _index_folder(app, "ops").is_dir()
    assert PendingIndexUpdate.select().where(PendingIndexUpdate.pack == ops.id).count() == 1

    repair_indexes_at_start(app, check_every_index=False)  # what `cairn serve` does at start
    assert not (_files_root(app) / f"packs/{ops.id}").exists()
    assert not _index_folder(app, "ops").exists()
    assert PendingIndexUpdate.select().count() == 0
