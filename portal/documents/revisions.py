"""A document's revisions as stored: changing a document only at the version its writer read,
claiming the next version, passages, purging old revisions, their folders, and sweeping files no
row names.

Shared by uploading (``services``) and editing or deleting (``editing``); callers run these
inside their own transaction and ``storage.changing()``.
"""

from __future__ import annotations

from portal import storage
from portal.db import locking
from portal.documents.outcomes import BrowserEdit
from portal.errors import VersionConflict
from portal.models import REVISIONS_KEPT, Document, Figure, Passage, ReceiptFigure, Revision
from portal.runs.services import keep_cited_figures


def claim_next_version(document: Document, expected: int) -> int:
    """Move current_version from ``expected`` to the next; a concurrent writer makes this fail.

    A deletion keeps the version number, so the claim also needs the document live: on PostgreSQL
    a delete committed after the caller read the document (its check passed) would otherwise let
    a revision, its passages and files land on the tombstone.
    """
    version = expected + 1
    update_at_version(document, expected, current_version=version)
    return version


def update_at_version(document: Document, expected: int, **fields) -> None:
    """Set ``fields`` on the document only while it is live at version ``expected``: one compare-and-set
    UPDATE, so a change or deletion committed since the writer read the page makes it ``VersionConflict``."""
    changed = (
        Document.update(**fields)
        .where((Document.id == document.id) & (Document.current_version == expected) & Document.deleted_at.is_null())
        .execute()
    )
    if not changed:
        raise _version_conflict(Document.get_by_id(document.id), expected)


def live_at_version(document: Document, expected: int) -> Document:
    """The document's row as stored now, inside the writer's transaction, if it is still live at version
    ``expected``; else ``VersionConflict`` (the page the writer changed is stale).

    Locked until the transaction ends: a change that keeps the version (a new title) waits for another one and
    reads what it wrote, so what it audits as "from" is what it replaced."""
    fresh = locking(Document.select().where(Document.id == document.id)).get()
    if fresh.is_deleted or fresh.current_version != expected:
        raise _version_conflict(fresh, expected)
    return fresh


def _version_conflict(fresh: Document, expected: int) -> VersionConflict:
    # A deleted document is at "version 0" for its writer: the message says it no longer exists.
    return VersionConflict(expected, 0 if fresh.is_deleted else fresh.current_version)


def stamp_reader_access(document_id: int) -> None:
    """Give the current revision the document's reader access, which it keeps once it is older.

    Called in the transaction of every change that makes a revision or changes who may read:
    an older revision then shows who could read it while it was current (SPEC 2).
    """
    document = Document.get_by_id(document_id)
    Revision.update(visibility=document.visibility, reader_role_names=document.reader_role_names).where(
        (Revision.document == document_id) & (Revision.version == document.current_version)
    ).execute()


def copy_revision(files: storage.FileChanges, document: Document, source: Revision, version: int, user) -> Revision:
    """Revision ``version``: ``source``'s text, original, figures and passages as they are, made by ``user``.

    A change of who may read a document is a revision of its own (SPEC 2), with its
    own copy of the files, so purging the older one later takes nothing from it.
    """
    try:
        revision = Revision.create(
            document=document,
            version=version,
            text=source.text,
            sha256=source.sha256,
            original_name=source.original_name,
            text_by_hand=source.text_by_hand,
            created_by=user,
        )
        carry_files(document, source, revision, files)
        passages = Passage.select().where(Passage.revision == source).order_by(Passage.ordinal)
        create_passages(revision, passages)
    except BaseException:
        storage.remove_tree(revision_folder(document, version))
        raise
    return Revision.get_by_id(revision.id)


def text_edited_in_browser(document: Document, version: int) -> BrowserEdit | None:
    """The browser edit whose text revision ``version`` holds, if its text was written in the browser: the
    revision that wrote it (a later copy for a change of who may read holds the same text). None when the
    text was read from a file. What an upload replacing ``version`` must say (``UploadOutcome.replaced_edit``)."""
    maker = None
    newest_first = Revision.select().where((Revision.document == document) & (Revision.version <= version))
    for revision in newest_first.order_by(Revision.version.desc()):
        if not revision.text_by_hand or (maker is not None and revision.sha256 != maker.sha256):
            break
        maker = revision
    if maker is None:
        return None
    return BrowserEdit(maker.version, maker.created_by.email if maker.created_by_id else None, maker.created_at)


