"""In Chromium, from the keyboard alone, at a phone's 390 px and a desk's 1280 px: the menu, buttons, where the
focus goes after a swap or a refused form, and the order the Tab key follows."""

from __future__ import annotations

import re

from browser_helpers import arrived_at, htmx_settled, sign_in
from playwright.sync_api import expect

from helpers import PASSWORD
from portal.agents.services import create_agent
from portal.chat.services import start_conversation
from portal.documents import services as documents

RUNBOOK = """# Spool overflow runbook

## Fix

Run the report RSPO1041 to delete old spool requests.
Then check the TemSe consistency in SP12.
"""

FOCUSABLE = "a[href], button, input:not([type=hidden]), select, textarea, summary, [tabindex]"
PHONE = {"width": 390, "height": 844}
DESK = {"width": 1280, "height": 900}


def test_escape_closes_the_phone_menu_and_gives_the_focus_back_to_menu(page, users):
    page.set_viewport_size(PHONE)
    sign_in(page, users["PlatformAdmin"].email, PASSWORD)
    menu = page.locator("details.menu > summary")
    packs = page.get_by_role("navigation", name="Main").get_by_role("link", name="Packs")
    expect(packs).to_be_hidden()
    menu.focus()
    page.keyboard.press("Enter")
    expect(packs).to_be_visible()
    page.keyboard.press("Tab")
    expect(packs).to_be_focused()
    page.keyboard.press("Escape")
    expect(packs).to_be_hidden()
    expect(menu).to_be_focused()
    # Open again and Escape at once, the focus on "Menu" itself.
    page.keyboard.press("Enter")
    expect(packs).to_be_visible()
    page.keyboard.press("Escape")
    expect(packs).to_be_hidden()
    expect(menu).to_be_focused()

    # On a desk the items sit in the bar: Escape hides nothing.
    page.set_viewport_size(DESK)
    expect(packs).to_be_visible()
    packs.focus()
    page.keyboard.press("Escape")
    expect(packs).to_be_visible()
    expect(packs).to_be_focused()
    packs.press("Enter")
    arrived_at(page, re.compile(r"/packs/$"))


def _answered(pack, users):
    """A Member's conversation with one answer."""
    documents.upload_file(pack, "spool-overflow.md", RUNBOOK.encode(), None)
    agent = create_agent(
        None, "acme-desk", "Acme desk", "preferred", "Acme Test Co", "", [pack.slug], offered=True, add_company=True
    )
    return start_conversation(users["Member"], agent, "How do I delete old spool requests?")


def test_not_helpful_is_a_button_that_space_and_enter_press(page, browser, live_server, pack, users):
    conversation, run = _answered(pack, users)
    sign_in(page, users["Member"].email, PASSWORD)
    page.goto(f"/chat/{conversation.id}")
    arrived_at(page, re.compile(rf"/chat/{conversation.id}$"))
    rating = page.locator(f"#rating-{run.id}")
    not_helpful = rating.get_by_role("button", name="Not helpful")
    reasons = rating.locator("form.not-helpful-form")
    for key in ("Space", "Enter"):
        not_helpful.focus()
        scrolled = page.evaluate("scrollY")
        page.keyboard.press(key)
        expect(reasons).to_be_visible()
        expect(rating.get_by_role("checkbox", name="Incorrect")).to_be_focused()  # not back at the top
        assert page.evaluate("scrollY") == scrolled, key  # Space pressed the button, not scrolled the page
        rating.get_by_role("link", name="Cancel").press("Enter")
        expect(reasons).to_be_hidden()
        expect(not_helpful).to_be_focused()  # back on what opened the form, not on "Helpful"
        htmx_settled(page)  # the buttons the swap brought back are htmx's before the next key

    # Escape closes the reasons form as Cancel does, unless a reason is ticked: then it keeps what was chosen
    not_helpful.focus()
    page.keyboard.press("Enter")
    expect(rating.get_by_role("checkbox", name="Incorrect")).to_be_focused()
    page.keyboard.press("Space")  # ticked
    page.keyboard.press("Escape")
    expect(reasons).to_be_visible()
    expect(rating.get_by_role("checkbox", name="Incorrect")).to_be_checked()
    page.keyboard.press("Space")  # nothing chosen any more
    page.keyboard.press("Escape")
    expect(reasons).to_be_hidden()
    expect(not_helpful).to_be_focused()

    # Without JavaScript the same button opens the reasons form on a page of its own.
    context = browser.new_context(base_url=live_server, java_script_enabled=False)
    plain = context.new_page()
    sign_in(plain, users["Member"].email, PASSWORD)
    plain.goto(f"/chat/{conversation.id}")
    plain.get_by_role("button", name="Not helpful").focus()
    plain.keyboard.press("Space")
    arrived_at(plain, re.compile(rf"/chat/answers/{run.id}/feedback\?rating=not_helpful$"))
    expect(plain.locator("form.not-helpful-form")).to_be_visible()
    context.close()


