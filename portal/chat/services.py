"""Conversations, asking within one, an answer's sources and the documents it cited.

A chat turn is a run made by ``portal.runs.ask.ask`` (same retrieval,
grounding and receipt as the try page), stored with its conversation in the
one transaction that stores the run, after the answer, so the database is
never locked while the model answers.
"""

from __future__ import annotations

from dataclasses import dataclass

from flask import has_request_context, request
from markupsafe import Markup
from peewee import Tuple

from portal import access
from portal.agents.services import grants_by_agent
from portal.db import KeptSelect
from portal.documents.viewer import passages_of
from portal.errors import NotFound
from portal.models import Agent, Conversation, Document, Feedback, Pack, Passage, Revision, Run, RunReference, User
from portal.runs.ask import ask as ask_agent
from portal.runs.ask import checked_question
from portal.runs.services import Source, answer_html, run_sources

TITLE_CHARS = 80
SIDEBAR_CONVERSATIONS = 20
TURNS_PER_PAGE = 50  # the latest turns a conversation shows; "Show earlier" loads the ones before, as many again


def offered_agents(user: User) -> list[Agent]:
    return access.offered_agents_by_name(user)


def agents_searching_elsewhere(run: Run, agents: list[Agent]) -> list[Agent]:
    """Of ``agents`` (the member's others), those granted a pack ``run`` did not search: one that searches only
    packs already searched would find no evidence either, so "ask another agent" does not offer it."""
    if not agents:
        return []
    searched = {pack["slug"] for pack in run.searched_packs}
    granted = _grants_of(agents)
    return [agent for agent in agents if {pack.slug for pack in granted[agent.id]} - searched]


def _grants_of(agents: list[Agent]) -> dict[int, list[Pack]]:
    """``agents``' granted packs, read once per request: a page shows many "no evidence" turns. Kept on the
    request, not on ``g``: an application context may outlive several requests."""
    kept = request.environ if has_request_context() else {}
    key = "cairn.grants_of:" + ",".join(str(agent.id) for agent in agents)
    if key not in kept:
        kept[key] = grants_by_agent(agents)
    return kept[key]


def conversations_of(user: User, limit: int | None = None) -> list[Conversation]:
    """The member's conversations, latest first; the first ``limit`` of them for the sidebar of every chat page."""
    if limit is not None:
        return _latest_conversations.rows(user.id, limit)
    return list(_conversations_latest_first(user.id))


def _conversations_latest_first(user_id: int):
    return (
        Conversation.select()
        .where(Conversation.user == user_id)
        .order_by(Conversation.updated_at.desc(), Conversation.id.desc())
    )


_latest_conversations = KeptSelect(lambda user_id, limit: _conversations_latest_first(user_id).limit(limit))


def conversation_title(question: str) -> str:
    """The first question, on one line, cut at a word boundary to at most 80 characters."""
    line = " ".join(question.split())
    if len(line) <= TITLE_CHARS:
        return line
    cut = line[: TITLE_CHARS - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut) + "…"


def start_conversation(user: User, agent: Agent, question: str) -> tuple[Conversation, Run]:
    """Ask the first question; the conversation exists only once there is an answer."""
    question = checked_question(question)
    conversation = Conversation(
        user=user, agent=agent, agent_slug=agent.slug, agent_name=agent.name, title=conversation_title(question)
    )
    run = ask_agent(agent, user, question, conversation=conversation)
    return conversation, run


def continue_conversation(user: User, conversation: Conversation, agent: Agent, question: str) -> Run:
    return ask_agent(agent, user, question, conversation=conversation)


def agent_still_offered(conversation: Conversation, offered: list[Agent]) -> Agent | None:
    """The conversation's agent if the member may still ask it: it exists and is among ``offered``, the
    member's ``offered_agents`` (which every caller has read already for the page)."""
    if conversation.agent_id is None:
        return None
    return next((agent for agent in offered if agent.slug == conversation.agent_slug), None)


@dataclass
class Turn:
    """One question and its answer as the chat shows them."""

    run: Run
    answer_html: Markup
    feedback: Feedback | None


@dataclass
class TurnPage:
    """Consecutive turns of a conversation, oldest first, as one page of the chat shows them."""

    turns: list[Turn]
    before: int | None  # the run these turns come before (``?before=``); None: they are the latest
    earlier: int | None  # the ``before`` of the page of older turns, when there are any


def turn_page(user: User, conversation: Conversation, sources_url, before: int | None = None) -> TurnPage:
    """The latest ``TURNS_PER_PAGE`` turns of ``conversation``, or those just before its run ``before``.

    A keyset on the turns' order (``created_at``, ``id``; an index serves it): a page reads only its
    own rows however long the conversation is, and turns asked meanwhile do not shift older pages.
    ``sources_url(run)`` is where an answer's markers point.
    """
    if before is None:
        runs = _latest_turns.rows(conversation.id, TURNS_PER_PAGE + 1)
    else:
        cursor = Run.get_or_none((Run.id == before) & (Run.conversation == conversation.id))
        if cursor is None:
            raise NotFound(before)
        query = conversation.turns(newest_first=True)
        query = query.where(Tuple(Run.created_at, Run.id) < Tuple(cursor.created_at, cursor.id))
        runs = list(query.limit(TURNS_PER_PAGE + 1))
    shown = runs[:TURNS_PER_PAGE][::-1]
    earlier = shown[0].id if len(runs) > TURNS_PER_PAGE else None
    return TurnPage(_turns(user, shown, sources_url), before, earlier)


