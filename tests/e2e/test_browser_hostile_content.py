"""In Chromium: a document whose figure label carries htmx attributes, and whose text names an image
elsewhere, is opened by an administrator. Nothing is sent on the reader's behalf, not even a picture
request, and the document it aimed at still exists."""

from __future__ import annotations

from urllib.parse import urlsplit

from browser_helpers import sign_in
from playwright.sync_api import expect
from test_viewer import LABEL, PAYLOAD, hostile_word

from helpers import PASSWORD
from portal.documents import services
from portal.models import Document


def test_opening_a_hostile_document_sends_nothing_and_deletes_nothing(page, pack, users):
    victim = services.upload_file(pack, "victim.md", b"# Victim\n\nKeep this document.\n", None).document
    text = f"# Zorblax\n\nCalibrate the gauge.\n\n{PAYLOAD}\n\n![gauge](https://tracker.test/p.png)\n"
    services.upload_file(pack, "zorblax.md", text.encode(), None)
    services.upload_file(pack, "zorblax-word.docx", hostile_word(), None)
    sign_in(page, users["PlatformAdmin"].email, PASSWORD)
    expect(page.locator("nav")).to_be_visible()

    sent: list[tuple[str, str]] = []
    page.on("request", lambda request: sent.append((request.method, request.url)))
    # The Markdown file names a figure it has none of: its marker stays text. The Word file's figure is kept.
    page.goto("/packs/ops/documents/zorblax")
    expect(page.locator(".doc-body")).to_contain_text(PAYLOAD)
    # htmx processed the page on DOMContentLoaded, before goto returned; ask it to look once more.
    page.evaluate("() => htmx.process(document.body)")
    page.goto("/packs/ops/documents/zorblax-word")
    figure = page.locator(".doc-body .figure img")
    expect(figure).to_be_attached()
    page.evaluate("() => htmx.process(document.body)")
    assert (figure.get_attribute("alt"), page.locator(".figure-caption").inner_text()) == (LABEL, f"Figure 1: {LABEL}")
    assert [url for method, url in sent if method != "GET"] == []
    assert {urlsplit(url).netloc for _method, url in sent} == {urlsplit(page.url).netloc}
    assert Document.get_by_id(victim.id).deleted_at is None
    page.goto("/packs/ops/documents/victim")
    expect(page.locator(".doc-head h1")).to_have_text("Victim")