def file_of_another_name(document: Document, version: int, filename: str) -> str | None:
    """The name of the file revision ``version`` was read from, when it is not ``filename``: "Shift Handover.md"
    and "shift-handover.txt" name one document, and an upload of the one replaces the other's text. What an upload
    replacing ``version`` must say (``UploadOutcome.replaced_file``); None for a text written in the browser."""
    replaced = Revision.get_or_none((Revision.document == document) & (Revision.version == version))
    if replaced is None or replaced.text_by_hand or not replaced.original_name:
        return None
    return replaced.original_name if replaced.original_name != filename else None


def create_passages(revision: Revision, spans) -> None:
    rows = [
        dict(
            revision=revision.id,
            ordinal=s.ordinal,
            text=s.text,
            line_start=s.line_start,
            line_end=s.line_end,
            char_start=s.char_start,
            char_end=s.char_end,
            heading_path=s.heading_path,
            page=s.page,
        )
        for s in spans
    ]
    for start in range(0, len(rows), 500):
        Passage.insert_many(rows[start : start + 500]).execute()


def carry_files(document: Document, source: Revision, revision: Revision, files: storage.FileChanges) -> None:
    """Copy ``source``'s original and figures into ``revision``'s folder: a revision that changes only
    the text (figure descriptions) keeps them, and purging ``source`` later must not take them away."""
    folder = revision_folder(document, revision.version)
    if source.original_path:
        path = f"{folder}/{source.original_path.rsplit('/', 1)[-1]}"
        files.write(path, storage.read(source.original_path))
        Revision.update(
            original_path=path,
            original_sha256=source.original_sha256,
            original_content_type=source.original_content_type,
            original_size=source.original_size,
        ).where(Revision.id == revision.id).execute()
    Revision.update(pages=source.pages, images_not_kept=source.images_not_kept).where(
        Revision.id == revision.id
    ).execute()
    for figure in Figure.select().where(Figure.revision == source).order_by(Figure.number):
        store_figure(files, revision, f"{folder}/{figure.path.rsplit('/', 1)[-1]}", storage.read(figure.path), figure)


def store_figure(files: storage.FileChanges, revision: Revision, path: str, webp: bytes, figure) -> None:
    """Write a figure's image at ``path`` and its row for ``revision``, with ``figure``'s number, label and
    size: an upload's ``ExtractedFigure``, or an older revision's ``Figure`` being carried over."""
    files.write(path, webp)
    Figure.create(
        revision=revision,
        number=figure.number,
        label=figure.label,
        path=path,
        width=figure.width,
        height=figure.height,
    )


def purge_old_revisions(document: Document, newest: int, files: storage.FileChanges) -> list[int]:
    """Keep the newest REVISIONS_KEPT revisions; return the purged versions (their folders noted in ``files``).

    Figures of purged revisions that a run receipt cites are copied into the receipts'
    keeping first (SPEC 7: the receipt outlives later edits, images included).
    """
    oldest_kept = newest - REVISIONS_KEPT + 1
    purged = (Revision.document == document) & (Revision.version < oldest_kept)
    old = [r.version for r in Revision.select(Revision.version).where(purged)]
    if old:
        for version in old:
            files.touches(revision_folder(document, version))
        figures = list(Figure.select().join(Revision).where(purged))
        keep_cited_figures(document.id, figures, f"{document_folder(document)}/receipts", files)
        Revision.delete().where(purged).execute()
    return old


def document_folder(document: Document) -> str:
    return f"packs/{document.pack_id}/documents/{document.id}"


def revision_folder(document: Document, version: int) -> str:
    return f"{document_folder(document)}/v{version}"


def remove_revision_folders(document: Document, versions) -> None:
    for version in versions:
        storage.remove_tree(revision_folder(document, version))


def sweep_orphan_files() -> list[str] | None:
    """Delete files under the data folder that no revision or figure names (left by a killed process)."""

    def referenced() -> set[str]:
        originals = Revision.select(Revision.original_path).where(Revision.original_path.is_null(False))
        return (
            {path for (path,) in originals.tuples()}
            | {path for (path,) in Figure.select(Figure.path).tuples()}
            | {path for (path,) in ReceiptFigure.select(ReceiptFigure.path).tuples()}
        )

    return storage.sweep(referenced)
