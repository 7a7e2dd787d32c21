"""The Lucene query for a question: its analyzed terms, any of which may match, never Lucene syntax."""

from __future__ import annotations

import functools
from collections import Counter

from portal.search import jvm
from portal.search.analysis import analyze, english_analyzer, question_words
from portal.search.jvm import J
from portal.search.schema import FIELD_CONTENTS

_TOO_MANY_CLAUSES = "org.apache.lucene.search.IndexSearcher$TooManyClauses"


def query_terms(query: str, limit: int) -> list[tuple[str, int]]:
    """The first ``limit`` distinct analyzed terms of ``query``, each with how often it occurs."""
    return list(Counter(analyze(query)).items())[:limit]


def terms_query(terms: list[str], expanded: tuple[str, ...] = ()):
    """A Lucene query matching any of these analyzed terms, a repeated term weighing as many times;
    the same query ``build_query`` makes of a text, without analysing it again. ``expanded``: the
    searched packs' document words for the user's words (``vocabulary``), each asked for once as well."""
    classes = J()
    should = classes.JBooleanClauseOccur.SHOULD
    builder = classes.JBooleanQueryBuilder()
    for term, count in list(Counter(with_expanded(terms, expanded)).items())[
        : classes.JIndexSearcher.getMaxClauseCount()
    ]:
        query = classes.JTermQuery(classes.JTerm(FIELD_CONTENTS, term))
        builder.add(classes.JBoostQuery(query, float(count)) if count > 1 else query, should)
    return builder.build()


def with_expanded(terms: list[str], expanded: tuple[str, ...]) -> list[str]:
    """A question's terms and the document words a vocabulary adds that it does not name itself: what a query asks
    for, and whose statistics a search reports (the evidence check reads an entry only where the packs hold one of
    its document words)."""
    return list(terms) + [term for term in expanded if term not in terms]


def build_query(query: str, expanded: tuple[str, ...] = ()):
    """A Lucene query matching any analyzed term of ``query``; it has no clause when the text has no term.

    The text is analyzed, never parsed, so Lucene syntax in it is just words. A
    term repeated in the question weighs as many times, as with Lucene's parser.
    Anserini's ``BagOfWordsQueryGenerator`` does this in one Java call; a text
    with more distinct terms than Lucene allows clauses (1,024) makes it fail,
    and is then built here from its first terms. With ``expanded`` terms it is built as ``terms_query``.
    """
    query = question_words(query)
    if expanded:
        return terms_query(analyze(query), expanded)
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