def _tab_to(page, name: str, limit: int = 60) -> list[str]:
    """Press Tab until the focus is on the control named ``name``; the names of the stops on the way."""
    stops = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        stops.append(page.evaluate("() => document.activeElement.id || document.activeElement.textContent.trim()"))
        if stops[-1] == name:
            return stops
    raise AssertionError(f"{name!r} not reached: {stops}")


def test_the_chat_tab_order_follows_the_screen_after_a_skip_link(page, pack, users):
    conversation, _ = _answered(pack, users)
    sign_in(page, users["Member"].email, PASSWORD)
    for screen in (DESK, PHONE):
        page.set_viewport_size(screen)
        for address in ("/chat/", f"/chat/{conversation.id}"):
            page.goto(address)
            arrived_at(page, re.compile(re.escape(address) + "$"))
            skip = page.get_by_role("link", name="Skip to content")
            first = page.evaluate(f"() => document.querySelector('{FOCUSABLE}').textContent")
            assert first == "Skip to content"  # the first stop of every page
            skip.focus()
            page.keyboard.press("Enter")
            expect(page.locator("main")).to_be_focused()
            stops = _tab_to(page, "New conversation")
            assert "question" in stops, (address, stops)  # the question box before the list of conversations
            question = page.locator("#question").bounding_box()
            side = page.locator("#chat-side").bounding_box()
            if screen is PHONE:
                assert question["y"] + question["height"] <= side["y"], address  # below it
            else:
                assert question["x"] + question["width"] <= side["x"], address  # on its right


