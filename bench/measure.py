"""What the benchmarks share: made-up words for a synthetic corpus, a percentile, a folder's size.

The benchmarks run as scripts (``python bench/search_bench.py``), so this folder is on the path and
they import it as ``measure``.
"""

from __future__ import annotations

import random
from pathlib import Path


def make_vocabulary(size: int, rng: random.Random) -> list[str]:
    """Made-up words of 2 to 4 consonant-vowel syllables (so never an English stopword), most frequent first."""
    syllables = [c + v for c in "bcdfghklmnprstvz" for v in "aeiou"]
    words: dict[str, None] = {}
    while len(words) < size:
        words["".join(rng.choice(syllables) for _ in range(rng.randint(2, 4)))] = None
    return list(words)


def percentile(samples: list[float], fraction: float) -> float:
    """The sample at ``fraction`` of the sorted samples (nearest rank, rounding to the closer one)."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def folder_bytes(root: Path) -> int:
    """The size on disk of every file under ``root``."""
    return sum(path.stat().st_size for path in root.rglob("*") if path.is_file())
