"""Reciprocal Rank Fusion of the BM25 and dense rankings (SPEC 11).

Each half ranks its own pool of ``pool_size(limit)`` passages; a passage's fused
score is the sum over the halves that found it of ``1 / (k + rank)``, k = 60,
rank counted from 1. Only ranks are used, never raw scores, so BM25 scores and
cosines need no common scale. The per-document cap is applied after fusion, by
the searcher. Pure functions over plain values, so they are tested exactly.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

RRF_K = 60
MIN_POOL = 24


def pool_size(limit: int) -> int:
    """How many candidates each half ranks for a result of ``limit``: max(4 × limit, 24)."""
    return max(4 * limit, MIN_POOL)


def reciprocal_rank_fusion(rankings: Sequence[Sequence[Hashable]], k: int = RRF_K) -> list[tuple[Hashable, float]]:
    """``(key, fused score)`` best first, over ``rankings`` (each best first, keys unique within one).

    Equal scores keep the order in which the keys first appear when reading the
    rankings one after the other (the lexical ranking is passed first), so the
    result is deterministic.
    """
    scores: dict[Hashable, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    first_seen = {key: position for position, key in enumerate(scores)}
    return sorted(scores.items(), key=lambda item: (-item[1], first_seen[item[0]]))
