"""BM25 search over exactly the packs, and the partitions of them, a caller may see.

A search combines the requested packs' partitions (all of them, or those
``readable`` admits: a person's access classes) in one ``MultiReader``, so the
BM25 statistics (document frequencies, average length, counts) come from those
alone: passages elsewhere cannot change a score, an order or a count.
The query is taken as plain words, never as Lucene syntax, and a question that
shares no term with any passage gets an explicit "no evidence" result.

``search_hybrid`` adds the dense half (SPEC 11): a KNN query on the passages'
vectors over the same ``MultiReader``, kept above a similarity floor, fused
with the BM25 ranking by rank (``portal.search.fusion``), then capped.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from portal.search import fusion, jvm
from portal.search.analysis import analyze
from portal.search.errors import SearchError
from portal.search.index import DEFAULT_B, DEFAULT_K1
from portal.search.jvm import J
from portal.search.pack_set import PackSetSearcher
from portal.search.queries import build_query, terms_query, with_expanded
from portal.search.readers import PackReaders
from portal.search.results import PER_DOCUMENT_CAP, DiversityPicker, Hit, SearchResult
from portal.search.schema import checked_pack_slug, partitions_of

__all__ = ["Hit", "SearchResult", "Searcher", "analyze"]

_CACHED_PACK_SETS = 16

Readable = Callable[[str, str], bool]
"""Whether a (pack slug, partition) may be searched; None means every partition (an agent's grant)."""


class Searcher:
    """Searches pack indexes under ``root``, keeping readers open between searches.

    Each search first picks up new commits (from this process or another), so a
    passage is findable as soon as its write returned. Searches hold
    ``jvm.java_lock``, so they run one at a time; each takes about a millisecond.
    """

    def __init__(self, root: str | Path, *, k1: float = DEFAULT_K1, b: float = DEFAULT_B):
        self.root = Path(root)
        self.k1 = k1
        self.b = b
        self._readers = PackReaders(self.root)
        self._pack_sets: OrderedDict[tuple, PackSetSearcher] = OrderedDict()

    def search(
        self,
        pack_slugs: list[str],
        query: str,
        limit: int = 8,
        per_document_cap: int = PER_DOCUMENT_CAP,
        terms: list[str] | None = None,
        readable: Readable | None = None,
        expanded: tuple[str, ...] = (),
    ) -> SearchResult:
        """The best ``limit`` passages of ``pack_slugs`` for ``query``, at most ``per_document_cap`` per document.

        The cap is lifted when a single document is all that matches. Packs
        without an index are skipped, as if empty. With ``terms`` (the query
        already analyzed, see ``analysis.question_terms``) the query is built
        from them and the result carries the packs' statistics for them. With
        ``readable`` only the partitions it admits are searched, and counted. ``expanded``: document words
        the query also asks for (``vocabulary``); the statistics cover them too.
        """

        def bm25(pack_set: PackSetSearcher) -> SearchResult:
            if terms is None:
                return pack_set.search(build_query(query, expanded), limit, per_document_cap)
            result = pack_set.search(terms_query(terms, expanded), limit, per_document_cap) if terms else SearchResult()
            passages, doc_freqs = pack_set.statistics(with_expanded(terms, expanded))
            return dataclasses.replace(result, passages=passages, doc_freqs=doc_freqs)

        return self._on_pack_set(pack_slugs, limit, per_document_cap, bm25, readable)

    def _on_pack_set(
        self,
        pack_slugs: list[str],
        limit: int,
        per_document_cap: int,
        search: Callable[[PackSetSearcher], SearchResult],
        readable: Readable | None,
    ) -> SearchResult:
        """``search`` one pack set under the Java lock; empty when no pack has an index yet."""
        if limit < 1 or per_document_cap < 1:
            raise ValueError("limit and per_document_cap must be at least 1")
        slugs = sorted(set(map(checked_pack_slug, pack_slugs)))
        if not slugs:
            return SearchResult()
        try:
            with jvm.java_lock:
                pack_set = self._pack_set(slugs, readable)
                return SearchResult() if pack_set is None else search(pack_set)
        except jvm.JavaException as error:
            raise SearchError(f"Searching packs {', '.join(slugs)} failed: {error.innermessage}") from error

    # --- hybrid retrieval (SPEC 11) ---
    def search_hybrid(
        self,
        pack_slugs: list[str],
        query: str,
        query_vector: list[float] | None,
        *,
        model_id: str,
        floor: float,
        limit: int = 8,
        per_document_cap: int = PER_DOCUMENT_CAP,
        terms: list[str] | None = None,
        readable: Readable | None = None,
        expanded: tuple[str, ...] = (),
    ) -> SearchResult:
        """BM25 and dense halves over ``pack_slugs``, fused by RRF, at most ``per_document_cap`` per document.

        Each half ranks ``fusion.pool_size(limit)`` passages. Dense candidates count
        only with a cosine of at least ``floor``; BM25 candidates only with a shared
        term; a question neither half keeps gets "no evidence". ``query_vector`` is
        the question's unit vector by ``model_id`` (None: the question had nothing
        to embed). Raises ``ModelMismatch`` when a pack's index holds another
        model's vectors: scores of two models are not comparable. With ``terms`` (the
        query already analyzed) the BM25 half is built from them and the result carries
        the packs' statistics for them, as ``search`` does; ``readable`` and ``expanded`` as there.
        """

        def hybrid(pack_set: PackSetSearcher) -> SearchResult:
            pack_set.require_model(model_id)
            pool = fusion.pool_size(limit)
            query_object = build_query(query, expanded) if terms is None else terms_query(terms, expanded)
            if terms is None or terms:
                lexical, total, total_is_exact = pack_set.bm25_pool(query_object, pool)
            else:  # nothing analyzed survives: no lexical half, as in ``search``
                lexical, total, total_is_exact = [], 0, True
            dense = pack_set.nearest(query_vector, pool) if query_vector is not None else []
            kept = [hit for hit in dense if hit.similarity >= floor]
            hits = _fused_and_capped(lexical, kept, limit, per_document_cap)
            if (
                len(hits) < limit
                and len({hit.document_id for hit in lexical + kept}) == 1
                and (not lexical or pack_set.single_document_matches(query_object, lexical[0], total, total_is_exact))
            ):
                hits = _fused_and_capped(lexical, kept, limit, limit)
            passages, doc_freqs = pack_set.statistics(with_expanded(terms, expanded)) if terms is not None else (0, {})
            dense_only = len({hit.passage_id for hit in kept} - {hit.passage_id for hit in lexical})
            return SearchResult(
                hits=hits,
                no_evidence=not hits,
                total_matches=total + dense_only,
                total_is_exact=total_is_exact and dense_only == 0,
                best_similarity=dense[0].similarity if dense else None,
                passages=passages,
                doc_freqs=doc_freqs,
            )

        return self._on_pack_set(pack_slugs, limit, per_document_cap, hybrid, readable)

    def nearest(self, pack_slugs: list[str], query_vector: list[float], pool: int, *, model_id: str) -> list[Hit]:
        """The dense half alone: the ``pool`` passages of ``pack_slugs`` nearest the vector, no floor, no cap."""
        slugs = sorted(set(map(checked_pack_slug, pack_slugs)))
        try:
            with jvm.java_lock:
                pack_set = self._pack_set(slugs) if slugs else None
                if pack_set is None:
                    return []
                pack_set.require_model(model_id)
                return pack_set.nearest(query_vector, pool)
        except jvm.JavaException as error:
            raise SearchError(f"Searching packs {', '.join(slugs)} failed: {error.innermessage}") from error

    def close(self) -> None:
        """Close every open reader; a later search opens them again."""
        with jvm.java_lock:
            for pack_set in self._pack_sets.values():
                pack_set.close()
            self._pack_sets.clear()
            self._readers.close()

    def _pack_set(self, slugs: list[str], readable: Readable | None = None) -> PackSetSearcher | None:
        """A searcher over the newest commits of the partitions of ``slugs`` that ``readable`` admits
        (all when None); None when none of them has an index."""
        packs = []
        for slug in slugs:
            partitions = partitions_of(self.root / slug)
            self._readers.keep_only(slug, partitions)
            for partition in partitions:
                if readable is None or readable(slug, partition):
                    pack = self._readers.current(slug, partition)
                    if pack is not None:
                        packs.append(pack)
        if not packs:
            return None
        key = tuple((pack.slug, pack.partition, pack.version) for pack in packs)
        pack_set = self._pack_sets.get(key)
        if pack_set is None:
            self._close_stale_pack_sets()
            pack_set = self._pack_sets[key] = PackSetSearcher(packs, J().JBM25Similarity(self.k1, self.b))
            if len(self._pack_sets) > _CACHED_PACK_SETS:
                self._pack_sets.popitem(last=False)[1].close()
        self._pack_sets.move_to_end(key)
        return pack_set

    def _close_stale_pack_sets(self) -> None:
        """Close pack sets built on a reader that was since replaced, so old index files are released."""
        for key in list(self._pack_sets):
            if any(self._readers.version(slug, partition) != version for slug, partition, version in key):
                self._pack_sets.pop(key).close()


def _fused_and_capped(lexical: list[Hit], dense: list[Hit], limit: int, per_document_cap: int) -> list[Hit]:
    """RRF over the two rankings, then the same per-document cap as BM25 search."""
    by_id = {hit.passage_id: hit for hit in lexical}
    similarity = {hit.passage_id: hit.similarity for hit in dense}
    for hit in dense:
        by_id.setdefault(hit.passage_id, hit)
    fused = fusion.reciprocal_rank_fusion([[h.passage_id for h in lexical], [h.passage_id for h in dense]])
    picker = DiversityPicker(limit, per_document_cap)
    for passage_id, score in fused:
        hit = by_id[passage_id]
        picker.offer(Hit(hit.passage_id, hit.document_id, hit.pack, score, similarity.get(passage_id)))
    return picker.hits
