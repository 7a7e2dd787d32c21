"""The help pages: one per question, readable by every signed-in role, linked where the question arises,
and stating what the code does (modes, rules, reasons) from the modules that define it."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from helpers import SPOOL
from portal.agents.services import MODE_HELP, create_agent
from portal.chat.services import continue_conversation, start_conversation
from portal.documents import services as documents
from portal.feedback.services import REASONS
from portal.help.topics import DECISION_HELP, REASON_HELP, TOPICS
from portal.ingest.classify import DECISIONS, Policy
from portal.models import ROLES

PAGES = ["/help/", *(f"/help/{topic}" for topic in TOPICS)]


def _soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


@pytest.mark.parametrize("path", PAGES)
@pytest.mark.parametrize("role", ROLES)
def test_every_signed_in_role_reads_every_help_page(client_as, role, path):
    response = client_as(role).get(path)
    assert response.status_code == 200
    page = _soup(response)
    title = page.select_one("h1").text
    assert title == (TOPICS[path.rsplit("/", 1)[1]] if path != "/help/" else "Help")


@pytest.mark.parametrize("path", PAGES)
def test_someone_not_signed_in_is_sent_to_sign_in(client_as, path):
    response = client_as(None).get(path)
    assert response.status_code == 302 and "/login" in response.headers["Location"]


def test_an_unknown_topic_is_not_found(client_as):
    assert client_as("Member").get("/help/nothing-here").status_code == 404


def test_the_index_and_each_page_link_the_other_topics(client_as):
    client = client_as("Auditor")
    index = _soup(client.get("/help/"))
    assert [a["href"] for a in index.select(".help-topics a")] == [f"/help/{topic}" for topic in TOPICS]
    page = _soup(client.get("/help/rating"))
    assert [a["href"] for a in page.select(".help-more a")] == [f"/help/{t}" for t in TOPICS if t != "rating"]


def test_the_grounding_page_explains_every_mode(client_as):
    page = _soup(client_as("AgentBuilder").get("/help/grounding"))
    modes = page.select_one("#modes").find_next("dl")
    assert [dt.text for dt in modes.select("dt")] == list(MODE_HELP)
    for dd, summary in zip(modes.select("dd"), MODE_HELP.values()):
        assert f"{summary[0].upper()}{summary[1:]}." in " ".join(dd.text.split())


def test_the_classification_page_shows_this_portals_decision_for_each_rule(app, client_as):
    app.config["CAIRN_CLASSIFICATION_POLICY"] = [
        {"rule": "jwt", "decision": "block"},
        {"rule": "bearer_token", "decision": "allow"},
    ]
    page = _soup(client_as("PlatformAdmin").get("/help/classification"))
    rows = {row["data-rule"]: row.select("td")[1].text for row in page.select(".help-rules tbody tr")}
    assert list(rows) == [rule.name for rule in Policy.default().rules]
    assert rows["jwt"] == DECISION_HELP["block"] and rows["bearer_token"] == DECISION_HELP["allow"]
    assert rows["private_key"] == DECISION_HELP["redact"]
    text = page.select_one(".help-page").text
    assert "[REDACTED:credential]" in text and "[image not kept: document redacted]" in text


def test_each_decision_and_reason_has_its_help():
    assert list(DECISION_HELP) == list(DECISIONS)
    assert list(REASON_HELP) == list(REASONS)


def test_the_rating_page_explains_every_reason(client_as):
    page = _soup(client_as("Member").get("/help/rating"))
    assert [dt.text for dt in page.select(".help-reasons dt")] == list(REASONS.values())
    assert "PlatformAdmin" in page.select_one(".help-page").text


# --- Linked where each question arises ------------------------------------------------------------


@pytest.fixture
def asked(app, pack, users):
    documents.upload_file(pack, "spool-overflow.md", SPOOL, None)
    agent = create_agent(
        None, "acme-desk", "Acme desk", "preferred", "Acme Test Co", "", ["ops"], offered=True, add_company=True
    )
    conversation, _run = start_conversation(users["Member"], agent, "How do I delete old spool requests?")
    return conversation, agent


def test_the_agent_form_links_the_grounding_modes(client_as, pack):
    create_agent(None, "helper", "Helper", "open", None, "", ["ops"], offered=True)
    for path in ("/agents/new", "/agents/helper"):
        page = _soup(client_as("AgentBuilder").get(path))
        fieldset = next(f for f in page.select("fieldset") if f.legend.text == "Grounding mode")
        assert fieldset.select_one(".help-link a")["href"] == "/help/grounding#modes"


def test_the_upload_form_links_what_classification_does(client_as, pack):
    form = _soup(client_as("PlatformAdmin").get("/packs/ops")).select_one("#upload-form")
    link = form.select_one("#files-help a")
    assert link["href"] == "/help/classification"
    assert form.select_one("#files")["aria-describedby"] == "files-help"


def test_a_no_evidence_answer_and_the_rating_controls_link_their_help(asked, client_as, users):
    conversation, agent = asked
    continue_conversation(users["Member"], conversation, agent, "karaoke antarctica horoscope")
    client = client_as("Member")
    page = _soup(client.get(f"/chat/{conversation.id}"))
    turns = page.select(".turn")
    assert len(turns) == 2
    assert turns[0].select_one(".no-evidence-answer") is None
    assert turns[1].select_one(".no-evidence-answer .help-link a")["href"] == "/help/no-evidence"
    for turn in turns:
        assert turn.select_one(".rating a.help-link")["href"] == "/help/rating"
    run_id = turns[0]["data-run"]
    reasons = _soup(client.get(f"/chat/answers/{run_id}/feedback?rating=not_helpful"))
    assert reasons.select_one("form.not-helpful-form .help-link a")["href"] == "/help/rating"
