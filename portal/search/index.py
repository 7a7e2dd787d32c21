"""One Lucene index per pack and access class, derived from the database and rebuildable from it.

Each pack's passages live under ``<root>/<pack_slug>/``, one Lucene index per
partition (access class, ``schema.partition_name``), so a search can combine
exactly the packs and partitions it may see and take its BM25 statistics from
them alone. Every write takes the pack's ``write.lock`` (Lucene's lock on the
pack folder, across processes), opens the partitions' writers it needs, commits
and closes them again: the web server and a command-line process can then
write in turn.

A pack's partitions commit one after another, never together: those that lose
passages first, then those that gain them, so a document moving between
partitions is never found in both. A crash between two commits leaves the
document's pending index work listed (it is deleted only after the last
commit), and catching up deletes each pending document from every partition
and adds it to its own again, which repairs any state such a crash can leave.
The anchor partition (``DEFAULT_PARTITION``) always exists once the pack has
been written and is committed every time: its generation is the pack's.

Each commit records the database generation it reflects, so a caller can
tell whether an index is behind and rebuild it. ``update`` lets the caller
decide what to write only once it holds the lock and knows the generation the
index shows: that is how the database's pending index work is drained
without two processes overtaking each other (portal/search/service.py).

With an embedder, each passage also carries its vector (``vector``, a
``KnnFloatVectorField``) and each commit records which model made them
(``embedding_model``); an index built by another model is rebuilt, never
appended to, so vectors of two models are never mixed.
"""

from __future__ import annotations

import itertools
import shutil
import threading
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from portal.search import jvm
from portal.search.embedding import DIMENSIONS, passage_text
from portal.search.errors import ModelMismatch, SearchError
from portal.search.jvm import J
from portal.search.schema import (
    DEFAULT_PARTITION,
    FIELD_DOCUMENT_ID,
    GENERATION_KEY,
    MODEL_KEY,
    IndexedPassage,
    PassageDocument,
    VectorPassageDocument,
    open_directory,
    pack_index_path,
    partition_path,
    partitions_of,
)
from portal.search.writer import WriterSettings, close_quietly, describe, rollback_quietly

if TYPE_CHECKING:
    from portal.search.embedding import Embedder

DEFAULT_K1 = 0.9
DEFAULT_B = 0.4
DEFAULT_LOCK_TIMEOUT_SECONDS = 10.0

_ADD_BATCH = 256


@dataclass
class IndexUpdate:
    """What ``IndexStore.update`` writes in one commit, decided while the writer lock is held.

    ``replace_all`` empties every partition first (a rebuild); ``after_commit`` runs after
    the commits, still under the lock (the caller deletes the work it has now done).
    """

    generation: int
    add: Iterable[IndexedPassage] = ()
    delete_documents: Iterable[str] = ()
    replace_all: bool = False
    after_commit: Callable[[], None] | None = None
    added: int = 0  # set by ``update``: how many passages were added


