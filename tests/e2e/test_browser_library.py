"""In Chromium: an administrator opens a document to members, a member finds it in the Library and
reads it, and once the administrator tightens it again the member's Library and old citation no longer
show it."""

from __future__ import annotations

import re

import pytest
from browser_helpers import arrived_at, htmx_settled, sign_in
from playwright.sync_api import expect

from helpers import PASSWORD
from portal.agents.services import create_agent
from portal.chat.services import start_conversation
from portal.documents import services
from portal.library import services as library_services

NOTE = b"# Spool overflow runbook\n\nRun the report RSPO1041 to delete old spool requests.\n"


def _set_visibility(page, label: str, roles: tuple[str, ...] = ()) -> None:
    page.goto("/packs/ops/documents/spool-overflow")
    page.locator(".reader-access").get_by_label(label, exact=True).check()
    for role in roles:
        page.locator(".reader-access").get_by_label(role, exact=True).check()
    page.click("text=Save who may read")
    expect(page.locator(".flash")).to_contain_text("Who may read it changed")


def test_admin_shares_a_document_the_member_reads_it_and_loses_it_again(browser, live_server, pack, users):
    services.upload_file(pack, "spool-overflow.md", NOTE, users["PlatformAdmin"])
    agent = create_agent(
        None, "acme-desk", "Acme desk", "preferred", "Acme Test Co", "", ["ops"], offered=True, add_company=True
    )
    _conversation, run = start_conversation(users["Member"], agent, "How do I delete old spool requests?")
    assert run.cited == [1]
    citation = f"/chat/answers/{run.id}/sources/1/document"
    admin_context = browser.new_context(base_url=live_server)
    member_context = browser.new_context(base_url=live_server)
    admin, member = admin_context.new_page(), member_context.new_page()
    sign_in(admin, users["PlatformAdmin"].email, PASSWORD)
    sign_in(member, users["Member"].email, PASSWORD)

    member.goto("/library/")
    expect(member.locator("#library-empty")).to_be_visible()

    _set_visibility(admin, "Shared: staff and the members of every company")
    expect(admin.locator("#reader-access-now")).to_contain_text("Shared")

    member.click("nav >> text=Library")
    arrived_at(member, re.compile(r"/library/$"))
    member.fill("#library-q", "RSPO1041")  # results arrive as you type
    expect(member.locator("#library-results .hit")).to_have_count(1)
    member.click("#library-results .hit-title")
    expect(member.locator(".doc-head h1")).to_have_text("Spool overflow runbook")
    expect(member.locator(".doc-head")).to_contain_text("read-only")
    expect(member.locator(".doc-body .cited")).not_to_have_count(0)  # the passage found, highlighted

    member.goto(citation)  # the member's own answer cited it while it was shared
    expect(member.locator(".doc-body")).to_contain_text("RSPO1041")

    # Tightened to staff, and to Auditors among them: no member reads it, not even through an old citation
    # (SPEC 2: "staff" alone still lets members open what their own answer cited).
    _set_visibility(admin, "Staff only", roles=("Auditor",))
    expect(admin.locator("#reader-access-now")).to_contain_text("Staff only")

    member.goto("/library/")
    expect(member.locator("#library-empty")).to_be_visible()
    member.fill("#library-q", "RSPO1041")
    expect(member.locator("#library-results .no-match")).to_be_visible()
    response = member.goto("/library/ops/spool-overflow")
    assert response.status == 404
    assert member.goto(citation).status == 404
    member.goto(f"/chat/answers/{run.id}/sources")
    expect(member.locator(".open-document")).to_have_count(0)
    admin_context.close()
    member_context.close()


@pytest.fixture
def five_notes_two_to_a_page(pack, monkeypatch):
    """Five notes about an IDoc backlog in a Library of two documents to a page: three pages."""
    monkeypatch.setattr(library_services, "DOCUMENTS_PER_PAGE", 2)
    for n in range(1, 6):
        services.upload_file(pack, f"note-{n}.md", f"# Note {n}\n\nThe IDoc backlog, note {n}.\n".encode(), None)


