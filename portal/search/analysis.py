"""The English analysis shared by indexing and querying.

Both sides must turn text into terms the same way, or queries miss: Anserini's
``DefaultEnglishAnalyzer`` (Lucene's standard tokenizer, English stopwords,
Porter stemming), one instance per process. Lucene analyzers are thread-safe.
"""

from __future__ import annotations

import re

from portal.search import jvm
from portal.search.jvm import J

_analyzer = None


def english_analyzer():
    """The process-wide Java analyzer, created on first use (this starts the JVM)."""
    global _analyzer
    if _analyzer is None:
        with jvm.java_lock:
            if _analyzer is None:
                _analyzer = J().JDefaultEnglishAnalyzer.newDefaultInstance()
    return _analyzer


def analyze(text: str) -> list[str]:
    """The terms the index holds for ``text``, in order, repeats kept.

    ``analyze("Running dogs and cats")`` is ``["run", "dog", "cat"]``; a text of
    stopwords and punctuation only gives ``[]``.
    """
    analyzer = english_analyzer()
    with jvm.java_lock:
        return list(J().JAnalyzerUtils.analyze(analyzer, text).toArray())


# Words that make a sentence a question or a request but say nothing about its
# subject. Lucene's English stopword list is deliberately tiny (33 words), so
# "What … do … earn?" would match every passage containing "what" or "do", and a
# question about something no document mentions would never come back as "no
# evidence found". They are dropped from questions only; documents keep them.
QUESTION_WORDS = frozenset("""
    what which who whom whose when where why how
    do does did doing done can could should would shall may might must
    am is are was were be been being has have had having
    i me my mine we us our ours you your yours he him his she her hers they them their theirs its
    please tell explain show give describe anyone anybody someone somebody
    about many much
""".split())
_QUESTION_WORD_RE = re.compile(r"(?<![\w.-])(?:" + "|".join(sorted(QUESTION_WORDS)) + r")(?![\w-])", re.I)


def without_question_words(question: str) -> str:
    """``question`` with its question words blanked out (identifiers such as ``Z_WHO`` stay whole)."""
    return _QUESTION_WORD_RE.sub(" ", question)
