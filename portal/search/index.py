"""One Lucene index per pack, derived from the database and rebuildable from it.

Each pack's passages live in ``<root>/<pack_slug>/``, so a search can combine
exactly the packs it may see and take its BM25 statistics from them alone.
Every write opens a writer, commits and closes it again: the web server and a
command-line process can then write in turn, Lucene's ``write.lock`` deciding
who goes first. Each commit records the database generation it reflects, so a
caller can tell whether an index is behind and rebuild it. ``update`` lets the
caller decide what to write only once it holds the lock and knows the generation
the index shows: that is how the database's pending index work is drained
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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from portal.search import jvm
from portal.search.embedding import DIMENSIONS, passage_text
from portal.search.errors import ModelMismatch, SearchError
from portal.search.jvm import J
from portal.search.schema import (
    FIELD_DOCUMENT_ID,
    GENERATION_KEY,
    MODEL_KEY,
    IndexedPassage,
    PassageDocument,
    VectorPassageDocument,
    open_directory,
    pack_index_path,
)
from portal.search.writer import BULK_RAM_BUFFER_MB, WriterSettings, close_quietly, describe, is_unreadable, writing

if TYPE_CHECKING:
    from portal.search.embedding import Embedder

DEFAULT_K1 = 0.9
DEFAULT_B = 0.4
DEFAULT_LOCK_TIMEOUT_SECONDS = 10.0

_ADD_BATCH = 256


@dataclass
class IndexUpdate:
    """What ``IndexStore.update`` writes in one commit, decided while the writer lock is held.

    ``replace_all`` empties the index first (a rebuild); ``after_commit`` runs after the
    commit, still under the lock (the caller deletes the work it has now done).
    """

    generation: int
    add: Iterable[IndexedPassage] = ()
    delete_documents: Iterable[str] = ()
    replace_all: bool = False
    after_commit: Callable[[], None] | None = None
    added: int = 0  # set by ``update``: how many passages were added


class IndexStore:
    """Writes the per-pack indexes under ``root``; holds no Java object between calls."""

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
        """Delete every passage of ``delete_documents``, then add ``add``, in one commit.

        Deleting a document's passages and adding its new ones in one call replaces
        it atomically. Raises ``IndexBusy`` when another writer keeps the index for
        longer than ``lock_timeout``, and ``ModelMismatch`` when the index's vectors
        come from another embedding model; then nothing was written.
        """
        path = pack_index_path(self.root, pack_slug)
        with self._pack_lock(pack_slug), writing(pack_slug, self._writers.open_writer(pack_slug, path)) as writer:
            self._refuse_other_model(pack_slug, path)
            with jvm.java_lock:
                for document_id in delete_documents:
                    query = J().JTermQuery(J().JTerm(FIELD_DOCUMENT_ID, document_id))
                    writer.deleteDocuments(query)
            self._add_all(writer, pack_slug, add)
            self._commit(writer, generation, self._model_id())

    def rebuild(self, pack_slug: str, passages: Iterable[IndexedPassage], generation: int) -> int:
        """Replace a pack's whole index by ``passages``; return how many were indexed.

        The new index is written next to the old files and becomes visible in the
        single commit at the end, so searches see the old index until then and never
        a half-built one. The writer lock is held throughout: a concurrent ``write``
        waits or fails with ``IndexBusy`` instead of being silently overwritten.
        An index Lucene can no longer read (corrupt, or from another Lucene
        version) is discarded first: rebuilding is how it gets repaired.
        """
        path = pack_index_path(self.root, pack_slug)
        with self._pack_lock(pack_slug):
            with writing(pack_slug, self._writers.open_writer_discarding_unreadable(pack_slug, path)) as writer:
                count = self._add_all(writer, pack_slug, passages)
                self._commit(writer, generation, self._model_id())
        return count

    def update(self, pack_slug: str, plan: Callable[[int | None], IndexUpdate | None]) -> IndexUpdate | None:
        """Call ``plan`` with the generation the index shows (None: no readable index) once this
        process holds the pack's writer lock, and write what it returns in one commit.

        Whatever ``plan`` reads from the database is therefore read after every earlier
        writer has committed and before any later one starts. ``plan`` returning None
        writes nothing. An index Lucene cannot read is discarded and ``plan`` gets None.

        With an embedder, the passages added are embedded. When the index holds another
        model's vectors (or none) and ``plan`` does not replace it whole, nothing is
        written and ``ModelMismatch`` is raised: the caller rebuilds (``catch_up``).
        """
        path = pack_index_path(self.root, pack_slug)
        with self._pack_lock(pack_slug):
            try:
                writer = self._writers.open_writer(pack_slug, path)
                shown = self.generation(pack_slug)
            except SearchError as error:
                if not is_unreadable(error):
                    raise
                writer, shown = self._writers.open_writer_discarding_unreadable(pack_slug, path), None
            with writing(pack_slug, writer):
                other_model = self._other_model(pack_slug, path)
                change = plan(shown)
                if other_model is not None and (change is None or not change.replace_all):
                    raise ModelMismatch(pack_slug, other_model or None, self._model_id())
                if change is None:
                    return None
                with jvm.java_lock:
                    if change.replace_all:
                        writer.getConfig().setRAMBufferSizeMB(BULK_RAM_BUFFER_MB)
                        writer.deleteAll()
                    for document_id in change.delete_documents:
                        writer.deleteDocuments(J().JTermQuery(J().JTerm(FIELD_DOCUMENT_ID, document_id)))
                change.added = self._add_all(writer, pack_slug, change.add)
                self._commit(writer, change.generation, self._model_id())
                if change.after_commit is not None:
                    change.after_commit()
        return change

    def generation(self, pack_slug: str) -> int | None:
        """The generation recorded by the last commit; None when there is no readable index."""
        value = self._commit_value(pack_slug, GENERATION_KEY)
        try:
            return int(value)
        except (TypeError, ValueError):
            return None

    def model(self, pack_slug: str) -> str | None:
        """The embedding model whose vectors the index holds; None for none (or no readable index)."""
        return self._commit_value(pack_slug, MODEL_KEY)

    def needs_rebuild_for_model(self, pack_slug: str) -> bool:
        """True when this store embeds and the pack's index holds another model's vectors, or none."""
        return self.embedder is not None and self.model(pack_slug) != self._model_id()

    def _commit_value(self, pack_slug: str, key: str) -> str | None:
        path = pack_index_path(self.root, pack_slug)
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

    def _refuse_other_model(self, pack_slug: str, path: Path) -> None:
        """Appending vectors of one model to an index of another would mix them: refuse (caller rebuilds).

        An index with no commit yet is new and takes this store's model. A store
        without an embedder (BM25 only) writes no vectors and refuses nothing; its
        commit records no model, so hybrid retrieval later rebuilds the index.
        """
        found = self._other_model(pack_slug, path)
        if found is not None:
            raise ModelMismatch(pack_slug, found or None, self._model_id())

    def _other_model(self, pack_slug: str, path: Path) -> str | None:
        """The model of an existing index's vectors when it is not this store's ("" for none); else None."""
        if self.embedder is None or not any(path.glob("segments_*")):
            return None
        found = self._commit_value(pack_slug, MODEL_KEY)
        return None if found == self._model_id() else (found or "")

    def drop(self, pack_slug: str) -> None:
        """Delete a pack's index, waiting for a writer that is still busy with it."""
        path = pack_index_path(self.root, pack_slug)
        with self._pack_lock(pack_slug):
            if not path.exists():
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
                shutil.rmtree(path)
            finally:
                with jvm.java_lock:
                    close_quietly(lock)

    def close(self) -> None:
        """Nothing to release (every call closes what it opened); kept so both classes are used alike."""

    @property
    def _writers(self) -> WriterSettings:
        return WriterSettings(self.k1, self.b, self.lock_timeout)

    def _pack_lock(self, pack_slug: str) -> threading.Lock:
        """One lock per pack, so threads of this process queue instead of polling Lucene's lock."""
        with self._pack_locks_guard:
            return self._pack_locks.setdefault(pack_slug, threading.Lock())

    def _add_all(self, writer, pack_slug: str, passages: Iterable[IndexedPassage]) -> int:
        """Add ``passages`` in batches, letting searches of other threads in between batches.

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
                    writer.addDocument(filled)
            count += len(batch)
        return count

    @staticmethod
    def _commit(writer, generation: int, model_id: str | None = None) -> None:
        """Commit, recording ``generation`` (and the embedding model, if any) in the commit's user data.

        Setting the user data counts as a change, so even a call with nothing to
        add or delete commits the new generation.
        """
        with jvm.java_lock:
            user_data = J().JHashMap()
            user_data.put(GENERATION_KEY, str(int(generation)))
            if model_id is not None:
                user_data.put(MODEL_KEY, model_id)
            entries = user_data.entrySet()
            writer.setLiveCommitData(entries)
            writer.commit()