# Each conversation page shows its latest turns.
_latest_turns = KeptSelect(
    lambda conversation_id, limit: Conversation(id=conversation_id).turns(newest_first=True).limit(limit)
)


def new_turn(run: Run, sources_url) -> Turn:
    """A turn just asked, as the chat appends it (not rated yet)."""
    return Turn(run, answer_html(run, sources_url(run)), None)


def cursor_showing(run: Run) -> int | None:
    """The ``before`` of a page that shows the turn ``run``; None when it is among the latest turns."""
    newer = _newer_turns.rows(run.conversation_id, run.created_at, run.id, TURNS_PER_PAGE)
    return newer[0].id if len(newer) == TURNS_PER_PAGE else None


# Each source page links back to its answer's turn.
_newer_turns = KeptSelect(
    lambda conversation_id, created_at, run_id, limit: (
        Conversation(id=conversation_id)
        .turns()
        .select(Run.id)
        .where(Tuple(Run.created_at, Run.id) > Tuple(created_at, run_id))
        .limit(limit)
    )
)


def _turns(user: User, runs: list[Run], sources_url) -> list[Turn]:
    ratings = (
        {f.run_id: f for f in _ratings_in_conversation.rows(user.id, runs[0].conversation_id, *_id_range(runs))}
        if runs
        else {}
    )
    return [Turn(run, answer_html(run, sources_url(run)), ratings.get(run.id)) for run in runs]


def _id_range(runs: list[Run]) -> tuple[int, int]:
    ids = [r.id for r in runs]
    return min(ids), max(ids)


# The member's ratings of a page of turns: by the range of their ids within the conversation, not by a list
# of them, so the SQL has one shape and is written once (a rating in the range but not on the page is unused).
_ratings_in_conversation = KeptSelect(
    lambda user_id, conversation_id, low, high: (
        Feedback.select()
        .join(Run, on=(Feedback.run == Run.id))
        .where((Feedback.user == user_id) & (Run.conversation == conversation_id) & Feedback.run.between(low, high))
    )
)


# --- An answer's source page and the documents it cited ------------------------------


@dataclass
class CitedSource:
    source: Source
    can_open: bool  # the document still exists and this member may open it from here


def cited_sources(user: User, run: Run) -> list[CitedSource]:
    """The passages the answer cited, as issued, each with whether its document can be opened."""
    cited = [s for s in run_sources(run, user) if s.cited]
    return [CitedSource(s, s.live_document is not None and access.member_role_admitted(s.live_document)) for s in cited]


@dataclass
class CitedDocument:
    """A document an answer cited, in the revision shown: the one cited while it is kept and
    readable, else (or when asked for) the current one; with where the cited passage is in it."""

    run: Run
    reference: RunReference
    document: Document
    revision: Revision
    passages: list[Passage]
    highlighted: Passage | None  # the cited passage in the revision shown, when it is there
    cited_revision: str  # "kept" (can be shown), "purged", or "closed" (its own reader roles leave members out)

    @property
    def changed(self) -> bool:
        return self.reference.version != self.document.current_version

    @property
    def shows_cited(self) -> bool:
        return self.revision.version == self.reference.version


def cited_document(user: User, run_id: int, n: int, version: int | None = None) -> CitedDocument:
    """The document reference ``n`` of the member's answer cited (else NotFound).

    Shown in the revision the answer cited while it is kept and its own reader roles admit members
    (SPEC 2: it needs both its own and the current permission), else in the current one;
    ``version`` chooses between those two, and names nothing else.
    """
    run, reference, document = access.cited_document_for_member(user, run_id, n)
    cited = access.cited_revision_for_member(document, reference.version)
    current = cited if cited is not None and cited.version == document.current_version else document.current_revision()
    if version is None:
        revision = cited or current
    else:
        revision = next((r for r in (cited, current) if r is not None and r.version == version), None)
    if revision is None:
        raise NotFound(n)
    passages = passages_of(revision)
    highlighted = next((p for p in passages if p.id == reference.passage_id), None)
    if highlighted is None and reference.text is not None:
        highlighted = next((p for p in passages if p.text == reference.text), None)
    if cited is not None:
        status = "kept"
    else:
        kept = Revision.select().where((Revision.document == document) & (Revision.version == reference.version))
        status = "closed" if kept.exists() else "purged"
    return CitedDocument(run, reference, document, revision, passages, highlighted, status)
