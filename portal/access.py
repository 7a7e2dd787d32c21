"""Who may see and do what. Every view asks here; a "no" is a 404 (NotFound).

``ACTIONS`` maps each action to the roles that may take it; ``can`` is the one
check, and each kind of object has one lookup (``pack_for``, ``document_for``,
``agent_for``, ``run_for``, ``feedback_for``, ``case_for``, and the member's own
answers and conversations). Roles do not inherit each other: each action names
the roles it admits.
"""

from __future__ import annotations

import operator
from functools import reduce

from flask import current_app

from portal.db import KeptSelect, KeptSelectIn
from portal.errors import NoLongerToReview, NotFound
from portal.models import (
    ADMIN,
    BUILDER,
    MEMBER,
    STAFF_ROLES,
    Agent,
    AgentGrant,
    Conversation,
    Document,
    Feedback,
    Pack,
    RegressionCase,
    Revision,
    Run,
    RunReference,
    User,
)
from portal.search.hits import SearchResults
from portal.search.schema import partition_class
from portal.search.service import DEFAULT_LIMIT, search_packs

# Every action and the roles that may take it; a user may if they hold any of them.
ACTIONS: dict[str, frozenset[str]] = {
    "packs.read": STAFF_ROLES,
    "documents.write": frozenset({ADMIN}),
    # Describing figures calls a paid vision model: administration.
    "documents.describe": frozenset({ADMIN}),
    # SPEC 2: a document's reader roles narrow reading to exact role matches; these roles bypass them.
    "documents.bypass_reader_roles": frozenset({ADMIN}),
    # The Library: every document the user may read directly (SPEC 2), whatever their roles grant.
    "library.read": STAFF_ROLES | {MEMBER},
    "agents.read": STAFF_ROLES,
    "agents.configure": frozenset({ADMIN, BUILDER}),
    "agents.try": STAFF_ROLES,
    "runs.see_all": STAFF_ROLES,
    "chat.use": frozenset({MEMBER}),
    "feedback.review": STAFF_ROLES,
    # Reviewers triage and record cases; removing someone else's case is administration.
    "cases.remove_any": frozenset({ADMIN}),
    # Everyone revokes their own API tokens; revoking another user's is administration.
    "tokens.revoke_any": frozenset({ADMIN}),
}
# The support chat is for Members, who always belong to a company.
COMPANY_ACTIONS = frozenset({"chat.use"})


def can(user: User, action: str) -> bool:
    """Whether ``user`` may take ``action`` (a key of ACTIONS); an unknown action is a KeyError, not a no."""
    roles = ACTIONS[action]
    if not user.is_authenticated or not user.roles & roles:
        return False
    return action not in COMPANY_ACTIONS or user.company_id is not None


def readable_packs(user: User):
    if not can(user, "packs.read"):
        return Pack.select().where(False)
    return Pack.live().order_by(Pack.title)


def pack_for(user: User, slug: str, action: str = "packs.read") -> Pack:
    """The pack, if ``user`` may read packs and take ``action`` (e.g. "documents.write") in it."""
    allowed = can(user, "packs.read") and can(user, action)
    pack = _live_pack.first(slug) if allowed else None
    if pack is None:
        raise NotFound(slug)
    return pack


_live_pack = KeptSelect(lambda slug: Pack.live().where(Pack.slug == slug).limit(1))


def staff_role_admitted(user: User, document: Document) -> bool:
    """Whether a staff reader holds one of the document's reader roles (none listed: every staff reader)."""
    return reader_roles_admit_staff(user, document.reader_roles)


def reader_roles_admit_staff(user: User, reader_roles: frozenset[str]) -> bool:
    """Exact matches only: the staff role the user reads packs by must be in the list (an empty list
    admits every staff reader); PlatformAdmin bypasses the list for administration."""
    if not reader_roles or can(user, "documents.bypass_reader_roles"):
        return True
    return bool(reader_roles & user.roles & ACTIONS["packs.read"])


