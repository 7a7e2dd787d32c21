"""The support chat: offered agents, conversations, source pages and the documents an answer cited.

Every chat route is checked for every role, for another Member of the same
company and for a Member of another company: all but the asker get the 404 of
a missing thing.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from bs4 import BeautifulSoup

from helpers import LOCKS, PASSWORD, SPOOL, make_index_unreadable, signed_in_client
from portal import access
from portal.agents.services import create_agent, update_agent
from portal.answers.extractive import NO_EVIDENCE_ANSWER
from portal.auth.services import create_user
from portal.chat.services import continue_conversation, conversation_title, start_conversation
from portal.documents import editing
from portal.documents import services as documents
from portal.feedback.services import rate_answer
from portal.models import REVISIONS_KEPT, Agent, Conversation, Document, Pack, Passage, Run
from portal.packs.services import create_pack
from portal.runs.services import run_as_json
from resources.make_fixtures import mixed_images_docx
from tests.fake_openai import FakeOpenAI

QUESTION = "How do I delete old spool requests?"
FIGURE_QUESTION = "Which raster formats like PNG are kept?"


MIXED_IMAGES_DOCX = mixed_images_docx()
STAFF = ("PlatformAdmin", "AgentBuilder", "Auditor")


def _soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


@pytest.fixture
def world(app, pack, other_pack, users):
    """A pack with two runbooks and a Word document with figures; agents for Acme, Globex and everyone (the one
    for everyone also searches another pack)."""
    documents.upload_file(pack, "spool-overflow.md", SPOOL, None)
    documents.upload_file(pack, "lock-entries.md", LOCKS, None)
    figures = documents.upload_file(pack, "mixed-images.docx", MIXED_IMAGES_DOCX, None)
    return SimpleNamespace(
        shared=create_agent(None, "ops-helper", "Ops helper", "preferred", None, "", ["ops", "other"], offered=True),
        acme=create_agent(
            None, "acme-desk", "Acme desk", "preferred", "Acme Test Co", "", ["ops"], offered=True, add_company=True
        ),
        globex=create_agent(
            None, "globex-desk", "Globex desk", "preferred", "Globex", "", ["ops"], offered=True, add_company=True
        ),
        idle=create_agent(
            None, "acme-idle", "Acme idle", "open", "Acme Test Co", "", [], offered=True, add_company=True
        ),
        figures=figures.document,
    )


@pytest.fixture
def chat(world, users):
    """The Member's conversation with the Acme desk: a runbook answer, then one citing the figures."""
    conversation, first = start_conversation(users["Member"], world.acme, QUESTION)
    second = continue_conversation(users["Member"], conversation, world.acme, FIGURE_QUESTION)
    assert first.cited == [1] and first.references().first().document_id == "spool-overflow"
    assert second.cited == [1] and second.references().first().document_id == "mixed-images"
    return SimpleNamespace(conversation=conversation, run=first, figure_run=second)


@pytest.fixture
def strangers(app):
    return {
        "colleague": create_user("colleague@example.test", PASSWORD, {"Member"}, "Acme Test Co"),
        "other company": create_user("globex.member@example.test", PASSWORD, {"Member"}, "Globex"),
    }


@pytest.fixture
def client_for(app, client_as, strangers):
    """client_for(who): a role's client, or a "colleague" (same company) or "other company" Member's."""

    def make(who):
        return signed_in_client(app, strangers[who]) if who in strangers else client_as(who)

    return make


# --- offered agents ----------------------------------------------------------------------


def test_members_are_offered_their_company_and_shared_agents_with_packs(app, world, users, strangers):
    assert [a.slug for a in access.agents_offered_to(users["Member"]).order_by(Agent.slug)] == [
        "acme-desk",
        "ops-helper",
    ]
    assert [a.slug for a in access.agents_offered_to(strangers["other company"]).order_by(Agent.slug)] == [
        "globex-desk",
        "ops-helper",
    ]
    app.config["CAIRN_OFFER_SHARED_AGENTS"] = False
    assert [a.slug for a in access.agents_offered_to(users["Member"])] == ["acme-desk"]
    for role in STAFF:
        assert list(access.agents_offered_to(users[role])) == []


def test_chat_page_lists_only_offered_agents(world, client_as):
    page = _soup(client_as("Member").get("/chat/"))
    assert [i["value"] for i in page.select("input[name=agent]")] == ["acme-desk", "ops-helper"]
    assert "Globex" not in page.text and "acme-idle" not in str(page)


def test_navigation_shows_the_chat_to_members_and_answer_feedback_to_reviewers(world, client_as):
    member = _soup(client_as("Member").get("/chat/")).select_one("nav")
    assert [a.text for a in member.select("a")] == ["Support chat", "Library"]
    for role in STAFF:
        nav = _soup(client_as(role).get("/packs/")).select_one("nav")
        assert nav.select_one(".nav-group-label").text == "Build"
        assert nav.select_one(".nav-group a")["href"] == "/feedback/"
        assert "Support chat" not in nav.text


# --- the access matrix ----------------------------------------------------------------------

