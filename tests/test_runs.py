"""Runs: retrieval over granted packs, the grounding modes with and without a model, receipts, run records.

The model provider is the fake in ``tests/fake_openai.py``: a real HTTP server
speaking the chat-completions protocol.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from helpers import LOCKS, SPOOL, cli_runner, login
from portal.agents.services import create_agent, update_agent
from portal.answers.evidence import MIN_JOINED_COVERAGE
from portal.answers.extractive import NO_EVIDENCE_ANSWER
from portal.answers.grounding import (
    CITES_NONE_WARNING,
    MODEL_FOUND_NO_ANSWER_WARNING,
    MODEL_ONLY_WARNING,
    NO_PASSAGE_WARNING,
    NOT_ACCEPTED_ANSWER,
    NOT_ACCEPTED_WARNING,
    STOPPED_NO_PASSAGE_ANSWER,
)
from portal.answers.prompt import CANNOT_ANSWER
from portal.answers.references import section_path
from portal.auth.services import create_user
from portal.documents import editing
from portal.documents import services as documents
from portal.documents.render import answer_text
from portal.errors import Refused
from portal.models import Document, Pack, Passage, Revision, Run, RunReference
from portal.models.clock import utcnow
from portal.runs import services as run_services
from portal.runs.ask import ask, retrieve
from portal.runs.services import linked_answer
from portal.search.analysis import content_terms
from portal.search.service import search_packs
from resources.make_fixtures import add_picture, docx_bytes, image_bytes, mixed_images_docx
from tests.fake_openai import FakeOpenAI

EVIDENCE_QUESTION = "How do I delete old spool requests?"
NO_EVIDENCE_QUESTION = "payroll antarctica"
API_KEY = "sk-test-runs-0123456789"


def _soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


@pytest.fixture
def corpus(app, pack, other_pack):
    documents.upload_file(pack, "spool-overflow.md", SPOOL, None)
    documents.upload_file(pack, "lock-entries.md", LOCKS, None)
    documents.upload_file(
        other_pack,
        "spool-elsewhere.md",
        b"# Elsewhere\n\nDelete old spool requests from the other pack with RSPO0041.\n",
        None,
    )
    return pack


def make_agent(mode: str, slug: str | None = None, packs=("ops",)):
    return create_agent(
        None, slug or f"{mode}-agent", f"{mode.title()} agent", mode, None, "You help the operations team.", list(packs)
    )


@pytest.fixture
def fake_model(app):
    with FakeOpenAI() as fake:
        app.config.update(
            CAIRN_MODEL_BASE_URL=fake.base_url,
            CAIRN_MODEL_API_KEY=API_KEY,
            CAIRN_MODEL_NAME="fake-gpt",
            CAIRN_MODEL_TIMEOUT=5.0,
        )
        yield fake
        app.config["CAIRN_MODEL_BASE_URL"] = None


# --- retrieval ---------------------------------------------------------------------


def test_run_issues_numbered_references_from_the_granted_packs_only(corpus, users):
    agent = make_agent("preferred")
    run = ask(agent, users["AgentBuilder"], EVIDENCE_QUESTION)
    references = list(run.references())
    assert references and [r.n for r in references] == list(range(1, len(references) + 1))
    assert {r.pack_slug for r in references} == {"ops"}  # "other" holds a matching passage, but is not granted
    expected = search_packs([corpus], EVIDENCE_QUESTION, limit=8).hits
    assert [r.passage_id for r in references] == [h.passage_id for h in expected]
    first = references[0]
    passage = Passage.get_by_id(first.passage_id)
    assert (first.document_id, first.document_title, first.pack_title, first.version) == (
        "spool-overflow",
        "Spool overflow runbook",
        "Operations",
        1,
    )
    assert (first.text, first.line_start, first.line_end, first.heading_path) == (
        passage.text,
        passage.line_start,
        passage.line_end,
        passage.heading_path,
    )
    assert first.document_pk == Document.get(Document.doc_id == "spool-overflow").id
    assert run.answer.startswith("Run the report RSPO1041 to delete old spool requests. [1]")
    assert run.cited == [1] and run.status == "completed" and run.model == "extractive"
    assert set(run.timings) >= {"retrieval_ms", "extractive_ms", "answer_ms", "total_ms"}


def test_at_most_eight_references_and_three_per_document(app, pack, users):
    sections = "\n\n".join(f"## Part {n}\n\n" + "The widget calibration needs care. " * 30 for n in range(6))
    documents.upload_file(pack, "widget-manual.md", f"# Widget manual\n\n{sections}\n".encode(), None)
    for n in range(8):
        documents.upload_file(pack, f"note-{n}.md", f"# Note {n}\n\nA widget note number {n}.\n".encode(), None)
    run = ask(make_agent("open"), None, "widget calibration")
    references = list(run.references())
    assert len(references) == 8
    assert sum(r.document_id == "widget-manual" for r in references) == 3


INC_31 = """# INC-31: sales load failed because the extraction user was locked

| Field | Value |
|---|---|
| Incident | INC-31 |
| Priority | P3 |

## Summary

The daily sales load failed at 05:03 with "Errors in source system". The destination test returned "User is
locked. Please notify the person responsible". The extraction user had been locked after failed logons.

## Timeline

| Time | Event |
|---|---|
| 05:03 | INC-31 opened by the load monitor |
| 06:10 | INC-31 assigned to the Basis team |

## Related documents

The certificate record (INC-30); the RFC runbook. Keywords: INC-31, sales load, locked user.
"""
PROBLEM_7 = """# PRB-7: users locked by old logon data

## Summary

Users are locked by destinations with old logon data. It is the second time after INC-31 and INC-29.
"""


def test_what_happened_in_an_incident_is_told_from_its_summary(app, pack):
    """ "What happened in INC-2026-0266?" was answered "Incident: INC-2026-0266 [1]." and a row of a review: the
    record's passages naming it most (its header, its timeline, its keywords) took the three places a document has,
    and the Summary was not among the passages. It is searched by its heading now, and it tells what happened."""
    documents.upload_file(pack, "inc-31.md", INC_31.encode(), None)
    documents.upload_file(pack, "prb-7.md", PROBLEM_7.encode(), None)
    agent = make_agent("preferred")
    for question in ("What happened in INC-31?", "Tell me about INC-31", "what was INC-31 about"):
        answer = ask(agent, None, question).answer
        # the summary's three sentences, the quoted message one sentence with the one quoting it
        told = re.findall(
            r"(The daily sales load failed|The destination test returned \"User is locked\. Please "
            r"notify the person responsible\"\.|The extraction user had been locked)",
            answer,
        )
        assert len(told) == 3, question
        assert "Incident: INC-31 [" not in answer  # the header's row names INC-31 and says nothing of it


def test_a_row_in_the_second_half_of_a_long_table_is_found_by_its_header_and_answered_with_it(app, pack):
    """The passage holding the later rows of a table cut in two repeats the header: the search finds the
    row by the column the question names ("program") and the answer says which cell is which."""
    rows = "\n".join(f"| Z_JOB_{n:03} | ZTW_PROGRAM_{n:03} / V{n} | Daily {n % 24:02}:00 |" for n in range(80))
    schedule = f"# Batch schedule\n\n| Job | Program / variant | Start |\n|---|---|---|\n{rows}\n"
    documents.upload_file(pack, "batch-schedule.md", schedule.encode(), None)

    run = ask(make_agent("preferred"), None, "Which program runs job Z_JOB_071, and when does it start?")

    assert "Job: Z_JOB_071; Program / variant: ZTW_PROGRAM_071 / V71; Start: Daily 23:00" in run.answer
    cited = next(r for r in run.references() if r.n in run.cited)
    assert cited.text.startswith("| Job | Program / variant | Start |\n|---|---|---|\n")
    assert cited.line_start > 5  # a later piece: its lines are the rows', not the header's


def test_an_agent_without_grants_finds_no_evidence(corpus):
    run = ask(make_agent("preferred", packs=()), None, EVIDENCE_QUESTION)
    assert run.answer == NO_EVIDENCE_ANSWER and run.references().count() == 0
    assert run.warnings == [NO_PASSAGE_WARNING] and run.status == "completed_with_warning"


PRINTING_FAQ = b"# Printing FAQ\n\nHow do I print a label? Print the labels again after lunch.\n"


@pytest.mark.parametrize("question", ["How do I fly to the moon?", "What happens after the weekend?"])
@pytest.mark.parametrize(
    "mode, status, requests, warnings",
    [
        ("open", "completed_with_warning", 1, [MODEL_ONLY_WARNING]),
        ("preferred", "completed_with_warning", 0, [NO_PASSAGE_WARNING]),
        ("required", "stopped", 0, [NO_PASSAGE_WARNING]),
    ],
)
def test_passages_sharing_only_question_words_or_stopwords_are_not_evidence(
    corpus, fake_model, question, mode, status, requests, warnings
):
    documents.upload_file(corpus, "printing-faq.md", PRINTING_FAQ, None)
    fake_model.reply("The packs do not say.")
    run = ask(make_agent(mode), None, question)
    assert run.references().count() == 0 and len(fake_model.requests) == requests
    assert (run.status, run.warnings) == (status, warnings)
    if requests:
        assert "(No references: no acceptable passage was found" in fake_model.requests[0].system_prompt


def test_extractive_answer_to_an_unrelated_question_is_no_evidence(corpus):
    documents.upload_file(corpus, "printing-faq.md", PRINTING_FAQ, None)
    run = ask(make_agent("open"), None, "How do I fly to the moon after midnight?")
    assert run.answer == NO_EVIDENCE_ANSWER and run.references().count() == 0


def test_content_terms_leave_out_question_words_and_stopwords(app):
    assert content_terms("How do I restart the stuck jobs?") == ["restart", "stuck", "job"]
    assert content_terms("What's it got to do with anything?") == []


GOODS_ISSUE = b"""# Goods issue at TW30

## Posting goods issue

Post goods issue in VL02N once picking is complete. Good stock from the line is posted first.
The incident INC-2026-0266 was caused by a locked RFC user. Message ZTW_EDI 017 means the customer material is missing.
"""
RECEIPTS = b"# Goods receipt\n\nMovement type 101 posts a goods receipt.\n"


@pytest.mark.parametrize(
    "question, evidence",
    [
        ("How do I post goods issue in VL02N?", True),
        ("What was the cause of INC-2026-0266?", True),
        ("What does message ZTW_EDI 017 mean?", True),
        # sharing a stemmed word ("good" = "goods") is not evidence: three of four terms occur nowhere
        ("What's a good recipe for apple strudel?", False),
        # an identifier the packs do not name: a near miss is not the incident asked about
        ("What was the cause of INC-2026-0427?", False),
        ("How do I post goods issue in VL03N?", False),
        # the parts of one identifier must occur together: 101 occurs, but not as a ZTW_EDI message
        ("What does message ZTW_EDI 101 mean?", False),
        # an upper-case code the packs never use
        ("How do I assign a PFCG role for goods issue at TW30?", False),
        # a name (a capitalised word inside the sentence) the packs never mention
        ("How is goods issue posted at the plant in Poland?", False),
    ],
)
def test_evidence_check(corpus, question, evidence):
    documents.upload_file(corpus, "goods-issue.md", GOODS_ISSUE, None)
    documents.upload_file(corpus, "goods-receipt.md", RECEIPTS, None)
    retrieval = retrieve(make_agent("preferred"), question)
    assert retrieval.choice.evidence is evidence
    assert bool(retrieval.issued) is evidence


SERVICE_LEVELS = b"""# Service levels