def test_the_pager_swaps_the_list_in_place_and_keeps_the_search(browser, live_server, users, five_notes_two_to_a_page):
    context = browser.new_context(base_url=live_server)
    page = context.new_page()
    sign_in(page, users["Auditor"].email, PASSWORD)
    page.goto("/library/?q=IDoc")
    arrived_at(page, re.compile(r"/library/\?q=IDoc$"))
    hits = page.locator("#library-results .hit").count()
    assert hits > 0
    page.evaluate("window.sameDocument = true")  # gone if the link loaded a new page instead of a swap
    page.click("#library-documents a[rel=next]")
    expect(page.locator("#library-documents nav.pager")).to_contain_text("page 2 of 3")
    arrived_at(page, re.compile(r"/library/\?q=IDoc&page=2$"))  # the address follows, for Back and a reload
    expect(page.locator(".library-list a")).to_have_text(["Note 3", "Note 4"])
    expect(page.locator("#library-results .hit")).to_have_count(hits)  # not searched again, not lost
    page.click("#library-documents a[rel=prev]")
    expect(page.locator(".library-list a")).to_have_text(["Note 1", "Note 2"])
    assert page.evaluate("window.sameDocument") is True
    context.close()


def test_a_new_search_starts_the_list_at_page_one_and_its_pager_keeps_the_search(
    browser, live_server, users, five_notes_two_to_a_page
):
    context = browser.new_context(base_url=live_server)
    page = context.new_page()
    sign_in(page, users["Auditor"].email, PASSWORD)
    next_page = page.locator("#library-documents a[rel=next]")
    # Searching after paging (with no search or another one before), or on the first page (the pager alone
    # changes: its links kept the old search).
    for first, paged, then in ((None, True, "IDoc"), ("IDoc", True, "backlog"), ("IDoc", False, "backlog")):
        page.goto(f"/library/?q={first}" if first else "/library/")
        if paged:
            next_page.click()
            expect(page.locator(".library-list a")).to_have_text(["Note 3", "Note 4"])
        page.fill("#library-q", then)
        arrived_at(page, re.compile(rf"/library/\?q={then}$"))
        expect(page.locator("#library-results .hit")).not_to_have_count(0)
        expect(page.locator(".library-list a")).to_have_text(["Note 1", "Note 2"])  # a new search: page 1
        expect(page.locator("#library-documents nav.pager")).to_contain_text("page 1 of 3")
        expect(next_page).to_have_attribute("href", f"/library/?q={then}&page=2")
        next_page.click()  # and the pager keeps the new search, in the list and in the address
        arrived_at(page, re.compile(rf"/library/\?q={then}&page=2$"))
        expect(page.locator(".library-list a")).to_have_text(["Note 3", "Note 4"])
        expect(page.locator("#library-results .hit")).not_to_have_count(0)
    context.close()


def test_a_search_by_enter_is_one_step_back(browser, live_server, users, five_notes_two_to_a_page):
    """Enter fired the input's "search" and the form's submit: two requests, two identical history entries, and
    the first Back did nothing (found by a browser walkthrough)."""
    context = browser.new_context(base_url=live_server)
    page = context.new_page()
    sign_in(page, users["Auditor"].email, PASSWORD)
    page.goto("/library/")
    arrived_at(page, re.compile(r"/library/$"))
    searches = []
    page.on("request", lambda request: searches.append(request.url) if "q=backlog" in request.url else None)
    page.fill("#library-q", "backlog")
    page.press("#library-q", "Enter")
    arrived_at(page, re.compile(r"/library/\?q=backlog$"))
    expect(page.locator("#library-results .hit")).not_to_have_count(0)
    htmx_settled(page)
    page.wait_for_load_state("networkidle")  # the pause after typing may ask once more: the same address
    page.go_back()
    arrived_at(page, re.compile(r"/library/$"))
    assert 1 <= len(searches) <= 2
    context.close()
