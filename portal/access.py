"""Who may see and do what. Every view asks here; a "no" is a 404 (NotFound).

Roles do not inherit each other: each rule names the roles it admits.
"""

from __future__ import annotations

from portal.errors import NotFound
from portal.models import Agent, Document, Pack, Run, User

READ_PACK_ROLES = frozenset({"PlatformAdmin", "AgentBuilder", "Auditor"})
MANAGE_DOCUMENT_ROLES = frozenset({"PlatformAdmin"})


def can_read_packs(user: User) -> bool:
    return bool(user.is_authenticated and user.roles & READ_PACK_ROLES)


def can_manage_documents(user: User) -> bool:
    return bool(user.is_authenticated and user.roles & MANAGE_DOCUMENT_ROLES)


def readable_packs(user: User):
    if not can_read_packs(user):
        return Pack.select().where(False)
    return Pack.select().order_by(Pack.title)


def pack_for_reading(user: User, slug: str) -> Pack:
    pack = Pack.get_or_none(Pack.slug == slug) if can_read_packs(user) else None
    if pack is None:
        raise NotFound(slug)
    return pack


def pack_for_managing(user: User, slug: str) -> Pack:
    if not can_manage_documents(user):
        raise NotFound(slug)
    return pack_for_reading(user, slug)


def document_for_reading(user: User, pack: Pack, doc_id: str) -> Document:
    document = Document.get_or_none(
        (Document.pack == pack) & (Document.doc_id == doc_id) & Document.deleted_at.is_null())
    if document is None:
        raise NotFound(doc_id)
    return document


# --- Agents and runs ------------------------------------------------------------

VIEW_AGENT_ROLES = frozenset({"PlatformAdmin", "AgentBuilder", "Auditor"})
MANAGE_AGENT_ROLES = frozenset({"PlatformAdmin", "AgentBuilder"})
TRY_AGENT_ROLES = frozenset({"PlatformAdmin", "AgentBuilder", "Auditor"})
SEE_EVERY_RUN_ROLES = frozenset({"PlatformAdmin", "AgentBuilder", "Auditor"})


def can_view_agents(user: User) -> bool:
    return bool(user.is_authenticated and user.roles & VIEW_AGENT_ROLES)


def can_manage_agents(user: User) -> bool:
    return bool(user.is_authenticated and user.roles & MANAGE_AGENT_ROLES)


def can_try_agents(user: User) -> bool:
    return bool(user.is_authenticated and user.roles & TRY_AGENT_ROLES)


def can_see_every_run(user: User) -> bool:
    return bool(user.is_authenticated and user.roles & SEE_EVERY_RUN_ROLES)


def agent_for_viewing(user: User, slug: str):
    agent = Agent.get_or_none(Agent.slug == slug) if can_view_agents(user) else None
    if agent is None:
        raise NotFound(slug)
    return agent


def agent_for_managing(user: User, slug: str):
    if not can_manage_agents(user):
        raise NotFound(slug)
    return agent_for_viewing(user, slug)


def agent_for_trying(user: User, slug: str):
    if not can_try_agents(user):
        raise NotFound(slug)
    return agent_for_viewing(user, slug)


def can_see_run(user: User, run) -> bool:
    """A run is seen by its owner and by staff; nobody else."""
    if not user.is_authenticated:
        return False
    return can_see_every_run(user) or (run.user_id is not None and run.user_id == user.id)


def visible_runs(user: User):
    if can_see_every_run(user):
        return Run.select()
    if not user.is_authenticated:
        return Run.select().where(False)
    return Run.select().where(Run.user == user.id)


def run_for_viewing(user: User, run_id: int):
    run = Run.get_or_none(Run.id == run_id)
    if run is None or not can_see_run(user, run):
        raise NotFound(run_id)
    return run


def source_document_for_reading(user: User, document_pk: int) -> Document | None:
    """The live document a run's source came from, if ``user`` may open it in the viewer; else None."""
    document = Document.get_or_none((Document.id == document_pk) & Document.deleted_at.is_null())
    if document is None:
        return None
    try:
        pack = pack_for_reading(user, document.pack.slug)
        return document_for_reading(user, pack, document.doc_id)
    except NotFound:
        return None