## Resolution targets

Incidents are resolved within their target: P1 within 4 hours, P2 within 8 hours, P3 within 72 hours.

## Printers

Label printer P4 in hall 2 prints the shipping labels of plant TW30.
"""


@pytest.mark.parametrize(
    "question, evidence",
    [
        ("What is the resolution target for P2 incidents?", True),
        # P4 occurs, but only in a passage about something else: the priority asked about is not defined
        ("What is the resolution target for P4 incidents?", False),
    ],
)
def test_an_identifier_must_occur_in_a_passage_about_the_question(corpus, question, evidence):
    documents.upload_file(corpus, "service-levels.md", SERVICE_LEVELS, None)
    retrieval = retrieve(make_agent("preferred"), question)
    assert retrieval.choice.evidence is evidence


@pytest.mark.parametrize(
    "question, evidence",
    [
        # the situation told first names the site, which the runbook does not know; what is asked it answers
        (
            "Our label printers at plant TW40 flood the spool. The report RSPO1041 has not run for weeks. "
            "How do I delete old spool requests?",
            True,
        ),
        # an identifier in the asking sentence must be in the evidence, told or not
        ("The spool is full at plant TW40. What does report RSPO9999 delete?", False),
        # told identifiers alone: one of them must be in the evidence
        ("INC-2026-0427 was reported at plant TW40. How do I delete old spool requests?", False),
        ("How do I delete old spool requests at plant TW40?", False),
    ],
)
def test_identifiers_the_user_tells_before_asking_are_context_and_one_of_them_must_be_in_the_evidence(
    corpus, question, evidence
):
    assert retrieve(make_agent("preferred"), question).choice.evidence is evidence


ON_CALL = b"# On call\n\nAlert the shift lead of plant TW30 on the on-call phone when goods issue fails.\n"


@pytest.mark.parametrize(
    "document, evidence",
    [
        (ON_CALL, False),  # the topic is there, a phone number is not
        (ON_CALL.replace(b"on the on-call phone", b"on the on-call phone, +49 30 1234 5678,"), True),
        (ON_CALL.replace(b"on the on-call phone", b"on the on-call phone (since 2026-03-13 06:00)"), False),
    ],
)
def test_a_question_asking_for_a_phone_number_needs_a_passage_holding_one(corpus, document, evidence):
    documents.upload_file(corpus, "on-call.md", document, None)
    retrieval = retrieve(make_agent("preferred"), "What is the phone number of the TW30 shift lead on call?")
    assert retrieval.choice.evidence is evidence
    assert retrieval.choice.missing_values == ([] if evidence else ["phone number"])


HOSTS = b"# Hosts\n\nThe database of K4P runs on host tfs-k4p-hdb; the Basis lead owns the host list.\n"


@pytest.mark.parametrize(
    "question, document, evidence, missing",
    [
        ("What is the IP address of tfs-k4p-hdb?", HOSTS, False, ["IP address"]),
        ("What is the IP address of tfs-k4p-hdb?", HOSTS.replace(b"hdb;", b"hdb (10.20.30.41);"), True, []),
        ("Who is the Basis lead, by name? I need to e-mail them", HOSTS, False, ["name"]),
        ("Who owns the host list of K4P?", HOSTS, True, []),  # asks who, not for a name the packs lack
    ],
)
def test_an_ip_address_or_a_name_asked_for_needs_a_passage_holding_one(corpus, question, document, evidence, missing):
    documents.upload_file(corpus, "hosts.md", document, None)
    retrieval = retrieve(make_agent("preferred"), question)
    assert retrieval.choice.evidence is evidence, retrieval.choice
    assert retrieval.choice.missing_values == missing


def test_a_contraction_typed_without_its_apostrophe_is_read_as_with_it(corpus):
    """ "whats the credit limit …" asked no amount of money, which "what's the credit limit …" does: the patterns
    reading a question's form expect the apostrophe (found on a held-out set written as a shift supervisor types)."""
    documents.upload_file(corpus, "credit.md", b"# Credit\n\nDistributor 200452 sends orders by EDI.\n", None)
    retrieval = retrieve(make_agent("preferred"), "whats the credit limit of distributor 200452")
    assert retrieval.question == "what's the credit limit of distributor 200452"
    assert not retrieval.choice.evidence and retrieval.choice.missing_values == ["amount of money"]


def test_a_name_of_several_capitalised_words_must_occur_as_one_in_the_passages(corpus):
    """Each word of "Solution Manager" is in the packs ("solution", "manager"); the name is not."""
    documents.upload_file(corpus, "hosts.md", HOSTS + b"\nThe Basis lead is the manager of the solution.\n", None)
    agent = make_agent("preferred")
    unknown = retrieve(agent, "When is the downtime of the Solution Manager host?").choice
    assert not unknown.evidence and unknown.unknown_names == ["Solution Manager"]
    known = retrieve(agent, "Which host does the database of K4P run on, per the Basis Lead?").choice
    assert known.evidence, known


SHIPMENTS = b"# Export shipments\n\nThe 3PL charged Tarnwick for the export shipments that INC-9 delayed by two days.\n"


@pytest.mark.parametrize(
    "document, evidence",
    [
        (SHIPMENTS, False),  # what was charged for, never how much: "two days" is no amount of money
        (SHIPMENTS.replace(b"delayed by two days", b"delayed: EUR 1,240 in all"), True),
    ],
)
def test_a_question_asking_what_something_cost_needs_a_passage_holding_an_amount_of_money(corpus, document, evidence):
    documents.upload_file(corpus, "shipments.md", document, None)
    retrieval = retrieve(
        make_agent("preferred"), "How much did the 3PL charge Tarnwick for the delayed export shipments?"
    )
    assert retrieval.choice.evidence is evidence, retrieval.choice
    assert retrieval.choice.missing_values == ([] if evidence else ["amount of money"])


BANK = b"# Payment file to the house bank not delivered\n\n## Impact\n\n- Payments reached the bank at 09:05.\n"
PROVIDER = b"# E-invoicing\n\nMost distributors want invoices through the e-invoicing service provider, every night.\n"


@pytest.mark.parametrize(
    "question, document, evidence",
    [
        ("Which company is our e-invoicing service provider?", PROVIDER, False),  # the provider, never its name
        ("What's the name of the e-invoicing provider company?", PROVIDER, False),
        ("who is our e-invoicing service provider? need their name", PROVIDER, False),
        ("What's the name of the bank behind the e-invoicing service provider?", PROVIDER, False),
        ("Which e-invoicing service company do we send our invoices through?", PROVIDER, False),
        ("who sends our invoices through the e-invoicing service provider? need the name", PROVIDER, False),
        # a status is a participle, no name: "in status Released"
        (
            "who is our e-invoicing service provider? need the name",
            PROVIDER.replace(b"night.", b"night, in status Released."),
            False,
        ),
        (
            "Which company is our e-invoicing service provider?",
            PROVIDER.replace(b"service provider,", b"service provider, Billtrust Ltd,"),
            True,
        ),
        ("Which distributors want invoices through the e-invoicing service provider?", PROVIDER, True),  # no name
        # a section's name in the heading path and a list item's first word are capitalised, and name no one
        ("what's the name of our house bank for the payments?", BANK, False),
        (
            "what's the name of our house bank for the payments?",
            BANK.replace(b"reached the bank", b"reached the bank, Nordbank AG,"),
            True,
        ),
    ],
)
def test_a_question_asking_for_the_name_of_a_company_needs_a_passage_naming_one(corpus, question, document, evidence):
    documents.upload_file(corpus, "e-invoicing.md", document, None)
    retrieval = retrieve(make_agent("preferred"), question)
    assert retrieval.choice.evidence is evidence, retrieval.choice
    assert retrieval.choice.missing_values == ([] if evidence else ["name"])


CALENDAR = b"""# Downtime calendar: second quarter

| Date | Type | Content |
|---|---|---|
| 2026-05-16 | Planned downtime | Support package update of K4P; KXP stays up, its channels to K4P are stopped |
"""
REPORT = b"""# Post-downtime report: K4P support package update, 28 February

The K4P support package update finished at 09:30, 25 minutes faster than the rehearsal.
"""
MINUTES = b"""# Change board minutes: 5 March

## Decisions

The board approved CHG-9 for release R26.04.

## Next meeting

Thursday 2026-03-19, 10:00: the board takes up CHG-10.
"""


@pytest.mark.parametrize(
    "question, evidence",
    [
        # the calendar's row only plans it: "its channels are stopped" describes the downtime, it reports nothing
        ("How did the K4P support package update on 16 May go?", False),
        ("How did the K4P support package update on 28 February go?", True),
        # the next meeting is planned in the minutes; a question about the meeting they record is answered
        ("How did the change board meeting on 5 March go?", True),
    ],
)
def test_a_participle_describing_a_thing_reports_nothing_done(corpus, question, evidence):
    for name, document in (("calendar.md", CALENDAR), ("report.md", REPORT), ("minutes.md", MINUTES)):
        documents.upload_file(corpus, name, document, None)
    choice = retrieve(make_agent("preferred"), question).choice
    assert choice.evidence is evidence, choice


@pytest.mark.parametrize(
    "document, evidence",
    [
        (ON_CALL, False),
        (ON_CALL.replace(b"on the on-call phone", b"by e-mail to tw30-shift@example.com"), True),
    ],
)
def test_a_question_asking_for_an_e_mail_address_needs_a_passage_holding_one(corpus, document, evidence):
    documents.upload_file(corpus, "on-call.md", document, None)
    retrieval = retrieve(make_agent("preferred"), "Which e-mail address alerts the TW30 shift lead on call?")
    assert retrieval.choice.evidence is evidence
    assert retrieval.choice.missing_values == ([] if evidence else ["e-mail address"])


def test_preferred_without_evidence_says_so_exactly_and_cites_nothing(corpus, fake_model):
    documents.upload_file(corpus, "goods-issue.md", GOODS_ISSUE, None)
    fake_model.reply("Strudel needs apples [1].")
    run = ask(make_agent("preferred"), None, "What's a good recipe for apple strudel?")
    assert run.answer == "No evidence found in the granted packs for this question."
    assert (run.status, run.warnings, run.cited, run.model_called) == (
        "completed_with_warning",
        [NO_PASSAGE_WARNING],
        [],
        False,
    )
    assert run.references().count() == 0 and fake_model.requests == []


@pytest.mark.parametrize("question, reason", [("   ", "empty_question"), ("x" * 2001, "question_too_long")])
def test_empty_or_long_question_is_refused_and_nothing_is_stored(corpus, question, reason):
    with pytest.raises(Refused) as refused:
        ask(make_agent("open"), None, question)
    assert refused.value.reason == reason and Run.select().count() == 0


# --- grounding modes: extractive (no model configured) ------------------------------

EXTRACTIVE_CASES = [
    # mode, evidence, status, warnings, answer
    ("open", True, "completed", [], "extractive"),
    ("open", False, "completed", [], NO_EVIDENCE_ANSWER),
    ("preferred", True, "completed", [], "extractive"),
    ("preferred", False, "completed_with_warning", [NO_PASSAGE_WARNING], NO_EVIDENCE_ANSWER),
    ("required", True, "completed", [], "extractive"),
    ("required", False, "stopped", [NO_PASSAGE_WARNING], STOPPED_NO_PASSAGE_ANSWER),
]


