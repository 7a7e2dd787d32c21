"""Documents: revisions, identical uploads, version conflicts, deletion, refusals storing nothing."""

from __future__ import annotations

import unicodedata

import peewee
import pytest
from bs4 import BeautifulSoup

from helpers import FIXTURES_DIR, audit_log_refusing_writes, data_snapshot, upload
from portal.documents import editing, services
from portal.documents.readers import ReaderAccess
from portal.errors import Refused, TitleConflict, VersionConflict
from portal.models import REVISIONS_KEPT, AuditLog, Document, Passage, Revision
from portal.search.service import search_packs

RUNBOOK = b"""# IDoc backlog runbook

## Symptoms

Inbound IDocs pile up in status 64 and the partner complains about late orders.

## Fix

Restart the inbound queue and reprocess the IDocs with the report RBDAPP01.
"""


def test_upload_creates_document_revision_passages_and_index_entry(app, pack, users):
    outcome = services.upload_file(pack, "idoc-backlog.md", RUNBOOK, users["PlatformAdmin"])
    assert outcome.accepted and outcome.created
    document = outcome.document
    assert (document.doc_id, document.title, document.current_version) == ("idoc-backlog", "IDoc backlog runbook", 1)
    revision = document.current_revision()
    assert revision.text == RUNBOOK.decode()
    assert revision.sha256 == services.sha256_hex(RUNBOOK.decode())
    passages = list(Passage.select().where(Passage.revision == revision).order_by(Passage.ordinal))
    assert passages and all(RUNBOOK.decode()[p.char_start : p.char_end] == p.text for p in passages)
    hits = search_packs([pack], "RBDAPP01").hits
    assert [h.document_id for h in hits] == ["idoc-backlog"]
    assert hits[0].heading_path == "IDoc backlog runbook > Fix"


def test_same_name_makes_a_new_revision_and_identical_content_makes_none(app, pack, users):
    services.upload_file(pack, "idoc-backlog.md", RUNBOOK, users["PlatformAdmin"])
    second = services.upload_file(pack, "idoc-backlog.md", RUNBOOK + b"\nEscalate after two hours.\n", None)
    assert second.accepted and not second.created and second.revision.version == 2
    same = services.upload_file(pack, "idoc-backlog.md", RUNBOOK + b"\nEscalate after two hours.\n", None)
    assert same.unchanged and same.revision.version == 2
    assert Revision.select().count() == 2
    assert [h.version for h in search_packs([pack], "escalate").hits] == [2]
    assert search_packs([pack], "RBDAPP01").hits[0].version == 2  # old passages left the index


def test_edit_makes_a_revision_and_a_stale_edit_conflicts_and_changes_nothing(app, pack, users):
    document = services.upload_file(pack, "idoc-backlog.md", RUNBOOK, None).document
    editing.edit_text(document, RUNBOOK.decode() + "\nCall the partner desk.\n", 1, users["PlatformAdmin"])
    before = data_snapshot(app)
    with pytest.raises(VersionConflict) as conflict:
        editing.edit_text(Document.get_by_id(document.id), "Someone else's text", 1, None)
    assert conflict.value.current == 2 and "version 1" in str(conflict.value)
    assert data_snapshot(app) == before
    assert Document.get_by_id(document.id).current_revision().text.endswith("Call the partner desk.\n")


def test_stale_delete_conflicts(app, pack):
    document = services.upload_file(pack, "idoc-backlog.md", RUNBOOK, None).document
    editing.edit_text(document, "# New\n\nNew text.\n", 1, None)
    with pytest.raises(VersionConflict) as conflict:
        editing.delete_document(Document.get_by_id(document.id), 1)
    assert str(conflict.value) == (
        "This document changed while you were deciding: you confirmed deleting version 1, but it is now at "
        "version 2. Nothing was deleted; look at the new version and delete it again if you still want to."
    )
    assert not Document.get_by_id(document.id).is_deleted


def test_only_the_newest_ten_revisions_are_kept(app, pack):
    document = services.upload_file(pack, "notes.md", b"# Notes\n\nversion 1\n", None).document
    for version in range(2, 13):
        editing.edit_text(Document.get_by_id(document.id), f"# Notes\n\nversion {version}\n", version - 1, None)
    versions = [r.version for r in Revision.select().where(Revision.document == document).order_by(Revision.version)]
    assert versions == list(range(13 - REVISIONS_KEPT, 13))


