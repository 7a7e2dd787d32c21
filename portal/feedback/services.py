"""Ratings of chat answers, the review list of Not helpful ones, triage and regression cases.

The reasons, statuses and the note limit are defined here once; forms, pages,
the CSV export and the tests read them from here.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from dataclasses import dataclass
from math import ceil

from peewee import JOIN, IntegrityError
from playhouse.flask_utils import PaginatedQuery

from portal.db import database
from portal.errors import Refused
from portal.feedback.sorting import DEFAULT_SORT, heading_sort, ordering
from portal.models import (
    Agent,
    Company,
    Document,
    Feedback,
    FeedbackTriage,
    Pack,
    Passage,
    RegressionCase,
    Revision,
    Run,
    User,
    utcnow,
)

RATINGS = {"helpful": "Helpful", "not_helpful": "Not helpful"}
REASONS = {
    "incorrect": "Incorrect",
    "incomplete": "Incomplete",
    "irrelevant_sources": "Irrelevant sources",
    "outdated": "Outdated",
    "did_not_cite": "Did not cite",
    "other": "Other",
}
STATUSES = {"new": "new", "in_review": "in review", "resolved": "resolved", "wont_fix": "won't fix"}
# What a regression case expects of the agent's answer to its question, now.
CASE_KINDS = {"expected_source": "Expected source", "no_evidence": "Should have said no evidence"}
MAX_NOTE_CHARS = 2_000
PAGE_SIZE = 20
EXCERPT_CHARS = 240
REOPENED_NOTE = "The rating changed after review, so it is new again."


# --- Rating an answer -------------------------------------------------------------------


def checked_note(note: str | None, what: str = "A note") -> str:
    note = (note or "").replace("\r\n", "\n").strip()
    if len(note) > MAX_NOTE_CHARS:
        raise Refused(
            "note_too_long",
            f"{what} is at most {MAX_NOTE_CHARS:,} characters; this one has {len(note):,}. Nothing was saved.",
        )
    return note


def checked_rating(rating: str, reasons, note: str | None) -> tuple[str, list[str], str]:
    """(rating, reasons in their listed order, note); Not helpful needs a reason. Refused otherwise."""
    if rating not in RATINGS:
        raise Refused("bad_rating", "Rate the answer Helpful or Not helpful. Nothing was saved.")
    if rating == "helpful":
        return rating, [], ""
    chosen = {r for r in reasons if r}
    unknown = chosen - set(REASONS)
    if unknown:
        raise Refused(
            "bad_reason",
            f"Unknown reason {', '.join(sorted(unknown))!r}; choose among "
            f"{', '.join(r.lower() for r in REASONS.values())}. Nothing was saved.",
        )
    if not chosen:
        raise Refused("no_reason", "Choose at least one reason why the answer was not helpful. Nothing was saved.")
    return rating, [r for r in REASONS if r in chosen], checked_note(note)


def rate_answer(user: User, run: Run, rating: str, reasons=(), note: str | None = None) -> Feedback:
    """Save ``user``'s one rating of ``run`` (a second call changes it); refuse a bad one, saving nothing.

    A Not helpful rating whose content changes after a reviewer triaged it goes back to "new".
    """
    rating, reasons, note = checked_rating(rating, reasons, note)
    now = utcnow()
    with database().atomic():
        feedback = Feedback.get_or_none((Feedback.run == run.id) & (Feedback.user == user.id))
        if feedback is None:
            try:
                with database().atomic():
                    return Feedback.create(
                        run=run.id,
                        user=user.id,
                        rating=rating,
                        reasons=reasons,
                        note=note,
                        created_at=now,
                        updated_at=now,
                    )
            except IntegrityError:  # the same person rated in another request a moment ago
                feedback = Feedback.get((Feedback.run == run.id) & (Feedback.user == user.id))
        if (feedback.rating, feedback.reasons, feedback.note) == (rating, reasons, note):
            return feedback
        if rating == "not_helpful" and feedback.status != "new":
            feedback.status = "new"
            FeedbackTriage.create(
                feedback=feedback,
                status="new",
                note=REOPENED_NOTE,
                actor=user.id,
                actor_email=user.email,
                created_at=now,
            )
        feedback.rating, feedback.reasons, feedback.note, feedback.updated_at = (rating, reasons, note, now)
        feedback.save()
    return feedback


def rating_of(user: User, run: Run) -> Feedback | None:
    return Feedback.get_or_none((Feedback.run == run.id) & (Feedback.user == user.id))


# --- The review list ----------------------------------------------------------------------


@dataclass
class ReviewFilters:
    """The review list's filters that apply (``portal/feedback/forms.py`` reads them from the address)."""

    agent: str = ""
    reason: str = ""
    status: str = ""
    date_from: dt.date | None = None
    date_to: dt.date | None = None
    sort: str = DEFAULT_SORT  # one of SORTS

    def args(self, page: int | None = None, sort: str | None = None) -> dict[str, str]:
        """The filters and the order as query arguments (empty and default ones left out), for links that
        keep them; ``sort`` replaces the order."""
        sort = sort or self.sort
        out = {
            "agent": self.agent,
            "reason": self.reason,
            "status": self.status,
            "from": self.date_from.isoformat() if self.date_from else "",
            "to": self.date_to.isoformat() if self.date_to else "",
            "sort": "" if sort == DEFAULT_SORT else sort,
        }
        if page and page > 1:
            out["page"] = str(page)
        return {k: v for k, v in out.items() if v}

    @property
    def active(self) -> bool:
        """Whether any filter applies (the order filters nothing)."""
        return bool(self.agent or self.reason or self.status or self.date_from or self.date_to)

    def sorting(self, column: str) -> tuple[str, str]:
        """(the order a click on ``column``'s heading asks for, the heading's ``aria-sort``)."""
        return heading_sort(self.sort, column)