def _member_class_admits(user: User, pack: Pack, visibility: str, reader_roles: frozenset[str]) -> bool:
    """SPEC 2 for members: ``shared`` in every pack, ``company`` in their own company's packs, ``staff``
    never; a list of reader roles must name Member."""
    if reader_roles and MEMBER not in reader_roles:
        return False
    if visibility == "shared":
        return True
    return visibility == "company" and user.company_id is not None and pack.company_id == user.company_id


def may_read(user: User, pack: Pack, visibility: str, reader_roles: frozenset[str]) -> bool:
    """SPEC 2, the one rule: whether ``user`` may read directly (list, open, search) a document of this
    access class in ``pack``. Staff read by their staff roles, members by visibility; each narrowed by
    the reader roles. It decides documents and index partitions alike, so what a reader may search is
    exactly what they may open."""
    if not user.is_authenticated:
        return False
    if can(user, "packs.read") and reader_roles_admit_staff(user, reader_roles):
        return True
    return MEMBER in user.roles and _member_class_admits(user, pack, visibility, reader_roles)


def may_read_document(user: User, document: Document) -> bool:
    return may_read(user, document.pack, document.visibility, document.reader_roles)


def document_for(user: User, pack: Pack, doc_id: str) -> Document:
    """A live document of a pack the staff reader already reached (``pack_for``), if its reader roles admit them."""
    document = Document.get_or_none(
        (Document.pack == pack) & (Document.doc_id == doc_id) & Document.deleted_at.is_null()
    )
    if document is None or not staff_role_admitted(user, document):
        raise NotFound(doc_id)
    return document


def revision_readable(user: User, revision: Revision) -> bool:
    """Whether a staff reader of the revision's document (``document_for`` passed) may read this revision.

    SPEC 2: an older revision needs permission under both the current restrictions
    (``document_for``) and its own (those it had while it was current): tightening hides
    old revisions too, loosening never reveals one that was restricted.
    """
    return staff_role_admitted(user, revision)


def revision_for(user: User, document: Document, version: int | None) -> Revision:
    """Revision ``version`` (None: the current one) of a document ``user`` reads, if it is kept and readable."""
    version = document.current_version if version is None else version
    revision = _revision.first(document, version)
    if revision is None or not revision_readable(user, revision):
        raise NotFound(version)
    return revision


_revision = KeptSelect(
    lambda document, version: Revision.select().where((Revision.document == document) & (Revision.version == version))
)


def readable_revisions(user: User, document: Document) -> list[Revision]:
    """The kept revisions of ``document`` that ``user`` may open, newest first (the viewer's side column)."""
    kept = Revision.select(
        Revision.version,
        Revision.sha256,
        Revision.created_at,
        Revision.created_by,
        Revision.visibility,
        Revision.reader_role_names,
    ).where(Revision.document == document)
    return [r for r in kept.order_by(Revision.version.desc()) if revision_readable(user, r)]


def readable_documents(user: User, pack: Pack):
    """The pack's live documents that ``user`` may open on the staff pages, by title, as a query (the pack
    page's list and the API's, read a page at a time).

    ``reader_roles_admit_staff`` decides each set of reader roles the pack's live documents have, as
    ``staff_role_admitted`` decides one document; the query admits exactly the sets it allows.
    """
    live = pack.live_documents().order_by(Document.title, Document.doc_id)
    role_sets = {tuple(roles) for (roles,) in _reader_role_sets.rows(pack.id)}
    admitted = [
        Document.reader_role_names.is_exactly(list(roles))
        for roles in role_sets
        if reader_roles_admit_staff(user, frozenset(roles))
    ]
    return live.where(reduce(operator.or_, admitted) if admitted else False)


# Asked by every view and search of a pack page.
_reader_role_sets = KeptSelect(
    lambda pack_id: Pack(id=pack_id).live_documents().select(Document.reader_role_names).order_by().distinct().tuples()
)


