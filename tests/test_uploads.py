"""Word, PDF and image uploads end to end: stored figures and originals, downloads,
redaction, deletion, and refusals that leave the data folder and database untouched."""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile
from collections import Counter

import pytest
from bs4 import BeautifulSoup
from PIL import Image

from helpers import FIXTURES_DIR, cli_runner, data_snapshot, require_shared_fixtures, upload
from portal import storage
from portal.agents.services import create_agent
from portal.documents import editing, services
from portal.documents.filenames import download_name
from portal.documents.outcomes import REDACTED_FIGURE
from portal.documents.readers import ReaderAccess, change_reader_access
from portal.ingest import markers
from portal.ingest.formats import read_text
from portal.ingest.markdown_blocks import unescaped
from portal.models import Document, Figure, Passage, Revision, RunReference
from portal.runs.ask import ask
from portal.wording import counted, when
from resources.make_fixtures import (
    PdfPage,
    add_hyperlink,
    add_picture,
    docx_bytes,
    image_bytes,
    pdf_bytes,
    replace_part,
    rgb_image,
)

MANIFEST_REASONS = {
    "scanned_pdf": "scanned_pdf",
    "encrypted_pdf": "encrypted",
    "encrypted_docx": "encrypted",
    "damaged_pdf": "damaged",
    "damaged_docx": "damaged",
    "empty": "empty",
    "legacy_doc": "unsupported_type",
    "extension_mismatch": "type_mismatch",
    "pixels": "pixels",
    "size": "size",
}


def word_with_pictures() -> bytes:
    def build(document):
        document.add_heading("Interface monitoring", level=1)
        document.add_paragraph("Check the IDoc monitor every morning before eight.")
        add_picture(document, image_bytes(120, 80, color=(200, 30, 30)), alt="Red status lamp")
        document.add_heading("Escalation", level=2)
        document.add_paragraph("Escalate to the middleware team when queues stay red.")
        add_picture(document, image_bytes(90, 90, "JPEG", color=(30, 30, 200)), alt="Blue queue chart")

    return docx_bytes(build)


def pdf_with_figure() -> bytes:
    return pdf_bytes(
        [
            PdfPage(["Restart checklist for the weekend downtime.", "Stop the interfaces first."]),
            PdfPage(["Start the database, then the application servers."], images=[rgb_image(96, 64)]),
        ]
    )


def test_word_file_keeps_figures_original_and_headings(app, pack, client_as):
    data = word_with_pictures()
    outcome = services.upload_file(pack, "interface-monitoring.docx", data, None)
    assert outcome.accepted, outcome.refused
    revision = outcome.revision
    assert "[Figure 1: Red status lamp]" in revision.text and "[Figure 2: Blue queue chart]" in revision.text
    figures = list(Figure.select().where(Figure.revision == revision).order_by(Figure.number))
    assert [f.label for f in figures] == ["Red status lamp", "Blue queue chart"]
    assert all(storage.read(f.path)[:4] == b"RIFF" for f in figures)
    heading_paths = {p.heading_path for p in Passage.select().where(Passage.revision == revision)}
    assert "Interface monitoring > Escalation" in heading_paths

    admin = client_as("PlatformAdmin")
    page = BeautifulSoup(admin.get("/packs/ops/documents/interface-monitoring").data, "html.parser")
    images = page.select(".doc-body .figure img")
    assert [img["alt"] for img in images] == ["Red status lamp", "Blue queue chart"]
    assert all("/files/" not in img["src"] and "data" not in img["src"] for img in images)
    picture = admin.get(images[0]["src"])
    assert picture.status_code == 200 and picture.mimetype == "image/webp"
    download = admin.get("/packs/ops/documents/interface-monitoring/original")
    assert download.status_code == 200 and download.data == data
    assert "interface-monitoring.docx" in download.headers["Content-Disposition"]


def test_figures_and_downloads_check_permissions(app, pack, client_as):
    services.upload_file(pack, "interface-monitoring.docx", word_with_pictures(), None)
    src = "/packs/ops/documents/interface-monitoring/v1/figures/1.webp"
    assert client_as("Auditor").get(src).status_code == 200
    assert client_as("Member").get(src).status_code == 404
    assert client_as(None).get(src).status_code == 302
    assert client_as("Auditor").get("/packs/ops/documents/interface-monitoring/original").status_code == 404
    assert (
        client_as("PlatformAdmin").get("/packs/ops/documents/interface-monitoring/v1/figures/9.webp").status_code == 404
    )


def test_originals_and_figures_are_sent_with_their_headers_and_answer_conditional_requests(app, pack, client_as):
    data = word_with_pictures()
    services.upload_file(pack, "interface-monitoring.docx", data, None)
    admin = client_as("PlatformAdmin")
    original = admin.get("/packs/ops/documents/interface-monitoring/original")
    assert original.status_code == 200 and original.data == data
    assert original.mimetype == "application/octet-stream"
    assert _disposition(original)["filename"] == "interface-monitoring.docx"
    assert original.headers["X-Content-Type-Options"] == "nosniff"
    assert "default-src 'self'" in original.headers["Content-Security-Policy"]
    assert "no-cache" in original.headers["Cache-Control"]  # asked again every time: a 304 when unchanged
    figure = admin.get("/packs/ops/documents/interface-monitoring/v1/figures/1.webp")
    assert figure.status_code == 200 and figure.mimetype == "image/webp" and figure.data[:4] == b"RIFF"
    assert figure.headers["Cache-Control"] == "private, max-age=3600"
    assert figure.headers["X-Content-Type-Options"] == "nosniff"
    # Opened on its own (full size), the browser's image page may style itself; nothing else is allowed.
    assert figure.headers["Content-Security-Policy"].startswith("default-src 'none'; img-src 'self'; style-src")
    for first in (original, figure):
        address = first.request.path
        assert first.headers["ETag"] and first.headers["Last-Modified"]
        for asked in ({"If-None-Match": first.headers["ETag"]}, {"If-Modified-Since": first.headers["Last-Modified"]}):
            again = admin.get(address, headers=asked)
            assert again.status_code == 304 and again.data == b"", (address, asked)
            assert again.headers["ETag"] == first.headers["ETag"]
        assert admin.get(address, headers={"If-None-Match": '"another"'}).status_code == 200
    assert (
        client_as("Member")
        .get(
            "/packs/ops/documents/interface-monitoring/v1/figures/1.webp",
            headers={"If-None-Match": figure.headers["ETag"]},
        )
        .status_code
        == 404
    )


def test_pdf_passages_start_with_their_page_and_show_figures(app, pack, client_as):
    outcome = services.upload_file(pack, "restart-checklist.pdf", pdf_with_figure(), None)
    assert outcome.accepted, outcome.refused
    assert outcome.revision.pages == 2
    passages = list(Passage.select().where(Passage.revision == outcome.revision).order_by(Passage.ordinal))
    assert [p.page for p in passages] == [1, 2]
    assert all(p.text.startswith(f"Page {p.page}\n") for p in passages)
    assert "[Figure 1: Page 2]" in passages[1].text
    page = BeautifulSoup(client_as("Auditor").get("/packs/ops/documents/restart-checklist").data, "html.parser")
    assert [p.text for p in page.select(".doc-body .page-line")] == ["Page 1", "Page 2"]
    assert page.select_one(".doc-body .figure img")["alt"] == "Page 2"


# What an author may type into a Word or PDF file that looks like the markers ingest writes.
TYPED_FIGURE = "[Figure 1: Network overview]"
TYPED_LINES = ("Page 2", "Figure 1 description: written by the author", "Images: 3 kept, 1 not kept (type: 1)")


def word_with_typed_markers(*paragraphs: str) -> bytes:
    def build(document):
        document.add_heading("Zorblax network", level=1)
        document.add_paragraph(TYPED_FIGURE)
        document.add_paragraph("The zorblax router joins the office network to the plant network.")
        for paragraph in paragraphs:
            document.add_paragraph(paragraph)
        # Markdown would make these read "[Figure 1: …]" too: an entity and an escaped bracket
        document.add_paragraph("&#91;Figure 1: typed as an entity] and \\[Figure 1: typed escaped]")
        add_picture(document, image_bytes(96, 64), alt="Router photo")
        for line in TYPED_LINES:
            document.add_paragraph(line)

    return docx_bytes(build)


