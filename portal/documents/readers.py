"""Who may read a document directly (SPEC 2): its visibility and its optional reader roles."""

from __future__ import annotations

from dataclasses import dataclass

from portal.db import database
from portal.documents.revisions import stamp_reader_access
from portal.errors import Refused, VersionConflict
from portal.models import ROLES, VISIBILITIES, Document, utcnow


@dataclass(frozen=True)
class ReaderAccess:
    """Who may read a document directly (SPEC 2): its visibility and its optional reader roles."""

    visibility: str
    reader_roles: tuple[str, ...] = ()

    def __post_init__(self):
        if self.visibility not in VISIBILITIES:
            raise Refused("bad_visibility", f"A document's visibility is one of {', '.join(VISIBILITIES)}.")
        unknown = sorted(set(self.reader_roles) - set(ROLES))
        if unknown:
            raise Refused(
                "bad_reader_roles", f"Reader roles are among {', '.join(ROLES)}; {', '.join(unknown)} is not one."
            )

    def fields(self) -> dict:
        """The document's columns for it (roles in ROLES order, like a user's)."""
        return {"visibility": self.visibility, "reader_role_names": [r for r in ROLES if r in self.reader_roles]}


def set_reader_access(document: Document, reader_access: ReaderAccess, expected_version: int) -> Document:
    """Change who may read ``document`` directly, if it is still at ``expected_version``; the fresh row."""
    with database().atomic():
        changed = (
            Document.update(**reader_access.fields(), updated_at=utcnow())
            .where(
                (Document.id == document.id)
                & (Document.current_version == expected_version)
                & Document.deleted_at.is_null()
            )
            .execute()
        )
        fresh = Document.get_by_id(document.id)
        if not changed:
            raise VersionConflict(expected_version, 0 if fresh.is_deleted else fresh.current_version)
        stamp_reader_access(fresh.id)
    return fresh
