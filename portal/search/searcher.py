"""BM25 search over exactly the packs a caller may see.

A search combines the requested packs' indexes in one ``MultiReader``, so the
BM25 statistics (document frequencies, average length, counts) come from those
packs alone: passages elsewhere cannot change a score, an order or a count.
The query is taken as plain words, never as Lucene syntax, and a question that
shares no term with any passage gets an explicit "no evidence" result.

``search_hybrid`` adds the dense half (SPEC 11): a KNN query on the passages'
vectors over the same ``MultiReader``, kept above a similarity floor, fused
with the BM25 ranking by rank (``portal.search.fusion``), then capped.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from portal.search import fusion, jvm
from portal.search.analysis import analyze, english_analyzer, without_question_words
from portal.search.errors import SearchError
from portal.search.index import (
    DEFAULT_B,
    DEFAULT_K1,
    FIELD_CONTENTS,
    FIELD_DOCUMENT_ID,
    FIELD_VECTOR,
    MODEL_KEY,
    ModelMismatch,
    checked_pack_slug,
    parse_hit_key,
)
from portal.search.jvm import J
from portal.search.readers import PackReader, PackReaders

__all__ = ["Hit", "SearchResult", "Searcher", "analyze"]

MAX_CANDIDATES = 1000
LUCENE_COUNTS_EXACTLY_UP_TO = 1000
"""``IndexSearcher.search`` counts matches exactly up to here, so below it the relation need not be asked."""
_CACHED_PACK_SETS = 16
_TOO_MANY_CLAUSES = "org.apache.lucene.search.IndexSearcher$TooManyClauses"


@dataclass(frozen=True)
class Hit:
    """One passage found, with its BM25 score within the searched packs (its fused RRF score in hybrid search).

    ``similarity`` is the cosine between question and passage when the dense half found it, else None.
    """

    passage_id: int
    document_id: str
    pack: str
    score: float
    similarity: float | None = None


@dataclass(frozen=True)
class SearchResult:
    """The hits, best first; ``no_evidence`` when the question matched nothing.

    ``total_matches`` counts every matching passage in the searched packs. Past
    1,000 Lucene stops counting exactly (it skips passages that cannot reach the
    top); ``total_is_exact`` is then False and the number is a lower bound.
    """

    hits: list[Hit] = field(default_factory=list)
    no_evidence: bool = True
    total_matches: int = 0
    total_is_exact: bool = True
    best_similarity: float | None = None
    """Hybrid search only: the highest cosine of any passage in the searched packs, floor or not.

    A second, semantic evidence signal next to term overlap: compare it with the
    floor the dense half used (``embedding.DENSE_FLOOR``). None in BM25 search or
    when the packs hold no vectors.
    """
    # Set when the caller passed analyzed terms: the searched packs' own statistics for them
    # (passages, and passages containing each term), as BM25 used them.
    passages: int = 0
    doc_freqs: dict[str, int] = field(default_factory=dict)


def query_terms(query: str, limit: int) -> list[tuple[str, int]]:
    """The first ``limit`` distinct analyzed terms of ``query``, each with how often it occurs."""
    return list(Counter(analyze(query)).items())[:limit]


def terms_query(terms: list[str]):
    """A Lucene query matching any of these analyzed terms, a repeated term weighing as many times;
    the same query ``build_query`` makes of a text, without analysing it again."""
    classes = J()
    should = classes.JBooleanClauseOccur.SHOULD
    builder = classes.JBooleanQueryBuilder()
    for term, count in list(Counter(terms).items())[:classes.JIndexSearcher.getMaxClauseCount()]:
        query = classes.JTermQuery(classes.JTerm(FIELD_CONTENTS, term))
        builder.add(classes.JBoostQuery(query, float(count)) if count > 1 else query, should)
    return builder.build()


def build_query(query: str):
    """A Lucene query matching any analyzed term of ``query``; it has no clause when the text has no term.

    The text is analyzed, never parsed, so Lucene syntax in it is just words. A
    term repeated in the question weighs as many times, as with Lucene's parser.
    Anserini's ``BagOfWordsQueryGenerator`` does this in one Java call; a text
    with more distinct terms than Lucene allows clauses (1,024) makes it fail,
    and is then built here from its first terms.
    """
    query = without_question_words(query)
    try:
        return _bag_of_words()(FIELD_CONTENTS, english_analyzer(), query)
    except jvm.JavaException as error:
        if error.classname != _TOO_MANY_CLAUSES:
            raise
    classes = J()
    should = classes.JBooleanClauseOccur.SHOULD
    builder = classes.JBooleanQueryBuilder()
    for term, count in query_terms(query, classes.JIndexSearcher.getMaxClauseCount()):
        clause = classes.JBoostQuery(classes.JTermQuery(classes.JTerm(FIELD_CONTENTS, term)), float(count))
        builder.add(clause, should)
    return builder.build()


@functools.cache
def _bag_of_words():
    """Anserini's ``buildQuery(field, analyzer, text)``; the generator holds no state, so one serves every search."""
    return jvm.overload(
        J().JBagOfWordsQueryGenerator(),
        "io.anserini.search.query.BagOfWordsQueryGenerator",
        "buildQuery",
        "(Ljava/lang/String;Lorg/apache/lucene/analysis/Analyzer;Ljava/lang/String;)Lorg/apache/lucene/search/Query;",
    )


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
        self._pack_sets: OrderedDict[tuple, _PackSetSearcher] = OrderedDict()

    def search(
        self, pack_slugs: list[str], query: str, limit: int = 8, per_document_cap: int = 3,
        terms: list[str] | None = None,
    ) -> SearchResult:
        """The best ``limit`` passages of ``pack_slugs`` for ``query``, at most ``per_document_cap`` per document.

        The cap is lifted when a single document is all that matches. Packs
        without an index are skipped, as if empty. With ``terms`` (the query
        already analyzed, see ``analysis.question_terms``) the query is built
        from them and the result carries the packs' statistics for them.
        """
        def bm25(pack_set: _PackSetSearcher) -> SearchResult:
            if terms is None:
                return pack_set.search(build_query(query), limit, per_document_cap)
            result = pack_set.search(terms_query(terms), limit, per_document_cap) if terms else SearchResult()
            passages, doc_freqs = pack_set.statistics(terms)
            return dataclasses.replace(result, passages=passages, doc_freqs=doc_freqs)

        return self._on_pack_set(pack_slugs, limit, per_document_cap, bm25)

    def _on_pack_set(self, pack_slugs: list[str], limit: int, per_document_cap: int,
                     search: Callable[[_PackSetSearcher], SearchResult]) -> SearchResult:
        """``search`` one pack set under the Java lock; empty when no pack has an index yet."""
        if limit < 1 or per_document_cap < 1:
            raise ValueError("limit and per_document_cap must be at least 1")
        slugs = sorted(set(map(checked_pack_slug, pack_slugs)))
        if not slugs:
            return SearchResult()
        try:
            with jvm.java_lock:
                pack_set = self._pack_set(slugs)
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
        per_document_cap: int = 3,
        terms: list[str] | None = None,
    ) -> SearchResult:
        """BM25 and dense halves over ``pack_slugs``, fused by RRF, at most ``per_document_cap`` per document.

        Each half ranks ``fusion.pool_size(limit)`` passages. Dense candidates count
        only with a cosine of at least ``floor``; BM25 candidates only with a shared
        term; a question neither half keeps gets "no evidence". ``query_vector`` is
        the question's unit vector by ``model_id`` (None: the question had nothing
        to embed). Raises ``ModelMismatch`` when a pack's index holds another
        model's vectors: scores of two models are not comparable. With ``terms`` (the
        query already analyzed) the BM25 half is built from them and the result carries
        the packs' statistics for them, as ``search`` does.
        """
        def hybrid(pack_set: _PackSetSearcher) -> SearchResult:
            pack_set.require_model(model_id)
            pool = fusion.pool_size(limit)
            query_object = build_query(query) if terms is None else terms_query(terms)
            if terms is None or terms:
                lexical, total, total_is_exact = pack_set.bm25_pool(query_object, pool)
            else:  # nothing analyzed survives: no lexical half, as in ``search``
                lexical, total, total_is_exact = [], 0, True
            dense = pack_set.nearest(query_vector, pool) if query_vector is not None else []
            kept = [hit for hit in dense if hit.similarity >= floor]
            hits = _fused_and_capped(lexical, kept, limit, per_document_cap)
            if len(hits) < limit and len({hit.document_id for hit in lexical + kept}) == 1 and (
                not lexical or pack_set.single_document_matches(query_object, lexical[0], total, total_is_exact)
            ):
                hits = _fused_and_capped(lexical, kept, limit, limit)
            passages, doc_freqs = pack_set.statistics(terms) if terms is not None else (0, {})
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

        return self._on_pack_set(pack_slugs, limit, per_document_cap, hybrid)

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

    def _pack_set(self, slugs: list[str]) -> _PackSetSearcher | None:
        """A searcher over the newest commits of ``slugs``; None when none of them has an index."""
        packs = [pack for pack in map(self._readers.current, slugs) if pack is not None]
        if not packs:
            return None
        key = tuple((pack.slug, pack.version) for pack in packs)
        pack_set = self._pack_sets.get(key)
        if pack_set is None:
            self._close_stale_pack_sets()
            pack_set = self._pack_sets[key] = _PackSetSearcher(packs, J().JBM25Similarity(self.k1, self.b))
            if len(self._pack_sets) > _CACHED_PACK_SETS:
                self._pack_sets.popitem(last=False)[1].close()
        self._pack_sets.move_to_end(key)
        return pack_set

    def _close_stale_pack_sets(self) -> None:
        """Close pack sets built on a reader that was since replaced, so old index files are released."""
        for key in list(self._pack_sets):
            if any(self._readers.version(slug) != version for slug, version in key):
                self._pack_sets.pop(key).close()