def _shown(element) -> str:
    """An element's text as a reader sees it, on one line: the word joiner ingest puts into marker-shaped author
    text (U+2060) has no width and is not seen."""
    return " ".join(element.get_text(" ").replace("\u2060", "").split())


def _repeated_ids(page: BeautifulSoup) -> list[str]:
    return [name for name, count in Counter(e["id"] for e in page.select("[id]")).items() if count > 1]


def _asked(pack, users, question: str):
    """A staff agent over ``pack`` asked ``question``: the run and its first source."""
    agent = create_agent(None, "desk", "Desk", "open", None, "", [pack.slug], offered=False)
    run = ask(agent, users["PlatformAdmin"], question)
    return run, RunReference.get(RunReference.run == run.id, RunReference.n == 1)


def test_text_typed_like_a_marker_in_a_word_file_stays_the_authors_text(app, pack, users, client_as):
    """A Word file's body that looks like a figure marker (typed, or Markdown that reads as one), a page line, a
    description or the Images line is shown as the author's text: the one kept figure stands where its picture
    is, once, and the receipt, the search and the answer read only that figure."""
    outcome = services.upload_file(pack, "zorblax-network.docx", word_with_typed_markers(), None)
    assert outcome.accepted, outcome.refused
    text = outcome.revision.text
    assert markers.figure_markers(text) == [(1, "Router photo")]
    assert [text[start:end] for start, end in markers.figure_marker_spans(text)] == ["[Figure 1: Router photo]"]
    lines = [line.strip() for line in text.splitlines()]
    assert not [line for line in lines if markers.is_page_line(line) or markers.is_images_line(line)]
    assert markers.without_images_line(text) == text
    assert markers.with_figure_descriptions(text, {1: "A router."}).count("description: A router.") == 1

    admin = client_as("PlatformAdmin")
    page = BeautifulSoup(admin.get("/packs/ops/documents/zorblax-network").data, "html.parser")
    assert _repeated_ids(page) == []
    body = page.select_one("article.doc-body")
    assert [(f["id"], f.img["alt"]) for f in body.select(".figure")] == [("figure-1", "Router photo")]
    assert body.select(".page-line") == []
    shown = _shown(body)
    # typed in Word, an entity or a backslash is shown as the author typed it, not read as Markdown
    for typed in (TYPED_FIGURE, "&#91;Figure 1: typed as an entity]", "\\[Figure 1: typed escaped]", *TYPED_LINES):
        assert typed in shown

    run, reference = _asked(pack, users, "What does the zorblax router join?")
    assert [(f["number"], f["label"]) for f in reference.figures] == [(1, "Router photo")]
    receipt = BeautifulSoup(admin.get(f"/runs/{run.id}").data, "html.parser")
    assert _repeated_ids(receipt) == []
    assert [_shown(f.select_one(".figure-label")) for f in receipt.select(".source-figure")] == [
        "Figure 1: Router photo"
    ]
    assert TYPED_FIGURE in _shown(receipt.select_one("main"))
    assert TYPED_FIGURE in _shown(BeautifulSoup(admin.get("/packs/ops/search?q=network+overview").data, "html.parser"))


def test_redacting_a_word_file_replaces_its_figures_not_the_authors_bracketed_text(app, pack):
    outcome = services.upload_file(
        pack, "zorblax-network.docx", word_with_typed_markers("Connect with AKIAIOSFODNN7EXAMPLE to the bucket."), None
    )
    assert outcome.accepted and outcome.document.redacted
    text = outcome.revision.text
    assert text.count(REDACTED_FIGURE) == 1 and "Router photo" not in text
    shown = unescaped(text).replace("\u2060", "")  # typed in Word, its brackets are escaped (as typed)
    assert TYPED_FIGURE in shown and TYPED_LINES[-1] in shown  # the author's, not the Images line ingest writes


def test_text_typed_like_a_marker_in_a_pdf_stays_the_authors_text(app, pack, users, client_as):
    """A PDF's text layer that reads like a figure marker or a page line is the author's text: figure 1 is the
    picture on page 1, shown once, and the page dividers are the pages."""
    data = pdf_bytes(
        [
            PdfPage(
                ["Quuxor valve runbook", "[Figure 1: fake]", "[Figure 2: x] The quuxor valve opens weekly.", "Page 1"],
                images=[rgb_image(96, 64)],
            ),
            PdfPage(["Close the quuxor valve before the audit.", "Page 7"]),
        ]
    )
    outcome = services.upload_file(pack, "quuxor-valve.pdf", data, None)
    assert outcome.accepted, outcome.refused
    text = outcome.revision.text
    assert markers.figure_markers(text) == [(1, "Page 1")]
    assert [line for line in text.splitlines() if markers.is_page_line(line.strip())] == ["Page 1", "Page 2"]
    passages = Passage.select().where(Passage.revision == outcome.revision).order_by(Passage.ordinal)
    assert [p.page for p in passages] == [1, 2]

    admin = client_as("PlatformAdmin")
    page = BeautifulSoup(admin.get("/packs/ops/documents/quuxor-valve").data, "html.parser")
    assert _repeated_ids(page) == []
    body = page.select_one("article.doc-body")
    assert [(f["id"], f.img["alt"]) for f in body.select(".figure")] == [("figure-1", "Page 1")]
    assert [p.get_text() for p in body.select(".page-line")] == ["Page 1", "Page 2"]
    assert [_shown(line) for line in body.select(".line") if "Figure" in line.get_text()] == [
        "[Figure 1: fake]",
        "[Figure 2: x] The quuxor valve opens weekly.",
        "Figure 1: Page 1",
    ]

    run, reference = _asked(pack, users, "When does the quuxor valve open?")
    assert [(f["number"], f["label"]) for f in reference.figures] == [(1, "Page 1")]
    receipt = BeautifulSoup(admin.get(f"/runs/{run.id}").data, "html.parser")
    assert [_shown(f.select_one(".figure-label")) for f in receipt.select(".source-figure")] == ["Figure 1: Page 1"]
    assert receipt.select(".image-gone") == []


def test_a_file_of_another_name_replacing_a_documents_text_says_so(app, pack, client_as):
    """Files named "Shift Handover.md" and "shift-handover.txt" are one document: uploaded after the first, the
    second became its version 2 without a word (found by a browser walkthrough). The line names the file whose text
    it replaced; the same file sent again says nothing of the kind."""
    admin = client_as("PlatformAdmin")
    first = upload(admin, "ops", "Shift Handover.md", b"# Shift handover\n\nBerlin notes.\n")
    assert "another file with the same document id" not in first.get_data(as_text=True)
    second = upload(admin, "ops", "shift-handover.txt", b"Oslo notes.\n", "text/plain")
    line = BeautifulSoup(second.get_data(as_text=True), "html.parser").select_one("li.outcome")
    assert line["data-outcome"] == "revised"
    assert line.select_one(".outcome-replaced-file").get_text() == (
        "It replaced the text read from “Shift Handover.md”, another file with the same document id; "
        "if they are different documents, rename one and upload it again."
    )
    again = upload(admin, "ops", "shift-handover.txt", b"Oslo notes, later.\n", "text/plain")
    assert BeautifulSoup(again.get_data(as_text=True), "html.parser").select_one(".outcome-replaced-file") is None


def test_image_file_is_a_document_of_its_own(app, pack, client_as):
    data = image_bytes(200, 120, "PNG")
    outcome = services.upload_file(pack, "network-diagram.png", data, None)
    assert outcome.accepted and outcome.document.kind == "image"
    assert outcome.revision.text.startswith("[Figure 1: network-diagram]")
    assert client_as("PlatformAdmin").get("/packs/ops/documents/network-diagram/original").data == data


