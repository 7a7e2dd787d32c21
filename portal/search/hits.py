"""What a search returns: passages read from the database, with where they stand and their score."""

from __future__ import annotations

from dataclasses import dataclass, field


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
    document_pk: int = 0
    revision_id: int = 0
    sha256: str = ""  # of the revision's full text: what a grounding reference names

    def as_json(self) -> dict:
        return {
            k: getattr(self, k)
            for k in (
                "passage_id",
                "document_id",
                "document_title",
                "pack",
                "version",
                "page",
                "heading_path",
                "line_start",
                "line_end",
                "score",
                "text",
            )
        }


@dataclass
class SearchResults:
    query: str
    hits: list[SearchHit]
    no_evidence: bool
    best_similarity: float | None = None  # hybrid only: see searcher.SearchResult.best_similarity
    passages: int = 0  # in the searched packs, with ``doc_freqs``: set when searched by analyzed terms
    doc_freqs: dict[str, int] = field(default_factory=dict)
    total_matches: int = 0  # every matching passage in the searched set (a lower bound past 1,000)
    total_is_exact: bool = True  # False: ``total_matches`` is that lower bound