WHO = ("Member", "colleague", "other company", "PlatformAdmin", "AgentBuilder", "Auditor", None)
ANY_MEMBER = ("Member", "colleague", "other company")
ACME = ("Member", "colleague")
ASKER = ("Member",)

# (method, path, data, who may, status when allowed); {c} conversation, {r} runbook answer, {f} figure answer
CHAT_ROUTES = [
    ("GET", "/chat/", None, ANY_MEMBER, 200),
    ("GET", "/chat/conversations", None, ANY_MEMBER, 200),
    ("GET", "/chat/agents/ops-helper", None, ANY_MEMBER, 200),
    ("GET", "/chat/agents/acme-desk", None, ACME, 200),
    ("GET", "/chat/agents/globex-desk", None, ("other company",), 200),
    ("GET", "/chat/agents/acme-idle", None, (), 200),
    ("POST", "/chat/", {"agent": "acme-desk", "question": QUESTION}, ACME, 303),
    ("POST", "/chat/", {"agent": "globex-desk", "question": QUESTION}, ("other company",), 303),
    ("GET", "/chat/{c}", None, ASKER, 200),
    ("POST", "/chat/{c}", {"question": "stale lock entries"}, ASKER, 303),
    ("GET", "/chat/answers/{r}/sources", None, ASKER, 200),
    ("GET", "/chat/answers/{r}/sources/1/document", None, ASKER, 200),
    ("GET", "/chat/answers/{f}/sources/1/document/figures/1.webp", None, ASKER, 200),
    ("GET", "/chat/answers/{f}/sources/1/document/original", None, (), 200),  # visibility "staff": no download
    ("GET", "/chat/answers/{r}/feedback", None, ASKER, 200),
    ("POST", "/chat/answers/{r}/feedback", {"rating": "not_helpful", "reasons": "outdated"}, ASKER, 303),
    ("GET", "/runs/{r}", None, ("Member",) + STAFF, 200),
    # A member never reaches the pack, the staff viewer, another revision or another document's figures.
    ("GET", "/packs/ops", None, STAFF, 200),
    ("GET", "/packs/ops/documents/spool-overflow", None, STAFF, 200),
    ("GET", "/packs/ops/documents/mixed-images/v1/figures/1.webp", None, STAFF, 200),
    ("GET", "/packs/ops/documents/mixed-images/original", None, ("PlatformAdmin",), 200),
    ("GET", "/chat/answers/{r}/sources/1/document/figures/1.webp", None, (), 200),
    ("GET", "/chat/answers/{r}/sources/2/document", None, (), 200),  # issued, not cited
    ("GET", "/chat/answers/{r}/sources/9/document", None, (), 200),
    ("GET", "/chat/999999", None, (), 200),
]


@pytest.mark.parametrize("who", WHO, ids=[str(w) for w in WHO])
@pytest.mark.parametrize(
    "method, path, data, allowed, ok_status",
    CHAT_ROUTES,
    ids=[f"{r[0]} {r[1]}{' ' + str(r[2]) if r[2] else ''}" for r in CHAT_ROUTES],
)
def test_chat_access_matrix(app, chat, client_for, who, method, path, data, allowed, ok_status):
    assert len(list(chat.run.references())) >= 2
    url = path.format(c=chat.conversation.id, r=chat.run.id, f=chat.figure_run.id)
    if who is None:
        response = app.test_client().open(url, method=method, data=data)
        assert response.status_code == 302 and "/login" in response.headers["Location"]
        return
    response = client_for(who).open(url, method=method, data=data)
    if who in allowed:
        assert response.status_code == ok_status, response.get_data(as_text=True)[:400]
    else:
        assert response.status_code == 404


def test_a_hidden_conversation_looks_like_a_missing_one(chat, client_for):
    client = client_for("colleague")
    hidden = client.get(f"/chat/{chat.conversation.id}").get_data(as_text=True)
    assert hidden == client.get("/chat/999999").get_data(as_text=True)
    assert client.get(f"/chat/answers/{chat.run.id}/sources").get_data(as_text=True) == hidden


# --- asking ---------------------------------------------------------------------------------


def test_first_question_starts_a_conversation_without_javascript(world, client_as, users):
    client = client_as("Member")
    response = client.post("/chat/", data={"agent": "acme-desk", "question": QUESTION})
    conversation = Conversation.get()
    run = Run.get()
    assert response.status_code == 303
    assert response.headers["Location"].endswith(f"/chat/{conversation.id}#turn-{run.id}")
    assert (conversation.user_id, conversation.agent_slug, conversation.title) == (
        users["Member"].id,
        "acme-desk",
        QUESTION,
    )
    assert run.conversation_id == conversation.id and run.user_id == users["Member"].id
    page = _soup(client.get(f"/chat/{conversation.id}"))
    turn = page.select_one(f"#turn-{run.id}")
    assert turn.select_one(".question").text == QUESTION
    marker = turn.select_one(".answer a.cite")
    assert (marker.text, marker["href"]) == ("1", f"/chat/answers/{run.id}/sources#source-1")
    assert turn.select_one(".answer-sources a")["href"] == f"/chat/answers/{run.id}/sources"
    assert page.select_one(".conversation-list a[aria-current]").text == QUESTION


