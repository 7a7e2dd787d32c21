"""Keeping a pack in step with a folder (``cairn sync PACK FOLDER``).

The folder is walked recursively, skipping hidden names (``.git``, ``.svn``, ``.hg``,
editor files …) and build, vendor and version-control folders. Each file's document id
is its path in the folder with ``/`` read as ``-`` (``setup/network.md`` → ``setup-network``).

- A new file is uploaded through the upload service (its limits, refusals and
  classification), and its folder, path and SHA-256 are recorded with the revision in
  the same transaction (``SyncSource``, migrations/0017).
- A file whose bytes hash as recorded is left alone: read once to hash, never ingested.
- A changed file becomes the document's next revision, compare-and-set on the version
  the sync saw; a refusal leaves the old revision as it was.
- A document this folder made whose file is gone is deleted (a tombstone, like any delete).
  Documents uploaded by hand or synced from another folder are never touched.
- A document edited in the browser since its last sync (its current version is not the
  one the sync made) is not overwritten or deleted: the line says "conflict", until a run
  with ``overwrite_edits`` (``--overwrite-edits``) takes the folder's version.

Each file is its own transaction, so a run killed half way has stored whole files only,
and the next run, seeing their recorded hashes, finishes the rest. One sync per pack at a
time (a lock file beside the data); the version compare-and-set guards against the browser.
"""

from __future__ import annotations

import fcntl
import mimetypes
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath

from flask import current_app

from portal.documents import editing
from portal.documents.ids import document_id_for, id_in_pack
from portal.documents.services import SyncSource, sha256_hex, upload_file
from portal.errors import Refused, VersionConflict
from portal.ingest import limits
from portal.ingest.formats import KINDS
from portal.models import Document, Pack
from portal.search.service import batched_index_updates

SKIPPED_FOLDERS = frozenset({"build", "dist", "target", "out", "vendor", "node_modules", "__pycache__", "CVS"})
"""Besides every hidden folder (``.git``, ``.svn``, ``.hg``, ``.venv`` …): build output and vendored code."""

ACTIONS = ("added", "updated", "unchanged", "removed", "refused", "conflict")


@dataclass
class SyncLine:
    """What the sync did (or, in a dry run, would do) with one file or document."""

    path: str  # the file's path in the folder, ``/``-separated
    action: str  # one of ACTIONS
    document: str | None = None
    version: int | None = None
    reason: str | None = None
    message: str | None = None

    def as_json(self) -> dict:
        return asdict(self)


@dataclass
class SyncPlan:
    """The folder as the sync sees it: its files by document id, and ids two files would share."""

    root: Path
    files: dict[str, PurePosixPath]
    clashes: dict[str, list[PurePosixPath]]
    unnamed: list[tuple[PurePosixPath, Refused]]


def folder_files(root: Path) -> Iterator[PurePosixPath]:
    """The regular files under ``root``, relative and sorted, without skipped folders or hidden names."""
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith(".") and d not in SKIPPED_FOLDERS)
        for name in sorted(names):
            path = Path(folder) / name
            if not name.startswith(".") and path.is_file() and not path.is_symlink():
                yield PurePosixPath(path.relative_to(root).as_posix())


def document_id_for_path(relative: PurePosixPath) -> str:
    """``setup/network.md`` → ``setup-network``: the folder parts joined to the file's name."""
    return document_id_for("-".join(relative.parts))


def plan(root: Path) -> SyncPlan:
    files: dict[str, PurePosixPath] = {}
    sharing: dict[str, list[PurePosixPath]] = {}
    unnamed = []
    for relative in folder_files(root):
        try:
            doc_id = document_id_for_path(relative)
        except Refused as refusal:
            unnamed.append((relative, refusal))
            continue
        sharing.setdefault(doc_id, []).append(relative)
    for doc_id, paths in sharing.items():
        if len(paths) == 1:
            files[doc_id] = paths[0]
    return SyncPlan(root, files, {i: p for i, p in sharing.items() if len(p) > 1}, unnamed)


def sync_folder(
    pack: Pack, folder: str | Path, dry_run: bool = False, overwrite_edits: bool = False
) -> Iterator[SyncLine]:
    """Bring ``pack`` in step with ``folder``; one line per file or removed document, as it happens.

    ``overwrite_edits``: documents edited in the browser since their last sync take the folder's
    version too (the browser's stays as an older revision) instead of being reported as conflicts.

    Raises ``Refused`` before doing anything when the folder is not one, or another sync of the
    pack is running.
    """
    root = Path(folder).resolve()
    if not root.is_dir():
        raise Refused("not_a_folder", f"{folder} is not a folder.")
    with _one_sync_per_pack(pack):
        seen = plan(root)
        source = str(root)
        documents = {d.doc_id: d for d in Document.select().where(Document.pack == pack)}
        with batched_index_updates():
            for relative, refusal in seen.unnamed:
                yield SyncLine(str(relative), "refused", reason=refusal.reason, message=refusal.message)
            for doc_id, paths in sorted(seen.clashes.items()):
                for relative in paths:
                    others = ", ".join(str(p) for p in paths if p != relative)
                    yield SyncLine(
                        str(relative),
                        "refused",
                        doc_id,
                        reason="id_clash",
                        message=f"{relative} and {others} would both be document {doc_id}; rename one of them.",
                    )
            kept = set(seen.clashes)
            for doc_id, relative in sorted(seen.files.items(), key=lambda item: item[1]):
                doc_id = id_in_pack("-".join(relative.parts), documents.__contains__)  # a document named before
                kept.add(doc_id)
                existing = documents.get(doc_id)
                yield _sync_file(pack, source, root, relative, doc_id, existing, dry_run, overwrite_edits)
            for doc_id, document in sorted(documents.items()):
                if document.sync_folder == source and not document.is_deleted and doc_id not in kept:
                    yield _remove(document, dry_run, overwrite_edits)


