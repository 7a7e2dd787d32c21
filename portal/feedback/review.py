"""The review list of Not helpful ratings: its filters, pages and CSV export."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import lru_cache

from peewee import JOIN

from portal.answers.grounding import writes_markdown
from portal.csv_export import csv_text
from portal.db import KeptSelect
from portal.documents.render import answer_text
from portal.feedback.regressions import case_summaries, cases_by_feedback
from portal.feedback.services import REASONS, STATUSES
from portal.feedback.sorting import DEFAULT_SORT, heading_sort, ordering
from portal.models import Company, Feedback, Run, User
from portal.paging import ListPage

PAGE_SIZE = 20
EXCERPT_CHARS = 240


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


class ReviewPage(ListPage):
    """One page of the review list (``PAGE_SIZE`` items); a page past the end shows the last one."""

    def __init__(self, filters: ReviewFilters, page: int):
        super().__init__(review_query(filters), PAGE_SIZE, page)


def agents_with_feedback() -> list[tuple[str, str]]:
    """(slug, name) of every agent with a Not helpful answer, deleted agents included (runs keep both)."""
    names: dict[str, str] = {}
    for slug, name in _agents_rated_not_helpful.rows():
        names.setdefault(slug, name)
    return sorted(names.items(), key=lambda item: item[1].lower())


# Every view of the review list offers these agents in its filter.
_agents_rated_not_helpful = KeptSelect(
    lambda: (
        Run.select(Run.agent_slug, Run.agent_name)
        .join(Feedback, on=(Feedback.run == Run.id))
        .where(Feedback.rating == "not_helpful")
        .distinct()
        .tuples()
    )
)


def answer_excerpt(run: Run) -> str:
    """The run's answer as the chat shows it (no Markdown syntax), cut at a word after ``EXCERPT_CHARS``."""
    return _excerpt(run.answer, writes_markdown(run.model))


# Every visit of a review page renders its 20 answers' Markdown (about a millisecond each); a stored
# answer never changes, so the same text gives the same excerpt.
@lru_cache(maxsize=1024)
def _excerpt(answer: str, markdown: bool) -> str:
    line = answer_text(answer, markdown)
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


def export_csv(reader: User, filters: ReviewFilters) -> str:
    """Every item matching ``filters`` (not only one page) as CSV for ``reader``, one row per rating."""
    items = list(review_query(filters))
    cases = cases_by_feedback(items)
    summaries = case_summaries(reader, (case for listed in cases.values() for case in listed))
    reviewer_ids = {item.reviewed_by_id for item in items if item.reviewed_by_id}
    reviewers = dict(User.select(User.id, User.email).where(User.id.in_(reviewer_ids)).tuples()) if reviewer_ids else {}
    rows = []
    for item in items:
        rater = item.user if item.user_id else None
        rows.append(
            (
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
                "; ".join(summaries[case.id] for case in cases.get(item.id, [])),
            )
        )
    return csv_text(CSV_COLUMNS, rows)


def _iso(moment: dt.datetime | None) -> str:
    return moment.replace(microsecond=0).isoformat() if moment else ""
