"""What a search returns, and the per-document cap that shapes it."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


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


# The most passages of one document a search shows (answers and the search pages alike): the rest of a
# document that crowds the top makes room for other documents. A page that shows fewer than match says so.
PER_DOCUMENT_CAP = 3


class DiversityPicker:
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