def _sync_file(pack, source, root, relative, doc_id, existing: Document | None, dry_run, overwrite_edits) -> SyncLine:
    path = root / relative
    line = SyncLine(str(relative), "refused", doc_id)
    if existing is not None and not existing.is_deleted and existing.sync_folder != source:
        where = f"from the folder {existing.sync_folder}" if existing.sync_folder else "by hand"
        line.reason, line.message = (
            "not_from_this_folder",
            f"Document {doc_id} was uploaded {where}; a sync of this folder never changes it.",
        )
        return line
    if existing is not None and existing.is_deleted and existing.sync_folder == source:
        line.action = "unchanged"
        line.message = "deleted in the browser after a sync; a sync does not bring it back (ids are never reused)"
        return line
    extension = relative.suffix.lower()
    size = path.stat().st_size
    if extension not in KINDS or size > limits.MAX_FILE_BYTES:  # refused before it is read, dry run or not
        refusal = limits.refuse_unsupported_type(extension) if extension not in KINDS else limits.refuse_too_large(size)
        line.reason, line.message = refusal.reason, refusal.message
        return line
    data = path.read_bytes()
    sha = sha256_hex(data)
    live = existing is not None and not existing.is_deleted
    if live and existing.sync_sha256 == sha and existing.sync_path == str(relative):
        line.action, line.version = "unchanged", existing.current_version
        if existing.current_version != existing.synced_version:
            line.message = f"edited in the browser since the last sync (v{existing.synced_version}); that edit stays"
        return line
    if live and existing.current_version != existing.synced_version and not overwrite_edits:
        line.action, line.version, line.reason = "conflict", existing.current_version, "edited_in_browser"
        line.message = (
            f"Changed in the folder, and edited in the browser since the last sync (now v"
            f"{existing.current_version}, synced v{existing.synced_version}): not overwritten. Run the sync "
            "with --overwrite-edits to take the folder's version (the browser's stays as an older revision)."
        )
        return line
    if dry_run:
        line.action = "updated" if live else "added"
        return line
    try:
        outcome = upload_file(
            pack,
            relative.name,
            data,
            None,
            content_type=mimetypes.guess_type(relative.name)[0],
            expected_version=existing.current_version if live else 0,
            doc_id=doc_id,
            sync=SyncSource(source, str(relative), sha),
        )
    except VersionConflict as conflict:
        line.action, line.reason, line.message = "conflict", "changed_meanwhile", str(conflict)
        return line
    if not outcome.accepted:
        kept = f"; version {existing.current_version} stays as it was" if live else ""
        line.reason, line.message = outcome.refused.reason, outcome.refused.message + kept
        return line
    line.version = outcome.revision.version
    line.action = "unchanged" if outcome.unchanged else ("updated" if live else "added")
    notes = [f"now from {relative} (was {existing.sync_path})"] if live and existing.sync_path != str(relative) else []
    if outcome.replaced_edit is not None:  # taken with --overwrite-edits
        notes.append(outcome.replaced_edit.replaced_summary())
    line.message = "; ".join(notes) or None
    return line


def _remove(document: Document, dry_run: bool, overwrite_edits: bool) -> SyncLine:
    line = SyncLine(document.sync_path, "removed", document.doc_id, document.current_version)
    if document.current_version != document.synced_version and not overwrite_edits:
        line.action, line.reason = "conflict", "edited_in_browser"
        line.message = (
            f"Gone from the folder, but edited in the browser since the last sync (now v"
            f"{document.current_version}): kept. Delete it in the browser, or sync with --overwrite-edits."
        )
        return line
    if dry_run:
        return line
    try:
        editing.delete_document(document, document.current_version)
    except VersionConflict as conflict:
        line.action, line.reason, line.message = "conflict", "changed_meanwhile", str(conflict)
    return line


@contextmanager
def _one_sync_per_pack(pack: Pack):
    """A lock file per pack under the data folder; the kernel releases a killed run's lock."""
    path = Path(current_app.config["CAIRN_DATA_DIR"]) / f"sync-{pack.id}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise Refused(
                "sync_running", f"Another sync of the pack {pack.slug} is running; try again after it."
            ) from None
        yield
    finally:
        os.close(fd)


def summary(lines: list[SyncLine]) -> dict[str, int]:
    counts = dict.fromkeys(ACTIONS, 0)
    for line in lines:
        counts[line.action] += 1
    return counts
