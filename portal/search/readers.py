"""One open Lucene reader per pack partition, moved to the newest commit before each search.

Opening a reader costs milliseconds, so readers stay open between searches; but
another process (the command line, a second web worker) may commit at any time,
and a passage must be findable as soon as its write returned. Asking Lucene
(``openIfChanged``) reads and parses the commit file, about 0.3 ms per pack
measured here, as much as a whole query. So we look at the folder first: a stat
of the folder, and only when that cannot prove "no change" a listing of its
``segments_N`` files; Lucene is asked only when a commit really happened.
"""

from __future__ import annotations

import itertools
import os
import time
from pathlib import Path

from portal.search import jvm
from portal.search.errors import SearchError
from portal.search.jvm import J
from portal.search.schema import open_directory

MTIME_SETTLED_NS = 3_000_000_000
"""A folder mtime this much older than our last look is trusted to change on the next commit.

File systems stamp times at a coarse granularity (a clock tick, or 1-2 s on some),
so a commit right after our look could leave a recent mtime unchanged; an old one
cannot stay equal.
"""

_versions = itertools.count(1)


def commit_fingerprint(index_path: str | Path) -> tuple | None:
    """Identifies a pack's newest commit without asking Lucene; None when there is no index.

    Every commit writes a new ``segments_N`` file with a higher N (base 36), so its
    generation, inode and mtime change with every commit.
    """
    newest_generation, newest_name = -1, None
    try:
        for name in os.listdir(index_path):
            if name.startswith("segments_"):
                generation = _base36_or_none(name[len("segments_") :])
                if generation is not None and generation > newest_generation:
                    newest_generation, newest_name = generation, name
        if newest_name is None:
            return None
        stat = os.stat(os.path.join(index_path, newest_name))
    except (FileNotFoundError, NotADirectoryError):
        return None
    return newest_generation, stat.st_ino, stat.st_mtime_ns


def _base36_or_none(text: str) -> int | None:
    try:
        return int(text, 36)
    except ValueError:
        return None


def _folder_mtime_ns(path: str | Path) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except (FileNotFoundError, NotADirectoryError):
        return None


class PackReader:
    """A pack partition's open ``DirectoryReader``; ``version`` changes whenever the reader is replaced."""

    def __init__(self, slug: str, reader, partition: str = ""):
        self.slug = slug
        self.partition = partition
        self.reader = reader
        self.version = next(_versions)
        self.fingerprint: tuple | None = None
        self._folder_mtime_ns: int | None = None
        self._looked_at_ns = 0

    def looked_at(self, fingerprint: tuple, folder_mtime_ns: int | None, looked_at_ns: int) -> None:
        """Remember what a full look at the folder saw, and when."""
        self.fingerprint = fingerprint
        self._folder_mtime_ns = folder_mtime_ns
        self._looked_at_ns = looked_at_ns

    def provably_unchanged(self, path: str) -> bool:
        """True when the folder's mtime, settled before our last look, is still the same."""
        mtime = _folder_mtime_ns(path)
        return mtime is not None and mtime == self._folder_mtime_ns and self._looked_at_ns - mtime > MTIME_SETTLED_NS


class PackReaders:
    """The open readers of the pack partitions under ``root``; use them while holding ``jvm.java_lock``."""

    def __init__(self, root: Path):
        self._root = os.fspath(root)
        self._open: dict[tuple[str, str], PackReader] = {}

    def current(self, slug: str, partition: str) -> PackReader | None:
        """The partition's reader on its newest commit; None when it has no index."""
        key = (slug, partition)
        path = f"{self._root}{os.sep}{slug}{os.sep}{partition}"
        cached = self._open.get(key)
        if cached is not None and cached.provably_unchanged(path):
            return cached
        looked_at_ns = time.time_ns()
        folder_mtime_ns = _folder_mtime_ns(path)
        fingerprint = commit_fingerprint(path)
        if cached is not None and cached.fingerprint == fingerprint:
            cached.looked_at(fingerprint, folder_mtime_ns, looked_at_ns)
            return cached
        reader = self._newest_reader(path, cached) if fingerprint is not None else None
        self._close(key)
        if reader is None:
            return None
        pack = self._open[key] = PackReader(slug, reader, partition)
        pack.looked_at(fingerprint, folder_mtime_ns, looked_at_ns)
        return pack

    def keep_only(self, slug: str, partitions: list[str]) -> None:
        """Close the readers of the pack's partitions that are gone (a rebuild removes emptied ones)."""
        for key in [k for k in self._open if k[0] == slug and k[1] not in partitions]:
            self._close(key)

    def version(self, slug: str, partition: str) -> int | None:
        """The version of the reader now open for the partition, without looking for new commits."""
        pack = self._open.get((slug, partition))
        return pack.version if pack is not None else None

    def close(self) -> None:
        for key in list(self._open):
            self._close(key)

    @staticmethod
    def _newest_reader(path: str, cached: PackReader | None):
        """Lucene's reader on the newest commit, sharing the unchanged segments of ``cached``.

        Called only once the folder shows a new commit. Lucene may still call the
        old reader current, or refuse to reopen it, when the pack's index was
        dropped and written anew (commit versions restart); it is opened afresh then.
        None when the index vanished meanwhile (dropped by another process).
        """
        if cached is not None:
            try:
                newer = J().JDirectoryReader.openIfChanged(cached.reader)
            except jvm.JavaException:
                newer = None
            if newer is not None:
                return newer
        try:
            return J().JDirectoryReader.open(open_directory(path))
        except jvm.JavaException as error:
            if commit_fingerprint(path) is None:
                return None
            raise SearchError(f"The search index in {path} cannot be read ({error.classname}); rebuild it.") from error

    def _close(self, key: tuple[str, str]) -> None:
        """Release our hold on a partition's reader; pack sets still using it keep it open until they close."""
        pack = self._open.pop(key, None)
        if pack is not None:
            pack.reader.close()