class _PackSetSearcher:
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
        picker = _DiversityPicker(limit, per_document_cap)
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

        Lucene searches each segment's vector graph on its own and merges the
        results, so a passage's similarity never depends on the other packs.
        Its dot-product score is (1 + cosine) / 2 for unit vectors.
        """
        knn_query = jvm.constructor("org.apache.lucene.search.KnnFloatVectorQuery", "(Ljava/lang/String;[FI)V")
        top = self._top_docs(knn_query(FIELD_VECTOR, vector, pool), pool)
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

    def _offer_page(self, top, picker: _DiversityPicker) -> tuple[int, tuple[int, float] | None]:
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
        pack_reader = next(pack.reader for pack in self._packs if pack.slug == hit.pack)
        pack_searcher = classes.JIndexSearcher(jvm.cast("org.apache.lucene.index.IndexReader", pack_reader))
        matches_in_document = pack_searcher.count(in_document)
        return matches_in_document == self._searcher.count(query)


def _commit_value(reader, key: str) -> str | None:
    """A value of the user data of the commit a pack's ``DirectoryReader`` shows (e.g. the embedding model)."""
    return jvm.cast("org.apache.lucene.index.DirectoryReader", reader).getIndexCommit().getUserData().get(key)


def _fused_and_capped(lexical: list[Hit], dense: list[Hit], limit: int, per_document_cap: int) -> list[Hit]:
    """RRF over the two rankings, then the same per-document cap as BM25 search."""
    by_id = {hit.passage_id: hit for hit in lexical}
    similarity = {hit.passage_id: hit.similarity for hit in dense}
    for hit in dense:
        by_id.setdefault(hit.passage_id, hit)
    fused = fusion.reciprocal_rank_fusion([[h.passage_id for h in lexical], [h.passage_id for h in dense]])
    picker = _DiversityPicker(limit, per_document_cap)
    for passage_id, score in fused:
        hit = by_id[passage_id]
        picker.offer(Hit(hit.passage_id, hit.document_id, hit.pack, score, similarity.get(passage_id)))
    return picker.hits


class _DiversityPicker:
    """Keeps hits in score order, at most ``per_document_cap`` per document, up to ``limit``."""

    def __init__(self, limit: int, per_document_cap: int):
        self.limit = limit
        self.per_document_cap = per_document_cap
        self.hits: list[Hit] = []
        self._seen: list[Hit] = []
        self._per_document: Counter = Counter()

    @property
    def full(self) -> bool:
        return len(self.hits) >= self.limit

    @property
    def held_back_from_single_document(self) -> bool:
        """True when the cap withheld passages and every hit seen so far is from one document."""
        return len(self._per_document) == 1 and len(self._seen) > len(self.hits) and not self.full

    def offer(self, hit: Hit) -> None:
        self._seen.append(hit)
        document = (hit.pack, hit.document_id)
        if self.full or self._per_document[document] >= self.per_document_cap:
            return
        self._per_document[document] += 1
        self.hits.append(hit)

    def uncapped(self) -> list[Hit]:
        return self._seen[: self.limit]
