"""A title, a name, a question or a document made only of characters shown as nothing is as empty as one of spaces.

Found by an attack probe: a pack titled with two zero-width characters listed as a link with nothing to click,
an agent could be offered under such a name, a question of them became a run and a conversation whose heading
showed nothing, while a title of spaces was refused. One rule (``controls.shows_nothing``) decides everywhere.
"""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from portal.agents.services import create_agent
from portal.api.tokens import create_token
from portal.companies import checked_name
from portal.controls import shows_nothing
from portal.documents import editing
from portal.documents.services import upload_file
from portal.errors import Refused
from portal.feedback.services import checked_note
from portal.models import Agent, Document, Pack, Run
from portal.packs.services import create_pack

# zero-width space, word joiner, soft hyphen, Hangul filler, blank Braille pattern, byte order mark, left-to-right
# mark, combining grapheme joiner, tag space
INVISIBLE = ["\u200b", "\u2060", "\u00ad", "\u3164", "\u2800", "\ufeff", "\u200e", "\u034f", "\U000e0020"]
NOTHING = "\u200b\u2060 \u3164"


def test_text_made_only_of_characters_shown_as_nothing_shows_nothing():
    assert all(shows_nothing(f" {c}\t{c} ") for c in INVISIBLE)
    assert shows_nothing("") and shows_nothing(" \n ")
    # a visible character anywhere is something, whatever surrounds it
    assert not any(shows_nothing(f"{c}a{c}") for c in INVISIBLE)
    assert not shows_nothing("\u200b.") and not shows_nothing("日本")


def test_a_pack_an_agent_a_token_and_a_document_title_of_nothing_are_refused(app, users, pack):
    admin = users["PlatformAdmin"]
    with pytest.raises(Refused, match="A pack needs a title."):
        create_pack("invisible", NOTHING)
    with pytest.raises(Refused, match="An agent needs a name."):
        create_agent(admin, "invisible-agent", NOTHING, "preferred")
    with pytest.raises(Refused, match="Give the token a name"):
        create_token(admin, NOTHING)
    outcome = upload_file(pack, "notes.md", b"# Notes\n\nThe spool range is SPO_NUM.\n", admin)
    document = outcome.document
    with pytest.raises(Refused, match="A document needs a title."):
        editing.edit_document(document, 1, admin, NOTHING)
    assert Document.get_by_id(document.id).title == "Notes"
    assert not Pack.select().where(Pack.slug == "invisible").exists()
    assert not Agent.select().where(Agent.slug == "invisible-agent").exists()


def test_a_document_of_nothing_is_refused_as_empty_and_nothing_is_stored(app, users, pack):
    admin = users["PlatformAdmin"]
    refused = upload_file(pack, "blank.md", NOTHING.encode(), admin).refused
    assert refused is not None and refused.message.startswith("The document has no text")
    assert not Document.select().where(Document.doc_id == "blank").exists()
    document = upload_file(pack, "notes.md", b"# Notes\n\nThe spool range is SPO_NUM.\n", admin).document
    with pytest.raises(Refused, match="The document has no text"):
        editing.edit_text(document, NOTHING, expected_version=1, user=admin)
    assert Document.get_by_id(document.id).current_revision().version == 1


def test_a_note_or_a_company_of_nothing_is_none():
    assert checked_note(NOTHING) == "" and checked_note(" a\u200b ") == "a\u200b"
    assert checked_name(NOTHING) == ""


@pytest.mark.parametrize("htmx", [True, False])
def test_a_question_of_nothing_is_refused_on_the_try_page_and_nothing_is_stored(app, users, pack, client_as, htmx):
    create_agent(users["PlatformAdmin"], "ops-helper", "Ops helper", "preferred", pack_slugs=["ops"])
    runs = Run.select().count()
    headers = {"HX-Request": "true"} if htmx else {}
    response = client_as("PlatformAdmin").post("/agents/ops-helper/try", data={"question": NOTHING}, headers=headers)
    assert response.status_code == 422
    page = BeautifulSoup(response.get_data(as_text=True), "html.parser")
    assert "the text was empty" in page.select_one(".error").text
    assert Run.select().count() == runs


def test_a_pack_title_of_nothing_is_refused_in_the_browser_form(pack, client_as):
    response = client_as("PlatformAdmin").post("/packs/ops/edit", data={"title": NOTHING, "description": "x"})
    assert response.status_code == 422
    assert "A pack needs a title." in BeautifulSoup(response.get_data(as_text=True), "html.parser").text
    assert Pack.get(Pack.slug == "ops").title == "Operations"


def test_a_company_pack_naming_a_company_of_nothing_is_refused_and_an_old_one_is_granted_to_no_agent(app, users):
    """`cairn packs create … --kind company --company $'\\u200b'` made a company pack of no company; granting it
    then failed with a server error (found by a probe)."""
    with pytest.raises(Refused, match="Choose the company whose material this company pack holds"):
        create_pack("nobody", "Nobody's", "company", company_name="\u200b", add_company=True)
    assert not Pack.select().where(Pack.slug == "nobody").exists()
    stored = create_pack("stored", "Stored before", "company", company_name="Acme Test Co", add_company=True)
    Pack.update(company=None).where(Pack.id == stored.id).execute()  # as the probe's command left one
    with pytest.raises(Refused, match="names no company: it can be granted to no agent"):
        create_agent(users["PlatformAdmin"], "acme-helper", "Acme helper", "preferred", "Acme Test Co", "", ["stored"])


def test_a_heading_or_an_own_title_of_nothing_gives_the_file_name_as_title(app, users, pack):
    """The first heading is a document's title: "# \u200b" made one with nothing to click (found by a review)."""
    from portal.documents.services import title_for

    admin = users["PlatformAdmin"]
    outcome = upload_file(pack, "spool-notes.md", "# \u200b\u2060\n\nThe spool range is SPO_NUM.\n".encode(), admin)
    assert outcome.document.title == "spool-notes"
    assert title_for("scan.pdf", "text", "pdf", own_title="\u200b") == "scan"
    assert title_for("notes.md", "#\n\nIntro.\n\n# Real Title\n", "markdown") == "Real Title"  # the next heading
    # the supplementary variation selectors show nothing; the Arabic number sign, a format character, shows
    assert shows_nothing("\U000e0100\U000e01ef") and not shows_nothing("\u0600")


@pytest.mark.parametrize("filler", ["\u3164\u3164", "\u115f", "\uffa0"])
def test_a_file_named_only_with_hangul_fillers_is_refused_and_nothing_is_stored(app, users, pack, filler):
    """Unicode counts a Hangul filler as a letter; "ㅤㅤ.txt" was stored titled with two fillers, a link with nothing
    to click (found by an attack probe)."""
    documents = Document.select().count()
    outcome = upload_file(pack, f"{filler}.txt", b"plain body text here\n", users["PlatformAdmin"])
    assert outcome.refused is not None and "has no letters or digits" in outcome.refused.message
    assert Document.select().count() == documents


def test_a_named_document_whose_file_name_shows_nothing_is_titled_by_its_id(app, users, pack):
    """Through the API the id is the caller's: the file name need not name it, but the title came from it."""
    outcome = upload_file(pack, "\u3164.txt", b"plain body text here\n", users["PlatformAdmin"], doc_id="filler-notes")
    assert outcome.refused is None
    assert Document.get(Document.doc_id == "filler-notes").title == "filler-notes"