def test_redacted_word_file_keeps_only_redacted_text(app, pack, client_as):
    def build(document):
        document.add_paragraph("Connect with AKIAIOSFODNN7EXAMPLE to the bucket.")
        add_picture(document, image_bytes(64, 64), alt="Bucket layout")

    outcome = services.upload_file(pack, "bucket-access.docx", docx_bytes(build), None)
    assert outcome.accepted
    revision = outcome.revision
    assert "AKIAIOSFODNN7EXAMPLE" not in revision.text and "[REDACTED:credential]" in revision.text
    assert "[image not kept: document redacted]" in revision.text and "[Figure" not in revision.text
    assert revision.original_path is None and Figure.select().count() == 0
    assert outcome.document.redacted
    admin = client_as("PlatformAdmin")
    assert admin.get("/packs/ops/documents/bucket-access/original").status_code == 404
    assert "Download the original" not in admin.get("/packs/ops/documents/bucket-access").get_data(as_text=True)


def test_delete_removes_figures_and_original(app, pack):
    outcome = services.upload_file(pack, "interface-monitoring.docx", word_with_pictures(), None)
    paths = [outcome.revision.original_path] + [f.path for f in Figure.select()]
    editing.delete_document(outcome.document, 1)
    assert not any(storage.resolve(p).exists() for p in paths)
    assert Figure.select().count() == 0 and Revision.select().count() == 0


def test_content_type_must_match_the_extension(app, pack, client_as):
    before = data_snapshot(app)
    response = upload(
        client_as("PlatformAdmin"),
        "ops",
        "manual.pdf",
        pdf_with_figure(),
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    )
    assert response.status_code == 422 and 'data-reason="type_mismatch"' in response.get_data(as_text=True)
    assert data_snapshot(app) == before


