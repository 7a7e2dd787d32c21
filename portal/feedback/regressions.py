"""Regression cases a reviewer records from a Not helpful answer: what the agent's answer to its question should do."""

from __future__ import annotations

from collections.abc import Iterable

from portal import access
from portal.db import database, locking
from portal.errors import Refused
from portal.models import (
    Agent,
    AgentGrant,
    Document,
    Feedback,
    Pack,
    Passage,
    RegressionCase,
    Revision,
    Run,
    User,
)

# What a regression case expects of the agent's answer to its question, now.
CASE_KINDS = {"expected_source": "Expected source", "no_evidence": "Should have said no evidence"}


def _agent_to_check(run: Run) -> Agent:
    """The run's agent, which the case will run against; ``Refused`` when it was deleted.

    Read again in the case's transaction, and kept until it commits (``FOR SHARE`` on PostgreSQL, the write
    lock on SQLite): a deletion committed after the first read made the case's reference to the agent fail
    (a 500). A deletion either comes first and is refused here, or waits and leaves the case its slug."""
    agent = locking(Agent.select().where(Agent.id == run.agent_id), shared=True).first() if run.agent_id else None
    if agent is None:
        raise Refused(
            "agent_deleted",
            f"The agent {run.agent_name!r} was deleted, so there is no agent to run "
            "this question against. Nothing was saved.",
        )
    return agent


def _grants(agent_ids: Iterable[int], pack_ids: Iterable[int]):
    """The grants of any of the packs to any of the agents, as a query: a case may expect only a document of a
    pack its agent is granted."""
    return AgentGrant.select().where(AgentGrant.agent.in_(list(agent_ids)) & AgentGrant.pack.in_(list(pack_ids)))


def _grant(agent: Agent, pack_id: int):
    """The agent's grant of the pack, as a query."""
    return _grants([agent.id], [pack_id])


def _refuse_unless_granted(agent: Agent, document: Document) -> None:
    """A case names only a document of a pack its agent is granted: `cairn eval` searches the agent's packs,
    so any other expectation could never be met. Read in the case's transaction with the document and the
    grant kept until it commits (``FOR SHARE``): a pack deleted or a grant removed meanwhile is either refused
    here or waits, and the case then says it cannot be checked (``why_unchecked``)."""
    fresh = locking(Document.select().where(Document.id == document.id), shared=True).first()
    if fresh is None or fresh.is_deleted:
        pack = Pack.get_or_none(Pack.id == document.pack_id)
        gone = f"its pack {pack.slug} was deleted" if pack is None or pack.is_deleted else "it was deleted"
        raise Refused("no_document", f"The document {document.doc_id} no longer exists: {gone}. Nothing was saved.")
    if locking(_grant(agent, fresh.pack_id), shared=True).first() is None:
        raise Refused(
            "pack_not_granted",
            f"{agent.name} is not granted the pack {fresh.pack.slug}, so a case cannot expect its document "
            f"{fresh.doc_id}: grant the pack to the agent first, or name a document of its packs. Nothing was saved.",
        )


def unchecked_reasons(cases: Iterable[RegressionCase]) -> dict[int, str | None]:
    """Why `cairn eval` cannot check each of ``cases`` now, by case id (None: it can): its agent, the pack it
    names, the agent's grant of that pack or the expected document went since it was recorded. The one rule
    the review page, the list, the CSV and `cairn eval` read; three queries however many cases (a page's)."""
    cases = list(cases)
    agent_ids = {case.agent_id for case in cases if case.agent_id}
    live_agents = (
        {agent_id for (agent_id,) in Agent.select(Agent.id).where(Agent.id.in_(agent_ids)).tuples()}
        if agent_ids
        else set()
    )
    document_pks = {case.document_pk for case in cases if case.agent_id in live_agents and case.kind != "no_evidence"}
    documents = (
        {d.id: d for d in Document.select(Document, Pack).join(Pack).where(Document.id.in_(document_pks))}
        if document_pks
        else {}
    )
    pack_ids = {document.pack_id for document in documents.values()}
    granted = {(grant.agent_id, grant.pack_id) for grant in _grants(live_agents, pack_ids)} if pack_ids else set()
    return {case.id: _why_unchecked(case, live_agents, documents, granted) for case in cases}


def _why_unchecked(
    case: RegressionCase, live_agents: set[int], documents: dict[int, Document], granted: set[tuple[int, int]]
) -> str | None:
    """``unchecked_reasons``' rule for one case, given what it read for all of them."""
    if case.agent_id not in live_agents:
        return "the agent was deleted"
    if case.kind == "no_evidence":
        return None
    document = documents.get(case.document_pk)
    if document is None or document.pack.is_deleted:
        return f"the pack {case.pack_slug} was deleted"
    if document.is_deleted:
        return "the expected document was deleted"
    if (case.agent_id, document.pack_id) not in granted:
        return f"the agent is no longer granted the pack {case.pack_slug}"
    return None


