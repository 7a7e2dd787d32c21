"""Ranking metrics over ranked id lists and graded relevance judgements."""

from __future__ import annotations

import math


def recall_at(ranked: list[str], relevant: set[str], k: int) -> float:
    return len(set(ranked[:k]) & relevant) / len(relevant) if relevant else 0.0


def ndcg_at(ranked: list[str], gains: dict[str, float], k: int) -> float:
    """Normalised DCG with linear gains (gain / log2(rank + 1)), as trec_eval computes it."""
    dcg = sum(gains.get(doc, 0.0) / math.log2(rank + 2) for rank, doc in enumerate(ranked[:k]))
    ideal = sorted((g for g in gains.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(rank + 2) for rank, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def average_precision(ranked: list[str], relevant: set[str]) -> float:
    if not relevant:
        return 0.0
    hits, total = 0, 0.0
    for rank, doc in enumerate(ranked, start=1):
        if doc in relevant:
            hits += 1
            total += hits / rank
    return total / len(relevant)


def mean(values) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0
