"""One ``IndexSearcher`` over a set of pack partitions: BM25 pages under the per-document cap, and the hybrid pools.

``Searcher`` (searcher.py) keeps one per set of partition readers and replaces it
when a reader moves to a newer commit.
"""

from __future__ import annotations

import bisect

from portal.search import jvm
from portal.search.errors import ModelMismatch
from portal.search.jvm import J
from portal.search.readers import PackReader
from portal.search.results import DiversityPicker, Hit, SearchResult
from portal.search.schema import FIELD_CONTENTS, FIELD_DOCUMENT_ID, FIELD_VECTOR, MODEL_KEY, parse_hit_key

MAX_CANDIDATES = 1000
LUCENE_COUNTS_EXACTLY_UP_TO = 1000
"""``IndexSearcher.search`` counts matches exactly up to here, so below it the relation need not be asked."""


class PackSetSearcher:
    """An ``IndexSearcher`` over one set of pack readers, kept while none of them changes."""

    def __init__(self, packs: list[PackReader], similarity):
        classes = J()
        self._packs = packs
        self._model_checked: str | None = None
        self._multi_reader = classes.JMultiReader([pack.reader for pack in packs], False)
        self._searcher = classes.JIndexSearcher(jvm.cast("org.apache.lucene.index.IndexReader", self._multi_reader))
        self._searcher.setSimilarity(similarity)
        self._top_docs = jvm.overload(
            self._searcher,
            "org.apache.lucene.search.IndexSearcher",
            "search",
            "(Lorg/apache/lucene/search/Query;I)Lorg/apache/lucene/search/TopDocs;",
        )
        self._knn_top = None  # on a searcher with ``jvm.search_pool``, made on the first vector search
        self._starts = []
        start = 0
        for pack in packs:
            self._starts.append(start)
            start += pack.reader.maxDoc()

    def search(self, query, limit: int, per_document_cap: int) -> SearchResult:
        """Collect pages of hits until ``limit`` passages pass the per-document cap.

        The first page is just ``limit`` hits, which usually suffices: asking
        Lucene for more costs about a third more time at 100,000 passages. When
        one document crowds the top, later pages are read with ``searchAfter``,
        up to ``MAX_CANDIDATES`` passages.
        """
        top = self._top_docs(query, limit)
        total_hits = top.totalHits
        total = total_hits.value
        if total == 0:
            return SearchResult()
        total_is_exact = total <= LUCENE_COUNTS_EXACTLY_UP_TO or total_hits.relation.name() == "EQUAL_TO"
        picker = DiversityPicker(limit, per_document_cap)
        scanned, last = self._offer_page(top, picker)
        while not picker.full and scanned < min(total, MAX_CANDIDATES) and last is not None:
            after = J().JScoreDoc(last[0], last[1])
            page_size = min(scanned * 4, MAX_CANDIDATES - scanned)
            page = self._searcher.searchAfter(after, query, page_size)
            added, last = self._offer_page(page, picker)
            scanned += added
        hits = picker.hits
        if picker.held_back_from_single_document and self._single_document_matches(
            query, picker.hits[0], scanned, total, total_is_exact
        ):
            hits = picker.uncapped()
        return SearchResult(hits=hits, no_evidence=False, total_matches=total, total_is_exact=total_is_exact)

    def close(self) -> None:
        self._multi_reader.close()

    def statistics(self, terms: list[str]) -> tuple[int, dict[str, int]]:
        """The passages in these packs, and how many contain each term (deleted ones until merged away)."""
        classes = J()
        reader = self._multi_reader
        return reader.numDocs(), {term: reader.docFreq(classes.JTerm(FIELD_CONTENTS, term)) for term in set(terms)}

    # --- hybrid retrieval: the two pools ---
    def require_model(self, model_id: str) -> None:
        """Refuse packs whose vectors come from another model (or that have none): rebuild them first.

        Checked once per pack set: it is replaced whenever a pack's reader changes.
        """
        if self._model_checked == model_id:
            return
        for pack in self._packs:
            found = _commit_value(pack.reader, MODEL_KEY)
            if found != model_id:
                raise ModelMismatch(pack.slug, found, model_id)
        self._model_checked = model_id

    def bm25_pool(self, query, pool: int) -> tuple[list[Hit], int, bool]:
        """The ``pool`` best BM25 hits, uncapped, with the total match count and whether it is exact."""
        top = self._top_docs(query, pool)
        total_hits = top.totalHits
        total = total_hits.value
        if total == 0:
            return [], 0, True
        exact = total <= LUCENE_COUNTS_EXACTLY_UP_TO or total_hits.relation.name() == "EQUAL_TO"
        return self._hits(top), total, exact

    def nearest(self, vector: list[float], pool: int) -> list[Hit]:
        """The ``pool`` passages nearest ``vector`` by cosine, best first, each with its ``similarity``.

        Lucene searches each segment's vector graph on its own (side by side, on
        ``jvm.search_pool``) and merges the results, so a passage's similarity never
        depends on the other packs.
        Its dot-product score is (1 + cosine) / 2 for unit vectors.
        """
        if self._knn_top is None:
            threads = jvm.search_pool()
            if threads is None:
                self._knn_top = self._top_docs
            else:
                knn_searcher = jvm.constructor(
                    "org.apache.lucene.search.IndexSearcher",
                    "(Lorg/apache/lucene/index/IndexReader;Ljava/util/concurrent/Executor;)V",
                )(jvm.cast("org.apache.lucene.index.IndexReader", self._multi_reader), threads)
                self._knn_top = jvm.overload(
                    knn_searcher,
                    "org.apache.lucene.search.IndexSearcher",
                    "search",
                    "(Lorg/apache/lucene/search/Query;I)Lorg/apache/lucene/search/TopDocs;",
                )
        knn_query = jvm.constructor("org.apache.lucene.search.KnnFloatVectorQuery", "(Ljava/lang/String;[FI)V")
        top = self._knn_top(knn_query(FIELD_VECTOR, vector, pool), pool)
        return [
            Hit(hit.passage_id, hit.document_id, hit.pack, hit.score, similarity=2.0 * hit.score - 1.0)
            for hit in self._hits(top)
        ]

    def single_document_matches(self, query, hit: Hit, total: int, total_is_exact: bool) -> bool:
        return self._single_document_matches(query, hit, 0, total, total_is_exact)

    def _hits(self, top) -> list[Hit]:
        scored = J().JScoredDocs.fromTopDocs(top, self._searcher)
        return [
            Hit(*parse_hit_key(key), self._pack_of(lucene_doc), score)
            for lucene_doc, key, score in zip(scored.lucene_docids, scored.docids, scored.scores)
        ]

    def _offer_page(self, top, picker: DiversityPicker) -> tuple[int, tuple[int, float] | None]:
        """Read a page of hits in one Java call and offer them to ``picker``.

        Returns how many hits the page had and the (Lucene doc, score) of the last,
        where the next page starts.
        """
        scored = J().JScoredDocs.fromTopDocs(top, self._searcher)
        lucene_docs, scores = scored.lucene_docids, scored.scores
        for lucene_doc, key, score in zip(lucene_docs, scored.docids, scores):
            picker.offer(Hit(*parse_hit_key(key), self._pack_of(lucene_doc), score))
        if not lucene_docs:
            return 0, None
        return len(lucene_docs), (lucene_docs[-1], scores[-1])

    def _pack_of(self, lucene_doc: int) -> str:
        return self._packs[bisect.bisect_right(self._starts, lucene_doc) - 1].slug

    def _single_document_matches(self, query, hit: Hit, scanned: int, total: int, total_is_exact: bool) -> bool:
        """Whether every matching passage belongs to ``hit``'s document (then the cap is lifted)."""
        if total_is_exact and scanned >= total:
            return True
        classes = J()
        must, filter_ = classes.JBooleanClauseOccur.MUST, classes.JBooleanClauseOccur.FILTER
        this_document = classes.JTermQuery(classes.JTerm(FIELD_DOCUMENT_ID, hit.document_id))
        builder = classes.JBooleanQueryBuilder()
        builder.add(query, must)
        builder.add(this_document, filter_)
        in_document = builder.build()
        matches_in_document = 0
        for pack in self._packs:  # a document id is unique within a pack, not across packs
            if pack.slug == hit.pack:
                pack_searcher = classes.JIndexSearcher(jvm.cast("org.apache.lucene.index.IndexReader", pack.reader))
                matches_in_document += pack_searcher.count(in_document)
        return matches_in_document == self._searcher.count(query)


def _commit_value(reader, key: str) -> str | None:
    """A value of the user data of the commit a pack's ``DirectoryReader`` shows (e.g. the embedding model)."""
    return jvm.cast("org.apache.lucene.index.DirectoryReader", reader).getIndexCommit().getUserData().get(key)
