"""Answer feedback: rating an answer, the Answer feedback review page (filters, pages, CSV, triage)
and regression cases with `cairn eval`."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from peewee import IntegrityError

from helpers import LOCKS, PASSWORD, POSTGRES_URL, signed_in_client, statements_run
from portal.agents.services import create_agent, delete_agent, update_agent
from portal.answers.prompt import CANNOT_ANSWER
from portal.auth.services import create_user
from portal.chat.services import continue_conversation, start_conversation
from portal.documents import editing
from portal.documents import services as documents
from portal.errors import Refused
from portal.evaluation.regressions import evaluate_regression_cases
from portal.feedback import regressions, review, services
from portal.feedback.services import MAX_NOTE_CHARS, REASONS, STATUSES
from portal.models import Document, Feedback, FeedbackTriage, Pack, Passage, RegressionCase, Run
from portal.packs.deletion import delete_pack, pack_contents
from tests.fake_openai import FakeOpenAI

SPOOL = b"""# Spool overflow runbook

## Fix

Run the report RSPO1041 to delete old spool requests.
Then check the TemSe consistency in SP12.
"""
CERTS = b"""# Certificate expiry runbook

## Renew

Renew the expired SSL client certificate in STRUST and restart the ICM.
"""
QUESTION = "How do I delete old spool requests?"
REVIEWERS = ("PlatformAdmin", "AgentBuilder", "Auditor")


def _soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


@pytest.fixture
def agents(app, pack, other_pack):
    documents.upload_file(pack, "spool-overflow.md", SPOOL, None)
    documents.upload_file(pack, "lock-entries.md", LOCKS, None)
    documents.upload_file(other_pack, "certificate-expiry.md", CERTS, None)
    return {
        "acme": create_agent(
            None, "acme-desk", "Acme desk", "preferred", "Acme Test Co", "", ["ops"], offered=True, add_company=True
        ),
        "shared": create_agent(None, "ops-helper", "Ops helper", "preferred", None, "", ["ops"], offered=True),
    }


@pytest.fixture
def answer(agents, users):
    """The Member's first chat answer (from the Acme desk)."""
    return start_conversation(users["Member"], agents["acme"], QUESTION)[1]


@pytest.fixture
def not_helpful(answer, users):
    return services.rate_answer(
        users["Member"], answer, "not_helpful", ["incorrect", "outdated"], "It should have named SP01 first."
    )


# --- rating ------------------------------------------------------------------------------------


def test_helpful_with_htmx_swaps_the_widget(answer, client_as, users):
    client = client_as("Member")
    widget = _soup(client.get(f"/chat/{answer.conversation_id}")).select_one(f"#rating-{answer.id}")
    form = widget.select_one("form.rate-buttons")
    assert form["action"] == form["hx-post"] == f"/chat/answers/{answer.id}/feedback"
    response = client.post(form["action"], data={"rating": "helpful"}, headers={"HX-Request": "true"})
    assert response.status_code == 200 and "<html" not in response.get_data(as_text=True)
    swapped = _soup(response).select_one(f"#rating-{answer.id}")
    assert swapped["data-rating"] == "helpful"
    assert swapped.select_one(".rate-helpful")["aria-pressed"] == "true"
    assert "You rated this answer Helpful" in swapped.select_one(".rated").text
    feedback = Feedback.get()
    assert (feedback.run_id, feedback.user_id, feedback.rating, feedback.reasons, feedback.note) == (
        answer.id,
        users["Member"].id,
        "helpful",
        [],
        "",
    )


