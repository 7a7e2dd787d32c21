"""Changing a stored document in place: editing its text, deleting it.

Like an upload (``services``), each change writes its revision, or removes the document's,
in one transaction under ``storage.changing()``, lists the document as pending index work
in it, and updates the Lucene index after the commit.
"""

from __future__ import annotations

from portal import storage
from portal.db import database
from portal.documents import revisions
from portal.documents.readers import ReaderAccess, access_fields, audit_reader_access, change_reader_access
from portal.documents.services import classification_policy, sha256_hex
from portal.errors import Refused, VersionConflict
from portal.ingest import limits
from portal.ingest.classify import classify, refuse_if_not_allowed
from portal.ingest.passages import split_passages
from portal.models import Document, Revision, User, utcnow
from portal.runs.services import forget_document_text
from portal.search import service as search_service

EDITABLE_KINDS = frozenset({"markdown", "text"})


def edit_text(
    document: Document, text: str, expected_version: int, user: User | None, reader_access: ReaderAccess | None = None
) -> Revision:
    """Save edited text as a new revision of a Markdown or text document, with ``reader_access`` when given.

    Unchanged text with a change of who may read it is that change alone (``change_reader_access``).
    """
    if document.kind not in EDITABLE_KINDS:
        raise Refused(
            "not_editable",
            "Word, PDF and image documents change by uploading a new file; "
            "only Markdown and text documents are edited here.",
        )
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise limits.refuse_empty()
    if len(text) > limits.MAX_TEXT_CHARS:
        raise limits.refuse_too_many_chars(len(text))
    verdict = classify(text, document.title, document.doc_id, classification_policy())
    refuse_if_not_allowed(verdict)
    if verdict.decision == "redact":
        text = verdict.redacted_text
    text_sha = sha256_hex(text)
    current = document.current_revision()
    if current and current.sha256 == text_sha and reader_access is not None:
        if reader_access.fields() != access_fields(document):
            return change_reader_access(document, reader_access, expected_version, user).current_revision()
    spans = split_passages(text, document.kind)
    pack = document.pack
    with storage.changing() as files:
        with database().atomic():
            fresh = Document.get_by_id(document.id)
            if fresh.is_deleted or fresh.current_version != expected_version:
                raise VersionConflict(expected_version, 0 if fresh.is_deleted else fresh.current_version)
            current = fresh.current_revision()
            if current and current.sha256 == text_sha:
                raise Refused("unchanged", "The text is the same as the current version; no new revision was made.")
            version = revisions.claim_next_version(fresh, expected_version)
            revision = Revision.create(
                document=fresh,
                version=version,
                text=text,
                sha256=text_sha,
                created_by=user,
                original_name=current.original_name if current else None,
            )
            revisions.create_passages(revision, spans)
            Document.update(updated_at=utcnow(), redacted=verdict.decision == "redact").where(
                Document.id == fresh.id
            ).execute()
            if reader_access is not None:
                Document.update(**reader_access.fields()).where(Document.id == fresh.id).execute()
                audit_reader_access(user, fresh, access_fields(fresh), reader_access.fields(), version)
            purged = revisions.purge_old_revisions(fresh, version, files)
            search_service.record_index_change(pack.id, fresh.doc_id)
        revisions.remove_revision_folders(fresh, purged)  # a kill before this leaves them noted for the sweep
    search_service.index_changes(pack)
    return revision


def delete_document(document: Document, expected_version: int) -> None:
    """Remove text, revisions, passages, files and index entries; keep a tombstone."""
    pack = document.pack
    with storage.changing() as files:
        with database().atomic():
            changed = (
                Document.update(deleted_at=utcnow(), updated_at=utcnow())
                .where(
                    (Document.id == document.id)
                    & (Document.current_version == expected_version)
                    & Document.deleted_at.is_null()
                )
                .execute()
            )
            if not changed:
                fresh = Document.get_by_id(document.id)
                raise VersionConflict(expected_version, 0 if fresh.is_deleted else fresh.current_version)
            files.touches(revisions.document_folder(document))
            Revision.delete().where(Revision.document == document).execute()  # passages and figures cascade
            forget_document_text(document.id)  # run receipts keep their place, not the deleted text
            search_service.record_index_change(pack.id, document.doc_id)
        storage.remove_tree(revisions.document_folder(document))  # a kill before this leaves it noted for the sweep
    search_service.index_changes(pack)
