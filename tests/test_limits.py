"""Every limit is written once, in portal/ingest/limits.py; pages, cairn.js and messages format it from there."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from helpers import template_lines_matching, upload
from portal.documents import services
from portal.errors import Refused
from portal.ingest import limits

ROOT = Path(__file__).resolve().parent.parent

# Each limit as a page or message would write it out by hand (labels and bare values).
WRITTEN_IN_TEXT = re.compile(
    r"\b(4|5|50) ?MB\b|\b400,?000\b|\b8,?000,?000\b|\b2,?000\b|\b1,000\b|\b300 pages|\b32 pixels"
)
# In Python only string literals count (a 1000 that turns seconds into milliseconds is no limit).
WRITTEN_IN_PYTHON = re.compile(
    r"\b(4|5|50) ?MB\b|\b400,000\b|\b8,000,000\b|\b2,000\b|\b1,000 (fields|parts)|\b300 pages|\b32 pixels"
)
ALLOWED = {
    ROOT / "portal/ingest/limits.py",  # the owner
    # The cap on a model's response is its own limit (MAX_RESPONSE_BYTES), not an upload's; it belongs
    # to portal/answers/, which formats it by hand.
    ROOT / "portal/answers/model_client.py",
}


def _templates_and_scripts():
    yield from (ROOT / "templates").rglob("*.html")
    yield from (p for p in (ROOT / "static").rglob("*.js") if "vendor" not in p.parts)


def _python():
    data = ("demo/corpus", "demo/sources")
    return [p for p in (ROOT / "portal").rglob("*.py") if not any(d in p.as_posix() for d in data)]


def test_no_page_script_or_message_writes_a_limit_by_hand():
    found = []
    for path in _templates_and_scripts():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if WRITTEN_IN_TEXT.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    for path in _python():
        if path in ALLOWED:
            continue
        with path.open(encoding="utf-8") as handle:
            for token in tokenize.generate_tokens(handle.readline):
                if token.type == tokenize.STRING and WRITTEN_IN_PYTHON.search(token.string):
                    found.append(f"{path.relative_to(ROOT)}:{token.start[0]}: {token.string}")
    assert not found, "format these from portal/ingest/limits.py:\n" + "\n".join(found)


def test_the_check_finds_a_limit_written_by_hand():
    assert WRITTEN_IN_TEXT.search('<label for="files">at most 4 MB each</label>')
    assert WRITTEN_IN_TEXT.search('maxlength="2000"')
    strings = [
        t.string
        for t in tokenize.generate_tokens(
            io.StringIO('message = f"The PDF has {n} pages; the limit is 300 pages."\nms = seconds * 1000\n').readline
        )
        if t.type == tokenize.STRING
    ]
    assert [s for s in strings if WRITTEN_IN_PYTHON.search(s)] == strings and len(strings) == 1


def test_labels_are_formatted_from_the_constants():
    assert limits.megabytes(4 * 1024 * 1024) == "4 MB" and limits.megabytes(5 * 1024 * 1024) == "5 MB"
    assert limits.number(400_000) == "400,000"
    named = limits.limits()
    assert named["file_bytes"] == limits.Limit(limits.MAX_FILE_BYTES, "4 MB")
    assert named["question_chars"].label == "2,000" and named["image_pixels"].label == "8,000,000"


@pytest.fixture
def small_limits(monkeypatch):
    """Limits other than today's, set before the app reads them (request this fixture before ``app``)."""
    monkeypatch.setattr(limits, "MAX_FILE_BYTES", 2 * 1024 * 1024)
    monkeypatch.setattr(limits, "MAX_BATCH_BYTES", 5 * 1024 * 1024)
    monkeypatch.setattr(limits, "MAX_QUESTION_CHARS", 1_500)
    monkeypatch.setattr(limits, "MAX_SEARCH_CHARS", 1_200)


