"""In Chromium: upload a Word file with pictures, a PDF and a scanned PDF; see progress,
the refusal, and the figures in the viewer."""

from __future__ import annotations

import re

from browser_helpers import sign_in
from playwright.sync_api import expect
from test_uploads import pdf_with_figure, word_with_pictures

from helpers import PASSWORD
from resources.make_fixtures import PdfPage, pdf_bytes, rgb_image


def _note(folder, name: str, text: str):
    """A Markdown note written to ``folder`` as ``name``, titled from it."""
    path = folder / name
    path.write_text(f"# {name.removesuffix('.md').replace('-', ' ').capitalize()}\n\n{text}\n")
    return path


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
    page.locator("#upload-form button[type=submit]").press("Enter")
    expect(page.locator(".upload-progress")).to_be_visible()
    expect(page.locator("#upload-outcomes .outcome")).to_have_count(3)
    expect(page.locator("#upload-bar")).to_have_attribute("value", "100")
    done = page.locator(".upload-label")
    expect(done).to_have_text("Done: 3 files sent — 2 added, 1 refused.")
    expect(done).to_be_focused()  # not the body: the Upload button was disabled under the focus
    refused = page.locator(".outcome.refused")
    expect(refused).to_have_count(1)
    expect(refused).to_contain_text("reading text from images is not supported yet")
    expect(refused).to_have_attribute("data-reason", "scanned_pdf")
    page.keyboard.press("Tab")  # from the summary to the link under it, which takes the focus to the refusal
    expect(page.get_by_role("link", name="Go to the first refused file")).to_be_focused()
    page.keyboard.press("Enter")
    expect(refused).to_be_focused()

    # a second upload on the page starts under a divider: its summary counts the lines below it
    page.set_input_files("#files", [str(scanned)])
    page.locator("#upload-form button[type=submit]").press("Enter")
    expect(done).to_have_text("Done: 1 file sent — 0 added, 1 refused.")
    expect(page.locator("#upload-outcomes .outcome-batch")).to_have_count(1)
    expect(page.locator("#upload-outcomes .outcome-batch ~ .outcome")).to_have_count(1)

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


def test_a_file_over_the_limit_is_refused_in_the_browser_and_never_sent(page, pack, users, tmp_path):
    from portal.ingest import limits

    huge = tmp_path / "huge.md"
    huge.write_bytes(b"a" * (limits.MAX_FILE_BYTES + 70 * 1024))
    small = tmp_path / "small-note.md"
    small.write_bytes(b"# Small note\n\nSent on its own.\n")
    sent = []
    page.on("request", lambda request: sent.append(request) if request.method == "POST" else None)
    sign_in(page, users["PlatformAdmin"].email, PASSWORD)
    page.goto("/packs/ops")
    page.set_input_files("#files", [str(huge), str(small)])
    page.click("#upload-form button[type=submit]")
    expect(page.locator(".upload-label")).to_have_text(
        "Done: 1 of 2 files sent (1 too large to send) — 1 added, 1 refused."
    )
    refused = page.locator("#upload-outcomes .outcome.refused")
    expect(refused).to_have_text("huge.md: " + limits.not_sent_too_large_message().replace("{size}", "4.1 MB"))
    expect(refused).to_have_attribute("data-reason", "too_large")
    expect(page.locator("#upload-outcomes .outcome.accepted")).to_contain_text("small-note.md: added as")
    uploads = [r for r in sent if r.url.endswith("/packs/ops/documents")]
    assert len(uploads) == 1  # the small file's: its body is far under the limit the huge file is over
    assert uploads[0].sizes()["requestBodySize"] < 1024

    sent.clear()
    page.set_input_files("#files", [str(huge)])
    page.click("#upload-form button[type=submit]")
    expect(page.locator(".upload-label")).to_have_text(
        "Done: 0 of 1 file sent (1 too large to send) — 0 added, 1 refused."
    )
    expect(refused).to_have_count(2)
    assert sent == []


