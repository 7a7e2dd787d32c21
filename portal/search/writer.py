"""Opening and closing a partition's Lucene ``IndexWriter``: the waiting, rollback and clean-up of every write.

Lucene's ``write.lock`` lets one writer at a time into an index, across
processes. These helpers wait for it (``IndexBusy`` after the timeout), roll a
failed write back so a call writes all or nothing, and close whatever they
opened, so ``IndexStore`` holds no Java object between calls.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from portal.search import jvm
from portal.search.analysis import english_analyzer
from portal.search.errors import IndexBusy, SearchError
from portal.search.jvm import J
from portal.search.schema import open_directory

BULK_RAM_BUFFER_MB = 256.0

_LOCK_RETRY_SECONDS = 0.05
_LOCK_FAILED = "org.apache.lucene.store.LockObtainFailedException"
_UNREADABLE_INDEX = {
    "org.apache.lucene.index.CorruptIndexException",
    "org.apache.lucene.index.IndexFormatTooOldException",
    "org.apache.lucene.index.IndexFormatTooNewException",
}


def is_unreadable(error: SearchError) -> bool:
    """True when opening failed because Lucene cannot read the index (corrupt, or from another Lucene version)."""
    return getattr(error.__cause__, "classname", None) in _UNREADABLE_INDEX


@dataclass(frozen=True)
class WriterSettings:
    """How a pack's writers are made: the BM25 parameters and how long to wait for Lucene's write lock."""

    k1: float
    b: float
    lock_timeout: float

    def open_writer(
        self, pack_slug: str, path: Path, open_mode: str = "CREATE_OR_APPEND", ram_buffer_mb: float | None = None
    ):
        """An ``IndexWriter`` on ``path``, retrying while another writer holds the lock."""
        with jvm.java_lock:
            directory = open_directory(path)

        def open_writer():
            config = self._writer_config(open_mode, ram_buffer_mb)
            return J().JIndexWriter(directory, config)

        try:
            return self.retry_while_locked(pack_slug, open_writer)
        except jvm.JavaException as error:
            with jvm.java_lock:
                directory.close()
            raise SearchError(f"Opening the index of pack {pack_slug!r} failed: {describe(error)}") from error
        except BaseException:
            with jvm.java_lock:
                directory.close()
            raise

    def open_writer_discarding_unreadable(self, pack_slug: str, path: Path):
        """A writer that starts the pack's index afresh, even over files Lucene cannot read."""
        try:
            return self.open_writer(pack_slug, path, "CREATE", BULK_RAM_BUFFER_MB)
        except SearchError as error:
            if not is_unreadable(error):
                raise
        shutil.rmtree(path)
        return self.open_writer(pack_slug, path, "CREATE", BULK_RAM_BUFFER_MB)

    def retry_while_locked(self, pack_slug: str, attempt: Callable):
        """Run ``attempt`` until Lucene's write lock is free, or raise ``IndexBusy`` after ``lock_timeout``.

        Each attempt holds ``java_lock``; the waits between them do not.
        """
        started = time.monotonic()
        while True:
            try:
                with jvm.java_lock:
                    return attempt()
            except jvm.JavaException as error:
                if error.classname != _LOCK_FAILED:
                    raise
                waited = time.monotonic() - started
                if waited >= self.lock_timeout:
                    raise IndexBusy(pack_slug, waited) from error
            time.sleep(_LOCK_RETRY_SECONDS)

    def _writer_config(self, open_mode: str, ram_buffer_mb: float | None):
        classes = J()
        config = classes.JIndexWriterConfig(english_analyzer())
        similarity = classes.JBM25Similarity(self.k1, self.b)
        config.setSimilarity(similarity)
        mode = getattr(classes.JOpenMode, open_mode)
        config.setOpenMode(mode)
        if ram_buffer_mb is not None:
            config.setRAMBufferSizeMB(ram_buffer_mb)
        return config


def describe(error) -> str:
    return f"{error.classname}: {error.innermessage}"


def rollback_quietly(writer) -> None:
    """Discard uncommitted changes; a writer already broken by the failure may refuse, which is fine."""
    try:
        writer.rollback()
    except jvm.JavaException:
        pass


def close_quietly(closeable) -> None:
    """Close a writer or lock that may already be closed (``rollback`` closes the writer)."""
    try:
        closeable.close()
    except jvm.JavaException:
        pass