class IndexStore:
    """Writes the per-pack, per-partition indexes under ``root``; holds no Java object between calls."""

    def __init__(
        self,
        root: str | Path,
        *,
        k1: float = DEFAULT_K1,
        b: float = DEFAULT_B,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT_SECONDS,
        embedder: Embedder | None = None,
    ):
        self.root = Path(root)
        self.k1 = k1
        self.b = b
        self.lock_timeout = lock_timeout
        self.embedder = embedder
        self.not_embedded: list[int] = []
        """Passage ids the last ``write`` or ``rebuild`` stored without a vector (their text has no token)."""
        self._pack_locks: dict[str, threading.Lock] = {}
        self._pack_locks_guard = threading.Lock()

    def write(
        self,
        pack_slug: str,
        add: Iterable[IndexedPassage] = (),
        delete_documents: Iterable[str] = (),
        *,
        generation: int,
    ) -> None:
        """Delete every passage of ``delete_documents`` (in whichever partition), then add ``add``.

        Deleting a document's passages and adding its new ones in one call replaces
        it (and moves it to its partition). Raises ``IndexBusy`` when another writer
        keeps the pack for longer than ``lock_timeout``, and ``ModelMismatch`` when
        the index's vectors come from another embedding model; then nothing was written.
        """
        change = IndexUpdate(generation=generation, add=add, delete_documents=delete_documents)
        with self._locked_pack(pack_slug):
            self._refuse_other_model(pack_slug)
            self._apply(pack_slug, change)

    def rebuild(self, pack_slug: str, passages: Iterable[IndexedPassage], generation: int) -> int:
        """Replace a pack's whole index by ``passages``; return how many were indexed.

        Each partition's new index is written next to its old files and becomes
        visible in its commit, so searches never see a half-built partition. The
        pack's lock is held throughout: a concurrent ``write`` waits or fails with
        ``IndexBusy`` instead of being silently overwritten. A partition Lucene can
        no longer read (corrupt, or from another Lucene version) is discarded first:
        rebuilding is how it gets repaired.
        """
        change = IndexUpdate(generation=generation, add=passages, replace_all=True)
        with self._locked_pack(pack_slug):
            self._apply(pack_slug, change)
        return change.added

    def update(self, pack_slug: str, plan: Callable[[int | None], IndexUpdate | None]) -> IndexUpdate | None:
        """Call ``plan`` with the generation the pack shows (None: no readable index) once this
        process holds the pack's lock, and write what it returns.

        Whatever ``plan`` reads from the database is therefore read after every earlier
        writer has committed and before any later one starts. ``plan`` returning None
        writes nothing.

        With an embedder, the passages added are embedded. When the index holds another
        model's vectors (or none) and ``plan`` does not replace it whole, nothing is
        written and ``ModelMismatch`` is raised: the caller rebuilds (``catch_up``).
        """
        with self._locked_pack(pack_slug):
            shown = self.generation(pack_slug)
            other_model = self._other_model(pack_slug)
            change = plan(shown)
            if other_model is not None and (change is None or not change.replace_all):
                raise ModelMismatch(pack_slug, other_model or None, self._model_id())
            if change is None:
                return None
            self._apply(pack_slug, change)
            if change.after_commit is not None:
                change.after_commit()
        return change

    def generation(self, pack_slug: str) -> int | None:
        """The generation the anchor partition's last commit recorded; None when any partition is unreadable
        (or the pack has no index)."""
        partitions = partitions_of(pack_index_path(self.root, pack_slug))
        if DEFAULT_PARTITION not in partitions:
            return None
        values = {partition: self._commit_value(pack_slug, partition, GENERATION_KEY) for partition in partitions}
        if any(value is None for value in values.values()):
            return None
        try:
            return int(values[DEFAULT_PARTITION])
        except ValueError:
            return None

    def model(self, pack_slug: str) -> str | None:
        """The embedding model whose vectors the index holds; None for none (or no readable index)."""
        return self._commit_value(pack_slug, DEFAULT_PARTITION, MODEL_KEY)

    def needs_rebuild_for_model(self, pack_slug: str) -> bool:
        """True when this store embeds and the pack's index holds another model's vectors, or none."""
        return self.embedder is not None and self.model(pack_slug) != self._model_id()

    def partitions(self, pack_slug: str) -> list[str]:
        """The partitions the pack's index has now."""
        return partitions_of(pack_index_path(self.root, pack_slug))

    def _commit_value(self, pack_slug: str, partition: str, key: str) -> str | None:
        path = partition_path(self.root, pack_slug, partition)
        if not path.is_dir():
            return None
        with jvm.java_lock:
            directory = open_directory(path)
            try:
                return J().JSegmentInfos.readLatestCommit(directory).getUserData().get(key)
            except jvm.JavaException:
                return None
            finally:
                directory.close()

    def _model_id(self) -> str | None:
        return self.embedder.model_id if self.embedder is not None else None

    def _refuse_other_model(self, pack_slug: str) -> None:
        """Appending vectors of one model to an index of another would mix them: refuse (caller rebuilds).

        A partition with no commit yet is new and takes this store's model. A store
        without an embedder (BM25 only) writes no vectors and refuses nothing; its
        commits record no model, so hybrid retrieval later rebuilds the index.
        """
        found = self._other_model(pack_slug)
        if found is not None:
            raise ModelMismatch(pack_slug, found or None, self._model_id())

    def _other_model(self, pack_slug: str) -> str | None:
        """The model of an existing partition's vectors when it is not this store's ("" for none); else None."""
        if self.embedder is None:
            return None
        for partition in self.partitions(pack_slug):
            if not any(partition_path(self.root, pack_slug, partition).glob("segments_*")):
                continue
            found = self._commit_value(pack_slug, partition, MODEL_KEY)
            if found != self._model_id():
                return found or ""
        return None

    def drop(self, pack_slug: str) -> None:
        """Delete a pack's index, waiting for a writer that is still busy with it."""
        path = pack_index_path(self.root, pack_slug)
        if not path.exists():
            return
        with self._locked_pack(pack_slug, create=False) as locked:
            if locked:
                shutil.rmtree(path)

    def close(self) -> None:
        """Nothing to release (every call closes what it opened); kept so both classes are used alike."""

    @property
    def _writers(self) -> WriterSettings:
        return WriterSettings(self.k1, self.b, self.lock_timeout)

    def _pack_lock(self, pack_slug: str) -> threading.Lock:
        """One lock per pack, so threads of this process queue instead of polling Lucene's lock."""
        with self._pack_locks_guard:
            return self._pack_locks.setdefault(pack_slug, threading.Lock())

    @contextmanager
    def _locked_pack(self, pack_slug: str, create: bool = True):
        """Hold the pack: this process's thread lock, then Lucene's ``write.lock`` on the pack folder
        (other processes). Yields False when the folder is gone and ``create`` is off."""
        path = pack_index_path(self.root, pack_slug)
        with self._pack_lock(pack_slug):
            if create:
                path.mkdir(parents=True, exist_ok=True)
            elif not path.exists():
                yield False
                return
            with jvm.java_lock:
                directory = open_directory(path)
            try:
                lock = self._writers.retry_while_locked(pack_slug, lambda: directory.obtainLock("write.lock"))
            except jvm.JavaException as error:
                raise SearchError(f"Locking the index of pack {pack_slug!r} failed: {describe(error)}") from error
            finally:
                with jvm.java_lock:
                    directory.close()
            try:
                yield True
            finally:
                with jvm.java_lock:
                    close_quietly(lock)

    def _apply(self, pack_slug: str, change: IndexUpdate) -> None:
        """Write ``change`` into the pack's partitions (the pack is held) and commit them in order."""
        writers = _PartitionWriters(self._writers, self.root, pack_slug, rebuilding=change.replace_all)
        try:
            if change.replace_all:
                _remove_loose_files(pack_index_path(self.root, pack_slug))  # an index from before partitions
                for partition in self.partitions(pack_slug):
                    writers.writer(partition)
            else:
                doc_ids = list(change.delete_documents)
                if doc_ids:
                    for partition in self._partitions_holding(pack_slug, doc_ids):
                        writer = writers.writer(partition)
                        with jvm.java_lock:
                            for document_id in doc_ids:
                                writer.deleteDocuments(J().JTermQuery(J().JTerm(FIELD_DOCUMENT_ID, document_id)))
            change.added = self._add_all(writers, pack_slug, change.add)
            writers.commit(change.generation, self._model_id())
        except jvm.JavaException as error:
            writers.roll_back()
            raise SearchError(f"Writing the index of pack {pack_slug!r} failed: {describe(error)}") from error
        except BaseException:
            writers.roll_back()
            raise
        finally:
            writers.close()
        if change.replace_all:
            for partition in writers.left_empty():
                shutil.rmtree(partition_path(self.root, pack_slug, partition), ignore_errors=True)

    def _partitions_holding(self, pack_slug: str, doc_ids: list[str]) -> list[str]:
        """The partitions that hold a passage of any of ``doc_ids`` (an unreadable one counts: it is
        opened for writing and fails there)."""
        holding = []
        for partition in self.partitions(pack_slug):
            path = partition_path(self.root, pack_slug, partition)
            if not any(path.glob("segments_*")):
                continue
            with jvm.java_lock:
                directory = open_directory(path)
                try:
                    reader = J().JDirectoryReader.open(directory)
                except jvm.JavaException:
                    holding.append(partition)
                    directory.close()
                    continue
                try:
                    if any(reader.docFreq(J().JTerm(FIELD_DOCUMENT_ID, d)) for d in doc_ids):
                        holding.append(partition)
                finally:
                    reader.close()
                    directory.close()
        return holding

    def _add_all(self, writers: _PartitionWriters, pack_slug: str, passages: Iterable[IndexedPassage]) -> int:
        """Add ``passages`` in batches, each to its partition's writer, letting searches of other threads in
        between batches.

        With an embedder each batch is embedded first (outside the Java lock); a
        passage without a vector (no token to embed) is indexed for BM25 only
        and its id kept in ``not_embedded``.
        """
        self.not_embedded = []
        with jvm.java_lock:
            document = PassageDocument()
            vector_document = VectorPassageDocument(DIMENSIONS) if self.embedder is not None else None
        count = 0
        remaining = iter(passages)
        while batch := list(itertools.islice(remaining, _ADD_BATCH)):
            for passage in batch:
                if passage.pack != pack_slug:
                    raise ValueError(
                        f"Passage {passage.passage_id} belongs to pack {passage.pack!r}, not {pack_slug!r}"
                    )
            for partition in {passage.partition for passage in batch}:
                writers.writer(partition, adding=True)
            vectors = [None] * len(batch)
            if self.embedder is not None:
                texts = [passage_text(p.title, p.heading_path, p.text) for p in batch]
                vectors = [v.tolist() if v is not None else None for v in self.embedder.embed(texts)]
                self.not_embedded += [p.passage_id for p, v in zip(batch, vectors) if v is None]
            with jvm.java_lock:
                for passage, vector in zip(batch, vectors):
                    if vector is None:
                        filled = document.fill(passage)
                    else:
                        filled = vector_document.fill_with_vector(passage, vector)
                    writers.writer(passage.partition).addDocument(filled)
            count += len(batch)
        return count