def test_starting_with_htmx_returns_the_new_conversation(world, client_as):
    response = client_as("Member").post(
        "/chat/", data={"agent": "ops-helper", "question": QUESTION}, headers={"HX-Request": "true"}
    )
    conversation = Conversation.get()
    assert response.status_code == 200 and response.headers["HX-Push-Url"] == f"/chat/{conversation.id}"
    fragment = BeautifulSoup(response.get_data(as_text=True), "html.parser")
    assert fragment.select_one(".chat-head h1").text == QUESTION
    assert fragment.select_one("form#ask-form")["action"] == f"/chat/{conversation.id}"


@pytest.mark.parametrize("htmx", [True, False])
@pytest.mark.parametrize("question, message", [("  ", "the text was empty"), ("x" * 2001, "at most 2,000")])
def test_an_empty_or_long_question_is_refused_and_nothing_is_stored(world, chat, client_as, htmx, question, message):
    headers = {"HX-Request": "true"} if htmx else {}
    client = client_as("Member")
    runs, conversations = Run.select().count(), Conversation.select().count()
    for path, data in (
        ("/chat/", {"agent": "acme-desk", "question": question}),
        (f"/chat/{chat.conversation.id}", {"question": question}),
    ):
        response = client.post(path, data=data, headers=headers)
        assert response.status_code == 422
        assert ("<html" in response.get_data(as_text=True)) is not htmx
        assert message in _soup(response).select_one(".error").text
    assert (Run.select().count(), Conversation.select().count()) == (runs, conversations)


@pytest.mark.parametrize("htmx", [True, False])
def test_a_question_whose_packs_cannot_be_searched_is_a_503_and_nothing_is_stored(world, chat, app, client_as, htmx):
    """An unreadable index of a granted pack made the question a 500; it is a 503 that says so, shown where the
    question was sent, and no run or conversation is stored."""
    make_index_unreadable(app, "ops")
    app.config["PROPAGATE_EXCEPTIONS"] = False
    headers = {"HX-Request": "true"} if htmx else {}
    client = client_as("Member")
    runs, conversations = Run.select().count(), Conversation.select().count()
    for path, data in (
        ("/chat/", {"agent": "acme-desk", "question": QUESTION}),
        (f"/chat/{chat.conversation.id}", {"question": QUESTION}),
    ):
        response = client.post(path, data=data, headers=headers)
        assert response.status_code == 503
        assert ("<html" in response.get_data(as_text=True)) is not htmx
        assert "cannot search its documents right now" in _soup(response).select_one(".error").text
    assert (Run.select().count(), Conversation.select().count()) == (runs, conversations)


def test_starting_without_choosing_an_agent_asks_for_one(world, client_as):
    response = client_as("Member").post("/chat/", data={"question": QUESTION})
    assert response.status_code == 422 and "Choose an agent" in _soup(response).select_one(".error").text
    assert _soup(response).select_one("#question").text == QUESTION
    assert Run.select().count() == 0


def test_the_form_sends_on_enter_and_shows_progress_while_answering(chat, client_as):
    page = _soup(client_as("Member").get(f"/chat/{chat.conversation.id}"))
    form = page.select_one("form#ask-form")
    assert form.select_one("textarea[name=question]").has_attr("data-enter-sends")
    pending = page.select_one(form["hx-indicator"])
    assert "Composing the answer… searching the packs" in pending.text
    assert pending.select_one("progress") is not None and pending.select_one("[data-pending-question]") is not None


def test_a_conversation_whose_agent_is_no_longer_offered_is_read_only(chat, client_as, users):
    update_agent(
        None,
        chat.conversation.agent,
        name="Acme desk",
        mode="preferred",
        company_name="Globex",
        instructions="",
        pack_slugs=["ops"],
    )
    client = client_as("Member")
    page = _soup(client.get(f"/chat/{chat.conversation.id}"))
    assert page.select_one("form#ask-form") is None
    assert "no longer offered" in page.select_one(".notice").text
    assert len(page.select(".turn")) == 2
    assert client.post(f"/chat/{chat.conversation.id}", data={"question": "spool"}).status_code == 404


# --- what an answer rests on ---------------------------------------------------------------------

NO_EVIDENCE_QUESTION = "karaoke antarctica horoscope"


