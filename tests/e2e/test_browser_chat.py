"""In Chromium: a Member asks in the support chat, opens a cited document and rates the answer Not helpful;
a reviewer filters the Answer feedback list, goes back, triages the item and exports the list."""

from __future__ import annotations

import csv
import io
import re

from browser_helpers import sign_in
from playwright.sync_api import expect

from helpers import PASSWORD
from portal.agents.services import create_agent
from portal.chat.services import start_conversation
from portal.documents import services as documents
from portal.feedback.services import rate_answer

RUNBOOK = """# Spool overflow runbook

## Symptoms

Output requests pile up and SP01 shows thousands of entries.

## Fix

Run the report RSPO1041 to delete old spool requests.
Then check the TemSe consistency in SP12.
"""

LOCKS = """# Lock entries runbook

## Fix

Delete stale lock entries in SM12 only after checking that the owner's session is gone.
"""

QUESTION = "How do I delete old spool requests?"


def _agents(pack):
    documents.upload_file(pack, "spool-overflow.md", RUNBOOK.encode(), None)
    documents.upload_file(pack, "lock-entries.md", LOCKS.encode(), None)
    return (create_agent(None, "acme-desk", "Acme desk", "preferred", "Acme Test Co", "", [pack.slug]),
            create_agent(None, "ops-helper", "Ops helper", "preferred", None, "", [pack.slug]))


def test_member_asks_opens_the_cited_document_and_rates_not_helpful(page, pack, users):
    _agents(pack)
    sign_in(page, users["Member"].email, PASSWORD)
    page.wait_for_url(re.compile(r"/chat/$"))
    page.check("input[name=agent][value=acme-desk]")
    page.fill("#question", QUESTION)
    page.evaluate("window.notReloaded = true")
    page.press("#question", "Enter")  # Enter sends
    page.wait_for_selector(".turn .answer a.cite")
    assert re.search(r"/chat/\d+$", page.url)  # the swap pushed the conversation's address
    assert page.evaluate("window.notReloaded") is True
    assert page.locator(".conversation-list a[aria-current]").inner_text() == QUESTION

    # A second question, held back on its way so the progress line can be seen; Shift+Enter is a new line.
    held = []
    page.route(re.compile(r"/chat/\d+$"), lambda route: held.append(route) if route.request.method == "POST"
               else route.continue_())
    page.fill("#question", "stale lock")
    page.press("#question", "Shift+Enter")
    page.keyboard.type("entries")
    assert page.input_value("#question") == "stale lock\nentries"
    page.press("#question", "Enter")
    pending = page.locator("#chat-pending")
    pending.wait_for(state="visible")
    assert "Composing the answer… searching the packs" in pending.inner_text()
    assert pending.locator("[data-pending-question]").inner_text() == "stale lock\nentries"
    while not held:
        page.wait_for_timeout(20)
    held[0].continue_()
    page.unroute(re.compile(r"/chat/\d+$"))
    expect(page.locator(".turn")).to_have_count(2)
    expect(pending).to_be_hidden()
    assert "SM12" in page.locator(".turn").nth(1).locator(".answer").inner_text()
    assert page.evaluate("document.activeElement.id") == "question"

    # The answer's [1] opens its source page; from there, the cited document, read-only.
    page.locator(".turn").first.locator(".answer a.cite").first.click()
    page.wait_for_url(re.compile(r"/chat/answers/\d+/sources#source-1$"))
    assert "RSPO1041" in page.locator("#source-1 .passage-text").inner_text()
    assert "Spool overflow runbook" in page.locator("#source-1 .source-label").inner_text()
    page.click("#source-1 >> text=Open the document")
    page.wait_for_selector(".cited-passage")
    cited = page.locator(".doc-body .cited")
    assert "RSPO1041" in " ".join(cited.all_inner_texts()) and cited.first.is_visible()
    toolbar = page.locator(".toolbar").inner_text()
    assert "Edit" not in toolbar and "Delete" not in toolbar and "Download" not in toolbar

    # Back in the conversation: Not helpful asks for a reason, then saves in place.
    page.click(".crumbs >> text=Support chat")
    page.click(".conversation-list a")
    page.evaluate("window.notReloaded = true")
    rating = page.locator(".turn").first.locator(".rating")
    rating.locator("text=Not helpful").click()
    form = rating.locator("form.not-helpful-form")
    form.wait_for()
    form.locator("text=Send feedback").click()
    assert "Choose at least one reason" in form.locator(".error").inner_text()
    form.locator("label", has_text="Incorrect").click()
    form.locator("textarea[name=note]").fill("It should start with SP01.")
    form.locator("text=Send feedback").click()
    rated = page.locator(".turn").first.locator(".rated")
    rated.wait_for()
    assert rated.inner_text() == "Thank you. You rated this answer Not helpful: incorrect. Change the reasons"
    assert page.evaluate("window.notReloaded") is True