def library_documents(user: User):
    """Every live document ``user`` may read directly, by pack and title (the Library), as a query, so that
    a page of it is read alone.

    ``may_read`` decides each access class (pack, visibility, reader roles) the live documents have, as it
    decides index partitions; the query admits exactly the classes it allows.
    """
    live = Document.select(Document, Pack).join(Pack).where(Document.deleted_at.is_null())
    if not can(user, "library.read"):
        return live.where(False)
    if not can(user, "packs.read"):  # members read only shared and company documents: ask for no others
        live = live.where(Document.visibility.in_(("shared", "company")))
    classes = live.select(Document.pack, Document.visibility, Document.reader_role_names).distinct().tuples()
    classes = list(classes)
    packs = {p.id: p for p in Pack.select().where(Pack.id.in_({pack_id for pack_id, _, _ in classes}))}
    admitted: dict[tuple[str, tuple[str, ...]], list[int]] = {}
    for pack_id, visibility, roles in classes:
        if may_read(user, packs[pack_id], visibility, frozenset(roles)):
            admitted.setdefault((visibility, tuple(roles)), []).append(pack_id)
    readable = [
        (Document.visibility == visibility)
        & Document.reader_role_names.is_exactly(list(roles))
        & Document.pack.in_(ids)
        for (visibility, roles), ids in admitted.items()
    ]
    return live.where(reduce(operator.or_, readable) if readable else False).order_by(Pack.title, Document.title)


def library_document_for(user: User, slug: str, doc_id: str) -> Document:
    """A live document ``user`` may read directly, reached from the Library."""
    document = (
        Document.select(Document, Pack)
        .join(Pack)
        .where((Pack.slug == slug) & (Document.doc_id == doc_id) & Document.deleted_at.is_null())
        .first()
        if can(user, "library.read")
        else None
    )
    if document is None or not may_read_document(user, document):
        raise NotFound(doc_id)
    return document


# --- Originals: one rule per door, asked by the page that offers the download and the address that sends it


def staff_may_download(user: User, revision: Revision) -> bool:
    """The original of a revision on the staff document page (``revision_for`` passed): administration only."""
    return bool(revision.original_path) and can(user, "documents.write")


def may_download_from_library(user: User, document: Document, revision: Revision | None) -> bool:
    """The current revision's original from the Library: a PlatformAdmin's as on the staff page; a reader's
    own, as a member may (SPEC 2 visibility, never redacted). Read-only staff download from no page, as on
    the staff page."""
    if not _is_current_original(document, revision) or not may_read_document(user, document):
        return False
    if can(user, "documents.write"):
        return True
    return MEMBER in user.roles and member_may_download(user, document, revision)


def search_for_reader(user: User, packs, query: str, limit: int = DEFAULT_LIMIT) -> SearchResults:
    """A person's search of ``packs``: exactly the partitions (access classes) they may read, so passages
    they may not read change no score, order, snippet or count (SPEC 6, ranking independence).

    A hit whose document's access changed after its partition was written (the index catching up) is
    dropped: the database decides.
    """
    by_slug = {p.slug: p for p in packs}

    def readable(slug: str, partition: str) -> bool:
        visibility, roles = partition_class(partition)
        return may_read(user, by_slug[slug], visibility, roles)

    results = search_packs(list(by_slug.values()), query, limit, readable=readable)
    if not results.hits:  # nothing to check against the database
        return results
    documents = _hit_documents.rows(sorted({h.document_pk for h in results.hits}))
    readable_pks = {d.id for d in documents if may_read_document(user, d)}
    hits = [h for h in results.hits if h.document_pk in readable_pks]
    if len(hits) == len(results.hits):
        return results
    dropped = len(results.hits) - len(hits)
    return SearchResults(
        query=results.query,
        hits=hits,
        no_evidence=not hits,
        total_matches=max(results.total_matches - dropped, len(hits)),
        total_is_exact=results.total_is_exact,
    )