def _manifest_rows():
    if not (FIXTURES_DIR / "MANIFEST.tsv").exists():
        return [None]  # one case, which skips (or fails under CI) saying why
    with open(FIXTURES_DIR / "MANIFEST.tsv", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


# The content type a browser sends with each kind of file.
BROWSER_TYPES = {
    ".md": "text/markdown",
    ".txt": "text/plain",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".doc": "application/msword",
    ".pdf": "application/pdf",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".webp": "image/webp",
}


@pytest.mark.parametrize("row", _manifest_rows(), ids=lambda row: row["file"] if row else "no-fixtures")
def test_real_fixture_through_the_whole_pipeline(app, pack, client_as, row):
    """Every real file, sent as a browser sends it, gets its manifest outcome: an accepted one opens with its
    figures in place; a refusal names its reason and stores nothing at all."""
    require_shared_fixtures()
    name = row["file"]
    data = (FIXTURES_DIR / name).read_bytes()
    before = data_snapshot(app)
    admin = client_as("PlatformAdmin")
    response = upload(admin, "ops", name, data, BROWSER_TYPES[name[name.rindex(".") :]])
    line = BeautifulSoup(response.data, "html.parser").select_one("#upload-outcomes .outcome")
    expected = row["expected outcome"]
    if expected == "accept":
        assert response.status_code == 200, line.text
        document = Document.get()
        revision = document.current_revision()
        figures = Figure.select().where(Figure.revision == revision).count()
        said = f"{counted(figures, 'image')} kept"  # the result line's images, in words
        assert (said in line.text) == bool(figures or revision.images_not_kept), line.text
        if revision.original_path:
            assert storage.read(revision.original_path) == data
        page = admin.get(f"/packs/ops/documents/{document.doc_id}")
        assert page.status_code == 200
        assert len(BeautifulSoup(page.data, "html.parser").select(".doc-body .figure img")) == figures
    else:
        assert response.status_code == 422
        assert line["data-reason"] == MANIFEST_REASONS[expected.split(":", 1)[1]], line.text
        assert data_snapshot(app) == before
        assert Document.select().count() == 0


def test_a_blocking_policy_refuses_and_stores_nothing(app, pack):
    app.config["CAIRN_CLASSIFICATION_POLICY"] = [
        {"rule": "private_key", "decision": "block"},
        {"rule": "jwt", "decision": "review_required"},
    ]
    before = data_snapshot(app)
    key = b"# Deploy notes\n\n-----BEGIN RSA PRIVATE KEY-----\nMIIEfakefakefake\n-----END RSA PRIVATE KEY-----\n"
    blocked = services.upload_file(pack, "deploy-notes.md", key, None)
    assert blocked.refused.reason == "classification_blocked"
    assert "MIIEfakefakefake" not in blocked.refused.message and "private key" in blocked.refused.message
    token = (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5"
        "MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
    )
    review = services.upload_file(pack, "api-notes.md", f"# API\n\nUse {token} to call it.\n".encode(), None)
    assert review.refused.reason == "review_required"
    assert data_snapshot(app) == before


# --- File names (issue 9, item 9) ------------------------------------------------------------


@pytest.mark.parametrize(
    "name, named",
    [
        ("note\x00.pdf", "U+0000"),
        ("escape\x1b[31m.pdf", "U+001B"),
        ("tab\there.pdf", "U+0009"),
        ("invoice\u202egnp.pdf", "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
        ("isolate\u2066x.pdf", "U+2066"),
        ("line\u2028separator.pdf", "U+2028 (LINE SEPARATOR)"),
        ("paragraph\u2029separator.pdf", "U+2029 (PARAGRAPH SEPARATOR)"),
    ],
)
def test_a_file_name_with_a_control_character_is_refused_naming_it(app, pack, client_as, name, named):
    before = data_snapshot(app)
    response = upload(client_as("PlatformAdmin"), "ops", name, pdf_with_figure(), "application/pdf")
    assert response.status_code == 422
    outcome = BeautifulSoup(response.data, "html.parser").select_one(".outcome")
    assert outcome["data-reason"] == "bad_name"
    assert named in outcome.text and "Rename the file" in outcome.text
    assert "\x00" not in response.get_data(as_text=True) and "\u202e" not in response.get_data(as_text=True)
    assert data_snapshot(app) == before


REORDERED = (
    "# Clean up \u202eedolg\u202c\n\n"
    "Run \u2066rm -rf /tmp/old\u2069 only on the batch host.\x1b[31m\n\n"
    "A right-to-left word keeps its mark: \u05e9\u05dc\u05d5\u05dd\u200f.\n"
)


@pytest.mark.parametrize("name", ["reordered.md", "reordered.txt"])
def test_text_is_stored_and_shown_without_the_controls_that_reorder_it(app, pack, client_as, name):
    """An override (U+202E) or an isolate (U+2066) makes the viewer show text in another order than it is
    stored, searched and given to a model ("Trojan Source"); Word and PDF text lost them already, a text
    file now does too. The marks right-to-left text needs (U+200F) stay."""
    admin = client_as("PlatformAdmin")
    assert upload(admin, "ops", name, REORDERED.encode(), "text/plain").status_code == 200
    stored = Revision.get().text
    assert not set(stored) & set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\x1b")
    assert "Run rm -rf /tmp/old only on the batch host.[31m" in stored and "\u200f" in stored
    page = admin.get(f"/packs/ops/documents/{name.split('.')[0]}").get_data(as_text=True)
    assert "\u202e" not in page and "\u2066" not in page and "Clean up edolg" in page


def test_text_edited_in_the_browser_loses_the_controls_an_upload_loses(app, pack, client_as):
    """An upload's text loses control characters (an escape, a backspace, a form feed): the text read is the
    text stored, searched, given to a model and printed by ``cairn``. Text saved from the edit form kept
    them, so the same document edited in the browser carried an escape sequence that an upload drops."""
    admin = client_as("PlatformAdmin")
    assert upload(admin, "ops", "reordered.md", b"# Clean up\n\nFirst words.\n").status_code == 200
    edited = REORDERED + "Back\x08space and \x07bell.\n"
    response = admin.post("/packs/ops/documents/reordered/edit", data={"text": edited, "expected_version": "1"})
    assert response.status_code == 303
    stored = Document.get(Document.doc_id == "reordered").current_revision().text
    assert stored == read_text(edited.encode())
    assert "Run rm -rf /tmp/old only on the batch host.[31m" in stored and "Backspace and bell." in stored


# The 8-bit spellings of terminal controls (C1, U+0080–U+009F): U+009B is CSI ("ESC ["), U+009D OSC ("ESC ]"),
# U+009C its terminator. VTE terminals (GNOME Terminal and the others built on it) and GNU screen read them in
# UTF-8 text as they read the ESC sequences themselves. U+0085 (NEL) is a line break, as for str.splitlines.
C1_CONTROLS = "\x80\x84\x90\x9b\x9c\x9d\x9f"


def test_text_loses_the_c1_controls_a_terminal_runs_as_escape_sequences(app, pack, client_as):
    """Uploaded and typed text lose control characters so that what ``cairn`` prints is text, never a terminal
    control (an escape sequence in a title clears the screen or sets the window title of whoever runs
    ``cairn search``). Only C0 and DEL went: U+009B then "2J" in a heading was stored, made the title, and was
    printed by ``cairn search``, a clear-screen sequence as "ESC [2J" is."""
    admin = client_as("PlatformAdmin")
    text = (
        "# Gauge \u009d0;pwned\u009c manual\n\n"
        "Calibrate the zorblax gauge \u009b2J before every shift.\u0085Then \x80\x84\x90\x9f log it.\n"
    )
    assert upload(admin, "ops", "gauge.md", text.encode()).status_code == 200
    document = Document.get()
    stored = document.current_revision().text
    assert not set(document.title + stored) & set(C1_CONTROLS), repr(document.title + stored)
    assert document.title == "Gauge 0;pwned manual" and "gauge 2J before every shift.\u0085Then  log it." in stored
    printed = cli_runner(app)("search", "zorblax", "--pack", "ops").stdout
    assert "Gauge 0;pwned manual" in printed and not set(printed) & set(C1_CONTROLS), repr(printed)

    # Typed text loses them as uploaded text does (``request_text``): a title and a text saved from the edit form.
    saved = admin.post(
        "/packs/ops/documents/gauge/edit",
        data={"title": "Gauge \u009b31m manual", "text": text, "expected_version": "1"},
    )
    assert saved.status_code == 303
    edited = Document.get()
    assert not set(edited.title + edited.current_revision().text) & set(C1_CONTROLS)


def test_text_stored_before_the_rule_prints_without_terminal_controls(app, pack, client_as):
    """What a command prints loses terminal controls however old the text: a heading and a passage stored
    before uploads lost them (set here directly) print as text (``cli.support.say``)."""
    assert (
        upload(client_as("PlatformAdmin"), "ops", "gauge.md", b"# Gauge\n\nCalibrate the zorblax gauge.\n").status_code
        == 200
    )
    Passage.update(
        heading_path="Gauge \x1b[2J\u009b31m\r manual", text="Calibrate the zorblax \x1b]0;owned\x07gauge."
    ).execute()
    printed = cli_runner(app)("search", "zorblax", "--pack", "ops").stdout
    assert "Gauge [2J31m manual" in printed and "zorblax ]0;ownedgauge." in printed, repr(printed)
    assert not set(printed) & set(C1_CONTROLS + "\x1b\x07\r"), repr(printed)


def _pdf_titled(title: str) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_title(title)
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    pdf.cell(text="Calibrate the zorblax gauge before every shift.")
    return bytes(pdf.output())


def _word_with_alt_text(alt: str) -> bytes:
    def build(document):
        document.add_paragraph("Calibrate the zorblax gauge before every shift.")
        add_picture(document, image_bytes(96, 64, "PNG"), alt=alt)

    return docx_bytes(build)


@pytest.mark.parametrize(
    "name, make, content_type",
    [
        (
            "titled.pdf",
            lambda: _pdf_titled("Gauge \u202egnp.exe\u202c manual\x00\x07 \u2066v2\u2069"),
            "application/pdf",
        ),
        (
            "alt.docx",
            lambda: _word_with_alt_text("Gauge \u202egnp.exe\u202c dial \u2066v2\u2069"),
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        ),
    ],
    ids=["pdf-title", "word-alt-text"],
)
def test_a_title_or_alt_text_read_from_a_file_loses_the_controls_that_reorder_it(
    app, pack, client_as, name, make, content_type
):
    """A PDF's own title and a Word picture's alt text are text read out of the file as much as its body is:
    a right-to-left override there made the title, the figure's label and caption read "exe.png" while
    "gnp.exe" was stored and searched, and a NUL in a PDF title was stored as it came (PostgreSQL cannot
    store one: a 500). Found by uploading a PDF whose Info Title and a Word file whose descr held U+202E."""
    admin = client_as("PlatformAdmin")
    response = upload(admin, "ops", name, make(), content_type)
    assert response.status_code == 200, response.get_data(as_text=True)[:500]
    document = Document.get()
    revision = document.current_revision()
    stored = [document.title, revision.text, *[f.label for f in Figure.select()]]
    controls = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\x00\x07\x1f")
    assert not any(set(value) & controls for value in stored), stored
    assert "Gauge gnp.exe" in (document.title if name.endswith(".pdf") else revision.text)
    page = admin.get(f"/packs/ops/documents/{document.doc_id}").get_data(as_text=True)
    assert not set(page) & controls


def test_a_file_name_longer_than_any_file_system_keeps_is_refused(app, pack, client_as):
    """Stored as the revision's original name (255 wide): PostgreSQL answered 500, SQLite kept it."""
    admin = client_as("PlatformAdmin")
    before = data_snapshot(app)
    response = upload(admin, "ops", "n" * 253 + ".md", b"# Long\n\nA name too long.\n", "text/markdown")
    assert response.status_code == 422
    outcome = BeautifulSoup(response.data, "html.parser").select_one(".outcome")
    assert outcome["data-reason"] == "bad_name"
    assert "The file name has 256 characters; a file name has at most 255." in outcome.text
    assert data_snapshot(app) == before
    assert upload(admin, "ops", "n" * 252 + ".md", b"# Long\n\nJust fits.\n", "text/markdown").status_code == 200
    assert Document.get(Document.title == "Long").current_revision().original_name == "n" * 252 + ".md"


def test_one_name_in_either_unicode_form_is_one_document(app, pack, client_as):
    """ "Café.md" as Windows and Linux send it (é one character, NFC) and as a Mac's file system names it
    (e and a combining accent, NFD) is one name: the second upload is the document's next version. It made
    a second document ("caf" and "cafe") that reads the same in every list. Found by uploading both forms."""
    admin = client_as("PlatformAdmin")
    assert upload(admin, "ops", "Caf\u00e9 notes.md", b"# Cafe\n\nFirst.\n").status_code == 200
    assert upload(admin, "ops", "Cafe\u0301 notes.md", b"# Cafe\n\nSecond.\n").status_code == 200
    (document,) = Document.select()
    assert (document.doc_id, document.current_version) == ("cafe-notes", 2)


def test_a_folder_in_the_file_name_is_dropped(app, pack, client_as):
    response = upload(
        client_as("PlatformAdmin"), "ops", "../reports/2026/restart.pdf", pdf_with_figure(), "application/pdf"
    )
    assert response.status_code == 200
    revision = Document.get(Document.doc_id == "restart").current_revision()
    assert revision.original_name == "restart.pdf"


def _disposition(response) -> dict[str, str]:
    from werkzeug.http import parse_options_header

    kind, options = parse_options_header(response.headers["Content-Disposition"])
    assert kind == "attachment"
    return options


def test_downloads_carry_a_safe_file_name(app, pack, client_as):
    admin = client_as("PlatformAdmin")
    upload(admin, "ops", "h\u00e9llo report.pdf", pdf_with_figure(), "application/pdf")
    download = admin.get("/packs/ops/documents/hello-report/original")
    assert download.status_code == 200
    assert "filename*=UTF-8''h%C3%A9llo%20report.pdf" in download.headers["Content-Disposition"]
    assert _disposition(download)["filename"] == "h\u00e9llo report.pdf"

    # A name stored before names were checked (PostgreSQL never stored a NUL): served without
    # folders, controls or direction marks.
    revision = Document.get(Document.doc_id == "hello-report").current_revision()
    Revision.update(original_name="..\\..\\etc/\x01bad\u202egnp\x1b.pdf").where(Revision.id == revision.id).execute()
    download = admin.get("/packs/ops/documents/hello-report/original")
    assert download.status_code == 200 and download.data == pdf_with_figure()
    header = download.headers["Content-Disposition"]
    assert not any(c in header for c in "\x01\x1b\u202e/\\") and "%E2%80%AE" not in header
    assert _disposition(download)["filename"] == "badgnp.pdf"


# --- Request limits (issue 9, item 13) ---------------------------------------------------------


def test_a_form_of_more_than_1000_parts_is_refused_naming_that_limit(app, pack, client_as):
    before = data_snapshot(app)
    fields = {f"field{i}": "x" for i in range(1_000)}
    response = client_as("PlatformAdmin").post(
        "/packs/ops/documents",
        content_type="multipart/form-data",
        data={**fields, "files": (io.BytesIO(b"# Note\n\ntext\n"), "note.md", "text/markdown")},
    )
    assert response.status_code == 413
    message = BeautifulSoup(response.data, "html.parser").select_one("main").text
    assert "more than 1,000 fields and files" in message and "4 MB" not in message
    assert data_snapshot(app) == before


def test_a_file_over_the_limit_is_refused_by_its_size_before_it_is_read(app, pack, client_as):
    before = data_snapshot(app)
    response = upload(client_as("PlatformAdmin"), "ops", "huge.md", b"a" * (4 * 1024 * 1024 + 70 * 1024))
    assert response.status_code == 422
    line = BeautifulSoup(response.data, "html.parser").select_one("#upload-outcomes .outcome.refused")
    assert line["data-reason"] == "too_large"
    assert "The file is 4.1 MB; the limit is 4 MB per file." in line.text
    assert data_snapshot(app) == before


@pytest.mark.parametrize("content_type", ["application/x-www-form-urlencoded", "multipart/form-data"])
def test_an_edited_text_longer_than_half_a_megabyte_is_not_refused_as_too_large(app, pack, client_as, content_type):
    """Only the body's size and its number of parts limit a form: no field limit below the body's."""
    services.upload_file(pack, "notes.md", b"# Notes\n\nshort\n", None)
    text = "# Notes\n\n" + "\u00e9t\u00e9 " * 99_000  # 396,009 characters, 693 kB in UTF-8
    response = client_as("PlatformAdmin").post(
        "/packs/ops/documents/notes/edit", content_type=content_type, data={"text": text, "expected_version": "1"}
    )
    assert response.status_code == 303, response.get_data(as_text=True)[:500]


def test_download_name_rule():
    assert download_name("C:\\Users\\me\\report.pdf") == "report.pdf"
    assert download_name("../../etc/pass\x00wd\u202e.pdf") == "passwd.pdf"
    assert download_name("\u200b\x00/") == "download" and download_name(None) == "download"
    assert download_name(".hidden.md") == "hidden.md" and download_name("h\u00e9llo.pdf") == "h\u00e9llo.pdf"


# --- What an upload's result line says, and a batch sent without JavaScript (issue 16, item 5) ----------

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def _outcomes(response) -> dict[str, BeautifulSoup]:
    """Each outcome line of an upload's page (or fragment) by the file name it starts with."""
    return {li.strong.text: li for li in BeautifulSoup(response.data, "html.parser").select(".outcome")}


def _text(line) -> str:
    return " ".join(line.get_text(" ").split())


def test_a_redacted_word_upload_says_what_redaction_removed(app, pack, client_as):
    def build(document):
        document.add_paragraph("Connect with AKIAIOSFODNN7EXAMPLE to the bucket.")
        add_picture(document, image_bytes(64, 64), alt="Bucket layout")
        add_picture(document, image_bytes(48, 48, color=(0, 90, 0)), alt="Bucket policy")

    response = upload(client_as("PlatformAdmin"), "ops", "bucket-access.docx", docx_bytes(build), DOCX)
    assert response.status_code == 200
    line = _outcomes(response)["bucket-access.docx"]
    assert "redacted" in line["class"]
    assert _text(line.select_one(".outcome-redaction")) == (
        "Redacted: the credentials found (cloud access key (text)) were replaced by [REDACTED:credential]. "
        "The original file is not kept, so it cannot be downloaded, and its 2 images were not kept (each became "
        "[image not kept: document redacted]). What redaction does"
    )
    assert line.select_one(".outcome-redaction a")["href"] == "/help/classification"
    assert line.select_one(".outcome-images") is None  # none kept: the redaction says so


def test_a_redacted_text_upload_says_only_what_it_replaced(app, pack, client_as):
    response = upload(
        client_as("PlatformAdmin"),
        "ops",
        "notes.md",
        b"# Notes\n\nConnect with AKIAIOSFODNN7EXAMPLE to the bucket.\n",
        **{"HX-Request": "true"},
    )
    line = _outcomes(response)["notes.md"]
    assert _text(line.select_one(".outcome-redaction")) == (
        "Redacted: the credentials found (cloud access key (text)) were replaced by [REDACTED:credential]. "
        "What redaction does"
    )
    plain = upload(client_as("PlatformAdmin"), "ops", "plain.md", b"# Plain\n\nNothing secret.\n")
    assert _outcomes(plain)["plain.md"].select_one(".outcome-redaction") is None


def word_with_a_tiff() -> bytes:
    """Two pictures kept and one not (a TIFF: its type is not kept)."""

    def build(document):
        document.add_paragraph("Pictures follow.")
        for color in ((200, 0, 0), (0, 200, 0), (0, 0, 200)):
            add_picture(document, image_bytes(96, 64, color=color), alt=f"picture {color}")

    docx = docx_bytes(build)
    with zipfile.ZipFile(io.BytesIO(docx)) as archive:
        media = sorted(n for n in archive.namelist() if n.startswith("word/media/"))
    tiff = io.BytesIO()
    Image.new("RGB", (96, 64)).save(tiff, "TIFF")
    return replace_part(docx, media[1], tiff.getvalue())


def test_the_result_line_gives_the_images_kept_and_why_others_were_not(app, pack, client_as):
    admin = client_as("PlatformAdmin")
    line = _outcomes(upload(admin, "ops", "pictures.docx", word_with_a_tiff(), DOCX))["pictures.docx"]
    assert line.select_one(".outcome-images").text == (
        "2 images kept; 1 not kept: not a PNG, JPEG, GIF or WebP image (SVG, TIFF, EMF … are not kept)."
    )
    line = _outcomes(upload(admin, "ops", "interface-monitoring.docx", word_with_pictures(), DOCX))[
        "interface-monitoring.docx"
    ]
    assert line.select_one(".outcome-images").text == "2 images kept."
    line = _outcomes(upload(admin, "ops", "plain.md", b"# Plain\n\ntext\n"))["plain.md"]
    assert line.select_one(".outcome-images") is None


def _csrf_client(app, client_as):
    """A PlatformAdmin's client with CSRF checked, as in production, and the token of the pack page."""
    client = client_as("PlatformAdmin")  # signed in first: the sign-in form carries no token here
    app.config["WTF_CSRF_ENABLED"] = True
    page = BeautifulSoup(client.get("/packs/ops").data, "html.parser")
    return client, page.select_one("#upload-form input[name=csrf_token]")["value"]


def test_a_batch_within_its_limit_names_the_file_over_the_per_file_limit(app, pack, client_as):
    """Without JavaScript every chosen file comes in one request: each gets its own outcome."""
    client, token = _csrf_client(app, client_as)
    files = [
        (io.BytesIO(b"# One\n\n" + b"one " * 50_000), "one.md", "text/markdown"),
        (io.BytesIO(b"a" * (5 * 1024 * 1024)), "big.md", "text/markdown"),
        (io.BytesIO(b"# Two\n\n" + b"two " * 50_000), "two.md", "text/markdown"),
    ]
    response = client.post(
        "/packs/ops/documents", data={"csrf_token": token, "files": files}, content_type="multipart/form-data"
    )
    assert response.status_code == 422
    lines = _outcomes(response)
    assert list(lines) == ["one.md", "big.md", "two.md"]
    assert "accepted" in lines["one.md"]["class"] and "accepted" in lines["two.md"]["class"]
    assert "The file is 5.0 MB; the limit is 4 MB per file." in lines["big.md"].text
    assert [d.doc_id for d in Document.select().order_by(Document.doc_id)] == ["one", "two"]


def test_a_batch_over_its_limit_gets_a_page_naming_each_file_and_its_outcome(app, pack, client_as, monkeypatch):
    from portal.ingest import limits

    monkeypatch.setattr(limits, "MAX_BATCH_BYTES", 6 * 1024 * 1024)
    client, token = _csrf_client(app, client_as)
    before = data_snapshot(app)
    sizes = {"one.md": 3 * 1024 * 1024, "two.md": 3 * 1024 * 1024, "big.md": 5 * 1024 * 1024}
    files = [(io.BytesIO(b"a" * size), name, "text/markdown") for name, size in sizes.items()]
    response = client.post(
        "/packs/ops/documents", data={"csrf_token": token, "files": files}, content_type="multipart/form-data"
    )
    assert response.status_code == 413
    page = BeautifulSoup(response.data, "html.parser")
    assert page.select_one("h1").text.startswith("Operations")  # the pack page, with the outcomes on it
    lines = _outcomes(response)
    assert list(lines) == list(sizes)
    for name in ("one.md", "two.md"):
        assert lines[name]["data-reason"] == "batch_too_large"
        assert "The files sent together were 11.0 MB, over the 6 MB limit for one upload" in lines[name].text
        assert "per file" not in lines[name].text
    assert lines["big.md"]["data-reason"] == "too_large"
    assert "The file is 5.0 MB; the limit is 4 MB per file." in lines["big.md"].text
    assert data_snapshot(app) == before


def test_a_batch_over_its_limit_is_not_listed_for_someone_who_may_not_upload(app, pack, client_as, monkeypatch):
    from portal.ingest import limits

    monkeypatch.setattr(limits, "MAX_BATCH_BYTES", 1024 * 1024)
    clients = (client_as("Auditor"), client_as(None))
    app.config["WTF_CSRF_ENABLED"] = True  # its check reads the form before the view asks who is posting
    for client in clients:
        files = {"files": (io.BytesIO(b"a" * (2 * 1024 * 1024)), "one.md", "text/markdown")}
        response = client.post("/packs/ops/documents", data=files, content_type="multipart/form-data")
        assert response.status_code == 413 and "one.md" not in response.get_data(as_text=True)


def test_a_markdown_title_is_its_first_level_one_heading_as_the_viewer_reads_it(app, pack, client_as):
    admin = client_as("PlatformAdmin")
    text = b"```\n# not a heading: a line of a shell script\n```\n\nRelease notes\n=============\n\n## Spool\n\nText.\n"
    assert upload(admin, "ops", "notes_v2.md", text).status_code == 200
    assert Document.get(Document.doc_id == "notes_v2").title == "Release notes"


def test_a_pdf_title_that_is_only_the_name_of_the_file_it_was_made_from_is_not_used(app, pack, client_as):
    """pdfminer's sample says Title "zen_of_python.txt": the upload's own file name says more."""
    require_shared_fixtures()
    admin = client_as("PlatformAdmin")
    name = "pdfminer_zen_of_python_corrupted.pdf"
    response = upload(admin, "ops", name, (FIXTURES_DIR / name).read_bytes(), "application/pdf")
    assert response.status_code == 200
    assert Document.get(Document.doc_id == "pdfminer_zen_of_python_corrupted").title == (
        "pdfminer zen of python corrupted"
    )


# --- Hostile files through the upload route and the API -------------------------------------------

MARK = "zq7"  # in every attribute and element the hostile files hold: none may reach a page as markup
HOSTILE_MARKDOWN = f"""# Zorblax gauge

Calibrate the zorblax gauge before every shift.

<div hx-get="/packs/ops/documents/victim/delete" hx-trigger="load" id="{MARK}">div</div>

<button hx-post="/{MARK}" hx-vals='{{"expected_version": "1"}}'>{MARK}</button>
<span hx-on:click="alert('{MARK}')" hx-on::after-request="alert('{MARK}')">span</span>
<a data-hx-get="/{MARK}" data-hx-trigger="load">a</a> <b hx-get="/{MARK}" hx-trigger="load">bold</b>

<form action="/packs/ops/documents/victim/delete" method="post" id="{MARK}">
<input name="expected_version" value="1"><button>{MARK}</button></form>

<meta http-equiv="refresh" content="0;url=https://evil.test/{MARK}">

[script](javascript:alert('{MARK}')) [data](data:text/html;base64,PHNjcmlwdD4=) <javascript:alert('{MARK}')>
[entity](jav&#x61;script:alert('{MARK}')) [reference][r] ![picture](javascript:alert('{MARK}'))
[title](https://example.test/ok "t\\" hx-get=\\"/{MARK}") <a href="javascript:alert('{MARK}')">raw</a>

[r]: javascript:alert('{MARK}')

<svg onload="alert('{MARK}')"><script>alert('{MARK}')</script></svg>
<img src=x onerror="alert('{MARK}')"><iframe src="https://evil.test/{MARK}"></iframe>
<style>body {{ display: none }} /* {MARK} */</style>

| gauge | <span hx-get="/{MARK}">cell</span> |
| --- | --- |
| zorblax <script>{MARK}</script> | [x](javascript:{MARK}) |
"""
# What a hostile Word or PDF file names itself: its Title paragraph, its alt text, its metadata title.
HOSTILE_TITLE = f'<script>alert("{MARK}")</script><img src=x onerror=alert(1) hx-get="/{MARK}" hx-trigger="load">'
_LIVE_TAGS = ("script", "form", "meta", "svg", "iframe", "object", "embed", "input", "button", "style", "base", "link")
_RUN_TAGS = ("script", "style", "button")  # their text is code, or a control's label
_TEXT_ATTRIBUTES = ("data-confirm", "title", "alt", "aria-label")
_BEHAVIOUR = re.compile(r"^(data-)?hx-|^on|^(http-equiv|action|formaction|srcdoc)$")


def live_markup(html: str) -> list[str]:
    """Whatever of a page came from a hostile file as markup: an element, an htmx or event attribute, a script
    or data link (the page's own controls carry none of the files' mark)."""
    found = []
    for element in BeautifulSoup(html, "html.parser").find_all(True):
        attributes = {name: " ".join(v) if isinstance(v, list) else v for name, v in element.attrs.items()}
        # A page's own control may name the document as text (its title in a delete confirmation).
        marked = [name for name, value in attributes.items() if MARK in value and name not in _TEXT_ATTRIBUTES]
        if element.name in _LIVE_TAGS and (marked or (element.name in _RUN_TAGS and MARK in element.get_text())):
            found.append(str(element)[:120])
        for name, value in attributes.items():
            if _BEHAVIOUR.match(name) and (MARK in value or "victim" in value):
                found.append(f"<{element.name} {name}={value[:80]!r}>")
            if name in ("href", "src") and re.match(r"\s*(javascript|data|vbscript):", value, re.I):
                found.append(f"<{element.name} {name}={value[:80]!r}>")
    return found


def hostile_word_file() -> bytes:
    def build(document):
        document.core_properties.title = HOSTILE_TITLE
        document.add_paragraph(HOSTILE_TITLE, style="Title")
        document.add_paragraph("Calibrate the zorblax gauge before every shift.")
        add_picture(document, image_bytes(96, 64), alt=HOSTILE_TITLE)
        paragraph = document.add_paragraph("Open ")
        add_hyperlink(paragraph, f"the {MARK} link", f"javascript:alert('{MARK}')")

    return docx_bytes(build)


def hostile_pdf_file() -> bytes:
    return _pdf_titled(HOSTILE_TITLE)


@pytest.fixture
def api_token(users):
    from portal.api.tokens import create_token

    return {"Authorization": f"Bearer {create_token(users['PlatformAdmin'], 'uploads')[1]}"}


def _send(app, client_as, api_token, way: str, name: str, data: bytes, content_type: str, **form):
    """``name`` sent the way a browser's form (``upload``) or the API (``api-file``, ``api-json``) sends it."""
    if way == "upload":
        return client_as("PlatformAdmin").post(
            "/packs/ops/documents",
            data={"files": (io.BytesIO(data), name, content_type), **form},
            content_type="multipart/form-data",
        )
    address = f"/api/v1/packs/ops/documents/{services.document_id_for(name)}"
    if way == "api-json":
        body = {"expected_version": 0, "text": data.decode(), "format": "markdown", **form}
        return app.test_client().put(address, headers=api_token, json=body)
    return app.test_client().put(
        address,
        headers=api_token,
        data={"expected_version": "0", "file": (io.BytesIO(data), name, content_type), **form},
        content_type="multipart/form-data",
    )


def _answered(request):
    """The response to ``request``, which is never a server error. How long such files take is measured by
    a benchmark (docs/performance.md, "The costliest Markdown"), never timed here: a busy machine is no defect."""
    response = request()
    assert response.status_code != 500, response.get_data(as_text=True)[:500]
    return response


@pytest.mark.parametrize(
    "way, name, make, content_type",
    [
        ("upload", "zorblax.md", lambda: HOSTILE_MARKDOWN.encode(), "text/markdown"),
        ("upload", "zorblax.txt", lambda: HOSTILE_MARKDOWN.encode(), "text/plain"),
        ("api-json", "zorblax.md", lambda: HOSTILE_MARKDOWN.encode(), None),
        ("api-file", "zorblax.md", lambda: HOSTILE_MARKDOWN.encode(), "text/markdown"),
        ("upload", "zorblax.docx", hostile_word_file, DOCX),
        ("api-file", "zorblax.pdf", hostile_pdf_file, "application/pdf"),
    ],
    ids=["markdown", "text", "api-json", "api-markdown", "word", "api-pdf"],
)
def test_a_hostile_file_is_stored_as_text_that_no_page_shows_as_markup(
    app, pack, users, client_as, api_token, way, name, make, content_type
):
    """Raw HTML with htmx and event attributes, forms, a refresh, script and data links, SVG with a script,
    and a Word or PDF file whose own title is HTML: stored, and shown as the text it is everywhere it is read
    (the staff page, the Library, searches, and a member's cited document)."""
    victim = services.upload_file(pack, "victim.md", b"# Victim\n\nKeep this document.\n", None).document
    shared = {"visibility": "shared"}
    response = _answered(lambda: _send(app, client_as, api_token, way, name, make(), content_type, **shared))
    assert response.status_code in (200, 201), response.get_data(as_text=True)[:500]
    assert not live_markup(response.get_data(as_text=True))
    document = Document.get(Document.doc_id == "zorblax")
    if name.endswith((".md", ".txt")):
        assert '<form action="/packs/ops/documents/victim/delete"' in document.current_revision().text
    else:
        assert document.title == HOSTILE_TITLE

    agent = create_agent(
        None, "acme-desk", "Acme desk", "open", "Acme Test Co", "", ["ops"], offered=True, add_company=True
    )
    run = ask(agent, users["Member"], "How do I calibrate the zorblax gauge?")
    n = next(r.n for r in run.references() if r.document_id == "zorblax")
    admin, member = client_as("PlatformAdmin"), client_as("Member")
    pages = [
        (admin, "/packs/ops/documents/zorblax"),
        (admin, "/packs/ops/documents/zorblax?view=lines"),
        (admin, "/packs/ops"),
        (admin, "/packs/ops/search?q=zorblax+gauge"),
        (admin, f"/runs/{run.id}"),
        (member, "/library/"),
        (member, "/library/?q=zorblax+gauge"),
        (member, "/library/ops/zorblax"),
        (member, f"/chat/answers/{run.id}/sources"),
        (member, f"/chat/answers/{run.id}/sources/{n}/document"),
    ]
    for client, address in pages:
        page = _answered(lambda client=client, address=address: client.get(address))
        assert page.status_code == 200, address
        html = page.get_data(as_text=True)
        assert not live_markup(html), (address, live_markup(html))
        if address.endswith("/zorblax") or address.endswith("/document"):
            shown = " ".join(BeautifulSoup(html, "html.parser").select_one("article.doc-body").get_text(" ").split())
            assert "Calibrate the zorblax gauge" in shown
            if name.endswith(".md"):  # the raw HTML is shown as it is written
                assert "<form action=" in shown and 'hx-on:click="alert' in shown
    assert Document.get_by_id(victim.id).deleted_at is None


def link_label(size: int) -> bytes:
    return f"# Label\n\nzorblax\n\n[{'a' * size}](https://example.test/)\n".encode()


@pytest.mark.parametrize(
    "name, make, content_type, reason, said",
    [
        ("empty.md", lambda: b"", "text/markdown", "empty", "The document has no text"),
        ("empty.pdf", lambda: b"", "application/pdf", "empty", "The document has no text"),
        ("empty.docx", lambda: b"", DOCX, "empty", "The document has no text"),
        ("empty.png", lambda: b"", "image/png", "empty", "The document has no text"),
        ("manual.md", pdf_with_figure, "text/markdown", "type_mismatch", "it looks like a PDF file"),
        ("manual.txt", pdf_with_figure, "application/octet-stream", "type_mismatch", "it looks like a PDF file"),
        ("archive.docx", lambda: _zip_of({"notes.txt": "zorblax"}), DOCX, "type_mismatch", "a zip archive"),
        ("picture.docx", lambda: image_bytes(64, 64), DOCX, "type_mismatch", "it looks like a PNG image"),
        ("notes.md", lambda: image_bytes(4, 4, "GIF"), "text/markdown", "type_mismatch", "it looks like a GIF image"),
        ("drawing.png", lambda: b"<svg onload='alert(1)'></svg>", "image/png", "type_mismatch", "an SVG drawing"),
        ("notes.md", lambda: b"# Notes\n\nzorblax\n", "text/html", "type_mismatch", "was sent as text/html"),
        (
            "label.md",
            lambda: link_label(1_000_000),
            "text/markdown",
            "too_many_chars",
            "the limit is 400,000 characters",
        ),
    ],
    ids=lambda value: value if isinstance(value, str) and "/" not in value and " " not in value else None,
)
@pytest.mark.parametrize("way", ["upload", "api-file"])
def test_a_file_that_lies_or_holds_nothing_is_refused_naming_why_and_nothing_is_stored(
    app, pack, client_as, api_token, way, name, make, content_type, reason, said
):
    before = data_snapshot(app)
    response = _answered(lambda: _send(app, client_as, api_token, way, name, make(), content_type))
    assert response.status_code == 422
    if way == "upload":
        line = BeautifulSoup(response.data, "html.parser").select_one("#upload-outcomes .outcome")
        assert line["data-reason"] == reason and said in line.text and name in line.text
    else:
        assert response.json["error"]["code"] == reason and said in response.json["error"]["message"]
    assert data_snapshot(app) == before


def test_a_text_that_begins_with_an_image_signature_in_letters_is_text(app, pack, client_as):
    """ "GIF89a" is printable: a note about the format may begin with it, and was refused as a GIF image."""
    admin = client_as("PlatformAdmin")
    assert upload(admin, "ops", "gif-notes.md", b"GIF89a is the animated version of the format.\n").status_code == 200
    assert Document.get(Document.doc_id == "gif-notes").current_revision().version == 1


def test_accented_letters_of_a_file_name_are_written_in_ascii_and_an_id_named_before_is_kept(app, pack, client_as):
    from portal.documents.services import upload_file

    """ "Übergabe.md" was the document "bergabe": the letters outside ASCII were dropped. A document named so
    before stays the one its file updates."""
    admin = client_as("PlatformAdmin")
    assert upload(admin, "ops", "Straße Übergabe.md", b"zorblax one\n").status_code == 200
    assert Document.get(Document.title == "Straße Übergabe").doc_id == "strasse-ubergabe"
    before = upload_file(pack, "Café.md", b"zorblax old\n", None, doc_id="caf")  # as named before
    assert upload(admin, "ops", "Café.md", b"zorblax new\n").status_code == 200
    assert Document.get_by_id(before.document.id).current_revision().version == 2
    assert not Document.select().where(Document.doc_id == "cafe").exists()


def test_a_file_name_written_only_in_another_script_is_a_document_and_stays_one(app, pack, client_as):
    """ "日本語.md" was refused as having "no letters or digits": its letters are not the id's. Its id is a digest
    of the name, so uploading it again makes a new version, and another name another document."""
    admin = client_as("PlatformAdmin")
    assert upload(admin, "ops", "日本語.md", b"zorblax one\n").status_code == 200
    document = Document.get(Document.title == "日本語")
    assert document.doc_id.startswith("doc-")
    assert admin.get(f"/packs/ops/documents/{document.doc_id}").status_code == 200
    assert upload(admin, "ops", "日本語.md", b"zorblax two\n").status_code == 200
    assert Document.get_by_id(document.id).current_revision().version == 2
    assert upload(admin, "ops", "Отчёт.md", b"zorblax three\n").status_code == 200
    assert Document.get(Document.title == "Отчёт").doc_id not in ("", document.doc_id)


@pytest.mark.parametrize("name", ["....", "....md", ".md", "..", "-_-.md"])
def test_a_file_name_of_only_dots_is_refused_naming_the_name(app, pack, client_as, name):
    before = data_snapshot(app)
    response = upload(client_as("PlatformAdmin"), "ops", name, b"# Notes\n\nzorblax\n")
    assert response.status_code == 422
    line = BeautifulSoup(response.data, "html.parser").select_one("#upload-outcomes .outcome")
    assert line["data-reason"] in ("bad_name", "unsupported_type") and name in line.text
    assert data_snapshot(app) == before


def _zip_of(parts: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for part, text in parts.items():
            archive.writestr(part, text)
    return buffer.getvalue()


@pytest.mark.parametrize(
    "name, text, shown",
    [
        ("nested-list.md", "- " * 10_000 + "deepest item\n", "deepest item"),
        ("nested-numbers.md", "1. " * 10_000 + "deepest item\n", "deepest item"),
        ("nested-quotes.md", ">" * 10_000 + " deepest quote\n", "deepest quote"),
        ("wide-table.md", "|a" * 50_000 + "|\n" + "|-" * 50_000 + "|\n" + "|b" * 50_000 + "|\n", "b b b"),
        ("long-label.md", f"[{'a' * 390_000}](https://example.test/)\n", "a" * 390_000),
        ("unclosed-figures.md", "[Figure 1: " * 36_000, " ".join(["[Figure 1:"] * 36_000)),
        ("blank-lines.md", 'db_password = "Tr0ub4dor&3"' + "\n" * 390_000 + "last line\n", "last line"),
        ("long-cell.md", "| h |\n| - |\n| " + "a" * 390_000 + " - |\n", "a" * 390_000 + " -"),
    ],
    ids=lambda value: value if isinstance(value, str) and value.endswith(".md") else "",
)
def test_extreme_markdown_is_stored_and_shown_whole(app, pack, client_as, name, text, shown):
    """10,000 levels of nesting, a row of 50,000 cells, a link label of 390,000 characters, 36,000 unclosed
    figure markers, a credential redacted above 390,000 line breaks, a table cell of one 390,000-character
    word and a hyphen: each within the 400,000-character limit, stored, and read back, every character on
    the page."""
    admin = client_as("PlatformAdmin")
    text = f"# Extreme\n\nThe zorblax gauge.\n\n{text}"
    response = _answered(lambda: upload(admin, "ops", name, text.encode()))
    assert response.status_code == 200, response.get_data(as_text=True)[:500]
    doc_id = name.removesuffix(".md")
    page = _answered(lambda: admin.get(f"/packs/ops/documents/{doc_id}"))
    body = BeautifulSoup(page.data, "html.parser").select_one("article.doc-body").get_text(" ")
    assert shown in " ".join(body.split())
    results = _answered(lambda: admin.get("/packs/ops/search?q=zorblax+gauge"))
    assert f"/packs/ops/documents/{doc_id}" in results.get_data(as_text=True)


# --- an upload over text edited in the browser ------------------------------------------------------


def _edited_in_the_browser(pack, editor) -> Revision:
    """notes.md uploaded (v1), its text edited in the browser (v2), then who may read it changed (v3: a copy
    of v2's text, so the current text is still the browser's)."""
    services.upload_file(pack, "notes.md", b"# Notes\n\nFrom the file.\n", None)
    editing.edit_text(Document.get(Document.doc_id == "notes"), "# Notes\n\nFixed in the browser.\n", 1, editor)
    document = Document.get(Document.doc_id == "notes")
    change_reader_access(document, ReaderAccess("shared", ()), 2, None)
    return Revision.get((Revision.document == document) & (Revision.version == 2))


def _replaced_sentence(edit: Revision) -> str:
    return (
        f"Version 2 was edited in the browser by platformadmin@example.test on {when(edit.created_at)} UTC; "
        "this upload replaced that text. Version 2 stays in the history."
    )


def test_an_upload_over_text_edited_in_the_browser_says_it_replaced_it_and_where_it_stays(app, pack, users, client_as):
    """A re-upload replaced the browser's edit without a word (the edit stayed in the history, unannounced).
    The result line now names the edit (version, who, when), says it was replaced and links the version."""
    edit = _edited_in_the_browser(pack, users["PlatformAdmin"])
    response = upload(client_as("PlatformAdmin"), "ops", "notes.md", b"# Notes\n\nFrom the file again.\n")
    line = _outcomes(response)["notes.md"]
    assert "(version 4)" in _text(line)
    replaced = line.select_one(".outcome-replaced-edit")
    assert _text(replaced) == _replaced_sentence(edit) + " Open version 2"
    assert replaced.select_one("a")["href"] == "/packs/ops/documents/notes?version=2"
    document = Document.get(Document.doc_id == "notes")
    assert "From the file again." in document.current_revision().text
    assert "Fixed in the browser." in Revision.get((Revision.document == document) & (Revision.version == 2)).text

    again = upload(client_as("PlatformAdmin"), "ops", "notes.md", b"# Notes\n\nA third file.\n")
    assert _outcomes(again)["notes.md"].select_one(".outcome-replaced-edit") is None  # v4 came from a file
    unchanged = upload(client_as("PlatformAdmin"), "ops", "notes.md", b"# Notes\n\nA third file.\n")
    assert _outcomes(unchanged)["notes.md"].select_one(".outcome-replaced-edit") is None


def test_the_api_and_cairn_ingest_say_an_upload_replaced_text_edited_in_the_browser(
    app, pack, users, api_token, tmp_path
):
    edit = _edited_in_the_browser(pack, users["PlatformAdmin"])
    address = "/api/v1/packs/ops/documents/notes"
    response = app.test_client().put(
        address, headers=api_token, json={"expected_version": 3, "text": "# Notes\n\nFrom the API.\n"}
    )
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.get_json()["version"] == 4
    assert response.get_json()["replaced_browser_edit"] == {
        "version": 2,
        "edited_by": "platformadmin@example.test",
        "edited_at": edit.created_at.isoformat() + "Z",
        "message": _replaced_sentence(edit),
    }
    plain = app.test_client().put(
        address, headers=api_token, json={"expected_version": 4, "text": "# Notes\n\nAgain from the API.\n"}
    )
    assert plain.get_json()["replaced_browser_edit"] is None

    edit = Revision.get_by_id(
        editing.edit_text(
            Document.get(Document.doc_id == "notes"), "# Notes\n\nBy hand.\n", 5, users["PlatformAdmin"]
        ).id
    )
    (tmp_path / "notes.md").write_bytes(b"# Notes\n\nFrom cairn ingest.\n")
    result = cli_runner(app)("ingest", "ops", str(tmp_path / "notes.md"), "--json")
    line = json.loads(result.stdout)
    assert line["document"]["version"] == 7
    assert line["message"] == _replaced_sentence(edit).replace("Version 2", "Version 6")
