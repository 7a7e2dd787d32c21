"""Typed errors of the search layer, so callers never have to catch Java exceptions."""

from portal.errors import CairnError


class SearchError(CairnError):
    """The Lucene layer failed: no Java runtime, no Anserini jar, or an unreadable index."""


class IndexBusy(SearchError):
    """Another writer held a pack's index lock for longer than we were willing to wait.

    Nothing was written; the caller may retry later or rebuild the index from the database.
    """

    def __init__(self, pack_slug: str, waited_seconds: float):
        self.pack_slug = pack_slug
        self.waited_seconds = waited_seconds
        super().__init__(
            f"The search index of pack {pack_slug!r} is being written by another process; "
            f"gave up after {waited_seconds:.0f} s. Nothing was written."
        )


class ModelMismatch(SearchError):
    """A pack's index holds vectors of another embedding model (or none); it must be rebuilt, not appended to."""

    def __init__(self, pack_slug: str, found: str | None, wanted: str):
        self.pack_slug, self.found, self.wanted = pack_slug, found, wanted
        super().__init__(
            f"The index of pack {pack_slug!r} was built by {found or 'no embedding model'}, not {wanted}; "
            "run `cairn index rebuild`."
        )