def test_the_upload_form_and_its_script_message_show_the_limit_of_the_constant(small_limits, app, pack, client_as):
    page = BeautifulSoup(client_as("PlatformAdmin").get("/packs/ops").data, "html.parser")
    assert "at most 2 MB each" in page.select_one("label[for=files]").text
    form = page.select_one("#upload-form")
    assert form["data-file-bytes"] == str(2 * 1024 * 1024)
    assert form["data-not-sent"] == (
        "refused — The file is {size}; the limit is 2 MB per file. Split the document and upload the parts. "
        "It was not sent."
    )
    assert "Sent together, the files may be at most 5 MB." in page.select_one("#files-help noscript").text
    assert page.select_one("#q")["maxlength"] == "1200"
    assert "4 MB" not in str(page)


def test_the_413_names_the_limit_of_the_constant(small_limits, app, pack, client_as):
    assert app.config["MAX_CONTENT_LENGTH"] == 2 * 1024 * 1024 + 64 * 1024
    services.upload_file(pack, "notes.md", b"# Notes\n\nshort\n", None)
    response = client_as("PlatformAdmin").post(
        "/packs/ops/documents/notes/edit", data={"text": "a" * (3 * 1024 * 1024), "expected_version": "1"}
    )
    assert response.status_code == 413
    text = response.get_data(as_text=True)
    assert "larger than the 2 MB limit per file" in text and "4 MB" not in text


def test_an_upload_over_the_batch_limit_names_both_limits_of_the_constants(small_limits, app, pack, client_as):
    sizes = {"one.md": 1024 * 1024, "big.md": 3 * 1024 * 1024, "two.md": 1024 * 1024 + 512 * 1024}
    files = [(io.BytesIO(b"a" * size), name, "text/markdown") for name, size in sizes.items()]
    response = client_as("PlatformAdmin").post(
        "/packs/ops/documents", data={"files": files}, content_type="multipart/form-data"
    )
    assert response.status_code == 413
    page = BeautifulSoup(response.data, "html.parser")
    lines = [li.get_text(" ", strip=True) for li in page.select("#upload-outcomes .outcome")]
    assert [li.strong.text for li in page.select("#upload-outcomes .outcome")] == list(sizes)
    assert "over the 5 MB limit for one upload" in lines[0] and "over the 5 MB limit for one upload" in lines[2]
    assert "The file is 3.0 MB; the limit is 2 MB per file." in lines[1]
    assert "4 MB" not in str(page) and "16 MB" not in str(page)


def test_a_file_over_the_limit_is_refused_naming_the_limit_of_the_constant(small_limits, app, pack, client_as):
    # Over the file limit but within the request's: read and refused by ingest, not a 413.
    response = upload(
        client_as("PlatformAdmin"), "ops", "note.md", b"# Note\n\n" + b"a" * (2 * 1024 * 1024), **{"HX-Request": "true"}
    )
    assert "the limit is 2 MB per file" in response.get_data(as_text=True)


def test_the_question_box_shows_the_limit_of_the_constant(small_limits, app, pack, client_as):
    from portal.agents.services import create_agent

    create_agent(None, "helper", "Helper", "preferred", "Acme Test Co", "", ["ops"], offered=True, add_company=True)
    staff = BeautifulSoup(client_as("AgentBuilder").get("/agents/helper/try").data, "html.parser")
    assert staff.select_one("textarea#question")["maxlength"] == "1500"
    member = BeautifulSoup(client_as("Member").get("/chat/").data, "html.parser")
    assert member.select_one("textarea#question")["maxlength"] == "1500"
    assert "at most 1,500 characters" in member.select_one("#question-help").text


def test_templates_get_every_limit(app):
    from flask import render_template_string

    with app.test_request_context():
        assert render_template_string("{{ limits.text_chars.label }} {{ limits.pdf_pages.value }}") == "400,000 300"


# A form field's length or pattern written out by hand: it must come from the constant the service refuses by.
FIELD_WRITTEN_IN_TEMPLATE = re.compile(r'maxlength="[0-9]|pattern="[^"{]*\{[0-9]')


def test_no_form_writes_a_field_length_or_pattern_by_hand():
    assert FIELD_WRITTEN_IN_TEMPLATE.search('<input name="slug" pattern="[a-z0-9][a-z0-9\\-]{0,79}" maxlength="80">')
    assert not FIELD_WRITTEN_IN_TEMPLATE.search('<input pattern="{{ slug_pattern }}" maxlength="{{ field_chars.id }}">')
    found = template_lines_matching(FIELD_WRITTEN_IN_TEMPLATE)
    assert not found, "read these from the constants (field_chars, slug_pattern in portal/web.py):\n" + "\n".join(found)