def test_on_a_phone_agents_search_and_wide_tables_are_usable(page, pack, users):
    documents.upload_file(pack, "spool-overflow-runbook-for-the-output-management-team.md", RUNBOOK.encode(), None)
    described = "From the runbooks of the output management team: spool, printers, forms and the queues behind them."
    for n in range(8):
        create_agent(
            None, f"desk-{n}", f"Desk {n}", "preferred", None, "", [pack.slug], offered=True, description=described
        )
    page.set_viewport_size(PHONE)
    sign_in(page, users["Member"].email, PASSWORD)
    arrived_at(page, re.compile(r"/chat/$"))
    # Every agent is in the page's own flow, not in a box scrolling inside it: the last one too is reached by the page.
    choices = page.locator(".agent-choices")
    assert choices.evaluate("(box) => box.scrollHeight <= box.clientHeight + 1")
    assert choices.evaluate("(box) => getComputedStyle(box).overflowY") == "visible"
    # Each description is one line but the focused or chosen agent's (the first has the focus on arrival), so the
    # list stays short; nothing widens the page.
    lines = "(text) => Math.round(text.getBoundingClientRect().height / parseFloat(getComputedStyle(text).lineHeight))"
    descriptions = page.locator(".agent-description")
    expect(page.get_by_role("radio", name=re.compile("Desk 0"))).to_be_focused()
    counted = descriptions.evaluate_all(f"(texts) => texts.map({lines})")
    assert counted[0] > 1 and counted[1:] == [1] * 7, counted
    last = page.get_by_role("radio", name=re.compile("Desk 7"))
    last.focus()
    page.keyboard.press("Space")
    expect(last).to_be_checked()
    expect(last).to_be_in_viewport()
    assert descriptions.nth(7).evaluate(lines) > 1 and descriptions.nth(0).evaluate(lines) == 1
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    page.keyboard.press("Tab")
    expect(page.locator("#question")).to_be_focused()

    page.context.clear_cookies()
    sign_in(page, users["PlatformAdmin"].email, PASSWORD)
    page.goto(f"/packs/{pack.slug}")
    search = page.get_by_role("searchbox", name="Search words")
    form = page.locator("form[role=search]")
    assert search.bounding_box()["width"] >= form.bounding_box()["width"] - 1  # the whole width, its words readable

    # The documents table, wider than a phone, scrolls inside its named box, which says so and takes the focus.
    box = page.get_by_role("region", name="Documents", exact=True)
    hint = page.locator("#documents .scroll-hint")
    expect(hint).to_be_visible()
    expect(box).to_have_attribute("tabindex", "0")
    assert box.evaluate("(box) => box.scrollWidth > box.clientWidth")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]  # the page itself does not scroll
    box.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => document.querySelector('#documents .table-scroll').scrollLeft > 0")

    # On a desk it fits: no hint, no tab stop.
    page.set_viewport_size(DESK)
    expect(hint).to_be_hidden()
    expect(box).not_to_have_attribute("tabindex", "0")

    # A document's code block wider than a phone scrolls, and so takes the focus (axe: "scrollable region must
    # have keyboard access", found by a browser walkthrough); on a desk it fits and is no tab stop.
    code = "# Profile\n\n```\nrdisp/wp_no_dia = 40  # the dialog work processes of one instance\n```\n"
    documents.upload_file(pack, "profile.md", code.encode(), None)
    page.set_viewport_size(PHONE)
    page.goto(f"/packs/{pack.slug}/documents/profile")
    block = page.locator(".doc-body pre")
    expect(block).to_have_attribute("tabindex", "0")
    page.set_viewport_size(DESK)
    expect(block).not_to_have_attribute("tabindex", "0")


def test_the_focus_lands_where_work_goes_on_after_new_conversation_and_a_refused_new_pack(page, pack, users):
    conversation, _ = _answered(pack, users)
    sign_in(page, users["Member"].email, PASSWORD)
    for screen in (DESK, PHONE):
        page.set_viewport_size(screen)
        page.goto(f"/chat/{conversation.id}")
        page.get_by_role("link", name="New conversation").press("Enter")
        arrived_at(page, re.compile(r"/chat/$"))
        expect(page.locator("#question")).to_be_focused()  # the only agent is chosen already: ask
    create_agent(None, "ops-helper", "Ops helper", "preferred", None, "", [pack.slug], offered=True)
    page.goto(f"/chat/{conversation.id}")
    page.get_by_role("link", name="New conversation").press("Enter")
    arrived_at(page, re.compile(r"/chat/$"))
    expect(page.get_by_role("radio").first).to_be_focused()  # two agents: choose one first

    # A refused new pack at the foot of a long list: the page comes back with the focus on the field refused.
    from portal.packs.services import create_pack

    for n in range(20):
        create_pack(f"pack-{n:02}", f"Pack {n:02}")
    page.context.clear_cookies()
    page.set_viewport_size(DESK)
    sign_in(page, users["PlatformAdmin"].email, PASSWORD)
    page.goto("/packs/")
    page.locator("details.card > summary").press("Enter")
    page.locator("#slug").fill(pack.slug)  # taken
    page.locator("#title").fill("Again")
    page.locator("#title").press("Enter")
    slug = page.locator("#slug")
    expect(slug).to_be_focused()
    expect(slug).to_be_in_viewport()
    expect(slug).to_have_attribute("aria-invalid", "true")
    expect(slug).to_have_accessible_description(re.compile(r"Lowercase letters.*exists already"))


