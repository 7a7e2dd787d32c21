"""The bridge between the database and the Lucene indexes.

Holds the per-app IndexStore and Searcher, turns Lucene hits into passages
read from the database, and keeps the indexes in step (reindex a document,
rebuild a pack, repair at start).
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from flask import current_app

from portal.models import Document, Pack, Passage, Revision
from portal.search import embedding
from portal.search.index import IndexedPassage, IndexStore, ModelMismatch
from portal.search.searcher import Searcher

log = logging.getLogger(__name__)

DEFAULT_LIMIT = 8
MAX_LIMIT = 50
RETRIEVAL_MODES = ("bm25", "hybrid")


@dataclass
class SearchHit:
    passage_id: int
    document_id: str
    document_title: str
    pack: str
    pack_title: str
    version: int
    page: int | None
    heading_path: str
    line_start: int
    line_end: int
    score: float
    text: str
    ordinal: int = 0  # position within its revision: the viewer's #passage-N anchor

    def as_json(self) -> dict:
        return {k: getattr(self, k) for k in (
            "passage_id", "document_id", "document_title", "pack", "version", "page", "heading_path",
            "line_start", "line_end", "score", "text")}


@dataclass
class SearchResults:
    query: str
    hits: list[SearchHit]
    no_evidence: bool
    best_similarity: float | None = None  # hybrid only: see searcher.SearchResult.best_similarity


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
    app.extensions["cairn_indexes"] = Indexes(
        Path(app.config["CAIRN_DATA_DIR"]) / "indexes", app.config["CAIRN_BM25_K1"], app.config["CAIRN_BM25_B"],
        app.config.get("CAIRN_RETRIEVAL", "bm25"))


def indexes() -> Indexes:
    return current_app.extensions["cairn_indexes"]


def current_passages(pack: Pack, doc_ids: list[str] | None = None):
    """Passages of the current revisions of the pack's live documents (or of ``doc_ids``), as index entries."""
    query = (Passage.select(Passage.id, Passage.text, Passage.heading_path, Document.doc_id, Document.title)
             .join(Revision).join(Document)
             .where((Document.pack == pack) & Document.deleted_at.is_null()
                    & (Revision.version == Document.current_version))
             .order_by(Document.id, Passage.ordinal))
    if doc_ids is not None:
        query = query.where(Document.doc_id.in_(doc_ids))
    for passage_id, text, heading_path, doc_id, title in query.tuples().iterator():
        yield IndexedPassage(passage_id=passage_id, document_id=doc_id, pack=pack.slug, text=text, title=title,
                             heading_path=heading_path)


_batch = threading.local()


@contextmanager
def batched_index_updates():
    """Defer index updates made inside the block to one write per pack at its end.

    A Lucene commit costs tens of milliseconds (it fsyncs), so ingesting many
    files one commit each would spend most of its time committing.
    """
    if getattr(_batch, "pending", None) is not None:  # nested: the outer block writes
        yield
        return
    _batch.pending = defaultdict(set)
    try:
        yield
    finally:
        pending, _batch.pending = _batch.pending, None
        for pack_id, doc_ids in pending.items():
            pack = Pack.get_by_id(pack_id)
            _write_documents(pack, sorted(doc_ids), pack.index_generation)


def reindex_document(pack: Pack, doc_id: str, generation: int, delete_only: bool = False) -> None:
    """Replace a document's passages in its pack's index. A failure is repaired at next start."""
    pending = getattr(_batch, "pending", None)
    if pending is not None:
        pending[pack.id].add(doc_id)
        return
    _write_documents(pack, [doc_id], generation)


def _write_documents(pack: Pack, doc_ids: list[str], generation: int) -> None:
    """Index the current passages of ``doc_ids`` (none for deleted ones), replacing what was there."""
    try:
        entries = list(current_passages(pack, doc_ids)) if doc_ids else []
        try:
            indexes().store.write(pack.slug, add=entries, delete_documents=doc_ids, generation=generation)
        except ModelMismatch as mismatch:  # never mix two models' vectors: rebuild the whole pack
            log.warning("%s; rebuilding it now", mismatch)
            rebuild_pack(pack)
            return
        _log_not_embedded(pack)
    except Exception:
        log.exception("index update failed for %s (%s); it will be rebuilt from the database",
                      pack.slug, ", ".join(doc_ids))


def rebuild_pack(pack: Pack) -> int:
    """Rebuild a pack's index, vectors included, from the database; return how many passages it holds."""
    pack = Pack.get_by_id(pack.id)  # the generation as of now
    entries = list(current_passages(pack))
    indexes().store.rebuild(pack.slug, entries, generation=pack.index_generation)
    _log_not_embedded(pack)
    return len(entries)


def _log_not_embedded(pack: Pack) -> None:
    """Passages indexed without a vector (nothing to embed) are reported, never given a placeholder."""
    missing = indexes().store.not_embedded
    if missing:
        log.warning("pack %s: %d passage(s) have no text to embed and are found by BM25 only: %s",
                    pack.slug, len(missing), ", ".join(map(str, missing[:20])))


def rebuild_all() -> dict[str, int]:
    return {pack.slug: rebuild_pack(pack) for pack in Pack.select().order_by(Pack.slug)}


def repair_indexes() -> list[str]:
    """Rebuild each pack index that is missing, at another generation than the database, or whose vectors
    come from another embedding model (a model upgrade rebuilds every pack once)."""
    repaired = []
    store = indexes().store
    for pack in Pack.select().order_by(Pack.slug):
        if store.generation(pack.slug) != pack.index_generation or store.needs_rebuild_for_model(pack.slug):
            rebuild_pack(pack)
            repaired.append(pack.slug)
    return repaired


def search_packs(packs: list[Pack], query: str, limit: int = DEFAULT_LIMIT,
                 retrieval: str | None = None) -> SearchResults:
    """BM25, or hybrid (``CAIRN_RETRIEVAL``, or ``retrieval``), over exactly these packs; hits come back as
    passages from the database."""
    limit = max(1, min(int(limit), MAX_LIMIT))
    by_slug = {p.slug: p for p in packs}
    if not query.strip() or not by_slug:
        return SearchResults(query=query, hits=[], no_evidence=True)
    if (retrieval or indexes().retrieval) == "hybrid":
        embedder = embedding.shared_embedder()
        result = indexes().searcher.search_hybrid(
            list(by_slug), query, embedding.question_vector(embedder, query), model_id=embedder.model_id,
            floor=embedding.DENSE_FLOOR, limit=limit)
    else:
        result = indexes().searcher.search(list(by_slug), query, limit=limit)
    rows = {p.id: p for p in (Passage.select(Passage, Revision, Document)
                              .join(Revision).join(Document)
                              .where(Passage.id.in_([h.passage_id for h in result.hits])))}
    hits = []
    for hit in result.hits:
        passage = rows.get(hit.passage_id)
        if passage is None:  # index ahead of a just-deleted document: skip, never show stale text
            continue
        document = passage.revision.document
        pack = by_slug[hit.pack]
        hits.append(SearchHit(
            passage_id=passage.id, document_id=document.doc_id, document_title=document.title,
            pack=pack.slug, pack_title=pack.title, version=passage.revision.version, page=passage.page,
            heading_path=passage.heading_path, line_start=passage.line_start, line_end=passage.line_end,
            score=round(hit.score, 6), text=passage.text, ordinal=passage.ordinal))
    return SearchResults(query=query, hits=hits, no_evidence=not hits, best_similarity=result.best_similarity)
