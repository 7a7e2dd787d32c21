"""Changing a stored document in place: editing its text or title, adding figure descriptions, deleting it.

Like an upload (``services``), each change writes its revision, or removes the document's,
in one transaction under ``storage.changing()``, lists the document as pending index work
in it, and updates the Lucene index after the commit.
"""

from __future__ import annotations

from portal import storage
from portal.audit import audit
from portal.controls import normalised_text, shows_nothing
from portal.db import database
from portal.documents import revisions
from portal.documents.readers import ReaderAccess, access_fields, change_reader_access, set_reader_access
from portal.documents.services import classification_policy, fitted_title, sha256_hex
from portal.errors import DeleteConflict, Refused, TitleConflict, VersionConflict, too_long
from portal.ingest import limits
from portal.ingest.classify import classify, refuse_if_not_allowed
from portal.ingest.markers import with_figure_descriptions
from portal.ingest.passages import split_passages
from portal.models import MAX_TITLE_CHARS, DescribeJob, Document, Revision, User, utcnow
from portal.runs.services import forget_document_text
from portal.search import service as search_service

EDITABLE_KINDS = frozenset({"markdown", "text"})


def edit_document(
    document: Document,
    expected_version: int,
    user: User | None,
    title: str,
    text: str | None = None,
    reader_access: ReaderAccess | None = None,
    title_based_on: str | None = None,
) -> Revision | None:
    """Save the edit page: a new title (any kind), for Markdown or text new text, and who may read it.
    ``title_based_on``: the title the page showed (a new title alone is refused when another has replaced it).

    Changed text makes a new revision (returned), with the title and reader access; a change of
    who may read alone is a revision of its own (``change_reader_access``); a title alone changes
    the document, not its text, so it makes none (None) — but it is refused too when the
    document is no longer at ``expected_version``.
    """
    title = checked_title(title, document.doc_id)
    if reader_access is not None:
        reader_access.refuse_if_not_for(document.pack)
    if title_based_on is not None and title == title_based_on:
        title = document.title  # not changed on this page: a title given meanwhile stays
    elif title_based_on is not None and document.title not in (title_based_on, title):
        raise TitleConflict(expected_version, document.title)
    current = document.current_revision()
    if text is not None and (current is None or normalised_text(text) != current.text):
        return edit_text(document, text, expected_version, user, title=title, reader_access=reader_access)
    access_changed = reader_access is not None and reader_access.fields() != access_fields(document)
    if title == document.title and not access_changed:
        raise Refused("unchanged", "Nothing was changed: the title, the text and who may read it are as they are.")
    if access_changed:
        return change_reader_access(document, reader_access, expected_version, user, title=title)
    retitle(document, title, expected_version, user, title_based_on)
    return None


def checked_title(title: str, doc_id: str) -> str:
    """A title on one line of at most MAX_TITLE_CHARS characters, classified like an upload's (a credential
    in it is redacted)."""
    title = " ".join((title or "").split())
    if shows_nothing(title):
        raise Refused("bad_title", "A document needs a title.")
    if len(title) > MAX_TITLE_CHARS:
        raise too_long("bad_title", "A title", MAX_TITLE_CHARS, len(title))
    verdict = classify("", title, doc_id, classification_policy())
    refuse_if_not_allowed(verdict)
    return fitted_title(verdict.redacted_title) if verdict.decision == "redact" else title


def retitle(
    document: Document, title: str, expected_version: int, user: User | None, based_on: str | None = None
) -> None:
    """Give the document a title by hand (kept by later uploads), re-indexing it: titles are searched.

    A title changes no revision, so the audit log is where the change and its author are kept: "from" is read
    in the change's transaction (two saves at once both said "from" the title their requests had read). Nor
    does it change the version, so ``based_on``, the title the writer's page showed, is what tells a title
    changed meanwhile: two admins retitling at once both saved, the second silently (``TitleConflict``)."""
    pack = document.pack
    with database().atomic():
        fresh = revisions.live_at_version(document, expected_version)
        if fresh.title == title:  # another save gave it this title a moment ago: nothing to change or audit
            return
        if based_on is not None and fresh.title != based_on:
            raise TitleConflict(expected_version, fresh.title)
        revisions.update_at_version(fresh, expected_version, title=title, title_by_hand=True, updated_at=utcnow())
        audit(user, "document.retitle", fresh, {"version": expected_version, "from": fresh.title, "to": title})
        search_service.record_index_change(pack.id, fresh.doc_id)
    search_service.index_changes(pack)


