"""Asking an agent: one path from the question to the stored run and its receipt.

The question is analysed once (``analysis.question_terms``); those terms build
the BM25 query over exactly the agent's granted packs (their statistics alone,
at most 3 passages per document) and, with the packs' own document
frequencies, weigh the evidence check in ``portal.answers.evidence``, which
decides whether there is evidence and which passages (at most 8) are issued
as numbered references. ``portal.answers.grounding`` then applies the agent's
mode, and the run is stored with its receipt (each issued passage exactly as
issued) — and, for a chat turn, its conversation — in one transaction, after
the answer, so the database is never locked while a model answers.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import re
import time
from dataclasses import dataclass

from flask import current_app

from portal.answers import citations, everyday, evidence, follow_up, question_type, written
from portal.answers.asked import months_asked
from portal.answers.grounding import Outcome, answer_question
from portal.answers.model_client import ChatClient
from portal.answers.references import Reference
from portal.config import ANSWER_MODEL
from portal.controls import shows_nothing
from portal.db import database, locking
from portal.errors import Refused, too_long
from portal.ingest import limits
from portal.ingest.markers import figure_markers
from portal.models import Agent, Conversation, Document, Figure, Pack, Passage, Run, RunReference, User, utcnow
from portal.runs.services import forget_documents_text
from portal.search import vocabulary
from portal.search.analysis import TermCache, question_terms, with_apostrophes
from portal.search.hits import SearchHit
from portal.search.service import search_packs

REFERENCES_PER_RUN = evidence.REFERENCES_PER_RUN
# The most identifiers of the turn before a follow-up is read about: a question listing hundreds asks about none.
MAX_SUBJECT = 4


def checked_question(question: str) -> str:
    question = (question or "").strip()
    if shows_nothing(question):
        raise Refused("empty_question", "Ask a question: the text was empty.")
    if len(question) > limits.MAX_QUESTION_CHARS:  # read at each call, as the page's maxlength is
        raise too_long("question_too_long", "A question", limits.MAX_QUESTION_CHARS, len(question))
    return question


def model_client() -> ChatClient | None:
    """The configured OpenAI-compatible model, or None for the built-in extractive answerer."""
    return ChatClient.configured(current_app.config, ANSWER_MODEL)


@dataclass
class Retrieval:
    """What an agent gets for a question: the verdict, the issued hits (best first), and the term weights."""

    # as read: about what the conversation was about when it leans on the turn before (``follow_up``), its
    # contractions with their apostrophes (``analysis.with_apostrophes``)
    question: str
    read_as: str  # the follow-up as read ("And the root cause (INC-9)?"), or ""
    choice: evidence.Choice
    hits: list[SearchHit]
    # for each hit, which of some days its document names: read once per set of days, by the evidence check and
    # by the answer alike (``_DocumentDays``)
    document_days: evidence.DaysInDocuments

    @property
    def issued(self) -> list[SearchHit]:
        return [self.hits[i] for i in self.choice.issued]

    def on_the_day(self, question: str) -> set[int]:
        """The numbers of the issued references whose documents name a day ``question`` asks about (an
        incident's day stands in its record): the answer tells of that day, not of another incident like it."""
        asked = set(evidence.days_asked(question))
        if not asked:
            return set()
        named = self.document_days(asked)
        return {n for n, i in enumerate(self.choice.issued, start=1) if named[i]}

    def in_months(self, question: str) -> dict[int, set[str]]:
        """For each issued reference's number, the months ``question`` names that its document is dated in (an
        incident by its opening, a review by its title): the answer tells of each month asked."""
        asked = set(months_asked(question))
        if not asked:
            return {}
        dated = _months_by_hit(self.hits, asked)
        return {n: dated[i] for n, i in enumerate(self.choice.issued, start=1) if dated[i]}


def retrieve(
    agent: Agent, question: str, packs: list[Pack] | None = None, tokenize=None, about: list[str] | None = None
) -> Retrieval:
    """Search the agent's granted packs (``packs``, when the caller has read them) and apply the evidence
    check; nothing is stored. ``about``: what its conversation was about so far (the identifiers of the turn
    before), which a follow-up asks about."""
    packs = list(agent.granted_packs()) if packs is None else packs
    about = about if about and follow_up.leans_on_the_one_before(question) else []
    read_as = follow_up.read_about(question, about) if about else ""
    question = with_apostrophes(read_as or question)
    terms = question_terms(question)
    synonyms = vocabulary.of_packs(packs).synonyms(question)
    tokenize = tokenize or TermCache()
    # the word after "how" that only says what is asked ("how often") is not searched, as the evidence check does not
    # weigh it; "What happened in INC-9?" is told under INC-9's "Summary": the heading is searched too, or the
    # passages of the record naming INC-9 most often (its header, its keywords) fill the three a document may give
    unsearched = evidence.unsearched_terms(question, tokenize)
    searched = [t for t in terms if t not in unsearched]
    if question_type.asks(question) == "summary":
        searched += _summary_terms()
    results = search_packs(packs, question, limit=evidence.CANDIDATES_PER_RUN, terms=searched, synonyms=synonyms)
    document_days = _DocumentDays(results.hits)
    likeness = everyday.Likeness(question)  # the embedding model reads the question and the hits once
    choice = evidence.choose(
        question,
        terms,
        results.passages,
        results.doc_freqs,
        results.hits,
        tokenize=tokenize,
        days_in_documents=document_days,
        months_in_documents=functools.partial(_months_by_hit, results.hits),
        everyday=likeness.is_everyday,
        like_passage=likeness.like_hits,
        synonyms=synonyms,
    )
    if about and choice.issued:
        choice.issued = _about_the_subject(results.hits, choice.issued, about)
    return Retrieval(question, read_as, choice, results.hits, document_days)


@functools.cache
def _summary_terms() -> list[str]:
    """The terms of the heading a record's summary stands under, analysed once."""
    return question_terms("summary")


def _about_the_subject(hits: list[SearchHit], issued: list[int], subject: list[str]) -> list[int]:
    """Of the ``issued`` hits, those of documents naming one of ``subject``, what the conversation was about (in a
    passage or in the title), when any does: "And the root cause?" after "What happened in INC-9?" is answered
    from INC-9's record, not from the root causes of other incidents."""
    revisions = sorted({hits[i].revision_id for i in issued})
    # each name's longest part, as a passage may write it: "ZTW_CRED_LOG-EXPOSURE" as table and field apart
    parts = [max(re.split(r"[-/ ]", name), key=len) for name in subject]
    query = Passage.select(Passage.revision, Passage.text).where(
        Passage.revision.in_(revisions) & functools.reduce(operator.or_, [Passage.text.contains(p) for p in parts])
    )
    named = {revision for revision, text in query.tuples() if any(evidence.names(text, n) for n in subject)}
    named |= {hits[i].revision_id for i in issued if any(evidence.names(hits[i].document_title, n) for n in subject)}
    return [i for i in issued if hits[i].revision_id in named] or issued


class _DocumentDays:
    """For each of ``hits``, which of some days the passages of its document name (an incident's date stands in its
    header), read once per set of days."""

    def __init__(self, hits: list[SearchHit]):
        self.hits = hits
        self.read: dict[frozenset[tuple[int, int]], list[set[tuple[int, int]]]] = {}

    def __call__(self, days: set[tuple[int, int]]) -> list[set[tuple[int, int]]]:
        key = frozenset(days)
        if key not in self.read:
            named = _days_by_revision({hit.revision_id for hit in self.hits}, days)
            self.read[key] = [named.get(hit.revision_id, set()) for hit in self.hits]
        return self.read[key]


def _months_by_hit(hits: list[SearchHit], months: set[str]) -> list[set[str]]:
    """For each hit, which of ``months`` its document is dated in: the first month its opening passage gives
    (``written.dated_month``: a review's title, an incident's "Opened" row). Not any month named there: a problem
    record's fix planned for April does not date it in April."""
    named: dict[int, set[str]] = {}
    if months:
        query = Passage.select(Passage.revision, Passage.text).where(
            Passage.revision.in_(sorted({hit.revision_id for hit in hits})) & (Passage.ordinal == 0)
        )
        for revision, text in query.tuples():
            named[revision] = {written.dated_month(text)} & months
    return [named.get(hit.revision_id, set()) for hit in hits]


def _days_by_revision(revisions: set[int], days: set[tuple[int, int]]) -> dict[int, set[tuple[int, int]]]:
    """Which of ``days`` the passages of each of ``revisions`` name, in one query."""
    if not revisions or not days:
        return {}
    naming = [Passage.text.contains(part) for month, day in sorted(days) for part in written.day_prefilters(month, day)]
    query = Passage.select(Passage.revision, Passage.text).where(
        Passage.revision.in_(sorted(revisions)) & functools.reduce(operator.or_, naming)
    )
    named: dict[int, set[tuple[int, int]]] = {}
    for revision, text in query.tuples():
        named.setdefault(revision, set()).update(day for day in written.days(text) if day in days)
    return named


def issued_hits(agent: Agent, question: str) -> list[SearchHit]:
    """The passages ``agent`` is given for ``question`` now, best first (none without evidence)."""
    return retrieve(agent, question).issued


@dataclass
class _Issued:
    """A reference as issued, with what the receipt keeps besides it."""

    reference: Reference
    document_id: str
    figures: list[dict]
    sha256: str  # of the revision's full text


@dataclass
class Answered:
    """A question answered by an agent, not yet stored: what ``ask`` records as a run."""

    outcome: Outcome
    issued: list[_Issued]
    searched: list[dict]  # the packs searched, {"slug", "title"}, as they were at the time
    timings: dict[str, float]
    absent_words: list[str]  # the question's words no searched passage contains
    evidence_gap: dict  # why there is no evidence besides those words (``evidence.Choice.gap``)
    read_as: str  # the follow-up as read (``follow_up``), or ""


def answer_for(agent: Agent, question: str, client: ChatClient | None, about: list[str] | None = None) -> Answered:
    """Retrieval over the agent's granted packs, the evidence check and the grounded answer, stored nowhere.

    ``ask`` stores what this returns; ``cairn eval``'s regression cases call it with no model. ``about``: what the
    conversation was about so far (``retrieve``).
    """
    started = time.perf_counter()
    tokenize = TermCache()  # shared: each text is analysed once per question
    packs = list(agent.granted_packs())
    retrieval = retrieve(agent, question, packs, tokenize, about)
    issued = _issue(retrieval.issued)
    retrieval_ms = _elapsed_ms(started)
    question = retrieval.question
    outcome = answer_question(
        agent.mode,
        question,
        agent.instructions,
        [i.reference for i in issued],
        no_evidence=not issued,
        client=client,
        tokenize=tokenize,
        weights=retrieval.choice.weights,
        synonyms=retrieval.choice.synonyms,
        on_the_day=functools.partial(retrieval.on_the_day, question),  # read only if it answers itself
        in_months=functools.partial(retrieval.in_months, question),
    )
    # the references numbered as the answer first cites them, the passages it does not cite after them
    numbers = citations.first_use(outcome.answer, [i.reference.n for i in issued])
    if any(old != new for old, new in numbers.items()):
        outcome.answer = citations.renumbered(outcome.answer, numbers)
        outcome.cited = sorted(numbers[n] for n in outcome.cited)
        issued = sorted(
            (
                dataclasses.replace(i, reference=dataclasses.replace(i.reference, n=numbers[i.reference.n]))
                for i in issued
            ),
            key=lambda i: i.reference.n,
        )
    timings = {"retrieval_ms": retrieval_ms}
    timings.update((k, v) for k, v in outcome.timings.items() if k != "total_ms")
    timings["answer_ms"] = outcome.timings.get("total_ms", 0.0)
    timings["total_ms"] = _elapsed_ms(started)
    return Answered(
        outcome,
        issued,
        [{"slug": p.slug, "title": p.title} for p in packs],
        timings,
        retrieval.choice.absent_words,
        retrieval.choice.gap(),
        retrieval.read_as,
    )


def ask(agent: Agent, user: User | None, question: str, conversation: Conversation | None = None) -> Run:
    """Answer ``question`` as ``agent`` for ``user`` (None: the command line) and store the run.

    ``conversation``: the chat the run is a turn of; an unsaved one is created
    with the run, in the same transaction (a conversation exists only once it
    has an answer). A question leaning on the turn before it is read as asking
    about what that turn was about (``follow_up``), and the run keeps how.
    """
    question = checked_question(question)
    about = _about_so_far(conversation) if conversation is not None and conversation.id is not None else None
    answered = answer_for(agent, question, model_client(), about)
    outcome = answered.outcome
    now = utcnow()
    with database().atomic():
        # Deleted while it answered: the run is stored as its runs are kept, naming it by slug and name.
        stored_agent = agent if _still_exists(agent) else None
        if conversation is not None:
            if stored_agent is None:
                conversation.agent = None
            if conversation.id is None:
                conversation.created_at = now
            conversation.updated_at = now
            conversation.save()
        run = Run.create(
            created_at=now,
            agent=stored_agent,
            agent_slug=agent.slug,
            agent_name=agent.name,
            user=user,
            question=question,
            answer=outcome.answer,
            status=outcome.status,
            mode=agent.mode,
            model=outcome.model,
            model_called=outcome.called_model,
            warnings=outcome.warnings,
            timings=answered.timings,
            cited=outcome.cited,
            answer_basis=outcome.basis,
            searched_packs=answered.searched,
            absent_words=answered.absent_words,
            evidence_gap=answered.evidence_gap,
            read_as=answered.read_as,
            conversation=conversation,
        )
        rows = [_receipt_row(run, item) for item in answered.issued]
        if rows:
            RunReference.insert_many(rows).execute()
            deleted = _deleted_meanwhile({row["document_pk"] for row in rows})
            if deleted:  # the deletion already forgot the receipts it found; this one was not stored yet
                forget_documents_text(deleted)
    return run


def _about_so_far(conversation: Conversation) -> list[str]:
    """What the conversation's last turn was about: the identifiers of its question as read (a follow-up's carry
    what it was read about, so a chain of them keeps the subject)."""
    last = conversation.turns(newest_first=True).first()
    return evidence.identifiers(last.read_as or last.question)[:MAX_SUBJECT] if last is not None else []


def _still_exists(agent: Agent) -> bool:
    """Whether ``agent`` is still stored, read in the receipt's transaction and kept so until it commits:
    a deletion committed while the model answered would make the run's reference to it fail."""
    return locking(Agent.select(Agent.id).where(Agent.id == agent.id), shared=True).first() is not None


def _deleted_meanwhile(document_pks: set[int]) -> list[int]:
    """Of the documents a receipt cites, those deleted (alone or with their pack) since they were searched.

    The live ones stay so until the receipt commits (``FOR SHARE`` on PostgreSQL, the write lock on
    SQLite), so a deletion either came first and is seen here, or comes after and forgets this receipt too.
    """
    live = locking(
        # By id, the order a pack's deletion locks its documents in (``packs.deletion``): two lockers of several
        # rows taking them in different orders can deadlock.
        Document.select(Document.id)
        .where(Document.id.in_(document_pks) & Document.deleted_at.is_null())
        .order_by(Document.id),
        shared=True,
    )
    return sorted(document_pks - {pk for (pk,) in live.tuples()})


def _issue(hits: list[SearchHit]) -> list[_Issued]:
    """Number the hits 1..n as references, each with its document's key and its figures.

    The hits were read from the database by the search; only figures, when a
    passage marks some, are read here. A reference lists each figure of its revision
    that the passage marks, once; a marker naming no figure of the revision (typed into
    a Markdown or text document) is the author's text, not a figure.
    """
    marked = {h.passage_id: figure_markers(h.text) for h in hits}
    revisions = {h.revision_id for h in hits if marked[h.passage_id]}
    figures = (
        {
            (f.revision_id, f.number): f.id
            for f in Figure.select(Figure.id, Figure.revision, Figure.number).where(Figure.revision.in_(revisions))
        }
        if revisions
        else {}
    )
    issued = []
    for n, hit in enumerate(hits, start=1):
        reference = Reference(
            n=n,
            passage_id=hit.passage_id,
            document_id=hit.document_pk,
            document_title=hit.document_title,
            pack=hit.pack,
            pack_title=hit.pack_title,
            version=hit.version,
            page=hit.page,
            heading_path=hit.heading_path,
            line_start=hit.line_start,
            line_end=hit.line_end,
            text=hit.text,
        )
        placed: dict[int, str] = {}  # each figure once, with its first marker's label
        for number, label in marked[hit.passage_id]:
            placed.setdefault(number, label)
        figure_rows = [
            {"number": number, "label": label, "figure_id": figures[(hit.revision_id, number)]}
            for number, label in placed.items()
            if (hit.revision_id, number) in figures
        ]
        issued.append(_Issued(reference, hit.document_id, figure_rows, hit.sha256))
    return issued


def _receipt_row(run: Run, item: _Issued) -> dict:
    ref = item.reference
    return {
        "run": run.id,
        "n": ref.n,
        "passage_id": ref.passage_id,
        "pack_slug": ref.pack,
        "pack_title": ref.pack_title,
        "document_pk": ref.document_id,
        "document_id": item.document_id,
        "document_title": ref.document_title,
        "version": ref.version,
        "page": ref.page,
        "heading_path": ref.heading_path,
        "line_start": ref.line_start,
        "line_end": ref.line_end,
        "text": ref.text,
        "figures": item.figures,
        "sha256": item.sha256,
    }


def _elapsed_ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 3)