def review_query(filters: ReviewFilters):
    """Not helpful ratings matching ``filters``, in its order, with their run and rater."""
    rater = User.alias("rater")
    query = (
        Feedback.select(Feedback, Run, rater, Company)
        .join(Run, on=(Feedback.run == Run.id))
        .switch(Feedback)
        .join(rater, JOIN.LEFT_OUTER, on=(Feedback.user == rater.id), attr="user")
        .join(Company, JOIN.LEFT_OUTER, on=(rater.company == Company.id))
        .where(Feedback.rating == "not_helpful")
    )
    if filters.agent:
        query = query.where(Run.agent_slug == filters.agent)
    if filters.reason:
        query = query.where(Feedback.reasons.holds(filters.reason))
    if filters.status:
        query = query.where(Feedback.status == filters.status)
    if filters.date_from:
        query = query.where(Feedback.updated_at >= dt.datetime.combine(filters.date_from, dt.time()))
    if filters.date_to and filters.date_to < dt.date.max:  # nothing is rated after the last day there is
        query = query.where(
            Feedback.updated_at < dt.datetime.combine(filters.date_to + dt.timedelta(days=1), dt.time())
        )
    return query.order_by(*ordering(filters.sort, list(STATUSES)))


class ReviewPage(PaginatedQuery):
    """One page of the review list (``PAGE_SIZE`` items); a page past the end shows the last one."""

    def __init__(self, filters: ReviewFilters, page: int):
        query = review_query(filters)
        super().__init__(query, PAGE_SIZE, page=page)
        self.total = query.count()
        self.items = list(self.get_object_list())

    def get_page_count(self) -> int:
        return max(1, ceil(self.total / self.paginate_by))

    def get_page(self) -> int:
        return min(super().get_page(), self.get_page_count())

    @property
    def first(self) -> int:
        return (self.get_page() - 1) * self.paginate_by + 1 if self.total else 0

    @property
    def last(self) -> int:
        return min(self.get_page() * self.paginate_by, self.total)


def agents_with_feedback() -> list[tuple[str, str]]:
    """(slug, name) of every agent with a Not helpful answer, deleted agents included (runs keep both)."""
    rows = (
        Run.select(Run.agent_slug, Run.agent_name)
        .join(Feedback, on=(Feedback.run == Run.id))
        .where(Feedback.rating == "not_helpful")
        .distinct()
        .tuples()
    )
    names: dict[str, str] = {}
    for slug, name in rows:
        names.setdefault(slug, name)
    return sorted(names.items(), key=lambda item: item[1].lower())


def answer_excerpt(answer: str) -> str:
    line = " ".join(answer.split())
    if len(line) <= EXCERPT_CHARS:
        return line
    cut = line[:EXCERPT_CHARS]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut) + " …"


