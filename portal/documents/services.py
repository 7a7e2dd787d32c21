"""Documents: uploading a file as a document's next revision, with its passages and index update.

Editing and deleting are in ``editing``, the revisions' shared storage (versions, passages,
purging, folders, the orphan sweep) in ``revisions``, who may read a document in ``readers``.

The database is the source of truth. Files are written inside the database
transaction, under ``storage.changing()``, and removed again if it fails; the
files of a process killed before it could remove them are swept at the next
start. Every change lists its document as pending index work
in the same transaction; the Lucene index is updated after the commit and,
should that fail or the process die, catches up from that list
(portal/search/service.py).
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass, field
from pathlib import PurePath

from flask import current_app
from peewee import Case, IntegrityError

from portal import storage
from portal.controls import shows_nothing
from portal.db import database
from portal.documents import revisions
from portal.documents.filenames import fitted_name, shown_name, upload_name
from portal.documents.ids import document_id_for, id_in_pack
from portal.documents.outcomes import REDACTED_FIGURE, Redaction, UploadOutcome
from portal.documents.readers import ReaderAccess, access_fields, change_reader_access, set_reader_access
from portal.errors import Refused, VersionConflict
from portal.ingest import limits
from portal.ingest.classify import Classification, Policy, classify, cut_redacted, refuse_if_not_allowed
from portal.ingest.formats import Extracted, read_upload
from portal.ingest.markdown_blocks import heading_title, markdown_blocks
from portal.ingest.markers import replace_figure_markers, without_images_line
from portal.ingest.passages import split_passages
from portal.models import DOCUMENT_ID_RE, MAX_ID_CHARS, MAX_TITLE_CHARS, Document, Pack, Revision, User, utcnow
from portal.search import service as search_service

log = logging.getLogger(__name__)


def _names_a_document(pack: Pack, doc_id: str) -> bool:
    return Document.select().where(Document.pack == pack, Document.doc_id == doc_id).exists()


def refuse_if_bad_document_id(doc_id: str) -> None:
    if not DOCUMENT_ID_RE.match(doc_id):
        raise Refused(
            "bad_name",
            f"A document id has 1–{MAX_ID_CHARS} letters, digits, '.', '_' or '-', starting with a letter or digit.",
        )


def _refuse_new_id_in_capitals(pack: Pack, doc_id: str) -> None:
    """An id made from a file name is lower case: "Pump" beside "pump" would be a document no upload of "Pump.md"
    reaches. A document named so before stays writable. Checked before the file is read."""
    if doc_id != doc_id.lower() and not _names_a_document(pack, doc_id):
        raise Refused(
            "bad_name",
            f"A new document's id is written in lower case, as the ids made from file names are: "
            f"{doc_id.lower()!r} (if that id is taken already, choose another). Nothing was stored.",
        )


def title_for(filename: str, text: str, kind: str, own_title: str = "", doc_id: str | None = None) -> str:
    """The file's own title (PDF metadata), a Markdown or Word document's first level-1 heading,
    else the file name's stem, or the document id the caller named when the stem shows nothing ("ㅤ.txt" through
    the API: a name of Hangul fillers listed as a link with nothing to click)."""
    if own_title and not shows_nothing(own_title):
        return fitted_title(own_title)
    if kind in ("markdown", "docx"):
        # as the viewer reads it: "Title" underlined with "===" counts, a "#" line in a code block does not
        for block in markdown_blocks(text):
            if block.kind == "heading" and block.level == 1 and block.depth == 0:
                title = heading_title(block.text).strip()
                if not shows_nothing(title):  # "# \u200b" names nothing: the next such heading, or the file name
                    return fitted_title(title)
    stem = PurePath(filename).stem
    title = re.sub(r"[_]+", " ", stem).strip() or stem
    return fitted_title(doc_id if doc_id and shows_nothing(title) else title)


def fitted_title(title: str) -> str:
    """A title cut to ``MAX_TITLE_CHARS``, the width of its column (PostgreSQL refuses more): a heading or a
    file name may be longer, and so may a title once a credential in it is redacted."""
    return cut_redacted(title, MAX_TITLE_CHARS)


def sha256_hex(data: bytes | str) -> str:
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def classification_policy() -> Policy:
    rules = current_app.config.get("CAIRN_CLASSIFICATION_POLICY")
    return Policy.from_config(rules) if rules else Policy.default()


@dataclass(frozen=True)
class SyncSource:
    """The folder file a synced upload came from (``cairn sync``), recorded with the revision it makes."""

    folder: str
    path: str
    sha256: str  # of the file's bytes

    def fields(self, version: int) -> dict:
        return dict(
            sync_folder=self.folder,
            sync_path=self.path,
            sync_sha256=self.sha256,
            synced_at=utcnow(),
            synced_version=version,
        )


def upload_file(
    pack: Pack,
    filename: str,
    data: bytes,
    user: User | None,
    content_type: str | None = None,
    expected_version: int | None = None,
    *,
    doc_id: str | None = None,
    reader_access: ReaderAccess | None = None,
    sync: SyncSource | None = None,
) -> UploadOutcome:
    """Read, classify, store and index one file; a refusal stores nothing.

    ``doc_id``: the document's id when the caller names it (the API), else the file name's.
    ``reader_access``: set with the new revision (None: the document keeps its own, or the defaults).
    ``sync``: where the file came from, recorded in the revision's own transaction.
    """
    try:
        return _upload(pack, filename, data, user, content_type, expected_version, doc_id, reader_access, sync)
    except Refused as refusal:
        return UploadOutcome(filename=shown_name(filename), refused=refusal)


def _upload(pack, filename, data, user, content_type, expected_version, doc_id, reader_access, sync) -> UploadOutcome:
    if doc_id is not None:  # the caller's id, before the file name made of it ("a file name has at most 255")
        refuse_if_bad_document_id(doc_id)
        _refuse_new_id_in_capitals(pack, doc_id)
    filename = upload_name(filename)
    if reader_access is not None:
        reader_access.refuse_if_not_for(pack)
    if len(data) > limits.MAX_FILE_BYTES:
        raise limits.refuse_too_large(len(data))
    if doc_id is None:
        document_id_for(filename)  # refuse an unusable name before reading anything
    extracted = read_upload(filename, data, content_type)
    title = title_for(filename, extracted.text, extracted.kind, extracted.title, doc_id)
    verdict = classify(extracted.text, title, filename, classification_policy())
    refuse_if_not_allowed(verdict)
    redaction = None
    if verdict.decision == "redact":
        if doc_id is not None and verdict.redacted_filename != filename:
            raise Refused(
                "bad_name",
                "The document id or file name looks like a credential; choose another one. Nothing was stored.",
            )
        extracted, redaction = _redact(extracted, verdict)
        title, filename = fitted_title(verdict.redacted_title), fitted_name(verdict.redacted_filename)
    doc_id = doc_id or id_in_pack(filename, lambda named: _names_a_document(pack, named))
    incoming = _Incoming(filename, content_type, title, extracted, redaction is not None, user)
    outcome = _store(pack, doc_id, incoming, expected_version, reader_access, sync)
    outcome.redaction = redaction
    return outcome


def _redact(extracted: Extracted, verdict: Classification) -> tuple[Extracted, Redaction]:
    """Keep only the redacted text: no original and no figures for Word/PDF; and say what went."""
    if extracted.kind in ("docx", "pdf"):
        text = replace_figure_markers(without_images_line(verdict.redacted_text), REDACTED_FIGURE)
        images = len(extracted.figures) + sum(extracted.images_not_kept.values())
        return (
            Extracted(
                text=text,
                kind=extracted.kind,
                original=None,
                figures=[],
                images_not_kept={},
                pages=extracted.pages,
                title_hint=extracted.title_hint,
            ),
            Redaction(verdict.deciding_kinds, original_dropped=True, images_dropped=images),
        )
    extracted.text = verdict.redacted_text
    return extracted, Redaction(verdict.deciding_kinds, original_for_staff_only=extracted.original is not None)


@dataclass
class _Incoming:
    """One upload's file, read (and redacted if need be), as it becomes a document's next revision."""

    filename: str
    content_type: str | None
    title: str
    extracted: Extracted
    redacted: bool
    user: User | None
    text_sha: str = field(init=False)
    original_sha: str | None = field(init=False)

    def __post_init__(self):
        self.text_sha = sha256_hex(self.extracted.text)
        original = self.extracted.original
        self.original_sha = sha256_hex(original) if original is not None else None


def _store(
    pack,
    doc_id,
    incoming: _Incoming,
    expected_version,
    reader_access: ReaderAccess | None = None,
    sync: SyncSource | None = None,
) -> UploadOutcome:
    filename, extracted = incoming.filename, incoming.extracted
    existing = Document.get_or_none((Document.pack == pack) & (Document.doc_id == doc_id))
    if existing is not None and existing.is_deleted:
        raise _refuse_deleted_id(doc_id)
    current_version = existing.current_version if existing else 0
    if expected_version is not None and expected_version != current_version:
        raise VersionConflict(expected_version, current_version)
    if existing is not None:
        current = existing.current_revision()
        if current and current.sha256 == incoming.text_sha and current.original_sha256 == incoming.original_sha:
            if sync is not None:  # the same text from a changed file: the file is what was synced now
                Document.update(**sync.fields(current_version)).where(Document.id == existing.id).execute()
            if reader_access is not None and reader_access.fields() != access_fields(existing):
                changed = change_reader_access(existing, reader_access, current_version, incoming.user)
                return UploadOutcome(
                    filename=filename,
                    document=changed.document,
                    revision=changed,
                    images_kept=len(extracted.figures),
                    images_not_kept=dict(extracted.images_not_kept),
                )
            return UploadOutcome(
                filename=filename,
                document=existing,
                revision=current,
                unchanged=True,
                images_kept=len(extracted.figures),
                images_not_kept=dict(extracted.images_not_kept),
            )

    spans = split_passages(extracted.text, extracted.kind)
    try:
        with storage.changing() as files:
            with database().atomic():
                document, version = _claim_document(
                    pack, existing, doc_id, incoming.title, extracted.kind, current_version
                )
                # read at the version this upload claimed from: exactly the text it replaces
                replaced_edit = revisions.text_edited_in_browser(document, current_version) if existing else None
                replaced_file = (
                    revisions.file_of_another_name(document, current_version, filename) if existing else None
                )
                purged, revision = _write_revision(files, document, version, incoming, spans)
                if reader_access is not None:
                    set_reader_access(incoming.user, document, reader_access, version)
                revisions.stamp_reader_access(document.id)
                if sync is not None:
                    Document.update(**sync.fields(version)).where(Document.id == document.id).execute()
                # The row as this upload left it: read after the commit, it may be another writer's already.
                document = Document.get_by_id(document.id)
            revisions.remove_revision_folders(document, purged)
    except VersionConflict as conflict:
        if expected_version is not None:
            raise
        if existing is not None and conflict.current == 0:  # deleted while this upload was read
            raise _refuse_deleted_id(doc_id) from None
        raise _refuse_concurrent_upload(filename, doc_id) from None
    search_service.index_changes(pack)
    return UploadOutcome(
        filename=filename,
        document=document,
        revision=revision,
        created=existing is None,
        images_kept=len(extracted.figures),
        images_not_kept=dict(extracted.images_not_kept),
        replaced_edit=replaced_edit,
        replaced_file=replaced_file,
    )


def _claim_document(pack, existing, doc_id, title, kind, current_version) -> tuple[Document, int]:
    """Create the document (or take the existing one) and claim its next version; a concurrent
    upload that did so first makes this raise ``VersionConflict``."""
    if existing is None:
        try:
            with database().atomic():  # a savepoint: PostgreSQL's transaction survives the failed insert
                existing = Document.create(pack=pack, doc_id=doc_id, title=title, kind=kind)
        except IntegrityError:  # the same new name, stored by another upload a moment ago
            raise VersionConflict(0, 1) from None
    return existing, revisions.claim_next_version(existing, current_version)


def _refuse_deleted_id(doc_id: str) -> Refused:
    return Refused(
        "id_reused",
        f"A deleted document of this pack was called {doc_id!r}; ids are never "
        "reused, so rename the file and upload it again.",
    )


def _refuse_concurrent_upload(filename: str, doc_id: str) -> Refused:
    return Refused(
        "conflict",
        f"{filename} was stored by another upload a moment ago (as {doc_id}); "
        "this copy was not stored. Open the document to check it, and upload again "
        "to make this file its next version.",
    )


def _write_revision(
    files: storage.FileChanges, document, version, incoming: _Incoming, spans
) -> tuple[list[int], Revision]:
    """Inside the upload's transaction: files, revision, figures, passages, purge and pending index work."""
    filename, extracted = incoming.filename, incoming.extracted
    folder = revisions.revision_folder(document, version)
    try:
        original_path = None
        if extracted.original is not None:
            suffix = PurePath(filename).suffix.lower()
            original_path = f"{folder}/original{suffix}"
            files.write(original_path, extracted.original)
        revision = Revision.create(
            document=document,
            version=version,
            text=extracted.text,
            sha256=incoming.text_sha,
            original_name=filename,
            original_path=original_path,
            original_sha256=incoming.original_sha,
            original_content_type=incoming.content_type,
            original_size=len(extracted.original or b"") or None,
            pages=extracted.pages,
            images_not_kept=dict(extracted.images_not_kept),
            created_by=incoming.user,
        )
        for figure in extracted.figures:
            revisions.store_figure(files, revision, f"{folder}/figure-{figure.number}.webp", figure.webp, figure)
        revisions.create_passages(revision, spans)
        Document.update(
            # A title edited by hand stays; else the file's own title names the document.
            title=Case(None, ((Document.title_by_hand, Document.title),), incoming.title),
            kind=extracted.kind,
            redacted=incoming.redacted,
            updated_at=utcnow(),
        ).where(Document.id == document.id).execute()
        purged = revisions.purge_old_revisions(document, version, files)
        search_service.record_index_change(document.pack_id, document.doc_id)
    except BaseException:
        storage.remove_tree(folder)
        raise
    return purged, revision
