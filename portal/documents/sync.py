"""Keep a pack in step with a folder (``cairn sync``): add new files, re-ingest changed ones, leave
unchanged ones alone, and remove the documents whose file is gone — only those that came from
that folder.

Every file goes through the upload service, its sync record (``SyncSource``) written in the
same transaction as its revision, so a sync killed half way leaves each document either
synced or untouched, and the next run finishes the job. A document changed elsewhere since
it was last synced (a version sync did not write) is a conflict: reported, never
overwritten, unless asked. One sync of a pack runs at a time (a file lock).
"""

from __future__ import annotations

import fcntl
import hashlib
import mimetypes
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from flask import current_app

from portal.documents.editing import delete_document
from portal.documents.services import SyncSource, document_id_for, upload_file
from portal.errors import CairnError, Refused, VersionConflict
from portal.ingest import limits
from portal.models import Document, Pack
from portal.search.service import batched_index_updates

# Folders never walked: build output, dependencies and version control (hidden folders too).
SKIPPED_FOLDERS = frozenset(
    {"build", "dist", "node_modules", "vendor", "__pycache__", "target", "venv", "site-packages", "CVS"}
)

ACTIONS = ("added", "updated", "unchanged", "removed", "refused", "conflict")


class SyncError(CairnError):
    """The sync cannot start (no such folder, another sync of the pack running); nothing was changed."""


@dataclass
class SyncLine:
    """What sync did (or, in a dry run, would do) with one file."""

    path: str  # relative to the folder
    action: str  # one of ACTIONS
    doc_id: str | None = None
    version: int | None = None
    reason: str | None = None  # a refusal's code, or "edited" for a conflict
    message: str | None = None

    def as_json(self) -> dict:
        return asdict(self)


@dataclass
class _File:
    path: str  # relative, with "/"
    absolute: Path


def walk(folder: Path) -> list[_File]:
    """The regular files under ``folder``, sorted by path; hidden, build, vendor and version-control
    folders, hidden files and symbolic links are left out (a link could lead outside the folder)."""
    found: list[_File] = []
    for directory, subfolders, files in os.walk(folder, followlinks=False):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith(".") and d not in SKIPPED_FOLDERS)
        for name in files:
            absolute = Path(directory) / name
            if name.startswith(".") or absolute.is_symlink() or not absolute.is_file():
                continue
            found.append(_File(absolute.relative_to(folder).as_posix(), absolute))
    return sorted(found, key=lambda f: f.path)


def sync_folder(
    pack: Pack, folder: str | Path, dry_run: bool = False, overwrite_edited: bool = False
) -> Iterator[SyncLine]:
    """One ``SyncLine`` per file, yielded as each is done (a killed run has shown what it did)."""
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise SyncError(f"{folder} is not a folder.")
    root = root.resolve()
    source_folder = str(root)
    with _one_sync_per_pack(pack), batched_index_updates():
        synced = {
            d.source_path: d
            for d in Document.select().where(
                (Document.pack == pack) & (Document.source_folder == source_folder) & Document.deleted_at.is_null()
            )
        }
        files = walk(root)
        claimed: dict[str, str] = {}  # document id -> the path that maps to it in this run
        for file in files:
            yield _sync_file(pack, source_folder, file, synced.get(file.path), claimed, dry_run, overwrite_edited)
        present = {f.path for f in files}
        for path in sorted(set(synced) - present):
            yield _remove(synced[path], dry_run, overwrite_edited)


def summary(lines: list[SyncLine]) -> dict[str, int]:
    return {action: sum(line.action == action for line in lines) for action in ACTIONS}


def _sync_file(pack, source_folder, file: _File, document, claimed, dry_run, overwrite_edited) -> SyncLine:
    size = file.absolute.stat().st_size
    if size > limits.MAX_FILE_BYTES:  # not read at all; the document keeps its current revision
        refusal = limits.refuse_too_large(size)
        return SyncLine(file.path, "refused", _doc_id(document), reason=refusal.reason, message=refusal.message)
    data = file.absolute.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    if document is not None:
        if document.source_sha256 == sha:
            return SyncLine(file.path, "unchanged", document.doc_id, document.current_version)
        if _edited_elsewhere(document) and not overwrite_edited:
            return _conflict(file.path, document, "the file changed too; it was not applied")
        doc_id, expected = document.doc_id, document.current_version
    else:
        try:
            doc_id = document_id_for(file.path.replace("/", "-"))
        except Refused as refusal:
            return SyncLine(file.path, "refused", reason=refusal.reason, message=refusal.message)
        if doc_id in claimed:
            return SyncLine(
                file.path,
                "refused",
                doc_id,
                reason="id_taken",
                message=f"{claimed[doc_id]} of this folder is synced as {doc_id!r} already; rename one of them.",
            )
        other = Document.get_or_none((Document.pack == pack) & (Document.doc_id == doc_id))
        if other is not None and not other.is_deleted:
            where = f"synced from {other.source_folder}" if other.source_folder else "uploaded by hand"
            return SyncLine(
                file.path,
                "refused",
                doc_id,
                reason="id_taken",
                message=f"The pack has a document {doc_id!r} {where}; it was left alone. Rename the file.",
            )
        expected = 0
    claimed[doc_id] = file.path
    action = "updated" if document is not None else "added"
    if dry_run:
        return SyncLine(file.path, action, doc_id, expected + 1)
    name = file.path.rsplit("/", 1)[-1]
    try:
        outcome = upload_file(
            pack,
            name,
            data,
            None,
            content_type=mimetypes.guess_type(name)[0],
            expected_version=expected,
            doc_id=doc_id,
            sync_source=SyncSource(source_folder, file.path, sha),
        )
    except VersionConflict as conflict:  # changed in the browser a moment ago
        return SyncLine(file.path, "conflict", doc_id, conflict.current, "edited", str(conflict))
    if not outcome.accepted:
        refusal = outcome.refused
        kept = f" Version {expected} stays." if expected else ""
        return SyncLine(file.path, "refused", doc_id, expected or None, refusal.reason, refusal.message + kept)
    if outcome.unchanged:
        return SyncLine(file.path, "unchanged", doc_id, outcome.revision.version, message="same text as before")
    return SyncLine(file.path, action, doc_id, outcome.revision.version)


def _remove(document: Document, dry_run: bool, overwrite_edited: bool) -> SyncLine:
    if _edited_elsewhere(document) and not overwrite_edited:
        return _conflict(document.source_path, document, "its file is gone; it was not removed")
    if not dry_run:
        try:
            delete_document(document, document.current_version)
        except VersionConflict as conflict:
            path = document.source_path
            return SyncLine(path, "conflict", document.doc_id, conflict.current, "edited", str(conflict))
    return SyncLine(document.source_path, "removed", document.doc_id, document.current_version)


def _edited_elsewhere(document: Document) -> bool:
    return document.synced_version is not None and document.current_version != document.synced_version


def _conflict(path: str, document: Document, what: str) -> SyncLine:
    return SyncLine(
        path,
        "conflict",
        document.doc_id,
        document.current_version,
        "edited",
        f"{document.doc_id} was changed outside this folder since the last sync (version "
        f"{document.current_version}; sync wrote version {document.synced_version}), and {what}. "
        "Run again with --overwrite-edited to let the folder win.",
    )


def _doc_id(document) -> str | None:
    return document.doc_id if document is not None else None


@contextmanager
def _one_sync_per_pack(pack: Pack):
    folder = Path(current_app.config["CAIRN_DATA_DIR"]) / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"sync-pack-{pack.id}.lock", "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SyncError(f"Another sync of pack {pack.slug} is running; nothing was changed.") from None
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
