"""The English analysis shared by indexing and querying.

Both sides must turn text into terms the same way, or queries miss: Anserini's
``DefaultEnglishAnalyzer`` (Lucene's standard tokenizer, English stopwords,
Porter stemming), one instance per process. Lucene analyzers are thread-safe.
"""

from __future__ import annotations

import threading

from portal.search.jvm import J

_lock = threading.Lock()
_analyzer = None


def english_analyzer():
    """The process-wide Java analyzer, created on first use (this starts the JVM)."""
    global _analyzer
    with _lock:
        if _analyzer is None:
            _analyzer = J().JDefaultEnglishAnalyzer.newDefaultInstance()
        return _analyzer


def analyze(text: str) -> list[str]:
    """The terms the index holds for ``text``, in order, repeats kept.

    ``analyze("Running dogs and cats")`` is ``["run", "dog", "cat"]``; a text of
    stopwords and punctuation only gives ``[]``.
    """
    return list(J().JAnalyzerUtils.analyze(english_analyzer(), text).toArray())
