"""In Chromium: Answer feedback as a table sorted by its column headings at 1280 px, as cards at 390 px;
and the help pages linked from where their questions arise."""

from __future__ import annotations

import re

from browser_helpers import arrived_at, htmx_settled, sign_in
from playwright.sync_api import expect

from helpers import LOCKS, PASSWORD, SPOOL
from portal.agents.services import create_agent
from portal.chat.services import start_conversation
from portal.documents import services as documents
from portal.feedback.services import REASONS, rate_answer


def _rated_answers(pack, member):
    documents.upload_file(pack, "spool-overflow.md", SPOOL, None)
    documents.upload_file(pack, "lock-entries.md", LOCKS, None)
    acme = create_agent(
        None, "acme-desk", "Acme desk", "preferred", "Acme Test Co", "", [pack.slug], offered=True, add_company=True
    )
    shared = create_agent(None, "ops-helper", "Ops helper", "preferred", None, "", [pack.slug], offered=True)
    for agent, question, reasons in (
        (acme, "How do I delete old spool requests?", ["incorrect"]),
        (shared, "stale lock entries", ["outdated"]),
        (acme, "TemSe consistency check", ["outdated"]),
    ):
        _, run = start_conversation(member, agent, question)
        rate_answer(member, run, "not_helpful", reasons, f"Note on {question}")


def test_the_feedback_table_sorts_by_its_headings_and_phones_get_cards(page, pack, users):
    _rated_answers(pack, users["Member"])
    sign_in(page, users["Auditor"].email, PASSWORD)
    page.goto("/feedback/")
    arrived_at(page, re.compile(r"/feedback/$"))
    table, cards = page.locator(".feedback-table"), page.locator(".feedback-list")
    expect(table).to_be_visible()
    expect(cards).to_be_hidden()
    expect(page.locator(".sort-links")).to_be_hidden()
    agents = page.locator(".feedback-row .row-agent")
    expect(agents).to_have_text(["Acme desk", "Ops helper", "Acme desk"])  # newest first
    expect(page.locator(".feedback-table th[aria-sort]")).to_have_text("Date ▼")
    page.evaluate("window.notReloaded = true")

    # Each step waits for what the swap shows (the rows, the heading's state, the address).
    page.click(".feedback-table th >> text=Agent")
    arrived_at(page, re.compile(r"/feedback/\?sort=agent$"))
    expect(agents).to_have_text(["Acme desk", "Acme desk", "Ops helper"])
    expect(page.locator(".feedback-table th[aria-sort]")).to_have_attribute("aria-sort", "ascending")
    page.click(".feedback-table th >> text=Agent")
    arrived_at(page, re.compile(r"/feedback/\?sort=-agent$"))
    expect(agents).to_have_text(["Ops helper", "Acme desk", "Acme desk"])
    expect(page.locator(".feedback-table th[aria-sort]")).to_have_attribute("aria-sort", "descending")

    page.select_option("#filter-reason", "outdated")  # the filters keep the order
    arrived_at(page, re.compile(r"/feedback/\?reason=outdated&sort=-agent$"))
    expect(agents).to_have_text(["Ops helper", "Acme desk"])
    assert page.evaluate("window.notReloaded") is True  # sorted and filtered in place

    page.set_viewport_size({"width": 390, "height": 844})
    expect(table).to_be_hidden()
    expect(cards).to_be_visible()
    expect(page.locator(".feedback-item")).to_have_count(2)
    expect(page.locator(".feedback-item").first).to_contain_text("stale lock entries")
    sort_links = page.locator(".sort-links")
    expect(sort_links).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing pushes the page sideways
    sort_links.locator("text=Date").click()
    arrived_at(page, re.compile(r"/feedback/\?reason=outdated$"))
    expect(page.locator(".feedback-item .feedback-question")).to_have_text(
        ["TemSe consistency check", "stale lock entries"]
    )


def test_help_opens_from_the_rating_controls_of_an_answer(page, pack, users):
    _rated_answers(pack, users["Member"])
    sign_in(page, users["Member"].email, PASSWORD)
    page.goto("/chat/")
    page.locator(".conversation-list a").first.click()
    arrived_at(page, re.compile(r"/chat/\d+$"))
    page.locator(".turn .rating a.help-link").first.click()
    arrived_at(page, re.compile(r"/help/rating$"))
    expect(page.locator("h1")).to_have_text("How to rate an answer")
    expect(page.locator(".help-reasons dt")).to_have_count(len(REASONS))


def test_a_date_typed_digit_by_digit_filters_once_it_is_whole(browser, live_server, pack, users):
    """Typing 2026 in a date field passes through the years 0002, 0020 and 0202, each a valid date: each
    filtered the list (showing nothing) and pushed an address onto the history. Only the whole year filters."""
    _rated_answers(pack, users["Member"])
    context = browser.new_context(base_url=live_server, locale="en-US")
    page = context.new_page()
    try:
        sign_in(page, users["Auditor"].email, PASSWORD)
        page.goto("/feedback/")
        arrived_at(page, re.compile(r"/feedback/$"))
        asked = []
        page.on("request", lambda request: asked.append(request.url) if "/feedback/?" in request.url else None)
        page.locator("#filter-from").focus()
        page.keyboard.type("01022020")  # month, day, year as en-US shows the field
        arrived_at(page, re.compile(r"/feedback/\?from=2020-01-02$"))
        expect(page.locator(".feedback-row")).to_have_count(3)
        htmx_settled(page)
        assert [url for url in asked if "from=0" in url] == []
        assert len(asked) == 1, asked
        expect(page.locator("#filter-from")).to_be_focused()
    finally:
        context.close()