def test_the_forms_fields_are_as_long_as_the_services_allow(app, pack, client_as):
    from portal.agents import services as agents
    from portal.models import MAX_ID_CHARS, MAX_TITLE_CHARS
    from portal.models.tokens import MAX_NAME_CHARS as MAX_TOKEN_NAME_CHARS
    from portal.packs.services import SLUG_PATTERN, SLUG_RE

    assert SLUG_RE.match("a" * MAX_ID_CHARS) and not SLUG_RE.match("a" * (MAX_ID_CHARS + 1))
    form = BeautifulSoup(client_as("PlatformAdmin").get("/agents/new").data, "html.parser")
    assert form.select_one("#slug")["pattern"] == SLUG_PATTERN
    assert form.select_one("#slug")["maxlength"] == str(MAX_ID_CHARS)
    assert form.select_one("#name")["maxlength"] == str(agents.MAX_NAME_CHARS)
    assert form.select_one("#instructions")["maxlength"] == str(agents.MAX_INSTRUCTIONS_CHARS)
    packs = BeautifulSoup(client_as("PlatformAdmin").get("/packs/").data, "html.parser")
    assert packs.select_one("#slug")["pattern"] == SLUG_PATTERN
    account = BeautifulSoup(client_as("Member").get("/account/").data, "html.parser")
    assert account.select_one("#token-name")["maxlength"] == str(MAX_TOKEN_NAME_CHARS)
    upload(client_as("PlatformAdmin"), "ops", "note.md", b"# Note\n\nText.\n")
    edit = BeautifulSoup(client_as("PlatformAdmin").get("/packs/ops/documents/note/edit").data, "html.parser")
    assert edit.select_one("#title")["maxlength"] == str(MAX_TITLE_CHARS)


def _too_long_checks():
    """Every check of a typed text's length: (what it refuses, its limit, the call with a text)."""
    from portal import companies
    from portal.agents import services as agents
    from portal.documents import editing
    from portal.feedback import services as feedback
    from portal.models import MAX_TITLE_CHARS
    from portal.packs import services as packs
    from portal.runs import ask

    return [
        ("A company's name", companies.MAX_NAME_CHARS, companies.checked_name),
        ("An agent's name", agents.MAX_NAME_CHARS, agents._checked_name),
        ("The instructions text", agents.MAX_INSTRUCTIONS_CHARS, agents._checked_instructions),
        ("A description", agents.MAX_DESCRIPTION_CHARS, agents._checked_description),
        ("A note", feedback.MAX_NOTE_CHARS, feedback.checked_note),
        ("A pack's title", MAX_TITLE_CHARS, packs._checked_title),
        ("A pack's description", packs.MAX_DESCRIPTION_CHARS, packs._checked_description),
        ("A question", limits.MAX_QUESTION_CHARS, ask.checked_question),
        ("A title", MAX_TITLE_CHARS, lambda text: editing.checked_title(text, "note")),
    ]


def test_every_text_over_its_length_is_refused_in_one_wording(app):
    for what, limit, check in _too_long_checks():
        assert check("w" * limit) == "w" * limit, what
        with pytest.raises(Refused) as refused:
            check("w" * (limit + 1))
        assert refused.value.message.startswith(
            f"{what} has at most {limit:,} characters; this one has {limit + 1:,}."
        ), refused.value.message


@pytest.mark.parametrize("address", ["/library/?q={}", "/packs/ops/search?q={}", "/packs/ops?q={}"])
def test_a_search_over_its_limit_is_refused_alike_wherever_it_is_typed(app, pack, client_as, address):
    """The pack page itself (``/packs/ops?q=``, the address a search without JavaScript lands on) searched
    with a text of any length; its htmx search and the Library refused one over the limit."""
    client = client_as("Auditor")
    assert client.get(address.format("w" * limits.MAX_SEARCH_CHARS)).status_code == 200
    response = client.get(address.format("w" * (limits.MAX_SEARCH_CHARS + 1)))
    assert response.status_code == 400
    assert limits.search_too_long_message() in response.get_data(as_text=True)