def test_delete_removes_everything_and_keeps_a_tombstone(app, pack, client_as):
    document = services.upload_file(pack, "idoc-backlog.md", RUNBOOK, None).document
    editing.delete_document(document, 1)
    tombstone = Document.get_by_id(document.id)
    assert tombstone.is_deleted
    assert Revision.select().count() == 0 and Passage.select().count() == 0
    assert search_packs([pack], "RBDAPP01").no_evidence
    again = services.upload_file(pack, "idoc-backlog.md", RUNBOOK, None)
    assert again.refused.reason == "id_reused"
    admin = client_as("PlatformAdmin")
    assert admin.get("/packs/ops/documents/idoc-backlog").status_code == 404


@pytest.mark.parametrize(
    "name, data, reason, limit_words",
    [
        ("empty.md", b"", "empty", "no text"),
        ("blank.txt", " \t\n\r\n\u00a0\u00a0\n".encode(), "empty", "no text"),
        ("huge.md", b"a" * (4 * 1024 * 1024 + 1), "too_large", "4 MB"),
        ("long.txt", ("word " * 80_001).encode(), "too_many_chars", "400,000 characters"),
        ("sheet.xlsx", b"PK\x03\x04", "unsupported_type", ".xlsx"),
    ],
)
def test_refusals_name_their_limit_and_store_nothing(app, pack, client_as, name, data, reason, limit_words):
    before = data_snapshot(app)
    response = upload(client_as("PlatformAdmin"), "ops", name, data, "application/octet-stream")
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    assert f'data-reason="{reason}"' in page and limit_words in page
    assert data_snapshot(app) == before


def test_upload_of_a_real_file_through_the_browser_form(app, pack, client_as):
    response = upload(client_as("PlatformAdmin"), "ops", "idoc-backlog.md", RUNBOOK)
    assert response.status_code == 200
    assert "added as" in response.get_data(as_text=True)
    assert Document.select().count() == 1


def test_an_accented_letter_is_one_word_in_either_unicode_form(app, pack, client_as):
    """ "Zürich" written as "u" and a combining accent (as macOS writes text) was stored so: the word typed in a
    browser found nothing, and the other way round (attack probe). Text is composed when read, sent or stored."""
    decomposed = unicodedata.normalize("NFD", "# Zürich rollout\n\nThe Zürich café rollout ended on 2 March.\n")
    assert "u\u0308" in decomposed
    services.upload_file(pack, "zurich.md", decomposed.encode(), None)
    assert Document.get().current_revision().text == unicodedata.normalize("NFC", decomposed)
    assert [h.document_id for h in search_packs([pack], "Zürich").hits] == ["zurich"]
    typed_apart = unicodedata.normalize("NFD", "café")
    page = client_as("PlatformAdmin").get("/packs/ops/search", query_string={"q": typed_apart})
    assert "The Zürich café rollout" in BeautifulSoup(page.data, "html.parser").get_text()


@pytest.mark.parametrize(
    "sent, status",
    [
        ("bytes=0-1", 206),
        ("chars=0-1", 200),  # a unit the server does not know is ignored (RFC 9110)
        ("bytes=abc", 200),
        ("bytes=5-2", 200),
        ("bytes=0-1,2-3", 200),
        ("bytes=999999-", 416),  # one range of bytes past the end: not satisfiable
    ],
)
def test_a_download_ignores_a_range_that_is_not_one_range_of_bytes(app, pack, client_as, sent, status):
    """Werkzeug answered an unknown unit, an invalid range or several ranges with 416 (attack probe)."""
    name = "pypdf_side-by-side-subfig.pdf"
    document = services.upload_file(pack, name, (FIXTURES_DIR / name).read_bytes(), None).document
    admin = client_as("PlatformAdmin")
    for address in (f"/packs/ops/documents/{document.doc_id}/original", "/static/cairn.css"):
        response = admin.get(address, headers={"Range": sent})
        assert response.status_code == status, address
        if status == 200:
            assert response.data == admin.get(address).data


def test_a_document_of_one_page_says_one_page(app, pack, client_as):
    """The header said "version 1 · 1 pages" (browser walkthrough)."""
    name = "pypdf_side-by-side-subfig.pdf"  # one page
    document = services.upload_file(pack, name, (FIXTURES_DIR / name).read_bytes(), None).document
    page = client_as("PlatformAdmin").get(f"/packs/ops/documents/{document.doc_id}").get_data(as_text=True)
    assert "· 1 page" in page and "1 pages" not in page