def test_a_no_evidence_answer_is_a_note_naming_the_packs_searched_and_the_other_agents(world, client_as, users):
    conversation, run = start_conversation(users["Member"], world.acme, NO_EVIDENCE_QUESTION)
    assert (run.answer_basis, run.searched_packs) == ("no_evidence", [{"slug": "ops", "title": "Operations"}])
    # Later grant and title changes do not rewrite what was searched then.
    update_agent(
        None,
        world.acme,
        name="Acme desk",
        mode="preferred",
        company_name="Acme Test Co",
        instructions="",
        pack_slugs=[],
    )
    Pack.update(title="Renamed operations").where(Pack.slug == "ops").execute()
    page = _soup(client_as("Member").get(f"/chat/{conversation.id}"))
    turn = page.select_one(f"#turn-{run.id}")
    assert "basis-no_evidence" in turn.select_one(".bubble-answer")["class"]
    note = turn.select_one(".no-evidence-answer")
    assert note["role"] == "note"
    title = page.select_one(f"#{note['aria-labelledby']}")
    assert title.text.strip() == "No evidence found" and title.select_one("svg")["aria-hidden"] == "true"
    assert note.select_one(".answer").text == NO_EVIDENCE_ANSWER
    assert [p.text for p in note.select(".searched-pack")] == ["Operations"]
    assert "rephrasing" in note.select_one(".next-step").text
    [(name, address)] = [(a.text, a["href"]) for a in note.select(".other-agents a")]
    assert name == "Ops helper" and address.startswith("/chat/agents/ops-helper?question=")
    # The other agent's page has the question in its box, for the member to send or change.
    asked_again = _soup(client_as("Member").get(address))
    assert asked_again.select_one("textarea#question").text == NO_EVIDENCE_QUESTION
    assert asked_again.select_one("input[name=agent][value=ops-helper]").has_attr("checked")
    assert turn.select("a.cite") == [] and turn.select_one(".answer-sources") is None
    assert turn.select_one(".answer-warning") is None  # the note says it; the warning is in the run record
    assert turn.select_one(".rating") is not None  # it can still be rated
    sources = _soup(client_as("Member").get(f"/chat/answers/{run.id}/sources"))
    assert sources.select_one(".no-evidence-answer .answer").text == NO_EVIDENCE_ANSWER
    assert [a.text for a in sources.select(".no-evidence-answer .other-agents a")] == ["Ops helper"]


def test_a_question_too_long_for_an_address_is_not_carried_to_another_agent(world, client_as, users):
    question = f"{NO_EVIDENCE_QUESTION} " + "كم " * 600
    conversation, run = start_conversation(users["Member"], world.acme, question)
    note = _soup(client_as("Member").get(f"/chat/{conversation.id}")).select_one(".no-evidence-answer")
    assert [a["href"] for a in note.select(".other-agents a")] == ["/chat/agents/ops-helper"]


def test_a_long_list_of_other_agents_folds_and_a_short_one_does_not(world, client_as, users):
    conversation, run = start_conversation(users["Member"], world.acme, NO_EVIDENCE_QUESTION)
    page = _soup(client_as("Member").get(f"/chat/{conversation.id}"))
    assert page.select_one(".no-evidence-answer details") is None  # one other agent: listed as it is
    for n in range(3):
        create_agent(None, f"ops-helper-{n}", f"Ops helper {n}", "preferred", None, "", ["other"], offered=True)
    # one searching only the pack already searched would find nothing either: it is not offered
    create_agent(None, "ops-twin", "Ops twin", "preferred", None, "", ["ops"], offered=True)
    note = _soup(client_as("Member").get(f"/chat/{conversation.id}")).select_one(".no-evidence-answer")
    folded = note.select_one("details.other-agents-more")
    assert folded.select_one("summary").text == "Other agents you can ask (4)"
    assert [a.text for a in folded.select(".other-agents a")] == [
        "Ops helper",
        "Ops helper 0",
        "Ops helper 1",
        "Ops helper 2",
    ]


def test_an_answer_from_the_documents_has_no_evidence_note(chat, client_as):
    turn = _soup(client_as("Member").get(f"/chat/{chat.conversation.id}")).select_one(f"#turn-{chat.run.id}")
    assert "basis-documents" in turn.select_one(".bubble-answer")["class"]
    assert turn.select_one(".no-evidence-answer") is None and turn.select_one(".model-only-note") is None
    assert turn.select_one(".answer a.cite") is not None


def test_a_citation_in_a_links_text_stays_text_in_the_chat_answer(app, pack, users, client_as):
    """A model may cite inside a link's label; the citation there used to be a link inside the link."""
    documents.upload_file(pack, "spool-overflow.md", SPOOL, None)
    agent = create_agent(
        None, "acme-desk", "Acme desk", "preferred", "Acme Test Co", "", ["ops"], offered=True, add_company=True
    )
    conversation, run = start_conversation(users["Member"], agent, QUESTION)
    assert run.cited == [1]
    answer = "Clear it as [the runbook [1]](https://wiki.test/spool) says [1]."
    Run.update(answer=answer, model="test-model").where(Run.id == run.id).execute()  # as a model may write it
    assert run_as_json(Run.get_by_id(run.id))["answer_format"] == "markdown"
    page = _soup(client_as("Member").get(f"/chat/{conversation.id}"))
    answer_html = page.select_one(f"#turn-{run.id} .answer")
    assert [a for a in answer_html.select("a") if a.find_parent("a")] == []
    assert [a.text for a in answer_html.select("a:not(.cite)")] == ["the runbook [1]"]
    assert [a["href"] for a in answer_html.select("a.cite")] == [f"/chat/answers/{run.id}/sources#source-1"]


PLACEHOLDERS = (
    b"# Template fields\n\n## Placeholders\n\n"
    b"To fill a placeholder type {{7*7}} or ${7*7} into the form field, then keep the *.log files of "
    b"C:\\temp\\old as <b>shown</b> and *kept*.\n"
)


