"""The bridge between the database and the Lucene indexes.

Holds the per-app IndexStore and Searcher, turns Lucene hits into passages
read from the database, and keeps the indexes in step with it.

How an index catches up (docs/operations.md tells it for operators): every
change to a pack's passages bumps ``Pack.index_generation`` and writes a
``PendingIndexUpdate`` row with the new value, in the change's own transaction.
``catch_up`` then, holding the pack's Lucene writer lock, reads the generation
G, the pending rows up to G and only then the documents' passages; it indexes
them, stamps the commit with G and deletes exactly the rows it read. So the
index stamped G shows every change up to G, and a change it may not show still
has its row: a crash anywhere leaves rows behind, never an index that claims
more than it has. When the rows do not account for every generation between
the stamp and G (an index lost, restored or from elsewhere) the pack is rebuilt.

Those reads must be fresh: ``catch_up`` is called with no query of this
connection still being read. On SQLite a half-read select (a loop over a lazy
``Pack.select()``) keeps the connection's read snapshot from before the lock was
taken, so the plan would see rows another process has already indexed and
deleted, index them again, and its delete would fail at once with "database is
locked" (SQLite refuses to write from a stale snapshot; the busy timeout does not
wait for that). The loops over packs here read their packs whole first.
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

from flask import current_app

from portal.db import KeptSelectIn, database
from portal.errors import PackDeleted
from portal.models import Document, Pack, Passage, PendingIndexUpdate, Revision
from portal.search import embedding, jvm, vocabulary
from portal.search.errors import IndexBusy, ModelMismatch
from portal.search.hits import SearchHit, SearchResults
from portal.search.index import IndexStore, IndexUpdate
from portal.search.schema import IndexedPassage, pack_index_path, partition_name
from portal.search.searcher import Readable, Searcher

log = logging.getLogger(__name__)

DEFAULT_LIMIT = 8
MAX_LIMIT = 50
RETRIEVAL_MODES = ("bm25", "hybrid")


class Indexes:
    """The app's index store and searcher, created lazily so the JVM starts on first use.

    With ``retrieval="hybrid"`` passages are indexed with their vectors; with
    "bm25" they are not, and ingest does not pay for embedding (about a third of
    its time, docs/performance.md). Each index records which model (if any) made
    its vectors, so switching ``CAIRN_RETRIEVAL`` rebuilds the indexes at the next
    start (``repair_indexes``) or with ``cairn index rebuild``.
    """

    def __init__(self, root: Path, k1: float, b: float, retrieval: str = "bm25"):
        if retrieval not in RETRIEVAL_MODES:
            raise ValueError(f"CAIRN_RETRIEVAL must be one of {', '.join(RETRIEVAL_MODES)}, not {retrieval!r}")
        self.root = root
        self.k1 = k1
        self.b = b
        self.retrieval = retrieval
        self.embedder = embedding.shared_embedder() if retrieval == "hybrid" else None
        self._store: IndexStore | None = None
        self._searcher: Searcher | None = None

    @property
    def store(self) -> IndexStore:
        if self._store is None:
            self._store = IndexStore(self.root, k1=self.k1, b=self.b, embedder=self.embedder)
        return self._store

    @property
    def searcher(self) -> Searcher:
        if self._searcher is None:
            self._searcher = Searcher(self.root, k1=self.k1, b=self.b)
        return self._searcher

    def close(self) -> None:
        for part in (self._searcher, self._store):
            if part is not None:
                part.close()
        self._store = self._searcher = None


def init_app(app) -> None:
    jvm.configure(app.config.get("CAIRN_JVM_HEAP"))  # the JVM starts later, lazily, after any fork
    app.extensions["cairn_indexes"] = Indexes(
        Path(app.config["CAIRN_DATA_DIR"]) / "indexes",
        app.config["CAIRN_BM25_K1"],
        app.config["CAIRN_BM25_B"],
        app.config.get("CAIRN_RETRIEVAL", "bm25"),
    )


def indexes() -> Indexes:
    return current_app.extensions["cairn_indexes"]


DOCUMENTS_PER_READ = 1000  # a rebuild reads the pack's passages this many documents at a time


def current_passages(pack: Pack, doc_ids: list[str] | None = None):
    """Passages of the current revisions of the pack's live documents (or of ``doc_ids``), as index entries,
    each in the partition of its document's access class.

    A whole pack is read ``DOCUMENTS_PER_READ`` documents at a time (by document id), so a rebuild's
    memory does not grow with the pack: PostgreSQL's driver holds a query's whole result in the client
    (half a million passages took 1 GB). Each document is read whole in one query; one changed
    meanwhile is read as it is now, and its pending row makes the next catch-up write it again.
    """
    query = (
        Passage.select(
            Passage.id,
            Passage.text,
            Passage.heading_path,
            Document.doc_id,
            Document.title,
            Document.visibility,
            Document.reader_role_names,
        )
        .join(Revision)
        .join(Document)
        .where((Document.pack == pack) & Document.deleted_at.is_null() & (Revision.version == Document.current_version))
        .order_by(Document.id, Passage.ordinal)
    )
    if doc_ids is not None:
        yield from _index_entries(pack, query.where(Document.doc_id.in_(doc_ids)))
        return
    after = 0
    while True:
        documents = list(
            Document.select(Document.id)
            .where((Document.pack == pack) & Document.deleted_at.is_null() & (Document.id > after))
            .order_by(Document.id)
            .limit(DOCUMENTS_PER_READ)
            .tuples()
        )
        if not documents:
            return
        after = documents[-1][0]
        yield from _index_entries(pack, query.where((Document.id >= documents[0][0]) & (Document.id <= after)))


def _index_entries(pack: Pack, query):
    for passage_id, text, heading_path, doc_id, title, visibility, roles in query.tuples().iterator():
        yield IndexedPassage(
            passage_id=passage_id,
            document_id=doc_id,
            pack=pack.slug,
            text=text,
            title=title,
            heading_path=heading_path,
            partition=partition_name(visibility, roles),
        )


_batch = threading.local()
BATCH_DOCUMENTS = 64  # a batched ingest makes its documents searchable at least every this many
REBUILD_ABOVE_DOCUMENTS = 2000  # pending documents beyond which catching up rebuilds the pack instead


@contextmanager
def batched_index_updates():
    """Defer index updates made inside the block to one catch-up per pack (at its end, and every
    ``BATCH_DOCUMENTS`` changes).

    A Lucene commit costs tens of milliseconds (it fsyncs), so ingesting many
    files one commit each would spend most of its time committing. A crash
    inside the block loses nothing: the pending rows stay and the next start indexes them.
    """
    if getattr(_batch, "pending", None) is not None:  # nested: the outer block writes
        yield
        return
    _batch.pending = defaultdict(int)
    try:
        yield
    finally:
        pending, _batch.pending = _batch.pending, None
        for pack_id in pending:
            catch_up(Pack.get_by_id(pack_id))


def index_changes(pack: Pack) -> None:
    """Index the pack's pending changes after a commit (deferred inside ``batched_index_updates``).

    A failure is logged, never raised: the change is committed and its pending row stays,
    so the next write to the pack or the next start indexes it.
    """
    pending = getattr(_batch, "pending", None)
    if pending is None:
        catch_up(pack)
        return
    pending[pack.id] += 1
    if pending[pack.id] >= BATCH_DOCUMENTS:
        pending[pack.id] = 0
        catch_up(pack)


def record_index_change(pack_id: int, doc_id: str) -> int:
    """Bump the pack's generation and list ``doc_id`` as pending index work; return the new generation.

    Call it inside the transaction that changes the document's passages: the row then
    exists exactly when the change does. A pack deleted meanwhile takes no change: ``PackDeleted``
    (its row's lock orders this after the deletion on PostgreSQL too), and the change rolls back.
    """
    if (
        not Pack.update(index_generation=Pack.index_generation + 1)
        .where((Pack.id == pack_id) & Pack.deleted_at.is_null())
        .execute()
    ):
        raise PackDeleted("pack")
    generation = Pack.select(Pack.index_generation).where(Pack.id == pack_id).scalar()
    PendingIndexUpdate.create(pack=pack_id, doc_id=doc_id, generation=generation)
    return generation


def record_pack_deletion(pack_id: int) -> None:
    """Inside the transaction that deletes a pack: its pending work becomes one row, "drop the index".

    The row (``doc_id`` empty) stays until the index folder is gone, so a process killed
    before that leaves it for the next start (``catch_up``).
    """
    generation = Pack.select(Pack.index_generation).where(Pack.id == pack_id).scalar()
    PendingIndexUpdate.delete().where(PendingIndexUpdate.pack == pack_id).execute()
    PendingIndexUpdate.create(pack=pack_id, doc_id="", generation=generation)


def _drop_deleted_pack_index(pack: Pack) -> None:
    """A deleted pack's index goes, then its pending rows; a failure leaves them for the next start."""
    indexes().store.drop(pack.slug)
    PendingIndexUpdate.delete().where(PendingIndexUpdate.pack == pack.id).execute()


def catch_up(pack: Pack, rebuild: bool = False) -> IndexUpdate | None:
    """Index the pack's pending changes, or rebuild it when they cannot explain the index's state.

    Returns what was written (None: the index was up to date). Errors are logged and
    swallowed unless ``rebuild`` was asked for: pending rows stay for the next attempt.
    """
    store = indexes().store
    try:
        if Pack.select(Pack.deleted_at).where(Pack.id == pack.id).scalar() is not None:
            _drop_deleted_pack_index(pack)
            return None
        try:
            change = store.update(pack.slug, lambda shown: _plan(pack.id, pack.slug, shown, rebuild))
        except ModelMismatch as mismatch:  # never mix two models' vectors: rebuild the whole pack instead
            log.warning("%s; rebuilding it now", mismatch)
            change = store.update(pack.slug, lambda shown: _plan(pack.id, pack.slug, shown, True))
        if change is not None:
            _log_not_embedded(pack)
            _index_what_came_meanwhile(store, pack)
        return change
    except IndexBusy as busy:
        if rebuild:
            raise
        # Another process is writing this pack (a worker rebuilding it at start): expected, and it will not
        # lose the rows, so a warning without a traceback.
        log.warning("%s Its pending changes stay listed for the next attempt.", busy)
        return None
    except Exception:
        if rebuild:
            raise
        log.exception("index update of pack %s failed; its pending changes stay listed for the next start", pack.slug)
        return None


def _index_what_came_meanwhile(store, pack: Pack) -> None:
    """After a write: index the changes committed while it held the pack's lock. Their own catch-up, in
    another process, may have given up waiting (a rebuild of a large pack outlasts the lock wait), and the
    pack's next write or a restart could be far off. Errors are logged: the rows stay for the next attempt."""
    if not PendingIndexUpdate.select().where(PendingIndexUpdate.pack == pack.id).exists():
        return
    try:
        store.update(pack.slug, lambda shown: _plan(pack.id, pack.slug, shown, False))
    except IndexBusy as busy:
        log.warning("%s Its pending changes stay listed for the next attempt.", busy)
    except Exception:
        log.exception("index update of pack %s failed; its pending changes stay listed for the next start", pack.slug)


def _plan(pack_id: int, slug: str, shown: int | None, rebuild: bool) -> IndexUpdate | None:
    """Run under the pack's writer lock: the generation first, then the pending rows, then the passages."""
    pack = Pack.get_by_id(pack_id)
    if pack.is_deleted:  # deleted since ``catch_up`` looked: the deletion's own catch-up drops the index
        return None
    generation = pack.index_generation
    rows = list(
        PendingIndexUpdate.select(
            PendingIndexUpdate.id, PendingIndexUpdate.doc_id, PendingIndexUpdate.generation
        ).where((PendingIndexUpdate.pack == pack_id) & (PendingIndexUpdate.generation <= generation))
    )
    row_ids = [row.id for row in rows]

    def forget_done_work():
        with database().atomic():  # one write, queued in the writers' turn like every other (portal/db.py)
            for start in range(0, len(row_ids), 500):
                PendingIndexUpdate.delete().where(PendingIndexUpdate.id.in_(row_ids[start : start + 500])).execute()

    explained = (
        shown is not None
        and shown <= generation
        and {row.generation for row in rows if row.generation > shown} == set(range(shown + 1, generation + 1))
    )
    # A pack that was never indexed, with every change since its creation pending, is built, not repaired.
    first_build = shown is None and {row.generation for row in rows} == set(range(1, generation + 1))
    if rebuild or not explained:
        if not rebuild and generation and not first_build:
            log.warning(
                "index of pack %s shows generation %s, the database is at %s: rebuilding it", slug, shown, generation
            )
        return IndexUpdate(
            generation=generation, add=current_passages(pack), replace_all=True, after_commit=forget_done_work
        )
    if not rows:
        return None
    doc_ids = sorted({row.doc_id for row in rows})
    if len(doc_ids) > REBUILD_ABOVE_DOCUMENTS:  # cheaper than deleting each, and no endless IN list
        return IndexUpdate(
            generation=generation, add=current_passages(pack), replace_all=True, after_commit=forget_done_work
        )
    return IndexUpdate(
        generation=generation,
        add=list(current_passages(pack, doc_ids)),
        delete_documents=doc_ids,
        after_commit=forget_done_work,
    )


def rebuild_pack(pack: Pack) -> int:
    """Rebuild the pack's index, vectors included, from the database; return how many passages it holds."""
    return catch_up(pack, rebuild=True).added


def _log_not_embedded(pack: Pack) -> None:
    """Passages indexed without a vector (nothing to embed) are reported, never given a placeholder."""
    missing = indexes().store.not_embedded
    if missing:
        log.warning(
            "pack %s: %d passage(s) have no text to embed and are found by BM25 only: %s",
            pack.slug,
            len(missing),
            ", ".join(map(str, missing[:20])),
        )


def rebuild_all() -> dict[str, int]:
    packs = list(Pack.live().order_by(Pack.slug))  # read whole before catching up (module docstring)
    return {pack.slug: rebuild_pack(pack) for pack in packs}


def repair_indexes() -> list[str]:
    """Bring every pack's index up to the database; return the packs that had to be rebuilt or caught up.

    An index whose vectors come from another embedding model (or that has none, in a
    hybrid deployment) is rebuilt (``catch_up``): a model upgrade rebuilds every pack once.
    """
    repaired = []
    for pack in list(Pack.select().order_by(Pack.slug)):  # read whole before catching up (module docstring)
        if pack.is_deleted:
            # a deletion interrupted before its index was dropped, or after, before its pending row was
            if pack_index_path(indexes().root, pack.slug).exists() or _has_pending_work(pack):
                catch_up(pack)
            continue
        if catch_up(pack) is not None:
            repaired.append(pack.slug)
    return repaired


def _has_pending_work(pack: Pack) -> bool:
    return PendingIndexUpdate.select().where(PendingIndexUpdate.pack == pack).exists()


def index_pending_work() -> list[str]:
    """Index what a crashed or killed process committed but did not index; return those packs.

    Cheap when there is nothing pending (one query; the JVM is started only when there is
    work), so every command runs it at start. ``repair_indexes`` also finds lost indexes.
    """
    pack_ids = [row[0] for row in PendingIndexUpdate.select(PendingIndexUpdate.pack).distinct().tuples()]
    packs = list(Pack.select().where(Pack.id.in_(pack_ids)).order_by(Pack.slug)) if pack_ids else []
    done = []
    for pack in packs:  # read whole before catching up (module docstring)
        if catch_up(pack) is not None:
            done.append(pack.slug)
    return done


# A search's hits as passages, with what a hit carries of their revisions and documents (not the revisions'
# texts: a whole document for each hit); SQL kept for each number of hits, at most MAX_LIMIT.
_hit_passages = KeptSelectIn(
    lambda ids: (
        Passage.select(
            Passage, Revision.id, Revision.version, Revision.sha256, Document.id, Document.doc_id, Document.title
        )
        .join(Revision)
        .join(Document)
        .where(Passage.id.in_(ids))
    )
)


def search_packs(
    packs: list[Pack],
    query: str,
    limit: int = DEFAULT_LIMIT,
    terms: list[str] | None = None,
    retrieval: str | None = None,
    readable: Readable | None = None,
    synonyms: dict[str, frozenset[str]] | None = None,
) -> SearchResults:
    """BM25, or hybrid (``CAIRN_RETRIEVAL``, or ``retrieval``), over exactly these packs; hits come back as
    passages from the database.

    ``terms``: the query already analyzed (``analysis.question_terms``); the
    result then also carries the packs' statistics for them, in either mode.
    ``readable``: only the partitions (access classes) it admits, for a person's
    own reading (``access.search_for_reader``); None for all (an agent's grant).
    ``synonyms``: the document words the packs' vocabularies give for the query's words
    (``vocabulary.Vocabulary.synonyms``), when the caller has read them; the search also asks for them.
    """
    limit = max(1, min(int(limit), MAX_LIMIT))
    by_slug = {p.slug: p for p in packs}
    if not query.strip() or not by_slug:
        return SearchResults(query=query, hits=[], no_evidence=True)
    if synonyms is None:
        synonyms = vocabulary.of_packs(by_slug.values()).synonyms(query)
    expanded = vocabulary.expanded_terms(synonyms)
    if (retrieval or indexes().retrieval) == "hybrid":
        embedder = embedding.shared_embedder()
        result = indexes().searcher.search_hybrid(
            list(by_slug),
            query,
            embedding.question_vector(embedder, query),
            model_id=embedder.model_id,
            floor=embedding.DENSE_FLOOR,
            limit=limit,
            terms=terms,
            readable=readable,
            expanded=expanded,
        )
    else:
        result = indexes().searcher.search(
            list(by_slug), query, limit=limit, terms=terms, readable=readable, expanded=expanded
        )
    rows = {p.id: p for p in _hit_passages.rows(h.passage_id for h in result.hits)}
    hits = []
    for hit in result.hits:
        passage = rows.get(hit.passage_id)
        if passage is None:  # index ahead of a just-deleted document: skip, never show stale text
            continue
        document = passage.revision.document
        pack = by_slug[hit.pack]
        hits.append(
            SearchHit(
                passage_id=passage.id,
                document_id=document.doc_id,
                document_title=document.title,
                pack=pack.slug,
                pack_title=pack.title,
                version=passage.revision.version,
                page=passage.page,
                heading_path=passage.heading_path,
                line_start=passage.line_start,
                line_end=passage.line_end,
                score=round(hit.score, 6),
                text=passage.text,
                ordinal=passage.ordinal,
                document_pk=document.id,
                revision_id=passage.revision.id,
                sha256=passage.revision.sha256,
            )
        )
    return SearchResults(
        query=query,
        hits=hits,
        no_evidence=not hits,
        best_similarity=result.best_similarity,
        passages=result.passages,
        doc_freqs=result.doc_freqs,
        total_matches=result.total_matches,
        total_is_exact=result.total_is_exact,
    )