def reason_labels(feedback: Feedback) -> list[str]:
    return [REASONS.get(r, r) for r in feedback.reasons]


CSV_COLUMNS = (
    "feedback_id",
    "rated_at_utc",
    "agent",
    "agent_name",
    "question",
    "answer",
    "reasons",
    "note",
    "rated_by",
    "company",
    "status",
    "reviewer_note",
    "reviewed_by",
    "reviewed_at_utc",
    "run_id",
    "regression_cases",
)


def export_csv(filters: ReviewFilters) -> str:
    """Every item matching ``filters`` (not only one page) as CSV, one row per rating."""
    items = list(review_query(filters))
    cases = cases_by_feedback(items)
    reviewer_ids = {item.reviewed_by_id for item in items if item.reviewed_by_id}
    reviewers = dict(User.select(User.id, User.email).where(User.id.in_(reviewer_ids)).tuples()) if reviewer_ids else {}
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for item in items:
        rater = item.user if item.user_id else None
        writer.writerow(
            [
                _csv_cell(value)
                for value in (
                    item.id,
                    _iso(item.updated_at),
                    item.run.agent_slug,
                    item.run.agent_name,
                    item.run.question,
                    item.run.answer,
                    "; ".join(reason_labels(item)),
                    item.note,
                    rater.email if rater else "",
                    rater.company.name if rater and rater.company_id else "",
                    STATUSES.get(item.status, item.status),
                    item.reviewer_note,
                    reviewers.get(item.reviewed_by_id, ""),
                    _iso(item.reviewed_at),
                    item.run_id,
                    "; ".join(case_summary(case) for case in cases.get(item.id, [])),
                )
            ]
        )
    return out.getvalue()


def _csv_cell(value) -> str:
    """Text that a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@`` …) is prefixed with ``'``."""
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _iso(moment: dt.datetime | None) -> str:
    return moment.replace(microsecond=0).isoformat() if moment else ""


# --- Triage ---------------------------------------------------------------------------------


def triage(actor: User, feedback: Feedback, status: str, note: str | None) -> Feedback:
    """Set the status and reviewer note; every change is kept in the history with who and when."""
    if status not in STATUSES:
        raise Refused("bad_status", f"The status is one of: {', '.join(STATUSES.values())}. Nothing was saved.")
    note = checked_note(note, "A reviewer note")
    if (feedback.status, feedback.reviewer_note) == (status, note):
        return feedback
    now = utcnow()
    with database().atomic():
        feedback.status, feedback.reviewer_note, feedback.reviewed_by, feedback.reviewed_at = (
            status,
            note,
            actor.id,
            now,
        )
        feedback.save(only=[Feedback.status, Feedback.reviewer_note, Feedback.reviewed_by, Feedback.reviewed_at])
        FeedbackTriage.create(
            feedback=feedback, status=status, note=note, actor=actor.id, actor_email=actor.email, created_at=now
        )
    return feedback


def triage_history(feedback: Feedback) -> list[FeedbackTriage]:
    return list(
        FeedbackTriage.select()
        .where(FeedbackTriage.feedback == feedback)
        .order_by(FeedbackTriage.created_at.desc(), FeedbackTriage.id.desc())
    )


# --- Regression cases -------------------------------------------------------------------------


def _agent_to_check(run: Run) -> Agent:
    agent = Agent.get_or_none(Agent.id == run.agent_id) if run.agent_id else None
    if agent is None:
        raise Refused(
            "agent_deleted",
            f"The agent {run.agent_name!r} was deleted, so there is no agent to run "
            "this question against. Nothing was saved.",
        )
    return agent


def _refuse_if_other_kind(feedback: Feedback, kind: str) -> None:
    """A question cannot both expect a source and expect "no evidence": the reviewer removes one first."""
    other = RegressionCase.select().where((RegressionCase.feedback == feedback) & (RegressionCase.kind != kind)).first()
    if other is not None:
        raise Refused(
            "conflicting_case",
            f"This answer already has a case of the kind "
            f"“{CASE_KINDS[other.kind]}”; remove it first. Nothing was saved.",
        )


