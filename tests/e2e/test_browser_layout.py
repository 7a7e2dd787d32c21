"""In Chromium at a phone's 390 px and a desk's 1280 px: what a person sees (issue 16, items 3 and 4).

Every page fits the screen (nothing wider than the viewport outside a box that scrolls by itself),
"Sign out" stays inside the dark header, the menu folds on a phone (with and without JavaScript),
the question box comes before the conversation list on a phone, figures open full size, and a cited
PDF passage is highlighted to the character and lands inside the window after the figures load.
With ``CAIRN_SCREENSHOTS=<folder>`` every page checked is also saved there as a full-page screenshot
(``<width>-<role>-<address>.png``), for a person to look at.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from browser_helpers import arrived_at, sign_in
from playwright.sync_api import expect

from helpers import PASSWORD
from portal.agents.services import create_agent
from portal.chat.services import start_conversation
from portal.demo.build_binaries import build_pdf
from portal.documents import services as documents
from portal.feedback.services import rate_answer
from portal.ingest.markers import figure_marker_spans
from portal.models import Document, Figure, Passage
from portal.runs.ask import ask

PHONE = {"width": 390, "height": 844}
DESK = {"width": 1280, "height": 900}
SCREENS = {"phone": PHONE, "desk": DESK}

RUNBOOK = """# Spool overflow runbook

## Symptoms

Output requests pile up and SP01 shows thousands of entries.

## Fix

Run the report RSPO1041 to delete old spool requests.
Then check the TemSe consistency in SP12.
"""

# Boxes sticking out past the right edge of the window, except inside an element that scrolls sideways
# by itself (a wide table on a phone) or is clipped: those cannot widen the page. (The skip link waits
# off the left edge until it has the focus.)
OVERFLOWING = """(width) => {
  const clippedBy = (element) => {
    for (let e = element.parentElement; e && e !== document.body; e = e.parentElement) {
      const overflow = getComputedStyle(e).overflowX;
      if (overflow !== 'visible') { return e; }
    }
    return null;
  };
  return [...document.querySelectorAll('body *')].filter((e) => {
    const box = e.getBoundingClientRect();
    if (!box.width || !box.height || getComputedStyle(e).visibility === 'hidden') { return false; }
    if (box.right <= width + 0.5) { return false; }
    const clip = clippedBy(e);
    if (!clip) { return true; }
    const outer = clip.getBoundingClientRect();
    return outer.right > width + 0.5;
  }).map((e) => `${e.tagName.toLowerCase()}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`)
    .slice(0, 10);
}"""


def _worked_examples(pack, tmp_path) -> Document:
    """The demo's PDF: several pages of text, three figures."""
    path = build_pdf(tmp_path / "worked-examples.pdf")
    return documents.upload_file(pack, "worked-examples.pdf", path.read_bytes(), None).document


def _content(pack, tmp_path, users):
    documents.upload_file(pack, "spool-overflow.md", RUNBOOK.encode(), None)
    pdf = _worked_examples(pack, tmp_path)
    agent = create_agent(
        None, "acme-desk", "Acme desk", "preferred", "Acme Test Co", "", [pack.slug], offered=True, add_company=True
    )
    conversation, run = start_conversation(users["Member"], agent, "How do I delete old spool requests?")
    feedback = rate_answer(users["Member"], run, "not_helpful", ["incorrect"], "Not the report I use.")
    figure_run = ask(agent, users["PlatformAdmin"], "inbound IDocs by status before and after background processing")
    # A word longer than a phone is wide, in a question, a conversation's title and a reviewer's note.
    unbroken = "https://example.test/" + "spool" * 60
    long_conversation, long_run = start_conversation(users["Member"], agent, f"How do I delete {unbroken}?")
    long_feedback = rate_answer(users["Member"], long_run, "not_helpful", ["incorrect"], unbroken)
    return pdf, agent, (conversation, long_conversation), run, (feedback, long_feedback), figure_run, long_run


