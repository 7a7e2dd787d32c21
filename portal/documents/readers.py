"""Who may read a document directly (SPEC 2): its visibility and its optional reader roles, and changing them."""

from __future__ import annotations

from dataclasses import dataclass

from portal import storage
from portal.audit import audit
from portal.db import database
from portal.documents import revisions
from portal.errors import Refused
from portal.models import ROLES, VISIBILITIES, Document, Revision, User, utcnow
from portal.search import service as search_service

VISIBILITY_LABELS = (
    ("staff", "Staff only"),
    ("shared", "Shared: staff and the members of every company"),
    ("company", "Company: staff and the members of the pack's company"),
)
"""What the pages call each visibility (SPEC 2), in ``VISIBILITIES`` order."""


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

    def refuse_if_not_for(self, pack) -> None:
        """Refuse ``company`` in a pack that serves no company: "staff and the members of the pack's company"
        would be staff only there, stored as something else than what the uploader chose."""
        if self.visibility == "company" and pack.company_id is None:
            raise Refused(
                "bad_visibility",
                f"The pack {pack.title} serves no company, so a document in it cannot be visible to "
                "the members of its company: choose Staff only or Shared. Nothing was stored.",
            )

    def fields(self) -> dict:
        """The document's columns for it (roles in ROLES order, like a user's)."""
        return {"visibility": self.visibility, "reader_role_names": [r for r in ROLES if r in self.reader_roles]}


def change_reader_access(
    document: Document,
    reader_access: ReaderAccess,
    expected_version: int,
    user: User | None,
    title: str | None = None,
) -> Revision:
    """Change who may read ``document`` directly, if it is still at ``expected_version``; the revision it made,
    whose ``document`` is the row as this change left it.

    The change is a revision of its own (the same text, files and figures) and an
    audit entry, in one transaction; its passages move to the index partition of
    the new access class after the commit (pending index work until then). A new
    ``title`` (the edit page changes both at once) is saved in the same transaction:
    saved apart, a conflict on the second left the first saved and the page said
    nothing was.
    """
    if reader_access.fields() == access_fields(document):
        raise Refused("unchanged", "Who may read it is unchanged; no new revision was made.")
    pack = document.pack
    reader_access.refuse_if_not_for(pack)
    with storage.changing() as files:
        with database().atomic():
            fresh = revisions.live_at_version(document, expected_version)
            version = revisions.claim_next_version(fresh, expected_version)
            revision = revisions.copy_revision(files, fresh, fresh.current_revision(), version, user)
            retitled = {"title": title, "title_by_hand": True} if title not in (None, fresh.title) else {}
            set_reader_access(user, fresh, reader_access, version, updated_at=utcnow(), **retitled)
            if retitled:
                audit(user, "document.retitle", fresh, {"version": version, "from": fresh.title, "to": title})
            revisions.stamp_reader_access(fresh.id)  # the new revision keeps who may read it (older revisions)
            purged = revisions.purge_old_revisions(fresh, version, files)
            search_service.record_index_change(pack.id, fresh.doc_id)
            # Read while this change still holds the row: after the commit, a deletion of the new version
            # waiting on it may come first (no current revision to answer with: a 500 on the API).
            revision = Revision.get_by_id(revision.id)  # with the reader access stamped on it
            revision.document = Document.get_by_id(fresh.id)
        revisions.remove_revision_folders(fresh, purged)
    search_service.index_changes(pack)
    return revision


def access_fields(document: Document) -> dict:
    """The document's reader access as ``ReaderAccess.fields`` gives it (a new document's: the defaults)."""
    return {"visibility": document.visibility, "reader_role_names": list(document.reader_role_names)}


def set_reader_access(
    user: User | None, document: Document, reader_access: ReaderAccess, version: int, **columns
) -> None:
    """Give ``document`` (its row as read in the change's transaction) ``reader_access``, with ``columns`` that
    change with it, and audit what changed as part of revision ``version`` (inside that transaction)."""
    before = access_fields(document)
    Document.update(**reader_access.fields(), **columns).where(Document.id == document.id).execute()
    _audit_reader_access(user, document, before, reader_access.fields(), version)


def _audit_reader_access(user: User | None, document: Document, before: dict, after: dict, version: int) -> None:
    changed = {key: [before[key], after[key]] for key in after if before[key] != after[key]}
    if changed:
        audit(user, "document.reader_access", document, {"version": version, "changed": changed})