def record_regression_case(
    actor: User, feedback: Feedback, document_pk: int, passage_id: int | None = None
) -> RegressionCase:
    """Record that the answer's question should have found this document (or this passage of it)."""
    run = feedback.run
    agent = _agent_to_check(run)
    document = Document.get_or_none((Document.id == document_pk) & Document.deleted_at.is_null())
    if document is None:
        raise Refused("no_document", "That document does not exist (any more). Nothing was saved.")
    passage = None
    if passage_id is not None:
        passage = (
            Passage.select(Passage, Revision)
            .join(Revision)
            .where(
                (Passage.id == passage_id)
                & (Revision.document == document)
                & (Revision.version == document.current_version)
            )
            .first()
        )
        if passage is None:
            raise Refused("no_passage", "That passage is not in the document's current text. Nothing was saved.")
    duplicate = RegressionCase.get_or_none(
        (RegressionCase.feedback == feedback)
        & (RegressionCase.document_pk == document.id)
        & (RegressionCase.passage_id.is_null() if passage is None else RegressionCase.passage_id == passage.id)
    )
    if duplicate is not None:
        return duplicate
    _refuse_if_other_kind(feedback, "expected_source")
    return RegressionCase.create(
        feedback=feedback,
        agent=agent,
        agent_slug=agent.slug,
        question=run.question,
        kind="expected_source",
        pack_slug=document.pack.slug,
        document_pk=document.id,
        document_id=document.doc_id,
        document_title=document.title,
        passage_id=passage.id if passage else None,
        passage_version=passage.revision.version if passage else None,
        created_by=actor.id,
    )


def record_no_evidence_case(actor: User, feedback: Feedback) -> RegressionCase:
    """Record that nothing in the agent's packs answers the question: its answer should say "no evidence"."""
    run = feedback.run
    agent = _agent_to_check(run)
    duplicate = RegressionCase.get_or_none(
        (RegressionCase.feedback == feedback) & (RegressionCase.kind == "no_evidence")
    )
    if duplicate is not None:
        return duplicate
    _refuse_if_other_kind(feedback, "no_evidence")
    return RegressionCase.create(
        feedback=feedback,
        agent=agent,
        agent_slug=agent.slug,
        question=run.question,
        kind="no_evidence",
        created_by=actor.id,
    )


def case_summary(case: RegressionCase) -> str:
    """One line for the review list and the CSV: what the case expects."""
    if case.kind == "no_evidence":
        return CASE_KINDS["no_evidence"].lower()
    passage = f" (passage {case.passage_id})" if case.passage_id is not None else ""
    return f"expected source {case.pack_slug}/{case.document_id}{passage}"


def cases_by_feedback(items: list[Feedback]) -> dict[int, list[RegressionCase]]:
    """The regression cases recorded from each of ``items``, oldest first."""
    ids = [item.id for item in items]
    cases: dict[int, list[RegressionCase]] = {}
    if ids:
        for case in (
            RegressionCase.select()
            .where(RegressionCase.feedback.in_(ids))
            .order_by(RegressionCase.created_at, RegressionCase.id)
        ):
            cases.setdefault(case.feedback_id, []).append(case)
    return cases


def document_by_name(pack_slug: str, doc_id: str) -> Document:
    """The live document ``doc_id`` of pack ``pack_slug``, for naming an expected document by hand."""
    document = (
        Document.select()
        .join(Pack)
        .where(
            (Pack.slug == (pack_slug or "").strip())
            & (Document.doc_id == (doc_id or "").strip())
            & Document.deleted_at.is_null()
        )
        .first()
    )
    if document is None:
        raise Refused(
            "no_document",
            f"There is no document {doc_id.strip()!r} in the pack {pack_slug.strip()!r}. Nothing was saved.",
        )
    return document


def regression_cases_of(feedback: Feedback) -> list[RegressionCase]:
    return list(
        RegressionCase.select()
        .where(RegressionCase.feedback == feedback)
        .order_by(RegressionCase.created_at, RegressionCase.id)
    )


def passages_of(cases: list[RegressionCase]) -> dict[int, Passage]:
    """The recorded passages that still exist, by id, to say where each one is."""
    ids = [c.passage_id for c in cases if c.passage_id is not None]
    return {p.id: p for p in Passage.select().where(Passage.id.in_(ids))} if ids else {}


def delete_regression_case(case: RegressionCase) -> None:
    RegressionCase.delete().where(RegressionCase.id == case.id).execute()
