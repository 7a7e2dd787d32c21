"""What the Library lists and finds: exactly the documents the reader may read directly (SPEC 2).

Who may read what is decided in ``portal.access`` (``may_read``); searching goes through
``access.search_for_reader`` over every pack, which combines only the index partitions of
the reader's access classes, so the ranking is that of the readable set alone (SPEC 6).
"""

from __future__ import annotations

from dataclasses import dataclass

from portal import access
from portal.models import Document, Pack, User
from portal.search.hits import SearchResults


@dataclass(frozen=True)
class LibraryShelf:
    """One pack's readable documents, as the Library lists them."""

    pack: Pack
    documents: list[Document]


def shelves(user: User) -> list[LibraryShelf]:
    """The readable documents, grouped by pack (packs by title, documents by title)."""
    grouped: dict[int, LibraryShelf] = {}
    for document in access.library_documents(user):
        shelf = grouped.setdefault(document.pack_id, LibraryShelf(document.pack, []))
        shelf.documents.append(document)
    return list(grouped.values())


def search_library(user: User, query: str) -> SearchResults:
    """The reader's search over every document they may read, and no other."""
    return access.search_for_reader(user, Pack.select().order_by(Pack.slug), query)