def edit_text(
    document: Document,
    text: str,
    expected_version: int,
    user: User | None,
    title: str | None = None,
    reader_access: ReaderAccess | None = None,
) -> Revision:
    """Save edited text as a new revision of a Markdown or text document (``title``: a new title with it;
    ``reader_access``: who may read it, when given).

    Unchanged text with a change of who may read it is that change alone (``change_reader_access``).
    """
    if document.kind not in EDITABLE_KINDS:
        raise Refused(
            "not_editable",
            "Word, PDF and image documents change by uploading a new file; "
            "only Markdown and text documents are edited here.",
        )
    text = normalised_text(text)
    title = title or document.title
    if shows_nothing(text):
        raise limits.refuse_empty()
    if len(text) > limits.MAX_TEXT_CHARS:
        raise limits.refuse_too_many_chars(len(text))
    verdict = classify(text, title, document.doc_id, classification_policy())
    refuse_if_not_allowed(verdict)
    if verdict.decision == "redact":
        text = verdict.redacted_text
    current = document.current_revision()
    if current and current.sha256 == sha256_hex(text) and reader_access is not None:
        if reader_access.fields() != access_fields(document):
            return change_reader_access(document, reader_access, expected_version, user)
    return _write_text_revision(
        document,
        text,
        expected_version,
        user,
        redacted=verdict.decision == "redact",
        title=title,
        reader_access=reader_access,
    )


def add_figure_descriptions(
    document: Document, descriptions: dict[int, str], expected_version: int, user: User | None
) -> Revision:
    """A new revision whose text has each figure's description right after its marker, with the
    current revision's original and figures carried over (the descriptions are classified already)."""
    current = Document.get_by_id(document.id).current_revision()
    if current is None or current.version != expected_version:  # deleted or replaced meanwhile
        raise VersionConflict(expected_version, current.version if current else 0)
    text = with_figure_descriptions(current.text, descriptions)
    return _write_text_revision(document, text, expected_version, user, redacted=document.redacted, carry=current)


def figure_descriptions_revision(
    document: Document, descriptions: dict[int, str], base_version: int
) -> Revision | None:
    """The revision ``add_figure_descriptions`` made with ``descriptions`` over ``base_version``, if it made
    one: the next version, holding exactly that text."""
    base, written = (
        Revision.get_or_none((Revision.document == document.id) & (Revision.version == version))
        for version in (base_version, base_version + 1)
    )
    if base is None or written is None:
        return None
    return written if written.sha256 == sha256_hex(with_figure_descriptions(base.text, descriptions)) else None


def _write_text_revision(
    document: Document,
    text: str,
    expected_version: int,
    user: User | None,
    redacted: bool,
    carry=None,
    title: str | None = None,
    reader_access: ReaderAccess | None = None,
) -> Revision:
    """Store ``text`` as the next revision; ``carry``: the revision whose original and figures it keeps;
    ``title``: a new title set by hand with it; ``reader_access``: who may read it from now on (audited)."""
    text_sha = sha256_hex(text)
    spans = split_passages(text, document.kind)
    pack = document.pack
    with storage.changing() as files:
        with database().atomic():
            fresh = revisions.live_at_version(document, expected_version)
            current = fresh.current_revision()
            if current and current.sha256 == text_sha:
                raise Refused("unchanged", "The text is the same as the current version; no new revision was made.")
            version = revisions.claim_next_version(fresh, expected_version)
            revision = Revision.create(
                document=fresh,
                version=version,
                text=text,
                sha256=text_sha,
                text_by_hand=True,  # an upload replacing it says so (``revisions.text_edited_in_browser``)
                created_by=user,
                original_name=current.original_name if current else None,
            )
            if carry is not None:
                revisions.carry_files(fresh, carry, revision, files)
            revisions.create_passages(revision, spans)
            retitled = {"title": title, "title_by_hand": True} if title and title != fresh.title else {}
            Document.update(updated_at=utcnow(), redacted=redacted, **retitled).where(Document.id == fresh.id).execute()
            if reader_access is not None:
                set_reader_access(user, fresh, reader_access, version)
            revisions.stamp_reader_access(fresh.id)
            purged = revisions.purge_old_revisions(fresh, version, files)
            search_service.record_index_change(pack.id, fresh.doc_id)
        revisions.remove_revision_folders(fresh, purged)  # a kill before this leaves them noted for the sweep
    search_service.index_changes(pack)
    return revision


def deleted_already(pack, doc_id: str) -> bool:
    """Whether the pack holds a deleted document of that id (its tombstone): a deletion asked again, or lost to
    another one, finds it gone."""
    return (
        Document.select()
        .where((Document.pack == pack) & (Document.doc_id == doc_id) & Document.deleted_at.is_null(False))
        .exists()
    )


def delete_document(document: Document, expected_version: int) -> None:
    """Remove text, revisions, passages, files and index entries; keep a tombstone. ``DeleteConflict`` when the
    document changed or was deleted since ``expected_version`` was shown."""
    pack = document.pack
    with storage.changing() as files:
        with database().atomic():
            try:
                revisions.update_at_version(document, expected_version, deleted_at=utcnow(), updated_at=utcnow())
            except VersionConflict as conflict:
                raise DeleteConflict(conflict.expected, conflict.current) from None
            files.touches(revisions.document_folder(document))
            Revision.delete().where(Revision.document == document).execute()  # passages and figures cascade
            DescribeJob.end_running([document.id])
            forget_document_text(document.id)  # run receipts keep their place, not the deleted text
            search_service.record_index_change(pack.id, document.doc_id)
        storage.remove_tree(revisions.document_folder(document))  # a kill before this leaves it noted for the sweep
    search_service.index_changes(pack)