class _PartitionWriters:
    """The writers one call opens on a pack's partitions, committed in order or rolled back together.

    ``rebuilding``: every partition opened starts empty, with the bulk RAM buffer, also one the pack did
    not have yet (a new pack's first rebuild): with Lucene's default buffer of 16 MB a partition flushed a
    segment every ~5,900 passages with vectors, and the dense half of a search costs per segment.
    """

    def __init__(self, settings: WriterSettings, root: Path, pack_slug: str, rebuilding: bool = False):
        self._settings = settings
        self._root = root
        self._pack_slug = pack_slug
        self._rebuilding = rebuilding
        self._open: dict[str, object] = {}
        self._adding: set[str] = set()
        self._committed: set[str] = set()

    def writer(self, partition: str, adding: bool = False):
        """The partition's writer, opened (or created) on first use."""
        if adding:
            self._adding.add(partition)
        if partition not in self._open:
            path = partition_path(self._root, self._pack_slug, partition)
            if self._rebuilding:  # on an empty index, discarding one Lucene cannot read
                self._open[partition] = self._settings.open_writer_discarding_unreadable(self._pack_slug, path)
            else:
                self._open[partition] = self._settings.open_writer(self._pack_slug, path)
        return self._open[partition]

    def commit(self, generation: int, model_id: str | None) -> None:
        """Commit the partitions that lose passages (and the anchor, if it only records the generation),
        then those that gain them."""
        self.writer(DEFAULT_PARTITION)
        order = sorted(self._open, key=lambda p: (p in self._adding, p))
        for partition in order:
            _commit(self._open[partition], generation, model_id)
            self._committed.add(partition)

    def left_empty(self) -> list[str]:
        """After a rebuild: the partitions other than the anchor that received no passage."""
        return [p for p in self._open if p not in self._adding and p != DEFAULT_PARTITION]

    def roll_back(self) -> None:
        """Discard what no commit has made visible yet."""
        with jvm.java_lock:
            for partition, writer in self._open.items():
                if partition not in self._committed:
                    rollback_quietly(writer)

    def close(self) -> None:
        with jvm.java_lock:
            for writer in self._open.values():
                try:
                    directory = writer.getDirectory()
                except jvm.JavaException:
                    directory = None
                close_quietly(writer)
                if directory is not None:
                    directory.close()


