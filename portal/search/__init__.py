"""BM25 search over per-pack Lucene indexes, through Anserini's jar and pyjnius.

Importing this package does not start the JVM; the first index write or search does.
"""

from portal.search.errors import IndexBusy, SearchError
from portal.search.index import IndexStore
from portal.search.schema import IndexedPassage
from portal.search.searcher import Hit, Searcher, SearchResult, analyze

__all__ = ["Hit", "IndexBusy", "IndexStore", "IndexedPassage", "SearchError", "SearchResult", "Searcher", "analyze"]
