"""In Chromium: an AgentBuilder creates an agent, which is a draft no member sees; the builder offers it,
and the member finds it in the support chat with its description and asks it."""

from __future__ import annotations

import re

from browser_helpers import arrived_at, sign_in
from playwright.sync_api import expect

from helpers import PASSWORD, SPOOL
from portal.documents import services as documents

DESCRIPTION = "Spool and output questions, answered from the runbooks."


def test_a_builder_offers_a_draft_agent_and_a_member_then_finds_it(page, browser, live_server, pack, users):
    documents.upload_file(pack, "spool-overflow.md", SPOOL, None)
    member_context = browser.new_context(base_url=live_server)
    member = member_context.new_page()
    try:
        sign_in(page, users["AgentBuilder"].email, PASSWORD)
        page.goto("/agents/new")
        page.fill("#slug", "spool-desk")
        page.fill("#name", "Spool desk")
        page.fill("#description", DESCRIPTION)
        page.check("input[name=mode][value=preferred]")
        page.check("input[name=packs][value=ops]")
        page.click("form.agent-form button[type=submit]")
        arrived_at(page, re.compile(r"/agents/spool-desk$"))
        expect(page.locator("h1 .badge-draft")).to_have_text("draft")
        expect(page.locator(".offering")).to_contain_text("members do not see it")

        sign_in(member, users["Member"].email, PASSWORD)
        member.goto("/chat/")
        expect(member.locator("#chat-heading")).to_have_text("Support chat")
        expect(member.locator("input[name=agent][value=spool-desk]")).to_have_count(0)

        page.click(".offering button[type=submit]")
        expect(page.locator("h1 .badge-offered")).to_have_text("offered")
        expect(page.locator(".history li").first).to_contain_text("offered to members")

        member.reload()
        choice = member.locator("label.choice", has=member.locator("input[value=spool-desk]"))
        expect(choice.locator(".agent-description")).to_have_text(DESCRIPTION)
        choice.locator("input").check()
        member.fill("#question", "How do I delete old spool requests?")
        member.click("#ask-form button[type=submit]")
        expect(member.locator(".turn .answer a.cite").first).to_be_visible()
    finally:
        member_context.close()


def test_a_refused_save_of_an_agent_puts_the_focus_on_its_message(page, pack, users):
    from portal.agents.services import create_agent
    from portal.packs.services import create_pack

    create_pack("acme-notes", "Acme notes", "company", "Acme Test Co")
    create_agent(None, "ops-helper", "Ops helper", "preferred", None, "", [pack.slug])
    sign_in(page, users["PlatformAdmin"].email, PASSWORD)
    for screen in ({"width": 1280, "height": 900}, {"width": 390, "height": 844}):
        page.set_viewport_size(screen)
        page.goto("/agents/ops-helper")
        arrived_at(page, re.compile(r"/agents/ops-helper$"))
        page.locator("input[name=packs][value=acme-notes]").check()  # a company pack, to an agent serving none
        save = page.get_by_role("button", name="Save changes")
        save.focus()
        page.keyboard.press("Enter")
        message = page.locator(".agent-form").locator("xpath=preceding-sibling::p[@role='alert']")
        expect(message).to_contain_text("can be granted only to an agent that serves Acme Test Co")
        expect(message).to_be_focused()  # not the top of the page, a long form above the button pressed
        expect(message).to_be_in_viewport()
        page.keyboard.press("Tab")
        expect(page.locator("#name")).to_be_focused()