def test_edit_page_conflict_message(app, pack, client_as):
    services.upload_file(pack, "idoc-backlog.md", RUNBOOK, None)
    admin = client_as("PlatformAdmin")
    ok = admin.post("/packs/ops/documents/idoc-backlog/edit", data={"text": "# B\n\nbody\n", "expected_version": "1"})
    assert ok.status_code == 303
    stale = admin.post(
        "/packs/ops/documents/idoc-backlog/edit", data={"text": "# C\n\nother\n", "expected_version": "1"}
    )
    assert stale.status_code == 409
    page = BeautifulSoup(stale.data, "html.parser")
    assert "now at version 2" in page.select_one(".error").text
    assert [tag.name for tag in page.select("[autofocus]")] == ["p"]  # the message, not the title
    fresh = BeautifulSoup(admin.get("/packs/ops/documents/idoc-backlog/edit").data, "html.parser")
    assert [tag.get("id") for tag in fresh.select("[autofocus]")] == ["title"]  # the first thing to edit
    # What was typed is kept, now based on version 2, with version 2's text beside it to compare ...
    assert page.select_one("textarea#text").text == "# C\n\nother\n"
    assert page.select_one("input[name=expected_version]")["value"] == "2"
    assert page.select_one(".their-version pre").text == "# B\n\nbody\n"
    # ... so saving again replaces it knowingly instead of failing once more.
    again = admin.post(
        "/packs/ops/documents/idoc-backlog/edit", data={"text": "# C\n\nother\n", "expected_version": "2"}
    )
    assert again.status_code == 303
    assert Document.get().current_revision().text == "# C\n\nother\n"


def test_a_title_given_meanwhile_stays_through_a_text_saved_from_an_older_page(app, pack, users):
    """Admin A retitles; admin B, whose page showed the old title, saves new text: B's page did not change the
    title, so A's stays (it was put back silently). B's own new title over A's is a conflict."""
    services.upload_file(pack, "idoc-backlog.md", RUNBOOK, None)
    document = Document.get(Document.doc_id == "idoc-backlog")
    shown = document.title
    editing.edit_document(document, 1, users["PlatformAdmin"], "Title by A", None, title_based_on=shown)
    fresh = Document.get_by_id(document.id)
    saved = editing.edit_document(fresh, 1, users["PlatformAdmin"], shown, "# B\n\nNew text by B.\n", None, shown)
    assert saved.version == 2 and Document.get_by_id(document.id).title == "Title by A"
    with pytest.raises(TitleConflict):
        editing.edit_document(
            Document.get_by_id(document.id), 2, users["PlatformAdmin"], "Title by B", "# B\n\nMore.\n", None, shown
        )
    assert Document.get_by_id(document.id).title == "Title by A"


def test_a_new_title_and_who_may_read_are_saved_together_or_not_at_all(app, pack, users):
    """The edit page's title and reader access are one change: when the title's part fails (here its audit
    entry, as a full disk or a conflicting save between two transactions would), who may read is not changed
    either. Saved in two transactions, the page reported a failure while the access change stood."""
    services.upload_file(pack, "idoc-backlog.md", RUNBOOK, None)
    document = Document.get(Document.doc_id == "idoc-backlog")
    before = data_snapshot(app)
    with audit_log_refusing_writes(app.config["DATABASE"], "document.retitle"):
        with pytest.raises(peewee.DatabaseError):
            editing.edit_document(document, 1, users["PlatformAdmin"], "IDoc backlog", None, ReaderAccess("shared", ()))
    assert data_snapshot(app) == before
    unchanged = Document.get_by_id(document.id)
    assert (unchanged.title, unchanged.visibility, unchanged.current_version) == (document.title, "staff", 1)

    editing.edit_document(document, 1, users["PlatformAdmin"], "IDoc backlog", None, ReaderAccess("shared", ()))
    saved = Document.get_by_id(document.id)
    assert (saved.title, saved.visibility, saved.current_version) == ("IDoc backlog", "shared", 2)
    assert saved.title_by_hand
    actions = [entry.action for entry in AuditLog.select().order_by(AuditLog.id)]
    assert actions[-2:] == ["document.reader_access", "document.retitle"]


def test_refused_edit_text_is_kept_in_the_form(app, pack, client_as):
    services.upload_file(pack, "idoc-backlog.md", RUNBOOK, None)
    response = client_as("PlatformAdmin").post(
        "/packs/ops/documents/idoc-backlog/edit", data={"text": "   \n", "expected_version": "1"}
    )
    assert response.status_code == 422 and "no text" in response.get_data(as_text=True)


def test_document_ids_follow_the_id_rule():
    assert services.document_id_for("Runbook – IDoc (v2).md") == "runbook-idoc-v2"
    assert services.document_id_for("a" * 120 + ".md") == "a" * 80
    with pytest.raises(Refused):
        services.document_id_for("___.md")