def test_the_extractive_answer_shows_the_documents_characters_never_markup(app, pack, users, client_as):
    """The extractive answer is the documents' text without their syntax (``units.plain``): a '*' left in it is
    a star, never emphasis (the chat showed '{{7*7}} ${7*7}' as '{{77}} ${77}'), in the chat, the run record and
    the review list."""
    documents.upload_file(pack, "placeholders.md", PLACEHOLDERS, None)
    agent = create_agent(
        None, "acme-forms", "Acme forms", "preferred", "Acme Test Co", "", ["ops"], offered=True, add_company=True
    )
    conversation, run = start_conversation(users["Member"], agent, "How do I fill a placeholder in the form field?")
    assert run.model == "extractive" and "{{7*7}}" in run.answer
    rate_answer(users["Member"], run, "not_helpful", ["incorrect"])
    shown = (
        _soup(client_as("Member").get(f"/chat/{conversation.id}")).select_one(f"#turn-{run.id} .answer"),
        _soup(client_as("PlatformAdmin").get(f"/runs/{run.id}")).select_one(".answer"),
        _soup(client_as("AgentBuilder").get("/feedback/")).select_one(".feedback-answer"),
    )
    for answer in shown:
        assert answer.select("em, strong, b, code") == []
        assert (
            "{{7*7}} or ${7*7}" in answer.text
            and "*.log files of C:\\temp\\old as <b>shown</b> and kept." in answer.text
        )


def test_with_no_other_agent_the_note_offers_only_rephrasing(app, world, users, client_as):
    app.config["CAIRN_OFFER_SHARED_AGENTS"] = False
    conversation, run = start_conversation(users["Member"], world.acme, NO_EVIDENCE_QUESTION)
    note = _soup(client_as("Member").get(f"/chat/{conversation.id}")).select_one(".no-evidence-answer")
    assert note.select_one(".other-agents") is None
    assert note.select_one(".next-step").text.endswith("the documents would use.")


def test_an_open_agent_answer_without_evidence_is_marked_not_based_on_the_documents(app, world, users, client_as):
    agent = create_agent(
        None, "acme-open", "Acme open", "open", "Acme Test Co", "", ["ops"], offered=True, add_company=True
    )
    with FakeOpenAI() as fake:
        app.config.update(
            CAIRN_MODEL_BASE_URL=fake.base_url, CAIRN_MODEL_API_KEY="sk-test", CAIRN_MODEL_NAME="fake-gpt"
        )
        fake.reply("Karaoke night is on Fridays.")
        conversation, run = start_conversation(users["Member"], agent, NO_EVIDENCE_QUESTION)
        app.config["CAIRN_MODEL_BASE_URL"] = None
    assert (run.answer, run.answer_basis, run.model_called) == ("Karaoke night is on Fridays.", "model_only", True)
    turn = _soup(client_as("Member").get(f"/chat/{conversation.id}")).select_one(f"#turn-{run.id}")
    mark = turn.select_one(".model-only-note")
    assert mark["role"] == "note" and mark.select_one(".model-only-title").text == "Not based on the documents."
    assert "Operations" in mark.text
    answer = turn.select_one(".answer")
    assert answer.text == "Karaoke night is on Fridays." and answer["aria-describedby"] == mark["id"]
    assert turn.select_one(".no-evidence-answer") is None


def test_an_open_agent_without_a_model_says_no_evidence(world, users, client_as):
    agent = create_agent(
        None, "acme-open", "Acme open", "open", "Acme Test Co", "", ["ops"], offered=True, add_company=True
    )
    conversation, run = start_conversation(users["Member"], agent, NO_EVIDENCE_QUESTION)
    assert (run.answer, run.answer_basis) == (NO_EVIDENCE_ANSWER, "no_evidence")
    page = _soup(client_as("Member").get(f"/chat/{conversation.id}"))
    assert page.select_one(".no-evidence-answer .answer").text == NO_EVIDENCE_ANSWER


def test_a_right_to_left_question_is_shown_in_its_own_direction_wherever_it_appears(world, client_as, users):
    """``dir="auto"``: an Arabic question is laid out right to left, and the Latin codes in it do not pull
    it left to right (nor does it reorder what stands around it)."""
    question = "كيف أحذف طلبات spool القديمة باستخدام RSPO1041؟"
    conversation, run = start_conversation(users["Member"], world.acme, question)
    feedback = rate_answer(users["Member"], run, "not_helpful", ["incorrect"], "ليس التقرير الصحيح")
    member, admin = client_as("Member"), client_as("PlatformAdmin")
    for client, address, selectors in [
        (member, f"/chat/{conversation.id}", ["#chat-heading", f"#turn-{run.id} .question", ".conversation-list a"]),
        (member, f"/chat/answers/{run.id}/sources", [".question"]),
        (member, "/chat/conversations", ["td.row-question"]),
        (admin, f"/runs/{run.id}", [".question"]),
        (admin, "/runs/", ["td.row-question"]),
        (admin, "/feedback/", [".row-note"]),
        (admin, f"/feedback/{feedback.id}", [".question", ".feedback-note"]),
    ]:
        page = _soup(client.get(address))
        for selector in selectors:
            shown = page.select_one(selector)
            assert shown is not None and shown.get("dir") == "auto", (address, selector)