@pytest.mark.parametrize(
    "mode, evidence, status, warnings, answer",
    EXTRACTIVE_CASES,
    ids=[f"{c[0]}-{'evidence' if c[1] else 'no-evidence'}" for c in EXTRACTIVE_CASES],
)
def test_extractive_modes(corpus, mode, evidence, status, warnings, answer):
    run = ask(make_agent(mode), None, EVIDENCE_QUESTION if evidence else NO_EVIDENCE_QUESTION)
    assert (run.status, run.warnings, run.model, run.model_called) == (status, warnings, "extractive", False)
    if answer == "extractive":
        assert "RSPO1041" in run.answer and "[1]" in run.answer and run.cited == [1]
    else:
        assert run.answer == answer and run.cited == [] and run.references().count() == 0


# --- grounding modes × evidence × what the model does ---------------------------------

FALLBACK_500 = "model call failed (HTTP 500); answered from the evidence instead"
REMOVED_1 = "removed citation [1]: no such reference"

# mode, evidence, model behaviour, status, model requests, warnings, answer check, answer basis
MODEL_CASES = [
    ("open", True, "cites", "completed", 1, [], "model", "documents"),
    ("open", True, "cites_none", "completed", 1, [], "model", "documents"),
    (
        "open",
        True,
        "cannot",
        "completed_with_warning",
        1,
        [MODEL_FOUND_NO_ANSWER_WARNING],
        NO_EVIDENCE_ANSWER,
        "no_evidence",
    ),
    ("open", True, "fails", "completed_with_warning", 1, [FALLBACK_500], "extractive", "documents"),
    ("open", False, "cites", "completed_with_warning", 1, [REMOVED_1, MODEL_ONLY_WARNING], "model", "model_only"),
    ("open", False, "cites_none", "completed_with_warning", 1, [MODEL_ONLY_WARNING], "model", "model_only"),
    (
        "open",
        False,
        "cannot",
        "completed_with_warning",
        1,
        [MODEL_FOUND_NO_ANSWER_WARNING],
        NO_EVIDENCE_ANSWER,
        "no_evidence",
    ),
    ("open", False, "fails", "completed_with_warning", 1, [FALLBACK_500], NO_EVIDENCE_ANSWER, "no_evidence"),
    ("preferred", True, "cites", "completed", 1, [], "model", "documents"),
    ("preferred", True, "cites_none", "completed_with_warning", 1, [CITES_NONE_WARNING], "model", "documents"),
    (
        "preferred",
        True,
        "cannot",
        "completed_with_warning",
        1,
        [MODEL_FOUND_NO_ANSWER_WARNING],
        NO_EVIDENCE_ANSWER,
        "no_evidence",
    ),
    ("preferred", True, "fails", "completed_with_warning", 1, [FALLBACK_500], "extractive", "documents"),
    # No evidence: the fixed answer, and the model is not called (it could only answer on its own).
    ("preferred", False, "cites", "completed_with_warning", 0, [NO_PASSAGE_WARNING], NO_EVIDENCE_ANSWER, "no_evidence"),
    (
        "preferred",
        False,
        "cites_none",
        "completed_with_warning",
        0,
        [NO_PASSAGE_WARNING],
        NO_EVIDENCE_ANSWER,
        "no_evidence",
    ),
    ("preferred", False, "fails", "completed_with_warning", 0, [NO_PASSAGE_WARNING], NO_EVIDENCE_ANSWER, "no_evidence"),
    ("required", True, "cites", "completed", 1, [], "model", "documents"),
    ("required", True, "cites_none", "stopped", 1, [NOT_ACCEPTED_WARNING], NOT_ACCEPTED_ANSWER, "not_accepted"),
    ("required", True, "cannot", "stopped", 1, [MODEL_FOUND_NO_ANSWER_WARNING], NO_EVIDENCE_ANSWER, "no_evidence"),
    ("required", True, "fails", "completed_with_warning", 1, [FALLBACK_500], "extractive", "documents"),
    ("required", False, "cites", "stopped", 0, [NO_PASSAGE_WARNING], STOPPED_NO_PASSAGE_ANSWER, "no_evidence"),
    ("required", False, "cites_none", "stopped", 0, [NO_PASSAGE_WARNING], STOPPED_NO_PASSAGE_ANSWER, "no_evidence"),
    ("required", False, "fails", "stopped", 0, [NO_PASSAGE_WARNING], STOPPED_NO_PASSAGE_ANSWER, "no_evidence"),
]

MODEL_REPLIES = {
    "cites": "Run RSPO1041 to delete them [1].",
    "cites_none": "Run RSPO1041 to delete them.",
    "cannot": CANNOT_ANSWER,
}


@pytest.mark.parametrize(
    "mode, evidence, behaviour, status, requests, warnings, answer, basis",
    MODEL_CASES,
    ids=[f"{c[0]}-{'evidence' if c[1] else 'no-evidence'}-{c[2]}" for c in MODEL_CASES],
)
def test_modes_with_a_model(corpus, fake_model, mode, evidence, behaviour, status, requests, warnings, answer, basis):
    if behaviour == "fails":
        fake_model.fail_with_status(500)
    else:
        fake_model.reply(MODEL_REPLIES[behaviour])
    run = ask(make_agent(mode), None, EVIDENCE_QUESTION if evidence else NO_EVIDENCE_QUESTION)
    assert len(fake_model.requests) == requests
    assert (run.status, run.warnings, run.model_called, run.answer_basis) == (status, warnings, requests == 1, basis)
    if answer == "model":
        expected = MODEL_REPLIES[behaviour]
        if not evidence and behaviour == "cites":
            expected = "Run RSPO1041 to delete them."  # the unissued [1] is removed
        assert run.answer == expected and run.model == "fake-gpt"
        assert run.cited == ([1] if evidence and behaviour == "cites" else [])
    elif answer == "extractive":
        assert run.model == "extractive" and "RSPO1041" in run.answer and run.cited == [1]
    else:
        assert run.answer == answer and run.cited == []
    assert run.references().count() == (len(search_packs([corpus], EVIDENCE_QUESTION).hits) if evidence else 0)
    assert run.searched_packs == [{"slug": "ops", "title": "Operations"}]


def test_the_model_gets_labelled_untrusted_evidence_and_the_question(corpus, fake_model):
    fake_model.reply("Use RSPO1041 [1].")
    run = ask(make_agent("required"), None, EVIDENCE_QUESTION)
    (request,) = fake_model.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["Authorization"] == f"Bearer {API_KEY}"
    assert request.body["model"] == "fake-gpt" and "tools" not in request.body
    system = request.system_prompt
    assert "You help the operations team." in system
    assert "UNTRUSTED EVIDENCE" in system
    assert "[1] Operations — Spool overflow runbook (section Fix)" in system  # the title is not repeated
    assert "> Run the report RSPO1041 to delete old spool requests." in system
    assert request.body["messages"][-1] == {"role": "user", "content": EVIDENCE_QUESTION}
    assert run.timings["model_ms"] > 0


def test_references_are_numbered_as_the_answer_first_cites_them(corpus, fake_model):
    """An answer citing the first, third and fourth passage read [1], [3], [4] beside "3 cited": the reader looked
    for a [2] (browser walkthrough). The references are numbered in the order the answer first cites them."""
    issued = search_packs([corpus], EVIDENCE_QUESTION, limit=8).hits
    assert len(issued) >= 3
    fake_model.reply("Use RSPO1041 [3]. Check the spool first [1][3]. Both [1-3].")
    run = ask(make_agent("preferred"), None, EVIDENCE_QUESTION)
    assert run.answer == "Use RSPO1041 [1]. Check the spool first [2][1]. Both [1-3]."  # a marker's in order
    assert run.cited == [1, 2, 3]
    references = list(run.references())
    assert [r.n for r in references] == list(range(1, len(issued) + 1))
    assert [r.passage_id for r in references[:3]] == [issued[2].passage_id, issued[0].passage_id, issued[1].passage_id]


def test_timeout_and_malformed_output_fall_back_to_the_extractive_answer(app, corpus, fake_model):
    app.config["CAIRN_MODEL_TIMEOUT"] = 0.3
    fake_model.reply_after(5, "too late [1]")
    slow = ask(make_agent("preferred"), None, EVIDENCE_QUESTION)
    assert slow.warnings == ["model call failed (timeout after 0.3 s); answered from the evidence instead"]
    assert slow.model == "extractive" and slow.cited == [1] and slow.status == "completed_with_warning"
    fake_model.reset()
    fake_model.reply_malformed_json()
    broken = ask(Run.get_by_id(slow.id).agent, None, EVIDENCE_QUESTION)
    assert broken.warnings == ["model call failed (malformed response: not JSON); answered from the evidence instead"]
    assert "RSPO1041" in broken.answer