def test_a_sort_heading_or_pager_link_that_swaps_its_list_keeps_the_focus_in_the_list(page, pack, users, monkeypatch):
    from portal.feedback.services import rate_answer
    from portal.packs import services as pack_services

    agent = create_agent(
        None, "acme-desk", "Acme desk", "preferred", "Acme Test Co", "", [pack.slug], offered=True, add_company=True
    )
    documents.upload_file(pack, "spool-overflow.md", RUNBOOK.encode(), None)
    for question in ("How do I delete old spool requests?", "TemSe consistency check"):
        _, run = start_conversation(users["Member"], agent, question)
        rate_answer(users["Member"], run, "not_helpful", ["incorrect"], "")
    sign_in(page, users["Auditor"].email, PASSWORD)
    page.goto("/feedback/")
    arrived_at(page, re.compile(r"/feedback/$"))
    heading = page.locator(".feedback-table th a", has_text="Agent")
    heading.focus()
    page.keyboard.press("Enter")
    arrived_at(page, re.compile(r"/feedback/\?sort=agent$"))
    # The heading pressed was swapped with the table: its counterpart has the focus, not the top of the page.
    expect(page.locator(".feedback-table th a", has_text="Agent")).to_be_focused()
    htmx_settled(page)
    page.keyboard.press("Enter")
    arrived_at(page, re.compile(r"/feedback/\?sort=-agent$"))
    expect(page.locator(".feedback-table th a", has_text="Agent")).to_be_focused()

    # A pack's documents a page at a time: Next stays on Next, and on the last page the focus is on Previous.
    monkeypatch.setattr(pack_services, "DOCUMENTS_PER_PAGE", 1)
    documents.upload_file(pack, "lock-entries.md", b"# Lock entries\n\nDelete stale locks in SM12.\n", None)
    documents.upload_file(pack, "temse.md", b"# TemSe\n\nCheck TemSe consistency in SP12.\n", None)
    page.context.clear_cookies()
    sign_in(page, users["PlatformAdmin"].email, PASSWORD)
    page.goto(f"/packs/{pack.slug}")
    arrived_at(page, re.compile(rf"/packs/{pack.slug}$"))
    pager = page.get_by_role("navigation", name="Pages of documents")
    pager.get_by_role("link", name="Next").focus()
    page.keyboard.press("Enter")
    expect(pager).to_contain_text("page 2 of 3")
    expect(pager.get_by_role("link", name="Next")).to_be_focused()
    htmx_settled(page)
    page.keyboard.press("Enter")
    expect(pager).to_contain_text("page 3 of 3")
    expect(pager.get_by_role("link", name="Previous")).to_be_focused()


def test_the_result_of_trying_an_agent_takes_the_focus_from_the_ask_button(page, pack, users):
    documents.upload_file(pack, "spool-overflow.md", RUNBOOK.encode(), None)
    create_agent(None, "ops-helper", "Ops helper", "preferred", None, "", [pack.slug])
    sign_in(page, users["AgentBuilder"].email, PASSWORD)
    for screen in (DESK, PHONE):
        page.set_viewport_size(screen)
        page.goto("/agents/ops-helper/try")
        arrived_at(page, re.compile(r"/agents/ops-helper/try$"))
        page.locator("#question").fill("How do I delete old spool requests?")
        page.get_by_role("button", name="Ask").focus()
        page.keyboard.press("Enter")  # Ask is disabled while the run is made: the focus must not fall to the top
        title = page.locator("#run-result .run-title")
        expect(title).to_be_focused()
        expect(title).to_be_in_viewport()
        page.keyboard.press("Tab")
        expect(title.get_by_role("link", name="open the run record")).to_be_focused()
