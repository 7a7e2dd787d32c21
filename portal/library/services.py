"""What the Library lists and finds: exactly the documents the reader may read directly (SPEC 2).

Who may read what is decided in ``portal.access`` (``may_read``); searching goes through
``access.search_for_reader`` over every pack, which combines only the index partitions of
the reader's access classes, so the ranking is that of the readable set alone (SPEC 6).
"""

from __future__ import annotations

from dataclasses import dataclass

from portal import access
from portal.models import Document, Pack, User
from portal.paging import ListPage
from portal.search.hits import SearchResults


@dataclass(frozen=True)
class LibraryShelf:
    """One pack's readable documents, as the Library lists them."""

    pack: Pack
    documents: list[Document]


DOCUMENTS_PER_PAGE = 50  # the Library's list of documents, a page at a time


def library_page(user: User, page: int) -> ListPage:
    """Page ``page`` of the documents ``user`` may read, by pack and title; past the end, the last page."""
    return ListPage(access.library_documents(user), DOCUMENTS_PER_PAGE, page)


def shelves(documents: list[Document]) -> list[LibraryShelf]:
    """``documents`` (a page of the list, by pack and title) grouped by pack."""
    grouped: dict[int, LibraryShelf] = {}
    for document in documents:
        shelf = grouped.setdefault(document.pack_id, LibraryShelf(document.pack, []))
        shelf.documents.append(document)
    return list(grouped.values())


def search_library(user: User, query: str) -> SearchResults:
    """The reader's search over every document they may read, and no other."""
    return access.search_for_reader(user, Pack.select().order_by(Pack.slug), query)