def test_conversation_titles_are_one_line_and_short():
    assert conversation_title("How do I\n  fix it?") == "How do I fix it?"
    title = conversation_title("word " * 40)
    assert len(title) <= 80 and title.endswith("…")


# --- the source page -------------------------------------------------------------------------


def test_source_page_lists_the_cited_passages_with_pack_title_section_and_text(chat, client_as):
    run = chat.run
    page = _soup(client_as("Member").get(f"/chat/answers/{run.id}/sources"))
    assert page.select_one(".question").text == QUESTION
    assert page.select_one(".answer a.cite")["href"] == "#source-1"
    sources = page.select("ol.sources > li")
    assert [s["id"] for s in sources] == [f"source-{n}" for n in run.cited]  # the cited ones only
    first = sources[0]
    assert (
        first.select_one(".source-label").text
        == "[1] Operations — Spool overflow runbook (section Fix)"  # the title is not repeated
    )
    assert "RSPO1041" in first.select_one(".passage-text").text
    assert first.select_one("a.open-document")["href"] == f"/chat/answers/{run.id}/sources/1/document"
    assert page.select_one(f"#rating-{run.id}") is not None


def test_source_page_shows_figures_through_the_run(chat, client_as):
    client = client_as("Member")
    source = _soup(client.get(f"/chat/answers/{chat.figure_run.id}/sources")).select_one("#source-1")
    thumbnail = source.select_one("img.thumbnail")
    assert thumbnail["src"] == f"/runs/{chat.figure_run.id}/sources/1/figures/1.webp"
    assert client.get(thumbnail["src"]).mimetype == "image/webp"


# --- the cited document, read-only ---------------------------------------------------------------


def test_cited_document_opens_read_only_with_the_passage_highlighted(chat, client_as):
    client = client_as("Member")
    page = _soup(client.get(f"/chat/answers/{chat.run.id}/sources/1/document"))
    assert page.select_one("h1").text == "Spool overflow runbook"
    assert page.select_one(".cited-passage h2").text == "Cited passage"
    assert "RSPO1041" in page.select_one(".cited-passage .passage-text").text
    assert any("RSPO1041" in c.text for c in page.select(".doc-body .cited"))
    toolbar = page.select_one(".toolbar").text
    assert "Edit" not in toolbar and "Delete" not in toolbar and "Download" not in toolbar
    assert page.select("form") == [page.select_one("form.signout")]  # nothing to change here
    assert page.select_one(".revisions") is None and "/packs/" not in str(page.select_one("main"))
    lines = _soup(client.get(f"/chat/answers/{chat.run.id}/sources/1/document?view=lines"))
    assert any("RSPO1041" in row.text for row in lines.select("table.numbered tr.cited"))


def test_cited_document_shows_figures_in_place_through_the_answer(chat, client_as):
    client = client_as("Member")
    run = chat.figure_run
    page = _soup(client.get(f"/chat/answers/{run.id}/sources/1/document"))
    images = page.select(".doc-body .figure img")
    assert [i["src"] for i in images] == [
        f"/chat/answers/{run.id}/sources/1/document/figures/{n}.webp?version=1" for n in (1, 2, 3, 4)
    ]
    figure = client.get(images[0]["src"])
    assert figure.status_code == 200 and figure.data[:4] == b"RIFF"
    assert client.get(f"/chat/answers/{run.id}/sources/1/document/figures/5.webp").status_code == 404


def test_files_opened_from_an_answer_answer_conditional_requests(chat, client_as):
    Document.update(visibility="shared").where(Document.doc_id == "mixed-images").execute()
    client = client_as("Member")
    run = chat.figure_run
    sent = {
        f"/chat/answers/{run.id}/sources/1/document/figures/1.webp": "image/webp",
        f"/runs/{run.id}/sources/1/figures/1.webp": "image/webp",
        f"/chat/answers/{run.id}/sources/1/document/original": "application/octet-stream",
    }
    for address, mimetype in sent.items():
        first = client.get(address)
        assert first.status_code == 200 and first.mimetype == mimetype and first.headers["ETag"], address
        again = client.get(address, headers={"If-None-Match": first.headers["ETag"]})
        assert again.status_code == 304 and again.data == b"", address
    assert first.headers["Content-Disposition"].startswith("attachment;") and first.data == MIXED_IMAGES_DOCX


def test_a_source_renamed_since_the_answer_says_its_title_now(chat, client_as, users):
    """The receipt keeps the title the passage was issued under; a title changes no revision, so "changed" said
    nothing, and "Open the document" landed on a page of another name."""
    spool = Document.get(Document.doc_id == "spool-overflow")
    issued_title = spool.title
    editing.retitle(spool, 'Spool <b hx-get="/x">clean-up</b>', 1, users["PlatformAdmin"])
    source = _soup(client_as("Member").get(f"/chat/answers/{chat.run.id}/sources")).select_one("#source-1")
    assert issued_title in source.select_one(".source-label").text
    assert source.select_one(".renamed").text == ' · now titled “Spool <b hx-get="/x">clean-up</b>”'
    assert source.select("b, [hx-get]") == []  # the title is text
    run_page = _soup(client_as("Auditor").get(f"/runs/{chat.run.id}"))
    assert "now titled" in run_page.select_one(".renamed").text


