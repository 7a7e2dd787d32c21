"""In Chromium: what people read stays true (issue 16, items 1, 2, 6, 7).

An answer written in Markdown reads as formatted text with working citations; the viewer shows
SAP wildcards as written; a source page does not repeat the title and shows the member's own
note; a reviewer's page and an old run-record tab show the truth without a reload.
"""

from __future__ import annotations

import re
from pathlib import Path

from browser_helpers import arrived_at, sign_in
from playwright.sync_api import expect

from helpers import PASSWORD
from portal.agents.services import create_agent
from portal.chat.services import start_conversation
from portal.documents import editing
from portal.documents import services as documents
from portal.feedback import services as feedback
from portal.models import Document
from tests.fake_openai import FakeOpenAI

RUNBOOK = """# Spool overflow runbook

## Symptoms

Output requests pile up and SP01 shows thousands of entries.

## Fix

Run the report RSPO1041 to delete old spool requests.
Then check the TemSe consistency in SP12.
"""

QUESTION = "How do I delete old spool requests?"

MODEL_ANSWER = """**Delete old requests** with the report RSPO1041 [1].

| Step | Transaction |
|---|---|
| Delete | RSPO1041 [1] |
| Check | SP12 |"""

LOCK_ENTRIES = Path(__file__).resolve().parents[2] / "portal/demo/corpus/sap-operations-runbooks/rb-lock-entries.md"


def _acme_desk(pack):
    documents.upload_file(pack, "spool-overflow.md", RUNBOOK.encode(), None)
    return create_agent(
        None, "acme-desk", "Acme desk", "preferred", "Acme Test Co", "", [pack.slug], offered=True, add_company=True
    )


def test_a_markdown_answer_reads_formatted_and_its_sources_page_does_not_repeat_the_title(app, page, pack, users):
    agent = _acme_desk(pack)
    with FakeOpenAI() as fake:
        app.config.update(
            CAIRN_MODEL_BASE_URL=fake.base_url, CAIRN_MODEL_API_KEY="sk-test", CAIRN_MODEL_NAME="fake-gpt"
        )
        fake.reply(MODEL_ANSWER)
        conversation, run = start_conversation(users["Member"], agent, QUESTION)
        app.config["CAIRN_MODEL_BASE_URL"] = None
    sign_in(page, users["Member"].email, PASSWORD)
    page.goto(f"/chat/{conversation.id}")
    answer = page.locator(f"#turn-{run.id} .answer")
    expect(answer.locator("strong")).to_have_text("Delete old requests")
    expect(answer.locator("td").first).to_have_text("Delete")
    shown = answer.inner_text()
    assert "**" not in shown and "|" not in shown and "---" not in shown

    answer.locator("a.cite").first.click()
    arrived_at(page, re.compile(rf"/chat/answers/{run.id}/sources#source-1$"))
    expect(page.locator("#source-1 .source-label")).to_have_text(
        "[1] Operations — Spool overflow runbook (section Fix)"
    )

    # Not helpful with a note: the member sees the note they wrote, here and in the conversation.
    page.evaluate("window.notReloaded = true")
    page.click(f"#rating-{run.id} .rate-not-helpful")
    page.check(f"#rating-{run.id} input[value=incomplete]")
    page.fill(f"#note-{run.id}", "It skips the TemSe check.")
    page.click(f"#rating-{run.id} button[type=submit]")
    expect(page.locator(f"#rating-{run.id} .rated-note")).to_have_text("Your note: It skips the TemSe check.")
    assert page.evaluate("window.notReloaded") is True
    page.goto(f"/chat/{conversation.id}")
    expect(page.locator(f"#rating-{run.id} .rated-note-text")).to_have_text("It skips the TemSe check.")


def test_the_viewer_shows_sap_wildcards_as_written(page, pack, users):
    documents.upload_file(pack, LOCK_ENTRIES.name, LOCK_ENTRIES.read_bytes(), None)
    sign_in(page, users["Auditor"].email, PASSWORD)
    page.goto(f"/packs/{pack.slug}/documents/{LOCK_ENTRIES.stem}")
    step = page.locator("article.doc-body li", has_text="Open SM12")
    expect(step).to_contain_text('Open SM12 with table name "*" and user "*". Sort by time.')
    expect(step.locator("em")).to_have_count(0)


def test_a_reviewer_sees_the_members_new_reasons_and_who_reopened_the_item(page, pack, users):
    agent = _acme_desk(pack)
    _, run = start_conversation(users["Member"], agent, QUESTION)
    item = feedback.rate_answer(users["Member"], run, "not_helpful", ["incorrect"], "Wrong report.")
    feedback.triage(users["AgentBuilder"], item, "in_review", "Looking.")
    sign_in(page, users["AgentBuilder"].email, PASSWORD)
    page.goto(f"/feedback/{item.id}")
    expect(page.locator("#feedback-detail .reason-list")).to_have_text("Incorrect")

    # The member changes the reasons while the reviewer's page is open: the item is new again.
    feedback.rate_answer(users["Member"], run, "not_helpful", ["incomplete"], "It skips the TemSe check.")
    page.evaluate("window.notReloaded = true")
    page.fill("#reviewer-note", "Looking again.")
    page.click("#triage >> text=Save triage")
    # Saved over a change the reviewer had not seen: nothing is saved, the item shows as it is now.
    expect(page.locator("#triage .error")).to_contain_text("changed while you were reviewing it")
    expect(page.locator("#feedback-detail .reason-list")).to_have_text("Incomplete")
    expect(page.locator("#reviewer-note")).to_have_value("Looking again.")
    page.click("#triage >> text=Save triage")
    expect(page.locator("#triage .flash")).to_be_visible()
    expect(page.locator("#feedback-detail .reason-list")).to_have_text("Incomplete")
    expect(page.locator("#feedback-detail .feedback-note")).to_have_text("It skips the TemSe check.")
    expect(page.locator("#triage .triage-history li").nth(1)).to_contain_text(users["Member"].email)
    assert page.evaluate("window.notReloaded") is True

    # Opened afresh after another change, the status line names the member, not the last reviewer.
    feedback.rate_answer(users["Member"], run, "not_helpful", ["outdated"], "")
    page.goto(f"/feedback/{item.id}")
    expect(page.locator("#triage .triage-state .badge")).to_have_text("new")
    expect(page.locator("#triage .triage-state .last-set")).to_contain_text(users["Member"].email)
    expect(page.locator("#triage .triage-state .last-set")).to_contain_text("the rating changed after review")


def test_a_run_record_opened_before_an_edit_opens_the_passage_and_says_it_changed(page, pack, users):
    agent = _acme_desk(pack)
    _, run = start_conversation(users["Member"], agent, QUESTION)
    sign_in(page, users["PlatformAdmin"].email, PASSWORD)
    page.goto(f"/runs/{run.id}")
    expect(page.locator("#source-1 a.open-document")).to_be_visible()

    spool = Document.get(Document.doc_id == "spool-overflow")
    changed = RUNBOOK.replace("Output requests pile up", "Output requests keep piling up")
    editing.edit_text(spool, changed, 1, users["PlatformAdmin"])

    page.click("#source-1 a.open-document")  # the tab still shows the run as it was before the edit
    expect(page.locator(".cited-passage .changed-since-run")).to_contain_text("changed since the run")
    highlighted = page.locator(".doc-body .cited", has_text="RSPO1041")
    expect(highlighted).to_be_visible()
    expect(highlighted).to_be_in_viewport()