def test_without_javascript_a_batch_over_its_limit_names_each_file(
    browser, live_server, pack, users, tmp_path, monkeypatch
):
    from portal.ingest import limits

    monkeypatch.setattr(limits, "MAX_BATCH_BYTES", 6 * 1024 * 1024)
    sizes = {"one.md": 3 * 1024 * 1024, "two.md": 3 * 1024 * 1024, "big.md": 5 * 1024 * 1024}
    for name, size in sizes.items():
        (tmp_path / name).write_bytes(b"a" * size)
    context = browser.new_context(base_url=live_server, java_script_enabled=False)
    page = context.new_page()
    sign_in(page, users["PlatformAdmin"].email, PASSWORD)
    page.goto("/packs/ops")
    page.set_input_files("#files", [str(tmp_path / name) for name in sizes])
    page.click("#upload-form button[type=submit]")
    outcomes = page.locator("#upload-outcomes .outcome.refused")
    expect(outcomes).to_have_count(3)
    expect(outcomes.nth(0)).to_contain_text(
        "one.md: refused — The files sent together were 11.0 MB, over the 6 MB limit for one upload"
    )
    expect(outcomes.nth(1)).to_contain_text("two.md: refused — The files sent together were 11.0 MB")
    expect(outcomes.nth(2)).to_contain_text("big.md: refused — The file is 5.0 MB; the limit is 4 MB per file.")
    expect(page.locator("#docs-heading")).to_have_text("Documents (0)")
    context.close()


def test_a_file_the_portal_did_not_take_is_named_and_counted_apart_from_the_refused(page, pack, users, tmp_path):
    """A file whose request ends without an outcome (the connection dropped: the server was killed or
    restarted; or an answer that is no outcome: the session ended, so the form is refused as expired) is a
    line of its own, with its name, counted as not stored: never as sent and refused for its contents, and
    never a bare message with no file name in the list."""
    first = _note(tmp_path, "first-note.md", "Stored before the connection dropped.")
    dropped = _note(tmp_path, "dropped-note.md", "Its request never reaches the portal.")
    expired = _note(tmp_path, "expired-note.md", "Sent after the session ended.")

    sign_in(page, users["PlatformAdmin"].email, PASSWORD)
    page.goto("/packs/ops")

    def drop_one(route):
        if b"dropped-note.md" in (route.request.post_data_buffer or b""):
            route.abort()  # as when the server is killed with the request under way
        else:
            route.continue_()

    page.route("**/packs/ops/documents", drop_one)
    page.set_input_files("#files", [str(first), str(dropped)])
    page.locator("#upload-form button[type=submit]").press("Enter")
    label = page.locator(".upload-label")
    expect(label).to_have_text("Done: 2 files sent — 1 added, 0 refused, 1 not stored.")
    expect(label).to_be_focused()
    lost = page.locator("#upload-outcomes .outcome[data-outcome=not_stored]")
    expect(lost).to_have_count(1)
    expect(lost).to_have_attribute("data-reason", "network")
    expect(lost).to_contain_text("dropped-note.md: not stored — no answer came from the portal")
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Go to the first refused file")).to_be_focused()
    page.keyboard.press("Enter")
    expect(lost).to_be_focused()
    page.unroute("**/packs/ops/documents")

    page.context.clear_cookies()  # signed out in another tab: the form's token has no session any more
    page.set_input_files("#files", [str(expired)])
    page.locator("#upload-form button[type=submit]").press("Enter")
    expect(label).to_have_text("Done: 1 file sent — 0 added, 0 refused, 1 not stored.")
    refused_for_form = page.locator("#upload-outcomes .outcome[data-outcome=not_stored]").last
    # said as for any request signed out (it said "The form had expired", whose "reload" led to the sign-in page)
    expect(refused_for_form).to_have_attribute("data-reason", "signed_out")
    expect(refused_for_form).to_contain_text("expired-note.md: not stored — you were signed out. Sign in again")
    # Every child of the list is a line of it.
    assert page.evaluate("[...document.getElementById('upload-outcomes').children].every(e => e.tagName === 'LI')")