def test_the_cited_revision_is_shown_while_kept_the_current_one_on_request_and_a_purge_is_said(chat, client_as, users):
    spool = Document.get(Document.doc_id == "spool-overflow")
    changed = SPOOL.decode().replace("Output requests pile up", "Output requests keep piling up")
    editing.edit_text(spool, changed, 1, users["PlatformAdmin"])
    client = client_as("Member")
    url = f"/chat/answers/{chat.run.id}/sources/1/document"
    page = _soup(client.get(url))
    assert "version 1" in page.select_one(".doc-head").text
    notice = page.select_one(".cited-revision").text
    assert "version 1 of 2, the one your answer cited" in notice
    assert "keep piling up" not in page.select_one(".doc-body").text
    assert page.select(".doc-body .cited")  # the cited passage, highlighted in the text it was cited from
    assert page.select_one(".cited-revision a")["href"] == f"{url}?version=2"

    current = _soup(client.get(url + "?version=2"))
    assert "keep piling up" in current.select_one(".doc-body").text
    notice = current.select_one(".changed-since-run").text
    assert "changed since your answer" in notice and "version 1" in notice and "highlighted" in notice
    assert current.select_one(".changed-since-run a")["href"] == url
    assert client.get(url + "?version=3").status_code == 404  # only the cited and the current revision
    assert (
        "changed since this answer"
        in _soup(client.get(f"/chat/answers/{chat.run.id}/sources")).select_one("#source-1").text
    )

    for version in range(2, 2 + REVISIONS_KEPT):  # version 1 is purged
        editing.edit_text(Document.get_by_id(spool.id), f"{changed}\nEdit {version}.\n", version, None)
    page = _soup(client.get(url))
    notice = page.select_one(".changed-since-run").text
    assert "Version 1 was purged" in notice and f"this is version {2 + REVISIONS_KEPT}" in notice
    assert "keep piling up" in page.select_one(".doc-body").text
    assert client.get(url + "?version=1").status_code == 404


def test_a_deleted_document_cannot_be_opened(chat, client_as):
    spool = Document.get(Document.doc_id == "spool-overflow")
    editing.delete_document(spool, 1)
    client = client_as("Member")
    source = _soup(client.get(f"/chat/answers/{chat.run.id}/sources")).select_one("#source-1")
    assert source.select_one("a.open-document") is None and "deleted" in source.text
    assert source.select_one(".passage-unavailable").text == "Passage unavailable for this source."
    assert client.get(f"/chat/answers/{chat.run.id}/sources/1/document").status_code == 404


def test_reader_roles_without_member_close_the_cited_document(chat, client_as):
    client = client_as("Member")
    url = f"/chat/answers/{chat.run.id}/sources/1/document"
    assert client.get(url).status_code == 200  # its body is now among the rendered ones this process keeps
    Document.update(reader_role_names=["Auditor"]).where(Document.doc_id == "spool-overflow").execute()
    assert _soup(client.get(f"/chat/answers/{chat.run.id}/sources")).select_one("#source-1 a.open-document") is None
    assert client.get(f"/chat/answers/{chat.run.id}/sources/1/document").status_code == 404


@pytest.mark.parametrize(
    "visibility, pack_company, offered",
    [
        ("staff", None, False),
        ("shared", None, True),
        ("company", "Acme Test Co", True),
        ("company", "Globex", False),
    ],
)
def test_the_original_is_offered_only_when_reader_visibility_allows(chat, client_as, visibility, pack_company, offered):
    document = chat.figure_run.references().first()
    update = {Document.visibility: visibility}
    Document.update(update).where(Document.id == document.document_pk).execute()
    if pack_company:
        slug = f"{pack_company.split()[0].lower()}-pack"
        company_pack = create_pack(slug, "Company pack", "company", pack_company, add_company=True)
        Document.update(pack=company_pack).where(Document.id == document.document_pk).execute()
    client = client_as("Member")
    url = f"/chat/answers/{chat.figure_run.id}/sources/1/document"
    buttons = [a.text for a in _soup(client.get(url)).select(".toolbar a")]
    assert ("Download the original" in buttons) is offered
    response = client.get(url + "/original")
    if offered:
        assert response.status_code == 200 and response.data == MIXED_IMAGES_DOCX
    else:
        assert response.status_code == 404


def test_the_original_sent_is_the_current_revisions_the_one_the_page_offers(chat, client_as, pack):
    """The cited revision (version 1, visibility "staff") is not downloadable; after a shared version 2
    the page offers version 2's original, and the address sends that one, never version 1's."""
    from portal.documents.readers import ReaderAccess
    from resources.make_fixtures import docx_bytes

    version_2 = docx_bytes(lambda d: d.add_paragraph("Raster PNG, JPEG and GIF pictures are kept, version 2."))
    documents.upload_file(pack, "mixed-images.docx", version_2, None, reader_access=ReaderAccess("shared"))
    client = client_as("Member")
    url = f"/chat/answers/{chat.figure_run.id}/sources/1/document"
    cited_page = _soup(client.get(url))
    assert "version 1 of 2" in cited_page.select_one(".cited-revision").text
    assert "Download the original" not in [a.text for a in cited_page.select(".toolbar a")]
    current_page = _soup(client.get(url + "?version=2"))
    link = next(a for a in current_page.select(".toolbar a") if a.text == "Download the original")
    assert client.get(link["href"]).data == version_2
    assert client.get(url + "/original").data != MIXED_IMAGES_DOCX  # the cited version 1 is never sent


