"""In Chromium: an administrator edits a pack, reads what deleting it would remove, and deletes it."""

from __future__ import annotations

import re

from browser_helpers import arrived_at, sign_in
from playwright.sync_api import expect

from helpers import LOCKS, PASSWORD, SPOOL
from portal.documents import services as documents


def test_admin_edits_a_pack_then_deletes_it_after_the_confirmation(page, pack, users):
    documents.upload_file(pack, "spool-overflow.md", SPOOL, None)
    documents.upload_file(pack, "lock-entries.md", LOCKS, None)
    sign_in(page, users["PlatformAdmin"].email, PASSWORD)
    page.goto("/packs/ops")

    page.get_by_role("link", name="Edit pack").click()
    arrived_at(page, re.compile(r"/packs/ops/edit$"))
    page.fill("#title", "Ops runbooks")
    page.fill("#description", "What the desk follows at night.")
    page.get_by_role("button", name="Save").click()
    arrived_at(page, re.compile(r"/packs/ops$"))
    expect(page.locator("h1")).to_contain_text("Ops runbooks")
    expect(page.locator(".lead")).to_have_text("What the desk follows at night.")

    page.get_by_role("link", name="Delete pack…").click()
    arrived_at(page, re.compile(r"/packs/ops/delete$"))
    expect(page.locator("h1")).to_have_text("Delete the pack Ops runbooks?")
    contents = page.locator(".pack-contents li")
    expect(contents.nth(0)).to_have_text(re.compile(r"2\s+documents, with\s+2\s+revisions"))
    expect(contents.nth(3)).to_contain_text("no agent grants")
    page.get_by_role("link", name="Cancel").click()  # cancelling changes nothing
    arrived_at(page, re.compile(r"/packs/ops$"))

    page.get_by_role("link", name="Delete pack…").click()
    arrived_at(page, re.compile(r"/packs/ops/delete$"))
    page.get_by_role("button", name="Delete the pack and everything in it").click()
    arrived_at(page, re.compile(r"/packs/$"))
    expect(page.locator(".flashes")).to_contain_text("Deleted the pack Ops runbooks: 2 documents, 2 revisions")
    expect(page.locator("table.list")).to_have_count(0)  # no packs left
    response = page.goto("/packs/ops")
    assert response.status == 404


def test_a_refused_pack_edit_or_token_puts_the_focus_on_its_message(page, pack, users):
    """A form posted without htmx comes back as a whole page: its refusal takes the focus, not the page's top."""
    sign_in(page, users["PlatformAdmin"].email, PASSWORD)
    page.goto("/packs/ops/edit")
    page.fill("#title", "   ")  # passes the browser's required check, refused by the portal
    page.get_by_role("button", name="Save").press("Enter")
    message = page.get_by_role("alert")
    expect(message).to_have_text("A pack needs a title.")
    expect(message).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.locator("#title")).to_be_focused()

    page.goto("/account/")
    page.fill("#token-name", "   ")
    page.get_by_role("button", name="Create token").press("Enter")
    message = page.get_by_role("alert")
    expect(message).to_contain_text("Give the token a name")
    expect(message).to_be_focused()
