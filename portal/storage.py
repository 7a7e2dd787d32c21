"""Files under the data folder: originals and figures, addressed by relative paths.

Paths stored in the database are relative to ``CAIRN_DATA_DIR/files`` and are
never shown to anyone; files are served only through permission-checked views.

Files are written before the transaction that names them commits. A process
killed in between leaves files that no row names; ``sweep`` removes them at the
next start. Writers hold a shared lock on ``CAIRN_DATA_DIR/files.lock`` for the
whole transaction and ``sweep`` takes it exclusively, so it never mistakes the
files of a transaction still running in another process for leftovers. The
kernel releases the lock of a killed process.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from flask import current_app


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


@contextmanager
def writing() -> Iterator[None]:
    """Hold the shared files lock while files are written for a transaction not committed yet."""
    with _files_lock(fcntl.LOCK_SH):
        yield


def sweep(referenced: Callable[[], set[str]]) -> list[str] | None:
    """Delete every file under the files folder that ``referenced()`` does not name; return them.

    ``referenced`` is read once no transaction that writes files is running. Returns None
    (and deletes nothing) when one is: the next start sweeps.
    """
    root = files_root()
    if not root.is_dir():
        return []
    try:
        with _files_lock(fcntl.LOCK_EX | fcntl.LOCK_NB):
            named = referenced()
            removed = []
            for path in sorted(root.rglob("*")):
                relative = path.relative_to(root).as_posix()
                if path.is_file() and relative not in named:
                    path.unlink(missing_ok=True)
                    removed.append(relative)
            for folder in sorted((p for p in root.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
                _remove_if_empty(folder)
            return removed
    except BlockingIOError:
        return None


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