# The access columns of a search's documents, with their packs; SQL kept for each number of documents (at most
# the search's limit).
_hit_documents = KeptSelectIn(
    lambda pks: (
        Document.select(Document.id, Document.visibility, Document.reader_role_names, Pack.id, Pack.company)
        .join(Pack)
        .where(Document.id.in_(pks))
    )
)


# --- Agents and runs ------------------------------------------------------------


def agent_for(user: User, slug: str, action: str = "agents.read") -> Agent:
    """The agent, if ``user`` may see agents and take ``action`` ("agents.configure", "agents.try") on it."""
    allowed = can(user, "agents.read") and can(user, action)
    agent = Agent.get_or_none(Agent.slug == slug) if allowed else None
    if agent is None:
        raise NotFound(slug)
    return agent


def can_see_run(user: User, run) -> bool:
    """A run is seen by its owner and by staff; nobody else."""
    if not user.is_authenticated:
        return False
    return can(user, "runs.see_all") or (run.user_id is not None and run.user_id == user.id)


def visible_runs(user: User):
    if can(user, "runs.see_all"):
        return Run.select()
    if not user.is_authenticated:
        return Run.select().where(False)
    return Run.select().where(Run.user == user.id)


def run_for(user: User, run_id: int):
    run = Run.get_or_none(Run.id == run_id)
    if run is None or not can_see_run(user, run):
        raise NotFound(run_id)
    return run


def source_document_readable(user: User, document: Document) -> bool:
    """Whether ``user`` may open a run's source document in the viewer: the door of ``pack_for`` then
    ``document_for`` (a staff reader, the document and its pack live, its reader roles admitting them),
    decided on a row read with its pack (no query: a receipt lists several documents)."""
    return (
        can(user, "packs.read")
        and not document.is_deleted
        and not document.pack.is_deleted
        and staff_role_admitted(user, document)
    )


# --- Support chat, source pages and answer feedback ----------------------------------


def agents_offered_to(user: User):
    """Offered agents serving the member's company, and company-less ones when CAIRN_OFFER_SHARED_AGENTS is on.

    A draft (not offered yet) is never shown to members; an agent with no granted pack can only
    answer "no evidence", so it is not offered either.
    """
    if not can(user, "chat.use"):
        return Agent.select().where(False)
    return _agents_serving(user.company_id, current_app.config.get("CAIRN_OFFER_SHARED_AGENTS"))


def _agents_serving(company_id, shared_too: bool):
    serves = Agent.company == company_id
    if shared_too:
        serves = serves | Agent.company.is_null()
    return Agent.select().where(serves & Agent.offered & Agent.id.in_(AgentGrant.select(AgentGrant.agent)))


# The chat's agent menu, on every chat page and source page: one kept select per setting of shared agents.
_agents_by_name = {
    False: KeptSelect(lambda company_id: _agents_serving(company_id, False).order_by(Agent.name)),
    True: KeptSelect(lambda company_id: _agents_serving(company_id, True).order_by(Agent.name)),
}


def offered_agents_by_name(user: User) -> list[Agent]:
    """``agents_offered_to`` as a list by name."""
    if not can(user, "chat.use"):
        return []
    return _agents_by_name[bool(current_app.config.get("CAIRN_OFFER_SHARED_AGENTS"))].rows(user.company_id)


def agent_for_chat(user: User, slug: str) -> Agent:
    agent = agents_offered_to(user).where(Agent.slug == slug).first()
    if agent is None:
        raise NotFound(slug)
    return agent


def agent_for_asking(user: User, slug: str) -> Agent:
    """An agent ``user`` may put a question to outside the chat (the API): staff try any agent, a member
    asks the agents offered to them in the chat."""
    if can(user, "agents.try"):
        return agent_for(user, slug, "agents.try")
    return agent_for_chat(user, slug)


