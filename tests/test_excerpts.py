"""A passage shown outside the viewer (an answer's sources, the cited passage box, Library, pack and
regression-case search results): its Markdown syntax taken out, and nothing in it markup."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from bs4 import BeautifulSoup

from portal.agents.services import create_agent
from portal.chat.services import start_conversation
from portal.documents import services as documents
from portal.documents.excerpts import passage_excerpt
from portal.documents.readers import ReaderAccess
from portal.feedback.services import rate_answer

INCIDENT = b"""# Spool incident

## Timeline

The **spool cleanup** job `RSPO1041` failed overnight.
Hostile: <img src=x onerror=alert(1)> <div hx-get=/x hx-trigger=load>loaded</div> [details](javascript:alert(1))
Entities: &lt;svg/onload=alert(6)&gt; and `&lt;kept&gt;`

| Time | Event |
|---|---|
| 22:00 | The **spool cleanup** job `RSPO1041` failed |
| 08:00 | Order desk finds the spool backlog |
"""
QUESTION = "When did the spool cleanup job RSPO1041 fail?"
ROW = "Time: 22:00; Event: The spool cleanup job RSPO1041 failed"


@pytest.fixture
def incident(app, pack, users):
    outcome = documents.upload_file(
        pack, "spool-incident.md", INCIDENT, users["PlatformAdmin"], reader_access=ReaderAccess("shared", ())
    )
    assert outcome.accepted, outcome.refused
    agent = create_agent(None, "ops-helper", "Ops helper", "preferred", None, "", ["ops"], offered=True)
    run = start_conversation(users["Member"], agent, QUESTION)[1]
    assert run.cited and run.references().first().document_id == "spool-incident"
    feedback = rate_answer(users["Member"], run, "not_helpful", ["incorrect"], "")
    return SimpleNamespace(run=run, feedback=feedback)


# Each page, who reads it, and the element each excerpt of the passage stands in.
PAGES = {
    "answer sources": ("Member", "/chat/answers/{run}/sources", "#source-1"),
    "cited document": ("Member", "/chat/answers/{run}/sources/1/document", ".cited-passage"),
    "library search": ("Member", "/library/?q=spool+cleanup", "#library-results .hit"),
    "pack search": ("PlatformAdmin", "/packs/ops/search?q=spool+cleanup", ".hit"),
    "regression case search": ("AgentBuilder", "/feedback/{feedback}?q=spool+cleanup&scope=agent", ".candidate"),
    "run record": ("Auditor", "/runs/{run}", "#source-1"),
    "document opened from a run": ("Auditor", "/packs/ops/documents/spool-incident?run={run}&ref=1", ".cited-passage"),
}


@pytest.mark.parametrize("page_name", PAGES)
def test_a_passage_excerpt_shows_no_markdown_syntax_and_nothing_of_it_is_markup(incident, client_as, page_name):
    who, address, selector = PAGES[page_name]
    response = client_as(who).get(address.format(run=incident.run.id, feedback=incident.feedback.id))
    assert response.status_code == 200
    body = response.get_data(as_text=True)
    page = BeautifulSoup(body, "html.parser")
    excerpts = page.select(selector)
    assert excerpts, page_name
    for excerpt in excerpts:
        text = excerpt.get_text(" ")
        assert "|---" not in text and "## " not in text and "**" not in text and "`" not in text, text
        assert excerpt.select("img:not(.thumbnail)") == [] and excerpt.select("[hx-get], [hx-trigger]") == []
        assert not any(a["href"].startswith("javascript") for a in excerpt.select("a[href]"))
        assert excerpt.select_one(".excerpt") is not None and excerpt.select_one(".excerpt[hx-disable]") is not None
    shown = " ".join(" ".join(e.get_text(" ") for e in excerpts).split())
    assert "spool cleanup job RSPO1041" in shown
    assert "<img src=x" not in body and "<div hx-get" not in body and 'href="javascript' not in body
    assert "<svg" not in body
    if page_name not in ("library search", "pack search", "regression case search"):  # a whole passage
        assert ROW in shown and "<img src=x onerror=alert(1)>" in shown  # the document's text, as text
        # an entity reads as the viewer shows it (inside a code span it is text)
        assert "Entities: <svg/onload=alert(6)> and &lt;kept&gt;" in shown


def test_an_excerpt_reads_markdown_as_plain_lines():
    text = (
        "Page 3\n## Fix\n\nThe **queue** is `SMQ2`; see [the note](https://example.test/n).\n\n"
        "- Restart the queue.\n\n3. Reprocess with RBDAPP01.\nKeywords: idoc, queue\n\n"
        "| Step | Who |\n|---|---|\n| Restart | Basis |\n\n```\nSE38 RSPO1041\n```\n"
    )
    full = passage_excerpt(text)
    assert [(line.kind, line.bullet, line.text) for line in full.lines] == [
        ("marker", "", "Page 3"),
        ("heading", "", "Fix"),
        ("text", "", "The queue is SMQ2; see the note."),
        ("item", "•", "Restart the queue."),
        ("item", "3.", "Reprocess with RBDAPP01."),
        ("item", "", "Keywords: idoc, queue"),
        ("row", "", "Step: Restart; Who: Basis"),
        ("code", "", "SE38 RSPO1041"),
    ]
    assert not full.cut
    brief = passage_excerpt(text, "snippet")
    assert [line.text for line in brief.lines] == [
        "The queue is SMQ2; see the note.",
        "Restart the queue.",
        "Reprocess with RBDAPP01.",
        "Step: Restart; Who: Basis",
        "SE38 RSPO1041",
    ]
    # A table whose header row is in an earlier passage: its rows read cell by cell.
    assert [line.text for line in passage_excerpt("| a | b |\n|---|---|\n").lines] == ["a; b"]
    assert [line.text for line in passage_excerpt("| 22:00 | **failed** |\n| 08:00 | found |").lines] == [
        "22:00; failed",
        "08:00; found",
    ]


def test_an_entity_reads_as_the_viewer_reads_it():
    """markdown-it's rules (review): an escaped "&" is text, an unknown name or an invalid number stays as written,
    a code span keeps its entities, also across a line break, and a reordering mark is dropped."""
    from portal.answers.units import plain

    assert plain("a &lt;b&gt; &amp;lt; &#42;x&#42;") == "a <b> &lt; *x*"
    assert plain("a \\&lt; b") == "a &lt; b"
    assert plain("&notit; &#128; &#1; AT&T") == "&notit; &#128; &#1; AT&T"
    assert plain("`a\n&lt; b` and &lt;") == "a &lt; b and <"
    assert plain("right&#x202E;left") == "rightleft"
    # a run of backticks no run closes is text: read in one pass (a regex pairing them took seconds)
    assert plain("See &amp; " + "`" * 3000) == "See &"


def test_an_excerpt_is_cut_at_its_lines_or_characters():
    preview = passage_excerpt("\n".join(f"line {n}" for n in range(1, 9)), "preview")
    assert [line.text for line in preview.lines] == [f"line {n}" for n in range(1, 6)] + ["line 6 …"] and preview.cut
    assert not passage_excerpt("one\ntwo", "preview").cut
    snippet = passage_excerpt("word " * 200, "snippet")
    assert snippet.cut and len(snippet.lines) == 1 and len(snippet.lines[0].text) <= 322
    assert snippet.lines[0].text.endswith("word …")
    assert passage_excerpt("").lines == ()
