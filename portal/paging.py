"""One page of a listing: Peewee's ``paginate`` through ``playhouse.flask_utils.PaginatedQuery``, with the
count of everything listed, and a page past the end shown as the last one (a list that shrank since its link
was made still shows something). A page number that is not one is ``numbers.page_number``'s 404.

The rows, their count and a page past the end's last page are read in one snapshot (``db.one_snapshot``): a
row added or deleted between two of those reads would show "page 3 of 2", or a total its rows disagree with."""

from __future__ import annotations

from math import ceil

from playhouse.flask_utils import PaginatedQuery

from portal.db import one_snapshot


class ListPage(PaginatedQuery):
    """Page ``page`` of ``query``, ``per_page`` items a page: ``items``, ``total``, ``first`` and ``last``."""

    def __init__(self, query, per_page: int, page: int):
        super().__init__(query, per_page, page=page)
        asked = super().get_page()
        with one_snapshot():
            self.items = list(query.paginate(asked, per_page))
            if 0 < len(self.items) < per_page or (asked == 1 and not self.items):
                # The last page, read: it counts the list, so most lists (one page) need no COUNT query.
                self.total = (asked - 1) * per_page + len(self.items)
            else:
                self.total = query.count()
                if not self.items:  # past the end: the last page instead
                    self.items = list(self.get_object_list())

    def get_page_count(self) -> int:
        return max(1, ceil(self.total / self.paginate_by))

    def get_page(self) -> int:
        return min(super().get_page(), self.get_page_count())

    @property
    def first(self) -> int:
        """The position of the page's first item in the whole list (1-based; 0 when the list is empty)."""
        return (self.get_page() - 1) * self.paginate_by + 1 if self.total else 0

    @property
    def last(self) -> int:
        return min(self.get_page() * self.paginate_by, self.total)
