"""A chat question leaning on the one before it is read about what the conversation was about (``follow_up``).

Found by a browser walkthrough: after "What happened in INC-2026-0203?", "And the root cause?" was answered with
the root causes of three other incidents, and "Who reported it?" with another incident's reporter. A review then
found the first reading (the question before told first) misfiring on ordinary questions, taking its type from
the question before, and losing the subject one turn later: each case is here.
"""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from portal.agents.services import create_agent
from portal.answers.follow_up import leans_on_the_one_before, read_about
from portal.chat.services import continue_conversation, start_conversation
from portal.documents import services as documents
from portal.feedback.regressions import record_no_evidence_case
from portal.feedback.services import rate_answer
from portal.models import Run

INC_9 = (
    b"# INC-9: billing job cancelled\n\n## Summary\n\nThe nightly billing job was cancelled by a memory dump.\n\n"
    b"## Root cause\n\nA text preload read every STXH row into memory.\n\n## Reported by\n\nThe billing clerk.\n"
)
INC_8 = (
    b"# INC-8: payment file rejected\n\n## Summary\n\nThe bank rejected the payment file.\n\n"
    b"## Root cause\n\nThe bank's new intermediate certificate was not trusted.\n\n## Reported by\n\nMonitoring.\n"
)
SPOOL = b"# Spool overflow runbook\n\n## Fix\n\nRun the report RSPO1041 to delete old spool requests.\n"


@pytest.mark.parametrize(
    "question, leans",
    [
        ("And the root cause?", True),
        ("Who reported it?", True),
        ("When was it fixed?", True),
        ("what did they do about them", True),
        ("What was the root cause of INC-2026-0203?", False),  # names what it is about
        ("what about INC-2026-0338?", False),  # names its own
        ("Who reported the spool overflow?", False),  # points back at nothing
        ("what was the root cause", True),  # an aspect of the thing asked about before (browser walkthrough)
        ("What were the follow-up actions?", True),
        ("what's the impact", True),
        ("What is the root cause of the spool overflow?", False),  # names its thing
        ("What causes a spool overflow?", False),
        ("Which transaction shows the status?", False),  # asks about something else (review)
        ("Who approves the fix?", False),
        ("Is there a runbook for the spool overflow?", False),  # "there" points at nothing
        ("How do I know that a job failed?", False),
        ("Who handles IT tickets?", False),  # the department
        ("What time is it in Singapore?", False),
        ("Is it possible to reprint a label?", False),
        ("Why does the billing job fail when it runs after the credit release at night?", False),  # long: says it
        ("Is it normal that the Solution Manager host is slow?", False),  # a name of its own
    ],
)
def test_a_question_leans_on_the_one_before_when_short_naming_nothing_and_continuing_or_pointing_back(question, leans):
    assert leans_on_the_one_before(question) is leans


def test_a_follow_up_is_read_as_asking_about_the_subject_in_its_own_words():
    assert read_about("And the root cause?", ["INC-9"]) == "And the root cause (INC-9)?"
    assert read_about("who fixed it", ["INC-9", "CHG-1"]) == "who fixed it (INC-9, CHG-1)?"


@pytest.fixture
def incidents(app, pack, users):
    documents.upload_file(pack, "inc-9.md", INC_9, None)
    documents.upload_file(pack, "inc-8.md", INC_8, None)
    documents.upload_file(pack, "spool.md", SPOOL, None)
    return create_agent(None, "analyst", "Analyst", "preferred", None, "", ["ops"]), users["Member"]


def _cited(run: Run) -> set[str]:
    return {reference.document_id for reference in run.references() if reference.n in run.cited}


def test_a_follow_up_in_the_chat_is_answered_about_what_the_turn_before_asked(incidents, client_as):
    agent, member = incidents
    conversation, first = start_conversation(member, agent, "What happened in INC-9?")
    assert first.read_as == ""
    follow_up = continue_conversation(member, conversation, agent, "And the root cause?")
    assert follow_up.read_as == "And the root cause (INC-9)?"
    assert "STXH" in follow_up.answer and "intermediate certificate" not in follow_up.answer
    assert _cited(follow_up) == {"inc-9"}
    # a chain keeps the subject: the turn before was itself a follow-up
    chained = continue_conversation(member, conversation, agent, "Who reported it?")
    assert chained.read_as == "Who reported it (INC-9)?" and _cited(chained) == {"inc-9"}
    assert "billing clerk" in chained.answer and "Monitoring" not in chained.answer
    # a question of its own is read alone, in the same conversation, and so is an ordinary one pointing at nothing
    alone = continue_conversation(member, conversation, agent, "What was the root cause of INC-8?")
    assert alone.read_as == "" and "intermediate certificate" in alone.answer
    ordinary = continue_conversation(member, conversation, agent, "Is there a runbook for the spool overflow?")
    assert ordinary.read_as == "" and _cited(ordinary) == {"spool"}
    # the chat and the run record say how the follow-up was read
    page = BeautifulSoup(client_as("Member").get(f"/chat/{conversation.id}").get_data(as_text=True), "html.parser")
    assert [note.text for note in page.select(".read-as")] == [
        "Read as a follow-up: “And the root cause (INC-9)?”",
        "Read as a follow-up: “Who reported it (INC-9)?”",
    ]
    # ... and so do its run record and, rated Not helpful, the feedback a reviewer triages (browser walkthrough: the
    # reviewer saw only "Who reported it?")
    feedback = rate_answer(member, chained, "not_helpful", ["incorrect"], "")
    for who, address in (("Auditor", f"/runs/{chained.id}"), ("AgentBuilder", f"/feedback/{feedback.id}")):
        page = BeautifulSoup(client_as(who).get(address).get_data(as_text=True), "html.parser")
        assert [note.text for note in page.select(".read-as")] == ["Read as a follow-up: “Who reported it (INC-9)?”"]


def test_a_follow_up_asks_what_its_own_words_ask(incidents):
    """ "When was it fixed?" after "Who reported INC-9?" was read with the question before's type (a role): the
    reporter was given for a time INC-9's record does not give."""
    agent, member = incidents
    conversation, _ = start_conversation(member, agent, "Who reported INC-9?")
    when = continue_conversation(member, conversation, agent, "When was it fixed?")
    assert when.read_as == "When was it fixed (INC-9)?"
    assert when.answer_basis == "no_evidence"


def test_a_regression_case_and_another_agent_are_asked_the_follow_up_as_read(incidents, users, client_as):
    agent, member = incidents
    conversation, _ = start_conversation(member, agent, "What happened in INC-9?")
    follow_up = continue_conversation(member, conversation, agent, "And the root cause?")
    assert follow_up.question_as_read == "And the root cause (INC-9)?"
    feedback = rate_answer(member, follow_up, "not_helpful", ["incorrect"])
    case = record_no_evidence_case(users["Auditor"], feedback)
    assert case.question == "And the root cause (INC-9)?"


def test_a_follow_up_carries_at_most_a_few_names_of_the_turn_before(incidents):
    """A question listing many identifiers asks about none in particular: its follow-up carries the first few."""
    agent, member = incidents
    many = "Which of INC-1, INC-2, INC-3, INC-4, INC-5 and INC-9 stopped billing?"
    conversation, _ = start_conversation(member, agent, many)
    follow_up = continue_conversation(member, conversation, agent, "And who reported it?")
    assert follow_up.read_as == "And who reported it (INC-1, INC-2, INC-3, INC-4)?"