def test_leaving_the_page_while_a_batch_is_sent_asks_first(page, pack, users, tmp_path):
    """Clicking away in the middle of a batch stopped the files not yet sent without a word (found by a browser
    walkthrough); the browser now asks, and staying lets the batch finish."""
    held = _note(tmp_path, "held-note.md", "Its request waits until the test lets it go.")
    second = _note(tmp_path, "second-note.md", "Sent after the first.")
    sign_in(page, users["PlatformAdmin"].email, PASSWORD)
    page.goto("/packs/ops")
    waiting, released = [], []

    def hold(route):
        if released:
            route.continue_()
        else:
            waiting.append(route)

    page.route("**/packs/ops/documents", hold)
    page.set_input_files("#files", [str(held), str(second)])
    page.locator("#upload-form button[type=submit]").click()
    label = page.locator(".upload-label")
    expect(label).to_have_text("Uploading held-note.md (1 of 2)…")
    asked = []

    def stay(dialog):
        asked.append(dialog.type)
        dialog.dismiss()

    page.once("dialog", stay)
    agents = page.get_by_role("link", name="Agents").first
    agents.click(no_wait_after=True)  # ends once the question was answered
    assert asked == ["beforeunload"]
    expect(label).to_have_text("Uploading held-note.md (1 of 2)…")
    released.append(True)
    waiting[0].continue_()
    expect(label).to_have_text("Done: 2 files sent — 2 added, 0 refused.")
    _note(tmp_path, "second-note.md", "Sent again, changed.")
    page.set_input_files("#files", [str(second)])
    page.locator("#upload-form button[type=submit]").click()
    expect(label).to_have_text("Done: 1 file sent — 0 added, 1 new revision, 0 refused.")  # as its line says
    expect(page.locator("#upload-outcomes .outcome").last).to_contain_text("second-note.md: new revision as")
    agents.click()  # nothing is being sent: no question
    expect(page).to_have_url(re.compile(r"/agents"))


def test_a_batch_whose_session_ends_midway_stops_and_offers_to_sign_in_again(page, pack, users, tmp_path):
    """The session ended between two files (signed out everywhere): the rest of the batch was refused one file at a
    time as "the portal answered 204", and the sign-in page said "You were signed out" once per file (found by
    review). The batch stops, names each file not stored, and links to the sign-in page, which comes back here."""
    notes = [_note(tmp_path, name, "A note.") for name in ("kept-note.md", "late-note.md", "last-note.md")]
    admin = users["PlatformAdmin"]
    sign_in(page, admin.email, PASSWORD)
    page.goto("/packs/ops")

    def sign_out_after_the_first(route):
        if b"late-note.md" in (route.request.post_data_buffer or b""):
            admin.end_every_session()
        route.continue_()

    page.route("**/packs/ops/documents", sign_out_after_the_first)
    page.set_input_files("#files", [str(note) for note in notes])
    page.locator("#upload-form button[type=submit]").click()
    label = page.locator(".upload-label")
    expect(label).to_have_text("Done: 3 files sent — 1 added, 0 refused, 2 not stored.")
    lost = page.locator("#upload-outcomes .outcome[data-outcome=not_stored]")
    expect(lost).to_have_count(2)
    expect(lost.first).to_contain_text("late-note.md: not stored — you were signed out. Sign in again, then send it")
    expect(lost.last).to_have_attribute("data-reason", "signed_out")
    page.get_by_role("link", name="Sign in again").click()
    expect(page.locator("main")).to_contain_text("You were signed out. Please sign in again; nothing was changed.")
    assert page.locator("main").inner_text().count("You were signed out") == 1
    page.fill("input[name=email]", admin.email)
    page.fill("input[name=password]", PASSWORD)
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"/packs/ops$"))
    expect(page.locator("#document-list")).to_contain_text("kept-note")