def _fits(page, address: str, width: int, role: str) -> None:
    page.goto(address)
    page.wait_for_load_state("load")
    if folder := os.environ.get("CAIRN_SCREENSHOTS"):
        name = re.sub(r"[^a-z0-9]+", "-", address.lower()).strip("-") or "home"
        page.screenshot(path=Path(folder) / f"{width}-{role}-{name}.png", full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= width, (address, page.evaluate(OVERFLOWING, width))
    assert page.evaluate(OVERFLOWING, width) == [], address
    assert page.evaluate(CRAMPED) == [], address


# Controls a person cannot use: a text box narrower than a few words, a button whose label breaks into letters.
CRAMPED = """() => [...document.querySelectorAll('main input, main select, main textarea, main button')]
  .filter((e) => {
    const box = e.getBoundingClientRect();
    if (!box.width || getComputedStyle(e).visibility === 'hidden') { return false; }
    if (['hidden', 'checkbox', 'radio'].includes(e.type)) { return false; }
    return e.tagName === 'BUTTON' ? box.height > 80 : box.width < 100;
  })
  .map((e) => {
    const box = e.getBoundingClientRect();
    return `${e.tagName.toLowerCase()}#${e.id}.${e.className} ${Math.round(box.width)}x${Math.round(box.height)}`;
  })"""


def _sign_out_inside_the_header(page, width: int) -> None:
    sign_out = page.get_by_role("button", name="Sign out")
    menu = page.locator("header.topbar details.menu > summary")
    if width <= 600:
        expect(sign_out).to_be_hidden()  # folded away until "Menu" is opened
        expect(menu).to_be_visible()
        menu.click()
    else:
        expect(menu).to_be_hidden()
    expect(sign_out).to_be_visible()
    header, button = page.locator("header.topbar").bounding_box(), sign_out.bounding_box()
    assert header["y"] <= button["y"] and button["y"] + button["height"] <= header["y"] + header["height"]
    assert 0 <= button["x"] and button["x"] + button["width"] <= width
    nav = page.get_by_role("navigation", name="Main").bounding_box()
    assert nav["width"] <= width and nav["y"] + nav["height"] <= header["y"] + header["height"]


@pytest.mark.parametrize("screen", SCREENS)
def test_every_page_fits_the_screen_with_sign_out_inside_the_header(
    browser, live_server, pack, users, tmp_path, screen
):
    pdf, agent, (conversation, long_conversation), run, feedbacks, figure_run, long_run = _content(
        pack, tmp_path, users
    )
    viewport = SCREENS[screen]
    width = viewport["width"]
    context = browser.new_context(base_url=live_server, viewport=viewport)
    page = context.new_page()
    sign_in(page, users["PlatformAdmin"].email, PASSWORD)
    staff_pages = [
        "/",
        "/packs/",
        f"/packs/{pack.slug}",
        f"/packs/{pack.slug}/documents/spool-overflow",
        f"/packs/{pack.slug}/documents/{pdf.doc_id}",
        f"/packs/{pack.slug}/documents/{pdf.doc_id}?view=lines",
        f"/packs/{pack.slug}/search?q=spool",
        "/agents/",
        f"/agents/{agent.slug}",
        f"/agents/{agent.slug}/try",
        "/runs/",
        f"/runs/{run.id}",
        f"/runs/{figure_run.id}",
        f"/runs/{long_run.id}",
        "/feedback/",
        *(f"/feedback/{feedback.id}" for feedback in feedbacks),
        "/account/",
        "/account/api",
        "/help/",
    ]
    for address in staff_pages:
        _fits(page, address, width, "admin")
    _sign_out_inside_the_header(page, width)
    context.close()

    context = browser.new_context(base_url=live_server, viewport=viewport)
    page = context.new_page()
    sign_in(page, users["Member"].email, PASSWORD)
    for address in (
        "/chat/",
        f"/chat/{conversation.id}",
        f"/chat/{long_conversation.id}",
        f"/chat/answers/{run.id}/sources",
        f"/chat/answers/{run.id}/sources/1/document",
        "/chat/conversations",
    ):
        _fits(page, address, width, "member")
    _sign_out_inside_the_header(page, width)
    context.close()


@pytest.mark.parametrize("screen", SCREENS)
def test_the_question_box_comes_first_on_a_phone_and_left_of_the_list_on_a_desk(page, pack, users, screen):
    documents.upload_file(pack, "spool-overflow.md", RUNBOOK.encode(), None)
    agent = create_agent(
        None, "acme-desk", "Acme desk", "preferred", "Acme Test Co", "", [pack.slug], offered=True, add_company=True
    )
    conversation, _ = start_conversation(users["Member"], agent, "How do I delete old spool requests?")
    page.set_viewport_size(SCREENS[screen])
    sign_in(page, users["Member"].email, PASSWORD)
    for address in ("/chat/", f"/chat/{conversation.id}"):
        page.goto(address)
        arrived_at(page, re.compile(re.escape(address) + "$"))
        question = page.locator("#question").bounding_box()
        conversations = page.locator("#chat-side").bounding_box()
        if screen == "phone":
            assert question["y"] + question["height"] <= conversations["y"], address
            assert question["x"] + question["width"] <= PHONE["width"]
        else:
            assert question["x"] + question["width"] <= conversations["x"], address  # the list on the right


@pytest.mark.parametrize("screen", SCREENS)
def test_the_upload_help_stands_under_the_file_picker_not_beside_it(page, pack, users, screen):
    page.set_viewport_size(SCREENS[screen])
    sign_in(page, users["PlatformAdmin"].email, PASSWORD)
    page.goto(f"/packs/{pack.slug}")
    arrived_at(page, re.compile(rf"/packs/{pack.slug}$"))
    picker = page.locator("#files").bounding_box()
    help_text = page.locator("#files-help").bounding_box()
    label = page.locator("label[for=files]").bounding_box()
    assert help_text["y"] >= picker["y"] + picker["height"] - 1, (picker, help_text)  # a line of its own
    assert abs(help_text["x"] - label["x"]) <= 1, (label, help_text)  # aligned with the label, as other fields' help


def test_on_a_phone_the_questions_of_runs_and_conversations_break_between_words(page, pack, users):
    documents.upload_file(pack, "spool-overflow.md", RUNBOOK.encode(), None)
    agent = create_agent(
        None, "acme-desk", "Acme desk", "preferred", "Acme Test Co", "", [pack.slug], offered=True, add_company=True
    )
    for question in ("What should I do when the spool overflows?", "How do I reset my VPN password?"):
        start_conversation(users["Member"], agent, question)
    page.set_viewport_size(PHONE)
    for role, address in (("PlatformAdmin", "/runs/"), ("Member", "/chat/conversations")):
        page.context.clear_cookies()
        sign_in(page, users[role].email, PASSWORD)
        page.goto(address)
        arrived_at(page, re.compile(re.escape(address) + "$"))
        expect(page.locator("td.row-question")).to_have_count(2)
        # "overflows?" was drawn as "overflows" and a "?" alone on the next line
        assert page.evaluate(SPLIT_WORDS, "td.row-question") == [], address
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], address


