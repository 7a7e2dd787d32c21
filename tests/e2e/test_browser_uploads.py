"""In Chromium: upload a Word file with pictures, a PDF and a scanned PDF; see progress,
the refusal, and the figures in the viewer."""

from __future__ import annotations

import re

from browser_helpers import sign_in
from playwright.sync_api import expect
from resources.make_fixtures import PdfPage, pdf_bytes, rgb_image
from test_uploads import pdf_with_figure, word_with_pictures

from helpers import PASSWORD


def test_word_pdf_and_scanned_pdf_uploads(page, pack, users, tmp_path):
    word = tmp_path / "interface-monitoring.docx"
    word.write_bytes(word_with_pictures())
    pdf = tmp_path / "restart-checklist.pdf"
    pdf.write_bytes(pdf_with_figure())
    scanned = tmp_path / "scanned-page.pdf"
    scanned.write_bytes(pdf_bytes([PdfPage(images=[rgb_image(400, 560)])]))

    sign_in(page, users["PlatformAdmin"].email, PASSWORD)
    page.goto("/packs/ops")
    page.set_input_files("#files", [str(word), str(pdf), str(scanned)])
    page.click("#upload-form button[type=submit]")
    expect(page.locator(".upload-progress")).to_be_visible()
    expect(page.locator("#upload-outcomes .outcome")).to_have_count(3)
    expect(page.locator("#upload-bar")).to_have_attribute("value", "100")
    expect(page.locator(".upload-label")).to_have_text(re.compile(r"^Done: 3 files"))
    refused = page.locator(".outcome.refused")
    expect(refused).to_have_count(1)
    expect(refused).to_contain_text("reading text from images is not supported yet")
    expect(refused).to_have_attribute("data-reason", "scanned_pdf")

    page.click("#document-list >> text=Interface monitoring")
    figures = page.locator(".doc-body .figure img")
    expect(figures).to_have_count(2)
    for image in figures.all():
        expect(image).to_have_js_property("complete", True)
        assert image.evaluate("image => image.naturalWidth") > 0
    expect(page.locator(".figure-caption").first).to_have_text("Figure 1: Red status lamp")

    page.goto("/packs/ops/documents/restart-checklist")
    expect(page.locator(".doc-body .page-line")).to_have_text(["Page 1", "Page 2"])
    pdf_figure = page.locator(".doc-body .figure img")
    expect(pdf_figure).to_have_js_property("complete", True)
    assert pdf_figure.evaluate("image => image.naturalWidth") > 0
    with page.expect_download() as download:
        page.click("text=Download the original")
    assert download.value.suggested_filename == "restart-checklist.pdf"
    assert download.value.path().read_bytes() == pdf.read_bytes()


def test_a_file_over_the_request_limit_is_refused_in_the_words_of_the_limits_module(page, pack, users, tmp_path):
    from portal.ingest import limits

    huge = tmp_path / "huge.md"
    huge.write_bytes(b"a" * (limits.MAX_FILE_BYTES + 70 * 1024))  # over the request cap: the server answers 413
    sign_in(page, users["PlatformAdmin"].email, PASSWORD)
    page.goto("/packs/ops")
    page.set_input_files("#files", [str(huge)])
    page.click("#upload-form button[type=submit]")
    refused = page.locator("#upload-outcomes .outcome.refused")
    expect(refused).to_have_text(f"huge.md: {limits.upload_refused_too_large_message()}")
    expect(refused).to_have_attribute("data-reason", "too_large")