def test_a_model_answer_is_stored_without_a_nul_or_the_controls_that_reorder_it(corpus, fake_model, client_as):
    """The model answers from passages and a question other people wrote, and may repeat what they hold: a NUL
    in its answer made PostgreSQL refuse the run (a 500 for the member), and a U+202E made the answer read in
    another order than it was stored. Found by scripting the fake model's answer with both."""
    fake_model.reply("Run \u202eRSPO1041\u202c\x00 to delete \u2066old\u2069 spool requests [1].")
    run = ask(make_agent("required"), None, EVIDENCE_QUESTION)
    assert run.model == "fake-gpt" and run.cited == [1]
    assert Run.get_by_id(run.id).answer == "Run RSPO1041 to delete old spool requests [1]."
    page = client_as("PlatformAdmin").get(f"/runs/{run.id}").get_data(as_text=True)
    assert not set(page) & set("\x00\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def test_a_model_answer_holding_a_lone_surrogate_is_stored_and_shown(corpus, fake_model, client_as):
    """JSON may escape half of a surrogate pair alone ("\\ud83d"), which Python's JSON reader reads as a lone
    surrogate: no UTF-8 holds one, so storing the run failed (a 500 for the member who asked). Found by
    scripting the fake model's answer with one; the describing of figures reads its model through the same
    client."""
    fake_model.reply("Run RSPO1041 \ud83d to delete \udc00old spool requests [1].")
    run = ask(make_agent("required"), None, EVIDENCE_QUESTION)
    assert run.model == "fake-gpt" and run.cited == [1]
    stored = Run.get_by_id(run.id).answer
    assert stored == "Run RSPO1041 \ufffd to delete \ufffdold spool requests [1]."
    response = client_as("PlatformAdmin").get(f"/runs/{run.id}")
    assert response.status_code == 200 and "\ufffdold spool" in response.get_data(as_text=True)


def test_without_a_base_url_no_request_is_made(corpus, fake_model, app):
    app.config["CAIRN_MODEL_BASE_URL"] = None
    run = ask(make_agent("open"), None, EVIDENCE_QUESTION)
    assert run.model == "extractive" and fake_model.requests == []


# --- receipts ----------------------------------------------------------------------


def test_receipt_survives_edits_and_grant_changes(corpus, users, client_as):
    agent = make_agent("preferred")
    run = ask(agent, users["AgentBuilder"], EVIDENCE_QUESTION)
    issued = [(r.n, r.passage_id, r.text, r.version) for r in run.references()]
    spool = Document.get(Document.doc_id == "spool-overflow")
    editing.edit_text(spool, SPOOL.decode().replace("RSPO1041", "RSPO1043"), 1, users["PlatformAdmin"])
    update_agent(
        None, agent, name=agent.name, mode=agent.mode, company_name=None, instructions="", pack_slugs=["other"]
    )
    assert [(r.n, r.passage_id, r.text, r.version) for r in Run.get_by_id(run.id).references()] == issued
    page = _soup(client_as("Auditor").get(f"/runs/{run.id}"))
    source = page.select_one("#source-1")
    assert "RSPO1041" in source.select_one(".passage-text").text
    assert "now at version 2" in source.text
    again = ask(agent, None, EVIDENCE_QUESTION)
    assert {r.pack_slug for r in again.references()} == {"other"}


def test_receipt_after_deletion_keeps_its_place_but_not_the_text(corpus, users, client_as):
    run = ask(make_agent("preferred"), users["AgentBuilder"], EVIDENCE_QUESTION)
    spool = Document.get(Document.doc_id == "spool-overflow")
    editing.delete_document(spool, 1)
    reference = RunReference.get((RunReference.run == run.id) & (RunReference.n == 1))
    assert (reference.document_id, reference.version, reference.text) == ("spool-overflow", 1, None)
    assert "RSPO1041" in Run.get_by_id(run.id).answer  # the answer itself is the run's own record
    page = _soup(client_as("PlatformAdmin").get(f"/runs/{run.id}"))
    source = page.select_one("#source-1")
    assert source.select_one(".passage-unavailable").text == "Passage unavailable for this source."
    assert "deleted after this run" in source.text
    assert source.select_one("a.open-document") is None
    assert "RSPO1041" not in source.text


def _figure_corpus(pack):
    outcome = documents.upload_file(pack, "mixed-images.docx", mixed_images_docx(), None)
    assert outcome.accepted
    return outcome.document


def test_figures_show_as_labels_with_thumbnails_until_the_document_is_deleted(app, pack, users, client_as):
    document = _figure_corpus(pack)
    run = ask(make_agent("open"), users["AgentBuilder"], "Which raster formats like PNG are kept?")
    reference = run.references().first()
    assert [f["number"] for f in reference.figures] == [1, 2, 3, 4]
    assert reference.figures[0]["label"] == "Alt: red PNG rectangle" and reference.figures[0]["figure_id"]
    client = client_as("AgentBuilder")
    source = _soup(client.get(f"/runs/{run.id}")).select_one("#source-1")
    figure = source.select(".source-figure")[0]
    assert figure.select_one(".figure-label").text == "Figure 1: Alt: red PNG rectangle"
    thumbnail = client.get(figure.select_one("img.thumbnail")["src"])
    assert thumbnail.status_code == 200 and thumbnail.mimetype == "image/webp" and thumbnail.data[:4] == b"RIFF"
    assert "[Figure 1: Alt: red PNG rectangle]" in source.select_one(".passage-full .passage-text").text

    editing.delete_document(document, 1)
    source = _soup(client.get(f"/runs/{run.id}")).select_one("#source-1")
    assert [f.select_one(".image-gone").text for f in source.select(".source-figure")] == [
        "image no longer available"
    ] * 4
    assert source.select_one("img") is None
    assert client.get(f"/runs/{run.id}/sources/1/figures/1.webp").status_code == 404


def _new_word_revision(pack, n: int):
    """Another revision of mixed-images.docx: other text, other pictures (the figure rows are new)."""

    def build(document):
        document.add_heading("Mixed image formats", level=1)
        document.add_paragraph(f"Revision {n} of the picture notes.")
        add_picture(document, image_bytes(40 + n, 30, "PNG", color=(n, 100, 100)), alt=f"Alt: picture {n}")

    outcome = documents.upload_file(pack, "mixed-images.docx", docx_bytes(build), None)
    assert outcome.accepted, outcome.refused


def test_receipt_keeps_its_figures_after_ten_newer_revisions_purge_its_own(app, pack, users, client_as):
    """SPEC 7: the receipt outlives later edits; only deleting the document takes its images."""
    document = _figure_corpus(pack)
    run = ask(make_agent("open"), users["AgentBuilder"], "Which raster formats like PNG are kept?")
    client = client_as("AgentBuilder")
    before = [client.get(f"/runs/{run.id}/sources/1/figures/{n}.webp").data for n in (1, 2, 3, 4)]
    assert all(image[:4] == b"RIFF" for image in before)
    for n in range(2, 13):  # versions 2..12: version 1, the one the run was given, is purged
        _new_word_revision(pack, n)
    assert not Revision.select().where((Revision.document == document) & (Revision.version == 1)).exists()

    source = _soup(client.get(f"/runs/{run.id}")).select_one("#source-1")
    assert source.select(".image-gone") == []
    thumbnails = [img["src"] for img in source.select("img.thumbnail")]
    assert thumbnails == [f"/runs/{run.id}/sources/1/figures/{n}.webp" for n in (1, 2, 3, 4)]
    after = [client.get(src) for src in thumbnails]
    assert [(r.status_code, r.mimetype) for r in after] == [(200, "image/webp")] * 4
    assert [r.data for r in after] == before
    assert source.select_one(".figure-label").text == "Figure 1: Alt: red PNG rectangle"

    editing.delete_document(Document.get_by_id(document.id), 12)  # deleting takes them after all
    source = _soup(client.get(f"/runs/{run.id}")).select_one("#source-1")
    assert [f.select_one(".image-gone").text for f in source.select(".source-figure")] == [
        "image no longer available"
    ] * 4
    assert client.get(f"/runs/{run.id}/sources/1/figures/1.webp").status_code == 404
    files = Path(app.config["CAIRN_DATA_DIR"]) / "files"
    assert not [p for p in files.rglob("*") if p.is_file()]


# --- the run record ----------------------------------------------------------------


@pytest.fixture
def member_run(corpus, users):
    """A run owned by the Member (as the support chat will make them)."""
    return ask(make_agent("preferred"), users["Member"], EVIDENCE_QUESTION)


@pytest.fixture
def other_member(app):
    return create_user("another.member@example.test", "correct horse battery", {"Member"}, "Acme Test Co")


@pytest.fixture
def member_figure_run(member_run, pack, users):
    """A run of the Member's whose first source shows a figure."""
    _figure_corpus(pack)
    return ask(Run.get_by_id(member_run.id).agent, users["Member"], "Which raster formats like PNG are kept?")


@pytest.mark.parametrize(
    "who, status",
    [
        ("PlatformAdmin", 200),
        ("AgentBuilder", 200),
        ("Auditor", 200),
        ("Member", 200),
        ("other member", 404),
        (None, 302),
    ],
)
@pytest.mark.parametrize("path", ["/runs/{id}", "/runs/{id}/sources/1/figures/1.webp"])
def test_run_record_access(app, member_figure_run, other_member, client_as, who, status, path):
    if who == "other member":
        client = app.test_client()
        login(client, other_member.email)
    else:
        client = client_as(who)
    response = client.get(path.format(id=member_figure_run.id))
    assert response.status_code == status
    if status == 302:
        assert "/login" in response.headers["Location"]


def test_missing_run_looks_like_a_hidden_one(member_run, other_member, app, client_as):
    client = app.test_client()
    login(client, other_member.email)
    assert client.get(f"/runs/{member_run.id}").get_data(as_text=True) == client.get("/runs/999999").get_data(
        as_text=True
    )


def test_run_list_shows_staff_every_run_and_members_their_own(member_run, other_member, app, client_as):
    staff_run = ask(Run.get_by_id(member_run.id).agent, None, "lock entries")
    staff = _soup(client_as("Auditor").get("/runs/"))
    assert {a["href"] for a in staff.select("table.runs a")} == {f"/runs/{member_run.id}", f"/runs/{staff_run.id}"}
    member = _soup(client_as("Member").get("/runs/"))
    assert {a["href"] for a in member.select("table.runs a")} == {f"/runs/{member_run.id}"}
    client = app.test_client()
    login(client, other_member.email)
    assert _soup(client.get("/runs/")).select("table.runs a") == []


@pytest.mark.parametrize("page, status, shown", [("2", 200, 2), ("99", 200, 2), ("0", 404, None), ("two", 404, None)])
def test_a_run_list_page_past_the_end_is_the_last_and_one_that_is_no_page_a_404(
    member_run, client_as, monkeypatch, page, status, shown
):
    agent = Run.get_by_id(member_run.id).agent
    runs = [member_run] + [ask(agent, None, "lock entries") for _ in range(2)]
    monkeypatch.setattr(run_services, "RUNS_PER_PAGE", 2)
    response = client_as("Auditor").get(f"/runs/?page={page}")
    assert response.status_code == status
    if shown:
        listed = _soup(response)
        assert f"page {shown} of 2" in listed.select_one("nav.pager").text
        assert [a["href"] for a in listed.select("table.runs a")] == [f"/runs/{runs[0].id}"]  # the oldest
        assert listed.select_one("nav.pager a[rel=next]") is None
        assert listed.select_one("nav.pager a[rel=prev]")["href"] == "/runs/?page=1"


def test_run_record_shows_question_answer_markers_warnings_and_sources(corpus, client_as):
    run = ask(make_agent("preferred"), None, "delete spool requests and stale lock entries")
    page = _soup(client_as("Auditor").get(f"/runs/{run.id}"))
    assert page.select_one(".question").text == "delete spool requests and stale lock entries"
    markers = page.select(".answer a.cite")
    assert markers and {m["href"] for m in markers} == {f"#source-{n}" for n in run.cited}
    for n in run.cited:
        assert page.select_one(f"#source-{n}") is not None
    label = page.select_one("#source-1 .source-label").text
    assert label.startswith("[1] Operations — ")
    assert page.select_one(".status").text == "completed"

    warned = ask(make_agent("preferred", slug="warned"), None, NO_EVIDENCE_QUESTION)
    page = _soup(client_as("Auditor").get(f"/runs/{warned.id}"))
    assert [li.text for li in page.select(".warnings li")] == [NO_PASSAGE_WARNING]
    assert page.select_one(".status").text == "completed with warning"
    assert page.select_one(".no-sources") is not None

    stopped = ask(make_agent("required"), None, NO_EVIDENCE_QUESTION)
    text = _soup(client_as("Auditor").get(f"/runs/{stopped.id}")).select_one(".run").text
    assert "stopped" in text and "the model was not called" in text


def test_a_bracketed_number_a_document_writes_is_no_citation_in_the_answer(corpus, pack, client_as):
    """ "The gauge described in [2]" copied into an extractive answer read as a citation of reference 2 (another
    document) and linked to it on the run page; "[7]" was removed as a citation of nothing."""
    documents.upload_file(
        pack, "zorblax.md", b"# Zorblax\n\nCalibrate the zorblax gauge described in [2] and [7], see [1-3].\n", None
    )
    run = ask(make_agent("preferred"), None, "How do I calibrate the zorblax gauge?")
    assert run.answer.startswith("Calibrate the zorblax gauge described in (2) and (7), see (1-3). [")
    assert run.warnings == [] and len(run.cited) == 1
    page = _soup(client_as("Auditor").get(f"/runs/{run.id}"))
    assert [a["href"] for a in page.select(".answer a.cite")] == [f"#source-{run.cited[0]}"]


def test_run_record_shows_a_no_evidence_run_as_a_note_with_the_packs_searched(corpus, fake_model, client_as):
    run = ask(make_agent("preferred", packs=("ops", "other")), None, NO_EVIDENCE_QUESTION)
    assert fake_model.requests == [] and (run.model, run.model_called) == ("fake-gpt", False)
    page = _soup(client_as("Auditor").get(f"/runs/{run.id}"))
    note = page.select_one(".no-evidence-answer")
    assert note["role"] == "note" and page.select_one(f"#{note['aria-labelledby']}").text.strip() == (
        "No evidence found"
    )
    assert note.select_one(".answer").text == NO_EVIDENCE_ANSWER and note.select("a.cite") == []
    assert [p.text for p in note.select(".searched-pack")] == ["Operations", "Other pack"]
    assert note.select_one(".other-agents") is None  # other agents are offered to members in the chat
    meta = page.select_one(".run-meta").text
    assert "model fake-gpt" in meta and "the model was not called" in meta
    assert [li.text for li in page.select(".warnings li")] == [NO_PASSAGE_WARNING]
    listed = _soup(client_as("Auditor").get("/runs/")).select_one("table.runs .basis-no_evidence")
    assert listed.text == "No evidence found"

    nothing_granted = ask(make_agent("required", packs=()), None, EVIDENCE_QUESTION)
    note = _soup(client_as("Auditor").get(f"/runs/{nothing_granted.id}")).select_one(".no-evidence-answer")
    assert note.select_one(".answer").text == STOPPED_NO_PASSAGE_ANSWER
    assert note.select_one(".searched").text == "Nothing was searched: no pack is granted to Required agent."


def test_run_record_marks_a_model_only_answer(corpus, fake_model, client_as):
    fake_model.reply("Payroll is paid monthly.")
    run = ask(make_agent("open"), None, NO_EVIDENCE_QUESTION)
    assert (run.answer_basis, run.warnings) == ("model_only", [MODEL_ONLY_WARNING])
    page = _soup(client_as("Auditor").get(f"/runs/{run.id}"))
    mark = page.select_one(".model-only-note")
    assert mark["role"] == "note" and "Not based on the documents." in mark.text and "Operations" in mark.text
    assert page.select_one(".answer.is-model-only").text == "Payroll is paid monthly."
    assert page.select_one(".no-evidence-answer") is None
    assert [li.text for li in page.select(".warnings li")] == [MODEL_ONLY_WARNING]
    listed = _soup(client_as("Auditor").get("/runs/")).select_one("table.runs .basis-model_only")
    assert listed.text == "Not based on the documents"


def test_try_page_shows_a_no_evidence_run_as_a_note(corpus, client_as):
    make_agent("preferred", slug="helper")
    response = client_as("AgentBuilder").post(
        "/agents/helper/try", data={"question": NO_EVIDENCE_QUESTION}, headers={"HX-Request": "true"}
    )
    note = BeautifulSoup(response.get_data(as_text=True), "html.parser").select_one(".no-evidence-answer")
    assert note.select_one(".answer").text == NO_EVIDENCE_ANSWER
    assert [p.text for p in note.select(".searched-pack")] == ["Operations"]


def test_migration_0005_reads_what_existing_runs_rest_on_and_gives_them_their_agents_packs(tmp_path):
    """Runs and cases stored before 0005 are read forward; works on SQLite and PostgreSQL."""
    import datetime as dt

    from playhouse.db_url import connect

    from helpers import POSTGRES_URL, empty_postgres
    from portal import migrate as migrations

    if POSTGRES_URL:
        empty_postgres(POSTGRES_URL)
    db = connect(POSTGRES_URL or f"sqlite:///{tmp_path / 'old.db'}")
    migrations.migrate(db, target="0004_user_session_token")
    now, q = dt.datetime(2026, 11, 1, 9), db.param

    def insert(table: str, **values) -> int:
        columns = ", ".join(values)
        sql = f"INSERT INTO {table} ({columns}) VALUES ({', '.join([q] * len(values))})"
        if POSTGRES_URL:
            return db.execute_sql(sql + " RETURNING id", tuple(values.values())).fetchone()[0]
        return db.execute_sql(sql, tuple(values.values())).lastrowid

    ops = insert("pack", slug="ops", title="Operations", created_at=now)
    other = insert("pack", slug="other", title="Other pack", created_at=now)
    agent = insert("agent", slug="desk", name="Desk", created_at=now, updated_at=now)
    for pack_id in (other, ops):
        insert("agent_grant", agent_id=agent, pack_id=pack_id, created_at=now)

    def old_run(answer, status="completed", model="extractive", model_called=False, agent_id=agent):
        return insert(
            "run",
            agent_id=agent_id,
            agent_slug="desk",
            agent_name="Desk",
            question="q",
            answer=answer,
            status=status,
            mode="preferred",
            model=model,
            model_called=model_called,
            created_at=now,
        )

    cited = old_run("Run RSPO1041 [1].")
    insert(
        "run_reference",
        run_id=cited,
        n=1,
        passage_id=1,
        pack_slug="ops",
        pack_title="Operations",
        document_pk=1,
        document_id="spool",
        document_title="Spool",
        version=1,
        line_start=1,
        line_end=2,
    )
    no_evidence = old_run(NO_EVIDENCE_ANSWER, "completed_with_warning")
    stopped = old_run(STOPPED_NO_PASSAGE_ANSWER, "stopped")
    rejected = old_run(NOT_ACCEPTED_ANSWER, "stopped", "fake-gpt", True)
    model_only = old_run("The model's own words.", "completed_with_warning", "fake-gpt", True)
    fell_back = old_run(NO_EVIDENCE_ANSWER, "completed_with_warning", "extractive", True)
    orphan = old_run("Run RSPO1041.", agent_id=None)
    insert(
        "regression_case",
        agent_slug="desk",
        question="q",
        pack_slug="ops",
        document_pk=1,
        document_id="spool",
        document_title="Spool",
        created_at=now,
    )

    assert "0005_answer_basis" in migrations.migrate(db)
    rows = {row[0]: row[1:] for row in db.execute_sql("SELECT id, answer_basis, searched_packs FROM run")}
    both = [{"slug": "ops", "title": "Operations"}, {"slug": "other", "title": "Other pack"}]
    expected = {
        cited: "documents",
        no_evidence: "no_evidence",
        stopped: "no_evidence",
        rejected: "not_accepted",
        model_only: "model_only",
        fell_back: "no_evidence",
        orphan: "documents",
    }
    assert {run: basis for run, (basis, _) in rows.items()} == expected
    assert {run: json.loads(packs) for run, (_, packs) in rows.items()} == {
        run: ([] if run == orphan else both) for run in expected
    }
    assert db.execute_sql("SELECT kind FROM regression_case").fetchall() == [("expected_source",)]
    insert("regression_case", agent_slug="desk", question="karaoke?", kind="no_evidence", created_at=now)
    db.close()


def test_long_passage_shows_its_first_six_lines_until_opened(app, pack, client_as):
    lines = [f"Step {n}: restart the spool server number {n} and check it." for n in range(1, 13)]
    documents.upload_file(pack, "long-steps.md", ("# Long steps\n\n" + "\n".join(lines) + "\n").encode(), None)
    run = ask(make_agent("open"), None, "restart the spool server")
    page = _soup(client_as("PlatformAdmin").get(f"/runs/{run.id}"))
    source = page.select_one("#source-1")
    preview = [line.text for line in source.select(".passage-preview .line")]
    assert len(preview) == 6 and preview[-1].endswith(" …")  # the heading and steps 1 to 5
    assert "Step 5:" in preview[-1] and "Step 6:" not in str(preview)
    details = source.select_one("details.passage-full")
    assert details.select_one("summary").text == "Show full passage" and not details.has_attr("open")
    assert "Step 12:" in details.select_one(".passage-text").text

    documents.upload_file(pack, "short.md", b"# Short\n\nThe quartz gauge reads fine.\n", None)
    short = _soup(client_as("PlatformAdmin").get(f"/runs/{ask(make_agent('open', 'o2'), None, 'quartz').id}"))
    assert short.select_one("#source-1 details") is None


@pytest.mark.parametrize("role", ["PlatformAdmin", "AgentBuilder", "Auditor"])
def test_staff_open_the_document_at_the_cited_passage(member_run, client_as, role):
    client = client_as(role)
    link = _soup(client.get(f"/runs/{member_run.id}")).select_one("#source-1 a.open-document")
    assert link["href"] == f"/packs/ops/documents/spool-overflow?run={member_run.id}&ref=1"
    viewer = _soup(client.get(link["href"]))
    assert viewer.select_one(".cited-passage h2").text == "Cited passage"
    assert any("RSPO1041" in c.text for c in viewer.select(".doc-body .cited"))


@pytest.mark.parametrize(
    "change, opens",
    [
        ("nothing", {"PlatformAdmin": True, "Auditor": True}),
        # Exact reader roles: the Auditor is left out, the administrator bypasses the list.
        ("reader roles AgentBuilder", {"PlatformAdmin": True, "Auditor": False}),
        ("pack deleted", {"PlatformAdmin": False, "Auditor": False}),
    ],
)
def test_the_run_record_links_a_source_only_through_the_viewers_door(member_run, client_as, change, opens):
    """The receipt's documents are read in one query with their packs; each link still follows
    ``pack_for`` then ``document_for``: a live pack, a live document, reader roles admitting the reader."""
    if change == "reader roles AgentBuilder":
        Document.update(reader_role_names=["AgentBuilder"]).where(Document.doc_id == "spool-overflow").execute()
    elif change == "pack deleted":
        Pack.update(deleted_at=utcnow()).where(Pack.slug == "ops").execute()
    for role, expected in opens.items():
        page = _soup(client_as(role).get(f"/runs/{member_run.id}"))
        assert (page.select_one("#source-1 a.open-document") is not None) is expected, role


def test_a_run_record_opened_before_an_edit_still_opens_the_passage_and_says_it_changed(member_run, users, client_as):
    """Issue 16, item 7: the link of a page rendered before the edit names the run, not a passage id."""
    client = client_as("PlatformAdmin")
    link = _soup(client.get(f"/runs/{member_run.id}")).select_one("#source-1 a.open-document")["href"]
    spool = Document.get(Document.doc_id == "spool-overflow")
    editing.edit_text(
        spool,
        SPOOL.decode().replace("Output requests pile up", "Output requests keep piling up"),
        1,
        users["PlatformAdmin"],
    )
    viewer = _soup(client.get(link))
    assert "changed since the run" in viewer.select_one(".cited-passage .changed-since-run").text
    assert any("RSPO1041" in c.text for c in viewer.select(".doc-body .cited"))


def test_member_owner_sees_sources_without_open_document(member_run, client_as):
    page = _soup(client_as("Member").get(f"/runs/{member_run.id}"))
    assert page.select_one("#source-1 .passage-text") is not None
    assert page.select("a.open-document") == []


def test_admin_opens_a_changed_document_with_the_passage_as_the_run_had_it(corpus, users, client_as):
    run = ask(make_agent("preferred"), None, EVIDENCE_QUESTION)
    spool = Document.get(Document.doc_id == "spool-overflow")
    changed = SPOOL.decode().replace("Output requests pile up", "Output requests keep piling up")
    editing.edit_text(spool, changed, 1, users["PlatformAdmin"])
    client = client_as("PlatformAdmin")
    link = _soup(client.get(f"/runs/{run.id}")).select_one("#source-1 a.open-document")
    assert link["href"] == f"/packs/ops/documents/spool-overflow?run={run.id}&ref=1"
    viewer = _soup(client.get(link["href"]))
    aside = viewer.select_one(".cited-passage")
    assert aside.select_one("h2").text == "Cited passage"
    assert "RSPO1041" in aside.select_one(".passage-text").text
    notice = aside.select_one(".changed-since-run").text
    assert "changed since the run" in notice and "version 1" in notice and "version 2" in notice
    # The Fix section did not change: the same passage is highlighted in the current text.
    assert "highlighted" in notice and any("RSPO1041" in c.text for c in viewer.select(".doc-body .cited"))

    editing.edit_text(Document.get_by_id(spool.id), changed.replace("RSPO1041", "RSPO1099"), 2, None)
    viewer = _soup(client.get(link["href"]))
    notice = viewer.select_one(".changed-since-run").text
    assert "no longer in the current text" in notice and viewer.select(".doc-body .cited") == []
    assert "RSPO1041" in viewer.select_one(".cited-passage .passage-text").text


def test_viewer_ignores_a_run_that_does_not_cite_the_document(corpus, client_as):
    run = ask(make_agent("preferred"), None, EVIDENCE_QUESTION)
    viewer = _soup(client_as("PlatformAdmin").get(f"/packs/ops/documents/lock-entries?run={run.id}&ref=1"))
    assert viewer.select_one(".cited-passage") is None
    viewer = _soup(client_as("PlatformAdmin").get("/packs/ops/documents/lock-entries?run=999&ref=1"))
    assert viewer.select_one(".cited-passage") is None


# --- the try page ------------------------------------------------------------------


def test_try_page_asks_with_htmx_and_swaps_the_run_in(corpus, client_as):
    make_agent("preferred", slug="helper")
    client = client_as("AgentBuilder")
    page = _soup(client.get("/agents/helper/try"))
    form = page.select_one("form#ask-form")
    assert form["method"] == "post" and form["action"] == "/agents/helper/try"
    assert form["hx-post"] == "/agents/helper/try" and form["hx-target"] == "#run-result"
    response = client.post("/agents/helper/try", data={"question": EVIDENCE_QUESTION}, headers={"HX-Request": "true"})
    assert response.status_code == 200 and "HX-Request" in response.headers["Vary"]
    fragment = response.get_data(as_text=True)
    assert "<html" not in fragment
    run = Run.select().order_by(Run.id.desc()).get()
    assert response.headers["HX-Push-Url"] == f"/agents/helper/try?run={run.id}"
    soup = BeautifulSoup(fragment, "html.parser")
    assert soup.select_one(".answer a.cite")["href"] == "#source-1"
    assert soup.select_one(f"a[href='/runs/{run.id}']") is not None


def test_try_page_works_without_javascript(corpus, client_as):
    make_agent("preferred", slug="helper")
    client = client_as("Auditor")
    response = client.post("/agents/helper/try", data={"question": EVIDENCE_QUESTION})
    run = Run.select().order_by(Run.id.desc()).get()
    assert response.status_code == 303 and response.headers["Location"].endswith(f"/agents/helper/try?run={run.id}")
    page = _soup(client.get(response.headers["Location"]))
    assert page.select_one("#question").text == EVIDENCE_QUESTION
    assert "RSPO1041" in page.select_one("#run-result .answer").text


@pytest.mark.parametrize("htmx", [True, False])
def test_try_page_refuses_an_empty_question(corpus, client_as, htmx):
    make_agent("preferred", slug="helper")
    headers = {"HX-Request": "true"} if htmx else {}
    response = client_as("PlatformAdmin").post("/agents/helper/try", data={"question": " "}, headers=headers)
    assert response.status_code == 422
    body = response.get_data(as_text=True)
    assert ("<html" in body) is not htmx
    assert "the text was empty" in _soup(response).select_one(".error").text
    assert Run.select().count() == 0


def test_try_page_shows_only_runs_of_this_agent(corpus, client_as):
    make_agent("preferred", slug="helper")
    other = ask(make_agent("open", slug="other-agent"), None, EVIDENCE_QUESTION)
    page = _soup(client_as("PlatformAdmin").get(f"/agents/helper/try?run={other.id}"))
    assert page.select_one("#run-result .run") is None


# --- command line ------------------------------------------------------------------


def test_cli_ask_prints_the_run_as_json(app, tmp_path):
    run = cli_runner(app)

    def cli(*args, ok=True):
        result = run(*args, ok=False)
        assert (result.exit_code == 0) is ok, result.stderr + result.stdout
        return result

    runbook = Path(tmp_path, "spool-overflow.md")
    runbook.write_bytes(SPOOL)
    cli("init")
    cli("packs", "create", "runbooks", "--title", "Runbooks")
    cli("ingest", "runbooks", str(runbook))
    cli("agents", "create", "helper", "--name", "Helper", "--mode", "required", "--grant", "runbooks")
    record = json.loads(cli("ask", "helper", EVIDENCE_QUESTION, "--json").stdout)
    assert set(record) == {
        "run_id",
        "agent",
        "mode",
        "status",
        "warnings",
        "answer",
        "answer_format",
        "answer_basis",
        "searched_packs",
        "absent_words",
        "evidence_gap",
        "references",
        "cited",
        "document_citations",
    }
    assert record["answer_format"] == "text"  # the extractive answer: the documents' text, not Markdown
    assert (record["agent"], record["mode"], record["status"], record["warnings"]) == (
        "helper",
        "required",
        "completed",
        [],
    )
    assert (record["answer_basis"], record["searched_packs"]) == (
        "documents",
        [{"slug": "runbooks", "title": "Runbooks"}],
    )
    assert record["cited"] == [1] and "RSPO1041" in record["answer"]
    first = record["references"][0]
    assert set(first) == {
        "n",
        "passage_id",
        "pack",
        "document_id",
        "document_title",
        "version",
        "sha256",
        "page",
        "heading_path",
        "line_start",
        "line_end",
        "text",
        "grounding",
    }
    assert (first["n"], first["document_id"], first["version"], first["page"]) == (1, "spool-overflow", 1, None)
    text_sha = hashlib.sha256(SPOOL).hexdigest()  # stored as written: the revision text is the file
    assert first["sha256"] == text_sha
    assert first["grounding"] == f"document:spool-overflow@1#{text_sha}:L{first['line_start']}-L{first['line_end']}"
    assert record["document_citations"] == [
        {k: first[k] for k in ("n", "pack", "document_id", "version", "sha256", "line_start", "line_end", "grounding")}
    ]
    stopped = json.loads(cli("ask", "helper", NO_EVIDENCE_QUESTION, "--json").stdout)
    assert (stopped["status"], stopped["references"], stopped["cited"]) == ("stopped", [], [])
    assert stopped["answer"] == STOPPED_NO_PASSAGE_ANSWER and stopped["answer_basis"] == "no_evidence"
    assert "completed (required mode)" in cli("ask", "helper", EVIDENCE_QUESTION).stdout
    assert "searched: Runbooks\n" in cli("ask", "helper", NO_EVIDENCE_QUESTION).stdout
    assert cli("ask", "nobody", "question", ok=False).returncode == 2


REVIEW = b"""# Monthly review: March 2026

## Tickets

March had 191 tickets, eleven of them incidents.

## Service levels

Resolution targets: P1 4 hours, P2 8 hours, P3 72 hours.

| Priority | MTTR |
|---|---|
| P1 | 2 h 20 min |
| P2 | 6 h 14 min |

| Measure | Result |
|---|---|
| P4 incidents resolved within target | 62 of 64 |

## Landscape

The kernel of K4P was updated in the downtime of 2026-03-14; the MES partner number is TWMES01.
KBP got a HANA revision update; host tfs-kbp-app02 was added. The restart checklist is at version 1.5.

## Rehearsals

The KBP rehearsal on 25 April must finish with return code 0 or 4.
The K4P rehearsal on 11 April finished with return code 4.
Close problem PRB-7 if the KXQ rehearsal on 2 May finishes with return code 0.

## Monitoring thresholds

| Queue | Warning | Critical |
|---|---|---|
| LBWQ | 500 entries | 2,000 entries |

SMQ2 is watched by the same job as LBWQ.

## Cleanup

The spool cleanup keeps requests for 14 days by default.

## Earlier months

The tickets of February are reviewed in a document of their own.
"""


@pytest.mark.parametrize(
    "question, evidence",
    [
        ("How many tickets were there in March 2026?", True),
        ("How many incidents were there in March?", True),  # a number written as a word
        ("How many tickets were there in April 2026?", False),  # every word covered, but not the month asked about
        ("How many hours does the team have to resolve a P2 incident?", True),
        # tickets and February both occur, but no passage about February gives a number
        ("How many tickets were there in February?", False),
        ("Which partner number does the MES use?", True),
        ("Which kernel patch level did K4P get in the March downtime?", False),  # the noun, but no level given
        ("What was updated on K4P in the downtime of 14 March?", True),  # a month also names its ISO dates
        ("What is the warning threshold for LBWQ?", True),  # the noun is the heading of the table
        # P4 is named (its row counts incidents), but the hours are given for P1 to P3 only
        ("How many hours does the team have to resolve a P4 incident?", False),
        ("Which HANA revision did KBP get?", False),  # after the noun, its clause names a host, not a revision
        ("Which version is the restart checklist at?", True),
        ("Did the KBP rehearsal on 25 April finish with return code 0?", False),  # only what it must do
        ("Did the K4P rehearsal on 11 April finish with return code 4?", True),
        ("What came out of the KBP rehearsal on 25 April?", False),  # the same, asked in other words
        ("How did the K4P rehearsal on 11 April go?", True),
        ("Was PRB-7 closed after the KXQ rehearsal finished with return code 0?", False),  # if: only a condition
        ("How many hours may a P2 incident take to resolve?", True),  # "may" asks no month of May
        ("What's the critical threshold for LBWQ?", True),  # the noun is in the heading, with its modifier
        ("What's the resolution target for P3 incidents?", True),
        ("What is the failover threshold for LBWQ?", True),  # a noun the packs use, named with the value's row
        # a target is a word of the packs, but the only unit naming LBWQ gives thresholds, not a target
        ("What is the resolution target for the LBWQ queue?", False),
        # the noun asked for is named by the rows of P1 to P3, but no row gives the MTTR of P4
        ("What was the MTTR of P2 incidents in March?", True),
        ("What was the MTTR of P4 incidents in March?", False),
        ("How big is the LBWQ queue at its warning?", True),
        ("How big is the SMQ2 queue at its warning?", False),  # LBWQ's size is no answer for SMQ2
        # asked in a measure: a value in it, or in one that converts to it, answers; a count of entries does not
        ("What is the resolution target in hours for P2 incidents?", True),
        ("What was the MTTR of P2 incidents in minutes?", True),
        ("What is the warning threshold for LBWQ in minutes?", False),
        ("How did the K4P rehearsal on 11 April perform?", True),
        ("How did the KBP rehearsal on 25 April perform?", False),
        ("What is the default retention of the spool cleanup?", True),  # "14 days by default"
    ],
)
def test_a_question_asking_for_a_value_needs_a_unit_that_gives_one(corpus, question, evidence):
    documents.upload_file(corpus, "monthly-review.md", REVIEW, None)
    retrieval = retrieve(make_agent("preferred"), question)
    assert retrieval.choice.evidence is evidence, retrieval.choice


INCIDENT = b"""# INC-9

## Summary

Goods issue failed at TW30 for three hours: the delivery mass update held every lock.

## Record

| Opened | Priority |
|---|---|
| 2026-03-03 07:40 | P1 |
"""


@pytest.mark.parametrize(
    "question, evidence",
    [
        ("Why did goods issue fail at TW30 on 3 March?", True),  # the date stands in the record, not the summary
        ("why did goods issue fail at TW30 on march 3rd", True),
        ("Why did goods issue fail at TW30 on 4 March?", False),  # no document of the packs names that day
    ],
)
def test_a_day_the_question_names_must_be_named_by_the_documents_of_the_evidence(corpus, question, evidence):
    documents.upload_file(corpus, "inc-9.md", INCIDENT, None)
    retrieval = retrieve(make_agent("preferred"), question)
    assert "2026-03-03" not in " ".join(hit.text for hit in retrieval.hits)  # the record matched no term
    assert retrieval.choice.evidence is evidence, retrieval.choice
    assert retrieval.choice.missing_identifiers == ([] if evidence else ["4 March"])


def test_the_references_on_the_day_asked_about_are_those_whose_documents_name_it(corpus):
    """The day of an incident stands in its record, not in the summary that answers: the summary's document
    names it, so the answer tells of that incident rather than of another one like it."""
    documents.upload_file(corpus, "inc-9.md", INCIDENT, None)
    documents.upload_file(
        corpus, "inc-8.md", INCIDENT.replace(b"INC-9", b"INC-8").replace(b"2026-03-03", b"2026-04-09"), None
    )
    question = "Why did goods issue fail at TW30 on 3 March?"
    retrieval = retrieve(make_agent("preferred"), question)
    issued = retrieval.issued
    on_the_day = retrieval.on_the_day(question)
    assert {hit.document_title for hit in issued} == {"INC-9", "INC-8"}
    assert {issued[n - 1].document_title for n in on_the_day} == {"INC-9"}
    assert any("2026-03-03" not in issued[n - 1].text for n in on_the_day)  # its summary, named by its record
    assert retrieval.on_the_day("Why did goods issue fail at TW30?") == set()


# --- The answer as people read it (issue 16, item 1) -------------------------------------------


def test_an_answer_is_rendered_markdown_with_linked_citations_and_nothing_active():
    html = str(
        linked_answer(
            "**Close freeze** [1, 2]\nnext line `items[1]` [3]\n\n# Plan\n\n| A | B |\n|---|---|\n| x [2] | y |\n\n"
            '<script>alert(1)</script> [Figure 1: a] ![p](https://t.test/p.png) [go](javascript:alert(1)) "*" and "*"',
            [1, 2],
            "/s",
        )
    )
    soup = BeautifulSoup(html, "html.parser")
    assert soup.select_one("p > strong").text == "Close freeze"
    assert [(a.text, a["href"]) for a in soup.select("a.cite")] == [
        ("1", "/s#source-1"),
        ("2", "/s#source-2"),
        ("2", "/s#source-2"),
    ]
    assert soup.select_one("br") is not None and soup.select_one("code").text == "items[1]"
    assert soup.select_one(".answer-heading").text == "Plan" and soup.select("h1") == []
    assert soup.select_one("td").text == "x [2]"
    assert soup.select("script, img") == [] and not any(
        a.get("href", "").startswith("javascript") for a in soup.select("a")
    )
    assert "<script>alert(1)</script>" in soup.text and '"*" and "*"' in soup.text and "[3]" in soup.text


def test_the_extractive_answer_is_rendered_as_its_text_with_only_the_citations_linked():
    answer = "> 1. Set *all* to __x__ in C:\\out\\* & <i>now</i> [1] ![a](https://t.test/a.png) [2]"
    soup = BeautifulSoup(str(linked_answer(answer, [1], "/s", markdown=False)), "html.parser")
    assert [p.text for p in soup.find_all(recursive=False)] == [answer]  # one paragraph, every character kept
    assert [(a.text, a["href"]) for a in soup.select("a")] == [("1", "/s#source-1")]
    assert answer_text(answer, markdown=False) == answer


def test_an_image_in_an_answer_is_a_link_labelled_with_its_alt_text_as_in_the_viewer():
    answer = 'See ![the gauge](https://t.test/g.png "Gauge") and ![](https://t.test/x.png) [1]. Done!'
    soup = BeautifulSoup(str(linked_answer(answer, [1], "/s")), "html.parser")
    assert soup.select("img") == [] and soup.text == "See the gauge and https://t.test/x.png [1]. Done!"
    links = [(a.text, a["href"], a.get("title")) for a in soup.select("a:not(.cite)")]
    assert links == [
        ("the gauge", "https://t.test/g.png", "Gauge"),
        ("https://t.test/x.png", "https://t.test/x.png", None),
    ]
    assert answer_text(answer) == "See the gauge and https://t.test/x.png [1]. Done!"  # excerpts and announcements


@pytest.mark.parametrize(
    "answer, links",
    [
        ("[see [1]](https://x.test/) and [2]", [("see [1]", "https://x.test/")]),
        ("[**Runbook [1]**, page 3](https://wiki.test/r) [2]", [("Runbook [1], page 3", "https://wiki.test/r")]),
        ("![chart [1]](https://t.test/c.png) [2]", [("chart [1]", "https://t.test/c.png")]),  # an image's link
        ("<https://x.test/[1]> [2]", [("https://x.test/[1]", "https://x.test/%5B1%5D")]),
    ],
    ids=["inline", "emphasis", "image", "autolink"],
)
def test_a_marker_in_a_links_text_stays_text_and_links_never_nest(answer, links):
    """A cited marker inside a link's text was a link inside the link: the HTML parser then cut the outer
    link short at the marker ("see [" a link, "1" the citation, "]" plain)."""
    soup = BeautifulSoup(str(linked_answer(answer, [1, 2], "/s")), "html.parser")
    assert [a for a in soup.select("a") if a.find_parent("a")] == []
    assert [(a.text, a["href"]) for a in soup.select("a:not(.cite)")] == links
    assert [(a.text, a["href"]) for a in soup.select("a.cite")] == [("2", "/s#source-2")]  # outside a link


def test_a_link_reference_definition_in_an_answer_is_shown_as_written():
    """As in a document, CommonMark would render the definition as nothing: what a model copied from one is text."""
    soup = BeautifulSoup(
        str(linked_answer("[see [1]][ref] [2]\n\n[ref]: https://x.test/", [1, 2], "/s")), "html.parser"
    )
    assert soup.get_text() == "[see [1]][ref] [2]\n[ref]: https://x.test/"
    assert [a["href"] for a in soup.select("a")] == ["/s#source-1", "/s#source-2"]


def test_a_heading_path_does_not_repeat_the_title():
    assert section_path("INC-1: Stuck > Summary", "INC-1: Stuck") == "Summary"
    assert section_path("INC-1: Stuck", "INC-1: Stuck") == ""
    assert section_path("**INC-1:**  Stuck > A > B", "INC-1: Stuck") == "A > B"
    assert section_path("Setup > Network", "Handbook") == "Setup > Network"


@pytest.mark.parametrize(
    "question, absent",
    [
        ("How do I delete old spool requests?", []),
        # a word no passage holds, whatever the rest shares; written as the user wrote it, once
        ("How do I reset my VPN password for the spool? My vpn is locked.", ["reset", "VPN", "password"]),
        # an identifier is absent when a part of it is: INC and 2026 occur, 0427 nowhere
        ("What was the cause of INC-2026-0427?", ["INC-2026-0427"]),
        # the word after "how" is the question's form ("how big", "how far"), not what it is about
        ("How big is the spool of the VPN, and how far?", ["VPN"]),
        # the words of a day are how the day is written ("apr" for April): the day check says whether one is named
        ("Were old spool requests deleted on 25 apr?", []),
        # a word is what the user wrote: "Spool" occurs, "Spool-Aufträge" does not
        ("Wie lösche ich alte Spool-Aufträge?", ["Wie", "lösche", "ich", "alte", "Spool-Aufträge"]),
    ],
)
def test_a_run_records_the_words_of_its_question_no_searched_passage_contains(corpus, question, absent):
    documents.upload_file(corpus, "goods-issue.md", GOODS_ISSUE, None)
    run = ask(make_agent("preferred"), None, question)
    assert run.absent_words == absent
    assert Run.get_by_id(run.id).absent_words == absent
    assert run_services.run_as_json(run)["absent_words"] == absent


MRP_SCHEDULE = b"""# Batch schedule

## Planning

The nightly MRP job of the valve plant, Z_MM_MRP_LIVE_TW10, starts at 22:00 with variant ZTW_TW10.

## Plants

Plants TW10 and TW20 each plan their materials with MRP.
"""


def test_a_no_evidence_note_says_what_else_was_missing(corpus, client_as, pack):
    """Besides the absent words, the note tells why the passages found do not answer: here they are about a
    sibling of the plant asked (TW10, not TW20). The run keeps it, the JSON carries it, the page says it."""
    documents.upload_file(pack, "batch-schedule.md", MRP_SCHEDULE, None)
    refused = ask(make_agent("preferred"), None, "When does the MRP job of plant TW20 start?")
    gap = {"kind": "sibling", "asked": "TW20", "found": "TW10"}
    assert refused.answer_basis == "no_evidence" and refused.evidence_gap == gap
    assert Run.get_by_id(refused.id).evidence_gap == gap
    assert run_services.run_as_json(refused)["evidence_gap"] == gap
    note = _soup(client_as("Auditor").get(f"/runs/{refused.id}")).select_one(".no-evidence-answer .evidence-gap")
    assert note.text == "The closest passages are about TW10, not TW20."
    assert [q.text for q in note.select(".gap-word")] == ["TW10", "TW20"]

    answered = ask(make_agent("preferred", slug="second-agent"), None, "When does the MRP job of plant TW10 start?")
    assert answered.answer_basis == "documents" and answered.evidence_gap == {} and "22:00" in answered.answer
    assert not _soup(client_as("Auditor").get(f"/runs/{answered.id}")).select(".evidence-gap")

    # a name no document holds is said once, among the absent words
    missing = ask(make_agent("preferred", slug="third-agent"), None, "When does job Z_MM_MRP_LIVE_TW30 start?")
    assert missing.answer_basis == "no_evidence"
    assert missing.absent_words == ["Z_MM_MRP_LIVE_TW30"] and missing.evidence_gap == {}

    # asked when of a thing the units name without a time: the note says no passage says when
    untimed = ask(make_agent("preferred", slug="fourth-agent"), None, "When does plant TW20 plan its materials?")
    assert untimed.evidence_gap == {"kind": "no_time", "of": ["TW20"]}
    note = _soup(client_as("Auditor").get(f"/runs/{untimed.id}")).select_one(".no-evidence-answer .evidence-gap")
    assert note.text == "No passage found says when, for TW20."

    # a value asked for by its kind is named so, not as a word of the question
    unnamed = ask(make_agent("preferred", slug="fifth-agent"), None, "Who is our contact person for the TW10 MRP job?")
    assert unnamed.evidence_gap == {"kind": "no_value", "value": "name"}
    note = _soup(client_as("Auditor").get(f"/runs/{unnamed.id}")).select_one(".no-evidence-answer .evidence-gap")
    assert note.text == "No passage found gives a name."
    lasting = ask(make_agent("preferred", slug="sixth-agent"), None, "How long are the MRP plans of plant TW20 kept?")
    assert lasting.evidence_gap == {"kind": "no_value", "value": "duration", "of": ["TW20"]}
    note = _soup(client_as("Auditor").get(f"/runs/{lasting.id}")).select_one(".no-evidence-answer .evidence-gap")
    assert note.text == "No passage found gives a duration for TW20."
    # a number asked in a measure ("in hours") is a number, not a value for "number" (newcomer check)
    measured = ask(make_agent("preferred", slug="seventh-agent"), None, "What is the MRP plan of TW20 in hours?")
    assert measured.evidence_gap == {"kind": "no_value", "value": "number", "of": ["TW20"]}
    note = _soup(client_as("Auditor").get(f"/runs/{measured.id}")).select_one(".no-evidence-answer .evidence-gap")
    assert note.text == "No passage found gives a number for TW20."


PRODUCT_REVIEW = b"""# Monthly review: March 2026

## Tickets

The SAP support team looks after KBP and KXP.

March had 191 tickets.

KXP had 12 tickets in March.
"""


def test_a_value_asked_of_a_three_letter_name_with_no_sibling_is_given_anywhere(corpus, pack):
    """ "The SAP support team" names the product every unit is about: March's 191 tickets answer it. KBP is one
    system of several (KXP, its sibling, has a count of its own): its count must stand beside it."""
    documents.upload_file(pack, "product-review.md", PRODUCT_REVIEW, None)
    agent = make_agent("preferred")
    assert retrieve(agent, "How many tickets did the SAP support team get in March?").choice.evidence
    refused = retrieve(agent, "How many tickets did KBP get in March?").choice
    assert not refused.evidence and refused.unanswered_value == "tickets"


def test_the_gap_names_what_no_passage_found_names_once():
    from portal.answers.evidence import Choice

    assert Choice(False, missing_identifiers=["INC-2026-0427", "12 March"], absent_words=["inc-2026-0427"]).gap() == {
        "kind": "not_named",
        "names": ["12 March"],
    }
    # a name of several parts is said already when a part of it is absent
    assert Choice(False, missing_identifiers=["ZTW_EDI 017"], absent_words=["ZTW_EDI"]).gap() == {}
    assert Choice(False, unanswered_value="hours", unanswered_for=["P4"]).gap() == {
        "kind": "no_value",
        "value": "hours",
        "of": ["P4"],
    }
    assert Choice(False, missing_values=["phone number"]).gap() == {"kind": "no_value", "value": "phone number"}
    assert Choice(False, unreported=True).gap() == {"kind": "unreported"}
    assert Choice(False, unanswered_value="time", unanswered_for=["KXQ"]).gap() == {"kind": "no_time", "of": ["KXQ"]}
    assert Choice(False, coverage=0.1).gap() == {}  # too little of the question covered: the absent words say it
    assert Choice(True, sibling=("TW20", "TW10")).gap() == {}


def test_the_answer_names_the_words_no_searched_document_mentions(corpus, client_as):
    answered = ask(make_agent("preferred"), None, "How do I delete old spool requests over the VPN?")
    assert answered.answer_basis == "documents" and answered.absent_words == ["VPN"]
    page = _soup(client_as("Auditor").get(f"/runs/{answered.id}"))
    assert page.select_one(".absent-words").text == "No document searched mentions VPN."
    assert [q.text for q in page.select(".absent-word")] == ["VPN"]

    documents.upload_file(corpus, "goods-issue.md", GOODS_ISSUE, None)
    refused = ask(make_agent("preferred", slug="other-agent"), None, "What was the cause of INC-2026-0427?")
    assert refused.answer_basis == "no_evidence"
    note = _soup(client_as("Auditor").get(f"/runs/{refused.id}")).select_one(".no-evidence-answer .absent-words")
    assert [q.text for q in note.select(".absent-word")] == ["INC-2026-0427"]

    # the user's words are text, never markup
    hostile = ask(make_agent("preferred", slug="third-agent"), None, 'Is <b hx-get="/x" onclick=alert(1)>VPN</b> down?')
    page = _soup(client_as("Auditor").get(f"/runs/{hostile.id}"))
    assert page.select(".answer b, .absent-words b, [hx-get], [onclick]") == []
    assert "hx-get" in [q.text for q in page.select(".absent-word")]

    nothing_granted = ask(make_agent("required", packs=()), None, "How do I reset the VPN?")
    assert nothing_granted.absent_words == []


CHANGE_BOARD = (
    b"# Change advisory board\n\n## Meeting\n\nThe change advisory board meets every second Thursday afternoon. Normal "
    b"changes for the next release window are entered in the change record by Tuesday noon, with the test evidence, "
    b"the rollback plan and the downtime they need; the board approves, defers or rejects each one and the minutes "
    b"record the decision and its reason. Emergency changes are approved by the change manager and the system owner "
    b"and reviewed at the next meeting.\n"
)
ROOMS = (
    b"# Meeting rooms\n\nBook a meeting room in the room calendar of Outlook: pick the room, the day and the time, "
    b"for example Thursday afternoon; the room confirms the booking by e-mail.\n"
)


def test_an_everyday_question_far_closer_to_its_example_than_to_a_passage_is_everyday_though_one_shares_its_topic():
    """A passage about update requests is 0.4 like "my laptop wont turn on after the windows update", which is
    0.75 like the everyday "Windows update keeps restarting my pc": no passage speaks to a laptop that will not
    start. A passage as like the question as the everyday example is does (the board's minutes above)."""
    from types import SimpleNamespace

    from portal.answers import everyday
    from portal.search.embedding import passage_text, shared_embedder

    question = "my laptop wont turn on after the windows update"
    sm13 = SimpleNamespace(
        document_title="Runbook: update task errors",
        heading_path="Runbook > Symptoms",
        text="In SM13, update requests that ended with an error are listed with the user and the time.",
    )
    embedder = shared_embedder()
    similarity = float(
        embedder.embed_one(passage_text(sm13.document_title, sm13.heading_path, sm13.text))
        @ embedder.embed_one(question)
    )
    assert everyday.PACK_SIMILARITY <= similarity < 0.45  # a passage the rule once took as speaking to it
    assert everyday.Likeness(question).is_everyday([sm13])
    close = SimpleNamespace(
        document_title="Laptops",
        heading_path="Laptops",
        text="A laptop that will not turn on after a Windows update: hold the power button for 30 seconds, "
        "then start it again.",
    )
    assert not everyday.Likeness(question).is_everyday([sm13, close])
    # a passage more than barely like the question speaks to it, however like an everyday question that is: a leave
    # policy answers its carry-over question (the list of everyday questions is no list of forbidden topics)
    leave = SimpleNamespace(
        document_title="Leave policy",
        heading_path="Leave policy > Carry-over",
        text="Unused leave lapses unless carried over: up to five days may be carried over to the next year with "
        "the manager's approval.",
    )
    assert not everyday.Likeness("Can I carry over unused vacation days to next year?").is_everyday([leave])


@pytest.mark.parametrize("document, everyday", [(CHANGE_BOARD, True), (ROOMS, False)])
def test_an_everyday_question_that_no_passage_speaks_to_is_no_evidence(corpus, document, everyday):
    """The board's minutes share "meeting", "Thursday" and "afternoon" and say nothing of booking a room; a
    facilities pack's passage is much like the question, so it is answered, though the question is also much
    like an everyday one (the list of everyday questions is no list of forbidden topics)."""
    documents.upload_file(corpus, "meetings.md", document, None)
    choice = retrieve(make_agent("preferred"), "how do i book a meeting room for thursday afternoon").choice
    assert choice.joined_coverage >= MIN_JOINED_COVERAGE and not choice.missing_identifiers  # words covered
    assert (choice.everyday, choice.evidence) == (everyday, not everyday), choice


def test_a_question_one_passage_holds_whole_is_answered_however_like_an_everyday_one_it_reads(corpus):
    """The everyday list has "coffee machine broken again"; a pack's note on its coffee machine still answers."""
    documents.upload_file(
        corpus,
        "walk-notes.md",
        b"# Walk notes\n\nThe walk test owns the K4P coffee machine. Its restart code is WALK-42.\n",
        None,
    )
    agent = make_agent("preferred")
    for question in ("What is the restart code of the coffee machine?", "coffee machine restart code"):
        choice = retrieve(agent, question).choice
        assert choice.evidence and not choice.everyday, (question, choice)
    run = ask(agent, None, "What is the restart code of the coffee machine?")
    assert "WALK-42" in run.answer, run.answer
    # an everyday question the note only shares words with is still one
    assert not retrieve(agent, "the coffee machine on floor 3 is broken again, who fixes it?").choice.evidence
    # and a question of three words a passage on something else holds whole, too
    documents.upload_file(corpus, "audit.md", b"# Audit\n\nPrint the spool list double sided in SP01.\n", None)
    assert retrieve(agent, "print double sided").choice.everyday


def test_what_a_code_means_needs_no_passage_saying_mean(pack):
    """ "mean" is the question's form: a pack that never writes the word answers, and no note says it lacks it."""
    documents.upload_file(pack, "pallets.md", b"# Pallets\n\nZX1 is the code of a blocked pallet.\n", None)
    pallet = ask(make_agent("preferred"), None, "What does ZX1 mean for a pallet?")
    assert "blocked pallet" in pallet.answer and pallet.absent_words == [], (pallet.answer, pallet.absent_words)


def test_how_often_is_answered_by_a_time_in_operating_hours(corpus):
    documents.upload_file(
        corpus,
        "pump.md",
        b"# Pump maintenance\n\nThe centrifugal pump P-101 must be inspected every 500 operating hours. Replace the "
        b"mechanical seal when leakage exceeds 5 drops per minute.\n",
        None,
    )
    agent = make_agent("preferred")
    for question in ("How often must pump P-101 be inspected?", "When must pump P-101 be inspected?"):
        assert retrieve(agent, question).choice.evidence, question
    assert "every 500 operating hours" in ask(agent, None, "How often is P-101 inspected?").answer
    assert not retrieve(agent, "How often must pump P-102 be inspected?").choice.evidence


TEMPLATE = (
    b"# Runbook template\n\n## Purpose\n\nEvery runbook names the symptom it resolves in its first line.\n\n"
    b"## Size\n\nA runbook fits on two printed pages. Longer procedures are split into several runbooks, one per "
    b"symptom.\n\n## Steps\n\nA runbook numbers its steps and names the transaction of each.\n"
)


def test_a_pack_of_one_document_answers_a_question_in_the_askers_words(app, pack):
    """Every passage of the pack says "runbook", which weighs nothing there; the rest of the question's words are
    the asker's own. Coverage alone refused it; the passage on length reads like it (the embedding model)."""
    documents.upload_file(pack, "runbook-template.md", TEMPLATE, None)
    agent = make_agent("preferred")
    choice = retrieve(agent, "Is there a maximum length a runbook should stay under?").choice
    assert choice.joined_coverage < MIN_JOINED_COVERAGE and choice.evidence
    assert not retrieve(agent, "How do I enrol in the company pension scheme for a runbook?").choice.evidence


def test_an_answer_tells_of_each_month_the_question_names(app, pack):
    """Two incidents alike, one opened in February, one in March: the answer gives each month's count, the
    documents dated by their opening rows (``Retrieval.in_months``)."""
    march = (
        "The nightly billing skipped 486 locked deliveries. Nightly billing skipped the locked deliveries of 41 "
        "customers. The locked deliveries stayed skipped by nightly billing until 06:00. Nightly billing skipped "
        "locked deliveries again the next night."
    )
    for name, opened, impact in (
        ("inc-feb.md", "2026-02-11", "The nightly run skipped 312 locked deliveries."),
        ("inc-mar.md", "2026-03-27", march),
    ):
        documents.upload_file(
            pack,
            name,
            f"# Billing skipped locked deliveries\n\n| Field | Value |\n|---|---|\n| Opened | {opened} |\n\n"
            f"## Impact\n\n{impact}\n".encode(),
            None,
        )
    question = "How many locked deliveries did nightly billing skip in Feb and in March?"
    retrieval = retrieve(make_agent("preferred"), question)
    dated = {retrieval.issued[n - 1].document_id: months for n, months in retrieval.in_months(question).items()}
    assert dated == {"inc-feb": {"february"}, "inc-mar": {"march"}}
    assert retrieval.in_months("How many locked deliveries did nightly billing skip?") == {}
    run = ask(make_agent("preferred", slug="asked"), None, question)
    assert "312" in run.answer and "486" in run.answer, run.answer