def test_a_redacted_document_offers_no_download(app, world, users):
    document = Document.get(Document.doc_id == "mixed-images")
    document.visibility, document.redacted = "shared", True
    assert not access.member_may_download(users["Member"], document, document.current_revision())


def test_another_members_citation_does_not_open_for_me(chat, client_for):
    """Even with the same document cited, the route is tied to the asker's own answer."""
    client = client_for("colleague")
    conversation_of_colleague = client.post("/chat/", data={"agent": "acme-desk", "question": QUESTION})
    assert conversation_of_colleague.status_code == 303
    own = Run.select().order_by(Run.id.desc()).get()
    assert client.get(f"/chat/answers/{own.id}/sources/1/document").status_code == 200
    assert client.get(f"/chat/answers/{chat.run.id}/sources/1/document").status_code == 404
    passage = Passage.get_by_id(own.references().first().passage_id)
    assert client.get(f"/packs/ops/documents/spool-overflow?passage={passage.id}").status_code == 404


def test_a_chat_turn_is_stored_with_its_conversation_in_one_write(world, users):
    conversation, first = start_conversation(users["Member"], world.acme, QUESTION)
    stored = Conversation.get_by_id(conversation.id)
    assert Run.get_by_id(first.id).conversation_id == conversation.id
    # one transaction, one moment: the conversation is created and updated when its first run is stored
    assert stored.created_at == stored.updated_at == Run.get_by_id(first.id).created_at
    second = continue_conversation(users["Member"], stored, world.acme, FIGURE_QUESTION)
    assert Conversation.get_by_id(conversation.id).updated_at == Run.get_by_id(second.id).created_at
    assert [run.id for run in stored.turns()] == [first.id, second.id]


# --- Answers read as text, not as Markdown source (issue 16, items 1 and 6) -------------------

MARKDOWN_ANSWER = """**Close freeze** starts on Friday [1].

| Team | Action |
|---|---|
| AMS Basis | run RSPO1041 [1] |

## Next
- check `SP12` [7]
- user "*" <b onclick="x()">bold</b> ![t](https://tracker.test/p.png)"""


def test_a_model_answer_in_markdown_is_shown_formatted_with_its_citations(app, world, users, client_as):
    with FakeOpenAI() as fake:
        app.config.update(
            CAIRN_MODEL_BASE_URL=fake.base_url, CAIRN_MODEL_API_KEY="sk-test", CAIRN_MODEL_NAME="fake-gpt"
        )
        fake.reply(MARKDOWN_ANSWER)
        conversation, run = start_conversation(users["Member"], world.acme, QUESTION)
        app.config["CAIRN_MODEL_BASE_URL"] = None
    assert run.model_called and run.cited == [1]
    answer = _soup(client_as("Member").get(f"/chat/{conversation.id}")).select_one(f"#turn-{run.id} .answer")
    assert answer.has_attr("hx-disable")
    text = answer.get_text()
    assert "**" not in text and "|" not in text and "#" not in text
    assert answer.select_one("strong").text == "Close freeze"
    assert [td.text for td in answer.select("td")] == ["AMS Basis", "run RSPO1041 [1]"]
    assert answer.select_one(".answer-heading").text == "Next" and answer.select("h1, h2, h3") == []
    assert [a["href"] for a in answer.select("a.cite")] == [f"/chat/answers/{run.id}/sources#source-1"] * 2
    assert 'user "*"' in text and "[7]" not in text  # an unissued marker was removed by validation
    # Nothing from the answer becomes markup or loads anything: raw HTML is text, no image.
    assert answer.select("b, img, [onclick]") == [] and '<b onclick="x()">bold</b>' in text


def test_the_extractive_answer_keeps_quoted_wildcards(app, pack, users):
    documents.upload_file(
        pack,
        "locks.md",
        b'# Locks\n\n## Check\n\nOpen SM12 with table name "*" and user "*" to list every lock entry.\n',
        None,
    )
    agent = create_agent(
        None, "acme-locks", "Acme locks", "preferred", "Acme Test Co", "", ["ops"], offered=True, add_company=True
    )
    _, run = start_conversation(users["Member"], agent, "How do I list every lock entry in SM12?")
    assert 'table name "*" and user "*"' in run.answer


def test_a_member_sees_the_note_they_wrote_with_their_rating(chat, users, client_as):
    rate_answer(users["Member"], chat.run, "not_helpful", ["incomplete"], "It skips the TemSe check.\nSee SP12.")
    client = client_as("Member")
    for address in (f"/chat/{chat.conversation.id}", f"/chat/answers/{chat.run.id}/sources"):
        note = _soup(client.get(address)).select_one(f"#rating-{chat.run.id} .rated-note")
        assert note.has_attr("hx-disable")
        assert note.select_one(".rated-note-text").text == "It skips the TemSe check.\nSee SP12."
