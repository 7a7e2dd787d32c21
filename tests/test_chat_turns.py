"""A chat turn costs the same at any length: htmx appends the new turn alone, and a long conversation
shows its latest turns with "Show earlier" for the ones before (htmx and a plain link).

Long conversations are built by inserting copies of a real turn through the model (asking 500
questions would take minutes); the question under test is always asked over HTTP.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from bs4 import BeautifulSoup

from helpers import LOCKS, SPOOL
from portal.agents.services import create_agent
from portal.answers.extractive import NO_EVIDENCE_ANSWER
from portal.chat.services import TURNS_PER_PAGE, continue_conversation, start_conversation
from portal.db import database
from portal.documents import services as documents
from portal.models import Conversation, Run, utcnow

QUESTION = "How do I delete old spool requests?"
NEXT_QUESTION = "stale lock entries"
HTMX = {"HX-Request": "true"}


def _soup(response) -> BeautifulSoup:
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


@pytest.fixture
def agent(app, pack):
    documents.upload_file(pack, "spool-overflow.md", SPOOL, None)
    documents.upload_file(pack, "lock-entries.md", LOCKS, None)
    create_agent(None, "ops-helper", "Ops helper", "preferred", None, "", ["ops"], offered=True)
    return create_agent(
        None, "acme-desk", "Acme desk", "preferred", "Acme Test Co", "", ["ops"], offered=True, add_company=True
    )


def _grow(conversation: Conversation, turns: int) -> list[int]:
    """Make ``conversation`` ``turns`` long with copies of its first turn, numbered in their questions,
    put after it and before the others (all earlier than now); the run ids, oldest first."""
    first, asked = conversation.turns().get(), conversation.turns().count()
    start = utcnow() - timedelta(hours=2)
    Run.update(created_at=start).where(Run.id == first.id).execute()
    row = {k: v for k, v in first.__data__.items() if k != "id"}
    with database().atomic():
        Run.insert_many(
            [
                {**row, "question": f"{first.question} (copy {n})", "created_at": start + timedelta(seconds=n)}
                for n in range(1, turns - asked + 1)
            ]
        ).execute()
    return [run.id for run in conversation.turns()]


def _turn_ids(soup) -> list[int]:
    return [int(turn["data-run"]) for turn in soup.select(".turn")]


# --- asking: the new turn alone ------------------------------------------------------------------


def test_an_answer_with_htmx_is_the_new_turn_alone_with_its_surroundings_out_of_band(agent, users, client_as):
    conversation, _ = start_conversation(users["Member"], agent, QUESTION)
    client = client_as("Member")
    page = _soup(client.get(f"/chat/{conversation.id}"))
    form = page.select_one("form#ask-form")
    assert form["method"] == "post" and form["action"] == form["hx-post"] == f"/chat/{conversation.id}"
    assert (form["hx-target"], form["hx-swap"].split()[0]) == ("#turns", "beforeend")
    assert page.select_one(form["hx-target"]).name == "ol"
    region = page.select_one("#chat-announce")  # the live region the answer is announced in, never swapped
    assert region["aria-live"] == "polite" and region.find_parent(id="chat") is None

    response = client.post(f"/chat/{conversation.id}", data={"question": NEXT_QUESTION}, headers=HTMX)
    assert response.status_code == 200 and "HX-Request" in response.headers["Vary"]
    assert "HX-Push-Url" not in response.headers  # the address is already the conversation's
    fragment = _soup(response)
    assert fragment.select_one("html, #chat, #turns, .chat-head") is None
    run = Run.select().order_by(Run.id.desc()).get()
    turn = fragment.select_one(".turn")
    assert _turn_ids(fragment) == [run.id] and turn.parent is fragment  # the <li> to append, nothing around it
    assert turn.select_one(".question").text == NEXT_QUESTION and "SM12" in turn.select_one(".answer").text
    assert turn.select_one(".answer-sources a")["href"] == f"/chat/answers/{run.id}/sources"
    assert turn.select_one(f"#rating-{run.id} form.rate-buttons")["hx-post"] == f"/chat/answers/{run.id}/feedback"
    # Out of band: the question form, empty again; the sidebar; the words a screen reader announces.
    ask = fragment.select_one("#ask")
    assert ask["hx-swap-oob"] == "true" and ask.select_one("textarea#question").text == ""
    assert ask.select_one(".error") is None and ask.select_one("form#ask-form")["hx-target"] == "#turns"
    side = fragment.select_one("#chat-side")
    assert side["hx-swap-oob"] == "true" and side.select_one("a[aria-current]").text == QUESTION
    announce = fragment.select_one("#chat-announce")
    assert announce["hx-swap-oob"] == "innerHTML"
    assert announce.text.startswith("Acme desk answered: ") and "SM12" in announce.text
    assert "<a" not in announce.decode_contents()
    assert [
        q.text for q in _soup(client.get(f"/chat/{conversation.id}")).select(".turn .bubble-question .question")
    ] == [QUESTION, NEXT_QUESTION]


def test_a_no_evidence_answer_is_announced_as_one(agent, users, client_as):
    conversation, _ = start_conversation(users["Member"], agent, QUESTION)
    response = client_as("Member").post(
        f"/chat/{conversation.id}", data={"question": "karaoke antarctica horoscope"}, headers=HTMX
    )
    fragment = _soup(response)
    assert fragment.select_one(".turn .no-evidence-answer[role=note]") is not None
    announced = fragment.select_one("#chat-announce").text
    # the note once (not its title and then its text), the packs searched and what to try
    assert announced.startswith(f"Acme desk answered: {NO_EVIDENCE_ANSWER} Searched: ")
    assert announced.count("No evidence found") == 1 and "Try rephrasing" in announced


def test_starting_with_htmx_swaps_the_chat_pushes_its_address_and_announces_the_answer(agent, client_as):
    response = client_as("Member").post("/chat/", data={"agent": "acme-desk", "question": QUESTION}, headers=HTMX)
    conversation = Conversation.get()
    assert response.headers["HX-Push-Url"] == f"/chat/{conversation.id}"
    fragment = _soup(response)
    assert fragment.select_one("div#chat form#ask-form")["hx-target"] == "#turns"
    assert fragment.select_one("#chat-announce")["hx-swap-oob"] == "innerHTML"
    assert "RSPO1041" in fragment.select_one("#chat-announce").text


@pytest.mark.parametrize("start", [True, False], ids=["starting", "continuing"])
def test_a_refused_question_with_htmx_replaces_only_the_form(agent, users, client_as, start):
    conversation, _ = start_conversation(users["Member"], agent, QUESTION)
    path, data = ("/chat/", {"agent": "acme-desk"}) if start else (f"/chat/{conversation.id}", {})
    runs = Run.select().count()
    response = client_as("Member").post(path, data={**data, "question": "x" * 2001}, headers=HTMX)
    assert response.status_code == 422
    assert (response.headers["HX-Retarget"], response.headers["HX-Reswap"]) == ("#ask", "outerHTML")
    fragment = _soup(response)
    ask = fragment.select_one("div#ask")
    assert ask.parent is fragment and fragment.select(".turn") == [] and not ask.has_attr("hx-swap-oob")
    assert "at most 2,000" in ask.select_one(".error[role=alert]").text
    assert ask.select_one("textarea#question").text == "x" * 2001  # kept, to shorten
    assert bool(ask.select("input[name=agent]")) is start
    assert Run.select().count() == runs


def test_the_500th_answer_is_no_larger_than_the_first(agent, users, client_as):
    client = client_as("Member")
    first = client.post("/chat/", data={"agent": "acme-desk", "question": QUESTION}, headers=HTMX)
    conversation = Conversation.get()
    second = client.post(f"/chat/{conversation.id}", data={"question": QUESTION}, headers=HTMX)
    assert len(_grow(conversation, 499)) == 499
    five_hundredth = client.post(f"/chat/{conversation.id}", data={"question": QUESTION}, headers=HTMX)
    assert five_hundredth.status_code == 200 and conversation.turns().count() == 500
    assert len(_turn_ids(_soup(five_hundredth))) == 1
    sizes = [len(r.get_data()) for r in (first, second, five_hundredth)]
    # Only the turn's id grows (a few digits, in a few places); the first answer also carried the whole chat.
    assert sizes[2] <= sizes[0] + 300, sizes
    assert abs(sizes[2] - sizes[1]) <= 100, sizes


# --- a long conversation: the latest turns, and "Show earlier" -----------------------------------


def test_a_long_conversation_shows_its_latest_turns_and_shows_earlier_ones_on_request(agent, users, client_as):
    conversation, _ = start_conversation(users["Member"], agent, QUESTION)
    ids = _grow(conversation, 2 * TURNS_PER_PAGE + 20)
    client = client_as("Member")
    page = _soup(client.get(f"/chat/{conversation.id}"))
    assert _turn_ids(page) == ids[-TURNS_PER_PAGE:]
    link = page.select_one("#show-earlier a")
    earlier = f"/chat/{conversation.id}?before={ids[-TURNS_PER_PAGE]}"
    assert (link["href"], link["hx-get"], link["hx-target"], link["hx-swap"].split()[0]) == (
        earlier,
        earlier,
        "#turns",
        "afterbegin",
    )

    # Meanwhile a question is asked: the older pages do not shift.
    continue_conversation(users["Member"], conversation, agent, NEXT_QUESTION)
    older = client.get(link["hx-get"], headers=HTMX)
    assert older.status_code == 200 and "HX-Request" in older.headers["Vary"]
    fragment = _soup(older)
    assert fragment.select_one("html, #chat, #turns") is None
    assert _turn_ids(fragment) == ids[-2 * TURNS_PER_PAGE : -TURNS_PER_PAGE]
    control = fragment.select_one("#show-earlier")
    assert control["hx-swap-oob"] == "true"
    oldest = _soup(client.get(control.select_one("a")["hx-get"], headers=HTMX))
    assert _turn_ids(oldest) == ids[:20]
    end = oldest.select_one("#show-earlier")
    assert end.select_one("a") is None and end.text.strip() == "The conversation starts here."

    # Without JavaScript the same link is a page of its own, with a way back to the latest turns.
    plain = client.get(link["href"])
    assert plain.status_code == 200 and "<html" in plain.get_data(as_text=True)
    full = _soup(plain)
    assert _turn_ids(full) == ids[-2 * TURNS_PER_PAGE : -TURNS_PER_PAGE]
    assert full.select_one("#show-earlier a")["href"] == control.select_one("a")["href"]
    assert full.select_one(".show-later a")["href"] == f"/chat/{conversation.id}"
    assert full.select_one("form#ask-form") is None  # asking happens below the latest turns


def test_a_short_conversation_has_no_show_earlier_control(agent, users, client_as):
    conversation, _ = start_conversation(users["Member"], agent, QUESTION)
    _grow(conversation, TURNS_PER_PAGE)
    page = _soup(client_as("Member").get(f"/chat/{conversation.id}"))
    assert len(page.select(".turn")) == TURNS_PER_PAGE
    assert page.select_one("#show-earlier").has_attr("hidden") and page.select_one("#show-earlier a") is None


def test_a_cursor_from_another_conversation_is_a_missing_page(agent, users, client_as):
    mine, _ = start_conversation(users["Member"], agent, QUESTION)
    _, other_run = start_conversation(users["Member"], agent, NEXT_QUESTION)
    client = client_as("Member")
    assert client.get(f"/chat/{mine.id}?before={other_run.id}").status_code == 404
    assert client.get(f"/chat/{mine.id}?before=99999999999").status_code == 200  # names nothing: the latest


def test_rating_an_old_answer_without_javascript_returns_to_the_page_that_shows_it(agent, users, client_as):
    conversation, _ = start_conversation(users["Member"], agent, QUESTION)
    ids = _grow(conversation, TURNS_PER_PAGE + 5)
    client = client_as("Member")
    response = client.post(f"/chat/answers/{ids[0]}/feedback", data={"rating": "helpful"})
    assert response.status_code == 303
    assert response.headers["Location"] == f"/chat/{conversation.id}?before={ids[1]}#turn-{ids[0]}"
    page = _soup(client.get(response.headers["Location"]))
    assert page.select_one(f"#turn-{ids[0]} .rating")["data-rating"] == "helpful"
    recent = client.post(f"/chat/answers/{ids[-TURNS_PER_PAGE]}/feedback", data={"rating": "helpful"})
    assert recent.headers["Location"] == f"/chat/{conversation.id}#turn-{ids[-TURNS_PER_PAGE]}"


def test_each_turn_shows_its_own_rating_when_conversations_interleave(agent, users, client_as):
    """A page reads the member's ratings by the range of its turns' ids: another conversation's turns
    asked in between fall in that range, and their ratings show only on their own page."""
    member = users["Member"]
    first, a = start_conversation(member, agent, QUESTION)
    second, b = start_conversation(member, agent, NEXT_QUESTION)
    c = continue_conversation(member, first, agent, NEXT_QUESTION)
    d = continue_conversation(member, second, agent, QUESTION)
    client = client_as("Member")
    for run, rating in ((b, "helpful"), (c, "helpful"), (d, "not_helpful")):
        fields = {"rating": rating, "reasons": ["incomplete"]} if rating == "not_helpful" else {"rating": rating}
        assert client.post(f"/chat/answers/{run.id}/feedback", data=fields).status_code == 303
    for conversation, shown in ((first, {a.id: "", c.id: "helpful"}), (second, {b.id: "helpful", d.id: "not_helpful"})):
        page = _soup(client.get(f"/chat/{conversation.id}"))
        assert _turn_ids(page) == list(shown)
        assert {run_id: page.select_one(f"#rating-{run_id}")["data-rating"] for run_id in shown} == shown