def test_member_chats_and_rates_with_javascript_off(browser, live_server, pack, users):
    _agents(pack)
    context = browser.new_context(base_url=live_server, java_script_enabled=False)
    page = context.new_page()
    sign_in(page, users["Member"].email, PASSWORD)
    page.check("input[name=agent][value=ops-helper]")
    page.fill("#question", QUESTION)
    page.click("#ask-form button[type=submit]")
    page.wait_for_selector(".turn .answer a.cite")
    assert re.search(r"/chat/\d+#turn-\d+$", page.url)
    page.click(".turn .rating >> text=Not helpful")
    page.wait_for_selector("form.not-helpful-form")
    page.click("label:has-text('Outdated')")
    page.click("text=Send feedback")
    page.wait_for_selector(".turn .rated")
    assert "Not helpful: outdated." in page.locator(".turn .rated").inner_text()
    context.close()


def test_reviewer_filters_goes_back_triages_and_exports(page, pack, users):
    acme, shared = _agents(pack)
    member = users["Member"]
    for agent, question, reasons in ((acme, QUESTION, ["incorrect"]), (shared, "stale lock entries", ["outdated"])):
        _, run = start_conversation(member, agent, question)
        rate_answer(member, run, "not_helpful", reasons, f"Note on {question}")
    sign_in(page, users["AgentBuilder"].email, PASSWORD)
    page.click("nav >> text=Answer feedback")
    items = page.locator(".feedback-item")
    assert items.count() == 2
    page.evaluate("window.notReloaded = true")

    page.select_option("#filter-reason", "incorrect")
    page.wait_for_url(re.compile(r"/feedback/\?reason=incorrect$"))
    expect(items).to_have_count(1)
    assert QUESTION in items.first.inner_text()
    page.select_option("#filter-status", "resolved")
    page.wait_for_url(re.compile(r"/feedback/\?reason=incorrect&status=resolved$"))
    page.wait_for_selector(".feedback-item", state="detached")
    assert "matches these filters" in page.locator(".result-count").inner_text()
    assert page.evaluate("window.notReloaded") is True  # filtered in place

    page.go_back()  # the previous filters come back with the address
    page.wait_for_url(re.compile(r"/feedback/\?reason=incorrect$"))
    expect(items).to_have_count(1)
    assert page.locator("#filter-status").input_value() == ""
    assert page.locator("#filter-reason").input_value() == "incorrect"

    items.first.locator("text=Review").click()
    page.wait_for_selector("#triage")
    page.select_option("#triage-status", "in_review")
    page.fill("#reviewer-note", "Checking whether SP01 belongs first.")
    page.click("#triage >> text=Save triage")
    page.wait_for_selector("#triage .flash")
    assert page.locator("#triage .triage-state .badge").inner_text() == "in review"
    assert users["AgentBuilder"].email in page.locator("#triage .triage-history li").first.inner_text()

    page.goto("/feedback/?status=in_review")
    assert items.count() == 1 and "in review" in items.first.locator(".triage").inner_text()
    with page.expect_download() as download:
        page.click("text=Export CSV")
    rows = list(csv.DictReader(io.StringIO(open(download.value.path(), encoding="utf-8-sig").read())))
    assert [(r["question"], r["status"], r["reviewer_note"]) for r in rows] == [
        (QUESTION, "in review", "Checking whether SP01 belongs first.")]


def test_a_no_evidence_answer_looks_different_and_offers_another_agent_at_390_px(page, pack, users):
    _agents(pack)
    page.set_viewport_size({"width": 390, "height": 844})
    sign_in(page, users["Member"].email, PASSWORD)
    page.wait_for_url(re.compile(r"/chat/$"))
    page.check("input[name=agent][value=acme-desk]")
    page.fill("#question", QUESTION)
    page.press("#question", "Enter")
    page.wait_for_selector(".turn .answer a.cite")
    page.fill("#question", "karaoke antarctica horoscope")
    page.press("#question", "Enter")
    note = page.locator(".turn:nth-child(2) .no-evidence-answer[role=note]")
    expect(note).to_be_visible()
    expect(note.locator(".evidence-note-title")).to_have_text("No evidence found")
    expect(note.locator(".answer")).to_have_text("No evidence found in the granted packs for this question.")
    expect(note.locator(".searched")).to_have_text(f"Searched: {pack.title}.")
    assert note.locator("a.cite").count() == 0
    assert page.locator(".turn:nth-child(2) .answer-sources").count() == 0
    # Not the look of an answer: its own background and a dashed bubble.
    styles = page.evaluate("""() => {
        const [answered, none] = document.querySelectorAll('.turn .bubble-answer');
        const note = none.querySelector('.no-evidence-answer');
        return {answered: getComputedStyle(answered).borderStyle, none: getComputedStyle(none).borderStyle,
                note: getComputedStyle(note).backgroundColor, page: getComputedStyle(document.body).backgroundColor};
    }""")
    assert styles["answered"] == "solid" and styles["none"] == "dashed" and styles["note"] != styles["page"]
    # Nothing overflows a 390 px screen.
    wide = page.evaluate("""() => [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > 390)
        .map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)).slice(0, 30)""")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390, wide
    box = note.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390
    # The other agent the Member may ask is one tap away.
    other = note.get_by_role("link", name="Ops helper")
    other.click()
    page.wait_for_url(re.compile(r"/chat/agents/ops-helper$"))
    expect(page.locator("#question")).to_be_visible()