def test_the_menu_folds_and_opens_without_javascript_on_a_phone(browser, live_server, users):
    context = browser.new_context(base_url=live_server, viewport=PHONE, java_script_enabled=False)
    page = context.new_page()
    sign_in(page, users["PlatformAdmin"].email, PASSWORD)
    packs = page.get_by_role("navigation", name="Main").get_by_role("link", name="Packs")
    expect(packs).to_be_hidden()
    page.locator("details.menu > summary").focus()
    page.keyboard.press("Enter")
    expect(packs).to_be_visible()
    packs.click()
    arrived_at(page, re.compile(r"/packs/$"))
    expect(page.locator("h1")).to_have_text("Packs")
    context.close()


def _in_the_window(page) -> dict:
    """Where the highlight is in the window, asserting it is in it: whole when it fits, else its start."""
    box = page.evaluate("""() => {
        const boxes = [...document.querySelectorAll('.doc-body mark.cited')].map(m => m.getBoundingClientRect());
        return {top: Math.min(...boxes.map(b => b.top)), bottom: Math.max(...boxes.map(b => b.bottom)),
                height: innerHeight, scrolled: scrollY};
    }""")
    assert box["top"] >= 0, box
    if box["bottom"] - box["top"] <= box["height"]:
        assert box["bottom"] <= box["height"], box
    else:
        assert box["top"] <= box["height"] * 0.2, box
    return box


def _cited_pdf_passage(pdf: Document) -> Passage:
    """The last passage without a figure of its own that comes after a figure: the figures above it
    must have their room before they load for the scroll to land on it."""
    revision = pdf.current_revision()
    first_figure = figure_marker_spans(revision.text)[0][0]
    passages = Passage.select().where(Passage.revision == revision).order_by(Passage.ordinal)
    return [
        p
        for p in passages
        if p.char_start > first_figure and not figure_marker_spans(revision.text[p.char_start : p.char_end])
    ][-1]


