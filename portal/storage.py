"""Files under the data folder: originals and figures, addressed by relative paths.

Paths stored in the database are relative to ``CAIRN_DATA_DIR/files`` and are
never shown to anyone; files are served only through permission-checked views.

Files are written before the transaction that names them commits, and removed
after the one that stops naming them. A process killed in between leaves files
no row names. So a transaction first notes each folder it will write into or
remove (``changing``: one small file under ``CAIRN_DATA_DIR/files.pending/``,
deleted when the transaction's work is done, committed or not); only a killed
process leaves its note behind, and ``sweep`` at the next start deletes the
files in the noted folders that no row names. Nothing outside a noted folder is
ever swept, so a wrong ``DATABASE_URL`` cannot make the sweep delete kept files.
Writers hold a shared lock on ``CAIRN_DATA_DIR/files.lock`` for their whole
transaction and ``sweep`` takes it exclusively, so it never touches a transaction
still running in another process; the kernel releases a killed process's lock.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from flask import Response, current_app, send_file

from portal.errors import NotFound


def files_root() -> Path:
    return Path(current_app.config["CAIRN_DATA_DIR"]) / "files"


def resolve(relative: str) -> Path:
    root = files_root().resolve()
    path = (root / relative).resolve()
    if root not in path.parents:
        raise ValueError("path escapes the files folder")
    return path


def write(relative: str, data: bytes) -> None:
    """Write atomically (temp file + rename) so a crash never leaves half a file."""
    path = resolve(relative)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read(relative: str) -> bytes:
    return resolve(relative).read_bytes()


def send(relative: str, **send_file_options) -> Response:
    """A response streaming the stored file (``flask.send_file``'s options: type, name, conditional requests).

    The only place that turns a stored file into a response, as ``resolve`` is the only one
    that knows a file is a local path: files on shared or object storage (docs/scaling.md)
    change this module, not its callers.

    A file gone since its caller read the row naming it (a deletion or a purge committed in between
    and removed it) is ``NotFound``: the 404 the request would have got a moment later, never a 500.
    """
    try:
        return send_file(resolve(relative), **send_file_options)
    except FileNotFoundError:
        raise NotFound(relative) from None


def remove(relative: str) -> None:
    """Remove one file (gone already is fine) and the folders it leaves empty."""
    resolve(relative).unlink(missing_ok=True)
    _prune_empty_parents(resolve(relative).parent)


def remove_tree(relative: str) -> None:
    shutil.rmtree(resolve(relative), ignore_errors=True)
    _prune_empty_parents(resolve(relative).parent)


def _prune_empty_parents(folder: Path) -> None:
    root = files_root().resolve()
    while folder != root and root in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


NOTES_FOLDER = "files.pending"  # under CAIRN_DATA_DIR, beside files/


class FileChanges:
    """The folders one transaction writes into or will remove, noted before it touches them."""

    def __init__(self, note: Path):
        self._note = note
        self._noted: set[str] = set()

    def touches(self, folder: str) -> None:
        """Note ``folder`` (relative to the files folder) before writing into or removing it."""
        if folder not in self._noted:
            resolve(folder)  # refuses a path outside the files folder
            self._note.parent.mkdir(parents=True, exist_ok=True)
            with open(self._note, "a", encoding="utf-8") as note:
                note.write(folder + "\n")  # a line counts once its newline is written
            self._noted.add(folder)

    def write(self, relative: str, data: bytes) -> None:
        self.touches(str(PurePosixPath(relative).parent))
        write(relative, data)

    def done(self) -> None:
        """The transaction's files are as its outcome needs them: drop the note."""
        self._note.unlink(missing_ok=True)


@contextmanager
def changing() -> Iterator[FileChanges]:
    """Hold the shared files lock for a transaction that writes or removes files, and its note."""
    with _files_lock(fcntl.LOCK_SH):
        changes = FileChanges(_notes_folder() / f"{os.getpid()}-{uuid.uuid4().hex}")
        yield changes
        # Only a block that ended normally drops its note: after an exception (a rolled-back
        # transaction) the noted folders may hold files no row names, which the next sweep removes.
        changes.done()


def sweep(referenced: Callable[[], set[str]]) -> list[str] | None:
    """Delete the files in folders noted by killed transactions that ``referenced()`` does not name.

    Returns the deleted paths; None (and deletes nothing) while another transaction is
    writing files, as the next start sweeps. Without notes it costs one directory listing.
    """
    notes_folder = _notes_folder()
    if not notes_folder.is_dir() or not any(notes_folder.iterdir()):
        return []
    try:
        with _files_lock(fcntl.LOCK_EX | fcntl.LOCK_NB):
            named = referenced()
            removed = []
            for note in sorted(notes_folder.iterdir()):
                for folder in note.read_text(encoding="utf-8").split("\n")[:-1]:  # complete lines only
                    removed += _remove_unnamed(folder, named)
                note.unlink()
            return removed
    except BlockingIOError:
        return None


def _remove_unnamed(folder: str, named: set[str]) -> list[str]:
    base = resolve(folder)
    if not base.is_dir():
        return []
    root = files_root().resolve()
    removed = []
    for path in sorted(base.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if path.is_file() and relative not in named:
            path.unlink(missing_ok=True)
            removed.append(relative)
    for inner in sorted((p for p in base.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
        _remove_if_empty(inner)
    _remove_if_empty(base)
    _prune_empty_parents(base.parent)
    return removed


def _notes_folder() -> Path:
    return Path(current_app.config["CAIRN_DATA_DIR"]) / NOTES_FOLDER


@contextmanager
def _files_lock(operation: int) -> Iterator[None]:
    lock_path = Path(current_app.config["CAIRN_DATA_DIR"]) / "files.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, operation)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _remove_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass
