"""Files under the data folder: originals and figures, addressed by relative paths.

Paths stored in the database are relative to ``CAIRN_DATA_DIR/files`` and are
never shown to anyone; files are served only through permission-checked views.
"""

from __future__ import annotations

import os
import shutil
import tempfile
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