@pytest.mark.parametrize("screen", SCREENS)
def test_a_cited_pdf_passage_is_highlighted_exactly_and_in_view_after_the_figures_load(
    page, pack, users, tmp_path, screen
):
    pdf = _worked_examples(pack, tmp_path)
    passage = _cited_pdf_passage(pdf)
    text = pdf.current_revision().text
    page.set_viewport_size(SCREENS[screen])
    sign_in(page, users["PlatformAdmin"].email, PASSWORD)
    page.goto(f"/packs/{pack.slug}/documents/{pdf.doc_id}?passage={passage.id}")
    page.wait_for_load_state("load")

    # Exactly the passage's characters: the marks hold its text (line breaks aside), nothing else is marked.
    marks = page.locator(".doc-body mark.cited")
    assert page.locator(".doc-body .cited").count() == marks.count() > 0
    shown = " ".join(" ".join(marks.all_inner_texts()).split())
    assert shown == " ".join(text[passage.char_start : passage.char_end].split())

    # In the window once the page has loaded: whole when it fits, else from its start near the top.
    landed = _in_the_window(page)
    # The figures above it had their room before they arrived: loading every one (lazy ones too) moves nothing.
    page.evaluate("() => document.querySelectorAll('.doc-body img').forEach(i => { i.loading = 'eager'; })")
    page.wait_for_function("() => [...document.querySelectorAll('.doc-body img')].every(i => i.complete)")
    assert _in_the_window(page) == landed

    # Figures keep their room before they load and open at full size.
    figures = page.locator(".doc-body .figure")
    expect(figures).to_have_count(3)
    for index in range(3):
        image = figures.nth(index).locator("img")
        assert int(image.get_attribute("width")) > 0 and int(image.get_attribute("height")) > 0
        link = figures.nth(index).locator("a.figure-open")
        assert link.get_attribute("href") == image.get_attribute("src")
    figures.first.locator("a.figure-open").click()
    page.wait_for_function("() => document.querySelector('img') && document.querySelector('img').complete")
    natural = page.evaluate(
        "() => { const i = document.querySelector('img'); return [i.naturalWidth, i.naturalHeight]; }"
    )
    first = Figure.get((Figure.revision == pdf.current_revision()) & (Figure.number == 1))
    assert natural == [first.width, first.height]


def test_a_pdf_keeps_its_lines_headings_on_their_own(page, pack, users, tmp_path):
    pdf = _worked_examples(pack, tmp_path)
    page.set_viewport_size(PHONE)
    sign_in(page, users["PlatformAdmin"].email, PASSWORD)
    page.goto(f"/packs/{pack.slug}/documents/{pdf.doc_id}")
    body = page.locator(".doc-body.pdf-text")
    heading = body.locator("span.line", has_text=re.compile(r"^About these examples$"))
    after = heading.locator("xpath=following-sibling::span[1]")
    expect(after).to_have_text(re.compile(r"^Interface incidents are"))
    assert after.bounding_box()["y"] >= heading.bounding_box()["y"] + heading.bounding_box()["height"]
    # A line the PDF wrapped mid-sentence flows on with it rather than leaving a stub on a phone.
    wrapped = body.locator("span.line", has_text=re.compile(r"^message travels through several layers"))
    expect(wrapped).to_have_count(1)
    joined = wrapped.evaluate("(line) => [line.previousSibling.textContent, line.previousElementSibling.tagName]")
    assert joined == [" ", "SPAN"]  # a space and the line before, no line break
    page_line = body.locator("p.page-line").first
    expect(page_line).to_have_text("Page 1")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


FOLLOW_UP = """# Follow-up of INC-2026-0285

## Follow-up actions

| Action | Owner | Due | Status |
|---|---|---|---|
| EDI agreement: format changes announced to the order desk, then tested | Order desk lead | 2026-03-13 | Done |
| Alert when more than 50 ORDERS IDocs of one partner fail within one hour | AMS integration | 2026-02-27 | Done |

## Interfaces

| Interface | Program | Variant | Job | Owner | Message type | Status |
|---|---|---|---|---|---|---|
| Orders | Z_SD_EDI_ORDERS_REPROCESS | ZTW_14DAYS_OF_SPOOL | Z_RSPO1041_CLEANUP | AMS basis | ORDERS05 | Active |
"""

# Each word of each table cell (``cells``, a selector) whose lines it spans: a word split inside it spans two.
SPLIT_WORDS = """(cells) => {
  const split = [];
  for (const cell of document.querySelectorAll(cells)) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const match of node.data.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
        if (tops.size > 1) { split.push(match[0]); }
      }
    }
  }
  return split;
}"""


@pytest.mark.parametrize("screen", SCREENS)
def test_a_document_table_wraps_only_between_words_and_scrolls_inside_itself_when_too_wide(page, pack, users, screen):
    documents.upload_file(pack, "follow-up.md", FOLLOW_UP.encode(), None)
    width = SCREENS[screen]["width"]
    page.set_viewport_size(SCREENS[screen])
    sign_in(page, users["PlatformAdmin"].email, PASSWORD)
    _fits(page, f"/packs/{pack.slug}/documents/follow-up", width, "admin")
    expect(page.locator(".doc-body table").first).to_be_visible()
    assert page.evaluate(SPLIT_WORDS, ".doc-body th, .doc-body td") == []
    wide = page.locator(".doc-body table").nth(1)
    if screen == "phone":  # wider than the screen: it scrolls by itself, the page does not (``_fits``)
        assert wide.evaluate("(table) => table.scrollWidth > table.clientWidth")
    assert wide.evaluate("(table) => getComputedStyle(table).overflowX") == "auto"
