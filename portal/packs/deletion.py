"""Deleting a pack with everything in it, after a confirmation that names what will go.

The database goes first, in one transaction: the pack becomes a tombstone (its slug and
id are never reused), its documents tombstones without revisions (passages and figures
cascade), run receipts forget their text, grants go, and its pending index work becomes
one "drop the index" row. Files and the index follow after the commit; a process killed
in between leaves the noted folder for the start-up sweep (``storage``) and the row for
the start-up catch-up (``search.service``), so the next start finishes the job.

The confirmation carries the pack's ``index_generation`` as it was shown: every change to
its documents bumps it, so a pack that changed since (another administrator uploaded)
asks again with the new counts instead of deleting what nobody saw.
"""

from __future__ import annotations

from dataclasses import dataclass

from peewee import fn

from portal import storage
from portal.audit import audit
from portal.db import database, locking
from portal.errors import PackDeleted, Refused
from portal.models import Agent, AgentGrant, DescribeJob, Document, Figure, Pack, Passage, Revision, User, utcnow
from portal.runs.services import forget_documents_text
from portal.search import service as search_service


@dataclass(frozen=True)
class PackContents:
    """What deleting the pack removes, as the confirmation names it."""

    documents: int
    revisions: int
    files: int  # originals and figure images
    figures: int
    passages: int
    agents: list[str]  # names of the agents granted the pack
    generation: int  # the pack's index generation these counts were read at


def pack_contents(pack: Pack) -> PackContents:
    """Counts of the pack's live documents and everything they hold."""
    live = Document.select(Document.id).where((Document.pack == pack) & Document.deleted_at.is_null())
    revisions = Revision.select().where(Revision.document.in_(live))
    originals = revisions.where(Revision.original_path.is_null(False)).count()
    figures = Figure.select().join(Revision).where(Revision.document.in_(live)).count()
    passages = (
        Passage.select(fn.COUNT(Passage.id))
        .join(Revision)
        .join(Document)
        .where((Document.pack == pack) & Document.deleted_at.is_null() & (Revision.version == Document.current_version))
        .scalar()
    )
    agents = [
        name
        for (name,) in Agent.select(Agent.name)
        .join(AgentGrant)
        .where(AgentGrant.pack == pack)
        .order_by(Agent.name)
        .tuples()
    ]
    return PackContents(
        documents=live.count(),
        revisions=revisions.count(),
        files=originals + figures,
        figures=figures,
        passages=passages or 0,
        agents=agents,
        generation=Pack.select(Pack.index_generation).where(Pack.id == pack.id).scalar(),
    )


def _lock_live_documents(pack: Pack) -> None:
    """Lock the pack's live documents before the pack's own row, in the order every document change takes them:
    its document, then the pack (its generation). The other way round, a change in between deadlocked with the
    deletion and PostgreSQL aborted one of them (a 500). Now the deletion waits for the change, and is refused
    because the pack changed since its confirmation; a change that comes after waits and finds the pack gone."""
    live = Document.select(Document.id).where((Document.pack == pack) & Document.deleted_at.is_null())
    list(locking(live.order_by(Document.id)).tuples())


def pack_folder(pack: Pack) -> str:
    """Where the pack's files live, relative to the files folder (``documents.revisions`` nests under it)."""
    return f"packs/{pack.id}"


def delete_pack(actor: User | None, pack: Pack, confirmed_generation: int) -> PackContents:
    """Delete the pack and everything in it; return what was removed.

    ``PackDeleted`` when it is gone already (another administrator was first); ``Refused``
    (``pack_changed``) when its documents changed since ``confirmed_generation``.
    """
    with storage.changing() as files:
        with database().atomic():
            _lock_live_documents(pack)
            removed = pack_contents(pack)
            marked = (
                Pack.update(deleted_at=utcnow(), index_generation=Pack.index_generation + 1)
                .where(
                    (Pack.id == pack.id) & Pack.deleted_at.is_null() & (Pack.index_generation == confirmed_generation)
                )
                .execute()
            )
            if not marked:
                if Pack.get_by_id(pack.id).is_deleted:
                    raise PackDeleted(pack.slug)  # by someone else, since this request found it
                raise Refused(
                    "pack_changed",
                    "The pack changed after the confirmation was shown (documents were added, changed or "
                    "deleted); nothing was deleted. Check what will be deleted now and confirm again.",
                )
            files.touches(pack_folder(pack))
            document_pks = [pk for (pk,) in Document.select(Document.id).where(Document.pack == pack).tuples()]
            now = utcnow()
            Document.update(deleted_at=now, updated_at=now).where(
                (Document.pack == pack) & Document.deleted_at.is_null()
            ).execute()
            for start in range(0, len(document_pks), 500):
                chunk = document_pks[start : start + 500]
                Revision.delete().where(Revision.document.in_(chunk)).execute()  # passages and figures cascade
                DescribeJob.end_running(chunk)
                forget_documents_text(chunk)  # run receipts keep their place, not the deleted text
            for agent in Agent.select().join(AgentGrant).where(AgentGrant.pack == pack):
                audit(actor, "agent.update", agent, {"revoked": [pack.slug], "because": "pack deleted"})
            AgentGrant.delete().where(AgentGrant.pack == pack).execute()
            search_service.record_pack_deletion(pack.id)
            audit(
                actor,
                "pack.delete",
                pack,
                {
                    "slug": pack.slug,
                    "title": pack.title,
                    "documents": removed.documents,
                    "revisions": removed.revisions,
                    "files": removed.files,
                    "agents": removed.agents,
                },
            )
        storage.remove_tree(pack_folder(pack))  # a kill before this leaves the folder noted for the sweep
    search_service.catch_up(pack)  # drops the index; a kill before it leaves the row for the next start
    return removed
