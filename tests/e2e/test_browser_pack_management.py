"""In Chromium: an administrator edits a pack, reads what deleting it would remove, and deletes it."""

from __future__ import annotations

import re

from browser_helpers import arrived_at, sign_in
from playwright.sync_api import expect

from helpers import LOCKS, PASSWORD, SPOOL
from portal.auth.services import create_user
from portal.documents import services as documents
from portal.models import Pack


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


def test_a_refused_pack_edit_or_token_puts_the_focus_on_its_field_or_message(page, pack, users):
    """A form posted without htmx comes back as a whole page: the field refused takes the focus, described by the
    message under it, as on the new-pack form; a refusal of no one field takes the focus itself."""
    sign_in(page, users["PlatformAdmin"].email, PASSWORD)
    page.goto("/packs/ops/edit")
    page.fill("#title", "\u200b")  # passes the browser's required check, refused by the portal: it shows nothing
    page.get_by_role("button", name="Save").press("Enter")
    title = page.locator("#title")
    expect(title).to_be_focused()
    expect(title).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#title-error")).to_have_text("A pack needs a title.")
    expect(title).to_have_accessible_description("A pack needs a title.")

    page.goto("/account/")
    page.fill("#token-name", "   ")
    page.get_by_role("button", name="Create token").press("Enter")
    message = page.get_by_role("alert")
    expect(message).to_contain_text("Give the token a name")
    expect(message).to_be_focused()


def test_a_pack_saved_from_a_form_opened_before_another_admin_s_save_is_refused_and_keeps_its_text(
    page, browser, live_server, pack, users
):
    """The later save used to undo the earlier one without a word (its vocabulary above all)."""
    second = create_user("second-admin@example.test", PASSWORD, {"PlatformAdmin"})
    sign_in(page, users["PlatformAdmin"].email, PASSWORD)
    page.goto("/packs/ops/edit")
    other = browser.new_context(base_url=live_server).new_page()
    sign_in(other, second.email, PASSWORD)
    other.goto("/packs/ops/edit")
    other.fill("#vocabulary", "sticker => label")
    other.get_by_role("button", name="Save").click()
    arrived_at(other, re.compile(r"/packs/ops$"))
    other.context.close()

    page.fill("#title", "Ops night desk")
    page.fill("#vocabulary", "crash => dump, short dump")
    page.get_by_role("button", name="Save").press("Enter")
    message = page.get_by_role("alert")
    expect(message).to_contain_text("Someone else changed this pack")
    expect(message).to_contain_text("You both changed its vocabulary: the form keeps yours.")
    expect(message).to_be_focused()
    expect(page.locator("#title")).to_have_value("Ops night desk")  # what was typed stays
    expect(page.locator("#vocabulary")).to_have_value("crash => dump, short dump")
    assert Pack.get_by_id(pack.id).vocabulary == "sticker => label"

    page.get_by_role("button", name="Save").click()  # now a deliberate replace
    arrived_at(page, re.compile(r"/packs/ops$"))
    expect(page.locator("h1")).to_contain_text("Ops night desk")
    assert Pack.get_by_id(pack.id).vocabulary == "crash => dump, short dump"


def test_choosing_a_company_pack_picks_the_only_company(page, users):
    """Choosing Kind "company" left "none" as the company, so the form was refused though there is only one company
    to choose (browser walkthrough); choosing "generic" again leaves none."""
    sign_in(page, users["PlatformAdmin"].email, PASSWORD)
    page.goto("/packs/")
    page.get_by_text("New pack").click()
    page.fill("#slug", "acme-notes")
    page.fill("#title", "Acme notes")
    page.select_option("#kind", "company")
    expect(page.locator("#company")).to_have_value("Acme Test Co")
    page.select_option("#kind", "generic")
    expect(page.locator("#company")).to_have_value("")
    page.select_option("#kind", "company")
    page.get_by_role("button", name="Create pack").click()
    arrived_at(page, re.compile(r"/packs/acme-notes$"))
    assert Pack.get(Pack.slug == "acme-notes").company.name == "Acme Test Co"
