"""A chat question leaning on the one before it is read after it (``portal.answers.follow_up``).

Found by a browser walkthrough: after "What happened in INC-2026-0203?", "And the root cause?" was answered with
the root causes of three other incidents, and "Who reported it?" with another incident's reporter.
"""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from portal.agents.services import create_agent
from portal.answers.follow_up import leans_on_the_one_before, read_together
from portal.chat.services import continue_conversation, start_conversation
from portal.documents import services as documents
from portal.models import Run

INC_9 = (
    b"# INC-9: billing job cancelled\n\n## Summary\n\nThe nightly billing job was cancelled by a memory dump.\n\n"
    b"## Root cause\n\nA text preload read every STXH row into memory.\n\n## Reported by\n\nThe billing clerk.\n"
)
INC_8 = (
    b"# INC-8: payment file rejected\n\n## Summary\n\nThe bank rejected the payment file.\n\n"
    b"## Root cause\n\nThe bank's new intermediate certificate was not trusted.\n\n## Reported by\n\nMonitoring.\n"
)


@pytest.mark.parametrize(
    "question, leans",
    [
        ("And the root cause?", True),
        ("what about INC-2026-0338?", True),
        ("Who reported it?", True),
        ("When was that fixed?", True),
        ("What was the root cause of INC-2026-0203?", False),  # names what it is about
        ("Who reported the spool overflow?", False),  # points back at nothing
        ("Why does the billing job fail when it runs after the credit release at night?", False),  # long: says it
        ("Is it normal that the Solution Manager host is slow?", False),  # a name of its own
    ],
)
def test_a_question_leans_on_the_one_before_when_short_and_continuing_or_pointing_back(question, leans):
    assert leans_on_the_one_before(question) is leans


def test_the_one_before_is_told_first_as_its_own_sentence():
    assert read_together("What happened in INC-9", "And why?") == "What happened in INC-9? And why?"


def test_a_follow_up_in_the_chat_is_answered_about_what_the_turn_before_asked(app, pack, users, client_as):
    documents.upload_file(pack, "inc-9.md", INC_9, None)
    documents.upload_file(pack, "inc-8.md", INC_8, None)
    agent = create_agent(None, "analyst", "Analyst", "preferred", None, "", ["ops"])
    member = users["Member"]
    conversation, first = start_conversation(member, agent, "What happened in INC-9?")
    assert first.read_with == ""
    follow_up = continue_conversation(member, conversation, agent, "And the root cause?")
    assert follow_up.read_with == "What happened in INC-9?"
    assert "STXH" in follow_up.answer and "intermediate certificate" not in follow_up.answer
    assert {reference.document_id for reference in follow_up.references() if reference.n in follow_up.cited} == {
        "inc-9"
    }
    # a question of its own is read alone, in the same conversation
    alone = continue_conversation(member, conversation, agent, "What was the root cause of INC-8?")
    assert alone.read_with == "" and "intermediate certificate" in alone.answer
    # the chat and the run record say what the answer was read with
    page = BeautifulSoup(client_as("Member").get(f"/chat/{conversation.id}").get_data(as_text=True), "html.parser")
    notes = [note.text for note in page.select(".read-with")]
    assert notes == ["Read after your question before: “What happened in INC-9?”"]
    assert Run.get_by_id(follow_up.id).read_with == "What happened in INC-9?"
