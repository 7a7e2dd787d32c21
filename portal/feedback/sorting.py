"""The order of the Answer feedback list: the columns a reviewer sorts by, and what each sorts on.

``?sort=agent`` sorts by that column, ``?sort=-agent`` in reverse; the form in ``forms.py`` names a
value that is neither and keeps the default order.
"""

from __future__ import annotations

from peewee import Case, fn

from portal.models import Feedback, Run

SORT_COLUMNS = {"date": "Date", "agent": "Agent", "reasons": "Reasons", "status": "Status"}
SORTS = frozenset(SORT_COLUMNS) | {f"-{column}" for column in SORT_COLUMNS}
DEFAULT_SORT = "-date"  # newest first


def ordering(sort: str, statuses) -> tuple:
    """The ORDER BY of a sort of SORTS; items alike in that column come newest first.

    Reasons sort by the first reason shown, then the next: their keys, stored in their listed
    order, sort as their labels do. Statuses sort in the order of ``statuses`` (new … won't fix).
    """
    column, descending = sort.lstrip("-"), sort.startswith("-")
    newest = (Feedback.updated_at.desc(), Feedback.id.desc())
    if column == "date":
        return newest if descending else (Feedback.updated_at.asc(), Feedback.id.asc())
    key = {
        "agent": fn.LOWER(Run.agent_name),
        "reasons": Feedback.reasons,
        "status": Case(Feedback.status, [(status, n) for n, status in enumerate(statuses)], len(statuses)),
    }[column]
    return (key.desc() if descending else key.asc(), *newest)


def heading_sort(current: str, column: str) -> tuple[str, str]:
    """(the order a click on ``column``'s heading asks for, the heading's ``aria-sort`` now): the
    reverse of the current order by that column, else the column's own first order (dates newest first)."""
    if current == column:
        return f"-{column}", "ascending"
    if current == f"-{column}":
        return column, "descending"
    return ("-date" if column == "date" else column), "none"