def test_not_helpful_asks_for_reasons_and_a_note(answer, client_as):
    client = client_as("Member")
    page = _soup(client.get(f"/chat/{answer.conversation_id}"))
    button = page.select_one(f"#rating-{answer.id} button.rate-not-helpful")
    address = f"/chat/answers/{answer.id}/feedback?rating=not_helpful"
    assert button["hx-get"] == address and button["aria-pressed"] == "false"
    # Without JavaScript the button sends a GET form of its own, which asks for the same address.
    plain = page.select_one(f"form#{button['form']}")
    assert plain["method"] == "get" and plain.find_parent(id=f"rating-{answer.id}") is not None
    fields = "&".join(f"{field['name']}={field['value']}" for field in plain.select("input"))
    assert f"{plain['action']}?{fields}" == address
    assert "Send feedback" in client.get(address).get_data(as_text=True)  # the form's page of its own
    form = _soup(client.get(address, headers={"HX-Request": "true"})).select_one("form.not-helpful-form")
    assert [i["value"] for i in form.select("input[name=reasons]")] == list(REASONS)
    assert [label.text.strip() for label in form.select("fieldset label")] == [
        "Incorrect",
        "Incomplete",
        "Irrelevant sources",
        "Outdated",
        "Did not cite",
        "Other",
    ]
    assert form.select_one("textarea[name=note]")["maxlength"] == str(MAX_NOTE_CHARS)
    response = client.post(
        form["action"],
        data={"rating": "not_helpful", "reasons": ["did_not_cite", "incorrect"], "note": "Cites the wrong runbook."},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    assert "Not helpful: incorrect, did not cite." in _soup(response).select_one(".rated").text
    feedback = Feedback.get()
    assert (feedback.rating, feedback.reasons, feedback.note) == (
        "not_helpful",
        ["incorrect", "did_not_cite"],
        "Cites the wrong runbook.",
    )


def test_rating_works_without_javascript(answer, client_as):
    client = client_as("Member")
    page = client.get(f"/chat/answers/{answer.id}/feedback?rating=not_helpful")
    assert "<html" in page.get_data(as_text=True) and _soup(page).select_one("form.not-helpful-form") is not None
    response = client.post(f"/chat/answers/{answer.id}/feedback", data={"rating": "not_helpful", "reasons": "other"})
    assert response.status_code == 303
    assert response.headers["Location"].endswith(f"/chat/{answer.conversation_id}#turn-{answer.id}")
    assert Feedback.get().reasons == ["other"]


def test_one_rating_per_person_per_answer_and_it_can_change(answer, users):
    member = users["Member"]
    services.rate_answer(member, answer, "helpful")
    services.rate_answer(member, answer, "not_helpful", ["incomplete"], "Half of it.")
    services.rate_answer(member, answer, "not_helpful", ["incomplete"], "Half of it.")
    assert Feedback.select().count() == 1
    assert Feedback.get().rating == "not_helpful"
    services.rate_answer(member, answer, "helpful", ["incomplete"], "ignored")
    assert (Feedback.get().rating, Feedback.get().reasons, Feedback.get().note) == ("helpful", [], "")
    with pytest.raises(IntegrityError):
        Feedback.create(run=answer.id, user=member.id, rating="helpful")


INVALID = [
    ({"rating": "not_helpful"}, "no_reason", "Choose at least one reason"),
    (
        {"rating": "not_helpful", "reasons": "incorrect", "note": "x" * (MAX_NOTE_CHARS + 1)},
        "note_too_long",
        "at most 2,000 characters",
    ),
    ({"rating": "not_helpful", "reasons": ["incorrect", "rude"]}, "bad_reason", "Unknown reason"),
    ({"rating": "meh"}, "bad_rating", "Helpful or Not helpful"),
]


@pytest.mark.parametrize("htmx", [True, False])
@pytest.mark.parametrize("form, reason, message", INVALID, ids=[i[1] for i in INVALID])
def test_invalid_feedback_is_refused_and_nothing_is_saved(answer, client_as, users, htmx, form, reason, message):
    client = client_as("Member")
    headers = {"HX-Request": "true"} if htmx else {}
    response = client.post(f"/chat/answers/{answer.id}/feedback", data=form, headers=headers)
    assert response.status_code == 422
    assert ("<html" in response.get_data(as_text=True)) is not htmx
    page = _soup(response)
    assert message in page.select_one(".not-helpful-form .error").text
    assert "Nothing was saved" in page.select_one(".error").text
    assert Feedback.select().count() == 0
    if form.get("reasons"):  # what was typed stays in the form
        assert page.select_one("input[value=incorrect]").has_attr("checked")

    services.rate_answer(users["Member"], answer, "helpful")
    with pytest.raises(Refused) as refused:
        services.rate_answer(
            users["Member"],
            answer,
            form["rating"],
            [form["reasons"]] if isinstance(form.get("reasons"), str) else form.get("reasons", []),
            form.get("note"),
        )
    assert refused.value.reason == reason
    assert (Feedback.select().count(), Feedback.get().rating) == (1, "helpful")  # the earlier rating stands


def test_a_note_at_the_limit_is_kept_and_line_breaks_count_once(answer, users):
    note = ("y" * 999 + "\r\n") * 2  # 2,000 characters once the browser's CRLF is read as one line break
    feedback = services.rate_answer(users["Member"], answer, "not_helpful", ["other"], note)
    assert len(feedback.note) == MAX_NOTE_CHARS - 1 and "\r" not in feedback.note


# --- the review page ----------------------------------------------------------------------------


def _rated(users, agent, question, reasons, when=None, note="", user=None):
    conversation, run = start_conversation(user or users["Member"], agent, question)
    feedback = services.rate_answer(user or users["Member"], run, "not_helpful", reasons, note)
    if when:
        Feedback.update(updated_at=when).where(Feedback.id == feedback.id).execute()
    return Feedback.get_by_id(feedback.id)


@pytest.fixture
def reviewed(agents, users):
    """Three Not helpful answers on different days and agents, one Helpful one."""
    items = {
        "old": _rated(
            users,
            agents["acme"],
            "spool requests pile up",
            ["incorrect"],
            dt.datetime(2026, 3, 1, 9),
            '=HYPERLINK("http://evil.test")',
        ),
        "mid": _rated(
            users,
            agents["shared"],
            "stale lock entries",
            ["incomplete", "outdated"],
            dt.datetime(2026, 3, 10, 12),
            "Missing the SM12 check.",
        ),
        "new": _rated(users, agents["acme"], "TemSe consistency", ["outdated"], dt.datetime(2026, 3, 20, 18)),
    }
    conversation, run = start_conversation(users["Member"], agents["acme"], "RSPO1041")
    services.rate_answer(users["Member"], run, "helpful")
    return items


def test_review_list_shows_not_helpful_answers_newest_first(reviewed, client_as, users):
    page = _soup(client_as("AgentBuilder").get("/feedback/"))
    items = page.select(".feedback-item")
    assert [int(i["data-feedback"]) for i in items] == [reviewed[k].id for k in ("new", "mid", "old")]
    mid = items[1]
    assert mid.select_one(".feedback-question a").text == "stale lock entries"
    assert mid.select_one(".feedback-question a")["href"] == f"/feedback/{reviewed['mid'].id}"
    assert "SM12" in mid.select_one(".feedback-answer").text
    assert [r.text for r in mid.select(".reason")] == ["Incomplete", "Outdated"]
    assert mid.select_one(".feedback-note").text == "Missing the SM12 check."
    meta = mid.select_one(".feedback-meta").text
    assert "Ops helper" in meta and users["Member"].email in meta and "(Acme Test Co)" in meta
    assert "2026-03-10 12:00 UTC" in meta and "new" in mid.select_one(".triage").text
    assert mid.select_one(f"a[href='/runs/{reviewed['mid'].run_id}']") is not None
    assert page.select_one(".result-count").text == "3 answers"


FILTERS = [
    ("agent=ops-helper", ["mid"]),
    ("reason=outdated", ["new", "mid"]),
    ("reason=incorrect", ["old"]),
    ("status=new", ["new", "mid", "old"]),
    ("status=resolved", []),
    ("from=2026-03-10", ["new", "mid"]),
    ("to=2026-03-10", ["mid", "old"]),
    ("from=2026-03-02&to=2026-03-19", ["mid"]),
    ("agent=acme-desk&reason=outdated", ["new"]),
]


@pytest.mark.parametrize("query, expected", FILTERS, ids=[f[0] for f in FILTERS])
def test_filters(reviewed, client_as, query, expected):
    page = _soup(client_as("Auditor").get(f"/feedback/?{query}"))
    assert [int(i["data-feedback"]) for i in page.select(".feedback-item")] == [reviewed[k].id for k in expected]
    export = page.select_one("a.export-csv")["href"]
    assert export.startswith("/feedback/export.csv")
    rows = list(csv.DictReader(io.StringIO(client_as("Auditor").get(export).get_data(as_text=True).lstrip("\ufeff"))))
    assert [int(r["feedback_id"]) for r in rows] == [reviewed[k].id for k in expected]


def test_an_agent_slug_with_no_feedback_says_so_rather_than_an_empty_list(reviewed, client_as):
    count = _soup(client_as("Auditor").get("/feedback/?agent=nope")).select_one(".result-count").text
    assert "No answer of an agent “nope” was rated Not helpful: its slug may be mistyped" in count
    resolved = _soup(client_as("Auditor").get("/feedback/?status=resolved")).select_one(".result-count").text
    assert resolved == "No answer rated Not helpful matches these filters."


def test_filter_form_updates_the_list_in_place_and_the_address(reviewed, client_as):
    client = client_as("PlatformAdmin")
    page = _soup(client.get("/feedback/?reason=outdated"))
    form = page.select_one("form#feedback-filters")
    assert form["method"] == "get" and form["action"] == "/feedback/"
    assert form["hx-get"] == "/feedback/" and form["hx-target"] == "#feedback-results" and form["hx-push-url"] == "true"
    assert page.select_one("#filter-reason option[selected]")["value"] == "outdated"
    response = client.get(
        "/feedback/?agent=acme-desk&reason=outdated&status=&from=&to=", headers={"HX-Request": "true"}
    )
    assert response.status_code == 200 and "<html" not in response.get_data(as_text=True)
    assert "HX-Request" in response.headers["Vary"]
    assert response.headers["HX-Push-Url"] == "/feedback/?agent=acme-desk&reason=outdated"
    assert [int(i["data-feedback"]) for i in _soup(response).select(".feedback-item")] == [reviewed["new"].id]
    restore = client.get(
        "/feedback/?reason=outdated", headers={"HX-Request": "true", "HX-History-Restore-Request": "true"}
    )
    assert "<html" in restore.get_data(as_text=True)  # Back restores the whole page


def test_bad_filter_values_are_named_and_not_applied(reviewed, client_as):
    page = _soup(client_as("Auditor").get("/feedback/?reason=rude&status=done&from=2026-13-01"))
    problems = [p.text for p in page.select(".filter-problem")]
    assert len(problems) == 3 and "'rude'" in problems[0] and "YYYY-MM-DD" in problems[2]
    assert len(page.select(".feedback-item")) == 3


@pytest.mark.parametrize(
    "query, problem, shown",
    [
        ("to=9999-12-31", None, ["new", "mid", "old"]),  # the last day there is: no day after it to stop before
        ("from=0001-01-01&to=9999-12-31", None, ["new", "mid", "old"]),
        ("agent=Bad%20Slug", "There is no agent 'Bad Slug'", ["new", "mid", "old"]),  # a NUL: test_request_text
        ("agent=" + "a" * 81, "There is no agent 'aaaa", ["new", "mid", "old"]),
        ("status=%20resolved%20", None, []),
        ("from=2026-03-20&to=2026-03-01", "ends before it starts", []),
        ("reason=incorrect&from=March", "'March' is not a date", ["old"]),
        # Python's own reading of ISO 8601 takes these as days; the filter says YYYY-MM-DD (found by a probe)
        ("to=20260101", "'20260101' is not a date", ["new", "mid", "old"]),
        ("to=2026-W01-1", "'2026-W01-1' is not a date", ["new", "mid", "old"]),
    ],
)
def test_filter_values_are_named_when_they_name_nothing_never_a_server_error(
    reviewed, client_as, query, problem, shown
):
    client = client_as("Auditor")
    response = client.get(f"/feedback/?{query}")
    assert response.status_code == 200
    page = _soup(response)
    problems = [p.text for p in page.select(".filter-problem")]
    assert len(problems) == (problem is not None) and all(problem in p for p in problems)
    assert [int(i["data-feedback"]) for i in page.select(".feedback-item")] == [reviewed[k].id for k in shown]
    export = client.get(f"/feedback/export.csv?{query}")
    assert export.status_code == 200
    assert len(list(csv.reader(io.StringIO(export.get_data(as_text=True))))) == len(shown) + 1


def test_pages_of_twenty_keep_the_filters(agents, users, client_as):
    for n in range(25):
        _rated(
            users, agents["acme"], f"spool question {n}", ["incorrect"], dt.datetime(2026, 3, 1) + dt.timedelta(hours=n)
        )
    client = client_as("Auditor")
    first = _soup(client.get("/feedback/?reason=incorrect"))
    assert len(first.select(".feedback-item")) == 20 and first.select_one(".result-count").text == "1–20 of 25"
    older = first.select_one(".pager a[rel=next]")
    assert older["href"] == older["hx-get"] == "/feedback/?reason=incorrect&page=2"
    second = _soup(client.get(older["href"]))
    assert len(second.select(".feedback-item")) == 5 and second.select_one(".result-count").text == "21–25 of 25"
    assert second.select_one(".pager a[rel=prev]")["href"] == "/feedback/?reason=incorrect"
    assert "spool question 0" in second.select(".feedback-question")[-1].text  # oldest last
    assert (
        len(list(csv.reader(io.StringIO(client.get("/feedback/export.csv?reason=incorrect").get_data(as_text=True)))))
        == 26
    )  # every row, not one page


# --- The review list as a table, sorted by its columns (issue 16, item 8) ---------------------------


def _rows(page) -> list[int]:
    return [int(row["data-feedback"]) for row in page.select(".feedback-table .feedback-row")]


SORTED = [
    ("", ["new", "mid", "old"], ("date", "descending")),
    ("sort=-date", ["new", "mid", "old"], ("date", "descending")),
    ("sort=date", ["old", "mid", "new"], ("date", "ascending")),
    ("sort=agent", ["new", "old", "mid"], ("agent", "ascending")),  # Acme desk, newest first within it
    ("sort=-agent", ["mid", "new", "old"], ("agent", "descending")),
    ("sort=reasons", ["mid", "old", "new"], ("reasons", "ascending")),  # Incomplete …, Incorrect, Outdated
    ("sort=-reasons", ["new", "old", "mid"], ("reasons", "descending")),
    ("sort=status", ["mid", "old", "new"], ("status", "ascending")),  # new before resolved
    ("sort=-status", ["new", "mid", "old"], ("status", "descending")),
]


@pytest.mark.parametrize("query, expected, heading", SORTED, ids=[s[0] or "default" for s in SORTED])
def test_the_table_sorts_by_date_agent_reasons_and_status(reviewed, client_as, users, query, expected, heading):
    services.triage(users["Auditor"], reviewed["new"], "resolved", "")
    client = client_as("AgentBuilder")
    page = _soup(client.get(f"/feedback/?{query}"))
    ids = [reviewed[k].id for k in expected]
    assert _rows(page) == ids
    assert [int(i["data-feedback"]) for i in page.select(".feedback-item")] == ids  # the cards, in the same order
    sorted_headings = page.select(".feedback-table th[aria-sort]")
    assert [(th.select_one("a")["data-sort"].lstrip("-"), th["aria-sort"]) for th in sorted_headings] == [heading]
    rows = list(
        csv.DictReader(
            io.StringIO(client.get(page.select_one("a.export-csv")["href"]).get_data(as_text=True).lstrip("\ufeff"))
        )
    )
    assert [int(r["feedback_id"]) for r in rows] == ids  # the export in the order shown


def test_the_headings_are_links_that_keep_the_filters_and_reverse_the_order(reviewed, client_as):
    client = client_as("Auditor")
    page = _soup(client.get("/feedback/?reason=outdated"))
    links = {a.text.strip(" ▲▼"): a for a in page.select(".feedback-table th a")}
    assert list(links) == ["Date", "Agent", "Reasons", "Status"]
    assert [th.text for th in page.select(".feedback-table th:not(.sortable)")] == ["Question", "Rated by"]
    assert links["Date"]["href"] == links["Date"]["hx-get"] == "/feedback/?reason=outdated&sort=date"
    assert links["Agent"]["href"] == "/feedback/?reason=outdated&sort=agent"
    assert page.select_one("input[name=sort]") is None  # the default order is no argument
    by_agent = _soup(client.get(links["Agent"]["href"]))
    assert _rows(by_agent) == [reviewed["new"].id, reviewed["mid"].id]
    reverse = by_agent.select_one(".feedback-table th[aria-sort] a")
    assert reverse["href"] == "/feedback/?reason=outdated&sort=-agent"
    kept = by_agent.select_one("input[name=sort]")  # the filter form sends the order along
    assert (kept["form"], kept["value"]) == ("feedback-filters", "agent")
    response = client.get("/feedback/?reason=outdated&sort=-agent", headers={"HX-Request": "true"})
    assert response.headers["HX-Push-Url"] == "/feedback/?reason=outdated&sort=-agent"
    assert _rows(_soup(response)) == [reviewed["mid"].id, reviewed["new"].id]


@pytest.mark.parametrize(
    "value", ["rude", "--date", "date;drop table feedback", "-", "Date"]
)  # "%00": test_request_text
def test_a_bad_sort_value_is_named_and_the_list_keeps_its_order(reviewed, client_as, value):
    client = client_as("Auditor")
    response = client.get(f"/feedback/?sort={value}&reason=outdated")
    assert response.status_code == 200
    page = _soup(response)
    problems = [p.text for p in page.select(".filter-problem")]
    assert len(problems) == 1 and problems[0].startswith("There is no sort order")
    assert problems[0].endswith("the list is sorted newest first.")
    assert _rows(page) == [reviewed["new"].id, reviewed["mid"].id]
    assert client.get(f"/feedback/export.csv?sort={value}").status_code == 200


def test_pages_keep_the_order(agents, users, client_as):
    for n in range(25):
        _rated(
            users,
            agents["acme" if n % 2 else "shared"],
            f"spool question {n}",
            ["incorrect"],
            dt.datetime(2026, 3, 1) + dt.timedelta(hours=n),
        )
    client = client_as("Auditor")
    first = _soup(client.get("/feedback/?sort=agent"))
    assert len(_rows(first)) == 20
    following = first.select_one(".pager a[rel=next]")
    assert following["href"] == "/feedback/?sort=agent&page=2" and following.text == "Next"
    second = _soup(client.get(following["href"]))
    names = [row.select_one(".row-agent").text for row in second.select(".feedback-row")]
    assert names == ["Ops helper"] * 5
    assert second.select_one(".pager a[rel=prev]").text == "Previous"


def test_csv_export(reviewed, client_as, users):
    response = client_as("AgentBuilder").get("/feedback/export.csv")
    assert response.mimetype == "text/csv"
    assert response.headers["Content-Disposition"].startswith('attachment; filename="answer-feedback-')
    text = response.get_data(as_text=True)
    assert text.startswith("\ufeff")
    rows = list(csv.DictReader(io.StringIO(text.lstrip("\ufeff"))))
    assert list(rows[0]) == list(review.CSV_COLUMNS)
    old = rows[-1]
    assert (old["agent"], old["question"], old["reasons"], old["rated_by"], old["company"], old["status"]) == (
        "acme-desk",
        "spool requests pile up",
        "Incorrect",
        users["Member"].email,
        "Acme Test Co",
        "new",
    )
    assert old["note"] == '\'=HYPERLINK("http://evil.test")'  # a spreadsheet must not run it
    assert old["rated_at_utc"] == "2026-03-01T09:00:00" and old["run_id"] == str(reviewed["old"].run_id)


# A formula behind what a spreadsheet trims or does not show: white space, zero-width and bidirectional marks.
HIDDEN_FORMULAS = (
    '  =HYPERLINK("http://evil.test")',
    '\t=HYPERLINK("http://evil.test")',
    '\u200b=HYPERLINK("http://evil.test")',
    '\u200e\u00a0+cmd|" /C calc"!A0',
    "\ufeff\u2060@SUM(1+1)*cmd|' /C calc'!A0",
    "\u3000-2+3+cmd|' /C calc'!A0",
)


def test_csv_export_prefixes_a_formula_behind_white_space_or_invisible_characters(agents, client_as, users):
    """Spreadsheet programs trim leading white space when they import a CSV, and show no zero-width or
    bidirectional mark, so a formula behind them runs as one written first (OWASP, CSV Injection)."""
    rated = {}
    for n, formula in enumerate(HIDDEN_FORMULAS):
        feedback = _rated(users, agents["acme"], f"spool question {n}", ["incorrect"], note="set below")
        # Stored as written (older rows, or a note typed before trimming): the export must not trust the writer.
        Feedback.update(note=formula).where(Feedback.id == feedback.id).execute()
        rated[str(feedback.id)] = formula
    text = client_as("Auditor").get("/feedback/export.csv").get_data(as_text=True).lstrip("\ufeff")
    notes = {row["feedback_id"]: row["note"] for row in csv.DictReader(io.StringIO(text))}
    assert {key: notes[key] for key in rated} == {key: "'" + formula for key, formula in rated.items()}


# --- triage -----------------------------------------------------------------------------------


def test_triage_records_status_note_who_and_when(not_helpful, client_as, users):
    client = client_as("Auditor")
    page = _soup(client.get(f"/feedback/{not_helpful.id}"))
    detail = page.select_one(".feedback-detail").text
    assert QUESTION in detail and "It should have named SP01 first." in detail and "Incorrect" in detail
    assert page.select_one("a.run-link")["href"] == f"/runs/{not_helpful.run_id}"
    form = page.select_one("#triage form")
    assert form["hx-post"] == form["action"] == f"/feedback/{not_helpful.id}/triage"
    assert [o["value"] for o in form.select("option")] == list(STATUSES)
    response = client.post(
        form["action"], data={"status": "in_review", "reviewer_note": "Checking SP01."}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 200
    triage = _soup(response).select_one("section#triage")
    assert "in review" in triage.select_one(".triage-state .badge").text
    assert users["Auditor"].email in triage.select_one(".triage-state").text
    assert "in review — Checking SP01." in triage.select_one(".triage-history li").text
    client_as("AgentBuilder").post(form["action"], data={"status": "wont_fix", "reviewer_note": "Works as designed."})
    feedback = Feedback.get_by_id(not_helpful.id)
    assert (feedback.status, feedback.reviewer_note, feedback.reviewed_by_id) == (
        "wont_fix",
        "Works as designed.",
        users["AgentBuilder"].id,
    )
    assert feedback.reviewed_at is not None
    history = [(h.status, h.actor_email) for h in services.triage_history(feedback)]
    assert history == [("wont_fix", users["AgentBuilder"].email), ("in_review", users["Auditor"].email)]
    assert [
        int(i["data-feedback"]) for i in _soup(client.get("/feedback/?status=wont_fix")).select(".feedback-item")
    ] == [feedback.id]


@pytest.mark.parametrize(
    "data, message",
    [
        ({"status": "done"}, "The status is one of"),
        ({"status": "resolved", "reviewer_note": "z" * (MAX_NOTE_CHARS + 1)}, "at most 2,000 characters"),
    ],
)
def test_invalid_triage_is_refused_and_nothing_is_saved(not_helpful, client_as, data, message):
    response = client_as("PlatformAdmin").post(
        f"/feedback/{not_helpful.id}/triage", data=data, headers={"HX-Request": "true"}
    )
    assert response.status_code == 422 and message in _soup(response).select_one("#triage .error").text
    assert FeedbackTriage.select().count() == 0 and Feedback.get_by_id(not_helpful.id).status == "new"


def test_a_changed_rating_after_review_is_new_again(not_helpful, users):
    services.triage(users["Auditor"], not_helpful, "resolved", "Fixed the runbook.")
    services.rate_answer(users["Member"], not_helpful.run, "not_helpful", ["incomplete"], "Still missing a step.")
    feedback = Feedback.get_by_id(not_helpful.id)
    assert feedback.status == "new"
    assert services.triage_history(feedback)[0].note == services.REOPENED_NOTE


def test_the_status_line_names_who_set_it_last_and_a_save_shows_the_rating_as_it_is_now(not_helpful, client_as, users):
    """Issue 16, item 7: after a member's change the page said "last set by" the earlier reviewer."""
    reviewer = client_as("AgentBuilder")
    address = f"/feedback/{not_helpful.id}/triage"
    reviewer.post(address, data={"status": "in_review", "reviewer_note": "Looking."})
    services.rate_answer(users["Member"], not_helpful.run, "not_helpful", ["incomplete"], "Still missing a step.")
    state = _soup(reviewer.get(f"/feedback/{not_helpful.id}")).select_one("#triage .triage-state")
    assert state.select_one(".badge").text == "new"
    last_set = state.select_one(".last-set").text
    assert users["Member"].email in last_set and "the rating changed after review" in last_set
    assert users["AgentBuilder"].email not in last_set

    response = reviewer.post(
        address, data={"status": "in_review", "reviewer_note": "Looking again."}, headers={"HX-Request": "true"}
    )
    fragment = _soup(response)
    assert users["AgentBuilder"].email in fragment.select_one("#triage .last-set").text
    detail = fragment.select_one("#feedback-detail")
    assert detail["hx-swap-oob"] == "true" and detail.has_attr("hx-disable")
    assert [li.text for li in detail.select(".reason-list li")] == ["Incomplete"]
    assert detail.select_one(".feedback-note").text == "Still missing a step."
    refused = _soup(reviewer.post(address, data={"status": "done"}, headers={"HX-Request": "true"}))
    assert refused.select_one("#triage .error") and refused.select_one("#feedback-detail[hx-swap-oob]")


def test_a_triage_applies_to_what_the_reviewer_read_and_never_to_a_change_made_meanwhile(not_helpful, client_as, users):
    """The member rates again, or another reviewer saves, between a reviewer opening the item and saving:
    the save is a 409 that shows the item as it is now, keeps what the reviewer chose and wrote, and saves
    nothing; saved again from that page, it applies."""
    address = f"/feedback/{not_helpful.id}/triage"
    reviewer, other = client_as("Auditor"), client_as("AgentBuilder")
    seen = _soup(reviewer.get(f"/feedback/{not_helpful.id}")).select_one("#triage input[name=seen]")["value"]
    other_seen = _soup(other.get(f"/feedback/{not_helpful.id}")).select_one("#triage input[name=seen]")["value"]
    services.rate_answer(users["Member"], not_helpful.run, "not_helpful", ["incomplete"], "Still missing a step.")

    mine = {"status": "resolved", "reviewer_note": "Fixed the runbook.", "seen": seen}
    conflict = reviewer.post(address, data=mine, headers={"HX-Request": "true"})
    assert conflict.status_code == 409
    page = _soup(conflict)
    assert "changed while you were reviewing it" in page.select_one("#triage .error").text
    assert page.select_one("#feedback-detail .feedback-note").text == "Still missing a step."  # as it is now
    assert page.select_one("#reviewer-note").text == "Fixed the runbook."  # what they wrote is kept
    assert page.select_one("#triage-status option[selected]")["value"] == "resolved"
    assert (Feedback.get_by_id(not_helpful.id).status, FeedbackTriage.select().count()) == ("new", 0)

    fresh = page.select_one("#triage input[name=seen]")["value"]
    assert reviewer.post(address, data={**mine, "seen": fresh}).status_code == 303
    assert Feedback.get_by_id(not_helpful.id).status == "resolved"
    # The other reviewer opened the item before both changes: their save would undo a triage they never saw.
    stale = other.post(address, data={"status": "wont_fix", "reviewer_note": "", "seen": other_seen})
    assert stale.status_code == 409 and "changed while you were reviewing it" in stale.get_data(as_text=True)
    assert Feedback.get_by_id(not_helpful.id).status == "resolved"


# --- who may review ----------------------------------------------------------------------------

WHO = ("PlatformAdmin", "AgentBuilder", "Auditor", "Member", "colleague", "other company", None)
REVIEW_ROUTES = [
    ("GET", "/feedback/", None, 200),
    ("GET", "/feedback/?reason=incorrect&status=new", None, 200),
    ("GET", "/feedback/export.csv", None, 200),
    ("GET", "/feedback/{f}", None, 200),
    ("GET", "/feedback/{f}?q=spool+requests&scope=all", None, 200),
    ("POST", "/feedback/{f}/triage", {"status": "in_review", "reviewer_note": "ok"}, 303),
    ("POST", "/feedback/{f}/cases", {"pack": "ops", "doc_id": "spool-overflow"}, 303),
    ("POST", "/feedback/{f}/cases/{c}/delete", None, 303),  # the case is the PlatformAdmin's own
    ("GET", "/feedback/999999", None, None),
    ("GET", "/feedback/{h}", None, None),  # rated Helpful: not an item to review
]


@pytest.mark.parametrize("who", WHO, ids=[str(w) for w in WHO])
@pytest.mark.parametrize("method, path, data, ok_status", REVIEW_ROUTES, ids=[f"{r[0]} {r[1]}" for r in REVIEW_ROUTES])
def test_review_access_matrix(app, not_helpful, agents, users, client_as, who, method, path, data, ok_status):
    helpful = services.rate_answer(
        users["Member"], start_conversation(users["Member"], agents["acme"], "SP12")[1], "helpful"
    )
    case = regressions.record_regression_case(
        users["PlatformAdmin"], not_helpful, Document.get(Document.doc_id == "lock-entries").id
    )
    url = path.format(f=not_helpful.id, c=case.id, h=helpful.id)
    strangers = {
        "colleague": ("colleague@example.test", "Acme Test Co"),
        "other company": ("globex.member@example.test", "Globex"),
    }
    if who is None:
        client = app.test_client()
    elif who in strangers:
        client = signed_in_client(app, create_user(strangers[who][0], PASSWORD, {"Member"}, strangers[who][1]))
    else:
        client = client_as(who)
    response = client.open(url, method=method, data=data)
    allowed = ("PlatformAdmin",) if path.endswith("/delete") else REVIEWERS
    if who is None:
        assert response.status_code == 302 and "/login" in response.headers["Location"]
    elif who in allowed and ok_status:
        assert response.status_code == ok_status, response.get_data(as_text=True)[:400]
    else:
        assert response.status_code == 404


def test_an_item_rated_helpful_since_tells_the_reviewer_so(not_helpful, users, client_as):
    """A reviewer who had the item open got "There is nothing here, or it is not yours to see" once its asker
    switched the rating to Helpful (found by a browser walkthrough); the asker's own page is no reviewer's."""
    services.rate_answer(users["Member"], not_helpful.run, "helpful")
    reviewer = client_as("Auditor").get(f"/feedback/{not_helpful.id}")
    assert reviewer.status_code == 404
    assert "rates this answer Helpful, so it is not in the review list" in _soup(reviewer).get_text()
    member = client_as("Member").get(f"/feedback/{not_helpful.id}")
    assert member.status_code == 404 and "Helpful" not in _soup(member).select_one("main").get_text()


@pytest.mark.parametrize(
    ("author", "remover", "removed"),
    [
        ("Auditor", "Auditor", True),
        ("Auditor", "PlatformAdmin", True),
        ("Auditor", "AgentBuilder", False),
        ("Auditor", "another Auditor", False),
        ("AgentBuilder", "Auditor", False),
        ("PlatformAdmin", "Auditor", False),
    ],
)
def test_only_the_author_or_a_platform_admin_removes_a_case(
    app, not_helpful, users, client_as, author, remover, removed
):
    case = regressions.record_regression_case(
        users[author], not_helpful, Document.get(Document.doc_id == "lock-entries").id
    )
    client = (
        signed_in_client(app, create_user("auditor2@example.test", PASSWORD, {"Auditor"}))
        if remover == "another Auditor"
        else client_as(remover)
    )
    page = _soup(client.get(f"/feedback/{not_helpful.id}"))
    assert bool(page.select(f'.case[data-case="{case.id}"] form')) is removed
    triage = client.post(f"/feedback/{not_helpful.id}/triage", data={"status": "in_review", "reviewer_note": ""})
    assert triage.status_code == 303  # every reviewer still triages
    response = client.post(f"/feedback/{not_helpful.id}/cases/{case.id}/delete")
    assert response.status_code == (303 if removed else 404)
    assert (RegressionCase.get_or_none(RegressionCase.id == case.id) is None) is removed


# --- regression cases -----------------------------------------------------------------------------


def test_a_reviewer_finds_and_records_the_expected_passage(not_helpful, client_as, users):
    client = client_as("AgentBuilder")
    page = _soup(client.get(f"/feedback/{not_helpful.id}"))
    search = page.select_one("#cases form.source-search")
    assert search["hx-get"] == f"/feedback/{not_helpful.id}" and search.select_one("input[name=q]")["value"] == QUESTION
    results = client.get(f"/feedback/{not_helpful.id}?q=stale+lock+entries&scope=agent", headers={"HX-Request": "true"})
    fragment = _soup(results)
    assert fragment.select_one("section#cases") is not None and "<html" not in results.get_data(as_text=True)
    candidate = fragment.select_one(".candidate")
    assert "lock-entries" in candidate.text
    form = candidate.select_one("form")
    data = {i["name"]: i["value"] for i in form.select("input[type=hidden]") if i["name"] != "csrf_token"}
    passage_button = form.select_one("button[name=passage_id]")
    # each candidate's buttons are named by its document for a screen reader, not "This passage" again and again
    title = candidate.select_one("strong").text
    assert [b["aria-label"] for b in form.select("button")] == [f"This passage of {title}", f"This document: {title}"]
    response = client.post(
        form["action"], data={**data, "passage_id": passage_button["value"]}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 200 and "Recorded" in _soup(response).select_one("#cases .flash").text
    # removing one asks first: one click removed a case by accident (found by a browser walkthrough)
    assert _soup(response).select_one("#cases .case form")["hx-confirm"] == "Remove this regression case?"
    case = RegressionCase.get()
    lock = Document.get(Document.doc_id == "lock-entries")
    assert (
        case.feedback_id,
        case.agent_slug,
        case.question,
        case.pack_slug,
        case.document_id,
        case.document_pk,
        case.passage_id,
        case.passage_version,
        case.created_by_id,
    ) == (
        not_helpful.id,
        "acme-desk",
        QUESTION,
        "ops",
        "lock-entries",
        lock.id,
        int(passage_button["value"]),
        1,
        users["AgentBuilder"].id,
    )
    assert Passage.get_by_id(case.passage_id).revision.document_id == lock.id
    shown = _soup(client.get(f"/feedback/{not_helpful.id}")).select_one(".case")
    assert "lock-entries" in shown.text and users["AgentBuilder"].email in shown.text
    client.post(f"/feedback/{not_helpful.id}/cases", data={**data, "passage_id": passage_button["value"]})
    assert RegressionCase.select().count() == 1  # recording it again changes nothing


def test_naming_a_document_by_hand_and_removing_a_case(not_helpful, client_as):
    client = client_as("PlatformAdmin")
    response = client.post(f"/feedback/{not_helpful.id}/cases", data={"pack": "ops", "doc_id": "nope"})
    assert response.status_code == 422 and "no document 'nope'" in _soup(response).select_one("#cases .error").text
    assert RegressionCase.select().count() == 0
    response = client.post(f"/feedback/{not_helpful.id}/cases", data={"pack": "ops", "doc_id": "lock-entries"})
    assert response.status_code == 303 and response.headers["Location"].endswith(f"/feedback/{not_helpful.id}#cases")
    case = RegressionCase.get()
    assert (case.pack_slug, case.document_id, case.passage_id) == ("ops", "lock-entries", None)
    client.post(f"/feedback/{not_helpful.id}/cases/{case.id}/delete")
    assert RegressionCase.select().count() == 0


def test_a_case_cannot_name_a_document_its_reviewer_may_not_read(not_helpful, client_as, users, pack):
    """A case naming a document the reviewer may not read showed its title (and sections) to every reviewer, and
    a refusal different from a missing document's told that it exists. It is refused as a missing one."""
    from portal.documents.readers import ReaderAccess

    secret = documents.upload_file(
        pack,
        "board-plan.md",
        b"# Board-only acquisition plan\n\nThe spool plan.\n",
        None,
        reader_access=ReaderAccess("staff", ("PlatformAdmin",)),
    ).document
    client = client_as("Auditor")
    assert client.get("/packs/ops/documents/board-plan").status_code == 404
    hidden = client.post(f"/feedback/{not_helpful.id}/cases", data={"pack": "ops", "doc_id": "board-plan"})
    missing = client.post(f"/feedback/{not_helpful.id}/cases", data={"pack": "ops", "doc_id": "board-plam"})
    assert hidden.status_code == missing.status_code == 422
    assert _soup(hidden).select_one("#cases .error").text == (
        _soup(missing).select_one("#cases .error").text.replace("board-plam", "board-plan")
    )
    assert "Board-only" not in hidden.get_data(as_text=True)
    with pytest.raises(Refused) as refused:
        regressions.record_regression_case(users["Auditor"], not_helpful, secret.id)
    assert refused.value.reason == "no_document"
    assert RegressionCase.select().count() == 0
    # the admin the reader roles admit names it; the auditor's pages and CSV show the case without the document
    assert (
        client_as("PlatformAdmin")
        .post(f"/feedback/{not_helpful.id}/cases", data={"pack": "ops", "doc_id": "board-plan"})
        .status_code
        == 303
    )
    item, listed, exported = (
        client.get(url).get_data(as_text=True)
        for url in (f"/feedback/{not_helpful.id}", "/feedback/", "/feedback/export.csv")
    )
    assert regressions.HIDDEN_SOURCE in BeautifulSoup(item, "html.parser").select_one(".case").text
    for shown in (item, listed, exported):
        assert "Board-only" not in shown and "board-plan" not in shown
    assert regressions.HIDDEN_SOURCE in listed and regressions.HIDDEN_SOURCE in exported
    admin_item = client_as("PlatformAdmin").get(f"/feedback/{not_helpful.id}").get_data(as_text=True)
    assert "Board-only acquisition plan" in admin_item


def test_a_case_names_only_a_pack_its_agent_is_granted(not_helpful, client_as):
    """A case could name a document of a pack its agent was never granted: `cairn eval` then reported a miss no
    change of ranking could fix. It is refused by name; the page offers the agent's packs to name, and a search
    of every pack shows where a hit sits that a case cannot name."""
    client = client_as("AgentBuilder")
    response = client.post(f"/feedback/{not_helpful.id}/cases", data={"pack": "other", "doc_id": "certificate-expiry"})
    assert response.status_code == 422
    assert _soup(response).select_one("#cases .error").text == (
        "Acme desk is not granted the pack other, so a case cannot expect its document certificate-expiry: "
        "grant the pack to the agent first, or name a document of its packs. Nothing was saved."
    )
    assert RegressionCase.select().count() == 0
    page = _soup(client.get(f"/feedback/{not_helpful.id}"))
    assert [o["value"] for o in page.select("#case-pack option")] == ["ops"]
    found = _soup(client.get(f"/feedback/{not_helpful.id}?q=certificate+expiry&scope=all"))
    candidate = next(c for c in found.select(".candidate") if "other/certificate-expiry" in c.text)
    assert candidate.select_one("form") is None
    assert candidate.select_one(".not-granted").text == "Acme desk is not granted this pack: a case cannot name it."


def test_a_reviewer_records_that_the_answer_should_have_said_no_evidence(not_helpful, client_as, users):
    client = client_as("Auditor")
    form = _soup(client.get(f"/feedback/{not_helpful.id}")).select_one("#cases form.no-evidence-case")
    assert form["action"] == form["hx-post"] == f"/feedback/{not_helpful.id}/cases"
    assert form.select_one("input[name=kind]")["value"] == "no_evidence"
    assert form.select_one("button").text == regressions.CASE_KINDS["no_evidence"] == "Should have said no evidence"
    assert "did say so" not in form.text  # it answered
    Run.update(answer_basis="no_evidence").where(Run.id == not_helpful.run_id).execute()
    said_so = _soup(client.get(f"/feedback/{not_helpful.id}")).select_one("#cases form.no-evidence-case")
    assert "This answer did say so: the case checks that it still does" in said_so.text
    Run.update(answer_basis="documents").where(Run.id == not_helpful.run_id).execute()
    response = client.post(form["action"], data={"kind": "no_evidence"}, headers={"HX-Request": "true"})
    fragment = _soup(response)
    assert response.status_code == 200 and "Recorded" in fragment.select_one("#cases .flash").text
    case = RegressionCase.get()
    assert (case.kind, case.feedback_id, case.agent_slug, case.question, case.created_by_id) == (
        "no_evidence",
        not_helpful.id,
        "acme-desk",
        QUESTION,
        users["Auditor"].id,
    )
    assert (case.pack_slug, case.document_pk, case.document_id, case.document_title, case.passage_id) == (
        None,
        None,
        None,
        None,
        None,
    )
    shown = fragment.select_one(".case")
    assert "case-no_evidence" in shown["class"] and "Should have said no evidence" in shown.text
    assert fragment.select_one("form.no-evidence-case") is None  # recorded: not offered again
    assert client.post(form["action"], data={"kind": "no_evidence"}).status_code == 303
    assert RegressionCase.select().count() == 1

    # A question cannot expect both a source and "no evidence".
    response = client.post(
        form["action"], data={"pack": "ops", "doc_id": "spool-overflow"}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 422
    assert "Should have said no evidence" in _soup(response).select_one("#cases .error").text
    client.post(f"/feedback/{not_helpful.id}/cases/{case.id}/delete")
    assert client.post(form["action"], data={"pack": "ops", "doc_id": "spool-overflow"}).status_code == 303
    with pytest.raises(Refused) as refused:
        regressions.record_no_evidence_case(users["Auditor"], Feedback.get_by_id(not_helpful.id))
    assert refused.value.reason == "conflicting_case"
    assert [c.kind for c in RegressionCase.select()] == ["expected_source"]


def test_a_case_of_one_kind_is_not_offered_next_to_a_case_of_the_other(not_helpful, client_as, users):
    """Recording "should have said no evidence" next to an expected source (or the other way round) is always
    refused: the page offered the button anyway, and a reviewer who pressed it learnt only then. It says instead
    what to remove first; the search stays, to check what the packs hold."""
    client = client_as("Auditor")
    spool = Document.get(Document.doc_id == "spool-overflow")
    regressions.record_regression_case(users["Auditor"], Feedback.get_by_id(not_helpful.id), spool.id)
    page = _soup(client.get(f"/feedback/{not_helpful.id}?q=spool"))
    assert page.select_one("#cases form.no-evidence-case") is None
    assert page.select_one("#cases .case-other-kind").text == (
        "To record that it should have said no evidence instead, remove its expected source first."
    )
    assert page.select("#cases .candidate form")  # more expected sources may still be recorded

    client.post(f"/feedback/{not_helpful.id}/cases/{RegressionCase.get().id}/delete")
    regressions.record_no_evidence_case(users["Auditor"], Feedback.get_by_id(not_helpful.id))
    page = _soup(client.get(f"/feedback/{not_helpful.id}?q=spool"))
    assert page.select(".candidate")  # the search still shows what the packs hold
    assert page.select("#cases .candidate form") == [] and page.select_one("#cases details.name-document") is None
    assert page.select_one("#cases .case-other-kind").text == (
        "To record an expected source instead, remove “Should have said no evidence” first."
    )


def test_review_list_and_csv_name_the_regression_cases(reviewed, client_as, users):
    regressions.record_no_evidence_case(users["Auditor"], reviewed["old"])
    regressions.record_regression_case(
        users["Auditor"], reviewed["mid"], Document.get(Document.doc_id == "lock-entries").id
    )
    spool = Document.get(Document.doc_id == "spool-overflow")
    passage = Passage.select().where(Passage.revision == spool.current_revision()).first()
    regressions.record_regression_case(users["Auditor"], reviewed["new"], spool.id, passage.id)
    client = client_as("AgentBuilder")
    items = {int(i["data-feedback"]): i for i in _soup(client.get("/feedback/")).select(".feedback-item")}
    assert items[reviewed["old"].id].select_one(".feedback-cases").text == (
        "Regression case: should have said no evidence"
    )
    assert items[reviewed["mid"].id].select_one(".feedback-cases").text == (
        "Regression case: expected source ops/lock-entries"
    )
    # a passage is named by the version it was recorded on, never by its internal id
    assert items[reviewed["new"].id].select_one(".feedback-cases").text == (
        "Regression case: expected source ops/spool-overflow (a passage of version 1)"
    )
    text = client.get("/feedback/export.csv").get_data(as_text=True).lstrip("\ufeff")
    cases = {row["feedback_id"]: row["regression_cases"] for row in csv.DictReader(io.StringIO(text))}
    assert cases == {
        str(reviewed["old"].id): "should have said no evidence",
        str(reviewed["mid"].id): "expected source ops/lock-entries",
        str(reviewed["new"].id): "expected source ops/spool-overflow (a passage of version 1)",
    }


def test_the_review_list_reads_its_cases_in_as_many_queries_for_12_answers_as_for_3(app, agents, users, client_as):
    """Why each case cannot be checked now is read for the whole page at once: the list's queries do not grow
    with the answers and cases it shows (the rule read up to four a case, twice a case, before)."""
    reviewer, acme = users["Auditor"], agents["acme"]
    spool = Document.get(Document.doc_id == "spool-overflow")
    locks = Document.get(Document.doc_id == "lock-entries")
    client = client_as("AgentBuilder")

    def queries_to_list(answers: int) -> list[str]:
        with statements_run(app.config["DATABASE"]) as run:
            page = _soup(client.get("/feedback/"))
        assert len(page.select(".feedback-item .feedback-cases")) == answers
        return run

    # Three answers whose cases cannot be checked now: the document, the agent and the grant went.
    _grant(acme, "ops", "other")
    gone = _rated(users, acme, "stale lock entries", ["incorrect"])
    regressions.record_regression_case(reviewer, gone, locks.id)
    editing.delete_document(locks, 1)
    orphan = _rated(users, agents["shared"], "spool requests pile up", ["incomplete"])
    regressions.record_regression_case(reviewer, orphan, spool.id)
    delete_agent(None, agents["shared"])
    revoked = _rated(users, acme, "renew the SSL client certificate", ["other"])
    regressions.record_regression_case(reviewer, revoked, Document.get(Document.doc_id == "certificate-expiry").id)
    _grant(acme, "ops")
    three = queries_to_list(3)
    shown = _soup(client.get("/feedback/")).select(".feedback-item .feedback-cases")
    assert sorted(c.text.split("cannot be checked: ")[1] for c in shown) == [
        "the agent is no longer granted the pack other)",
        "the agent was deleted)",
        "the expected document was deleted)",
    ]

    # Nine more that can: an expected document, one of its passages, "no evidence".
    passage = Passage.select().where(Passage.revision == spool.current_revision()).first()
    for n in range(9):
        rated = _rated(users, acme, f"spool question {n}", ["incorrect"])
        if n % 3 == 0:
            regressions.record_no_evidence_case(reviewer, rated)
        else:
            regressions.record_regression_case(reviewer, rated, spool.id, passage.id if n % 3 == 2 else None)
    twelve = queries_to_list(12)
    assert len(twelve) == len(three), "\n".join(twelve)


def test_no_case_without_an_agent(not_helpful, agents, users):
    delete_agent(None, agents["acme"])
    with pytest.raises(Refused) as refused:
        regressions.record_regression_case(
            users["Auditor"], Feedback.get_by_id(not_helpful.id), Document.get(Document.doc_id == "spool-overflow").id
        )
    assert refused.value.reason == "agent_deleted" and RegressionCase.select().count() == 0


def _grant(agent, *pack_slugs):
    update_agent(
        None,
        agent,
        name=agent.name,
        mode="preferred",
        company_name="Acme Test Co",
        instructions="",
        pack_slugs=list(pack_slugs),
    )


def test_eval_reports_whether_each_expected_document_is_in_the_top_8(not_helpful, agents, users):
    reviewer, member, acme = users["AgentBuilder"], users["Member"], agents["acme"]
    conversation = not_helpful.run.conversation

    def rated(question):
        return services.rate_answer(
            member, continue_conversation(member, conversation, acme, question), "not_helpful", ["incomplete"]
        )

    spool = Document.get(Document.doc_id == "spool-overflow")
    spool_passage = Passage.get_by_id(not_helpful.run.references().first().passage_id)
    assert spool_passage.revision.document_id == spool.id
    found = regressions.record_regression_case(reviewer, not_helpful, spool.id, spool_passage.id)
    missed = regressions.record_regression_case(reviewer, rated("karaoke antarctica horoscope"), spool.id)
    locks = Document.get(Document.doc_id == "lock-entries")
    gone = regressions.record_regression_case(reviewer, rated("stale lock entries"), locks.id)
    editing.delete_document(locks, 1)

    report = evaluate_regression_cases()
    outcomes = {o.case_id: o for o in report.outcomes}
    assert (outcomes[found.id].found, outcomes[found.id].rank, outcomes[found.id].passage_issued) == (True, 1, True)
    assert (outcomes[missed.id].found, outcomes[missed.id].rank, outcomes[missed.id].skipped) == (False, None, "")
    assert outcomes[gone.id].skipped == "the expected document was deleted"
    summary = report.summary()
    assert (summary["cases"], summary["found"], summary["missed"], summary["skipped"]) == (3, 1, 1, 1)
    text = "\n".join(report.as_text())
    assert "found at 1, passage issued" in text and "MISSED" in text and "cannot be checked (the expected" in text


def test_a_case_whose_pack_is_no_longer_granted_or_deleted_says_it_cannot_be_checked(
    not_helpful, agents, users, client_as
):
    """One rule (``regressions.why_unchecked``) for a case whose agent, pack, grant or document went: the
    review page and the list name it, and `cairn eval` reports it as not checked, never as a miss or a pass."""
    reviewer, member, acme = users["AgentBuilder"], users["Member"], agents["acme"]
    _grant(acme, "ops", "other")
    question = "How do I renew an expired SSL client certificate?"
    certificates = services.rate_answer(
        member, continue_conversation(member, not_helpful.run.conversation, acme, question), "not_helpful", ["other"]
    )
    revoked = regressions.record_regression_case(
        reviewer, certificates, Document.get(Document.doc_id == "certificate-expiry").id
    )
    in_ops = regressions.record_regression_case(
        reviewer, not_helpful, Document.get(Document.doc_id == "spool-overflow").id
    )
    assert [o.rank for o in evaluate_regression_cases().outcomes] == [1, 1]

    _grant(acme, "ops")  # the grant is removed
    ops = Pack.get(Pack.slug == "ops")
    delete_pack(None, ops, pack_contents(ops).generation)  # and the other case's pack deleted
    report = evaluate_regression_cases()
    outcomes = {o.case_id: o for o in report.outcomes}
    assert outcomes[revoked.id].skipped == "the agent is no longer granted the pack other"
    assert outcomes[in_ops.id].skipped == "the pack ops was deleted"
    assert all(o.rank is None and not o.passed for o in report.outcomes)
    assert (report.summary()["skipped"], report.summary()["missed"]) == (2, 0)
    text = "\n".join(report.as_text())
    assert "cannot be checked (the agent is no longer granted the pack other)" in text

    client = client_as("Auditor")
    shown = _soup(client.get(f"/feedback/{certificates.id}")).select_one(f'.case[data-case="{revoked.id}"]')
    assert shown.select_one(".case-unchecked").text == (
        "Cannot be checked now: the agent is no longer granted the pack other."
    )
    items = {int(i["data-feedback"]): i for i in _soup(client.get("/feedback/")).select(".feedback-item")}
    assert items[not_helpful.id].select_one(".feedback-cases").text == (
        "Regression case: expected source ops/spool-overflow (cannot be checked: the pack ops was deleted)"
    )

    _grant(acme, "other")  # the fix: grant the pack again
    assert next(o for o in evaluate_regression_cases().outcomes if o.case_id == revoked.id).rank == 1


def test_eval_checks_that_should_have_said_no_evidence_cases_now_get_no_evidence(app, not_helpful, agents, users):
    """Through the whole ask path, with no model even when one is configured; nothing is stored."""
    reviewer, member, acme = users["Auditor"], users["Member"], agents["acme"]
    answered = regressions.record_no_evidence_case(reviewer, not_helpful)  # the spool runbook answers it today
    off_topic = services.rate_answer(
        member,
        continue_conversation(member, not_helpful.run.conversation, acme, "karaoke antarctica horoscope"),
        "not_helpful",
        ["irrelevant_sources"],
    )
    said = regressions.record_no_evidence_case(reviewer, off_topic)
    shared = services.rate_answer(
        member, start_conversation(member, agents["shared"], "payroll gondola")[1], "not_helpful", ["other"]
    )
    orphan = regressions.record_no_evidence_case(reviewer, shared)
    delete_agent(None, agents["shared"])
    runs_before = Run.select().count()
    with FakeOpenAI() as fake:
        app.config.update(
            CAIRN_MODEL_BASE_URL=fake.base_url, CAIRN_MODEL_API_KEY="sk-test", CAIRN_MODEL_NAME="fake-gpt"
        )
        fake.reply(CANNOT_ANSWER)
        report = evaluate_regression_cases()
        app.config["CAIRN_MODEL_BASE_URL"] = None
        assert fake.requests == []
    assert Run.select().count() == runs_before
    outcomes = {o.case_id: o for o in report.outcomes}
    assert (outcomes[answered.id].kind, outcomes[answered.id].expected) == ("no_evidence", "no evidence")
    assert (outcomes[answered.id].said_no_evidence, outcomes[answered.id].passed) == (False, False)
    assert (outcomes[said.id].said_no_evidence, outcomes[said.id].passed) == (True, True)
    assert outcomes[orphan.id].skipped == "the agent was deleted"
    summary = report.summary()
    assert (summary["cases"], summary["passed"], summary["failed"], summary["skipped"]) == (3, 1, 1, 1)
    assert (summary["said_no_evidence"], summary["answered_instead_of_no_evidence"]) == (1, 1)
    assert (summary["found"], summary["missed"]) == (0, 0)
    text = "\n".join(report.as_text())
    answered_line = next(line for line in report.as_text() if f"case {answered.id} " in line)
    assert "ANSWERED" in answered_line and answered_line.endswith("expected: no evidence")
    assert "said no evidence " in text

    # The fix: the agent no longer searches the pack that only shares words with the question.
    update_agent(
        None,
        acme,
        name="Acme desk",
        mode="preferred",
        company_name="Acme Test Co",
        instructions="",
        pack_slugs=["other"],
    )
    assert next(o for o in evaluate_regression_cases().outcomes if o.case_id == answered.id).passed


def test_cairn_eval_runs_the_regression_cases_of_this_database(app, not_helpful, users, tmp_path):
    spool = Document.get(Document.doc_id == "spool-overflow")
    regressions.record_regression_case(users["Auditor"], not_helpful, spool.id)
    off_topic = services.rate_answer(
        users["Member"],
        continue_conversation(
            users["Member"], not_helpful.run.conversation, not_helpful.run.agent, "karaoke antarctica horoscope"
        ),
        "not_helpful",
        ["other"],
    )
    regressions.record_no_evidence_case(users["Auditor"], off_topic)
    # PYTHONPATH: the subprocess runs this checkout's code, whatever the installed package points at
    env = {
        **os.environ,
        "CAIRN_DATA_DIR": app.config["CAIRN_DATA_DIR"],
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH")])
        ),
    }
    env.pop("DATABASE_URL", None)
    if POSTGRES_URL:
        env["DATABASE_URL"] = POSTGRES_URL
    result = subprocess.run(
        [sys.executable, "-m", "portal.cli", "eval", "--regressions-only", "--json"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)["regressions"]
    assert (report["cases"], report["found"], report["missed"], report["top_k"]) == (2, 1, 0, 8)
    assert (report["passed"], report["said_no_evidence"]) == (2, 1)
    assert report["items"][0]["expected"] == "ops/spool-overflow" and report["items"][0]["rank"] == 1
    assert (report["items"][1]["kind"], report["items"][1]["said_no_evidence"]) == ("no_evidence", True)
    text = subprocess.run(
        [sys.executable, "-m", "portal.cli", "eval", "--regressions-only"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
    ).stdout
    assert "2 cases, 1 found in the agent's top 8, 0 missed, 1 said no evidence" in text


def test_cairn_eval_without_a_database_says_so(tmp_path):
    env = {**os.environ, "CAIRN_DATA_DIR": str(tmp_path / "nothing-here")}
    env.pop("DATABASE_URL", None)
    result = subprocess.run(
        [sys.executable, "-m", "portal.cli", "eval", "--regressions-only", "--json"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    assert "there is no database" in json.loads(result.stdout)["regressions_note"]
    assert not (Path(tmp_path) / "nothing-here" / "cairn.db").exists()
