"""Who may see and do what. Every view asks here; a "no" is a 404 (NotFound).

Roles do not inherit each other: each rule names the roles it admits.
"""

from __future__ import annotations

from portal.errors import NotFound
from portal.models import Document, Pack, User

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