def why_unchecked(case: RegressionCase) -> str | None:
    """Why `cairn eval` cannot check ``case`` now (None: it can), by ``unchecked_reasons``."""
    return unchecked_reasons([case])[case.id]


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
    _agent_to_check(feedback.run)  # a deleted agent is the first thing to say (checked again when recording)
    document = Document.get_or_none((Document.id == document_pk) & Document.deleted_at.is_null())
    # a document the reviewer may not read is refused as a missing one: its title, its sections and whether it
    # exists stay hidden (the case would show them to every reviewer)
    if document is None or not access.may_read_document(actor, document):
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
    return _recorded(
        actor,
        feedback,
        "expected_source",
        document,
        (RegressionCase.document_pk == document.id)
        & (RegressionCase.passage_id.is_null() if passage is None else RegressionCase.passage_id == passage.id),
        pack_slug=document.pack.slug,
        document_pk=document.id,
        document_id=document.doc_id,
        document_title=document.title,
        passage_id=passage.id if passage else None,
        passage_version=passage.revision.version if passage else None,
    )


def record_no_evidence_case(actor: User, feedback: Feedback) -> RegressionCase:
    """Record that nothing in the agent's packs answers the question: its answer should say "no evidence"."""
    return _recorded(actor, feedback, "no_evidence", None, RegressionCase.kind == "no_evidence")


def _recorded(actor: User, feedback: Feedback, kind: str, document: Document | None, same, **expects) -> RegressionCase:
    """The answer's case that ``same`` matches if there is one (recording twice records once), else a new
    case of ``kind`` with what it ``expects`` (``document``: the one it names, in a pack its agent is granted).

    The answer's feedback row is locked first, so two reviewers recording at once decide one after the
    other: the second sees the first one's case (a double click recorded it twice, and an expected source
    and "no evidence" could both be stored)."""
    with database().atomic():
        locking(Feedback.select(Feedback.id).where(Feedback.id == feedback.id)).first()
        agent = _agent_to_check(feedback.run)
        duplicate = RegressionCase.get_or_none((RegressionCase.feedback == feedback) & same)
        if duplicate is not None:
            return duplicate
        _refuse_if_other_kind(feedback, kind)
        if document is not None:
            _refuse_unless_granted(agent, document)
        return RegressionCase.create(
            feedback=feedback,
            agent=agent,
            agent_slug=agent.slug,
            question=feedback.run.question_as_read,
            kind=kind,
            created_by=actor.id,
            **expects,
        )


# What a case expecting a document its reader may not read shows instead of the document's pack, id and title.
HIDDEN_SOURCE = "a document you may not read"


def hidden_from(reader: User, cases: Iterable[RegressionCase]) -> set[int]:
    """The ids of ``cases`` expecting a document ``reader`` may not read: another reviewer recorded it, and its
    title, id and sections stay hidden from this one (the documents read in one query)."""
    cases = [case for case in cases if case.document_pk is not None]
    if not cases:
        return set()
    documents = {
        d.id: d
        for d in Document.select(Document, Pack).join(Pack).where(Document.id.in_({case.document_pk for case in cases}))
    }
    return {
        case.id
        for case in cases
        if case.document_pk not in documents or not access.may_read_document(reader, documents[case.document_pk])
    }


def case_summaries(reader: User, cases: Iterable[RegressionCase]) -> dict[int, str]:
    """One line for each of ``cases`` by case id, for the review list and the CSV of ``reader``: what the case
    expects, and why it cannot be checked now (the reasons read for all of them at once)."""
    cases = list(cases)
    reasons = unchecked_reasons(cases)
    hidden = hidden_from(reader, cases)
    return {case.id: _case_summary(case, reasons[case.id], case.id in hidden) for case in cases}


def _case_summary(case: RegressionCase, unchecked: str | None, hidden: bool) -> str:
    unchecked = f" (cannot be checked: {unchecked})" if unchecked else ""
    if case.kind == "no_evidence":
        return CASE_KINDS["no_evidence"].lower() + unchecked
    if hidden:
        return f"expected source: {HIDDEN_SOURCE}{unchecked}"
    # a passage's id means nothing to a reviewer; its version says which text the case was recorded on
    passage = f" (a passage of version {case.passage_version})" if case.passage_id is not None else ""
    return f"expected source {case.pack_slug}/{case.document_id}{passage}{unchecked}"


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


def document_by_name(reader: User, pack_slug: str, doc_id: str) -> Document:
    """The live document ``doc_id`` of pack ``pack_slug``, for naming an expected document by hand; one ``reader``
    may not read is refused as one that does not exist."""
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
    if document is None or not access.may_read_document(reader, document):
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
