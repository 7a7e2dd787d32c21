"""In Chromium: two administrators upload a new version of the same document; the second, based on the
version both pages showed, is refused with the conflict message and stores nothing. Then the older
revision opens read-only with its notice and its changes up to the current text."""

from __future__ import annotations

from browser_helpers import sign_in
from playwright.sync_api import expect

from helpers import PASSWORD
from portal.documents import services
from portal.models import Document, Revision


def test_a_stale_new_version_is_refused_with_the_conflict_message(page, browser, live_server, pack, users, tmp_path):
    services.upload_file(pack, "restart-notes.md", b"# Restart notes\n\nStop the application servers first.\n", None)
    mine = tmp_path / "restart-notes-mine.md"
    mine.write_bytes(b"# Restart notes\n\nStop the application servers first, then the database.\n")
    theirs = tmp_path / "restart-notes-theirs.md"
    theirs.write_bytes(b"# Restart notes\n\nStop the database first.\n")

    other_context = browser.new_context(base_url=live_server)
    other = other_context.new_page()
    try:
        for tab in (page, other):
            sign_in(tab, users["PlatformAdmin"].email, PASSWORD)
            tab.goto("/packs/ops/documents/restart-notes")
            expect(tab.locator(".doc-head")).to_contain_text("version 1")

        other.click(".new-version summary")
        other.set_input_files("#new-version-file", str(theirs))
        other.click(".new-version button[type=submit]")
        expect(other.locator(".flash, [role=status]").first).to_contain_text("Saved as version 2")

        page.click(".new-version summary")
        page.set_input_files("#new-version-file", str(mine))
        page.click(".new-version button[type=submit]")
        error = page.locator(".new-version .error")
        expect(error).to_contain_text("you edited version 1, but it is now at version 2. Nothing was saved")
        expect(page.locator(".doc-body")).to_contain_text("Stop the database first.")  # the page shows v2 now
        expect(page.locator("input[name=expected_version]").first).to_have_value("2")
    finally:
        other_context.close()
    assert Document.get(Document.doc_id == "restart-notes").current_version == 2
    assert Revision.select().count() == 2

    page.click(".revisions >> text=v1")
    expect(page.locator(".older-revision")).to_contain_text("This is version 1 of 2, read-only")
    expect(page.locator(".new-version")).to_have_count(0)
    page.click("text=Changes up to the current version")
    expect(page.locator(".diff .diff-removed")).to_have_text(["-Stop the application servers first."])
    expect(page.locator(".diff .diff-added")).to_have_text(["+Stop the database first."])


def test_a_refused_new_version_puts_the_focus_on_its_message(page, pack, users, tmp_path):
    services.upload_file(pack, "restart-notes.md", b"# Restart notes\n\nStop the application servers first.\n", None)
    blank = tmp_path / "restart-notes.md"
    blank.write_bytes(b"  \n\t\n")
    page.set_viewport_size({"width": 390, "height": 844})
    sign_in(page, users["PlatformAdmin"].email, PASSWORD)
    page.goto("/packs/ops/documents/restart-notes")
    page.locator(".new-version summary").press("Enter")
    page.set_input_files("#new-version-file", str(blank))
    page.locator(".new-version button[type=submit]").press("Enter")
    error = page.locator(".new-version .error")
    expect(error).to_contain_text("The document has no text")
    expect(error).to_be_focused()  # the page came back at its top: a keyboard user goes on from the message
    expect(error).to_be_in_viewport()
    page.keyboard.press("Tab")
    expect(page.locator("#new-version-file")).to_be_focused()


def test_an_edit_refused_by_a_conflict_puts_the_focus_on_its_message(page, pack, users):
    services.upload_file(pack, "restart-notes.md", b"# Restart notes\n\nStop the application servers first.\n", None)
    sign_in(page, users["PlatformAdmin"].email, PASSWORD)
    page.goto("/packs/ops/documents/restart-notes/edit")
    page.locator("#text").fill("# Restart notes\n\nStop the application servers first, then the database.\n")
    # Meanwhile someone else saves version 2.
    services.upload_file(pack, "restart-notes.md", b"# Restart notes\n\nStop the database first.\n", None)
    page.get_by_role("button", name="Save as a new revision").press("Enter")
    error = page.locator("main > .error")
    expect(error).to_contain_text("Nothing was saved")
    expect(error).to_be_focused()  # not the top of the page above a long editor
    expect(error).to_be_in_viewport()