def conversation_for_member(user: User, conversation_id: int):
    conversation = _conversation.first(conversation_id) if can(user, "chat.use") else None
    if conversation is None or conversation.user_id != user.id:
        raise NotFound(conversation_id)
    return conversation


def answer_for_member(user: User, run_id: int) -> Run:
    """A run the member asked: its source page, its cited documents and its rating are theirs alone."""
    run = _run.first(run_id) if can(user, "chat.use") else None
    if run is None or run.user_id != user.id:
        raise NotFound(run_id)
    return run


# A member's own conversation and answers: each chat page, source page, cited document and rating reads one.
_conversation = KeptSelect(lambda conversation_id: Conversation.select().where(Conversation.id == conversation_id))
_run = KeptSelect(lambda run_id: Run.select().where(Run.id == run_id))


def cited_document_for_member(user: User, run_id: int, n: int):
    """(run, receipt row, live document) when reference ``n`` was cited by the member's own answer.

    This is not access to the pack: only the document that reference came from,
    and only while it exists. A list of reader roles that leaves out Member closes it.
    """
    run = answer_for_member(user, run_id)
    reference = _reference.first(run, n)
    if reference is None or n not in run.cited:
        raise NotFound(n)
    document = _live_document.first(reference.document_pk)
    if document is None or not member_role_admitted(document):
        raise NotFound(n)
    return run, reference, document


_reference = KeptSelect(lambda run, n: RunReference.select().where((RunReference.run == run) & (RunReference.n == n)))
_live_document = KeptSelect(  # with its pack, which the cited document's page shows
    lambda document_pk: (
        Document.select(Document, Pack).join(Pack).where((Document.id == document_pk) & Document.deleted_at.is_null())
    )
)


def member_role_admitted(document: Document | Revision) -> bool:
    """A document's (or a revision's own) reader roles admit members: none listed, or Member among them."""
    roles = document.reader_roles
    return not roles or MEMBER in roles


def cited_revision_for_member(document: Document, version: int) -> Revision | None:
    """Revision ``version`` of a document a member's answer cited, while it is kept and its own reader
    roles admit members (``cited_document_for_member`` checked the current ones); else None."""
    revision = _revision.first(document, version)
    return revision if revision is not None and member_role_admitted(revision) else None


def member_may_download(user: User, document: Document, revision: Revision | None) -> bool:
    """The current revision's original, by SPEC 2 reader visibility: ``shared`` for every member, ``company``
    for the pack's company; ``staff`` and redacted never. An older revision's redaction and visibility are
    its own, so its original is never sent."""
    if not _is_current_original(document, revision) or document.redacted:
        return False
    return _member_class_admits(user, document.pack, document.visibility, document.reader_roles)


def _is_current_original(document: Document, revision: Revision | None) -> bool:
    return revision is not None and revision.version == document.current_version and bool(revision.original_path)


def feedback_for(user: User, feedback_id: int):
    feedback = (
        Feedback.get_or_none((Feedback.id == feedback_id) & (Feedback.rating == "not_helpful"))
        if can(user, "feedback.review")
        else None
    )
    if feedback is None:
        if can(user, "feedback.review") and Feedback.get_or_none(Feedback.id == feedback_id) is not None:
            raise NoLongerToReview(feedback_id)  # rated Helpful: not in the review list
        raise NotFound(feedback_id)
    return feedback


def can_remove_case(user: User, case: RegressionCase) -> bool:
    """A regression case is removed by the reviewer who recorded it, or by a PlatformAdmin."""
    if not can(user, "feedback.review"):
        return False
    return can(user, "cases.remove_any") or (case.created_by_id is not None and case.created_by_id == user.id)


def case_for(user: User, feedback: Feedback, case_id: int) -> RegressionCase:
    case = RegressionCase.get_or_none((RegressionCase.id == case_id) & (RegressionCase.feedback == feedback))
    if case is None or not can_remove_case(user, case):
        raise NotFound(case_id)
    return case