def _remove_loose_files(pack_path: Path) -> None:
    """Remove files a single-index pack folder held before indexes were partitioned (all but the lock)."""
    for entry in pack_path.iterdir():
        if entry.is_file() and entry.name != "write.lock":
            entry.unlink()


def _commit(writer, generation: int, model_id: str | None = None) -> None:
    """Commit, recording ``generation`` (and the embedding model, if any) in the commit's user data.

    Setting the user data counts as a change, so even a call with nothing to
    add or delete commits the new generation.

    The commit itself (an fsync of every new file: tens to hundreds of milliseconds) runs outside
    ``jvm.java_lock``, so the searches of this process do not wait for it (those of other processes
    never did): through a class of its own that nothing else calls (``jvm.overload``), under
    ``_commit_lock``, so no other thread can rebind the method mid-call (the module docstring of
    ``jvm``). A search meanwhile reads the previous commit, as it would from another process.
    """
    with jvm.java_lock:
        user_data = J().JHashMap()
        user_data.put(GENERATION_KEY, str(int(generation)))
        if model_id is not None:
            user_data.put(MODEL_KEY, model_id)
        entries = user_data.entrySet()
        writer.setLiveCommitData(entries)
        commit = jvm.overload(writer, "org.apache.lucene.index.IndexWriter", "commit", "()J")
    with _commit_lock:
        commit()


_commit_lock = threading.Lock()
"""Held around the one Java call made outside ``jvm.java_lock``: ``IndexWriter.commit`` (``_commit``)."""
